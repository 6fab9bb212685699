"""Shared fixtures. Models are built in subprocesses (TensorFlow must never be
imported into the pytest process together with paddle)."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import builders

ROOT = Path(__file__).resolve().parent.parent
# Lint the IR after the frontend and after every pass in every conversion the
# suite runs, in-process and in the CLI subprocesses (x2/passes/__init__.py).
os.environ.setdefault("X2_LINT", "1")
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
ENV.pop("X2_REUSE_WORKERS", None)   # CLI runs keep x2's default (see warm_workers)

# X2_TEST_TIMING=DIR: where the time goes by kind (tests/timing_plugin.py).
TIMING = os.environ.get("X2_TEST_TIMING")
if TIMING:
    import time

    import timing_plugin
    timing_plugin.install()
    _SESSION_START = time.perf_counter()

    def pytest_sessionfinish(session):
        timing_plugin.write(TIMING, time.perf_counter() - _SESSION_START)


def _build(args: list[str], out: Path) -> Path:
    """Build a model once for the whole run: the pytest-xdist workers share
    `out`, and one that finds another building it waits for it. The script
    runs in its warm builder process (tests/builders.py)."""
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            error = builders.build([*args, str(out)], ENV, ROOT)
            assert error is None, f"building {args} failed:\n{error}"
    return out


# No test takes minutes; one that hangs (a model whose loop never ends on the
# inputs it was given) fails here instead of holding CI until its limit.
TEST_TIME_LIMIT_S = 600


class TimeLimitExceeded(Exception):
    """Not TimeoutError: that is an OSError, which code waiting on a worker's
    pipe takes for the worker's death and then waits for it to exit (a
    framework that hangs never does)."""


@pytest.fixture(autouse=True)
def time_limit():
    def expired(signum, frame):
        raise TimeLimitExceeded(f"the test ran longer than {TEST_TIME_LIMIT_S} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(TEST_TIME_LIMIT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="session", autouse=True)
def warm_workers():
    """Steps the suite runs in this process share warm workers, one per
    framework family (x2/process/isolation.py): a fresh worker per step would import
    TensorFlow or Paddle again hundreds of times. The CLI subprocesses the
    suite starts keep x2's default, a fresh worker per step."""
    from x2.process.isolation import reuse_workers
    with reuse_workers():
        yield


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    """Built models, shared by every pytest-xdist worker of the run (their
    base temp folders sit side by side under one folder per run)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return tmp_path_factory.mktemp("models")
    shared = tmp_path_factory.getbasetemp().parent / "models"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def sample(model_dir):
    """sample(name) -> SavedModel path of a built-in sample (x2/samples.py)."""
    return lambda name: _build(["-m", "x2.samples", name], model_dir / f"sample_{name}")


@pytest.fixture(scope="session")
def tf_model(model_dir):
    """tf_model(name) -> path of a test model from tests/tf_models.py."""
    return lambda name: _build([str(ROOT / "tests" / "tf_models.py"), name], model_dir / name)


def run_cli(*args: str, cwd=None, process: bool = False) -> subprocess.CompletedProcess:
    """`x2 ARGS` as a user runs it: its exit status, stdout and stderr.

    By default the command runs in this process (click's runner), so it takes
    the suite's warm framework workers instead of importing TensorFlow or
    Paddle again in a fresh CLI process; its frameworks still run in workers,
    as in the CLI. An exception that escapes the command gives what Python
    would: status 1 and the traceback on stderr (a test that refuses bare
    tracebacks sees it). `process=True` (or a `cwd`) runs `python -m x2` in a
    subprocess: for tests of the process itself (its start-up, its workers'
    lifetime, its exit)."""
    if process or cwd is not None or os.environ.get("X2_TEST_CLI_PROCESS"):
        return subprocess.run([sys.executable, "-m", "x2", *args], capture_output=True,
                              text=True, env={**ENV, "COLUMNS": "200"}, cwd=cwd)
    import traceback

    from click.testing import CliRunner

    from x2.cli import main
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, list(args), prog_name="x2")
    stderr, code = result.stderr, result.exit_code
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))
        code = 1
    return subprocess.CompletedProcess(["x2", *args], code, result.stdout, stderr)


def convert_then_check(model, out, **kwargs):
    """x2.convert.convert for a test that runs x2 check on the result next:
    the check judges the written model against its source at more sizes than
    convert's verify does (tests/test_verify.py covers the verify itself), so
    verifying twice would only cost the suite time."""
    import dataclasses

    from x2.contracts import EmitOptions
    from x2.convert import convert
    options = kwargs.pop("emit_options", None) or {}
    if isinstance(options, EmitOptions):
        options = dataclasses.replace(options, verify=False)
    else:
        options = {**options, "verify": False}
    return convert(model, out, emit_options=options, **kwargs)
