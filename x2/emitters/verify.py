"""No broken output reported as success: the emitter runs the model it has
just written once, on small example inputs, and compares every output with
the IR's numpy reference kernels (x2/ir/interpret.py), at two sizes of its
dynamic dims where it has some. A model that crashes
or disagrees is a ConversionError naming the first IR op whose output
differs (the generated forward is re-run recording every assignment, as
`x2 check --bisect` does), not a model that fails later in the user's hands.

What it cannot check it skips and says so (in the emitter's result):
graphs with an op that has no numpy kernel, inputs the reference itself
rejects (an index input, a shape input), and graphs above the size limits
below, where the numpy run would cost more than the conversion.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import ConversionError
from ..check.input_ranges import infer_index_ranges
from ..ir import Graph
from ..ir.interpret import interpret_all

# Beyond these the numpy reference run is skipped (seconds for a ResNet-50).
MAX_WEIGHT_BYTES = 32 << 20
MAX_NODES = 2000
MAX_INPUT_ELEMENTS = 1 << 20
SEED = 0


# The sizes every unknown dim takes, one run each: a model with dynamic dims
# is verified at two shapes (1 hides broadcasting mistakes that 3 shows).
DYNAMIC_SIZES = (1, 3)


def _known(dim) -> bool:
    """A dim fixed at conversion time (a dynamic one is None, or -1 in some readers)."""
    return isinstance(dim, int) and dim >= 0


def example_inputs(graph: Graph, unknown: int = 1) -> list[np.ndarray]:
    """One small batch: unknown dimensions are `unknown`; index inputs stay in
    the range the graph indexes with; other ints are small and non-negative."""
    rng = np.random.default_rng(SEED)
    ranges = infer_index_ranges(graph)
    arrays = []
    for name in graph.inputs:
        shape = tuple(d if _known(d) else unknown for d in (graph.shape(name) or ()))
        dtype = np.dtype(graph.dtype(name))
        if dtype == np.bool_:
            array = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            low, high = ranges.get(name, (0, 4))
            array = rng.integers(low, high, shape)
        else:
            array = rng.standard_normal(shape)
        arrays.append(np.asarray(array, dtype))  # a 0-d array, not a numpy scalar
    return arrays


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


def verify(graph: Graph, target: str, run: Callable, trace: Callable,
           names: dict[str, str], serving: tuple[str, Callable] | str | None = None) -> dict:
    """Run the emitted model (`run(inputs) -> outputs as numpy`) against the
    numpy reference; raise ConversionError if it crashes or disagrees.
    `trace(inputs) -> {variable: numpy array}` re-runs it recording every
    assignment up to where it fails, to name the first op that differs.
    `serving` = (what, run) is the target's serving runtime over the saved
    program, held to the same reference once the model itself agrees (a
    string: why it is not run). Returns a record of what was checked, for
    the emitter's result."""
    reason = _skip_reason(graph)
    if reason:
        return {"verified": False, "skipped": reason}
    serving_skipped = serving if isinstance(serving, str) else None
    serving = None if serving_skipped else serving
    dynamic = any(not _known(d) for name in graph.inputs for d in (graph.shape(name) or ()))
    for unknown in DYNAMIC_SIZES if dynamic else DYNAMIC_SIZES[:1]:
        inputs = example_inputs(graph, unknown)
        try:
            with np.errstate(all="ignore"):
                reference = interpret_all(graph, [a.copy() for a in inputs])
        except Exception as exc:  # noqa: BLE001 - no kernel, or inputs the reference rejects
            return {"verified": False,
                    "skipped": f"the numpy reference cannot run it: {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:200]}"}
        at_size = f" (every dynamic dim at size {unknown})" if dynamic else ""
        problem = _problem(graph, run, inputs, reference)
        if problem is not None:
            problem += at_size
            raise ConversionError(_culprit(graph, target, inputs, reference, trace, names,
                                           problem), details={"problem": problem})
        problem = serving and _problem(graph, serving[1], inputs, reference)
        if problem:
            problem += at_size
            raise ConversionError(
                f"the generated {target} model computes what the model does, but not "
                f"{serving[0]}: its output {problem}; x2 refuses to write it (convert with "
                f"--no-verify to write it anyway)", details={"problem": problem})
    return {"verified": True, **({"dynamic_sizes": list(DYNAMIC_SIZES)} if dynamic else {}),
            **({"serving": serving[0]} if serving else {}),
            **({"serving_skipped": serving_skipped} if serving_skipped else {})}


def _problem(graph: Graph, run: Callable, inputs, reference) -> str | None:
    """How `run`'s outputs on `inputs` differ from the reference, or None."""
    try:
        outputs = run([a.copy() for a in inputs])
        for value, got in zip(graph.outputs, outputs):
            problem = _differs(graph, value, reference[value], got)
            if problem:
                return problem
        if len(outputs) != len(graph.outputs):
            return f"{len(outputs)} outputs, expected {len(graph.outputs)}"
        return None
    except Exception as exc:  # noqa: BLE001 - the generated model crashed
        return f"raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"


def _culprit(graph, target, inputs, reference, trace, names, problem) -> str:
    recorded = trace(inputs)  # stops where the model crashes
    for node in graph.nodes:
        for value in node.outputs:
            var = names.get(value)
            if var is None or value not in reference:
                continue
            if var not in recorded:
                if not problem.startswith("raised"):
                    continue  # not assigned in forward (an output returned as is)
                why = f"it crashes there ({problem})"
            else:
                why = _differs(graph, value, reference[value], recorded[var])
            if why:
                source = node.source or {}
                origin = f" (from {source.get('op')} '{source.get('name')}')" \
                    if source.get("op") else ""
                return (f"the generated {target} model does not compute what the model does: "
                        f"IR op '{node.op}' node '{node.name}'{origin} gives '{var}' with {why}; "
                        f"x2 refuses to write it (convert with --no-verify to write it anyway)")
    return (f"the generated {target} model does not compute what the model does: its output "
            f"{problem}; x2 refuses to write it (convert with --no-verify to write it anyway)")
