"""Remove identities and dead code."""
from __future__ import annotations

from ..ir import Graph


def remove_identities(graph: Graph) -> Graph:
    outputs = set(graph.outputs)
    for node in list(graph.nodes):
        if node.op != "identity":
            continue
        src, dst = node.inputs[0], node.outputs[0]
        if dst not in outputs:
            if src not in graph.origin:
                graph.derive_origin(src, dst)
            graph.remove_node(node)
            graph.replace_uses(dst, src)
            graph.forget(dst)
            continue
        producer = graph.producer(src)
        if producer is not None and src not in outputs and src not in graph.inputs:
            # Let the producer write the graph output directly.
            if dst not in graph.origin:
                graph.derive_origin(dst, src)
            graph.remove_node(node)
            producer.outputs = [dst if o == src else o for o in producer.outputs]
            graph.replace_uses(src, dst)
            graph.forget(src)
    return graph.toposort()


def remove_dropout(graph: Graph) -> Graph:
    """Dropout is the identity at inference; --for training keeps it a layer."""
    for node in graph.nodes:
        if node.op == "dropout":
            node.op, node.attrs = "identity", {}
    return remove_identities(graph)


def remove_dead(graph: Graph) -> Graph:
    return graph.remove_unused()


def merge_reshapes(graph: Graph) -> Graph:
    """reshape(reshape(x)) is one reshape, and a reshape to the shape its input
    already has is an identity (an ONNX LSTM's Y split into directions and
    joined again by the Reshape torch.onnx.export writes after it)."""
    outputs = set(graph.outputs)
    for node in list(graph.nodes):
        if node.op != "reshape":
            continue
        inner = graph.producer(node.inputs[0])
        target = node.attrs["shape"]
        # A 0 copies a dim of the intermediate: fine where the inner reshape copied x's.
        copies_x = inner is not None and inner.op == "reshape" and all(
            i < len(inner.attrs["shape"]) and inner.attrs["shape"][i] == 0
            for i, d in enumerate(target) if d == 0)
        if copies_x and \
                len(graph.users(inner.outputs[0])) == 1 and inner.outputs[0] not in outputs:
            node.inputs = (inner.inputs[0],)
            graph.remove_node(inner)
            graph.forget(inner.outputs[0])
        shape_in, shape_out = graph.shape(node.inputs[0]), graph.shape(node.outputs[0])
        if shape_in is not None and tuple(shape_in) == tuple(shape_out or ()) and \
                all(isinstance(d, int) and d >= 0 for d in shape_in):
            graph.remove_node(node)
            graph.add_node("identity", node.inputs, name=node.name, outputs=node.outputs,
                           source=node.source)
    return remove_identities(graph)


# Ops whose integer or bool results are sizes, positions and masks: the same
# computation twice is one (a torch export reads x.size(1) once per view
# that needs it, and builds `arange(seq)` once per attention mask).
_INDEX_OPS = {"shape", "gather", "unsqueeze", "squeeze", "concat", "slice", "cast", "mul", "add",
              "sub", "div", "mod", "range", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_not",
              "logical_not", "where", "expand", "expand_dynamic", "reshape", "reshape_dynamic",
              "trilu"}
_SMALL = 16  # constants up to this many elements are compared by value
_WHOLE = 2 ** 31 - 1  # a slice end at least this large reaches the end of any dim


def merge_size_computations(graph: Graph) -> Graph:
    """Compute each size, position and mask once: integer and bool results of
    the index ops with the same op, attributes and inputs (a small constant
    input counts by its value) become one, after dropping the steps that
    change nothing (`arange(n) + 0`, `x[:]`)."""
    outputs = set(graph.outputs)
    seen: dict[tuple, str] = {}

    def operand(value: str):
        array = graph.constants.get(value)
        if array is not None and array.size <= _SMALL:
            return ("const", str(array.dtype), array.shape, tuple(array.reshape(-1).tolist()))
        return value

    for node in list(graph.nodes):
        if node.op not in _INDEX_OPS or len(node.outputs) != 1 or node.outputs[0] in outputs:
            continue
        out = node.outputs[0]
        dtype = graph.dtype(out)
        if dtype is None or not dtype.startswith(("int", "uint", "bool")):
            continue
        same = _unchanged_input(graph, node)
        key = ("same", same) if same is not None else (
            node.op, repr(sorted(node.attrs.items())), tuple(operand(v) for v in node.inputs))
        if same is not None or key in seen:
            graph.replace_uses(out, same if same is not None else seen[key],
                               graph_outputs=False)
            graph.remove_node(node)
            graph.forget(out)
        else:
            seen[key] = out
    return graph.remove_unused()


def _unchanged_input(graph: Graph, node) -> str | None:
    """The input an integer node gives back unchanged: a slice over all of
    every axis it names, adding or subtracting a scalar 0, or None."""
    x = node.inputs[0]
    if graph.dtype(x) != graph.dtype(node.outputs[0]):
        return None
    if node.op == "slice":
        a = node.attrs
        return x if all(start == 0 and end >= _WHOLE and step == 1 for start, end, step in
                        zip(a["starts"], a["ends"], a["steps"] or [1] * len(a["axes"]))) \
            else None
    if node.op in ("add", "sub"):
        zero = graph.constants.get(node.inputs[1])
        if zero is not None and zero.ndim == 0 and zero == 0:
            return x
    return None
