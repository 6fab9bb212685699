"""The conversion pipeline: frontend worker -> IR passes -> emitter worker,
written atomically into the output directory.

This module imports no framework; `convert` is safe to call from a process
that has already imported TensorFlow, paddle or torch in any order."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

from .errors import ConversionError, X2Error
from .ir import load_graph, save_graph
from .isolation import run_step, start_step
from .passes import pipeline_for, run_pipeline
from .passes.layout_modes import explain_transposes

# --from NAME -> worker task that reads the model into IR (x2/worker.py).
FRONTENDS = {"tf": "tf.read", "onnx": "onnx.read", "torch": "torch.read"}
# --to NAME -> worker task that writes the IR as a model of that framework.
EMITTERS = {"paddle": "paddle.emit", "onnx": "onnx.emit", "torch": "torch.emit"}
REPORT = "report.json"


def _noop(step: str, state: str, seconds: float | None = None) -> None:
    pass


def prepare_output(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise X2Error(f"--out {out}: exists and is a file; give a directory path")
    if out.is_dir() and any(out.iterdir()) and not (out / REPORT).exists():
        raise X2Error(f"--out {out}: directory is not empty and was not written by x2; "
                      f"refusing to overwrite it. Choose a new or empty directory.")
    parent = out.parent if out.parent != Path("") else Path(".")
    if not parent.exists():
        raise X2Error(f"--out {out}: parent directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise X2Error(f"--out {out}: parent directory {parent} is not writable")


def publish(staging: Path, out: Path) -> None:
    """Move a finished staging directory to `out` in one rename (or two, when
    replacing an earlier x2 output, which is kept until the new one is in place)."""
    if out.exists():
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.rename(out, old)
        os.rename(staging, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.rename(staging, out)


def value_map(graph, target: str, names: dict | None) -> list[dict]:
    """One entry per node output: the name it has in the converted model (a
    variable of model.py; the ONNX value name itself), its IR op and source."""
    entries = []
    for node in graph.nodes:
        for value in node.outputs:
            var = value if target == "onnx" else (names or {}).get(value)
            if var is None:
                continue
            info = graph.info.get(value)
            entries.append({"var": var, "value": value, "ir_op": node.op,
                            "ir_node": node.name, "dtype": info.dtype if info else None,
                            "source": dict(node.source)})
    return entries


def convert(model: str, out: str, *, source: str = "tf", target: str = "paddle",
            inputs: list[str] | None = None, outputs: list[str] | None = None,
            input_shapes: dict[str, list[int]] | None = None, signature: str | None = None,
            options: dict | None = None, emit_options: dict | None = None,
            layout: str = "nchw", io_layout: str = "source",
            progress: Callable = _noop) -> dict:
    """Convert `model` into the directory `out`. `options` carries
    frontend-specific settings (e.g. input dtypes, trust flags) to the reader,
    `emit_options` target-specific ones (e.g. the ONNX opset) to the writer.
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
    emit_options = dict(emit_options or {})
    if layout == "nhwc":
        if target == "onnx":
            raise X2Error("--layout nhwc: ONNX convolutions and pooling are NCHW-only; "
                          "use --layout nchw (the default) for --to onnx")
        if target == "torch":
            # torch convolutions are NCHW; NHWC lives in the memory format.
            emit_options["channels_last"] = True
            layout = "nchw"
    out_path = Path(out)
    prepare_output(out_path)
    timings: dict[str, float] = {}
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out_path.name}.x2-staging-",
                                        dir=out_path.parent if str(out_path.parent) else "."))
    except OSError as exc:
        raise X2Error(f"--out {out}: cannot create files in {out_path.parent}: "
                      f"{exc.strerror or exc}") from exc
    work = Path(tempfile.mkdtemp(prefix="x2-ir-"))
    emitter = None
    try:
        def step(name, fn):
            progress(name, "start")
            start = time.perf_counter()
            value = fn()
            timings[name] = round(time.perf_counter() - start, 3)
            progress(name, "done", timings[name])
            return value

        emitter = start_step(EMITTERS[target])  # imports its framework meanwhile
        read = step(f"read {source} model", lambda: run_step(FRONTENDS[source], {
            "model": str(model), "signature": signature, "input_shapes": input_shapes,
            "inputs": inputs, "outputs": outputs, "ir": str(work / "source_ir"),
            "options": options or {}}))
        graph = load_graph(work / "source_ir")
        nodes_before = len(graph.nodes)
        transposes_before = graph.count("transpose")
        graph, pass_records = step("optimize IR", lambda: run_pipeline(
            graph, pipeline_for(layout, io_layout)))
        step("save IR", lambda: save_graph(graph, work / "ir"))
        emitted = step(f"write {target} model", lambda: emitter.run({
            "ir": str(work / "ir"), "out": str(staging),
            "source_desc": f"{source} model {Path(model).name}",
            "options": emit_options or {}}))
        report = {
            "x2_version": "0.1.0",
            # Enough to re-create the source model for `x2 check` (torch needs options).
            "source": {"framework": source, "model": str(model), "signature": signature,
                       "input_shapes": input_shapes, "options": options or {},
                       **read.get("source", {})},  # format, tags, tensors spanned (tf)
            "target": target,
            "target_details": {k: v for k, v in emitted.items()
                               if k not in ("files", "value_names")},
            "inputs": [{"name": v, **graph.info[v].to_json()} for v in graph.inputs],
            "outputs": [{"name": v, **(graph.info[v].to_json() if v in graph.info else {})}
                        for v in graph.outputs],
            "ops_seen": read["source_ops"],
            "ops_mapped": sum(read["source_ops"].values()),
            "ir_ops": graph.op_counts(),
            "nodes_before_passes": nodes_before,
            "nodes_after_passes": len(graph.nodes),
            "transposes_before_passes": transposes_before,
            "transposes_left": graph.count("transpose"),
            "transposes_where": explain_transposes(graph),
            "layout": {"inside": graph.meta.get("layout", "nchw"),
                       "io": graph.meta.get("io_layout", "source"),
                       "io_transposes": graph.meta.get("io_transposes", {})},
            "passes": pass_records,
            "timings_s": timings,
            "files": emitted.get("files", []),
            # generated variable / ONNX value -> IR value -> source node, in
            # execution order: what `x2 check --bisect` compares.
            "values": value_map(graph, target, emitted.get("value_names")),
        }
        (staging / REPORT).write_text(json.dumps(report, indent=2))
        publish(staging, out_path)
        return report
    except X2Error:
        raise
    except OSError as exc:
        raise X2Error(f"writing {out}: {exc.strerror or exc}") from exc
    except Exception as exc:
        raise ConversionError(f"internal error while converting: {type(exc).__name__}: {exc}") \
            from exc
    finally:
        if emitter is not None:
            emitter.cancel()
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
