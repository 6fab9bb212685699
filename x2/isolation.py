"""Run one framework step in its own worker process (see x2/worker.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from . import errors
from .errors import StepCrashed, X2Error


def _error_classes() -> dict[str, type]:
    classes = {}
    for obj in vars(errors).values():
        if isinstance(obj, type) and issubclass(obj, X2Error):
            classes[obj.kind] = obj
    return classes


def worker_error(kind: str, message: str, details: dict, traceback_text: str) -> X2Error:
    """Rebuild the worker's error as the same X2Error subclass in this process;
    the worker's traceback rides along for --debug."""
    cls = _error_classes().get(kind, X2Error)
    exc = cls.__new__(cls)
    X2Error.__init__(exc, message, details=details)
    exc.worker_traceback = traceback_text
    return exc


def _env() -> dict:
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env.setdefault("GLOG_minloglevel", "2")
    # The worker must import this x2, wherever it was imported from.
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "") if env.get(
        "PYTHONPATH") else root
    return env


class Step:
    """One worker process. Started early (`start_step`), an emitter worker
    imports its framework while the frontend worker is still reading the
    model; `run` then hands it its arguments and waits for the result."""

    def __init__(self, task: str):
        self.task = task
        self.tmp = tempfile.TemporaryDirectory(prefix="x2-step-")
        self.proc = subprocess.Popen([sys.executable, "-m", "x2.worker", task],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=_env())

    def run(self, args: dict, *, timeout: float | None = None) -> dict:
        result_path = Path(self.tmp.name) / "result.json"
        payload = json.dumps({**args, "result": str(result_path)})
        try:
            _out, stderr = self.proc.communicate(payload, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            raise StepCrashed(f"step '{self.task}' did not finish within {timeout} s") from exc
        try:
            return _result(self.task, result_path, self.proc.returncode, stderr)
        finally:
            self.tmp.cleanup()

    def cancel(self) -> None:
        """Stop a worker that is no longer needed (e.g. the conversion failed first)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.tmp.cleanup()


def start_step(task: str) -> Step:
    return Step(task)


def run_step(task: str, args: dict, *, timeout: float | None = None) -> dict:
    return Step(task).run(args, timeout=timeout)


def _result(task: str, result_path: Path, returncode: int, stderr: str) -> dict:
    if result_path.exists():
        result = json.loads(result_path.read_text())
        if result["ok"]:
            return result["result"]
        err = result["error"]
        trace = result.get("traceback", "") + "\n--- worker stderr ---\n" + stderr[-4000:]
        raise worker_error(err["kind"], err["message"], err.get("details", {}), trace)
    if returncode < 0:
        try:
            signame = signal.Signals(-returncode).name
        except ValueError:
            signame = f"signal {-returncode}"
        raise StepCrashed(
            f"step '{task}' crashed ({signame}) inside the framework; nothing was written. "
            f"Run with --debug to see its log.", details={"stderr": stderr[-4000:]})
    raise StepCrashed(f"step '{task}' exited with code {returncode} without a result: "
                      f"{stderr.strip()[-800:]}", details={"stderr": stderr[-4000:]})
