"""Constant folding, including the shape arithmetic around a dynamic batch.

A node whose inputs are all constants is evaluated with the IR's numpy
kernels. Shape(x) of a tensor whose shape is known except for some dims
becomes a *partial* value (unknown dims are None); slicing, stacking and
concatenating partial values is tracked, and a reshape_dynamic whose target
shape resolves with at most one unknown dim becomes a static reshape (-1)."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, TensorInfo
from ..ir.ops import evaluate

_PARTIAL_OPS = {"strided_slice", "stack", "concat", "squeeze", "unsqueeze", "identity", "cast"}
# Folding these would only copy data around at conversion time; larger
# constants stay as computed to keep memory down.
_MAX_FOLD_ELEMENTS = 1 << 26


def fold_constants(graph: Graph) -> Graph:
    partial: dict[str, np.ndarray] = {}
    kept = []
    for node in graph.nodes:
        if _try_fold(graph, node):
            continue
        if node.op == "shape":
            shape = graph.shape(node.inputs[0])
            if shape is not None:
                partial[node.outputs[0]] = np.array(list(shape), dtype=object)
        elif node.op in _PARTIAL_OPS and any(v in partial for v in node.inputs):
            values = [partial.get(v, graph.constants.get(v)) for v in node.inputs]
            if all(v is not None for v in values):
                result = None if node.op == "cast" else evaluate(
                    node.op, [np.asarray(v, dtype=object) for v in values], node.attrs)
                partial[node.outputs[0]] = result[0] if result else values[0]
        elif node.op == "reshape_dynamic" and node.inputs[1] in partial:
            target = list(partial[node.inputs[1]])
            unknown = sum(d is None for d in target)
            if unknown == 0 or (unknown == 1 and -1 not in target):
                node.op = "reshape"
                node.attrs = {"shape": [-1 if d is None else int(d) for d in target]}
                node.inputs = node.inputs[:1]
        kept.append(node)
    graph.nodes = kept
    return graph.remove_unused()


def _try_fold(graph: Graph, node) -> bool:
    if not node.inputs or not all(v in graph.constants for v in node.inputs if v):
        return False
    if node.op == "shape":
        return False
    inputs = [graph.constants[v] for v in node.inputs]
    if sum(x.size for x in inputs) > _MAX_FOLD_ELEMENTS:
        return False
    try:
        results = evaluate(node.op, inputs, node.attrs)
    except Exception:  # leave it to the runtime rather than guess
        return False
    if results is None:
        return False
    for name, value in zip(node.outputs, results):
        value = np.asarray(value)
        graph.constants[name] = value
        graph.info[name] = TensorInfo(str(value.dtype), tuple(value.shape))
    return True
