"""torch.export's higher-order control flow: `torch.cond` becomes the IR's
`if`, `while_loop` its `loop`. torch.export already passes every value a
branch or body reads (parameters too) as an operand; operands that are
constants are copied into the subgraph, so its layers stay layers."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.ir import Graph
from x2.ir.control_flow import inline
from x2.registry import torch_mapper


def _tensors(op, values) -> list[str]:
    if any(not isinstance(v, str) for v in values):
        raise ConversionError(f"{op.type} '{op.name}': an operand that is not a tensor "
                              f"(a Python number or size); x2 passes tensors only")
    return [str(v) for v in values]


@torch_mapper("cond")
def cond(ctx, op):
    """torch.cond(pred, true_fn, false_fn, operands)."""
    pred, *operands = _tensors(op, op.inputs)
    branches, passed = {}, []
    for attr, name in (("true_graph", "then_branch"), ("false_graph", "else_branch")):
        sub = op.attrs[attr]
        graph, values = ctx.subgraph(sub, dict(zip(sub.inputs, operands)))
        branches[name] = (graph, values)
        passed += values
    passed = list(dict.fromkeys(passed))
    for graph, values in branches.values():
        _take(graph, values, passed, ctx)
    ctx.emit("if", [pred, *passed], {name: g for name, (g, _) in branches.items()},
             outputs=op.outputs)


def _take(graph: Graph, values: list[str], passed: list[str], ctx) -> None:
    """Make the graph's inputs take `passed` in order (adding unused ones)."""
    by_value = dict(zip(values, graph.inputs))
    names = []
    for value in passed:
        if value not in by_value:
            info = ctx.graph.info.get(value)
            by_value[value] = graph.add_input(graph.fresh_name("unused"),
                                              info.dtype if info else "float32",
                                              info.shape if info else None)
        names.append(by_value[value])
    graph.inputs = names


@torch_mapper("while_loop")
def while_loop(ctx, op):
    """while_loop(cond_fn, body_fn, carried, additional): the condition is
    evaluated once before the loop and again at the end of every step."""
    count = op.attrs["carried"]
    values = _tensors(op, op.inputs)
    carried, additional = values[:count], values[count:]
    cond_src, body_src = op.attrs["cond_graph"], op.attrs["body_graph"]

    first, first_values = ctx.subgraph(cond_src, dict(zip(cond_src.inputs, values)))
    (keep_going,) = inline(ctx.graph, first, first_values, f"{op.name}/cond",
                           {"op": op.type, "name": op.name})

    bound_body = dict(zip(body_src.inputs[count:], additional))
    body_graph, body_values = ctx.subgraph(body_src, bound_body)
    cond_graph, cond_values = ctx.subgraph(cond_src, dict(zip(cond_src.inputs[count:],
                                                              additional)))
    operands = list(dict.fromkeys(body_values + cond_values))
    body = Graph()
    body.add_input("step", "int64", ())
    body.add_input("keep_going", "bool", ())
    state = [body.add_input(f"state_{i}", ctx.dtype(v), ctx.shape(v))
             for i, v in enumerate(carried)]
    outer = {v: body.add_input(f"operand_{i}", ctx.dtype(v), ctx.shape(v))
             for i, v in enumerate(operands)}
    new_state = inline(body, body_graph, state + [outer[v] for v in body_values], "body")
    (again,) = inline(body, cond_graph, new_state + [outer[v] for v in cond_values], "cond")
    body.outputs = [again, *new_state]
    ctx.emit("loop", ["", keep_going, *carried, *operands], {"body": body, "carried": count},
             outputs=op.outputs)
