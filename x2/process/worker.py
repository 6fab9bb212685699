"""Entry point of the worker processes: `python -m x2.process.worker TASK`.

Each task imports one framework only, so a TensorFlow step and a Paddle step
never share a process (TF-then-paddle segfaults), and a crash in a framework
kills the worker, not the CLI. Arguments arrive as JSON on stdin; the result
(or a user-facing error) is written as JSON to the path in args["result"].
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import traceback
from pathlib import Path

import numpy as np

from ..errors import SourceRunError, X2Error
from ..check.compare import each_run
from .phase import note_beside

TASKS = {}


def task(name):
    def decorate(fn):
        TASKS[name] = fn
        return fn
    return decorate


# Frontend tasks: the frontend module does the reading; the worker moves
# requests and results across the process boundary (x2/contracts.py).
FRONTEND_MODULES = {"tf": "tf.formats", "onnx": "onnx.reader", "torch": "torch.capture"}


def _read_task(framework: str):
    def read(args):
        from ..contracts import ReadRequest, ReadResult
        from ..ir import save_graph
        from ..frontends.common import name_dims, split_input_shapes
        request = ReadRequest.from_json(args["request"])
        frontend = importlib.import_module(f"..frontends.{FRONTEND_MODULES[framework]}",
                                           __package__)
        static, named, examples = split_input_shapes(request.input_shapes)
        if framework != "torch":  # torch captures with named dims as torch.export Dims
            request.input_shapes = static
        graph, record = frontend.read_ir(request)
        name_dims(graph, named, examples)
        save_graph(graph, request.ir)
        return ReadResult(graph.meta.source_ops, len(graph.nodes), record).to_json()
    return read


def error_summary(exc: BaseException) -> str:
    """The line of a framework's multi-line message that says what is wrong
    (TF's starts with "Graph execution error:" and a node trace)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith(
        ("Detected at node", "<stack traces", "[[", "File "))]
    if not useful:
        return lines[0] if lines else ""
    first = useful[0]
    return f"{first} {useful[1]}" if first.endswith(":") and len(useful) > 1 else first


def source_run(fn):
    """A task running the source model: what its framework raises is about the
    model and the inputs it was fed, not a bug in x2's conversion."""
    def run(args):
        try:
            return fn(args)
        except (X2Error, OSError):
            raise
        except Exception as exc:
            raise SourceRunError(
                f"the source model failed on the inputs x2 fed it: {type(exc).__name__}: "
                f"{error_summary(exc)} (if they are outside what the model accepts, give "
                f"real ones to x2 check --inputs-file, or convert with "
                f"--input-range NAME:LOW,HIGH)"
            ) from exc
    return run


@task("tf.run")
@source_run
def tf_run(args):
    from ..contracts import ReadRequest
    from ..frontends.tf import formats
    request = ReadRequest.from_json(args["request"])
    return _generate_or_run(args, formats.runner(request, args["names"],
                                                 args.get("source") or {}))


@task("onnx.run")
@source_run
def onnx_run(args):
    from ..contracts import ReadRequest
    from ..frontends.onnx.reader import run_onnx_source
    request = ReadRequest.from_json(args["request"])
    return _generate_or_run(args, lambda inputs: run_onnx_source(
        request.model, args["names"], inputs, request.options.input_values))


@task("torch.run")
@source_run
def torch_run(args):
    from dataclasses import replace
    from ..contracts import ReadRequest
    from ..frontends.torch.capture import torch_runner
    from ..frontends.torch.loading import load_model
    request = ReadRequest.from_json(args["request"])
    options = request.options
    loaded = load_model(request.model, options.trust_pickle)
    if args.get("generate") and options.with_cache:
        from ..check.generate import run
        from ..frontends.torch.cache import transformers_generate

        def steps(part):
            return torch_runner(request.model, replace(options, cache_part=part), loaded)
        return run(args, steps, lambda ids, mask, n: transformers_generate(loaded[1], ids,
                                                                           mask, n))
    return _generate_or_run(args, torch_runner(request.model, options, loaded))


def _generate_or_run(args: dict, step) -> dict:
    """Run the source on each input set, or generate from each prompt set
    (x2 check --generate) with `step` as the model."""
    if args.get("generate"):
        from ..check.generate import run
        return run(args, lambda part: step)
    for inputs, out in each_run(args):
        np.savez(out, *step(inputs))
    return {}


def _emit_task(target: str):
    def emit(args):
        from ..contracts import EmitRequest
        from ..ir import load_graph
        request = EmitRequest.from_json(args["request"])
        emitter = importlib.import_module(f"..emitters.{target}", __package__)
        return emitter.emit(load_graph(request.ir), request)
    return emit


def _locate_task(target: str):
    """Convert's verify found a mismatch: name the first IR op the written
    model gets wrong on the failing inputs (x2/emitters/locate.py)."""
    def locate(args):
        from ..contracts import Report
        from ..ir import load_graph
        emitter = importlib.import_module(f"..emitters.{target}", __package__)
        out = Path(args["out"])
        names = {v["value"]: v["var"] for v in Report.load(out).values}
        with np.load(args["inputs"]) as data:
            inputs = [data[f"arr_{i}"] for i in range(len(data.files))]
        return {"culprit": emitter.locate(load_graph(args["ir"]), out, names, inputs)}
    return locate


for _framework in FRONTEND_MODULES:
    TASKS[f"{_framework}.read"] = _read_task(_framework)
for _target in ("paddle", "onnx", "torch"):
    TASKS[f"{_target}.emit"] = _emit_task(_target)
for _target in ("paddle", "torch"):
    TASKS[f"{_target}.locate"] = _locate_task(_target)


# `x2 check` with devices, precision and --bisect (x2/check/runtime.py).
def _parity_tasks(framework: str) -> None:
    def devices(args):
        from ..check.runtime import list_devices
        return list_devices(framework)

    def parity_run(args):
        from ..check.runtime import run
        return run(framework, args)

    TASKS[f"{framework}.devices"] = devices
    TASKS[f"{framework}.parity_run"] = parity_run


for _framework in ("tf", "paddle", "torch", "onnx"):
    _parity_tasks(_framework)


# `x2 check --grad` (x2/check/gradcheck.py): one framework per worker, as everywhere.
def _grad_tasks() -> None:
    def source(name):
        def run(args):
            from ..check import gradcheck_runtime
            return getattr(gradcheck_runtime, name)(args)
        return run

    def target(framework):
        def run(args):
            from ..check.gradcheck_runtime import target_grads
            return target_grads(framework, args)
        return run

    TASKS["tf.grad_source"] = source("tf_source_grads")
    TASKS["torch.grad_source"] = source("torch_source_grads")
    for framework in ("torch", "paddle"):
        TASKS[f"{framework}.grad_target"] = target(framework)


_grad_tasks()


# A warm worker imports its framework before its first task arrives: it is
# started while x2 still imports itself or reads the model in another
# family's worker (x2/process/isolation.py start_warm).
PREWARM = {"paddle": "paddle", "onnx": "onnx", "torch": "torch", "tf": "tensorflow"}


def _profiled(name: str, args: dict):
    """TASKS[name](args); with X2_PROFILE=DIR in the environment, under cProfile,
    its stats written to DIR/NAME-PID-N.prof (a developer's look at where a
    step's time goes: python -m pstats FILE)."""
    folder = os.environ.get("X2_PROFILE")
    if not folder:
        return TASKS[name](args)
    import cProfile
    profile = cProfile.Profile()
    try:
        return profile.runcall(TASKS[name], args)
    finally:
        Path(folder).mkdir(parents=True, exist_ok=True)
        _PROFILED[0] += 1
        profile.dump_stats(str(Path(folder) / f"{name}-{os.getpid()}-{_PROFILED[0]}.prof"))


_PROFILED = [0]


def run_task(name: str, args: dict) -> int:
    """Run one task; its result or error goes to args["result"] as JSON."""
    result_path = args["result"]
    note_beside(result_path)
    if args.get("device"):
        # Device visibility and GPU memory settings, before any framework import.
        from ..check.runtime import configure_env
        configure_env(name.split(".")[0], args["device"])
    try:
        result = {"ok": True, "result": _profiled(name, args)}
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
        first = error_summary(exc)
        result = {"ok": False, "error": {"kind": "internal", "message":
                  f"internal error in x2 step '{name}'"
                  f"{f' on {subject}' if subject else ''}: {type(exc).__name__}: {first} "
                  f"(a bug in x2: run with --debug and report it)", "details": {}},
                  "traceback": traceback.format_exc()}
        code = 4
    with open(result_path, "w") as fh:
        json.dump(result, fh)
    return code


def _prewarm(family: str) -> None:
    if family in PREWARM:
        try:
            importlib.import_module(PREWARM[family])
        except ImportError:
            pass  # reported properly when the task itself imports it


def serve(family: str, reply_fd: int) -> int:
    """A reusable worker (x2/process/isolation.py `reuse_workers`): runs tasks of one
    framework family, one JSON line each on stdin, and answers each on
    `reply_fd` once its result file is written. Ends when stdin closes."""
    _prewarm(family)
    with open(reply_fd, "w") as reply:
        for line in sys.stdin:
            args = json.loads(line)
            name = args.pop("task")
            if name.split(".")[0] != family:
                raise SystemExit(f"worker for {family} was sent task {name}")
            code = run_task(name, args)
            reply.write(f"{code}\n")
            reply.flush()
    return 0


def main() -> int:
    if sys.argv[1] == "--serve":
        return serve(sys.argv[2], int(sys.argv[3]))
    return run_task(sys.argv[1], json.loads(sys.stdin.read()))


if __name__ == "__main__":
    sys.exit(main())
