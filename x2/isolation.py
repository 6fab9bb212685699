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


def run_step(task: str, args: dict, *, timeout: float | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="x2-step-") as tmp:
        result_path = Path(tmp) / "result.json"
        payload = json.dumps({**args, "result": str(result_path)})
        try:
            proc = subprocess.run([sys.executable, "-m", "x2.worker", task], input=payload,
                                  capture_output=True, text=True, env=_env(), timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise StepCrashed(f"step '{task}' did not finish within {timeout} s") from exc
        if result_path.exists():
            result = json.loads(result_path.read_text())
            if result["ok"]:
                return result["result"]
            err = result["error"]
            trace = result.get("traceback", "") + "\n--- worker stderr ---\n" + proc.stderr[-4000:]
            raise worker_error(err["kind"], err["message"], err.get("details", {}), trace)
        if proc.returncode < 0:
            try:
                signame = signal.Signals(-proc.returncode).name
            except ValueError:
                signame = f"signal {-proc.returncode}"
            raise StepCrashed(
                f"step '{task}' crashed ({signame}) inside the framework; nothing was written. "
                f"Run with --debug to see its log.", details={"stderr": proc.stderr[-4000:]})
        raise StepCrashed(f"step '{task}' exited with code {proc.returncode} without a result: "
                          f"{proc.stderr.strip()[-800:]}", details={"stderr": proc.stderr[-4000:]})
