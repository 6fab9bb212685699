"""Where `convert-many`'s tasks run: threads on this machine (local) or Ray
tasks on a cluster (ray).

An executor runs `fn(task.arg)` for each Task and yields (index, result) as
each one finishes. `fn` starts `x2 convert` / `x2 check` child processes
(x2/process/batch.py), so no framework is imported where it runs, nor in the driver.
A task that cannot return a result (its Ray worker died more often than the
retries allow, or `fn` itself raised) yields `failed(arg, message)` instead:
the batch goes on. Ray retries a task only when its worker is lost
(`max_retries`, `retry_exceptions=False`); a model's own conversion error is
a result, never an exception, so it is never retried."""
from __future__ import annotations

import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from ..errors import X2Error
from ..text import printable

RAY_MISSING = "--executor ray needs Ray, an optional extra: pip install 'x2[ray]'"


@dataclass
class Task:
    key: str                 # unique in the batch (the output path): Ray's task name
    arg: Any
    cpus: float = 1
    memory: int = 0          # bytes the task may use at most (an estimate; 0: none)
    gpus: float = 0


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return printable(f"{type(exc).__name__}: {lines[-1] if lines else ''}")


class LocalExecutor:
    """A pool of `jobs` threads, each waiting on its task's child processes."""

    def __init__(self, jobs: int):
        self.jobs = max(1, jobs)

    def run(self, fn: Callable, tasks: list[Task], failed: Callable) -> Iterator[tuple[int, Any]]:
        pool = ThreadPoolExecutor(max_workers=self.jobs)
        try:
            futures = {pool.submit(fn, t.arg): i for i, t in enumerate(tasks)}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    yield i, future.result()
                except Exception as exc:  # a bug in fn: that task fails, not the batch
                    yield i, failed(tasks[i].arg, _one_line(exc))
        finally:  # interrupted: start nothing new
            pool.shutdown(wait=False, cancel_futures=True)


def import_ray():
    try:
        import ray
    except ImportError:
        raise X2Error(RAY_MISSING) from None
    return ray


def _ray_task(fn: Callable, key: str, arg: Any) -> Any:
    """What runs in the Ray worker process."""
    _test_hook(key)
    return fn(arg)


def _test_hook(key: str) -> None:
    """For tests only (X2_TEST_RAY_DIR): record each attempt of a task in
    DIR/attempts, SIGKILL this worker once for the task named in DIR/kill,
    as if its machine had been lost, and hold every task after the first N
    (DIR/hold_after holds N) for 20 s, so a test can interrupt a
    run before it ends however fast the machine is."""
    folder = os.environ.get("X2_TEST_RAY_DIR")
    if not folder:
        return
    with open(Path(folder) / "attempts", "a") as fh:
        fh.write(key + "\n")
    hold = Path(folder) / "hold_after"
    if hold.exists() and len((Path(folder) / "attempts").read_text().split()) > int(
            hold.read_text()):
        time.sleep(20)
    kill = Path(folder) / "kill"
    try:
        if kill.read_text() == key:
            kill.unlink()
            os.kill(os.getpid(), signal.SIGKILL)
    except FileNotFoundError:
        pass


class RayExecutor:
    """One Ray task per Task with its resources declared; `env`: variables
    its workers need (PYTHONPATH). Without an address (and no RAY_ADDRESS) a
    local Ray instance with `jobs` CPUs is started for the run and shut down
    after it."""

    def __init__(self, address: str | None, jobs: int, retries: int,
                 env: dict[str, str] | None = None):
        self.ray = import_ray()
        self.retries = retries
        self.owns = not self.ray.is_initialized()
        if self.owns:
            import logging
            local = address is None and not os.environ.get("RAY_ADDRESS")
            try:
                self.ray.init(address=address, include_dashboard=False, log_to_driver=False,
                              logging_level=logging.WARNING,
                              runtime_env={"env_vars": env} if env else None,
                              **({"num_cpus": max(1, jobs)} if local else {}))
            except Exception as exc:  # an unreachable address, a version mismatch
                raise X2Error(f"--ray-address {address or os.environ.get('RAY_ADDRESS')}: "
                              f"cannot connect to Ray: {_one_line(exc)}") from None

    def _limits(self, tasks: list[Task]) -> int:
        """The most memory one task may ask for: the largest node's. A task
        asking more would wait forever, so the estimate is capped there."""
        if any(t.gpus for t in tasks) and not self.ray.cluster_resources().get("GPU"):
            raise X2Error("--device gpu: the Ray cluster has no GPU; check on cpu or add "
                          "GPU nodes")
        return int(max((n["Resources"].get("memory", 0) for n in self.ray.nodes()
                        if n.get("Alive")), default=0))

    def run(self, fn: Callable, tasks: list[Task], failed: Callable) -> Iterator[tuple[int, Any]]:
        ray = self.ray
        pending = []
        try:
            largest = self._limits(tasks)
            remote = ray.remote(_ray_task)
            refs = {}
            for i, t in enumerate(tasks):
                options = {"num_cpus": t.cpus, "max_retries": self.retries,
                           "retry_exceptions": False, "name": t.key[-200:]}
                if t.memory and largest:
                    options["memory"] = min(t.memory, largest)
                if t.gpus:
                    options["num_gpus"] = t.gpus
                refs[remote.options(**options).remote(fn, t.key, t.arg)] = i
            pending = list(refs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                for ref in done:
                    i = refs[ref]
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        lost = isinstance(exc, (ray.exceptions.WorkerCrashedError,
                                                ray.exceptions.NodeDiedError,
                                                ray.exceptions.OutOfMemoryError))
                        what = (f"its Ray worker was lost {self.retries + 1} time(s)" if lost
                                else "the Ray task failed")
                        result = failed(tasks[i].arg, f"{what}: {_one_line(exc)}")
                    yield i, result
        finally:
            if self.owns:  # stops the local instance and every task still running
                ray.shutdown()
            else:  # interrupted on a Ray instance someone else started
                for ref in pending:
                    ray.cancel(ref, force=True)


def make_executor(name: str, jobs: int, address: str | None, retries: int,
                  env: dict[str, str] | None = None):
    if name == "ray":
        return RayExecutor(address, jobs, retries, env)
    if address:
        raise X2Error("--ray-address: only with --executor ray")
    return LocalExecutor(jobs)
