"""`x2 check --bisect`: find the first op whose output diverges.

report.json "values" lists, in execution order, every node output of the
converted model: its name there (a model.py variable, or the ONNX value),
the IR value, the IR op and the source node ({op, name, mapper}). Both sides
are run once more on the failing batch:

- the converted model records every assignment of its forward (a recording
  copy of forward, compiled from model.py's AST; model.py is not changed),
  or, for ONNX, exposes the values as extra graph outputs;
- the TensorFlow source fetches the tensor each value's origin names (set
  by the mappers and passes as data: the source tensor and the permutation
  the layout pass applied), which is permuted the same way before comparing.

The first value (in execution order) whose error exceeds the tolerance names
the culprit. Values with no counterpart in the source (helpers a mapper
created) are skipped and counted.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..process.isolation import run_step
from .compare import compare, precision_args as _precision_args, source_inputs

# Which sources can be bisected (their intermediates fetched by IR value name).
BISECT_SOURCES = {"tf"}


def align(src: np.ndarray, got: np.ndarray, perm: list[int] | None
          ) -> tuple[np.ndarray | None, str]:
    """The source tensor in the converted model's layout: permuted by the
    value's origin, or reshaped where the converted model holds the same
    elements in another rank (a flatten the layout pass folded)."""
    if perm is not None:
        if src.ndim != len(perm) or tuple(src.shape[i] for i in perm) != got.shape:
            return None, ""
        return np.transpose(src, perm), f"source transposed by {list(perm)}"
    if src.shape == got.shape:
        return src, ""
    if src.size == got.size and src.size > 0 and src.ndim != got.ndim:
        return src.reshape(got.shape), "reshaped"
    return None, ""


def bisect(work: Path, model, converted, source, target, report, signature, names, io,
           arrays, src_dev, tgt_dev, precision, rtol, atol) -> dict:
    values = report.values
    if source not in BISECT_SOURCES:
        return {"ran": False, "why": f"--bisect reads intermediate tensors of "
                f"{', '.join(sorted(BISECT_SOURCES))} sources only; --from {source} is not "
                f"supported yet"}
    if not values or any("origin" not in v for v in values):
        return {"ran": False, "why": f"{converted}/report.json has no value origins (converted "
                f"by an older x2); convert again to bisect"}
    fmt = report.source.get("format")
    if fmt not in (None, "savedmodel"):
        return {"ran": False, "why": f"--bisect reads intermediates from SavedModel sources; "
                f"this source is a {fmt}"}
    work.mkdir(parents=True)
    np.savez(work / "inputs.npz", *arrays)
    np.savez(work / "source_inputs.npz", *source_inputs(arrays, names, io))
    wanted = sorted({v["origin"]["tensor"] for v in values if v["origin"]})
    src = run_step("tf.parity_run", {
        "model": model, "signature": signature, "names": names, "device": src_dev,
        "inputs": str(work / "source_inputs.npz"), "outputs": str(work / "src_out.npz"),
        "input_shapes": report.source.get("input_shapes"),
        "trace": wanted, "trace_out": str(work / "src_trace.npz")})
    src_traced = _traced(work / "src_trace.npz", src["traced"])
    if target == "onnx":
        trace = [[v["var"], v["dtype"]] for v in values if v.get("dtype")]
    else:
        trace = True
    runner = f"{target}:{'python' if target != 'onnx' else 'onnxruntime'}"
    tgt = run_step(f"{target}.parity_run", {
        "out": converted, "mode": "python", "device": tgt_dev,
        **_precision_args(report, precision),
        "inputs": str(work / "inputs.npz"), "outputs": str(work / "tgt_out.npz"),
        "trace": trace, "trace_out": str(work / "tgt_trace.npz")})
    tgt_traced = _traced(work / "tgt_trace.npz", tgt["traced"])

    compared, skipped, first, last_good = [], 0, None, None
    unmatched: list[dict] = []   # since the last matching point
    for entry in values:
        got = tgt_traced.get(entry["var"])
        origin = entry["origin"]
        ref = src_traced.get(origin["tensor"]) if origin else None
        ref_aligned, how = (None, "") if got is None or ref is None or \
            got.dtype.kind not in "fc" else align(ref, got, origin["perm"])
        if ref_aligned is None:
            skipped += 1
            unmatched.append(_describe(entry))
            continue
        max_abs, max_rel, scale, _const, ok = compare(ref_aligned.astype(np.float64),
                                                      got.astype(np.float64), rtol, atol)
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


def _describe(entry: dict) -> dict:
    src = entry.get("source") or {}
    return {"var": entry["var"], "ir_value": entry["value"], "ir_op": entry["ir_op"],
            "source_op": src.get("op"), "source_name": src.get("name"),
            "mapper": src.get("mapper")}


def _traced(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[f"t{i}"] for i, name in enumerate(names)}
