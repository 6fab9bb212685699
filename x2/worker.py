"""Entry point of the worker processes: `python -m x2.worker TASK`.

Each task imports one framework only, so a TensorFlow step and a Paddle step
never share a process (TF-then-paddle segfaults), and a crash in a framework
kills the worker, not the CLI. Arguments arrive as JSON on stdin; the result
(or a user-facing error) is written as JSON to the path in args["result"].
"""
from __future__ import annotations

import importlib
import json
import sys
import traceback

import numpy as np

from .errors import X2Error

TASKS = {}


def task(name):
    def decorate(fn):
        TASKS[name] = fn
        return fn
    return decorate


def _load_inputs(path: str) -> list[np.ndarray]:
    with np.load(path) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


def _save_outputs(path: str, outputs: list[np.ndarray]) -> None:
    np.savez(path, *outputs)


@task("tf.read")
def tf_read(args):
    from .frontends import tf_formats
    from .frontends.common import map_graph, select_subgraph
    from .frontends.tf_common import tensor_name
    from .ir import save_graph
    from .registry import TF

    source, record = tf_formats.read(args["model"], args.get("signature"),
                                     args.get("input_shapes"), args.get("options") or {},
                                     args.get("outputs"))
    source = select_subgraph(source, args.get("inputs"), args.get("outputs"))
    # What `x2 check` needs to run the source: the tensors the converted model spans.
    record.update(feeds=[tensor_name(v) for v in source.inputs],
                  fetches=[tensor_name(v) for v in source.outputs],
                  pruned=bool(args.get("inputs") or args.get("outputs")))
    graph = map_graph(source, TF)
    graph.meta["source_model"] = args["model"]
    # Keras/TF graphs are NHWC at their interface (--io-layout nchw changes that).
    graph.meta["io_layout"] = "source"
    graph.meta["source_layout"] = "NHWC"
    save_graph(graph, args["ir"])
    return {"source_ops": graph.meta["source_ops"], "nodes": len(graph.nodes), "source": record}


@task("tf.run")
def tf_run(args):
    from .frontends import tf_formats
    _save_outputs(args["outputs"], tf_formats.run(
        args["model"], args.get("signature"), args["names"], _load_inputs(args["inputs"]),
        args.get("options") or {}, args.get("source") or {}))
    return {}


@task("paddle.emit")
def paddle_emit(args):
    from .emitters.paddle import emit_paddle
    from .ir import load_graph
    return emit_paddle(load_graph(args["ir"]), args["out"], args.get("source_desc", "a model"))


@task("onnx.read")
def onnx_read(args):
    from .frontends.common import map_graph, select_subgraph
    from .frontends.onnx_model import read_onnx
    from .ir import save_graph
    from .registry import ONNX

    try:
        source = read_onnx(args["model"])
    except (X2Error, OSError):
        raise
    except Exception as exc:  # a malformed file the reader did not anticipate: name it
        from .errors import ModelLoadError
        from .frontends.common import one_line
        raise ModelLoadError(f"{args['model']}: cannot read the model "
                             f"({type(exc).__name__}: {one_line(exc, 200)})") from exc
    _fix_input_shapes(source, args.get("input_shapes"))
    source = select_subgraph(source, args.get("inputs"), args.get("outputs"))
    graph = map_graph(source, ONNX)
    graph.meta["source_model"] = args["model"]
    graph.meta["opset"] = source.version
    save_graph(graph, args["ir"])
    return {"source_ops": graph.meta["source_ops"], "nodes": len(graph.nodes)}


def _fix_input_shapes(source, shapes) -> None:
    """--input-shape for formats whose inputs are declared in the file."""
    from .errors import SelectionError
    from .ir import TensorInfo
    for name, dims in (shapes or {}).items():
        if name not in source.inputs:
            raise SelectionError(f"--input-shape: '{name}' is not an input; inputs are "
                                 f"{', '.join(source.inputs)}")
        info = source.info[name]
        old = info.shape
        if old is not None and (len(old) != len(dims) or any(
                o is not None and o != d for o, d in zip(old, dims))):
            raise SelectionError(f"--input-shape {name}: {dims} contradicts the model's "
                                 f"shape {list(old)}")
        source.info[name] = TensorInfo(info.dtype, tuple(dims))


@task("onnx.run")
def onnx_run(args):
    from .frontends.onnx_model import run_onnx_source
    _save_outputs(args["outputs"], run_onnx_source(args["model"], args["names"],
                                                   _load_inputs(args["inputs"])))
    return {}


@task("onnx.emit")
def onnx_emit(args):
    from .emitters.onnx import DEFAULT_OPSET, emit_onnx
    from .ir import load_graph
    opset = args.get("options", {}).get("opset") or DEFAULT_OPSET
    return emit_onnx(load_graph(args["ir"]), args["out"], opset=int(opset))


@task("torch.read")
def torch_read(args):
    from .frontends.common import map_graph, select_subgraph
    from .frontends.torch_export import read_torch
    from .ir import save_graph
    from .registry import TORCH

    source = read_torch(args["model"], args.get("input_shapes"), args.get("options"))
    source = select_subgraph(source, args.get("inputs"), args.get("outputs"))
    graph = map_graph(source, TORCH)
    graph.meta["source_model"] = args["model"]
    graph.meta["io_layout"] = "source"
    save_graph(graph, args["ir"])
    return {"source_ops": graph.meta["source_ops"], "nodes": len(graph.nodes)}


@task("torch.run")
def torch_run(args):
    from .frontends.torch_export import run_torch
    _save_outputs(args["outputs"], run_torch(args["model"], _load_inputs(args["inputs"]),
                                             args.get("options")))
    return {}


@task("torch.emit")
def torch_emit(args):
    from .emitters.torch import emit_torch
    from .ir import load_graph
    return emit_torch(load_graph(args["ir"]), args["out"], args.get("source_desc", "a model"),
                      channels_last=bool(args.get("options", {}).get("channels_last")))


# `x2 check` with devices, precision and --bisect (x2/parity_runtime.py).
def _parity_tasks(framework: str) -> None:
    def devices(args):
        from .parity_runtime import list_devices
        return list_devices(framework)

    def parity_run(args):
        from .parity_runtime import run
        return run(framework, args)

    TASKS[f"{framework}.devices"] = devices
    TASKS[f"{framework}.parity_run"] = parity_run


for _framework in ("tf", "paddle", "torch", "onnx"):
    _parity_tasks(_framework)


# Emitter workers are started before the frontend has finished (x2/convert.py):
# they import their framework while waiting for their arguments.
PREWARM = {"paddle.emit": "paddle", "onnx.emit": "onnx", "torch.emit": "torch"}


def main() -> int:
    name = sys.argv[1]
    if name in PREWARM:
        try:
            importlib.import_module(PREWARM[name])
        except ImportError:
            pass  # reported properly when the task itself imports it
    args = json.loads(sys.stdin.read())
    result_path = args["result"]
    if args.get("device"):
        # Device visibility and GPU memory settings, before any framework import.
        from .parity_runtime import configure_env
        configure_env(name.split(".")[0], args["device"])
    try:
        result = {"ok": True, "result": TASKS[name](args)}
        code = 0
    except X2Error as exc:
        result = {"ok": False, "error": exc.to_json(), "traceback": traceback.format_exc()}
        code = 3
    except OSError as exc:  # disk full, permissions, a file vanished: name it
        where = f" {exc.filename}" if exc.filename else ""
        result = {"ok": False, "error": {"kind": "io", "message":
                  f"{name}: cannot read or write{where}: {exc.strerror or exc}",
                  "details": {"errno": exc.errno}}, "traceback": traceback.format_exc()}
        code = 3
    except Exception as exc:  # a bug or an unexpected framework error
        subject = args.get("model") or args.get("out") or ""
        first = (str(exc).strip().splitlines() or [""])[0]
        result = {"ok": False, "error": {"kind": "internal", "message":
                  f"internal error in x2 step '{name}'"
                  f"{f' on {subject}' if subject else ''}: {type(exc).__name__}: {first} "
                  f"(a bug in x2: run with --debug and report it)", "details": {}},
                  "traceback": traceback.format_exc()}
        code = 4
    with open(result_path, "w") as fh:
        json.dump(result, fh)
    return code


if __name__ == "__main__":
    sys.exit(main())
