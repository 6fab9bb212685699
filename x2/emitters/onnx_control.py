"""`if` and `loop` as ONNX If and Loop.

An IR subgraph is closed; an ONNX one reads outer values by name. So the
inputs through which an IR subgraph receives outer values are renamed to
those values' names, and every other name in it gets the node's name as a
prefix, which keeps names unique across scopes as ONNX requires. Constants
inside a subgraph are Constant nodes."""
from __future__ import annotations

import numpy as np



def _subgraph(e, graph, name: str, outer: dict[str, str], formal: list[str]):
    """GraphProto for IR subgraph `graph`: its inputs in `outer` read those
    outer values, the `formal` ones are the GraphProto's own inputs."""
    from onnx import numpy_helper
    helper = e.helper
    inner = type(e)(graph, e.opset)
    inner._node_names = e._node_names  # node names unique across the whole model
    inner.ops = e.ops
    for node in graph.nodes:
        inner.current = node
        e.ops[node.op](inner, node)
    inner.current = None

    def renamed(value: str) -> str:
        if not value:
            return value
        return outer.get(value) or f"{name}/{value}"

    nodes = []
    for value, array in {**graph.constants, **inner.extra}.items():
        if value in inner.unwritten:
            continue
        nodes.append(helper.make_node("Constant", [], [renamed(value)],
                                      name=e.unique_node_name(f"{name}/{value}/Constant"),
                                      value=numpy_helper.from_array(np.asarray(array))))
    for proto in inner.nodes:
        _rename(proto, renamed)
        nodes.append(proto)
    outputs = []
    seen: set[str] = set(formal) | set(outer)
    for value in graph.outputs:
        onnx_name = renamed(value)
        if value in seen or value in graph.constants:
            # A graph output must be produced inside it, once.
            copy = f"{name}/{value}/out{len(outputs)}"
            nodes.append(helper.make_node("Identity", [onnx_name], [copy],
                                          name=e.unique_node_name(copy)))
            onnx_name = copy
        seen.add(value)
        outputs.append(_info(e, graph, value, onnx_name))
    inputs = [_info(e, graph, v, renamed(v)) for v in formal]
    return helper.make_graph(nodes, name, inputs, outputs)


def _rename(proto, renamed) -> None:
    """Rename a node's values, and every value of the subgraphs it holds (an
    If inside a Loop body reads the body's values by their names, which the
    body's renaming changes; renaming all names of a nested graph alike keeps
    it consistent)."""
    proto.input[:] = [renamed(v) for v in proto.input]
    proto.output[:] = [renamed(v) for v in proto.output]
    for attr in proto.attribute:
        for graph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
            for node in graph.node:
                _rename(node, renamed)
            for info in [*graph.input, *graph.output, *graph.value_info]:
                info.name = renamed(info.name)


def _info(e, graph, value: str, onnx_name: str):
    info = graph.info.get(value)
    if info is None:
        return e.helper.make_empty_tensor_value_info(onnx_name)
    elem = e.helper.np_dtype_to_tensor_dtype(np.dtype(info.dtype))
    return e.helper.make_tensor_value_info(
        onnx_name, elem, None if info.shape is None else
        [d if d is not None else f"{onnx_name.replace('/', '_')}_d{i}"
         for i, d in enumerate(info.shape)])


def if_(e, node):
    operands = list(node.inputs[1:])
    branches = {}
    for attr in ("then_branch", "else_branch"):
        sub = node.attrs[attr]
        outer = dict(zip(sub.inputs, operands))
        branches[attr] = _subgraph(e, sub, f"{node.name}/{attr}", outer, [])
    e.node("If", [_as(e, node.inputs[0], "bool")], list(node.outputs), **branches)


def loop(e, node):
    body = node.attrs["body"]
    count = node.attrs["carried"]
    max_trip, cond = node.inputs[0], node.inputs[1]
    carried, invariants = node.inputs[2:2 + count], node.inputs[2 + count:]
    outer = dict(zip(body.inputs[2 + count:], invariants))
    graph = _subgraph(e, body, f"{node.name}/body", outer, body.inputs[:2 + count])
    e.node("Loop", [_as(e, max_trip, "int64") if max_trip else "",
                    _as(e, cond, "bool") if cond else "", *carried],
           list(node.outputs), body=graph)


def _as(e, value: str, dtype: str) -> str:
    """`value` as a scalar-compatible tensor of `dtype` (Loop's M is int64, cond bool)."""
    if value in e.graph.constants:
        return e.const(np.asarray(e.graph.constants[value]).astype(dtype).reshape(()), dtype)
    if e.graph.dtype(value) == dtype:
        return value
    return e.node("Cast", [value], [e.fresh(e.current, f"as_{dtype}")], to=e.onnx_dtype(dtype))
