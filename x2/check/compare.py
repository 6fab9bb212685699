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


# Index outputs (x2/convert.py index_output records them in report.json as
# outputs[i]["indices_of"]): which of several tied elements a kernel picks is
# its own choice, so these are compared up to ties, not exactly.
def tie_rule(indices_of: dict) -> str:
    """What compare_indices accepts for an output with this `indices_of`, in
    words (for verify's notes and x2 check's rows)."""
    op, values = indices_of["op"], indices_of.get("values")
    if op in ("topk", "sort") and values:
        return (f"the indices of {op} along axis {indices_of['axis']}, compared up to ties: "
                f"equal where '{values}' (compared as usual) has no tie, the same index set "
                f"within each run of tied values, distinct indices in every row"
                f"{'; the last run of a top-k may hold other tied elements' if op == 'topk' else ''}")
    if op in ("topk", "sort"):
        return (f"the indices of {op} along axis {indices_of['axis']} without their values "
                f"among the outputs: the same index set per row (the order within it is "
                f"not compared)")
    return (f"the index of {op} along axis {indices_of['axis']}: compared exactly (the tied "
            f"candidates are not among the outputs; every target picks the first, as the "
            f"source does)")


def compare_indices(ref: np.ndarray, got: np.ndarray, indices_of: dict,
                    ref_values: np.ndarray | None = None) -> int:
    """How many of `got`'s indices are not a right answer, given the source's
    `ref` (and the source's values output `ref_values`, for topk/sort with
    it among the outputs): 0 when `got` picks, up to ties, what `ref` picks."""
    if ref.shape != got.shape:
        return max(ref.size, got.size, 1)
    op, size = indices_of["op"], indices_of.get("axis_size")
    out_of_range = int(np.sum((got < 0) | (got >= size))) if size else int(np.sum(got < 0))
    if op not in ("topk", "sort") or ref.ndim == 0 or out_of_range:
        return out_of_range or int(np.sum(ref != got))
    axis = indices_of["axis"]
    ref_rows = np.moveaxis(ref, axis, -1).reshape(-1, ref.shape[axis])
    got_rows = np.moveaxis(got, axis, -1).reshape(-1, ref.shape[axis])
    if ref_values is None or ref_values.shape != ref.shape:
        return sum(_set_differs(r, g) for r, g in zip(ref_rows, got_rows))
    value_rows = np.moveaxis(ref_values, axis, -1).reshape(ref_rows.shape)
    partial_last = op == "topk"
    return sum(_row_wrong_up_to_ties(r, g, v, partial_last)
               for r, g, v in zip(ref_rows, got_rows, value_rows))


def _set_differs(ref_row: np.ndarray, got_row: np.ndarray) -> int:
    """The row's size where its index sets (with repeats) differ, else 0."""
    return 0 if np.array_equal(np.sort(ref_row), np.sort(got_row)) else ref_row.size


def _row_wrong_up_to_ties(ref_row, got_row, value_row, partial_last: bool) -> int:
    """Positions of one sorted row whose indices are wrong: a run of equal
    source values (ties sit side by side in sorted output) must hold the
    same indices in any order; the last run of a top-k only distinct ones
    (other elements of that value, beyond k, are as right). Repeated
    indices are wrong anywhere."""
    if len(np.unique(got_row)) != got_row.size:
        return got_row.size
    wrong = 0
    for start, stop in _tied_runs(value_row):
        if partial_last and stop == value_row.size:
            continue   # distinct (above), and not in another run (checked there)
        if not np.array_equal(np.sort(ref_row[start:stop]), np.sort(got_row[start:stop])):
            wrong += stop - start
    return wrong


def _tied_runs(values: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) of each run of equal values (NaN equal to NaN)."""
    same = (values[1:] == values[:-1])
    if values.dtype.kind == "f":
        same |= np.isnan(values[1:]) & np.isnan(values[:-1])
    edges = [0, *(np.flatnonzero(~same) + 1).tolist(), values.size]
    return list(zip(edges[:-1], edges[1:]))


# A float32 model's own rounding widens the tolerance by this factor, by at
# most NOISE_CAP of the output's scale (verify's noise probe; the float64
# second opinion asked only of a difference below NOISE_CAP).
NOISE_FACTOR = 4.0
NOISE_CAP = 1e-2


def _max_gap(a: np.ndarray, truth: np.ndarray) -> float:
    """max|a - truth| over the values finite in both."""
    finite = np.isfinite(a) & np.isfinite(truth)
    return float(np.max(np.abs(np.where(finite, a.astype(np.float64) - truth, 0.0)),
                        initial=0.0))


def rounding_only(ref: np.ndarray, got: np.ndarray, exact: list | None, i: int,
                  rtol: float, atol: float) -> dict | None:
    """How far the source's `ref` and the target's `got` each are from the
    converted model run in float64 (`exact`), relative to the output's scale,
    and whether that makes their difference float32 rounding ("rounding"):
    each is within the tolerance and NOISE_FACTOR times the other's distance
    of the float64 values. A deep net whose float32 result wanders (large
    activations) is not refused for it; a mapping that computes something
    else stays as far from its own float64 run as from the source, and a
    runner that departs from model.py in float32 only (a serving runtime's
    pass, a float32 cast) is far from it while the source is close. None
    where there is no float64 run to judge by, or it is NaN or inf where the
    source is finite."""
    if exact is None or ref.dtype.kind != "f" or exact[i].shape != ref.shape:
        return None
    truth = exact[i].astype(np.float64)
    if np.any(np.isfinite(ref) & ~np.isfinite(truth)):
        return None   # the distances would leave out values the source has
    scale = float(np.max(np.abs(ref), initial=0.0))
    source_off, target_off = _max_gap(ref, truth), _max_gap(got, truth)
    if not np.isfinite(source_off + target_off) or scale == 0:
        return None
    allowed = atol + rtol * scale
    rounding = source_off <= allowed + NOISE_FACTOR * target_off and \
        target_off <= allowed + NOISE_FACTOR * source_off
    return {"source_vs_float64": source_off / scale, "target_vs_float64": target_off / scale,
            "rounding": bool(rounding)}
