"""Where a written model goes wrong: once convert's verify (x2/check/verify.py)
has found that the model disagrees with its source, the model is run once
more on the failing inputs recording every assignment of its forward, as
`x2 check --bisect` does, and each recorded value is compared with the IR's
numpy reference kernels (x2/ir/interpret.py). The first IR op whose value
differs names the culprit and its source node.

The numpy kernels only point at a place here; they never decide whether a
model is written (the source does). Graphs with an op that has no numpy
kernel, inputs the reference rejects, or sizes beyond the limits below
(where the numpy run costs more than the conversion) are not located.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..ir import Graph
from ..ir.interpret import interpret_all
from .codegen import import_generated

# Beyond these the numpy reference run is skipped (seconds for a ResNet-50).
MAX_WEIGHT_BYTES = 256 << 20
MAX_NODES = 4000
MAX_INPUT_ELEMENTS = 1 << 22


def _skip_reason(graph: Graph) -> str | None:
    weights = sum(a.nbytes for a in graph.constants.values())
    if weights > MAX_WEIGHT_BYTES:
        return f"{weights >> 20} MiB of weights (the limit is {MAX_WEIGHT_BYTES >> 20} MiB)"
    if len(graph.nodes) > MAX_NODES:
        return f"{len(graph.nodes)} nodes (the limit is {MAX_NODES})"
    for name in graph.inputs:
        dtype = graph.dtype(name)
        if dtype is None or np.dtype(dtype).kind not in "biuf":
            return f"input '{name}' has no numeric dtype"
        size = int(np.prod([d if isinstance(d, int) and d > 0 else 1
                            for d in (graph.shape(name) or ())]))
        if size > MAX_INPUT_ELEMENTS:
            return f"input '{name}' has {size} elements"
    return None


def _differs(graph: Graph, value: str, ref: np.ndarray, got) -> str | None:
    """Why `got` (the target's array) is not `ref`, or None."""
    if not isinstance(got, np.ndarray):
        return f"produced {type(got).__name__}, not a tensor"
    if got.shape != ref.shape:
        return f"shape {list(got.shape)}, expected {list(ref.shape)}"
    declared = graph.dtype(value)
    expected = np.dtype(declared) if declared else ref.dtype
    if got.dtype != expected:
        return f"dtype {got.dtype}, expected {expected}"
    if ref.dtype.kind not in "fc":
        if not np.array_equal(ref, got.astype(ref.dtype)):
            bad = int(np.sum(ref != got.astype(ref.dtype)))
            return f"{bad} of {ref.size} values differ"
        return None
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    if not np.array_equal(np.isnan(ref64), np.isnan(got64)):
        return "NaN at different positions"
    finite = np.isfinite(ref64)
    if not np.array_equal(ref64[~finite & ~np.isnan(ref64)], got64[~finite & ~np.isnan(ref64)]):
        return "infinities differ"
    if not finite.any():
        return None
    error = float(np.max(np.abs(ref64[finite] - got64[finite])))
    scale = float(np.max(np.abs(ref64[finite])))
    rtol = 1e-2 if ref.dtype == np.float16 else 1e-3
    if error > 1e-5 + rtol * scale:
        return f"max abs error {error:.3g} against values up to {scale:.3g}"
    return None


def locate(graph: Graph, trace: Callable, names: dict[str, str], inputs: list[np.ndarray],
           crashed: str | None = None) -> str | None:
    """Where the written model first departs from the numpy reference on
    `inputs`: "IR op 'op' node 'n' (from SourceOp 'name') gives 'var' with
    <how>", or None with nothing to name. `trace(inputs) -> {variable:
    array}` records forward's assignments up to where it stops; `crashed` is
    the model's error when it raised on these inputs."""
    if _skip_reason(graph):
        return None
    try:
        with np.errstate(all="ignore"):
            reference = interpret_all(graph, [a.copy() for a in inputs])
    except Exception:  # noqa: BLE001 - no kernel, or inputs the reference rejects
        return None
    recorded = trace(inputs)
    for node in graph.nodes:
        for value in node.outputs:
            var = names.get(value)
            if var is None or value not in reference:
                continue
            if var not in recorded:
                if not crashed:
                    continue  # not assigned in forward (an output returned as is)
                why = f"it crashes there ({crashed})"
            else:
                why = _differs(graph, value, reference[value], recorded[var])
            if why:
                source = node.source or {}
                origin = f" (from {source.get('op')} '{source.get('name')}')" \
                    if source.get("op") else ""
                return f"IR op '{node.op}' node '{node.name}'{origin} gives '{var}' with {why}"
    return None


def locate_written(graph: Graph, out: Path, names: dict[str, str], inputs: list[np.ndarray],
                   run: Callable, trace: Callable) -> str | None:
    """locate() for the model.py written in `out`: it is loaded and run once
    (`run(model, inputs)`) to learn whether it crashes, then traced
    (`trace(module, inputs)`)."""
    module = import_generated(out / "model.py")
    try:
        run(module.load_model(), inputs)
        crashed = None
    except Exception as exc:  # noqa: BLE001 - the generated model crashed
        crashed = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    return locate(graph, lambda xs: trace(module, xs), names, inputs, crashed)
