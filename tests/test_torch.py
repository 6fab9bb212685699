"""PyTorch in and PyTorch out: torch models (tests/torch_models.py) to Torch
and Paddle, TF samples to Torch, and the frontend's error cases. Torch runs
only in worker processes and subprocesses, never in the pytest process."""
import json
import pickle
import re
import subprocess
import sys

import pytest

from conftest import ENV, ROOT, convert_then_check, run_cli
from x2.convert import convert
from x2.errors import ModelLoadError, UnsupportedOpsError
from x2.check.parity import check

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("torch")

RTOL = 1e-4
MODELS = str(ROOT / "tests" / "torch_models.py")
SHAPES = {"resnet": {"x": [2, 3, 32, 32]}, "encoder": {"tokens": [2, 16]},
          "mlp": {"x": [3, 20]}}
OPTIONS = {"encoder": {"input_dtypes": {"tokens": "int64"}}}
RUNNERS = {"torch": {"torch:python"}, "paddle": {"paddle:python", "paddle:jit.load"},
           "onnx": {"onnx:onnxruntime"}}


def _assert_parity(result, target):
    assert {r["runner"] for r in result["outputs"]} == RUNNERS[target]
    for r in result["outputs"]:
        assert not r["ref_constant"], f"reference output {r['name']} is constant"
        assert r["ref_scale"] > 1e-3, f"reference output {r['name']} has vanished"
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"


@pytest.mark.parametrize("target", ["torch", "paddle"])
@pytest.mark.parametrize("name", ["resnet", "encoder", "mlp"])
def test_torch_models_convert_with_parity(tmp_path, name, target):
    model, out = f"{MODELS}:{name}", tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes=SHAPES[name], options=OPTIONS.get(name))
    assert report.source["input_shapes"] == SHAPES[name]
    _assert_parity(check(model, str(out), source="torch", target=target, rtol=RTOL), target)


def flat_dels(out, tmp_path) -> bool:
    """--flat: the one forward lets each intermediate go after its last read
    (a `del` line), none before."""
    flat = tmp_path / "flat"
    convert(f"{MODELS}:resnet", str(flat), source="torch", target="torch",
            input_shapes=SHAPES["resnet"], emit_options={"verify": False, "flat": True})
    code = (flat / "model.py").read_text()
    lines = code[code.index("    def forward"):code.index("def load_model")].splitlines()
    released = {i: line.strip()[4:].split(", ") for i, line in enumerate(lines)
                if line.strip().startswith("del ")}
    assert released
    for i, names in released.items():
        for name in names:
            assert not any(re.search(rf"(?<![\w.]){name}\b", later.split("  #")[0])
                           for later in lines[i + 1:]), name
    return True


def test_generated_torch_code_is_layers_and_runs_standalone(tmp_path):
    out = tmp_path / "out"
    convert(f"{MODELS}:resnet", str(out), source="torch", target="torch",
            input_shapes=SHAPES["resnet"])
    code = (out / "model.py").read_text()
    assert "class Model(nn.Module)" in code and "def load_model(path=None)" in code
    assert code.count("nn.Conv2d(") == 7 and code.count("nn.BatchNorm2d(") == 6
    # the source's Block class holds its layers at their state_dict keys
    assert "class Block(nn.Module):" in code and "self.conv1 = nn.Conv2d(" in code
    assert "self.layer1 = Block()" in code
    # An intermediate goes when its name is taken by the next value, as a
    # person writes it (eager torch keeps a name's tensor until forward
    # returns: 1.5x a ResNet-50's time), and no `del` lines.
    forwards = code[code.index("    def forward"):code.index("def load_model")]
    assert not re.search(r"^\s+del ", forwards, re.M)
    assert "        conv1 = self.bn1(conv1)\n        conv1 = torch.relu(conv1)\n" in forwards
    assert flat_dels(out, tmp_path)
    script = ("import torch, model\n"
              "m = model.load_model()\n"
              "state = torch.load('model.pt', weights_only=True)\n"
              "assert m.fc.weight.shape == (10, 32), m.fc.weight.shape\n"
              "y = m(torch.randn(2, 3, 32, 32))\n"
              "print(tuple(y.shape))\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=out, capture_output=True,
                          text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "(2, 10)"


def test_channels_last_keeps_parity(tmp_path):
    out = tmp_path / "out"
    convert_then_check(f"{MODELS}:resnet", str(out), source="torch", target="torch",
                       input_shapes=SHAPES["resnet"], emit_options={"channels_last": True})
    assert "CHANNELS_LAST = True" in (out / "model.py").read_text()
    _assert_parity(check(f"{MODELS}:resnet", str(out), source="torch", target="torch",
                         rtol=RTOL), "torch")


@pytest.mark.parametrize("name", ["small_cnn", "mlp", "residual_cnn"])
def test_tf_samples_to_torch(sample, tmp_path, name):
    model, out = sample(name), tmp_path / "out"
    report = convert_then_check(str(model), str(out), source="tf", target="torch")
    assert report.inputs[0]["shape"][-1] in (3, report.inputs[0]["shape"][-1])
    _assert_parity(check(str(model), str(out), source="tf", target="torch", rtol=RTOL), "torch")


@pytest.mark.slow
def test_mobilenet_v2_to_torch(sample, tmp_path):
    model, out = sample("mobilenet_v2"), tmp_path / "out"
    report = convert_then_check(str(model), str(out), source="tf", target="torch")
    assert report.inputs[0]["shape"] == [None, 224, 224, 3]  # NHWC interface kept
    _assert_parity(check(str(model), str(out), source="tf", target="torch", rtol=RTOL), "torch")


_EXPORT = """
import sys, torch
sys.path.insert(0, {tests!r})
import torch_models
m = torch_models.mlp()
ep = torch.export.export(m, (torch.randn(3, 20),))
torch.export.save(ep, {pt2!r})
torch.jit.save(torch.jit.script(m), {ts!r})
torch.jit.save(torch.jit.trace(torch_models.resnet(), torch.randn(2, 3, 32, 32)), {ts_cnn!r})
"""


@pytest.fixture(scope="module")
def saved_models(tmp_path_factory):
    """The MLP as a .pt2 program and scripted (TorchScript), the CNN traced."""
    d = tmp_path_factory.mktemp("saved")
    paths = {"pt2": d / "mlp.pt2", "ts": d / "mlp_script.pt", "ts_cnn": d / "resnet.ts"}
    proc = subprocess.run([sys.executable, "-c", _EXPORT.format(
        tests=str(ROOT / "tests"), **{k: str(v) for k, v in paths.items()})],
        capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return paths


def test_pt2_program_converts(saved_models, tmp_path):
    pt2, out = saved_models["pt2"], tmp_path / "out"
    report = convert_then_check(str(pt2), str(out), source="torch", target="paddle")
    assert report.inputs[0]["shape"] == [3, 20]
    _assert_parity(check(str(pt2), str(out), source="torch", target="paddle", rtol=RTOL),
                   "paddle")


@pytest.mark.parametrize("key, target, shape", [("ts", "paddle", [3, 20]),
                                                ("ts_cnn", "onnx", [2, 3, 32, 32])])
def test_torchscript_converts_with_parity(saved_models, tmp_path, key, target, shape):
    model, out = str(saved_models[key]), tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes={"x": shape})
    assert report.inputs[0]["shape"] == shape
    _assert_parity(check(model, str(out), source="torch", target=target, rtol=RTOL), target)


def test_corrupt_torchscript_is_a_clear_cli_error(saved_models, tmp_path):
    data = saved_models["ts"].read_bytes()
    for name, blob in [("truncated.pt", data[: len(data) // 2]),
                       ("garbled.pt", data[:200] + bytes(len(data) - 400) + data[-200:])]:
        bad = tmp_path / name
        bad.write_bytes(blob)
        proc = run_cli("convert", "--from", "torch", "--to", "paddle", "--model", str(bad),
                       "--input-shape", "x:3,20", "--out", str(tmp_path / "out"))
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and str(bad) in proc.stderr, proc.stderr
        assert "truncated or corrupt" in proc.stderr or "TorchScript" in proc.stderr


@pytest.mark.parametrize("target", ["paddle", "onnx"])
@pytest.mark.parametrize("name", ["mlp", "resnet"])
def test_dynamic_batch_runs_at_batch_1_and_5(tmp_path, name, target):
    out = tmp_path / "out"
    (x_shape,) = SHAPES[name].values()
    proc = run_cli("convert", "--from", "torch", "--to", target, "--model", f"{MODELS}:{name}",
                   "--input-shape", "x:" + ",".join(map(str, x_shape)), "--dynamic-batch",
                   "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((out / "report.json").read_text())
    assert saved["source"]["options"]["dynamic_batch"] is True
    assert saved["inputs"][0]["shape"] == [None] + x_shape[1:]
    for batch in (1, 5):
        result = check(f"{MODELS}:{name}", str(out), source="torch", target=target, rtol=RTOL,
                       batch=batch)
        assert result["input_shapes"][0][0] == batch
        for r in result["outputs"]:
            assert r["passed"], f"batch {batch} {r['runner']}: rel err {r['max_rel']:.3e}"


def test_unsupported_aten_ops_are_listed_at_once(tmp_path):
    with pytest.raises(UnsupportedOpsError) as info:
        convert(f"{MODELS}:unsupported", str(tmp_path / "out"), source="torch",
                target="torch", input_shapes={"x": [4, 5]})
    unsupported = info.value.details["unsupported"]
    assert unsupported["aten.cumprod.default"]["count"] == 2
    assert unsupported["aten.kthvalue.default"]["count"] == 1
    assert not (tmp_path / "out").exists()


class _Planted:
    """Unpickling this creates a file: proof that code from the pickle ran."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickle_needing_trust_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps(_Planted(str(marker))))
    with pytest.raises(ModelLoadError, match="--trust-pickle"):
        convert(str(evil), str(tmp_path / "out"), source="torch", target="torch")
    assert not marker.exists()
    proc = run_cli("convert", "--from", "torch", "--to", "torch", "--model", str(evil),
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "--trust-pickle" in proc.stderr
    assert "Traceback" not in proc.stderr and not marker.exists()


@pytest.mark.parametrize("spec, message", [
    ("no_such_pkg.models:build", "No module named 'no_such_pkg'"),
    (f"{MODELS}:no_factory", "has no callable 'no_factory'"),
    ("just-a-name", "expected 'package.module:factory'"),
])
def test_bad_module_spec_is_a_clear_cli_error(tmp_path, spec, message):
    proc = run_cli("convert", "--from", "torch", "--to", "paddle", "--model", spec,
                   "--input-shape", "x:1,3", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_missing_input_shape_names_the_forward_arguments(tmp_path):
    proc = run_cli("convert", "--from", "torch", "--to", "torch", "--model",
                   f"{MODELS}:resnet", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "--input-shape" in proc.stderr and "forward(x)" in proc.stderr


def test_cli_check_reads_options_from_the_report(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "torch", "--to", "torch", "--model",
                   f"{MODELS}:encoder", "--input-shape", "tokens:2,16", "--input-dtype", "int64",
                   "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    saved = json.loads((out / "report.json").read_text())
    assert saved["source"]["options"]["input_dtypes"] == {"*": "int64"}
    assert saved["inputs"][0]["dtype"] == "int64"
    proc = run_cli("check", "--from", "torch", "--to", "torch", "--model", f"{MODELS}:encoder",
                   "--converted", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("target", ["onnx", "paddle", "torch"])
def test_mixed_int_and_float_operands_follow_torch_promotion(tmp_path, target):
    """float32 with int64 tensors, 0-d tensors and Python scalars stays float32
    (numpy's rule would give float64: a type error in ONNX and paddle.jit.save,
    a wrong dtype in torch), and int / int is true division."""
    model, out = f"{MODELS}:alibi_scores", tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes={"x": [2, 6, 8]})
    assert [o["dtype"] for o in report.outputs] == ["float32"]
    _assert_parity(check(model, str(out), source="torch", target=target, rtol=RTOL), target)
