"""`x2 check` refuses a reference that does not depend on its input: a small
MobileNetV2 with random BatchNorm statistics gives logits that differ by less
than the tolerance between images, so a converted model that ignored its
input would "pass". The same net with statistics from data passes."""
import json

import pytest

from conftest import run_cli

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("vacuous_reference")


@pytest.fixture(scope="module")
def converted(tf_model, tmp_path_factory):
    pair = tf_model("mobilenet_bn_pair")
    out = tmp_path_factory.mktemp("vacuous")
    for name in ("random_bn", "calibrated_bn"):
        # (--no-verify: every test here runs x2 check on it, which is what is tested)
        proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(pair / name),
                       "--out", str(out / name), "--quiet", "--no-verify")
        assert proc.returncode == 0, proc.stderr
    return pair, out


def _check(pair, out, name, tmp_path, *extra):
    report = tmp_path / f"{name}.json"
    proc = run_cli("check", "--from", "tf", "--to", "onnx", "--model", str(pair / name),
                   "--converted", str(out / name), "--json", str(report), *extra)
    return proc, json.loads(report.read_text()) if report.exists() else None


def test_random_batchnorm_statistics_are_a_vacuous_reference(converted, tmp_path):
    pair, out = converted
    proc, result = _check(pair, out, "random_bn", tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "is the same for different inputs, so parity would prove nothing" in proc.stdout
    assert result["passed"] is False and result["input_independent"]
    row = result["outputs"][0]
    # The converted model does match this reference: only the guard fails it.
    assert row["input_independent"] and row["max_rel"] < 1e-4 and not row["passed"]


def test_a_vacuous_reference_can_be_allowed_as_a_warning(converted, tmp_path):
    pair, out = converted
    proc, result = _check(pair, out, "random_bn", tmp_path, "--allow-input-independent")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any("is the same for different inputs" in w for w in result["warnings"])


def test_batchnorm_statistics_from_data_give_a_reference_that_depends_on_the_input(
        converted, tmp_path):
    pair, out = converted
    proc, result = _check(pair, out, "calibrated_bn", tmp_path, "--rtol", "1e-4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert result["passed"] and result["input_independent"] is None
    assert not any(r.get("input_independent") for r in result["outputs"])


def test_a_single_item_batch_is_probed_with_other_inputs(converted, tmp_path):
    """With one batch of one image nothing is compared within the batch: the
    source runs once more on other inputs."""
    pair, out = converted
    proc, result = _check(pair, out, "random_bn", tmp_path, "--batch", "1")
    assert proc.returncode == 1 and result["input_independent"], proc.stdout
    proc, result = _check(pair, out, "calibrated_bn", tmp_path, "--batch", "1")
    assert proc.returncode == 0 and result["passed"], proc.stdout


def test_input_spread_compares_batch_items_and_batches():
    import numpy as np

    from x2.check.parity import _samples_by_input, input_spread
    image = np.zeros((2, 4, 4, 3), np.float32)
    same = np.array([[1.0, 2.0], [1.0, 2.0 + 1e-8]], np.float32)
    differs = np.array([[1.0, 2.0], [1.5, 2.0]], np.float32)
    assert input_spread(_samples_by_input([[same]], [[image]], 0)) < 1e-6
    assert input_spread(_samples_by_input([[differs]], [[image]], 0)) == 0.5
    # One item per batch: the batches (different seeds) are compared.
    one = np.zeros((1, 4, 4, 3), np.float32)
    assert input_spread(_samples_by_input([[differs[:1]], [differs[1:]]], [[one], [one]],
                                          0)) == 0.5
    # A single item in a single batch gives nothing to compare: x2 check probes.
    assert input_spread(_samples_by_input([[differs[:1]]], [[one]], 0)) is None
