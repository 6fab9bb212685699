"""Conditionals and while loops whose branches, condition and body are
source subgraphs taking their operands explicitly (torch.cond/while_loop/scan,
TensorFlow's functional If/Case/While), shared by the PyTorch and TF mappers.
ONNX's If binds its by-name captures with `take_operands` too, and its Scan
is a loop made by `emit_scan` as torch's is."""
from __future__ import annotations

import numpy as np

from x2.ir import Graph, TensorInfo
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


def emit_case(ctx, op, index: str, operands: list[str], branch_srcs: list) -> None:
    """switch(index) over branches that each take `operands`, as nested ifs:
    branch k where index == k, the last branch otherwise (TensorFlow runs it for
    an index out of range)."""
    branches = [ctx.subgraph(sub, dict(zip(sub.inputs, operands))) for sub in branch_srcs]
    # Every branch, and every `if` nested in an else branch, takes the index too.
    passed = list(dict.fromkeys([index] + [v for _, values in branches for v in values]))
    for graph, values in branches:
        take_operands(ctx, graph, passed, dict(zip(values, graph.inputs)))
    infos = [ctx.graph.info.get(o) or ctx.source.info.get(o) for o in op.outputs]
    dtype = ctx.dtype(index)
    orelse = branches[-1][0]
    for k in range(len(branches) - 2, 0, -1):
        orelse = _switch_step(ctx, op, k, dtype, branches[k][0], orelse, passed, infos)
    if len(branches) == 1:
        pred = ctx.constant(np.array(True), "always")
    else:
        pred = ctx.emit("equal", [index, ctx.constant(np.array(0, dtype), "case_0")],
                        dtype="bool", shape=(), hint="is_0")
    ctx.emit("if", [pred, *passed], {"then_branch": branches[0][0], "else_branch": orelse},
             outputs=op.outputs)


def _switch_step(ctx, op, k: int, dtype: str, then: Graph, orelse: Graph, passed: list[str],
                 infos: list) -> Graph:
    """A graph of the operands `passed` (the index first): if index == k then
    `then` else `orelse`."""
    graph = Graph()
    # Inputs named as the outer values they receive: the ONNX emitter binds an
    # If nested in a subgraph to the values of the subgraph's inputs by name.
    inputs = [graph.add_input(v, ctx.dtype(v), ctx.shape(v)) for v in passed]
    case = graph.add_constant(f"{op.name}/case_{k}", np.array(k, dtype))
    source = {"op": op.type, "name": op.name, "mapper": ctx.current_mapper}
    pred = graph.fresh_name(f"{op.name}/is_{k}")
    graph.add_node("equal", [inputs[0], case], name=pred, source=source)
    graph.info[pred] = TensorInfo("bool", ())
    outputs = [graph.fresh_name(f"{op.name}/branch_{k}_or_later") for _ in infos]
    graph.add_node("if", [pred, *inputs], attrs={"then_branch": then, "else_branch": orelse},
                   name=outputs[0], outputs=outputs, source=source)
    for value, info in zip(outputs, infos):
        if info is not None:
            graph.info[value] = info
    graph.outputs = outputs
    return graph


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


def emit_scan(ctx, inner: Graph, states: list[str], sequences: list[str], operands: list[str],
              outputs: list[str]) -> None:
    """A scan as the IR's loop over axis 0 of `sequences`, first slice first:
    `inner` takes the states, a slice of each sequence and the `operands`, and
    gives the new states and a slice of each scan output. `outputs`: the final
    states, then the scan outputs stacked on axis 0 (ONNX Loop's form)."""
    n, m = len(states), len(sequences)
    steps = ctx.shape(sequences[0])[0] if sequences and ctx.shape(sequences[0]) else None
    if isinstance(steps, int):
        trip = ctx.constant(np.array(steps, np.int64), "steps")
    else:
        shape = ctx.emit("shape", [sequences[0]], dtype="int64", shape=(None,))
        trip = ctx.emit("gather", [shape, ctx.constant(np.array(0, np.int64))], {"axis": 0},
                        dtype="int64", shape=())

    body = Graph()
    iteration = body.add_input("iteration", "int64", ())
    cond = body.add_input("cond", "bool", ())
    names = [body.add_input(f"state_{i}", ctx.dtype(v), ctx.shape(v))
             for i, v in enumerate(states)]
    seq_inputs = [body.add_input(f"sequence_{j}", ctx.dtype(v), ctx.shape(v))
                  for j, v in enumerate(sequences)]
    for j, (seq, slot) in enumerate(zip(seq_inputs, inner.inputs[n:n + m])):
        step = body.add_node("gather", [seq, iteration], attrs={"axis": 0},
                             name=f"step_{j}", outputs=[f"step_{j}"])
        body.info[step.outputs[0]] = inner.info.get(slot) or TensorInfo(body.dtype(seq), None)
        names.append(step.outputs[0])
    for value in operands:
        names.append(body.add_input(value, ctx.dtype(value), ctx.shape(value)))
    body.outputs = [cond, *inline(body, inner, names, "scan")]
    ctx.emit("loop", [trip, "", *states, *sequences, *operands],
             {"body": body, "carried": n}, outputs=outputs)


def _common(first, body_info):
    """A loop state's shape: the initial value's, less the dims the body's
    declared input leaves open (a state whose shape changes from step to
    step must not be folded as the first step's)."""
    inner = None if body_info is None else body_info.shape
    if first is None or inner is None or len(inner) != len(first):
        return first
    return tuple(a if a == b else None for a, b in zip(first, inner))
