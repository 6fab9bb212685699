"""`x2 check --bisect`: find the first op whose output diverges.

report.json "values" lists, in execution order, every node output of the
converted model: its name there (a model.py variable, or the ONNX value),
the IR value, the IR op and the source node ({op, name, mapper}). Both sides
are run once more on the failing batch:

- the converted model records every assignment of its forward (a recording
  copy of forward, compiled from model.py's AST; model.py is not changed),
  or, for ONNX, exposes the values as extra graph outputs;
- the TensorFlow source fetches the same-named tensors from its frozen graph
  (IR value names are TF tensor names for values the mappers kept; values the
  layout pass made NCHW carry a "_nchw" suffix and are compared after
  transposing the NHWC source tensor).

The first value (in execution order) whose error exceeds the tolerance names
the culprit. Values with no counterpart in the source (helpers a mapper
created) are skipped and counted.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .isolation import run_step
from .parity_compare import compare, source_inputs

_SUFFIXES = ("_nchw", "_nhwc")
# Which sources can be bisected (their intermediates fetched by IR value name).
BISECT_SOURCES = {"tf"}


def source_candidates(entry: dict) -> list[str]:
    """TF tensor names that may hold this IR value: the value name itself, and
    for values the layout pass renamed ("BiasAdd_nchw__8": base name, layout
    suffix, uniquing counter) the base name inside the source node's scope."""
    value = entry["value"]
    names = [value]
    base = re.sub(r"__\d+$", "", value)
    for suffix in _SUFFIXES:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    scope = (entry.get("source") or {}).get("name", "").rpartition("/")[0]
    if "/" in base:
        names.append(base)
    elif scope and base != value:
        names.append(f"{scope}/{base}")
    return names


def align(src: np.ndarray, got: np.ndarray, nchw: bool = False
          ) -> tuple[np.ndarray | None, str]:
    """The source tensor in the converted model's layout, when shapes allow.
    `nchw`: the layout pass made this value NCHW (its name says so), so an
    NHWC source tensor is transposed even when the shapes look alike
    (16x16x16 feature maps)."""
    if nchw and src.ndim >= 3:
        perm = (0, src.ndim - 1, *range(1, src.ndim - 1))
        if tuple(src.shape[i] for i in perm) == got.shape:
            return np.transpose(src, perm), "source NHWC -> NCHW"
    if src.shape == got.shape:
        return src, ""
    if src.ndim == got.ndim and src.ndim >= 3:
        to_first = (0, src.ndim - 1, *range(1, src.ndim - 1))    # NHWC -> NCHW
        to_last = (0, *range(2, src.ndim), 1)                     # NCHW -> NHWC
        if tuple(src.shape[i] for i in to_first) == got.shape:
            return np.transpose(src, to_first), "source NHWC -> NCHW"
        if tuple(src.shape[i] for i in to_last) == got.shape:
            return np.transpose(src, to_last), "source NCHW -> NHWC"
    if src.size == got.size and src.size > 0 and src.ndim != got.ndim:
        return src.reshape(got.shape), "reshaped"
    return None, ""


def bisect(work: Path, model, converted, source, target, report, signature, names, io,
           arrays, src_dev, tgt_dev, precision, rtol, atol) -> dict:
    values = report.get("values")
    if source not in BISECT_SOURCES:
        return {"ran": False, "why": f"--bisect reads intermediate tensors of "
                f"{', '.join(sorted(BISECT_SOURCES))} sources only; --from {source} is not "
                f"supported yet"}
    if not values:
        return {"ran": False, "why": f"{converted}/report.json has no 'values' map (converted "
                f"by an older x2); convert again to bisect"}
    fmt = report["source"].get("format")
    if fmt not in (None, "savedmodel"):
        return {"ran": False, "why": f"--bisect reads intermediates from SavedModel sources; "
                f"this source is a {fmt}"}
    work.mkdir(parents=True)
    np.savez(work / "inputs.npz", *arrays)
    np.savez(work / "source_inputs.npz", *source_inputs(arrays, names, io))
    wanted = sorted({c for v in values for c in source_candidates(v)})
    src = run_step("tf.parity_run", {
        "model": model, "signature": signature, "names": names, "device": src_dev,
        "inputs": str(work / "source_inputs.npz"), "outputs": str(work / "src_out.npz"),
        "input_shapes": report["source"].get("input_shapes"),
        "trace": wanted, "trace_out": str(work / "src_trace.npz")})
    src_traced = _traced(work / "src_trace.npz", src["traced"])
    if target == "onnx":
        trace = [[v["var"], v["dtype"]] for v in values if v.get("dtype")]
    else:
        trace = True
    runner = f"{target}:{'python' if target != 'onnx' else 'onnxruntime'}"
    tgt = run_step(f"{target}.parity_run", {
        "out": converted, "mode": "python", "device": tgt_dev, "precision": precision,
        "inputs": str(work / "inputs.npz"), "outputs": str(work / "tgt_out.npz"),
        "trace": trace, "trace_out": str(work / "tgt_trace.npz")})
    tgt_traced = _traced(work / "tgt_trace.npz", tgt["traced"])

    compared, skipped, first, last_good = [], 0, None, None
    unmatched: list[dict] = []   # since the last matching point
    for entry in values:
        got = tgt_traced.get(entry["var"])
        ref = next((src_traced[c] for c in source_candidates(entry)
                    if c in src_traced), None)
        ref_aligned, how = (None, "") if got is None or ref is None or \
            got.dtype.kind not in "fc" else align(
            ref, got, re.sub(r"__\d+$", "", entry["value"]).endswith("_nchw"))
        if ref_aligned is None:
            skipped += 1
            unmatched.append(_describe(entry))
            continue
        max_abs, max_rel, scale, _const, ok = compare(ref_aligned.astype(np.float64),
                                                      got.astype(np.float64), rtol, atol)
        if not ok and _same_elements(ref_aligned, got, rtol, atol):
            # Same numbers in another order: the layout pass flattened an NCHW
            # tensor and permuted the consumer's weights to match (Flatten ->
            # Dense). Not comparable here; what consumes it still is.
            skipped += 1
            unmatched.append(_describe(entry))
            continue
        point = {"var": entry["var"], "ir_value": entry["value"], "ir_op": entry["ir_op"],
                 "source_op": entry["source"].get("op"),
                 "source_name": entry["source"].get("name"),
                 "mapper": entry["source"].get("mapper"), "max_abs": max_abs,
                 "max_rel": max_rel, "ref_scale": scale, "passed": ok, "layout": how}
        compared.append(point)
        if ok:
            last_good = point
            unmatched = []
        else:
            first = point
            break
    result = {"ran": True, "runner": runner, "compared": len(compared), "skipped": skipped,
              "points": compared[-8:], "first_divergence": first,
              "last_matching": last_good, "rtol": rtol, "atol": atol,
              # Ops between the last matching and the first diverging point that
              # have no source counterpart (fused or helper values): suspects too.
              "unmatched_before": unmatched if first else []}
    if first is None:
        result["why"] = ("every mapped intermediate matches the source; the difference "
                         "arises after the last mapped point or in a runner not traced "
                         f"(bisect traces {runner})")
    return result


def _same_elements(ref: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> bool:
    if ref.ndim < 2 or ref.shape != got.shape:
        return False
    a = np.sort(ref.reshape(ref.shape[0], -1).astype(np.float64), axis=1)
    b = np.sort(got.reshape(got.shape[0], -1).astype(np.float64), axis=1)
    return bool(np.max(np.abs(a - b)) <= atol + rtol * max(float(np.max(np.abs(a))), 0.0))


def _describe(entry: dict) -> dict:
    src = entry.get("source") or {}
    return {"var": entry["var"], "ir_value": entry["value"], "ir_op": entry["ir_op"],
            "source_op": src.get("op"), "source_name": src.get("name"),
            "mapper": src.get("mapper")}


def _traced(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[f"t{i}"] for i, name in enumerate(names)}
