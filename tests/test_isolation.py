"""Warm workers (x2/process/isolation.py `reuse_workers`): steps of one framework
family share a worker, frameworks never share one, and a crash or a hang in a
warm worker is reported as in a fresh one and costs only that worker."""
from __future__ import annotations

import pytest

from conftest import ROOT
from x2.process import isolation
from x2.convert import convert
from x2.errors import ModelLoadError, StepCrashed
from x2.process.isolation import reuse_workers, run_step

CRASH = f"{ROOT / 'tests' / 'fixtures' / 'crash_module.py'}:factory"


@pytest.fixture(autouse=True)
def empty_pool():
    """Each test starts and ends with no warm worker."""
    isolation._POOL.close()
    yield
    isolation._POOL.close()


def _servers(family: str) -> list:
    return isolation._POOL.idle.get((family,), [])


def test_steps_of_one_family_share_a_worker_and_frameworks_never_do(sample, tmp_path):
    with reuse_workers():
        convert(str(sample("mlp")), str(tmp_path / "a"), source="tf", target="onnx")
        (first,) = _servers("onnx")
        convert(str(sample("mlp")), str(tmp_path / "b"), source="tf", target="onnx")
        # each conversion: the emit step, then the verify's onnxruntime run
        assert _servers("onnx") == [first] and first.steps == 4
        assert _servers("tf")[0] is not first   # the reader's worker is TensorFlow's own
        assert first.proc.args[-2] == "onnx"


def test_a_crash_in_a_warm_worker_names_the_step_and_the_next_step_gets_a_new_one(
        sample, tmp_path):
    with reuse_workers():
        # ... and what it was doing: the user's own factory code, not x2's.
        with pytest.raises(StepCrashed, match=r"step 'torch.read' crashed \(SIGSEGV\) inside "
                                              r"the framework while calling factory\(\) of "
                                              r"'.*crash_module.py'; nothing was written"):
            convert(CRASH, str(tmp_path / "crash"), source="torch", target="onnx",
                    input_shapes={"x": [1, 3]})
        assert not (tmp_path / "crash").exists()
        assert _servers("torch") == []   # the dead worker is not given back
        convert(str(ROOT / "tests" / "torch_models.py") + ":mlp", str(tmp_path / "ok"),
                source="torch", target="onnx", input_shapes={"x": [2, 20]})
        assert (tmp_path / "ok" / "model.onnx").exists()


def test_an_error_in_a_warm_worker_keeps_its_kind_and_the_worker(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not a model" * 10)
    with reuse_workers():
        for _ in range(2):
            with pytest.raises(ModelLoadError, match="garbage.onnx"):
                convert(str(garbage), str(tmp_path / "out"), source="onnx", target="torch")
        assert [s.steps for s in _servers("onnx")] == [2]


def test_a_hung_step_is_stopped_at_its_timeout(tmp_path):
    with reuse_workers():
        with pytest.raises(StepCrashed, match="did not finish within 0.01 s"):
            run_step("tf.devices", {}, timeout=0.01)
        assert _servers("tf") == []
