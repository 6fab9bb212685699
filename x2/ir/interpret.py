"""A numpy reference interpreter for the IR, for ops that have kernels in
x2/ir/ops.py. Used by tests to check that passes preserve semantics, and by
constant folding."""
from __future__ import annotations

import numpy as np

from .graph import Graph
from .ops import evaluate


def interpret(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    values = interpret_all(graph, inputs)
    return [values[v] for v in graph.outputs]


def interpret_all(graph: Graph, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Every value of the graph (inputs, constants, each node output) by name."""
    values: dict[str, np.ndarray] = dict(graph.constants)
    values.update(zip(graph.inputs, inputs))
    for node in graph.nodes:
        # "" is an optional input left out; kernels take it as None.
        result = evaluate(node.op, [values[v] if v else None for v in node.inputs], node.attrs)
        if result is None:
            raise NotImplementedError(f"no numpy kernel for IR op {node.op!r}")
        values.update(zip(node.outputs, result))
    return values
