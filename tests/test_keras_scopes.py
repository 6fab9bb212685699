"""Keras sources as a tree of classes (issue 47; x2/frontends/tf/keras_scopes.py):
nested functional models become one class per builder and subclassed
layers one per class, a run of them a loop; a sub-model called twice stays
inline; a flat Keras model is written as one Model class, as before.
Models: tests/tf_models.py keras_blocks (its build about 5 s, once per run),
read as a Keras model traced like a .keras file (--model-def)."""
import json
import re

import pytest

from conftest import ROOT, convert_then_check
from x2.check.parity import check

RTOL = 1e-5
MODEL_DEF = {"model_def": f"{ROOT / 'tests' / 'tf_models.py'}:keras_blocks_model"}


def _classes(text: str) -> list[str]:
    return re.findall(r"^class (\w+)\(", text, re.M)


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_nested_models_and_subclassed_blocks_become_one_class_each_in_a_loop(tf_model, tmp_path, target):
    """About 12 s a target on a shared 2-core machine (convert and x2 check;
    the first also pays the model's build, about 5 s): the two blocks are one class `Block` called in a
    loop over `self.blocks`, the Sequential called twice stays inline (with
    why), and the written model matches TensorFlow within 1e-5 relative."""
    model = tf_model("keras_blocks") / "ckpt" / "ck"
    out = tmp_path / "out"
    convert_then_check(str(model), str(out), target=target, options=MODEL_DEF)
    text = (out / "model.py").read_text()
    assert _classes(text) == ["Block", "Mixer", "Model"]
    # the second loop carries the first one's variable (no `hidden_3 = hidden`)
    assert re.search(r"for layer in self\.blocks:\n +(\w+) = layer\(\1\)\n"
                     r" +for layer in self\.mixers:\n +\1 = layer\(\1\)\n", text), text
    tree = json.loads((out / "report.json").read_text())["target_details"]["module_tree"]
    assert tree["classes"]["Block"]["instances"] == ["blocks.0", "blocks.1"]
    assert tree["classes"]["Mixer"]["instances"] == ["mixers.0", "mixers.1"]
    assert {(i["scope"], i["why"]) for i in tree["inlined"]} == {
        ("refine", "the source calls it 2 times"), ("refine@1", "the source calls it 2 times")}
    result = check(str(model), str(out), target=target, rtol=RTOL, batch=2)
    for r in result["outputs"]:
        assert r["ref_scale"] > 1e-3, f"reference output {r['name']} has vanished"
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"


def test_a_savedmodel_from_keras_has_its_subclassed_blocks_as_classes(tf_model, tmp_path):
    """About 6 s: the same model exported as a SavedModel (read without
    TensorFlow) keeps no layers, only variable paths and name scopes. The
    Mixer blocks, whose variables carry their path as keras_hub's blocks'
    do, are one class in a loop; the functional blocks, whose variables do
    not, stay inline; numbers within 1e-5 of TensorFlow."""
    model = tf_model("keras_blocks") / "saved"
    out = tmp_path / "out"
    convert_then_check(str(model), str(out), target="torch")
    text = (out / "model.py").read_text()
    assert _classes(text) == ["Mixer", "Model"]
    assert "for layer in self.mixers:" in text
    tree = json.loads((out / "report.json").read_text())["target_details"]["module_tree"]
    assert tree["classes"]["Mixer"]["instances"] == ["mixers.0", "mixers.1"]
    assert {i["why"] for i in tree["inlined"]} == {"the source calls it 2 times"}
    result = check(str(model), str(out), target="torch", rtol=RTOL, batch=2)
    assert all(r["passed"] for r in result["outputs"]), result["outputs"]


def test_a_flat_keras_model_stays_one_class(tf_model, tmp_path):
    """About 1 s (the model is built already): a functional model of plain layers has no scopes, so
    model.py is the one Model class with a layer per Keras layer."""
    out = tmp_path / "out"
    convert_then_check(str(tf_model("keras_blocks") / "plain.keras"), str(out), target="torch")
    text = (out / "model.py").read_text()
    assert _classes(text) == ["Model"]
    assert re.search(r"self\.conv\w* = nn\.Conv2d\(3, 4", text)
    assert "module_tree" not in json.loads((out / "report.json").read_text())["target_details"]
