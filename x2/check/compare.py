"""What `x2 check` and `--bisect` both need: the parity measure and the
inputs as the source sees them. A leaf (numpy only), so that parity and
bisect do not import each other."""
from __future__ import annotations

import numpy as np

from ..errors import X2Error


def compare(ref: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> tuple:
    if ref.shape != got.shape:
        raise X2Error(f"output shapes differ: source {ref.shape}, converted {got.shape}")
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    # NaN and +-inf (a mask's -inf, an overflow) must be the same where the
    # source has them; the error and scale are measured on the finite rest.
    finite = np.isfinite(ref64) & np.isfinite(got64)
    same = finite | (np.isnan(ref64) & np.isnan(got64)) | (np.isinf(ref64) & (ref64 == got64))
    if not same.all():
        max_abs = float("inf")
    else:
        diff = np.subtract(ref64, got64, where=finite, out=np.zeros_like(ref64))
        max_abs = float(np.max(np.abs(diff), initial=0.0))
    scale = float(np.max(np.abs(ref64), where=np.isfinite(ref64), initial=0.0))
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    constant = bool(ref.size > 1 and np.all(ref64 == ref64.reshape(-1)[0]))
    return max_abs, max_rel, scale, constant, max_abs <= atol + rtol * scale


def each_run(args: dict):
    """(inputs, outputs file) for each input set of a run task: "inputs" and
    "outputs" are one .npz path each, or equal-length lists of them (x2 check
    runs every shape in one worker, so the framework starts once)."""
    inputs, outputs = args["inputs"], args["outputs"]
    if isinstance(inputs, str):
        inputs, outputs = [inputs], [outputs]
    for path, out in zip(inputs, outputs, strict=True):
        with np.load(path) as data:
            yield [data[f"arr_{i}"] for i in range(len(data.files))], out


def source_inputs(arrays, names, io):
    """The inputs as the source model takes them: with --io-layout nchw, each
    input in the source's own (NHWC) layout of the same data."""
    return [np.transpose(a, np.argsort(io[n]["perm"])) if io.get(n, {}).get("role") == "input"
            else a for n, a in zip(names, arrays)]


def precision_args(report, precision: str) -> dict:
    """What a runner needs: a model converted to reduced precision runs as
    written, its float inputs cast to the dtypes it declares; an fp32 one is
    run in `precision` by emulation (x2/check/runtime.py)."""
    written = (report.target_details.get("precision") or {}).get("precision", "fp32")
    if written == "fp32":
        return {"precision": precision}
    return {"precision": "fp32", "written": written,
            "input_dtypes": [i["dtype"] for i in report.inputs]}
