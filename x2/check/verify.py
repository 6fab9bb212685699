"""Convert's verify: before x2 publishes a model, the source framework judges it.

The written model (still in staging) and the source run in worker processes
of their own on the same seeded inputs, and every runner of the target must
agree with the source by `x2 check`'s rule: paddle's model.py, `jit.load`
and Paddle Inference with its default config; onnxruntime; torch eager.
A runner that crashes, or runs past its timeout, fails the verify; so does
an output off by more than its tolerance. Either way nothing is written and
the error says which runner, which output, at which sizes, and, where it can
be found, the first IR op and source node that differ (`x2 check --bisect`
for TensorFlow SavedModels, else the numpy reference kernels).

The inputs look like real ones (x2/check/parity.py make_inputs): token ids
with 0, the last id and the model's special ids, attention masks padded left
and right, every dynamic dim at its example size and at 1. A model over
LARGE_WEIGHTS runs one short input and one runner at a time.

The tolerance is `x2 check`'s for the precision, widened by the source's
own float32 noise: how far its outputs move when its float inputs move by
one ulp (NOISE_FACTOR times that, at most NOISE_CAP of the output's scale).
A well-conditioned model keeps the plain tolerance; an ill-conditioned one
(random BatchNorm statistics through 80 layers) is not refused for the
rounding noise any two correct float32 implementations show.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

from ..contracts import Report
from ..errors import ConversionError, HostCannotRun, SourceRunError, X2Error
from ..ir.symbols import BATCH
from ..process.isolation import run_step
from .compare import NOISE_CAP, NOISE_FACTOR, compare, compare_indices, rounding_only, tie_rule
from .parity import (FLOAT64_RUNS, PRECISION_TOLERANCES, _run_source, _samples_by_input,
                     float64_outputs, input_spread, inputs_like, make_inputs, run_target,
                     save_batches, target_runs)
from .shapes import DEFAULT_SIZE, known_dims, symbols

SEED = 0
# Above this much weight the source and each runner run one at a time on a
# short input (batch 1, LARGE_SEQ for every other dynamic dim).
LARGE_WEIGHTS = 512 << 20
LARGE_SEQ = 8
# An image's height and width where the source gives no example size: the
# scale a vision model's downsampling needs (16 leaves nothing to pool).
IMAGE_SIZE = 96
# Outputs above this size skip the two extra source runs (noise, input
# dependence) and are compared chunk by chunk.
PROBE_OUTPUT_BYTES = 256 << 20
CHUNK = 1 << 22
# The device each runner is given: None, each framework's default (the CPU
# here), so that verify's steps share the warm workers of the conversion
# (a device asked for explicitly starts workers configured for it).
DEVICE = None
# Seconds each runner (the source's, each of the converted model's) may take
# for all its inputs before it counts as hung (x2 convert --verify-timeout).
DEFAULT_TIMEOUT = 600.0


def verify_sizes(spec: dict, examples: dict[str, int], large: bool,
                 given: dict[str, list[int]] | None = None) -> list[dict[str, int]]:
    """{symbol: size} per shape: every symbol at its example size (the batch
    at 2: a right- and a left-padded row), then all at 1; `given` (--dim
    NAME=S1,S2, for dims that must agree, as a cache's total = past + seq)
    sets a symbol's first and second sizes."""
    names = symbols(spec)
    given = known_dims(names, given)
    if not names:
        return [{}]
    images = _image_dims(spec)
    first = {n: 2 if n == BATCH else examples.get(n) or (
        IMAGE_SIZE if n in images else DEFAULT_SIZE) for n in names}
    if large:
        first = {n: 1 if n == BATCH else min(size, LARGE_SEQ) for n, size in first.items()}
    # An image's height and width stay at their example size: a 1x1 picture
    # is no input a vision model is run on (pooling refuses it).
    second = {n: first[n] if n in images else 1 for n in names}
    for name, sizes in given.items():
        first[name], second[name] = sizes[0], sizes[min(1, len(sizes) - 1)]
    return [first, second] if first != second else [first]


def _as_declared(spec: dict, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """float16 inputs as float16 (make_inputs gives them as float32 values
    rounded to it, the form x2 check feeds a model converted to half)."""
    return [a.astype(np.float16) if item.get("dtype") == "float16" else a
            for item, a in zip(spec["inputs"], arrays)]


def _image_dims(spec: dict) -> set[str]:
    """Symbols of the spatial axes of image inputs (float, rank 4 and up)."""
    found = set()
    for item in spec["inputs"]:
        dims = item.get("dims") or []
        if len(dims) >= 4 and str(item.get("dtype", "")).startswith(("float", "bfloat")):
            found.update(d for d in dims[1:] if d)
    return found


def ulp_nudged(arrays: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """The float inputs moved by one ulp each, up or down at random."""
    rng = np.random.default_rng(seed)
    nudged = []
    for a in arrays:
        if a.dtype.kind == "f" and a.size:
            toward = np.where(rng.random(a.shape) < 0.5, np.inf, -np.inf).astype(a.dtype)
            a = np.nextafter(a, toward).astype(a.dtype)
        nudged.append(a)
    return nudged


def _weights_bytes(staging: Path) -> int:
    return sum(p.stat().st_size for p in staging.rglob("*")
               if p.is_file() and p.suffix in (".pdparams", ".pdiparams", ".pt", ".onnx",
                                               ".data"))


def verify(model: str, staging: Path, work: Path, *, source: str, target: str,
           ir_dir: Path | None = None, timeout: float | None = DEFAULT_TIMEOUT,
           dims: dict[str, list[int]] | None = None, progress=None) -> dict:
    """Judge the model written in `staging` by its source; return the record
    for report.json, or raise ConversionError (a mismatch, a runner that
    failed) or X2Error (the source itself could not be run)."""
    start = time.perf_counter()
    report = Report.load(staging)
    precision = (report.target_details.get("precision") or {}).get("precision", "fp32")
    rtol, atol = PRECISION_TOLERANCES[precision]
    spec = {"inputs": report.inputs, "outputs": [o["name"] for o in report.outputs]}
    names = [i["name"] for i in spec["inputs"]]
    io = report.layout.get("io_transposes", {})
    large = _weights_bytes(staging) > LARGE_WEIGHTS
    # --dim, else the sizes the reader says a dim takes (a cache's dims together,
    # a dim the model's code bounds within its bound)
    sizes = verify_sizes(spec, report.dim_examples, large,
                         {**(report.source.get("dim_sizes") or {}), **(dims or {})})
    batches = [make_inputs(spec, SEED + i, s, edge_ids=True) for i, s in enumerate(sizes)]
    if precision == "fp32":   # a float16 source model takes float16 (not a lowered interface)
        batches = [_as_declared(spec, arrays) for arrays in batches]
    if progress:
        progress("verify against the source", "start")
    notes: list[str] = []
    run_source = _source_runner(model, source, report, names, spec["outputs"], io, timeout)
    # Only the source runs the probes: the ulp-nudged first batch (its noise)
    # and other inputs at the first shape (whether its output depends on
    # them). Usually one source run takes every set; a source that rejects
    # one of them is run set by set.
    probes = _probes(batches[0], spec)
    refs, probe_refs, dirs = None, None, None
    source_start = time.perf_counter()
    try:
        # (a large model too: its sets are short, and each source run loads it again)
        sets = save_batches(work / "source", batches + probes, names, io)
        everything = run_source(sets)
        refs, probe_refs = everything[:len(batches)], everything[len(batches):]
        dirs = sets   # the runners read the same folders
    except X2Error:
        pass   # run again set by set, which says which set the source rejects
    if refs is None:
        fixed = set(dims or {}) | set(report.source.get("dim_sizes") or {})
        try:
            batches, sizes, refs = _runnable(run_source, work / "source_sets", spec, io,
                                             batches, sizes, notes, precision == "fp32",
                                             fixed)
        except SourceRunError:
            raise
        except X2Error as exc:   # the source framework cannot load it, or crashed
            raise SourceRunError(f"verify could not run the source model: {exc} (convert "
                                 f"with --no-verify to write the model unverified)") from exc
        probes = _probes(batches[0], spec)
    if all(r.size == 0 for r in refs[0]) and refs[0]:
        # Nothing to compare (audio shorter than one frame): larger sizes.
        fixed = set(dims or {}) | set(report.source.get("dim_sizes") or {})
        grown = _sizes_with_output(run_source, work / "grown", spec, io, sizes[0], fixed)
        shutil.rmtree(work / "grown", ignore_errors=True)
        if grown is None:   # (a slice its inputs make empty): shapes compared only
            notes.append("the source's outputs are empty at the sizes verified, larger sizes "
                         "included where a dim could grow: verify compared their shapes "
                         "only; x2 check --dim NAME=S1,S2 checks other sizes")
        else:
            return verify(model, staging, work / "at_grown_sizes", source=source,
                          target=target, ir_dir=ir_dir, timeout=timeout, progress=progress,
                          dims={**(dims or {}), **{name: [size, sizes[-1].get(name, size)]
                                                   for name, size in grown.items()
                                                   if name not in (dims or {})}})
    runs = target_runs(target, report, True, notes)
    if target == "paddle" and report.layout.get("inside") == "nhwc":
        runs = [r for r in runs if r[1] != "inference"]
        notes.append("paddle (inference) not run: --layout nhwc, whose convolutions Paddle "
                     "Inference's oneDNN runs wrong on CPU")
    if dirs is None:
        dirs = save_batches(work, batches + probes, names, io)

    def run_probes():
        nonlocal probe_refs
        if probe_refs is not None:
            return
        probe_refs = []
        if sum(r.nbytes for r in refs[0]) > PROBE_OUTPUT_BYTES:
            notes.append("the source's noise and input dependence not measured: its outputs "
                         "are too large to run it twice more")
            return
        try:
            probe_refs = run_source(dirs[len(batches):])
        except SourceRunError as exc:
            notes.append(f"the source's noise and input dependence not measured: {exc}")

    # where the verify's time goes: the source, each runner, a float64 run
    seconds = {}

    def run_one(task_mode):
        task, mode = task_mode
        started = time.perf_counter()
        try:
            got, more = run_target(task, mode, dirs[:len(batches)], str(staging), target,
                                   report, DEVICE, precision, len(spec["outputs"]), timeout)
            return mode, got, more, None
        except X2Error as exc:
            return mode, None, [], exc
        finally:
            seconds[f"{target}:{mode}"] = round(time.perf_counter() - started, 3)

    # One at a time: a conversion's steps of one framework share its warm
    # worker (isolation.one_job), and a large model's source and
    # target must not hold their weights at once.
    run_probes()
    seconds[f"{source} (source)"] = round(time.perf_counter() - source_start, 3)
    results = [run_one(r) for r in runs]
    outputs = spec["outputs"]
    noise = [_spread(refs[0][i], probe_refs[0][i]) if probe_refs else 0.0
             for i in range(len(outputs))]
    record = {"verified": True, "against": f"{source} (the source model, run by its "
              f"framework)", "runners": [], "shapes": [], "max_rel": {}, "noise": {},
              "tolerance": {"rtol": rtol, "atol": atol, "noise_factor": NOISE_FACTOR,
                            "noise_cap": NOISE_CAP}}
    for b, arrays in enumerate(batches):
        record["shapes"].append({"dims": sizes[b], "input_shapes": [list(a.shape)
                                                                    for a in arrays]})
    for i, name in enumerate(outputs):
        record["noise"][name] = noise[i]
    # Index outputs (topk, sort, argmax) are compared up to ties: say how.
    indices_of = [o.get("indices_of") for o in report.outputs]
    notes.extend(f"output '{name}': {tie_rule(how)}" for name, how in zip(outputs, indices_of)
                 if how)
    unrunnable = []
    exact_by_batch: dict[int, list | None] = {}

    def exact(b: int) -> list | None:
        """The written model run in float64 on batch b (None where it cannot
        run so): what the converted math gives without fp32 rounding."""
        if b not in exact_by_batch:
            started = time.perf_counter()
            exact_by_batch[b] = float64_outputs(target, dirs[b], staging, report, DEVICE,
                                                timeout)
            step = f"{target} in float64"
            seconds[step] = round(seconds.get(step, 0.0) + time.perf_counter() - started, 3)
        return exact_by_batch[b]
    for mode, got_by_batch, more, error in results:
        runner = f"{target}:{mode}"
        if isinstance(error, HostCannotRun):
            unrunnable.append(f"{runner}: {error}")
            continue
        if error is not None:
            raise ConversionError(
                f"the written {target} model fails in {runner}: {error}; x2 refuses to write "
                f"it{_range_hint(spec)}{_sizes_hint(sizes)} (convert with --no-verify to write "
                f"it anyway)",
                details={"runner": runner, "problem": str(error)})
        record["runners"].append(runner)
        notes.extend(n for n in more if n not in notes)
        worst: dict[str, float] = {}
        for b, got in enumerate(got_by_batch):
            for i, (name, ref, out) in enumerate(zip(outputs, refs[b], got)):
                problem, rel = _mismatch(ref, out, rtol, atol, noise[i], indices_of[i],
                                         _values_of(indices_of[i], outputs, refs[b]))
                worst[name] = max(worst.get(name, 0.0), rel)
                rounding = None
                if problem and precision == "fp32" and rel <= NOISE_CAP:
                    rounding = rounding_only(ref, out, exact(b), i, rtol, atol)
                    if rounding and rounding["rounding"]:
                        problem = None
                        record.setdefault("float64_opinion", []).append(
                            {"runner": runner, "output": name, "dims": sizes[b], **rounding})
                        notes.append(
                            f"{runner} output '{name}'{_where(sizes[b])} is {rel:.3g} from the "
                            f"source, float32 rounding: the {FLOAT64_RUNS[target][2]} is "
                            f"{rounding['source_vs_float64']:.3g} from the source and "
                            f"{rounding['target_vs_float64']:.3g} from {runner}")
                if problem:
                    where = _where(sizes[b])
                    culprit = _locate(model, staging, work, source, target, report, ir_dir,
                                      dirs[b], batches[b], timeout)
                    raise ConversionError(
                        f"the written {target} model does not compute what the {source} "
                        f"source computes: {runner} output '{name}'{where} {problem}"
                        f"{_float64_says(rounding, runner, target)}"
                        f"{f'; first divergence: {culprit}' if culprit else ''}; x2 refuses "
                        f"to write it (convert with --no-verify to write it anyway)",
                        details={"runner": runner, "output": name, "dims": sizes[b],
                                 "problem": problem, "culprit": culprit})
        record["max_rel"][runner] = worst
    notes.extend(f"not run on this machine: {why}" for why in unrunnable)
    if not record["runners"]:
        record = {"verified": False, "skipped": f"no runner of the written {target} model can "
                  f"run here: {'; '.join(unrunnable)}"}
    record["input_independent"] = _input_independent(refs + probe_refs[1:], batches, outputs,
                                                     rtol, atol) if probe_refs else []
    record["notes"] = notes
    record["seconds"] = round(time.perf_counter() - start, 3)
    record["seconds_by_step"] = seconds
    if progress:
        progress("verify against the source", "done", record["seconds"])
    return record


# Dims grown 4x per step, at most this many times (16 -> 16384).
GROWTH_STEPS = 5


def _grown(sizes: dict[str, int], fixed: set[str], steps: int) -> dict[str, int]:
    """`sizes` with every dim but the batch and `fixed` ones 4**steps times larger."""
    return {name: size if name == BATCH or name in fixed else size * 4 ** steps
            for name, size in sizes.items()}


def _sizes_with_output(run_source, work: Path, spec: dict, io: dict, sizes: dict[str, int],
                       fixed: set[str]) -> dict[str, int] | None:
    """The first sizes, grown step by step, at which the source's outputs are
    not all empty; None if they stay empty."""
    for step in range(1, GROWTH_STEPS + 1):
        grown = _grown(sizes, fixed, step)
        if grown == sizes:
            return None
        arrays = make_inputs(spec, SEED, grown, edge_ids=True)
        try:
            outputs = run_source(save_batches(work / str(step), [arrays],
                                              [i["name"] for i in spec["inputs"]], io))[0]
        except X2Error:
            return None
        if any(o.size for o in outputs):
            return grown
    return None


def _probes(first: list[np.ndarray], spec: dict) -> list[list[np.ndarray]]:
    """The first input set nudged by an ulp, and other inputs of its shapes."""
    return [ulp_nudged(first, SEED + 101), inputs_like(first, spec, SEED + 7919)]


def _source_runner(model, source, report, names, outputs, io, timeout):
    """A function running the source (one worker) on input folders."""
    def run(dirs: list[Path]) -> list[list[np.ndarray]]:
        return _run_source(dirs, model, source, report, report.source.get("signature"), names,
                           outputs, io, DEVICE, timeout)
    return run


def _runnable(run_source, work: Path, spec: dict, io: dict, batches, sizes, notes,
              declared: bool, fixed: set[str]):
    """(batches, sizes, source outputs) for the input sets the source itself
    takes. A model may reject a size (frames in pairs, a sequence longer
    than its position table, audio shorter than its padding, an image of
    another height than its recognizer's) or a planted id (an index past
    what its own code allows): those sets are left out and noted; with the
    example set rejected, plain random inputs at the example sizes stand in
    for it, then inputs at other sizes (_other_sizes; `fixed` dims keep
    theirs). A source that takes none of them is a SourceRunError."""
    names = [i["name"] for i in spec["inputs"]]
    try:
        return batches, sizes, run_source(save_batches(work, batches, names, io))
    except SourceRunError:
        pass
    # Stand-ins for the example set, in turn: plain random inputs; integers of
    # unknown range from 1 (a divisor, a count); from [0, 2), small enough to
    # index any axis of two (a scatter's indices); and every dim at 2, for a
    # dim the file leaves open that the model's own constants fix.
    twos = {n: 2 for n in sizes[0]}
    stand_ins = [(make_inputs(spec, SEED, sizes[0]), sizes[0]),
                 (make_inputs(spec, SEED, sizes[0], int_range=(1, 4)), sizes[0]),
                 (make_inputs(spec, SEED, sizes[0], int_range=(0, 2)), sizes[0]),
                 *[(make_inputs(spec, SEED, other, edge_ids=True), other)
                   for other in _other_sizes(sizes[0], spec, fixed)],
                 (make_inputs(spec, SEED, twos, int_range=(0, 2)), twos)]
    if declared:
        stand_ins = [(_as_declared(spec, arrays), size) for arrays, size in stand_ins]
    errors: list[SourceRunError] = []

    def source_outputs(k: int, arrays, size, what: str):
        try:
            return run_source(save_batches(work / f"alone{k}", [arrays], names, io))[0]
        except SourceRunError as exc:
            errors.append(exc)
            notes.append(f"the source itself rejects {what}{_where(size)}: {exc}")
            return None

    # The first set: the example set, else the first stand-in the source takes
    # (one whose outputs it leaves empty only as the last resort).
    first, empty = None, None
    for k, (arrays, size) in enumerate([(batches[0], sizes[0]), *stand_ins]):
        got = source_outputs(k, arrays, size,
                             "plain random inputs" if k else "the inputs verify made")
        if got is None:
            continue
        if k and got and all(o.size == 0 for o in got):
            empty = empty or (arrays, size, got)
            continue
        first = (arrays, size, got)
        break
    first = first or empty
    kept = [first] if first else []
    for b, (arrays, size) in enumerate(zip(batches[1:], sizes[1:]), start=1):
        # later sets take the sizes a stand-in found for the dims they share
        moved = {n: first[1][n] for n in size
                 if size[n] == sizes[0][n] != first[1][n]} if first else {}
        if moved:
            size = {**size, **moved}
            arrays = make_inputs(spec, SEED + b, size, edge_ids=True)
            if declared:
                arrays = _as_declared(spec, arrays)
        got = source_outputs(len(stand_ins) + b, arrays, size, "the inputs verify made")
        if got is not None:
            kept.append((arrays, size, got))
    if not kept:
        raise SourceRunError(f"verify could not run the source model on any input x2 made "
                             f"({errors[0]}); give dims that must agree sizes that do with "
                             f"--dim NAME=S1,S2 (a cache's total = past + seq), "
                             f"integer inputs their valid range with "
                             f"--input-range NAME:LOW,HIGH, or convert with --no-verify to "
                             f"write the model unverified and check it on real inputs with "
                             f"x2 check --inputs-file") from None
    return [k[0] for k in kept], [k[1] for k in kept], [k[2] for k in kept]


# Sizes an image's height and width are tried at, in turn, where the source
# rejects verify's (a text recognizer built for one height). 32 comes last:
# downsampled 16 times it leaves 2 rows, and a 3-row pooling window over 2
# rows is empty by ONNX's rule, one row in onnxruntime, an error in torch.
IMAGE_SIZES = (64, 48, 128, 224, 32)


def _other_sizes(sizes: dict[str, int], spec: dict, fixed: set[str]) -> list[dict[str, int]]:
    """Sizes to try where the source rejects the example ones: every dim
    that may grow (not the batch, not `fixed`, not an image's) 4, 16 and 64
    times larger, then images at IMAGE_SIZES."""
    images = _image_dims(spec) - fixed
    others = [_grown(sizes, fixed | images, step) for step in (1, 2, 3)]
    others += [{**sizes, **{name: size for name in images}} for size in IMAGE_SIZES]
    unique = []
    for other in others:
        if other != sizes and other not in unique:
            unique.append(other)
    return unique


def _float64_says(rounding: dict | None, runner: str, target: str) -> str:
    """What the written model run in float64 says of a refused difference."""
    if not rounding:
        return ""
    return (f" (not float32 rounding: the {FLOAT64_RUNS[target][2]} is "
            f"{rounding['source_vs_float64']:.3g} from the source and "
            f"{rounding['target_vs_float64']:.3g} from {runner}, relative)")


def _spread(a: np.ndarray, b: np.ndarray) -> float:
    if a.shape != b.shape or a.dtype.kind != "f" or not a.size:
        return 0.0
    finite = np.isfinite(a) & np.isfinite(b)
    diff = np.subtract(a, b, where=finite, out=np.zeros(a.shape, np.float64))
    return float(np.max(np.abs(diff), initial=0.0))


def _values_of(indices_of: dict | None, outputs: list[str], refs: list[np.ndarray]
               ) -> np.ndarray | None:
    """The source's values output that an index output's ties are read from."""
    values = (indices_of or {}).get("values")
    return refs[outputs.index(values)] if values in outputs else None


def _mismatch(ref: np.ndarray, got: np.ndarray, rtol: float, atol: float, noise: float,
              indices_of: dict | None = None, ref_values: np.ndarray | None = None
              ) -> tuple[str | None, float]:
    """(why `got` is not `ref`, or None; its error relative to the output's
    scale). An index output (`indices_of`) is compared up to ties."""
    if ref.shape != got.shape:
        return f"has shape {list(got.shape)}, the source's {list(ref.shape)}", float("inf")
    # Runners hand float outputs back as float32 (x2/check/runtime.py); every
    # other dtype must be the source's.
    if ref.dtype != got.dtype and not (ref.dtype.kind == "f" and got.dtype.kind == "f"):
        return f"has dtype {got.dtype}, the source's {ref.dtype}", float("inf")
    if ref.dtype.kind in "biu" and got.dtype.kind in "biu":
        bad = (compare_indices(ref, got, indices_of, ref_values) if indices_of
               else int(np.sum(ref != got)))
        what = "values other than the source's" + (
            f" (even up to ties: {tie_rule(indices_of)})" if indices_of else "")
        return f"has {bad} of {ref.size} {what}" if bad else None, float(bad > 0)
    max_abs, scale = _chunked_error(ref, got)
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    allowed = atol + rtol * scale + min(NOISE_FACTOR * noise, NOISE_CAP * scale)
    if max_abs == float("inf"):
        return "has NaN or infinity where the source does not (or the reverse)", max_rel
    if max_abs > allowed:
        return (f"is off by up to {max_abs:.3g} against values up to {scale:.3g} "
                f"(relative {max_rel:.3g}; tolerance {allowed:.3g})"), max_rel
    return None, max_rel


def _chunked_error(ref: np.ndarray, got: np.ndarray) -> tuple[float, float]:
    """(max|got - ref| over the finite values, inf where NaN and inf differ;
    max|ref|), `x2 check`'s measure (compare.py), a chunk at a time so that
    a 2 GiB output needs no float64 copies of itself."""
    ref_flat, got_flat = ref.reshape(-1), got.reshape(-1)
    max_abs = scale = 0.0
    for start in range(0, ref_flat.size, CHUNK):
        part = slice(start, start + CHUNK)
        error, _, part_scale, _, _ = compare(ref_flat[part], got_flat[part], 0.0, 0.0)
        max_abs, scale = max(max_abs, error), max(scale, part_scale)
    return max_abs, scale


def _range_hint(spec: dict) -> str:
    """A hint where verify fed integers it knew no range for (it draws them
    from [0, 10)): a model may take only some values (lengths, indices)."""
    unknown = [i["name"] for i in spec["inputs"] if str(i.get("dtype", "")).startswith(
        ("int", "uint")) and not i.get("range")]
    if not unknown:
        return ""
    return (f"; verify fed {', '.join(repr(n) for n in unknown)} integers from [0, 10): if "
            f"the model takes only some values there, give them with --input-range "
            f"NAME:LOW,HIGH")


def _sizes_hint(sizes: list[dict]) -> str:
    """Which sizes of the dynamic dims the runner was fed."""
    if not any(sizes):
        return ""
    tried = "; ".join(", ".join(f"{k}={v}" for k, v in each.items()) for each in sizes)
    return (f"; verify ran it at {tried}: if the model is meant for other sizes, give them "
            f"with --dim NAME=S1,S2")


def _where(sizes: dict) -> str:
    return f" (at {', '.join(f'{k}={v}' for k, v in sizes.items())})" if sizes else ""


def _input_independent(refs, batches, outputs, rtol, atol) -> list[str]:
    """Float outputs the source gives alike for every input it was fed:
    parity on them proves little (report.json says so; x2 convert warns)."""
    flagged = []
    samples_from = refs[:len(batches)] + [refs[-1]]
    for i, name in enumerate(outputs):
        samples = _samples_by_input(samples_from, batches + [batches[0]], i)
        spread = input_spread(samples)
        first = refs[0][i]
        if first.dtype.kind != "f" or spread is None or not first.size:
            continue
        scale = float(np.max(np.abs(first), where=np.isfinite(first), initial=0.0))
        if spread <= atol + rtol * scale:
            flagged.append(name)
    return flagged


def _locate(model, staging, work, source, target, report, ir_dir, folder, arrays, timeout
            ) -> str | None:
    """The first IR op that diverges, by the source's own intermediates where
    x2 can fetch them (TF SavedModels), else by the numpy reference."""
    try:
        if source == "tf" and report.source.get("format") in (None, "savedmodel"):
            from .bisect import bisect
            names = [i["name"] for i in report.inputs]
            found = bisect(work / "bisect", model, str(staging), source, target, report,
                           report.source.get("signature"), names,
                           report.layout.get("io_transposes", {}), arrays, "cpu", "cpu",
                           "fp32", *PRECISION_TOLERANCES["fp32"])
            first = found.get("first_divergence")
            if first:
                return (f"IR op '{first['ir_op']}' giving '{first['var']}' (from "
                        f"{first.get('source_op')} '{first.get('source_name')}'), relative "
                        f"error {first['max_rel']:.3g}")
        if target in ("paddle", "torch") and ir_dir is not None:
            found = run_step(f"{target}.locate", {"ir": str(ir_dir), "out": str(staging),
                                                  "inputs": str(folder / "inputs.npz")},
                             timeout=timeout)
            return found.get("culprit")
    except X2Error:
        return None   # naming the place is a courtesy; the refusal stands without it
    finally:
        shutil.rmtree(work / "bisect", ignore_errors=True)
    return None
