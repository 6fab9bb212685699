"""tools/parity_check.py / `x2 check`: batches, real inputs, per-output
tolerances, devices (a missing GPU is a clear error; --soft-placement falls
back), reduced precision, and --bisect naming the corrupted layer."""
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT
from x2.convert import convert
from x2.process.isolation import run_step
from x2.check.parity import check

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("parity")

SCRIPT = str(ROOT / "tools" / "parity_check.py")
# A later layer of small_cnn: bisect must get past the earlier, matching ones.
# LAYER names its ops in the SavedModel; the written layer keeps its Keras name.
LAYER, KERAS_LAYER = "conv2d_2_1", "conv2d_2"

_CORRUPT = """
import sys
fw, path, key = sys.argv[1:4]
if fw == "paddle":  # in place, in the one weights file all three runners read
    import json
    from pathlib import Path
    import numpy as np
    from x2.emitters.paddle_params import read_params
    from x2.ir.serialize import mapped_root
    keys = json.loads((Path(path).parent / "state_dict_keys.json").read_text())
    weight = read_params(Path(path))[keys.index(key)]
    with open(path, "r+b") as fh:
        fh.seek(weight.__array_interface__["data"][0] -
                mapped_root(weight).__array_interface__["data"][0])
        fh.write((np.asarray(weight) * 1.5 + 0.1).astype(weight.dtype).tobytes())
else:
    import torch
    state = torch.load(path, weights_only=True)
    state[key] = state[key] * 1.5 + 0.1
    torch.save(state, path)
"""


def parity_cli(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          env={**ENV, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def cnn(sample, tmp_path_factory):
    model = sample("small_cnn")
    root = tmp_path_factory.mktemp("parity")
    outs = {}
    for target in ("paddle", "torch"):
        outs[target] = root / target
        convert(str(model), str(outs[target]), target=target)
    return model, outs


def corrupted(out, tmp_path, framework):
    bad = tmp_path / f"bad_{framework}"
    shutil.copytree(out, bad)
    weights = bad / ("inference/model.pdiparams" if framework == "paddle" else "model.pt")
    proc = subprocess.run([sys.executable, "-c", _CORRUPT, framework, str(weights),
                           f"{KERAS_LAYER}.weight"], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    return bad


def test_report_maps_converted_variables_to_source_nodes(cnn):
    report = json.loads((cnn[1]["paddle"] / "report.json").read_text())
    code = (cnn[1]["paddle"] / "model.py").read_text()
    conv = [v for v in report["values"] if v["source"]["name"].endswith(f"{LAYER}/convolution")
            and v["ir_op"] == "conv2d"]
    assert len(conv) == 1 and f"{conv[0]['var']} = self.{KERAS_LAYER}(" in code
    assert conv[0]["source"]["mapper"] and conv[0]["source"]["op"] == "Conv2D"


def test_clean_conversion_passes_several_batches(cnn, tmp_path):
    model, outs = cnn
    proc = parity_cli("--from", "tf", "--to", "paddle", "--model", str(model), "--converted",
                      str(outs["paddle"]), "--batches", "3", "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    # 3 seeded batches at the example batch size (2), then the dynamic batch at
    # 1 and 3 (x2/check/shapes.py)
    assert [b["seed"] for b in result["batches"]] == [0, 1, 2, 3, 4]
    assert [b["input_shapes"][0][0] for b in result["batches"]] == [2, 2, 2, 1, 3]
    # batches x (python, jit.load, Paddle Inference: x2 check runs it by default)
    assert len(result["outputs"]) == 5 * 3
    assert all(r["passed"] and not r["ref_constant"] for r in result["outputs"])


def test_real_npz_inputs_and_per_output_tolerance(cnn, tmp_path):
    model, outs = cnn
    rng = np.random.default_rng(42)
    np.savez(tmp_path / "real.npz", image=rng.uniform(0, 1, (5, 32, 32, 3)).astype(np.float32))
    result = check(str(model), str(outs["torch"]), target="torch",
                   inputs_file=str(tmp_path / "real.npz"), tolerances={"output_0": (1e-3, None)})
    assert result["passed"] and result["input_shapes"] == [[5, 32, 32, 3]]
    assert result["inputs"].startswith("file") and result["outputs"][0]["rtol"] == 1e-3
    np.save(tmp_path / "wrong.npy", np.zeros((2, 3, 32, 32), np.float32))
    proc = parity_cli("--from", "tf", "--to", "torch", "--model", str(model), "--converted",
                      str(outs["torch"]), "--inputs-file", str(tmp_path / "wrong.npy"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "expects ['N', 32, 32, 3]" in proc.stderr


def test_corrupted_paddle_weight_fails_and_bisect_names_the_layer(cnn, tmp_path):
    model, outs = cnn
    bad = corrupted(outs["paddle"], tmp_path, "paddle")
    proc = parity_cli("--from", "tf", "--to", "paddle", "--model", str(model), "--converted",
                      str(bad), "--bisect", "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    failed = {(r["runner"], r["name"]) for r in result["outputs"] if not r["passed"]}
    # model.py, jit.load and Paddle Inference read one weights file (x2 writes
    # the weights once: inference/model.pdiparams).
    assert failed == {(f"paddle:{mode}", "output_0") for mode in ("python", "jit.load",
                                                                   "inference")}
    first = result["bisect"]["first_divergence"]
    assert first["source_name"].endswith(f"{LAYER}/convolution"), first
    assert first["source_op"] == "Conv2D" and first["ir_op"] == "conv2d"
    assert result["bisect"]["compared"] > 5  # the layers before it were checked and matched
    assert "first diverging op" in proc.stdout and LAYER in proc.stdout


def test_corrupted_torch_weight_bisect(cnn, tmp_path):
    model, outs = cnn
    bad = corrupted(outs["torch"], tmp_path, "torch")
    result = check(str(model), str(bad), target="torch", bisect=True)
    assert not result["passed"]
    assert {r["name"] for r in result["outputs"] if not r["passed"]} == {"output_0"}
    first = result["bisect"]["first_divergence"]
    assert first["source_name"].endswith(f"{LAYER}/convolution"), first
    assert first["var"] and first["max_rel"] > 1e-2


def test_missing_gpu_is_a_clear_error_and_soft_placement_falls_back(cnn):
    model, outs = cnn
    if "gpu:3" in run_step("torch.devices", {})["devices"]:
        pytest.skip("this machine has a gpu:3")
    args = ["--from", "tf", "--to", "torch", "--model", str(model), "--converted",
            str(outs["torch"]), "--device", "gpu:3"]
    proc = parity_cli(*args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "gpu:3 requested" in proc.stderr and "available: cpu" in proc.stderr
    proc = parity_cli(*args, "--soft-placement")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning:" in proc.stderr and "running the" in proc.stderr and "on cpu" in proc.stderr
    proc = parity_cli(*args[:-2], "--target-device", "tpu")
    assert proc.returncode == 2 and "expected cpu, gpu or gpu:N" in proc.stderr


@pytest.mark.parametrize("precision,default_rtol", [("fp16", 1e-2), ("bf16", 5e-2)])
def test_reduced_precision_reports_error_against_fp32_source(cnn, precision, default_rtol):
    model, outs = cnn
    result = check(str(model), str(outs["torch"]), target="torch", precision=precision)
    assert result["precision"] == precision and result["rtol"] == default_rtol
    row = result["outputs"][0]
    assert result["passed"], row
    assert 0 < row["max_rel"] <= default_rtol  # really ran in reduced precision
    assert any("torch" in n for n in result["notes"])


def test_paddle_reduced_precision_on_cpu_says_what_it_did(cnn):
    model, outs = cnn
    result = check(str(model), str(outs["paddle"]), precision="bf16")
    assert result["passed"]
    assert any("emulated" in n for n in result["notes"])


@pytest.mark.gpu
def test_gpu_check(cnn):
    model, outs = cnn
    if run_step("torch.devices", {})["devices"] == ["cpu"]:
        pytest.skip("no GPU on this machine")
    result = check(str(model), str(outs["torch"]), target="torch", device="gpu:0")
    assert result["passed"] and result["devices"] == {"source": "gpu:0", "target": "gpu:0"}
