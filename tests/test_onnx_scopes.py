"""ONNX files exported from torch keep the source's module tree (issue 47):
a tiny Llama-style decoder (tests/onnx_scopes_models.py) exported by
torch.onnx's dynamo exporter (module paths and classes in node metadata) and
its TorchScript exporter (paths in node names only), converted to torch and
Paddle. model.py holds the decoder layer's class once, called in a loop,
and does not grow with the layers; the numbers are onnxruntime's on the
source (1e-5 relative); every weight of the source's state_dict sits at its
key, those torch.onnx renamed included, so the torch output loads a
differently seeded source's state_dict strictly and gives its logits.

Cost, about 22 s of CPU in all (57 s wall at load 6.6 on 2 shared cores):
building the four ONNX files once (one torch process, 9 s of CPU, the two
dynamo exports most of it), six conversions in-process (four verified
against onnxruntime) and one torch process for the state_dict check."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ENV, ROOT, _build
from x2.convert import convert as x2_convert

pytestmark = pytest.mark.xdist_group("onnx_scopes")

EXPORTERS = ("dynamo", "torchscript")
# the decoder layer's class: the source's (dynamo) or named after its path
# `model.layers.0` (TorchScript names no class)
LAYER_CLASS = {"dynamo": "DecoderLayer", "torchscript": "Layer"}

# Runs in a torch process: each converted torch model's state_dict keys,
# and its logits after strictly loading a differently seeded source's
# state_dict, against that source's.
_STATE_CHECK = r'''
import json, sys
from pathlib import Path
import torch
root, work = sys.argv[1], Path(sys.argv[2])
sys.path[:0] = [root, root + "/tests"]
from onnx_scopes_models import decoder, VOCAB, SEQ
from x2.emitters.codegen import import_generated
other = decoder(2, seed=1)
ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(3))
found = {}
with torch.no_grad():
    want = other(ids)
    for exporter in sys.argv[3:]:
        converted = import_generated(work / f"{exporter}_2_torch" / "model.py").load_model()
        keys = sorted(converted.state_dict())
        converted.load_state_dict(other.state_dict(), strict=True)
        found[exporter] = {"keys": keys, "source_keys": sorted(other.state_dict()),
                           "error": float((converted(ids) - want).abs().max()),
                           "scale": float(want.abs().max())}
print(json.dumps(found))
'''


@pytest.fixture(scope="module")
def converted(model_dir, tmp_path_factory):
    """The decoder's four ONNX files converted: 2 layers to torch and Paddle
    (verified against onnxruntime), 4 layers to torch."""
    built = _build([str(ROOT / "tests" / "onnx_scopes_models.py")], model_dir / "onnx_scopes")
    work = tmp_path_factory.mktemp("onnx_scopes")
    reports = {}
    for exporter in EXPORTERS:
        for layers, target in ((2, "torch"), (2, "paddle"), (4, "torch")):
            name = f"{exporter}_{layers}_{target}"
            reports[name] = x2_convert(str(built / f"{exporter}_{layers}" / "model.onnx"),
                                       str(work / name), source="onnx", target=target,
                                       emit_options={"verify": layers == 2})
    proc = subprocess.run([sys.executable, "-c", _STATE_CHECK, str(ROOT), str(work),
                           *EXPORTERS], capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return work, reports, json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_onnx_from_torch_is_written_as_the_sources_module_tree(converted, exporter, target):
    work, reports, _ = converted
    report = reports[f"{exporter}_2_{target}"]
    verify = report.target_details["verify"]
    assert verify["verified"] is True and "onnx" in verify["against"]
    for runner, errors in verify["max_rel"].items():
        assert max(errors.values()) <= 1e-5, (runner, errors)
    text = (work / f"{exporter}_2_{target}" / "model.py").read_text()
    layer = LAYER_CLASS[exporter]
    assert text.count(f"class {layer}(") == 1, text
    listed = "nn.ModuleList" if target == "torch" else "nn.LayerList"
    assert f"self.layers = {listed}([{layer}() for _ in range(2)])" in text
    assert "for layer in self.layers:" in text
    tree = report.target_details["module_tree"]
    assert tree["classes"][layer]["instances"] == ["model.layers.0", "model.layers.1"]
    # what stays inline is a Linear or the embedding: one op each
    assert all(i["why"].startswith("one op") for i in tree["inlined"]), tree["inlined"]
    # every weight at the source's key: 2 layers of 2 norms and 7 Linears,
    # the embedding, the final norm and the head
    assert report.target_details["source_names"] == {
        "source_keys": 21, "matched": 21, "not_in_the_graph": [], "renamed": {}}


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_onnx_from_torch_model_py_does_not_grow_with_the_layers(converted, exporter):
    work, _, _ = converted
    two = (work / f"{exporter}_2_torch" / "model.py").read_text().splitlines()
    four = (work / f"{exporter}_4_torch" / "model.py").read_text().splitlines()
    assert abs(len(four) - len(two)) <= 5, (len(two), len(four))
    assert f"[{LAYER_CLASS[exporter]}() for _ in range(4)]" in "\n".join(four)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_onnx_from_torch_loads_the_sources_state_dict_strictly(converted, exporter):
    """The keys are the source's, torch.onnx's renamed Linear weights
    (`val_10`, `onnx::MatMul_224`: transposed tables) included, each holding
    the right tensor: a differently seeded source's weights give its logits."""
    _, _, found = converted
    found = found[exporter]
    assert found["keys"] == found["source_keys"]
    assert found["error"] <= 1e-5 * found["scale"], found
