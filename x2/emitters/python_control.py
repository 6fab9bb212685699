"""`if` and `loop` as Python `if`/`while` for Paddle and PyTorch.

The code is what a person writes: torch runs it eagerly, and Paddle's
`paddle.jit.to_static` turns the same `if`/`while` on tensors into static
control flow for the inference model. So the loop state lives in tensors
(the iteration counter and the condition too), every branch assigns the same
variables, and scan outputs are collected in a list and stacked after the
loop (to_static turns the list into a tensor array)."""
from __future__ import annotations

from .codegen import Assign, Expr, If, While
from .python_ops import register


@register("if")
def if_(e, node):
    """One Python `if`; both branches assign the node's outputs."""
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
    body = node.attrs["body"]
    count = node.attrs["carried"]
    max_trip, cond = node.inputs[0], node.inputs[1]
    initial, invariants = node.inputs[2:2 + count], node.inputs[2 + count:]
    outputs = [e.namer(o) for o in node.outputs]
    carried, scans = outputs[:count], outputs[count:]
    iteration = e.namer(f"{node.name}#iteration", "step")
    going = e.namer(f"{node.name}#cond", "keep_going")
    code = _assign(carried, [e.value(v, tensor=True) for v in initial])
    code.append(Assign([iteration], e.scalar_tensor(0, "int64")))
    tests = [f"{iteration} < {e.value(max_trip)}"] if max_trip else []
    body_cond = body.outputs[0]
    if cond or not _always_true(body, body_cond) or body.users(body.inputs[1]):
        code.append(Assign([going], e.value(cond, tensor=True) if cond
                           else e.scalar_tensor(True, "bool")))
        tests.append(going)
    if not tests:
        raise e.unsupported(node, "it has neither a trip count nor a condition (it would "
                                  "never end)")
    lists = [e.namer(f"{node.name}#scan{i}", f"{name}_steps") for i, name in enumerate(scans)]
    code += [Assign([name], Expr("[]")) for name in lists]
    inner, results = e.block(body, [Expr(iteration), Expr(going), *map(Expr, carried),
                                    *(e.value(v) for v in invariants)], f"{node.name}/body")
    new_cond, new_carried, new_scans = results[0], results[1:1 + count], results[1 + count:]
    if going in tests:
        inner += _assign([going], [new_cond])
    inner += _assign(carried, new_carried)
    inner += [Assign([], Expr(f"{name}.append({value})")) for name, value in zip(lists, new_scans)]
    inner.append(Assign([iteration], Expr(f"{iteration} + 1")))
    code.append(While(Expr(" and ".join(tests)), inner))
    for out, name, value in zip(scans, lists, body.outputs[1 + count:]):
        code.append(Assign([out], _stacked(e, name, body.info.get(value))))
    return code


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
