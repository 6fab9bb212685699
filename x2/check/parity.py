"""Numerical parity between a source model and its conversion.

Source and converted model run in separate worker processes on the same
seeded random inputs. An output passes when

    max|converted - source| <= atol + rtol * max|source|

i.e. the error is measured relative to the output's scale, which stays
meaningful for logits near zero (an elementwise relative error does not).

Inputs are seeded random (one seed per --batches) or the user's own arrays.
Each side runs on its device (cpu, gpu:N; checked against the devices each
framework reports in its worker), the converted model in fp32, fp16 or bf16.
With --bisect, a mismatch is traced to the first mapped intermediate tensor
that diverges, named by its source node (report.json "values").
"""
from __future__ import annotations

import shutil
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..contracts import ReadOptions, ReadRequest, Report
from ..errors import X2Error
from ..process.isolation import one_job, run_step
from .compare import (NOISE_CAP, compare, compare_indices, precision_args, rounding_only,
                      source_inputs, tie_rule)
from ..process.scratch import make_dir
from .shapes import input_shape, size_sets

# --from NAME -> worker task that runs the source model on saved inputs.
SOURCE_RUNS = {"tf": "tf.run", "onnx": "onnx.run", "torch": "torch.run"}
# --to NAME -> (worker task, mode) pairs that run the converted model; each
# mode is one way a user loads it (generated code, exported inference model).
# The tasks (x2/check/runtime.py) take a device and a precision.
TARGET_RUNS = {"paddle": [("paddle.parity_run", "python"), ("paddle.parity_run", "jit.load")],
               "onnx": [("onnx.parity_run", "onnxruntime")],
               "torch": [("torch.parity_run", "python")]}
# `serving` adds the target's serving runtime: inference/ through Paddle
# Inference with its default config (oneDNN on for CPU), a runtime with
# kernels and graph passes of its own. `x2 check` runs it unless told
# --no-serving; the API leaves it to the caller, since each run builds a
# predictor (seconds on a large model).
SERVING_RUNS = {"paddle": [("paddle.parity_run", "inference")]}
# --to NAME -> (worker task, mode, what it is) of the written model's float64
# run, the second opinion on a near miss (compare.rounding_only): model.py in
# float64, or model.onnx computed in float64 by x2's numpy kernels.
FLOAT64_RUNS = {"torch": ("torch.parity_run", "python", "model.py run in float64"),
                "paddle": ("paddle.parity_run", "python", "model.py run in float64"),
                "onnx": ("onnx.parity_run", "x2-kernels",
                         "model.onnx run in float64 by x2's numpy kernels")}
# The framework asked for devices on each side (x2/check/runtime.list_devices).
FRAMEWORK = {"tf": "tf", "onnx": "onnx", "torch": "torch", "paddle": "paddle"}
# Default tolerances per precision of the converted model (--rtol/--atol override).
# "mixed" (fp16 compute, fp32 weights) is held to fp16's.
# Seconds a runner (the source's or one of the converted model's) may take
# for every batch together before it counts as hung and is killed.
RUNNER_TIMEOUT = 900.0
PRECISION_TOLERANCES = {"fp32": (1e-4, 1e-6), "fp16": (1e-2, 1e-3), "bf16": (5e-2, 1e-2),
                        "mixed": (1e-2, 1e-3)}


@dataclass
class OutputParity:
    runner: str
    name: str
    max_abs: float
    max_rel: float
    ref_scale: float
    ref_constant: bool
    passed: bool

    def to_json(self) -> dict:
        return dict(self.__dict__)


def make_inputs(spec: dict, seed: int, batch: int | dict[str, int], edge_ids: bool = False,
                int_range: tuple[int, int] = (0, 10)) -> list[np.ndarray]:
    """Seeded random inputs; `batch` is the size of every dynamic dim, or a
    size per symbol (x2/check/shapes.py). `edge_ids` (convert's verify):
    token ids with 0, the last id and the special ids planted in the real
    tokens of masks padded by at most half a row. Integers with no known
    range are drawn from `int_range` ([low, high))."""
    rng = np.random.default_rng(seed)
    arrays = []
    for item in spec["inputs"]:
        sizes = batch if isinstance(batch, dict) else defaultdict(lambda: batch)
        shape = input_shape(item, sizes)
        # A half-precision interface is fed float32 values rounded to it: the
        # source takes float32, and the runner casts to the model's dtype.
        half = item["dtype"] in ("float16", "bfloat16")
        dtype = np.dtype("float32" if half else item["dtype"])
        if half:
            arrays.append(_rounded(rng.standard_normal(shape).astype(dtype), item["dtype"]))
        elif dtype.kind == "f":
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif _is_attention_mask(item, shape):
            arrays.append(padding_masks(shape, rng, edge_ids).astype(dtype))
        elif dtype.kind in "iu":
            # Token ids within the vocabulary, masks 0/1 (report "range", see
            # x2/check/input_ranges.py); other integers small and non-negative.
            low, high = item.get("range") or int_range
            ids = rng.integers(low, high, size=shape).astype(dtype)
            if edge_ids and item.get("range"):
                ids = with_edge_ids(ids, low, high, item.get("special") or [])
            arrays.append(ids)
        else:
            arrays.append(rng.integers(0, 2, size=shape).astype(dtype))
    return arrays


def with_edge_ids(ids: np.ndarray, low: int, high: int, special: list[int]) -> np.ndarray:
    """`ids` with the ids a lookup may get wrong planted at the start and at
    the end of every row (the real tokens of a right- and of a left-padded
    row): the special ids (pad, bos, eos, a table's padding_idx) within the
    range, the highest and the lowest (0)."""
    planted = list(dict.fromkeys([i for i in special if low <= i < high] + [high - 1, low]))
    rows = ids.reshape(-1, ids.shape[-1]).copy() if ids.ndim else ids.reshape(1, 1).copy()
    count = min(len(planted), rows.shape[1])
    if count:
        rows[:, :count] = planted[:count]
        rows[:, rows.shape[1] - count:] = planted[:count][::-1]
    return rows.reshape(ids.shape)


def _is_attention_mask(item: dict, shape: list) -> bool:
    """A [batch, seq] 0/1 input named like a mask: the padding mask of a batch
    of token sequences."""
    zero_one = item.get("dtype") == "bool" or list(item.get("range") or ()) == [0, 2]
    return len(shape) == 2 and "mask" in item.get("name", "").lower() and zero_one


def padding_masks(shape: list, rng, at_most_half: bool = False) -> np.ndarray:
    """Attention masks as a padded batch has them: row 0 right-padded, row 1
    left-padded (the layout of batched generation, where a causal query can see
    no key at all), row 2 unpadded, then again; each padded row keeps at least
    one token (`at_most_half`: half its tokens)."""
    batch, seq = shape
    masks = np.ones(shape, np.int64)
    for row in range(batch):
        # at_most_half: the real tokens carry the planted ids (with_edge_ids).
        most = seq // 2 + 1 if at_most_half else seq
        padded = int(rng.integers(1, most)) if seq > 1 and row % 3 != 2 else 0
        if padded and row % 3 == 0:
            masks[row, seq - padded:] = 0
        elif padded:
            masks[row, :padded] = 0
    return masks


def _rounded(array: np.ndarray, dtype: str) -> np.ndarray:
    from ..ir.schema import numpy_dtype
    return array.astype(numpy_dtype(dtype)).astype(np.float32)


def inputs_like(arrays: list[np.ndarray], spec: dict, seed: int) -> list[np.ndarray]:
    """Seeded random inputs with the shapes and dtypes of `arrays` (and the
    integer ranges of `spec`): a second, different set of inputs."""
    like = {"inputs": [{**item, "shape": list(a.shape), "dtype": str(a.dtype)}
                       for item, a in zip(spec["inputs"], arrays)]}
    return make_inputs(like, seed, 1)


def input_spread(samples: list[np.ndarray]) -> float | None:
    """How much an output changes across inputs: the largest max|s_i - s_0|
    over outputs `samples` from different inputs (None: fewer than two)."""
    samples = [s for s in samples if s.shape == samples[0].shape]
    if len(samples) < 2:
        return None
    first = samples[0].astype(np.float64)
    return max(float(np.max(np.abs(s.astype(np.float64) - first))) if s.size else 0.0
               for s in samples[1:])


def _samples_by_input(refs_by_batch: list[list[np.ndarray]], arrays_by_batch, index: int
                      ) -> list[np.ndarray]:
    """Output `index` for each distinct input the source saw: each batch item
    when every input and the output are batched alike, and each batch."""
    samples = []
    for refs, arrays in zip(refs_by_batch, arrays_by_batch):
        ref = refs[index]
        n = ref.shape[0] if ref.ndim else 0
        if n >= 2 and arrays and all(a.ndim and a.shape[0] == n for a in arrays):
            samples.extend(ref[i] for i in range(n))
        else:
            samples.append(ref)
    return samples


def parse_device(value: str | None, option: str = "--device") -> str | None:
    if value is None:
        return None
    text = value.strip().lower().replace("cuda", "gpu")
    if text == "cpu":
        return "cpu"
    if text == "gpu":
        return "gpu:0"
    if text.startswith("gpu:") and text[4:].isdigit():
        return f"gpu:{int(text[4:])}"
    raise X2Error(f"{option} {value!r}: expected cpu, gpu or gpu:N")


def resolve_device(device: str, framework: str, soft: bool, side: str,
                   warnings: list[str]) -> str:
    """`device` if `framework` has it here; else a clear error (or, with
    soft placement, CPU and a warning)."""
    if device == "cpu":
        return device
    found = run_step(f"{framework}.devices", {})
    available = found["devices"]
    if device in available:
        return device
    gpus = [d for d in available if d != "cpu"]
    why = ("this machine has no GPU" if not gpus else
           f"{framework} sees {len(gpus)} GPU(s)")
    message = (f"{device} requested for the {side} ({framework}) but {why}; "
               f"available: {', '.join(available)} (asked {found['how']})")
    if soft:
        warnings.append(f"{message}; --soft-placement: running the {side} on cpu")
        return "cpu"
    raise X2Error(message + ". Use --device cpu, one of the available devices, or "
                  "--soft-placement to fall back to cpu.")


def parse_tolerances(values) -> dict[str, tuple[float, float | None]]:
    """--tol NAME:RTOL[:ATOL] (repeatable)."""
    out = {}
    for value in values or ():
        parts = value.rsplit(":", 2) if value.count(":") >= 2 else value.rsplit(":", 1)
        try:
            if len(parts) == 3 and _is_number(parts[1]):
                name, rtol, atol = parts[0], float(parts[1]), float(parts[2])
            elif len(parts) >= 2:
                name, rtol, atol = ":".join(parts[:-1]), float(parts[-1]), None
            else:
                raise ValueError
        except ValueError:
            raise X2Error(f"--tol {value!r}: expected OUTPUT:RTOL or OUTPUT:RTOL:ATOL, "
                          f"e.g. logits:1e-3:1e-5") from None
        out[name] = (rtol, atol)
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def load_inputs_file(path: str, spec_inputs: list[dict]) -> list[np.ndarray]:
    """Arrays from a .npy (one input) or .npz (named by input name, or arr_0...)
    checked against the converted model's interface."""
    file = Path(path)
    if not file.is_file():
        raise X2Error(f"--inputs-file {path}: no such file")
    names = [i["name"] for i in spec_inputs]
    try:
        loaded = np.load(file, allow_pickle=False)
    except Exception as exc:
        raise X2Error(f"--inputs-file {path}: not a .npy/.npz file numpy can read ({exc})") \
            from None
    if isinstance(loaded, np.ndarray):
        if len(names) != 1:
            raise X2Error(f"--inputs-file {path}: a .npy holds one array but the model has "
                          f"{len(names)} inputs ({', '.join(names)}); use a .npz with "
                          f"arrays named after them")
        arrays = [loaded]
    else:
        with loaded:
            keys = list(loaded.files)
            if all(n in keys for n in names):
                arrays = [loaded[n] for n in names]
            elif all(f"arr_{i}" in keys for i in range(len(names))):
                arrays = [loaded[f"arr_{i}"] for i in range(len(names))]
            else:
                raise X2Error(f"--inputs-file {path}: has arrays {', '.join(keys) or 'none'}; "
                              f"expected {', '.join(names)} (or arr_0..arr_{len(names) - 1})")
    result = []
    for item, array in zip(spec_inputs, arrays):
        shape = item.get("shape")
        if shape is not None and (array.ndim != len(shape) or any(
                d is not None and d != a for d, a in zip(shape, array.shape))):
            raise X2Error(f"--inputs-file {path}: input '{item['name']}' has shape "
                          f"{list(array.shape)}, the converted model expects "
                          f"{['N' if d is None else d for d in shape]}")
        half = item.get("dtype") in ("float16", "bfloat16")  # fed as float32, cast by the runner
        want = np.dtype("float32" if half else item["dtype"]) if item.get("dtype") else None
        if want is not None and array.dtype != want:
            if array.dtype.kind != want.kind and not (array.dtype.kind in "iu" and
                                                      want.kind in "iu"):
                raise X2Error(f"--inputs-file {path}: input '{item['name']}' is "
                              f"{array.dtype}, the model expects {want}")
            array = array.astype(want)
        result.append(np.ascontiguousarray(array))
    return result


def _load(path: Path) -> list[np.ndarray]:
    with np.load(path) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


def check(model: str, converted: str, *, source: str = "tf", target: str = "paddle",
          signature: str | None = None, rtol: float | None = None, atol: float | None = None,
          seed: int = 0, batch: int = 2, inputs: list[np.ndarray] | None = None,
          inputs_file: str | None = None, batches: int = 1,
          tolerances: dict[str, tuple[float, float | None]] | None = None,
          device: str = "cpu", source_device: str | None = None,
          target_device: str | None = None, soft_placement: bool = False,
          precision: str | None = None, bisect: bool = False,
          allow_input_independent: bool = False, serving: bool = False,
          dim_sizes: dict[str, list[int]] | None = None,
          timeout: float | None = RUNNER_TIMEOUT) -> dict:
    """Run source and converted model on the same inputs and compare outputs.
    `serving` also runs the target's serving runtime (SERVING_RUNS).

    A model with dynamic dims is run at several shapes (x2/check/shapes.py):
    `batches` seeded batches at the example sizes, then one batch at each
    other size set; `dim_sizes` (--dim) chooses a symbol's sizes.

    Returns a JSON-able report; "passed" is the verdict over every batch,
    runner and output. `rtol`/`atol` default to the precision's tolerances
    (PRECISION_TOLERANCES); `tolerances` overrides them per output name.

    A float output of the source that does not change with its input by more
    than the tolerance fails (unless `allow_input_independent`): a converted
    model that ignored its input would match it, so parity would prove
    nothing (e.g. a deep net with random BatchNorm statistics). Batch items,
    batches and, when those are too few, one more source run on other
    inputs are compared.

    The source and each runner run in worker processes, one per framework
    for the whole check; a runner that crashes or runs past `timeout`
    seconds fails (report "runner_errors") and the others still run, in a
    fresh worker where that one died."""
    if source not in SOURCE_RUNS:
        raise X2Error(f"--from {source}: parity is not supported for this source yet")
    if target not in TARGET_RUNS:
        raise X2Error(f"--to {target}: parity is not supported for this target yet")
    # The converted model's inputs and weights drive the rest.
    report = Report.load(converted)
    written = (report.target_details.get("precision") or {}).get("precision", "fp32")
    if precision is None:
        precision = written
    elif written != "fp32" and precision != written:
        raise X2Error(f"--precision {precision}: {converted} was converted with --precision "
                      f"{written} and runs as written; --precision emulates reduced precision "
                      f"for fp32 conversions only (leave it out)")
    if precision not in PRECISION_TOLERANCES:
        raise X2Error(f"--precision {precision}: choose fp32, fp16 or bf16")
    if batches < 1:
        raise X2Error(f"--batches {batches}: must be at least 1")
    if (inputs is not None or inputs_file) and batches > 1:
        raise X2Error("--batches runs several seeded random batches; it cannot be combined "
                      "with --inputs-file (put several samples along the batch axis instead)")
    # The converted model's interface (names, shapes after --input-shape) drives the inputs.
    spec = {"inputs": report.inputs, "outputs": [o["name"] for o in report.outputs]}
    tolerances = dict(tolerances or {})
    unknown = [n for n in tolerances if n not in spec["outputs"]]
    if unknown:
        raise X2Error(f"--tol {unknown[0]}: not an output; outputs are "
                      f"{', '.join(spec['outputs'])}")
    default_rtol, default_atol = PRECISION_TOLERANCES[precision]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    signature = signature or report.source.get("signature")
    if inputs_file:
        inputs = load_inputs_file(inputs_file, spec["inputs"])

    warnings: list[str] = []
    src_dev = parse_device(source_device, "--source-device") or parse_device(device)
    tgt_dev = parse_device(target_device, "--target-device") or parse_device(device)
    src_dev = resolve_device(src_dev, FRAMEWORK[source], soft_placement, "source", warnings)
    tgt_dev = resolve_device(tgt_dev, FRAMEWORK[target], soft_placement, "converted model",
                             warnings)
    if src_dev != "cpu" and source in ("onnx", "torch"):
        warnings.append(f"the {source} source runs through its frontend's CPU runner; "
                        f"{src_dev} is visible to it but not used")
    notes: list[str] = []
    io = report.layout.get("io_transposes", {})
    names = [i["name"] for i in spec["inputs"]]
    results: list[OutputParity] = []
    batch_info = []
    bisect_result = None
    arrays_by_batch: list[list[np.ndarray]] = []
    failed: dict[str, str] = {}
    sets = size_sets(spec, report.dim_examples, batch,   # --dim, else the reader's
                     {**(report.source.get("dim_sizes") or {}), **(dim_sizes or {})})
    runs = [sets[0]] * batches + sets[1:] if inputs is None else [None]
    tmp_path = make_dir("x2-check-")
    with one_job():   # one warm worker per framework for the source and each runner
        try:
            for b, sizes in enumerate(runs):
                arrays = inputs if inputs is not None else make_inputs(spec, seed + b, sizes)
                batch_info.append({"seed": None if inputs is not None else seed + b,
                                   "input_shapes": [list(a.shape) for a in arrays],
                                   "dims": sizes or {}})
                arrays_by_batch.append(arrays)
            refs_by_batch, got_by_batch = _run_batches(
                tmp_path, model, converted, source, target, report, signature, names, spec, io,
                arrays_by_batch, src_dev, tgt_dev, precision, notes, serving, timeout, failed)
            exact_by_batch: dict[int, list | None] = {}

            def exact(b: int) -> list | None:
                """The converted model in float64 on batch b (the second opinion)."""
                if b not in exact_by_batch:
                    folder = save_batches(tmp_path / f"float64_{b}", [arrays_by_batch[b]],
                                          names, io)[0]
                    exact_by_batch[b] = float64_outputs(target, folder, converted, report,
                                                        tgt_dev, timeout)
                return exact_by_batch[b]
            for b, (refs, got_all) in enumerate(zip(refs_by_batch, got_by_batch)):
                for runner, got in got_all:
                    for i, (name, ref, out) in enumerate(zip(spec["outputs"], refs, got)):
                        o_rtol, o_atol = tolerances.get(name, (rtol, None))
                        o_atol = atol if o_atol is None else o_atol
                        max_abs, max_rel, scale, constant, ok = compare(ref, out, o_rtol, o_atol)
                        rounding = None
                        if not ok and precision == "fp32" and max_rel <= NOISE_CAP:
                            rounding = rounding_only(ref, out, exact(b), i, o_rtol, o_atol)
                            ok = bool(rounding and rounding["rounding"])
                        row = OutputParity(runner, name, max_abs, max_rel, scale, constant, ok)
                        results.append(dict(row.to_json(), batch=b, seed=batch_info[b]["seed"],
                                            rtol=o_rtol, atol=o_atol,
                                            **({"vs_float64": rounding} if rounding else {}),
                                            **_up_to_ties(report, spec["outputs"], name, refs,
                                                          out)))
                        if ok and rounding:
                            notes.append(
                                f"{runner} output '{name}' (batch {b}) differs from the source "
                                f"beyond the tolerance by float32 rounding only: the "
                                f"{FLOAT64_RUNS[target][2]} is "
                                f"{rounding['source_vs_float64']:.3g} from "
                                f"the source and {rounding['target_vs_float64']:.3g} from "
                                f"{runner}")
                if bisect and bisect_result is None and not all(r["passed"] for r in results
                                                                if r["batch"] == b):
                    from .bisect import bisect as run_bisect
                    bisect_result = run_bisect(tmp_path / f"bisect{b}", model, converted, source,
                                               target, report, signature, names, io,
                                               arrays_by_batch[b], src_dev, tgt_dev, precision,
                                               rtol, atol)
                    bisect_result["batch"] = b
            independent = _input_independent(tmp_path, model, source, report, signature, names,
                                             spec, io, src_dev, refs_by_batch, arrays_by_batch,
                                             tolerances, rtol, atol, seed)
        finally:
            shutil.rmtree(tmp_path, ignore_errors=True)
    message = None
    if independent:
        listed = ", ".join(f"'{n}' (changes by at most {d:.3g} across inputs, tolerance "
                           f"{t:.3g})" for n, d, t in independent)
        hint = "" if allow_input_independent else (
            " (--allow-input-independent reports this as a warning)")
        message = (f"the source model's output {listed} is the same for different inputs, so "
                   f"parity would prove nothing: a converted model that ignores its input "
                   f"would pass. Give the model weights (and BatchNorm statistics) that "
                   f"respond to data, or real inputs with --inputs-file{hint}")
        empty = [n for n, _, _ in independent
                 if all(refs[spec["outputs"].index(n)].size == 0 for refs in refs_by_batch)]
        if empty and len(empty) == len(independent):
            message = (f"the source model's output {', '.join(repr(n) for n in empty)} is "
                       f"empty at every size checked, so parity would prove nothing: give "
                       f"sizes at which it computes something with --dim NAME=S1,S2,S3 (audio "
                       f"shorter than one frame, say){hint}")
        names_flagged = {n for n, _, _ in independent}
        for row in results:
            if row["name"] in names_flagged:
                row["input_independent"] = True
                if not allow_input_independent:
                    row["passed"] = False
        if allow_input_independent:
            warnings.append(message)
    passed = all(r["passed"] for r in results) and not failed
    if bisect and passed:
        bisect_result = {"ran": False, "why": "every output matched; nothing to bisect"}
    return {"passed": passed, "rtol": rtol, "atol": atol, "seed": seed, "batch": batch,
            "input_shapes": batch_info[0]["input_shapes"], "batches": batch_info,
            # each shape checked: the size of every dynamic dim, and the input shapes
            "shapes_checked": _distinct_shapes(batch_info),
            "inputs": "file " + str(inputs_file) if inputs_file else (
                "given" if inputs is not None else "seeded random"),
            "precision": precision,
            "tolerance_note": (f"{precision}: rtol {rtol:g}, atol {atol:g} "
                               f"(defaults for {precision}: rtol {default_rtol:g}, "
                               f"atol {default_atol:g}); error measured against the "
                               f"source in float32"),
            "tolerances": {k: {"rtol": v[0], "atol": atol if v[1] is None else v[1]}
                           for k, v in tolerances.items()},
            "devices": {"source": src_dev, "target": tgt_dev}, "warnings": warnings,
            "notes": sorted(set(notes)), "bisect": bisect_result,
            "input_independent": None if allow_input_independent else message,
            "runner_errors": failed, "outputs": results}


def _up_to_ties(report, outputs: list[str], name: str, refs: list[np.ndarray],
                got: np.ndarray) -> dict:
    """For an index output (report.json outputs[i]["indices_of"]): its
    judgement up to ties (compare.compare_indices), which replaces the plain
    one: "passed", how it was compared and how many indices are wrong."""
    how = next((o.get("indices_of") for o in report.outputs if o["name"] == name), None)
    ref = refs[outputs.index(name)]
    if not how or ref.dtype.kind not in "biu" or got.dtype.kind not in "biu":
        return {}
    values = how.get("values")
    wrong = compare_indices(ref, got, how, refs[outputs.index(values)]
                            if values in outputs else None)
    return {"passed": wrong == 0, "compared": tie_rule(how), "wrong_indices": wrong}


def _distinct_shapes(batch_info: list[dict]) -> list[dict]:
    seen = {}
    for info in batch_info:
        key = repr(info["input_shapes"])
        seen.setdefault(key, {"dims": info.get("dims") or {},
                              "input_shapes": info["input_shapes"]})
    return list(seen.values())


def _input_independent(work, model, source, report, signature, names, spec, io, src_dev,
                       refs_by_batch, arrays_by_batch, tolerances, rtol, atol, seed
                       ) -> list[tuple[str, float, float]]:
    """(output, spread, tolerance) for each float output whose spread across
    inputs is within its tolerance."""
    if not names or not refs_by_batch:
        return []
    outputs = spec["outputs"]
    samples = [_samples_by_input(refs_by_batch, arrays_by_batch, i) for i in range(len(outputs))]
    if any(input_spread(s) is None for s in samples):
        # One batch of one item: run the source once more on other inputs.
        probe = inputs_like(arrays_by_batch[0], spec, seed + 7919)
        probe_dir = work / "input_probe"
        probe_dir.mkdir()
        np.savez(probe_dir / "source_inputs.npz", *source_inputs(probe, names, io))
        extra = _run_source([probe_dir], model, source, report, signature, names, outputs,
                            io, src_dev)[0]
        samples = [s + [extra[i]] if input_spread(s) is None else s
                   for i, s in enumerate(samples)]
    flagged = []
    for i, name in enumerate(outputs):
        first = refs_by_batch[0][i]
        spread = input_spread(samples[i])
        if first.dtype.kind != "f" or spread is None:
            continue
        o_rtol, o_atol = tolerances.get(name, (rtol, None))
        o_atol = atol if o_atol is None else o_atol
        scale = max(float(np.max(np.abs(r[i]))) if r[i].size else 0.0 for r in refs_by_batch)
        tol = o_atol + o_rtol * scale
        if spread <= tol:
            flagged.append((name, spread, tol))
    return flagged


def _run_source(dirs: list[Path], model, source, report, signature, names, outputs, io,
                src_dev, timeout: float | None = None) -> list[list[np.ndarray]]:
    """The source's outputs on each dir's source_inputs.npz (one worker for
    all), in the converted model's layout."""
    request = ReadRequest(model, signature=signature,
                          options=ReadOptions.from_json(report.source.get("options") or {}))
    run_step(SOURCE_RUNS[source], {"request": request.to_json(), "names": names,
                                   "source": report.source, "device": src_dev,
                                   "inputs": [str(d / "source_inputs.npz") for d in dirs],
                                   "outputs": [str(d / "ref.npz") for d in dirs]},
             timeout=timeout)
    return [[np.transpose(r, io[n]["perm"]) if io.get(n, {}).get("role") == "output" else r
             for n, r in zip(outputs, _load(d / "ref.npz"))] for d in dirs]


def save_batches(work: Path, batches, names, io) -> list[Path]:
    """One folder per batch with its inputs as the converted model and as the
    source take them."""
    dirs = []
    for b, arrays in enumerate(batches):
        dirs.append(work / f"b{b}")
        dirs[-1].mkdir(parents=True)
        np.savez(dirs[-1] / "inputs.npz", *arrays)
        np.savez(dirs[-1] / "source_inputs.npz", *source_inputs(arrays, names, io))
    return dirs


def target_runs(target: str, report, serving: bool, notes: list[str]) -> list[tuple[str, str]]:
    """(task, mode) of each runner of the converted model that can run it."""
    runs = []
    for task, mode in TARGET_RUNS[target] + (SERVING_RUNS.get(target, []) if serving else []):
        if mode in ("jit.load", "inference") and not any(f.startswith("inference/")
                                                          for f in report.files):
            why = (report.target_details.get("precision") or {}).get("inference", "")
            notes.append(f"{target} ({mode}) not run: {why or 'no inference/ was written'}")
            continue
        runs.append((task, mode))
    return runs


def run_target(task: str, mode: str, dirs: list[Path], converted, target, report, tgt_dev,
               precision, expected: int, timeout: float | None = None
               ) -> tuple[list[list[np.ndarray]], list[str]]:
    """One runner of the converted model on every batch, in its own worker:
    (outputs per batch, notes). A crash, a hang past `timeout` or a wrong
    output count is an X2Error naming the runner."""
    name = mode if precision != "fp64" else f"{mode}-fp64"
    result = run_step(task, {"out": converted, "mode": mode, "device": tgt_dev,
                             "inputs": [str(d / "inputs.npz") for d in dirs],
                             "outputs": [str(d / f"{name}.npz") for d in dirs],
                             **precision_args(report, precision)}, timeout=timeout)
    got_by_batch = [_load(d / f"{name}.npz") for d in dirs]
    for got in got_by_batch:
        if len(got) != expected:
            raise X2Error(f"{target} ({mode}) returned {len(got)} outputs, the source "
                          f"{expected}")
    return got_by_batch, result.get("notes", [])


def _run_batches(work: Path, model, converted, source, target, report, signature, names, spec,
                 io, batches, src_dev, tgt_dev, precision, notes, serving=False,
                 timeout: float | None = None, failed: dict | None = None):
    """(source outputs, [(runner, outputs)]) per batch: the source and each
    runner of the converted model run every batch in one worker. A runner
    that crashes, hangs past `timeout` or errs is recorded in `failed`
    (runner -> message) and the others still run."""
    dirs = save_batches(work, batches, names, io)
    refs = _run_source(dirs, model, source, report, signature, names, spec["outputs"], io,
                       src_dev, timeout)
    got_by_batch: list[list] = [[] for _ in dirs]
    for task, mode in target_runs(target, report, serving, notes):
        try:
            got_all, runner_notes = run_target(task, mode, dirs, converted, target, report,
                                               tgt_dev, precision, len(refs[0]), timeout)
        except X2Error as exc:
            if failed is None:
                raise
            failed[f"{target}:{mode}"] = str(exc)
            continue
        notes.extend(runner_notes)
        for b, got in enumerate(got_all):
            got_by_batch[b].append((f"{target}:{mode}", got))
    return refs, got_by_batch


def float64_outputs(target: str, folder: Path, converted, report, device, timeout
                    ) -> list | None:
    """The written model run in float64 on one input folder (FLOAT64_RUNS),
    or None where it has no float64 run or fails in it."""
    if target not in FLOAT64_RUNS:
        return None
    task, mode, _ = FLOAT64_RUNS[target]
    try:
        got, _ = run_target(task, mode, [folder], str(converted), target, report, device,
                            "fp64", len(report.outputs), timeout)
    except X2Error:
        return None
    return got[0]
