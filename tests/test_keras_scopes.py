"""Keras sources as a tree of classes (issue 47; x2/frontends/tf/keras_scopes.py):
nested functional models become one class per builder and subclassed
layers one per class, a run of them a loop; a sub-model called twice stays
inline; a flat Keras model is written as one Model class, as before.
Models: tests/tf_models.py keras_blocks (its build about 5 s, once per run),
read as a Keras model traced like a .keras file (--model-def)."""
import json
import re
import subprocess
import sys

import pytest

from conftest import ENV, ROOT, convert_then_check
from x2.check.parity import check

RTOL = 1e-5
MODEL_DEF = {"model_def": f"{ROOT / 'tests' / 'tf_models.py'}:keras_blocks_model"}


# Runs in the target's process: model.py's load_source_checkpoint of both files.
_LOAD = r'''
import json, sys
from pathlib import Path
import numpy as np
root, out, work, target = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
sys.path.insert(0, root)
from x2.emitters.codegen import import_generated
module = import_generated(out / "model.py")
model = module.load_source_checkpoint(work / "new.weights.h5")
x = np.load(work / "x.npy")
if target == "torch":
    import torch
    with torch.no_grad():
        got = model(torch.from_numpy(x)).numpy()
else:
    import paddle
    got = model(paddle.to_tensor(x)).numpy()
print(json.dumps({"got": got.tolist()}))
'''


def _run(script: str, *args) -> str:
    proc = subprocess.run([sys.executable, "-c", script, str(ROOT), *map(str, args)],
                          capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _classes(text: str) -> list[str]:
    """The classes written for source modules (each says which in a comment)
    and Model; x2's own helper classes (LinearNoBias, ...) are not counted."""
    return [name for name, comment in re.findall(r"^class (\w+)\(.*\n(    # )?", text, re.M)
            if comment or name == "Model"]


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_nested_models_and_subclassed_blocks_become_one_class_each_in_a_loop(
        tf_model, tmp_path, target):
    """About 15 s a target on a shared 2-core machine (convert and x2 check;
    the first also pays the model's build, about 5 s): the two blocks are one class `Block` called in a loop over
    `self.blocks`, the Sequential called twice stays inline (with why), the
    written model matches TensorFlow within 1e-5 relative, and its weights
    keep their Keras names and load from `model.save_weights`
    (_loads_keras_weights)."""
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
    _loads_keras_weights(out, target, tf_model("keras_blocks") / "new_weights")


def _loads_keras_weights(out, target: str, work) -> None:
    """The parameters sit at the Keras layers' paths (`blocks.0.conv1.weight`
    holds `block_0/conv1/kernel`, HWIO laid out as OIHW), report.json maps
    each to its Keras weight, and load_source_checkpoint of a
    `model.save_weights` file with other values gives TensorFlow's outputs
    for them within 1e-5 relative (about 3 s), BatchNorm statistics included,
    which x2 folded into a multiplier and an offset."""
    import numpy as np
    names = json.loads((out / "report.json").read_text())["target_details"]["source_names"]
    keras = names["keras"]
    assert keras["blocks.0.conv1.weight"] == {
        "keras": "block_0/conv1/kernel", "path": "conv1/kernel",
        "h5": "layers/functional/layers/conv2d/vars/0", "perm": [3, 2, 0, 1]}
    assert keras["mixers.1.project.bias"]["keras"] == "mixer_1/project/bias"
    assert keras["head.weight"]["perm"] == ([1, 0] if target == "torch" else None)
    # every conv and dense weight is named, or computed from the Keras weights
    # (BatchNorms x2 folded: alone, or into the depthwise conv before it)
    assert names["matched"] == 22 and names["not_in_the_graph"] == [], names
    derived = {key.split(".")[-1]: weights for key, weights in names["derived"].items()
               if key.startswith("blocks.0.")}
    assert derived["batchnorm_mul"] == ["block_0/bn/gamma", "block_0/bn/moving_variance"]
    assert derived["weight"] == ["block_0/dw/kernel", "block_0/dw_bn/gamma",
                                 "block_0/dw_bn/moving_variance"], derived
    text = (out / "model.py").read_text()
    assert "self.refine.mix = " in text and "self.head = " in text
    found = json.loads(_run(_LOAD, out, work, target).splitlines()[-1])
    want = np.load(work / "want.npy")
    got = np.asarray(found["got"])
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), (got, want)


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


def test_the_loader_refuses_a_changed_keras_weight_it_cannot_follow(tmp_path):
    """Well under a second, no framework: model.py's load_source_checkpoint
    (x2/emitters/keras_checkpoint.py, run on a dict for a model) lays a
    Keras kernel out as the table says, and refuses a file where a Keras
    weight x2 folded in a way it cannot compute again changed since the
    conversion, naming it and saying what to do."""
    import hashlib
    from types import SimpleNamespace

    import h5py
    import numpy as np

    from x2.emitters import keras_checkpoint
    folded = np.array([1.0, 2.0], np.float32)
    tree = SimpleNamespace(
        layouts={"dense.weight": ("dense.weight", (1, 0), (3, 2))}, recipes={},
        state={"dense.weight": {"keras": "dense/kernel", "h5": "layers/dense/vars/0",
                                "shape": [2, 3]},
               "odd.weight": {"keras": "odd/kernel", "h5": "layers/odd/vars/0", "shape": [2],
                              "sha256": hashlib.sha256(folded.tobytes()).hexdigest()}})
    lines = keras_checkpoint.footer_lines(tree, "torch")
    loader = keras_checkpoint.LOADER.format(state="dict(model)", put="state[name] = array",
                                            set="model.update(state)")
    code = "\n".join(lines[:lines.index(keras_checkpoint.LOADER.format(
        **keras_checkpoint._FRAMEWORK["torch"]))]) + "\n" + loader
    space = {"load_model": lambda: {"dense.weight": None}}
    exec(code, space)
    kernel = np.arange(6, dtype=np.float32).reshape(2, 3)
    for name, odd in (("same", folded), ("changed", folded + 1)):
        with h5py.File(tmp_path / f"{name}.weights.h5", "w") as f:
            f["layers/dense/vars/0"], f["layers/odd/vars/0"] = kernel, odd
    model = space["load_source_checkpoint"](tmp_path / "same.weights.h5")
    assert np.array_equal(model["dense.weight"], kernel.T)
    with pytest.raises(ValueError, match=r"'odd/kernel'.*convert the model again"):
        space["load_source_checkpoint"](tmp_path / "changed.weights.h5")
