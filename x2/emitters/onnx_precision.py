"""bfloat16 in ONNX where the opset allows it (`--precision bf16 --to onnx`).

The precision pass (x2/passes/precision.py) decides per IR node; what it
cannot know is which ONNX ops take tensor(bfloat16) at the chosen opset
(Conv, MaxPool, AveragePool only from opset 22, for instance). This step reads
each written node's schema and computes the ones that do not in float32,
Casts around them, then removes every Cast pair that cancels (a bf16 output
cast up again by the next float32 node). Runs in the ONNX emitter's worker."""
from __future__ import annotations

BF16_TYPE = "tensor(bfloat16)"


def _allowed(schema, formal) -> set[str]:
    for constraint in schema.type_constraints:
        if constraint.type_param_str == formal.type_str:
            return set(constraint.allowed_type_strs)
    return {formal.type_str}


def _formal(params, index: int):
    if index < len(params):
        return params[index]
    return params[-1] if params else None  # variadic: the last formal repeats


def fit_bf16(model, opset: int) -> list[str]:
    """Rewrite `model` in place; return the ONNX op types computed in float32."""
    import onnx
    from onnx import TensorProto, helper, shape_inference

    graph = model.graph
    types = {v.name: v.type.tensor_type.elem_type for v in graph.input}
    types.update({t.name: t.data_type for t in graph.initializer})
    casts: dict[tuple[str, int], str] = {}
    nodes, wrapped = [], set()
    counter = [0]

    def fresh(base: str) -> str:
        counter[0] += 1
        return f"{base}/x2_bf16_{counter[0]}"

    def cast(value: str, to: int, like) -> str:
        if (value, to) not in casts:
            out = fresh(value)
            nodes.append(helper.make_node("Cast", [value], [out], to=to,
                                          name=fresh(like.name + "/Cast")))
            types[out] = to
            casts[(value, to)] = out
        return casts[(value, to)]

    for node in graph.node:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
        bad = any(x and types.get(x) == TensorProto.BFLOAT16 and BF16_TYPE not in
                  _allowed(schema, _formal(schema.inputs, i)) for i, x in enumerate(node.input))
        renamed = {}
        if bad:
            wrapped.add(node.op_type)
            node.input[:] = [cast(x, TensorProto.FLOAT, node)
                             if x and types.get(x) == TensorProto.BFLOAT16 else x
                             for x in node.input]
        input_types = {x: helper.make_tensor_type_proto(types[x], None)
                       for x in node.input if x in types}
        inferred = shape_inference.infer_node_outputs(schema, node, input_types,
                                                      opset_imports=list(model.opset_import))
        for i, out in enumerate(node.output):
            elem = inferred[out].tensor_type.elem_type if out in inferred else None
            if bad and elem == TensorProto.FLOAT:
                renamed[out] = fresh(out)
                node.output[i] = renamed[out]
                types[renamed[out]] = TensorProto.FLOAT
                elem = TensorProto.BFLOAT16
            if elem is not None:
                types[out] = elem
        nodes.append(node)
        for out, inner in renamed.items():
            nodes.append(helper.make_node("Cast", [inner], [out], to=TensorProto.BFLOAT16,
                                          name=fresh(node.name + "/Cast")))
            casts[(out, TensorProto.FLOAT)] = inner   # cast up again: read the float32 value
    del graph.node[:]
    graph.node.extend(_without_dead_casts(nodes, {o.name for o in graph.output}))
    return sorted(wrapped)


def _without_dead_casts(nodes, outputs: set[str]) -> list:
    used = set(outputs)
    for node in nodes:
        used.update(node.input)
    return [n for n in nodes if n.op_type != "Cast" or n.output[0] in used]


def cancelling_casts(model) -> list[tuple[str, str]]:
    """(first, second) Cast node names where the second casts the first's
    output back to the type the first started from: a pair that cancels."""
    graph = model.graph
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(graph.input) + list(graph.value_info) + list(graph.output)}
    types.update({t.name: t.data_type for t in graph.initializer})
    producer = {o: n for n in graph.node for o in n.output}
    pairs = []
    for node in graph.node:
        first = producer.get(node.input[0]) if node.op_type == "Cast" else None
        if first is not None and first.op_type == "Cast":
            start = types.get(first.input[0])
            to = next(a.i for a in node.attribute if a.name == "to")
            if start == to:
                pairs.append((first.name, node.name))
    return pairs
