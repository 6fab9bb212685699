"""Remove identities and dead code."""
from __future__ import annotations

from ..ir import Graph
from ..ir.scopes import with_shared_scope


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
    """reshape(reshape(x)) is one reshape (the inner one may be computed), and
    a reshape to the shape its input already has is an identity (an ONNX
    LSTM's Y split into directions and joined again by the Reshape
    torch.onnx.export writes after it)."""
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
        # A computed reshape followed by a fixed one (`[batch, seq, -1]` then `[-1, 32]`).
        copies_x = copies_x or (inner is not None and inner.op == "reshape_dynamic"
                                and 0 not in target)
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


# Ops that compute sizes, positions and masks: the same computation twice is
# one (a torch export reads x.size(1) once per view that needs it, builds
# `arange(seq)` once per attention mask, and each attention layer turns the
# same boolean mask into an additive one).
_INDEX_OPS = {"shape", "gather", "unsqueeze", "squeeze", "concat", "slice", "cast", "mul", "add",
              "sub", "div", "mod", "range", "equal", "not_equal", "less", "less_equal",
              "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_not",
              "logical_not", "where", "expand", "expand_dynamic", "reshape", "reshape_dynamic",
              "trilu"}
_SMALL = 16  # constants up to this many elements are compared by value
_WHOLE = 2 ** 31 - 1  # a slice end at least this large reaches the end of any dim


def merge_size_computations(graph: Graph) -> Graph:
    """Compute each size, position and mask once: nodes of the index ops with
    the same op, attributes and inputs (a small constant input counts by its
    value) become one, after dropping the steps that change nothing
    (`arange(n) + 0`, `x[:]`)."""
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
        same = _unchanged_input(graph, node)
        key = ("same", same) if same is not None else (
            node.op, repr(sorted(node.attrs.items())), tuple(operand(v) for v in node.inputs))
        if same is not None or key in seen:
            kept = graph.producer(same if same is not None else seen[key])
            if kept is not None and same is None:   # computed once for both scopes
                kept.source = with_shared_scope(kept.source, [kept.source, node.source])
            graph.replace_uses(out, same if same is not None else seen[key],
                               graph_outputs=False)
            graph.remove_node(node)
            graph.forget(out)
        else:
            seen[key] = out
    return graph.remove_unused()


def _unchanged_input(graph: Graph, node) -> str | None:
    """The input a node gives back unchanged: a concat of one input, a slice
    over all of every axis it names, an integer plus or minus a scalar 0, a
    bool and True; else None."""
    x = node.inputs[0]
    if node.op == "concat" and len(node.inputs) == 1:
        return x  # an exporter's one-piece concat
    if node.op == "slice":
        a = node.attrs
        return x if all(start == 0 and end >= _WHOLE and step == 1 for start, end, step in
                        zip(a["starts"], a["ends"], a["steps"] or [1] * len(a["axes"]))) \
            else None
    # op -> (the scalar it leaves an operand unchanged with, whether either side may hold it)
    neutral = {"add": (0, True), "sub": (0, False), "bitwise_and": (True, True),
               "bitwise_or": (False, True)}.get(node.op)
    if neutral is None or not (graph.dtype(node.outputs[0]) or "").startswith(
            ("int", "uint", "bool")):
        return None
    value, commutes = neutral
    for const, other in ((1, 0), (0, 1)) if commutes else ((1, 0),):
        array = graph.constants.get(node.inputs[const])
        if array is not None and array.ndim == 0 and array == value and \
                graph.dtype(node.inputs[other]) == graph.dtype(node.outputs[0]) and \
                graph.shape(node.inputs[other]) == graph.shape(node.outputs[0]):
            return node.inputs[other]
    return None
