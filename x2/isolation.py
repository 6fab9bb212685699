"""Run one framework step in its own worker process (see x2/worker.py)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from . import errors
from .errors import StepCrashed, X2Error
from .scratch import make_dir


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

    def __init__(self, task: str, scratch: Path | None = None):
        self.task = task
        self.tmp = make_dir("x2-step-", scratch)
        self.proc = subprocess.Popen([sys.executable, "-m", "x2.worker", task],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=_env(),
                                     preexec_fn=die_with_parent)

    def run(self, args: dict, *, timeout: float | None = None) -> dict:
        result_path = self.tmp / "result.json"
        payload = json.dumps({**args, "result": str(result_path)})
        try:
            _out, stderr = self.proc.communicate(payload, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            raise StepCrashed(f"step '{self.task}' did not finish within {timeout} s") from exc
        try:
            return _result(self.task, result_path, self.proc.returncode, stderr)
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def cancel(self) -> None:
        """Stop a worker that is no longer needed (e.g. the conversion failed first)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        shutil.rmtree(self.tmp, ignore_errors=True)


def die_with_parent() -> None:
    """Linux: the worker gets SIGKILL when x2 dies (even by SIGKILL), instead of
    running on as an orphan that writes into a folder a later run removes."""
    if sys.platform.startswith("linux"):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class InProcessStep:
    """A step run in this process (`in_process`): the same task function and
    the same errors as a worker, without the seconds a framework import costs
    each conversion. Only for tasks whose framework may share this process."""

    def __init__(self, task: str):
        self.task = task

    def run(self, args: dict, *, timeout: float | None = None) -> dict:
        from .worker import TASKS, error_summary
        try:
            return TASKS[self.task](args)
        except X2Error:
            raise
        except Exception as exc:
            raise errors.InternalError(
                f"internal error in x2 step '{self.task}': {type(exc).__name__}: "
                f"{error_summary(exc)} (a bug in x2: run with --debug and report it)") from exc

    def cancel(self) -> None:
        pass


# Tasks that `in_process` currently runs here rather than in a worker.
_IN_PROCESS: set[str] = set()


@contextmanager
def in_process(tasks: set[str]):
    """Within the block, run these tasks in this process. The caller vouches
    that their frameworks may share it (never TensorFlow with paddle)."""
    added = set(tasks) - _IN_PROCESS
    _IN_PROCESS.update(added)
    try:
        yield
    finally:
        _IN_PROCESS.difference_update(added)


def start_step(task: str, scratch: Path | None = None) -> Step | InProcessStep:
    if task in _IN_PROCESS:
        return InProcessStep(task)
    return Step(task, scratch)


def run_step(task: str, args: dict, *, timeout: float | None = None,
             scratch: Path | None = None) -> dict:
    return start_step(task, scratch).run(args, timeout=timeout)


def _result(task: str, result_path: Path, returncode: int, stderr: str) -> dict:
    if result_path.exists():
        try:
            result = json.loads(result_path.read_text())
        except (OSError, ValueError):
            # The worker could not write its result (a full disk, most often).
            last = (stderr.strip().splitlines() or ["no message"])[-1]
            raise X2Error(f"step '{task}' could not hand back its result: {last}",
                          details={"stderr": stderr[-4000:]}) from None
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
