"""An IR graph computed in float64 by the numpy kernels: the float64 second
opinion on a float32 model that has no float64 run of its own (an ONNX file;
x2/check/compare.rounding_only judges by it).

Every float32 constant and input is widened to float64, and every cast or
fill to float32 becomes one to float64, so the kernels, which compute in
their inputs' dtype, keep float64 throughout. A kernel that still returns
float32 from float64 inputs, or an op without a kernel, gives no opinion
(None): a float64 run that is float32 in places would be taken for exact."""
from __future__ import annotations

import numpy as np

from .graph import Graph, TensorInfo
from .interpret import interpret
from .ops import evaluate


class NoFloat64Run(Exception):
    """The graph cannot be computed in float64 throughout."""


def interpret_float64(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """`graph`'s outputs computed in float64 on `inputs` (float32 ones
    widened). Widens `graph` in place. Raises NoFloat64Run, naming the op,
    where an op has no kernel or a kernel narrows to float32."""
    widen_graph(graph)
    try:
        return interpret(graph, [_widened(x) for x in inputs], _run_float64)
    except NotImplementedError as exc:   # an op without a kernel
        raise NoFloat64Run(str(exc)) from None


def widen_graph(graph: Graph) -> None:
    """float32 -> float64 in `graph` and its subgraphs (if/loop attrs):
    constants, recorded dtypes, and `dtype` attributes (cast, full)."""
    for name, array in graph.constants.items():
        graph.constants[name] = _widened(array)
    for name, info in graph.info.items():
        if info.dtype == "float32":
            graph.info[name] = TensorInfo("float64", info.shape)
    for node in graph.nodes:
        for key, value in node.attrs.items():
            if isinstance(value, Graph):
                widen_graph(value)
            elif key == "dtype" and value == "float32":
                node.attrs[key] = "float64"


def _widened(array):
    if isinstance(array, np.ndarray) and array.dtype == np.float32:
        return array.astype(np.float64)
    return array


def _run_float64(op: str, arrays: list, attrs: dict) -> list[np.ndarray] | None:
    """ops.evaluate, refusing a result narrower than its float64 inputs."""
    result = evaluate(op, arrays, attrs)
    if result is None:
        return None
    wide = any(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in arrays)
    if wide and any(np.asarray(r).dtype == np.float32 for r in result):
        raise NoFloat64Run(f"the numpy kernel of IR op {op!r} returns float32 from float64 "
                           f"inputs")
    return result
