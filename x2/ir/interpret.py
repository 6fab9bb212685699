"""A numpy reference interpreter for the IR, for ops that have kernels in
x2/ir/ops.py. Used by tests to check that passes preserve semantics, by
constant folding, and in float64 by x2/ir/float64.py (the second opinion on
an ONNX target's near misses)."""
from __future__ import annotations

import numpy as np

from .graph import Graph
from .ops import evaluate


def interpret(graph: Graph, inputs: list[np.ndarray], run=evaluate) -> list[np.ndarray]:
    values = interpret_all(graph, inputs, run)
    return [values[v] for v in graph.outputs]


def interpret_all(graph: Graph, inputs: list[np.ndarray], run=evaluate
                  ) -> dict[str, np.ndarray]:
    """Every value of the graph (inputs, constants, each node output) by name.
    `run(op, arrays, attrs)` runs one node (ops.evaluate, or a caller's
    wrapper of it, which control flow hands down to its subgraphs)."""
    values: dict[str, np.ndarray] = dict(graph.constants)
    values.update(zip(graph.inputs, inputs))
    for node in graph.nodes:
        # "" is an optional input left out; kernels take it as None.
        arrays = [values[v] if v else None for v in node.inputs]
        control = _CONTROL_FLOW.get(node.op)
        result = control(arrays, node.attrs, run) if control else run(node.op, arrays,
                                                                      node.attrs)
        if result is None:
            raise NotImplementedError(f"no numpy kernel for IR op {node.op!r}")
        values.update(zip(node.outputs, result))
    return values


# Structured control flow (x2/ir/control_flow.py): the ops whose kernels run subgraphs.

def if_kernel(xs, attrs, run=evaluate):
    branch = attrs["then_branch"] if bool(np.asarray(xs[0]).reshape(-1)[0]) \
        else attrs["else_branch"]
    return [np.asarray(v) for v in interpret(branch, list(xs[1:]), run)]


def loop_kernel(xs, attrs, run=evaluate):
    body, carried_count = attrs["body"], attrs["carried"]
    max_trip = None if xs[0] is None else int(np.asarray(xs[0]).reshape(-1)[0])
    cond = True if len(xs) < 2 or xs[1] is None else bool(np.asarray(xs[1]).reshape(-1)[0])
    carried = list(xs[2:2 + carried_count])
    invariants = list(xs[2 + carried_count:])
    scans: list[list[np.ndarray]] = [[] for _ in body.outputs[1 + carried_count:]]
    iteration = 0
    while (max_trip is None or iteration < max_trip) and cond:
        outs = interpret(body, [np.array(iteration, np.int64), np.array(cond), *carried,
                                *invariants], run)
        cond = bool(np.asarray(outs[0]).reshape(-1)[0])
        carried = [np.asarray(v) for v in outs[1:1 + carried_count]]
        for collected, value in zip(scans, outs[1 + carried_count:]):
            collected.append(np.asarray(value))
        iteration += 1
    stacked = []
    for collected, name in zip(scans, body.outputs[1 + carried_count:]):
        if collected:
            stacked.append(np.stack(collected))
        else:  # no iteration ran: an empty stack of the declared element shape
            info = body.info.get(name)
            shape = tuple(d or 0 for d in (info.shape or ())) if info else ()
            stacked.append(np.zeros((0, *shape), dtype=info.dtype if info else np.float32))
    return carried + stacked


_CONTROL_FLOW = {"if": if_kernel, "loop": loop_kernel}
