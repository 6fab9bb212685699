"""`if` and `loop` as Python `if`/`while` for Paddle and PyTorch.

The code is what a person writes: torch runs it eagerly, and Paddle's
`paddle.jit.to_static` turns the same `if`/`while` on tensors into static
control flow for the inference model. So the loop state lives in tensors
(the iteration counter and the condition too), every branch assigns the same
variables, and scan outputs are collected in a list and stacked after the
loop (to_static turns the list into a tensor array).

With --exportable (torch), the branches and the loop body become local
functions called through torch.cond and torch's while_loop, the forms
torch.export keeps as control flow rather than specialising on one path."""
from __future__ import annotations

import numpy as np

from .codegen import Assign, Def, Expr, If, While, call
from .python_ops import register


@register("if")
def if_(e, node):
    """One Python `if`; both branches assign the node's outputs."""
    if e.export_control_flow:
        return _cond_call(e, node)
    operands = [e.value(v) for v in node.inputs[1:]]
    targets = [e.namer(o) for o in node.outputs]
    branches = []
    for attr in ("then_branch", "else_branch"):
        body, results = e.block(node.attrs[attr], operands, f"{node.name}/{attr}")
        branches.append(body + _assign(targets, results))
    return [If(e.value(node.inputs[0]), *branches)]


@register("loop")
def loop(e, node):
    """A `while` over the loop state; the carried values are the node's
    outputs' variables, updated together at the end of each step."""
    if e.export_control_flow:
        return _while_loop_call(e, node)
    body = node.attrs["body"]
    count = node.attrs["carried"]
    max_trip, cond = _trip_count(e, node), node.inputs[1]
    initial, invariants = node.inputs[2:2 + count], node.inputs[2 + count:]
    outputs = [e.namer(o) for o in node.outputs]
    carried, scans = outputs[:count], outputs[count:]
    iteration = e.namer(f"{node.name}#iteration", "step")
    going = e.namer(f"{node.name}#cond", "keep_going")
    code = _assign(carried, [e.value(v, tensor=True) for v in initial])
    code.append(Assign([iteration], e.scalar_tensor(0, "int64")))
    tests = [f"{iteration} < {e.value(max_trip)}"] if max_trip else []
    tracked = _tracks_condition(e, node)
    if tracked:
        code.append(Assign([going], _initial_condition(e, cond)))
        tests.append(going)
    lists = [e.namer(f"{node.name}#scan{i}", f"{name}_steps") for i, name in enumerate(scans)]
    code += [Assign([name], Expr("[]")) for name in lists]
    inner, results = e.block(body, [Expr(iteration), Expr(going), *map(Expr, carried),
                                    *(e.value(v) for v in invariants)], f"{node.name}/body")
    new_cond, new_carried, new_scans = results[0], results[1:1 + count], results[1 + count:]
    if tracked:
        inner += _assign([going], [new_cond])
    inner += _assign(carried, new_carried)
    inner += [Assign([], Expr(f"{name}.append({value})")) for name, value in zip(lists, new_scans)]
    inner.append(Assign([iteration], Expr(f"{iteration} + 1")))
    code.append(While(Expr(" and ".join(tests)), inner))
    for out, name, value in zip(scans, lists, body.outputs[1 + count:]):
        code.append(Assign([out], _stacked(e, name, body.info.get(value))))
    return code


def _cond_call(e, node) -> list:
    """outputs = torch.cond(pred, then_fn, else_fn, (operands...)); each branch
    a local function of the operands."""
    operands = [e.value(v, tensor=True) for v in node.inputs[1:]]
    code, functions = [], []
    for attr in ("then_branch", "else_branch"):
        args = _arguments(e, node, attr, operands)
        body, results = e.block(node.attrs[attr], list(map(Expr, args)), f"{node.name}/{attr}")
        name = e.namer(f"{node.name}#{attr}", attr)
        code.append(Def(name, args, body, _unaliased(body, results)))
        functions.append(name)
    targets = [e.namer(o) for o in node.outputs]
    code.append(Assign(targets, call("torch.cond", e.value(node.inputs[0]), Expr(functions[0]),
                                     Expr(functions[1]), _tuple(operands))))
    return code


def _while_loop_call(e, node) -> list:
    """step, [keep_going,] *carried = while_loop(cond_fn, body_fn, (state...)):
    the loop state in tensors; the functions read invariants from forward."""
    body = node.attrs["body"]
    count = node.attrs["carried"]
    max_trip, cond = _trip_count(e, node), node.inputs[1]
    if len(body.outputs) > 1 + count:
        raise e.unsupported(node, "it stacks per-step outputs (scan outputs), which torch's "
                                  "while_loop cannot carry; convert without --exportable")
    initial = [e.value(v, tensor=True) for v in node.inputs[2:2 + count]]
    invariants = [e.value(v) for v in node.inputs[2 + count:]]
    tracked = _tracks_condition(e, node)
    state0 = [e.scalar_tensor(0, "int64")]
    if tracked:
        state0.append(_initial_condition(e, cond))
    step = e.namer(f"{node.name}#iteration", "step")
    going = e.namer(f"{node.name}#cond", "keep_going") if tracked else None
    # The functions' parameters are named like the variables the loop assigns.
    args = [step, *([going] if going else []), *(e.namer(o) for o in node.outputs)]
    tests = [f"({step} < {e.value(max_trip)})"] if max_trip else []
    if tracked:
        tests.append(f"({going})" if max_trip else f"{going}.clone()")  # never the input itself
    test = Expr(" & ".join(tests))
    tested = ([e.graph.info.get(max_trip)] if max_trip else []) + \
        ([body.info.get(body.inputs[1])] if tracked else [])
    if not all(i is not None and i.shape == () for i in tested):
        test = Expr(f"({test}).reshape(())")  # while_loop wants a scalar condition
    cond_name = e.namer(f"{node.name}#cond_fn", "loop_cond")
    code = [Def(cond_name, args, [], [test])]
    inner, results = e.block(body, [Expr(step), Expr(going or "True"),
                                    *map(Expr, args[len(state0):]), *invariants],
                             f"{node.name}/body")
    new_state = [Expr(f"{step} + 1")] + ([results[0]] if tracked else [])
    body_name = e.namer(f"{node.name}#body_fn", "loop_body")
    code.append(Def(body_name, args, inner, new_state + _unaliased(inner, results[1:1 + count])))
    code.append(Assign(args, call("torch._higher_order_ops.while_loop", Expr(cond_name),
                                  Expr(body_name), _tuple(state0 + initial))))
    return code


# No loop runs 2**53 steps: a trip count that large is a while loop's "no
# limit" (ONNX and TorchScript write INT64_MAX), and Paddle's static program
# holds an int64 literal as a double (paddle.full([], 2**63 - 1, 'int64') is
# -2**63 after paddle.jit.save: the loop would not run at all).
_UNBOUNDED = 2 ** 53


def _trip_count(e, node) -> str:
    """The loop's trip count input, "" when it has none or one no loop
    reaches while a condition ends it."""
    trip = node.inputs[0]
    value = e.graph.constants.get(trip) if trip else None
    if value is not None and np.ndim(value) == 0 and int(value) >= _UNBOUNDED and \
            _condition_ends(node):
        return ""
    return trip


def _condition_ends(node) -> bool:
    """Whether a condition can end the loop: it has a condition input, or its
    body computes a new condition or reads the one it is given."""
    body = node.attrs["body"]
    return bool(node.inputs[1]) or not _always_true(body, body.outputs[0]) or \
        bool(body.users(body.inputs[1]))


def _tracks_condition(e, node) -> bool:
    """Whether the loop keeps a keep_going variable (both loop forms ask here,
    so they agree on when a loop ends): it has a condition input, or its body
    computes a new condition or reads the one it is given. A loop with neither
    that nor a trip count is refused."""
    max_trip = node.inputs[0]
    tracked = _condition_ends(node)
    if not max_trip and not tracked:
        raise e.unsupported(node, "it has neither a trip count nor a condition (it would "
                                  "never end)")
    return tracked


def _initial_condition(e, cond: str) -> Expr:
    """keep_going before the first step: the condition input, else True."""
    return e.value(cond, tensor=True) if cond else e.scalar_tensor(True, "bool")


def _arguments(e, node, role: str, operands: list) -> list[str]:
    """Parameter names of a branch / loop function: the variable passed in
    where it is one (the function sees the same value under the same name),
    else a new name."""
    names = []
    for i, value in enumerate(operands):
        text = str(value)
        if not (text.isidentifier() and text not in names
                and text in e.namer.names.values()):
            text = e.namer(f"{node.name}#{role}{i}", "operand")
        names.append(text)
    return names


def _unaliased(body: list, results: list[Expr]) -> list[Expr]:
    """torch.cond and while_loop refuse a function that returns one of its
    inputs (or a buffer) itself: such results are cloned."""
    assigned = {t for step in body if isinstance(step, Assign) for t in step.targets}
    return [r if str(r) in assigned else Expr(f"{r}.clone()") for r in results]


def _tuple(items: list) -> Expr:
    return Expr(f"({', '.join(map(str, items))}{',' if len(items) == 1 else ''})")


def _stacked(e, name: str, element) -> Expr:
    """The steps stacked; a loop that ran no step gives an empty stack of the
    element's shape (as ONNX Loop does) when that shape is known."""
    stack = e.api("stack", Expr(name))
    shape = None if element is None else element.shape
    if shape is None or any(not isinstance(d, int) for d in shape):
        return stack
    empty = e.api("zeros", [0, *shape], dtype=e.dtype(element.dtype))
    return Expr(f"{stack} if len({name}) > 0 else {empty}")


def _always_true(graph, value: str) -> bool:
    """The body's condition output is the constant True, or the condition it was given."""
    if value == graph.inputs[1]:
        return True
    array = graph.constants.get(value)
    return array is not None and array.size == 1 and bool(array.reshape(-1)[0])


def _assign(targets: list[str], values: list[Expr]) -> list[Assign]:
    """targets = values as one statement (a parallel update), leaving out a = a."""
    pairs = [(t, v) for t, v in zip(targets, values) if str(v) != t]
    if not pairs:
        return []
    names, exprs = zip(*pairs)
    return [Assign(list(names), Expr(", ".join(str(x) for x in exprs)))]
