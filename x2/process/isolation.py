"""Run one framework step in its own worker process (see x2/process/worker.py).

By default every step gets a fresh worker: a crash, a leak or a framework's
global state never outlives one conversion. `reuse_workers` (or
X2_REUSE_WORKERS=1) keeps one warm worker per framework family for many
steps instead: for long trusted runs (a test suite, a model zoo, an ONNX
backend preparing many models) where importing TensorFlow or Paddle again
for every step costs more than the step itself.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from .. import errors
from ..errors import StepCrashed, X2Error
from .scratch import make_dir
from .phase import last_phase


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
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "") if env.get(
        "PYTHONPATH") else root
    return env


class Step:
    """One worker process for one step: `run` hands it its arguments and
    waits for the result."""

    def __init__(self, task: str, scratch: Path | None = None):
        self.task = task
        self.tmp = make_dir("x2-step-", scratch)
        self.proc = subprocess.Popen([sys.executable, "-m", "x2.process.worker", task],
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


class _Server:
    """A reusable worker process (`python -m x2.process.worker --serve FAMILY`)."""

    # A worker is replaced after this many steps: frameworks keep caches and
    # loaded models alive, so memory only grows.
    MAX_STEPS = 40

    def __init__(self, family: str):
        self.family = family
        self.steps = 0
        self.device = None
        self.log = tempfile.TemporaryFile(prefix="x2-worker-")
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "x2.process.worker", "--serve", family, str(write_fd)],
            stdin=subprocess.PIPE, stdout=self.log, stderr=self.log, text=True, env=_env(),
            pass_fds=(write_fd,), preexec_fn=die_with_parent)
        os.close(write_fd)
        self.reply = os.fdopen(read_fd, "r")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_size(self) -> int:
        return os.fstat(self.log.fileno()).st_size

    def log_since(self, start: int) -> str:
        """What the worker printed since `start` (pread: the worker shares the
        file's offset, so this process never moves it)."""
        size = self.log_size()
        return os.pread(self.log.fileno(), size - start, start).decode(errors="replace")

    def close(self, wait: bool = True) -> None:
        """End the worker: let it finish and exit (`wait`), or kill it now."""
        if self.alive():
            try:
                if not wait:
                    raise subprocess.TimeoutExpired(self.proc.args, 0)
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.reply.close()
        self.log.close()


class _Pool:
    """Idle warm workers by family; steps on several threads (the zoo's
    --jobs) each take their own."""

    def __init__(self):
        self.idle: dict[tuple, list[_Server]] = {}
        self.lock = threading.Lock()

    def take(self, key: tuple) -> _Server:
        with self.lock:
            servers = self.idle.setdefault(key, [])
            while servers:
                server = servers.pop()
                if server.alive():
                    return server
                server.close()
        return _Server(key[0])

    def has_idle(self, key: tuple) -> bool:
        with self.lock:
            return any(server.alive() for server in self.idle.get(key, []))

    def give_back(self, key: tuple, server: _Server) -> None:
        if server.alive() and server.steps < _Server.MAX_STEPS:
            with self.lock:
                self.idle.setdefault(key, []).append(server)
        else:
            server.close()

    def close(self, wait: bool = True) -> None:
        with self.lock:
            servers = [s for idle in self.idle.values() for s in idle]
            self.idle.clear()
        for server in servers:
            server.close(wait)


_POOL = _Pool()
atexit.register(_POOL.close)
_REUSE = [os.environ.get("X2_REUSE_WORKERS") == "1"]
# one_job(single_use=True): a worker ends with its step (a large model's
# steps must not hold the weights, or a framework's caches, side by side).
_SINGLE_USE = [False]


def _done_with(key: tuple, server: _Server) -> None:
    if _SINGLE_USE[0]:
        server.close(wait=False)   # its result is written; nothing left to save
    else:
        _POOL.give_back(key, server)


@contextmanager
def reuse_workers():
    """Within the block, steps run in warm workers kept for the next step of
    the same framework (the pool is emptied when the block ends)."""
    before = _REUSE[0]
    _REUSE[0] = True
    try:
        yield
    finally:
        _REUSE[0] = before
        if not before:
            _POOL.close()


class PooledStep:
    """A step run by a warm worker of its framework family, taken from the
    pool when the step starts and given back when it ends."""

    def __init__(self, task: str, scratch: Path | None = None):
        self.task = task
        self.scratch = scratch
        self.key = (task.split(".")[0],)
        self.server: _Server | None = _POOL.take(self.key)

    def run(self, args: dict, *, timeout: float | None = None) -> dict:
        server, self.server = self.server, None
        device = args.get("device")
        if server.steps and device != server.device and device is not None:
            # Device settings apply before a framework import: a new worker.
            server.close()
            server = _Server(self.key[0])
        server.device = device if device is not None else server.device
        tmp = make_dir("x2-step-", self.scratch)
        result_path = tmp / "result.json"
        start = server.log_size()
        answered = None
        try:
            try:
                server.proc.stdin.write(json.dumps({**args, "task": self.task,
                                                    "result": str(result_path)}) + "\n")
                server.proc.stdin.flush()
                ready, _, _ = select.select([server.reply], [], [], timeout)
                if not ready:
                    raise StepCrashed(f"step '{self.task}' did not finish within {timeout} s")
                answered = server.reply.readline()
            except (BrokenPipeError, OSError):
                answered = ""
            if not answered:   # the worker died during the step
                server.proc.wait()
                return _result(self.task, result_path, server.proc.returncode or -9,
                               server.log_since(start))
            server.steps += 1
            return _result(self.task, result_path, int(answered), server.log_since(start))
        finally:
            if answered is None and server.alive():
                # Interrupted mid-step (a timeout, Ctrl-C): the worker may still be
                # running it, so it can never answer the next step in turn.
                server.proc.kill()
                server.proc.wait()
            shutil.rmtree(tmp, ignore_errors=True)
            _done_with(self.key, server)

    def cancel(self) -> None:
        if self.server is not None:
            _done_with(self.key, self.server)
            self.server = None


def start_warm(task: str) -> None:
    """Have a warm worker for `task`'s family waiting in the pool: one started
    now imports its framework while this process goes on (importing x2,
    reading the model in another family's worker)."""
    key = (task.split(".")[0],)
    if task in _IN_PROCESS or _POOL.has_idle(key):
        return
    _POOL.give_back(key, _Server(key[0]))


@contextmanager
def one_job(single_use: bool = False):
    """Within the block (one conversion, or one check), the steps of a
    framework family share one warm worker: the frontend's TensorFlow reads
    the model and then runs it for verify; the emitter's Paddle then runs each
    of the written model's runners. A crash or a framework's global state
    still never outlives the job: the pool is emptied when the block ends. Callers
    that pool workers already (reuse_workers) or run steps in this process
    keep doing so. `single_use`: a worker (one started warm included) ends
    with its step, so that no two steps' memory is held at once."""
    if _REUSE[0] or _IN_PROCESS:
        yield
        return
    _REUSE[0], _SINGLE_USE[0] = True, single_use
    try:
        yield
    finally:
        _REUSE[0], _SINGLE_USE[0] = False, False
        # Killed, not asked to exit: a framework's own shutdown (a second
        # for TensorFlow) has nothing to save, and the user would wait for it.
        _POOL.close(wait=False)


def start_step(task: str, scratch: Path | None = None) -> Step | InProcessStep | PooledStep:
    if task in _IN_PROCESS:
        return InProcessStep(task)
    if _REUSE[0]:
        return PooledStep(task, scratch)
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
        doing = last_phase(result_path)
        raise StepCrashed(
            f"step '{task}' crashed ({signame}) inside the framework"
            f"{f' while {doing}' if doing else ''}; nothing was written. "
            f"Run with --debug to see its log.", details={"stderr": stderr[-4000:]})
    raise StepCrashed(f"step '{task}' exited with code {returncode} without a result: "
                      f"{stderr.strip()[-800:]}", details={"stderr": stderr[-4000:]})
