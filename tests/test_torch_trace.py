"""The quick torch capture (x2/frontends/torch/trace.py): a module whose
trace is the model is read from torch.jit.trace, with the same numbers and
the same readable code as through torch.export; anything a trace could get
wrong goes to torch.export. Torch runs only in worker processes."""
import json

import numpy as np
import pytest

import test_finetune as finetune

from conftest import ROOT, run_cli
from x2.__main__ import _source
from x2.convert import convert
from x2.frontends.torch.capture import _agree
from x2.check.parity import check

MODELS = str(ROOT / "tests" / "torch_trace_models.py")
RTOL = 1e-5  # small nets in fp32


def _convert(tmp_path, name, shapes, target="torch", **kwargs):
    out = tmp_path / f"{name}_{target}"
    report = convert(f"{MODELS}:{name}", str(out), source="torch", target=target,
                     input_shapes=shapes, **kwargs)
    return report, out


def _assert_parity(name, out, target, rtol=RTOL):
    result = check(f"{MODELS}:{name}", str(out), source="torch", target=target, rtol=rtol)
    for r in result["outputs"]:
        assert not r["ref_constant"], f"reference output {r['name']} is constant"
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    return result


@pytest.mark.parametrize("target", ["torch", "onnx", "paddle"])
def test_a_straight_line_block_is_traced_with_parity_and_one_call_per_function(tmp_path,
                                                                                target):
    report, out = _convert(tmp_path, "block", {"x": [2, 8, 32]}, target)
    assert report.source["capture"] == "torch.jit.trace", report.source.get("not_traced")
    _assert_parity("block", out, target)
    if target == "torch":
        code = (out / "model.py").read_text()
        assert code.count("scaled_dot_product_attention(") == 1
        assert code.count("nn.LayerNorm(") == 2 and code.count("nn.Linear(") == 4
        assert code.count("F.gelu(") == 1 and code.count("F.silu(") == 1


@pytest.mark.parametrize("target", ["torch", "onnx"])
def test_inplace_relu_on_a_fresh_result_is_traced(tmp_path, target):
    report, out = _convert(tmp_path, "inplace_cnn", {"input": [2, 3, 16, 16]}, target)
    assert report.source["capture"] == "torch.jit.trace", report.source.get("not_traced")
    _assert_parity("inplace_cnn", out, target, rtol=1e-4)


def test_tied_weights_and_dict_outputs_keep_their_names(tmp_path):
    report, out = _convert(tmp_path, "tied_heads", {"ids": [2, 7]},
                           options={"input_dtypes": {"ids": "int64"}})
    assert report.source["capture"] == "torch.jit.trace", report.source.get("not_traced")
    assert [o["name"] for o in report.outputs] == ["logits", "hidden"]
    _assert_parity("tied_heads", out, "torch")


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_a_traced_module_converts_for_training_with_gradient_parity(tmp_path, target):
    model = f"{MODELS}:block"
    out = finetune.convert(tmp_path, "torch", target, model, input_shapes={"x": [2, 8, 32]})
    assert json.loads((out / "report.json").read_text())["source"]["capture"] == \
        "torch.jit.trace"
    found = finetune.probe(target, out)
    assert found["trainable"] == finetune.torch_source_trainable(model) == 8544
    assert found["loss_after"] < found["loss_before"]
    grads = finetune.grad_check("torch", target, model, out)
    assert grads["passed"] and grads["worst"]["max_rel"] < 1e-4


@pytest.mark.parametrize("name, why", [
    ("read_before_write", "writes a value"),
    ("branches", "Converting a tensor to a Python boolean"),
])
def test_what_a_trace_could_get_wrong_goes_to_torch_export(tmp_path, name, why):
    report, out = _convert(tmp_path, name, {"x": [3, 6]})
    assert report.source["capture"] == "torch.export"
    assert why in report.source["not_traced"]
    _assert_parity(name, out, "torch")


def test_the_trace_must_agree_with_the_module():
    want = [np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)]
    assert _agree(want, [want[0] * (1 + 1e-6)])
    assert not _agree(want, [want[0] + 1e-2])
    assert not _agree(want, [want[0].astype(np.float64)])
    assert not _agree(want, [want[0].reshape(4, 3)])
    assert not _agree(want, want * 2)


def test_the_reader_starts_early_only_for_a_torch_conversion(tmp_path):
    assert _source(["convert", "--from", "torch", "--to", "onnx"]) == "torch"
    assert _source(["convert", "--to", "onnx", "--from=torch"]) == "torch"
    assert _source(["convert", "--from", "torch", "--help"]) is None
    assert _source(["check", "--from", "torch"]) is None
    # A command line that fails after the early start leaves no worker or scratch behind.
    proc = run_cli("convert", "--from", "torch", "--to", "nowhere", "--model", "m.py:f",
                   "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "nowhere" in proc.stderr
    assert not (tmp_path / "out").exists()
