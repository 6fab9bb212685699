"""An IR graph computed in float64 by the numpy kernels: the float64 second
opinion on a float32 model that has no float64 run of its own (an ONNX file;
x2/check/compare.rounding_only judges by it).

Every float32 value a node reads (input, constant, result) is widened to
float64, and every cast or fill to float32 becomes one to float64, so the
kernels, which compute in their inputs' dtype, keep float64 throughout. A
kernel that still returns float32 from float64 inputs, or an op without a
kernel, gives no opinion (NoFloat64Run): a float64 run that is float32 in
places would be taken for exact."""
from __future__ import annotations

import numpy as np

from .graph import Graph, TensorInfo
from .interpret import interpret
from .ops import evaluate


class NoFloat64Run(Exception):
    """The graph cannot be computed in float64 throughout."""


def interpret_float64(graph: Graph, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """`graph`'s outputs computed in float64 on `inputs`. Widens `graph`'s
    dtype attributes in place. Raises NoFloat64Run, naming the op, where an
    op has no kernel or a kernel narrows to float32."""
    widen_dtypes(graph)
    try:
        return [_widened(v) for v in interpret(graph, inputs, _run_float64)]
    except NotImplementedError as exc:   # an op without a kernel
        raise NoFloat64Run(str(exc)) from None


def widen_dtypes(graph: Graph) -> None:
    """float32 -> float64 in `graph`'s and its subgraphs' (if/loop attrs)
    recorded dtypes and `dtype` attributes (cast, full). Constants stay as
    they are: each is widened when a node reads it, so a large model's
    float32 weights (memory-mapped) are never all copied to float64 at once."""
    for name, info in graph.info.items():
        if info.dtype == "float32":
            graph.info[name] = TensorInfo("float64", info.shape)
    for node in graph.nodes:
        for key, value in node.attrs.items():
            if isinstance(value, Graph):
                widen_dtypes(value)
            elif key == "dtype" and value == "float32":
                node.attrs[key] = "float64"


def _widened(array):
    if isinstance(array, np.ndarray) and array.dtype == np.float32:
        return array.astype(np.float64)
    return array


def _reshape_dynamic(arrays: list, attrs: dict) -> list[np.ndarray]:
    """The IR's reshape_dynamic: to the computed shape, -1 inferred (as the
    emitters write it, torch.reshape; ONNX's 0 is resolved by the mapper).
    ops.py leaves it without a kernel so that constant folding keeps it;
    a run of the whole graph on real inputs needs one."""
    return [np.reshape(arrays[0], [int(d) for d in np.reshape(arrays[1], -1)])]


# Kernels the op table leaves out on purpose (see each), for running whole graphs.
_WHOLE_GRAPH_KERNELS = {"reshape_dynamic": _reshape_dynamic}


def _run_float64(op: str, arrays: list, attrs: dict) -> list[np.ndarray] | None:
    """The op's kernel on its inputs widened to float64, refusing a float32
    result."""
    arrays = [_widened(a) for a in arrays]
    kernel = _WHOLE_GRAPH_KERNELS.get(op)
    result = kernel(arrays, attrs) if kernel else evaluate(op, arrays, attrs)
    if result is None:
        return None
    if any(np.asarray(r).dtype == np.float32 for r in result):
        raise NoFloat64Run(f"the numpy kernel of IR op {op!r} returns float32 from inputs "
                           f"widened to float64")
    return result
