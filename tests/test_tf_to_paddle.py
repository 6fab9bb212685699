"""TF SavedModel -> Paddle: the converted model, loaded through model.py and
through paddle.jit.load, matches TensorFlow within rtol 1e-4 of the output's
scale on CPU (fp32; the errors seen are ~1e-7..1e-6, see the closing note).
Every run also asserts the reference output is not constant, so a collapsed
random network cannot pass trivially."""
import json

import pytest

from conftest import convert_then_check
from x2.convert import convert
from x2.check.parity import check

RTOL = 1e-4


def _convert_and_check(model, out, batch=2, serving=False, **kwargs):
    report = convert_then_check(str(model), str(out), **kwargs)
    result = check(str(model), str(out), rtol=RTOL, batch=batch, serving=serving)
    runners = {r["runner"] for r in result["outputs"]}
    assert runners == {"paddle:python", "paddle:jit.load"} | ({"paddle:inference"} if serving
                                                              else set())
    for r in result["outputs"]:
        assert not r["ref_constant"], f"reference output {r['name']} is constant"
        assert r["ref_scale"] > 1e-3, f"reference output {r['name']} has vanished"
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    return report, result


@pytest.mark.parametrize("name", ["small_cnn", "mlp", "residual_cnn"])
def test_small_models_match_tensorflow(sample, tmp_path, name):
    report, _ = _convert_and_check(sample(name), tmp_path / "out")
    out = tmp_path / "out"
    # the weights written once: model.py reads the file Paddle Inference serves
    assert (out / "model.py").is_file() and not (out / "model.pdparams").exists()
    assert (out / "inference" / "model.pdiparams").is_file()
    assert (out / "inference" / "state_dict_keys.json").is_file()
    saved = json.loads((out / "report.json").read_text())
    assert saved["ops_mapped"] == report.ops_mapped > 0
    # NHWC in, NHWC out: at most the one Transpose at the image input remains.
    assert saved["transposes_left"] <= len(saved["inputs"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50"])
def test_keras_applications_match_tensorflow(sample, tmp_path, name):
    report, result = _convert_and_check(sample(name), tmp_path / "out")
    assert report.transposes_left == 1
    assert report.inputs[0]["shape"] == [None, 224, 224, 3]
    assert report.outputs[0]["shape"] == [None, 1000]


def test_raw_tf_ops_and_two_outputs(tf_model, tmp_path):
    """FusedBatchNormV3, explicit pads, depthwise VALID, reductions and a dict
    of two outputs, kept in the signature's (sorted) order."""
    report, result = _convert_and_check(tf_model("raw_ops"), tmp_path / "out")
    assert [o["name"] for o in report.outputs] == ["logits", "probs"]
    assert report.source["framework"] == "tf"
    assert report.ir_ops["batch_norm"] == 1  # kept as nn.BatchNorm2D, fine-tunable
    assert {r["name"] for r in result["outputs"]} == {"logits", "probs"}


def test_dynamic_batch_is_kept(sample, tmp_path):
    model = sample("small_cnn")
    convert_then_check(str(model), str(tmp_path / "out"))
    for batch in (1, 7):
        result = check(str(model), str(tmp_path / "out"), rtol=RTOL, batch=batch)
        assert result["passed"] and result["input_shapes"] == [[batch, 32, 32, 3]]


def test_input_shape_fixes_the_batch(sample, tmp_path):
    model = sample("small_cnn")
    report = convert_then_check(str(model), str(tmp_path / "out"), input_shapes={"image": [3, 32,
                                32, 3]})
    assert report.inputs[0]["shape"] == [3, 32, 32, 3]
    assert check(str(model), str(tmp_path / "out"), rtol=RTOL)["passed"]


def test_generated_code_is_readable_layers(sample, tmp_path):
    convert(str(sample("small_cnn")), str(tmp_path / "out"))
    code = (tmp_path / "out" / "model.py").read_text()
    assert "class Model(nn.Layer)" in code and "def load_model(path=None)" in code
    assert code.count("nn.Conv2D(") == 4 and code.count("nn.Linear(") == 2
    compile(code, "model.py", "exec")


def test_zero_pads_before_pools_run_in_paddle_inference(tf_model, tmp_path):
    """Paddle Inference (default config, oneDNN on) crashed (Keras ResNet50:
    SIGSEGV) or hung (this model) on the explicit all-dims F.pad x2 wrote
    before a pool. The pad of ReLU output
    now is the pool's padding; one x2 cannot fold is written in pad2d form;
    `x2 check` runs both through Paddle Inference."""
    out = tmp_path / "out"
    _convert_and_check(tf_model("padded_stems"), out, serving=True)
    code = (out / "model.py").read_text()
    assert code.count("F.pad(") == 1 and "[0, 1, 1, 2]" in code, code
    assert "padding=[1, 1]" in code
