"""Conditionals and while loops whose branches, condition and body are
source subgraphs taking their operands explicitly (torch.cond/while_loop,
TensorFlow's functional If/While), shared by the PyTorch and TF mappers.
ONNX's If binds its by-name captures with `take_operands` too."""
from __future__ import annotations

from x2.ir import Graph
from x2.ir.control_flow import inline


def emit_if(ctx, op, pred: str, operands: list[str], then_src, else_src) -> None:
    """if(pred) with two branches that each take `operands` (bound by position)."""
    branches, passed = [], []
    for sub in (then_src, else_src):
        graph, values = ctx.subgraph(sub, dict(zip(sub.inputs, operands)))
        branches.append((graph, values))
        passed += values
    passed = list(dict.fromkeys(passed))
    for graph, values in branches:
        take_operands(ctx, graph, passed, dict(zip(values, graph.inputs)))
    ctx.emit("if", [pred, *passed], {"then_branch": branches[0][0],
                                     "else_branch": branches[1][0]}, outputs=op.outputs)


def take_operands(ctx, graph: Graph, passed: list[str], bound: dict[str, str],
                  own: tuple[str, ...] = ()) -> None:
    """Make `graph` take its own inputs, then one input per value in `passed`,
    in that order. `bound` maps an outer value to the input that already
    receives it; a value the graph does not read gets a new, unused input (both
    branches of a conditional take the same operands)."""
    names = list(own)
    for value in passed:
        if value not in bound:
            info = ctx.graph.info.get(value)
            bound[value] = graph.add_input(graph.fresh_name("unused"),
                                           info.dtype if info else "float32",
                                           info.shape if info else None)
        names.append(bound[value])
    graph.inputs = names


def emit_while(ctx, op, carried: list[str], invariants: list[str], cond_src, body_src,
               outputs: list[str]) -> None:
    """while cond(state, invariants): state = body(state, invariants). Both
    subgraphs take the state, then the invariants; the body gives the new
    state, then any values to collect per step (scan outputs, stacked on a new
    axis 0 after the final state in `outputs`). The condition is evaluated
    once before the loop and again at the end of every step (the IR loop's
    form)."""
    count = len(carried)
    first, first_values = ctx.subgraph(cond_src, dict(zip(cond_src.inputs,
                                                          carried + invariants)))
    (keep_going,) = inline(ctx.graph, first, first_values, f"{op.name}/cond",
                           {"op": op.type, "name": op.name})
    body_graph, body_values = ctx.subgraph(body_src, dict(zip(body_src.inputs[count:],
                                                              invariants)))
    cond_graph, cond_values = ctx.subgraph(cond_src, dict(zip(cond_src.inputs[count:],
                                                              invariants)))
    operands = list(dict.fromkeys(body_values + cond_values))
    body = Graph()
    body.add_input("step", "int64", ())
    body.add_input("keep_going", "bool", ())
    state = [body.add_input(f"state_{i}", ctx.dtype(v),
                            _common(ctx.shape(v), body_src.info.get(body_src.inputs[i])))
             for i, v in enumerate(carried)]
    outer = {v: body.add_input(f"operand_{i}", ctx.dtype(v), ctx.shape(v))
             for i, v in enumerate(operands)}
    results = inline(body, body_graph, state + [outer[v] for v in body_values], "body")
    new_state, scans = results[:count], results[count:]
    (again,) = inline(body, cond_graph, new_state + [outer[v] for v in cond_values], "cond")
    body.outputs = [again, *new_state, *scans]
    ctx.emit("loop", ["", keep_going, *carried, *operands], {"body": body, "carried": count},
             outputs=outputs)


def _common(first, body_info):
    """A loop state's shape: the initial value's, less the dims the body's
    declared input leaves open (a state whose shape changes from step to
    step must not be folded as the first step's)."""
    inner = None if body_info is None else body_info.shape
    if first is None or inner is None or len(inner) != len(first):
        return first
    return tuple(a if a == b else None for a, b in zip(first, inner))
