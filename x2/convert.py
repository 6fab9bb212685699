"""The conversion pipeline: frontend worker -> IR passes -> emitter worker,
written atomically into the output directory.

This module imports no framework; `convert` is safe to call from a process
that has already imported TensorFlow, paddle or torch in any order."""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from .contracts import (EmitOptions, EmitRequest, ReadOptions, ReadRequest, ReadResult, Report,
                        x2_version)
from .errors import InternalError, X2Error
from .check.input_ranges import infer_index_ranges, infer_special_ids
from .check.verify import (DEFAULT_TIMEOUT as VERIFY_TIMEOUT, LARGE_WEIGHTS,
                           verify as verify_written)
from .ir import load_graph, save_graph
from .ir.serialize import release_constants
from .ir.symbols import value_dims
from .process.isolation import one_job, run_step, start_warm
from .passes import PURPOSES, pipeline_for, run_pipeline
from .passes.layout_modes import explain_transposes
from .passes.precision import PRECISIONS, choose_precision, lower_precision
from .process.scratch import make_dir

# --from NAME -> worker task that reads the model into IR (x2/process/worker.py).
FRONTENDS = {"tf": "tf.read", "onnx": "onnx.read", "torch": "torch.read"}
# --to NAME -> worker task that writes the IR as a model of that framework.
EMITTERS = {"paddle": "paddle.emit", "onnx": "onnx.emit", "torch": "torch.emit"}
REPORT = "report.json"
# Written last into every output: what x2 wrote there, so that a later run
# replaces only a folder made of exactly those files.
MARKER = ".x2-output.json"


def _noop(step: str, state: str, seconds: float | None = None) -> None:
    pass


def prepare_output(out: Path, model: str) -> None:
    """Refuse an --out that x2 may not write: one holding anything x2 did not
    write itself (by its marker), one that is or holds the source model, or
    one inside it."""
    if out.is_symlink():
        raise X2Error(f"--out {out}: is a symbolic link; give a real directory path")
    if out.exists() and not out.is_dir():
        raise X2Error(f"--out {out}: exists and is a file; give a directory path")
    _refuse_overlap(out, model)
    if out.is_dir() and any(out.iterdir()):
        foreign = foreign_files(out)
        if foreign:
            raise X2Error(f"--out {out}: the directory holds files x2 did not write "
                          f"({', '.join(repr(f) for f in foreign[:3])}"
                          f"{', ...' if len(foreign) > 3 else ''}); refusing to overwrite it. "
                          f"Choose a new or empty directory.")
    parent = out.parent if out.parent != Path("") else Path(".")
    if not parent.exists():
        raise X2Error(f"--out {out}: parent directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise X2Error(f"--out {out}: parent directory {parent} is not writable")


def _model_paths(model: str) -> list[Path]:
    """The files a model spec names: the path itself, the file of a
    `file.py:factory` spec, the folder of a checkpoint prefix."""
    paths = []
    for candidate in {model, model.rpartition(":")[0] or model}:
        path = Path(candidate)
        if path.exists() or path.with_name(path.name + ".index").exists():
            paths.append(path.resolve())
    return paths


def read_bytes(model: str, source: str) -> int:
    """The bytes of weights the reader holds: the model's files, twice those
    of a Hugging Face folder stored in bf16/fp16 (read in float32)."""
    from .frontends.torch.hf_folder import declared_half_dtype, is_hf_model
    half = source == "torch" and is_hf_model(model) and declared_half_dtype(model)
    return model_bytes(model) * (2 if half else 1)


def model_bytes(model: str) -> int:
    """The bytes of the files a model spec names (a folder's: all of them)."""
    total = 0
    for path in _model_paths(model):
        files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
        total += sum(p.stat().st_size for p in files if p.is_file())
    return total


def _refuse_overlap(out: Path, model: str) -> None:
    target = out.resolve()
    for path in _model_paths(model):
        if target == path or path.is_relative_to(target):
            raise X2Error(f"--out {out}: holds the source model {model}; x2 would replace it. "
                          f"Choose a directory outside the model.")
        if target.is_relative_to(path):
            raise X2Error(f"--out {out}: is inside the source model {model}; choose a "
                          f"directory outside it.")


def foreign_files(out: Path) -> list[str]:
    """Paths under `out` that x2's marker does not list (all of them when
    there is no valid marker): what replacing `out` would destroy."""
    present = sorted(str(p.relative_to(out)) for p in out.rglob("*")
                     if p.is_file() or p.is_symlink())
    try:
        marker = json.loads((out / MARKER).read_text())
        written = set(marker["files"]) | {MARKER}
    except (OSError, ValueError, KeyError, TypeError):
        return present or [str(p.relative_to(out)) for p in out.iterdir()]
    return [p for p in present if p not in written]


def write_marker(staging: Path) -> None:
    files = sorted(str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file())
    (staging / MARKER).write_text(json.dumps({"written_by": "x2", "x2_version": x2_version(),
                                              "files": files}, indent=2))


def publish(staging: Path, out: Path, job: Path) -> None:
    """Move a finished staging directory to `out` in one rename (or two, when
    replacing an earlier x2 output, which is kept until the new one is in
    place and then removed with the job folder)."""
    if out.exists():
        foreign = foreign_files(out)
        if foreign:  # written to since prepare_output looked
            raise X2Error(f"--out {out}: files appeared that x2 did not write "
                          f"({foreign[0]!r}); nothing was replaced")
        os.rename(out, job / "replaced")
    os.rename(staging, out)


def value_map(graph, target: str, names: dict | None) -> list[dict]:
    """One entry per node output: the name it has in the converted model (a
    variable of model.py; the ONNX value name itself), its IR op, the source
    node that produced it and the source tensor it equals (its origin)."""
    entries = []
    for node in graph.nodes:
        for value in node.outputs:
            var = value if target == "onnx" else (names or {}).get(value)
            if var is None:
                continue
            info = graph.info.get(value)
            origin = graph.origin.get(value)
            entries.append({"var": var, "value": value, "ir_op": node.op,
                            "ir_node": node.name, "dtype": info.dtype if info else None,
                            "source": dict(node.source),
                            "origin": origin.to_json() if origin else None})
    return entries


def index_output(graph, value: str) -> dict | None:
    """For an output holding the indices of a topk / sort (a topk with k -1)
    / argmax: the op, the output holding their values (None where the
    values are not an output), the axis and its static size (None where
    dynamic). Which tied element such an op picks is its kernel's choice."""
    node = graph.producer(value)
    if node is None or node.op not in ("topk", "argmax"):
        return None
    axis = node.attrs["axis"]
    shape = graph.info[node.inputs[0]].shape if node.inputs[0] in graph.info else None
    size = shape[axis] if shape is not None and -len(shape) <= axis < len(shape) else None
    record = {"op": node.op, "values": None, "axis": axis,
              "axis_size": size if isinstance(size, int) else None}
    if node.op == "topk":
        if node.outputs.index(value) != 1:
            return None   # the values themselves: compared as any float output
        values = node.outputs[0]
        record.update(op="sort" if node.attrs["k"] == -1 else "topk",
                      values=values if values in graph.outputs else None,
                      largest=bool(node.attrs.get("largest", True)))
    return record


def _input_ranges(graph, given: dict | None) -> dict[str, list[int]]:
    ranges = infer_index_ranges(graph)
    for name, bounds in (given or {}).items():
        if name not in graph.inputs:
            raise X2Error(f"--input-range {name}: not an input of the converted model; its "
                          f"inputs are {', '.join(graph.inputs)}")
        ranges[name] = list(bounds)
    return ranges


def _special_ids(graph, token_ids: list[int]) -> dict[str, list[int]]:
    """Ids each token input is fed besides random ones (x2/check/parity.py
    with_edge_ids): its tables' padding_idx and the source config's special
    tokens, for the inputs that index a vocabulary."""
    special = infer_special_ids(graph)
    for name, pads in special.items():
        special[name] = list(dict.fromkeys(pads + token_ids))
    for name in graph.inputs:
        if name not in special and token_ids and "ids" in name.lower():
            special[name] = list(token_ids)
    return special


def _lowers(precision: str, target: str) -> bool:
    """Whether the IR is rewritten to half precision: fp16/bf16 always;
    mixed only for ONNX, which has no autocast (Paddle and PyTorch keep fp32
    weights and autocast their forward instead)."""
    return precision in ("fp16", "bf16") or (precision == "mixed" and target == "onnx")


def _precision_details(options: EmitOptions, lowered: dict | None, emitted: dict,
                       chosen: str, stored: str | None) -> dict:
    """report.json target_details.precision: what `x2 check` compares
    against; `chosen`: why this precision (choose_precision); `stored`: the
    half dtype the source's weights are stored in, if any."""
    details = {"precision": options.precision, "chosen": chosen,
               "io_dtype": options.io_dtype or (
                   "fp32" if options.precision in ("fp32", "mixed") and not lowered else "half")}
    if stored:
        # The source is read and run in float32, its weights upcast exactly: verify
        # and x2 check judge the written model by that exact-arithmetic reference of
        # the same weights, within the precision's tolerance (x2/check/parity.py).
        details["source_run"] = (f"float32: the {stored} weights upcast exactly (x2 reads "
                                 f"and runs the source in float32)")
    if lowered:
        details.update(lowered)
        if options.precision == "mixed":   # ONNX has no autocast: fp16 weights and compute
            details.update(precision="mixed", written_as="fp16 (ONNX has no autocast)")
    details.update(emitted.get("precision") or {})
    return details


def convert(model: str, out: str, *, source: str = "tf", target: str = "paddle",
            inputs: list[str] | None = None, outputs: list[str] | None = None,
            input_shapes: dict[str, list[int]] | None = None, signature: str | None = None,
            options: ReadOptions | dict | None = None,
            emit_options: EmitOptions | dict | None = None,
            layout: str = "nchw", io_layout: str = "source",
            progress: Callable = _noop) -> Report:
    """Convert `model` into the directory `out`; return its report. `options`
    carries frontend settings (input dtypes, trust flags) to the reader,
    `emit_options` target settings (the ONNX opset) to the writer; as
    dataclasses, or dicts of their fields.
    `layout` is the layout inside the converted model (nchw, or nhwc to keep a
    TF model's layout); `io_layout` whether its interface keeps the source's
    layout ("source") or becomes NCHW ("nchw")."""
    if source not in FRONTENDS:
        raise X2Error(f"--from {source}: not supported; choose from {', '.join(FRONTENDS)}")
    if target not in EMITTERS:
        raise X2Error(f"--to {target}: not supported; choose from {', '.join(EMITTERS)}")
    if layout not in ("nchw", "nhwc") or io_layout not in ("source", "nchw"):
        raise X2Error(f"--layout {layout} / --io-layout {io_layout}: choose nchw|nhwc and "
                      f"source|nchw")
    if not isinstance(options, ReadOptions):
        options = ReadOptions.from_json(options or {})
    if not isinstance(emit_options, EmitOptions):
        emit_options = EmitOptions.from_json(emit_options or {})
    if emit_options.purpose not in PURPOSES:
        raise X2Error(f"--for {emit_options.purpose}: choose {' or '.join(PURPOSES)}")
    if emit_options.precision not in (None, *PRECISIONS):  # None: the source's dtype
        raise X2Error(f"--precision {emit_options.precision}: choose {', '.join(PRECISIONS)}")
    if emit_options.exportable and target != "torch":
        raise X2Error(f"--exportable writes torch.cond / while_loop and applies to --to torch "
                      f"only; --to {target} keeps control flow as control flow already")
    if layout == "nhwc":
        if target == "onnx":
            raise X2Error("--layout nhwc: ONNX convolutions and pooling are NCHW-only; "
                          "use --layout nchw (the default) for --to onnx")
        if target == "torch":
            # torch convolutions are NCHW; NHWC lives in the memory format.
            emit_options.channels_last = True
            layout = "nchw"
    options.keep_trainable = emit_options.purpose == "training"
    out_path = Path(out)
    prepare_output(out_path, str(model))
    try:
        # One job folder beside the output holds the staged output, the IR and
        # the workers' scratch: a later run removes it if this one is killed.
        job = make_dir(f".{out_path.name}.x2-staging-", out_path.parent)
        staging = job / "out"
        staging.mkdir()  # with the user's umask, unlike the job folder
    except OSError as exc:
        raise X2Error(f"--out {out}: cannot create files in {out_path.parent}: "
                      f"{exc.strerror or exc}") from exc
    try:
        # A large model's steps each get a worker that ends with the step: the
        # reader's model, the emitter's copy and each verify runner's are never
        # held at once (nor a framework's caches from the step before).
        large = read_bytes(str(model), source) > LARGE_WEIGHTS
        with one_job(single_use=large):
            return _convert(model, source, target, options, emit_options, layout, io_layout,
                            signature, input_shapes, inputs, outputs, job, out_path, progress,
                            large)
    except X2Error:
        raise
    except OSError as exc:
        raise X2Error(f"writing {out}: {exc.strerror or exc}") from exc
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0]
        raise InternalError(f"internal error while converting {model}: {type(exc).__name__}: "
                            f"{first} (a bug in x2: run with --debug and report it)") from exc
    finally:
        shutil.rmtree(job, ignore_errors=True)


def _convert(model, source, target, options, emit_options, layout, io_layout, signature,
             input_shapes, inputs, outputs, job: Path, out_path: Path, progress,
             large: bool = False) -> Report:
    """convert() once its arguments are checked and its job folder made."""
    staging, work = job / "out", job / "ir"
    timings: dict[str, float] = {}
    def step(name, fn):
        progress(name, "start")
        start = time.perf_counter()
        value = fn()
        timings[name] = round(time.perf_counter() - start, 3)
        progress(name, "done", timings[name])
        return value

    if not large:  # (a large model's read has the memory to itself)
        start_warm(EMITTERS[target])  # imports its framework while the model is read
    read_request = ReadRequest(str(model), str(work / "source_ir"), signature, input_shapes,
                               inputs, outputs, options)
    read = ReadResult.from_json(step(f"read {source} model", lambda: run_step(
        FRONTENDS[source], {"request": read_request.to_json()}, scratch=job)))
    graph = load_graph(work / "source_ir")
    stored = read.source.get("stored_dtype")
    chosen_precision, chosen = choose_precision(emit_options.precision, stored, target)
    emit_options = replace(emit_options, precision=chosen_precision)
    input_ranges = _input_ranges(graph, options.input_ranges)
    special_ids = _special_ids(graph, read.source.get("token_ids") or [])
    nodes_before = len(graph.nodes)
    transposes_before = graph.count("transpose")
    graph, pass_records = step("optimize IR", lambda: run_pipeline(
        graph, pipeline_for(layout, io_layout, emit_options.purpose)))
    precision = None
    if _lowers(emit_options.precision, target):
        graph, precision = step(f"lower to {emit_options.precision}", lambda: lower_precision(
            graph, "fp16" if emit_options.precision == "mixed" else emit_options.precision,
            keep_fp32=emit_options.keep_fp32, io_dtype=emit_options.io_dtype,
            int_ranges=input_ranges))
    step("save IR", lambda: save_graph(graph, work / "ir"))
    if precision is not None:   # the lowered weights are this process's own copies:
        graph = load_graph(work / "ir")   # from here on, views of the saved IR's map
    release_constants(graph)
    emit_request = EmitRequest(str(work / "ir"), str(staging),
                               f"{source} model {Path(model).name}", emit_options)
    emitted = step(f"write {target} model", lambda: run_step(
        EMITTERS[target], {"request": emit_request.to_json()}, scratch=job))
    report = Report(
        # Enough to re-create the source model for `x2 check` (torch needs options).
        source={"framework": source, "model": str(model), "signature": signature,
                "input_shapes": input_shapes, "options": read_request.to_json()["options"],
                **read.source},  # format, tags, tensors spanned (tf)
        target=target,
        target_details={**{k: v for k, v in emitted.items()
                           if k not in ("files", "value_names")},
                        "precision": _precision_details(emit_options, precision, emitted,
                                                        chosen, stored),
                        # --for: what the passes kept (x2/passes/__init__.py)
                        "for": emit_options.purpose},
        # "range": [low, high) of an integer input: what `x2 check` draws from.
        # "dims": the symbol of each dynamic axis (x2/ir/symbols.py): one size each.
        inputs=[{"name": v, **graph.info[v].to_json(), "dims": value_dims(graph, v),
                 **({"range": input_ranges[v]} if v in input_ranges else {}),
                 **({"special": special_ids[v]} if special_ids.get(v) else {})}
                for v in graph.inputs],
        dim_examples=dict(graph.meta.dim_examples),
        # "indices_of": an index output (topk, sort, argmax), which verify
        # and x2 check compare up to ties (x2/check/compare.py compare_indices).
        outputs=[{"name": v, **(graph.info[v].to_json() if v in graph.info else {}),
                  **({"indices_of": index_output(graph, v)} if index_output(graph, v) else {})}
                 for v in graph.outputs],
        ops_seen=read.source_ops,
        ops_mapped=sum(read.source_ops.values()),
        ir_ops=graph.op_counts(),
        nodes_before_passes=nodes_before,
        nodes_after_passes=len(graph.nodes),
        transposes_before_passes=transposes_before,
        transposes_left=graph.count("transpose"),
        transposes_where=explain_transposes(graph),
        layout={"inside": graph.meta.layout, "io": graph.meta.io_layout,
                "io_transposes": graph.meta.io_transposes},
        passes=pass_records,
        timings_s=timings,
        files=emitted.get("files", []),
        values=value_map(graph, target, emitted.get("value_names")))
    report.write(staging / REPORT)
    report.target_details["verify"] = {"verified": False, "skipped": "--no-verify"}
    if emit_options.verify:
        (job / "verify").mkdir()
        report.target_details["verify"] = verify_written(
            str(model), staging, job / "verify", source=source, target=target,
            ir_dir=work / "ir", progress=progress, dims=emit_options.verify_dims,
            timeout=emit_options.verify_timeout or VERIFY_TIMEOUT)
        timings["verify against the source"] = report.target_details["verify"]["seconds"]
    report.write(staging / REPORT)
    write_marker(staging)
    publish(staging, out_path, job)
    return report
