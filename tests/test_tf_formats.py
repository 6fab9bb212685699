"""--from tf on every input form: frozen .pb, TF1 checkpoint (+meta), TF1
SavedModel with tags, SavedModel with two signatures, .keras / .h5, TF2
checkpoint with --model-def. Each converts to paddle, onnx and torch and matches
TensorFlow within rtol 1e-4 of the output scale; pruning, dynamic batch, the
wider op set (TopKV2, LRN, einsum, Keras Dense on 3-D inputs) and Keras code
safety."""
from pathlib import Path

import pytest

from conftest import ROOT, convert_then_check
from x2.convert import convert
from x2.errors import X2Error
from x2.check.parity import check

RTOL = 1e-4
MODEL_DEF = f"{ROOT / 'tests' / 'tf_models.py'}:keras_zoo"


def _parity(model, out, target, batch=2, **kwargs):
    report = convert_then_check(str(model), str(out), target=target, **kwargs)
    result = check(str(model), str(out), target=target, rtol=RTOL, batch=batch)
    for r in result["outputs"]:
        assert not r["ref_constant"], f"reference output {r['name']} is constant"
        assert r["ref_scale"] > 1e-3, f"reference output {r['name']} has vanished"
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    return report, result


FORMS = {
    "frozen_pb": ("tf1_forms", "frozen.pb", {}, None, "graphdef"),
    "ckpt_prefix": ("tf1_forms", "ckpt/model.ckpt", {}, None, "checkpoint_v1"),
    "saved_v1_tags": ("tf1_forms", "saved_v1", {"tags": ["serve"]}, None, "savedmodel_v1"),
    "keras": ("keras_forms", "model.keras", {}, None, "keras"),
    "h5": ("keras_forms", "model.h5", {}, None, "keras"),
    "ckpt_v2": ("keras_forms", "ckpt/ck", {"model_def": MODEL_DEF}, None, "checkpoint_v2"),
    "sig_default": ("two_signatures", "", {}, None, "savedmodel"),
    "sig_shuffle": ("two_signatures", "", {}, "shuffle", "savedmodel"),
}


TARGETS = ["paddle", "onnx", "torch"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("form", sorted(FORMS))
def test_form_converts_to_every_target(tf_model, tmp_path, form, target):
    """Every input form to every target with parity; onnx/torch at batch 1 and 7
    (dynamic batch), paddle through both runners."""
    builder, rel, options, signature, fmt = FORMS[form]
    model = tf_model(builder) / rel
    report, result = _parity(model, tmp_path / "out", target, batch=2 if target == "paddle" else 1,
                             options=options, signature=signature)
    assert report.source["format"] == fmt
    assert {k: report.source["options"][k] for k in options or {}} == (options or {})
    if target == "paddle":
        assert {r["runner"] for r in result["outputs"]} == {"paddle:python", "paddle:jit.load"}
        return
    assert report.inputs[0]["shape"][0] is None
    result = check(str(model), str(tmp_path / "out"), target=target, rtol=RTOL, batch=7,
                   signature=signature)
    assert result["passed"] and result["input_shapes"][0][0] == 7


@pytest.mark.parametrize("target", TARGETS)
def test_topk_lrn_einsum_and_keras_dense_3d(tf_model, tmp_path, target):
    """TopKV2, LRN (TF's alpha is not divided by the window), einsum forms and a Keras
    Dense on (batch, seq, features) whose Tensordot runtime shape chain is folded."""
    report, _ = _parity(tf_model("tf_extras") / "saved", tmp_path / "out", target, batch=3)
    shapes = {o["name"]: o["shape"] for o in report.outputs}
    assert shapes["seq"] == [None, 6, 4] and shapes["lrn"] == [None, 6, 6, 8]


def test_keras_dense_on_3d_input_is_static_with_dynamic_batch(tf_model, tmp_path):
    model = tf_model("tf_extras") / "dense3d.keras"
    for target in TARGETS:
        report, _ = _parity(model, tmp_path / target, target, batch=5)
        assert report.outputs[0]["shape"] == [None, 6, 4]
        assert "reshape_dynamic" not in report.ir_ops and "shape" not in report.ir_ops


def test_pruned_backbone_of_a_checkpoint(tf_model, tmp_path):
    """--outputs backbone/features: exactly that tensor, equal to the source's."""
    model = tf_model("tf1_forms") / "ckpt" / "model.ckpt.meta"
    report, result = _parity(model, tmp_path / "out", "paddle",
                             outputs=["backbone/features"])
    assert [i["name"] for i in report.inputs] == ["input"]
    assert [o["name"] for o in report.outputs] == ["backbone/features"]
    assert report.outputs[0]["shape"] == [None, 8, 8, 8]
    assert report.source["fetches"] == ["backbone/features:0"]


def test_pruned_keras_from_an_intermediate_input(tf_model, tmp_path):
    model = tf_model("keras_forms") / "model.keras"
    report, _ = _parity(model, tmp_path / "out", "onnx",
                        inputs=["keras_zoo_1/stem_1/Relu"], outputs=["keras_zoo_1/sep_1/BiasAdd"])
    assert len(report.inputs) == 1 and len(report.outputs) == 1


def test_pruned_keras_by_layer_names(tf_model, tmp_path):
    """Keras layer names select the tensors leaving the layer, though Keras 3
    export renames the scopes ('stem' -> 'stem_1')."""
    model = tf_model("keras_forms") / "model.keras"
    report, _ = _parity(model, tmp_path / "out", "onnx", inputs=["stem"], outputs=["sep"])
    assert report.source["feeds"] == ["keras_zoo_1/stem_1/Relu:0"]
    assert report.source["fetches"] == ["keras_zoo_1/sep_1/BiasAdd:0"]


def test_checkpoint_without_meta_graph_is_a_clear_error(tf_model, tmp_path):
    with pytest.raises(X2Error, match=r"without its meta graph \(model.ckpt.meta is missing\)"):
        convert(str(tf_model("tf1_forms") / "ckpt_nometa" / "model.ckpt"), str(tmp_path / "o"))


def test_tf2_checkpoint_without_model_def_names_the_flag(tf_model, tmp_path):
    with pytest.raises(X2Error, match="--model-def"):
        convert(str(tf_model("keras_forms") / "ckpt" / "ck"), str(tmp_path / "o"))


@pytest.mark.parametrize("name", ["evil.keras", "evil.h5"])
def test_malicious_lambda_is_not_executed(tf_model, tmp_path, name):
    folder = tf_model("malicious_keras")
    marker = Path(folder) / "pwned"
    assert not marker.exists()
    with pytest.raises(X2Error, match="--trust-code") as info:
        convert(str(folder / name), str(tmp_path / "o"))
    assert "evil" in info.value.message
    assert not marker.exists(), "the Lambda's code ran"
    assert not (tmp_path / "o").exists()
