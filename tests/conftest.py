"""Shared fixtures. Models are built in subprocesses (TensorFlow must never be
imported into the pytest process together with paddle)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Lint the IR after the frontend and after every pass in every conversion the
# suite runs, in-process and in the CLI subprocesses (x2/passes/__init__.py).
os.environ.setdefault("X2_LINT", "1")
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
ENV.pop("X2_REUSE_WORKERS", None)   # CLI runs keep x2's default (see warm_workers)


def _build(args: list[str], out: Path) -> Path:
    if not out.exists():
        proc = subprocess.run([sys.executable, *args, str(out)], capture_output=True, text=True,
                              env=ENV, cwd=ROOT)
        assert proc.returncode == 0, f"building {args} failed:\n{proc.stderr[-3000:]}"
    return out


# No test takes minutes; one that hangs (a model whose loop never ends on the
# inputs it was given) fails here instead of holding CI until its limit.
TEST_TIME_LIMIT_S = 600


@pytest.fixture(autouse=True)
def time_limit():
    def expired(signum, frame):
        raise TimeoutError(f"the test ran longer than {TEST_TIME_LIMIT_S} s")
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
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def sample(model_dir):
    """sample(name) -> SavedModel path of a built-in sample (x2/samples.py)."""
    return lambda name: _build(["-m", "x2.samples", name], model_dir / f"sample_{name}")


@pytest.fixture(scope="session")
def tf_model(model_dir):
    """tf_model(name) -> path of a test model from tests/tf_models.py."""
    return lambda name: _build([str(ROOT / "tests" / "tf_models.py"), name], model_dir / name)


def run_cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "x2", *args], capture_output=True, text=True,
                          env={**ENV, "COLUMNS": "200"}, cwd=cwd)
