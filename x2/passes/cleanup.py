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


# Ops whose small integer results are sizes: the same computation twice is
# one (a torch export reads x.size(1) once per view that needs it).
_SIZE_OPS = {"shape", "gather", "unsqueeze", "concat", "slice", "cast", "mul", "add", "sub",
             "div", "mod"}
_SMALL = 16  # constants up to this many elements are compared by value


def merge_size_computations(graph: Graph) -> Graph:
    """Compute each size once: nodes of the size ops with an integer output
    of rank 0 or 1 and the same op, attributes and inputs (a small constant
    input counts by its value) become one."""
    outputs = set(graph.outputs)
    seen: dict[tuple, str] = {}

    def operand(value: str):
        array = graph.constants.get(value)
        if array is not None and array.size <= _SMALL:
            return ("const", str(array.dtype), array.shape, tuple(array.reshape(-1).tolist()))
        return value

    for node in list(graph.nodes):
        if node.op not in _SIZE_OPS or len(node.outputs) != 1 or node.outputs[0] in outputs:
            continue
        out = node.outputs[0]
        shape, dtype = graph.shape(out), graph.dtype(out)
        if shape is None or len(shape) > 1 or dtype is None or not dtype.startswith(
                ("int", "uint")):
            continue
        key = (node.op, repr(sorted(node.attrs.items())), tuple(operand(v) for v in node.inputs))
        if key in seen:
            graph.replace_uses(out, seen[key], graph_outputs=False)
            graph.remove_node(node)
            graph.forget(out)
        else:
            seen[key] = out
    return graph.remove_unused()
