"""ONNX out (--to onnx) and ONNX in (--from onnx).

Parity: within rtol 1e-4 of the output's scale (fp32), as for Paddle. The
ONNX file is checked by the emitter with onnx.checker(full_check=True) and
again here in a separate process, with its interface."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT, _build, convert_then_check, run_cli
from x2.convert import convert
from x2.errors import ModelLoadError, UnsupportedOpsError
from x2.check.parity import check

RTOL = 1e-4

FACTS = """
import json, sys, collections, onnx
path = sys.argv[1]
onnx.checker.check_model(path, full_check=True)
m = onnx.load(path, load_external_data=False)
print(json.dumps({"inputs": [i.name for i in m.graph.input],
                  "outputs": [o.name for o in m.graph.output],
                  "ops": collections.Counter(n.op_type for n in m.graph.node),
                  "opset": [o.version for o in m.opset_import if o.domain == ""][0]}))
"""


def onnx_facts(path) -> dict:
    proc = subprocess.run([sys.executable, "-c", FACTS, str(path)], capture_output=True,
                          text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="session")
def onnx_model(model_dir):
    return lambda name: _build([str(ROOT / "tests" / "onnx_models.py"), name],
                               model_dir / f"{name}.onnx")


def _assert_parity(result):
    assert result["outputs"]
    for r in result["outputs"]:
        assert not r["ref_constant"] and r["ref_scale"] > 1e-3, r
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"


# -- emitter ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["small_cnn", "mlp", "residual_cnn"])
def test_tf_to_onnx_passes_checker_and_matches(sample, tmp_path, name):
    out = tmp_path / "out"
    report = convert_then_check(str(sample(name)), str(out), target="onnx")
    _assert_parity(check(str(sample(name)), str(out), target="onnx", rtol=RTOL))
    facts = onnx_facts(out / "model.onnx")
    assert facts["inputs"] == [i["name"] for i in report.inputs]
    assert facts["outputs"] == ["output_0"] and facts["opset"] == 17
    assert facts["ops"].get("Transpose", 0) <= 1


def test_tf_to_onnx_keeps_signature_names(tf_model, tmp_path):
    out = tmp_path / "out"
    convert_then_check(str(tf_model("raw_ops")), str(out), target="onnx")
    facts = onnx_facts(out / "model.onnx")
    assert facts["inputs"] == ["x"] and facts["outputs"] == ["logits", "probs"]
    _assert_parity(check(str(tf_model("raw_ops")), str(out), target="onnx", rtol=RTOL))


@pytest.mark.parametrize("opset", [13, 18, 21])
def test_opsets(sample, tf_model, tmp_path, opset):
    """Reductions take axes as an input from 18, Gelu is one op from 20."""
    for model in (sample("small_cnn"), tf_model("raw_ops")):
        out = tmp_path / f"{model.name}_{opset}"
        report = convert_then_check(str(model), str(out), target="onnx",
                                    emit_options={"opset": opset})
        assert report.target_details["opset"] == opset
        assert onnx_facts(out / "model.onnx")["opset"] == opset
        _assert_parity(check(str(model), str(out), target="onnx", rtol=RTOL))


def test_unsupported_opset_is_refused(sample, tmp_path):
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--out", str(tmp_path / "out"), "--opset", "9")
    assert proc.returncode == 2 and "--opset 9" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet50"])
def test_keras_applications_to_onnx(sample, tmp_path, name):
    out = tmp_path / "out"
    report = convert_then_check(str(sample(name)), str(out), target="onnx")
    _assert_parity(check(str(sample(name)), str(out), target="onnx", rtol=RTOL))
    assert onnx_facts(out / "model.onnx")["ops"]["Transpose"] == 1
    # The default (NHWC) interface keeps one Transpose, at the input.
    assert report.transposes_left == 1
    assert report.transposes_where[0]["where"].startswith("at graph input")


LARGE = """
import sys, json, resource
import numpy as np
sys.path.insert(0, sys.argv[3])
from x2.ir import Graph, save_graph
from x2.process.isolation import run_step
rows, cols = 1024, 540_000          # 2.2 GB of float32 weights
ir, out = sys.argv[1], sys.argv[2]
g = Graph()
g.add_input("x", "float32", (None, rows))
g.add_constant("w", np.zeros((1, 1), np.float32))
g.add_node("dense", ["x", "w"], name="y")
g.info["y"] = type(g.info["x"])("float32", (None, cols))
g.outputs = ["y"]
save_graph(g, ir)
# Write the big weight straight into the IR's weights.bin through a memmap,
# so this process never holds it: column j of row i is (i % 7 - 3) * 1e-3.
import os
doc = json.load(open(os.path.join(ir, "graph.json")))
doc["constants"]["w"] = {"dtype": "float32", "shape": [rows, cols], "offset": 0}
json.dump(doc, open(os.path.join(ir, "graph.json"), "w"))
w = np.memmap(os.path.join(ir, "weights.bin"), dtype=np.float32, mode="w+", shape=(rows, cols))
for i in range(rows):
    w[i] = (i % 7 - 3) * 1e-3
w.flush(); del w
result = run_step("onnx.emit", {"request": {"ir": ir, "out": out}})
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"result": result, "emit_peak_rss": peak, "weights": rows * cols * 4}))
"""


@pytest.mark.slow
def test_weights_over_2gb_use_external_data(tmp_path):
    proc = subprocess.run([sys.executable, "-c", LARGE, str(tmp_path / "ir"), str(tmp_path),
                           str(ROOT)], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["result"]["external_data"] is True
    assert (tmp_path / "model.onnx.data").stat().st_size >= info["weights"]
    assert (tmp_path / "model.onnx").stat().st_size < 1 << 20
    # Streaming from the memory-mapped IR: the emitter never held the weights twice.
    assert info["emit_peak_rss"] < 1.5 * info["weights"], info
    run = ("import numpy as np, onnxruntime as ort, sys\n"
           "s = ort.InferenceSession(sys.argv[1] + '/model.onnx')\n"
           "x = np.ones((1, 1024), np.float32)\n"
           "y = s.run(None, {'x': x})[0]\n"
           "expected = sum((i % 7 - 3) * 1e-3 for i in range(1024))\n"
           "assert y.shape == (1, 540000) and abs(y[0, 12345] - expected) < 1e-4, y[0, :3]\n"
           "print('RAN')")
    proc = subprocess.run([sys.executable, "-c", run, str(tmp_path)], capture_output=True,
                          text=True, env=ENV)
    assert proc.returncode == 0 and "RAN" in proc.stdout, proc.stderr[-2000:]


# -- frontend -----------------------------------------------------------------

ONNX_MODELS = ["torch_cnn", "torch_decoder", "torch_transformer", "handmade_opset11", "handmade_opset13",
               "handmade_opset18", "handmade_misc"]


@pytest.mark.parametrize("name", ONNX_MODELS)
@pytest.mark.parametrize("target", ["onnx", "paddle"])
def test_onnx_models_convert_and_match_onnxruntime(onnx_model, tmp_path, name, target):
    out = tmp_path / "out"
    report = convert_then_check(str(onnx_model(name)), str(out), source="onnx", target=target)
    assert report.ops_mapped > 0
    _assert_parity(check(str(onnx_model(name)), str(out), source="onnx", target=target,
                         rtol=RTOL))


@pytest.mark.parametrize("target", ["torch", "paddle"])
@pytest.mark.parametrize("opset", [17, 21])
def test_onnx_group_and_instance_norm_are_one_layer_each(onnx_model, tmp_path, opset, target):
    """GroupNormalization (opset 21), the opset-17 reshape/InstanceNormalization/
    reshape/Mul/Add form and InstanceNormalization each become one layer holding
    the learned scale and bias."""
    model, out = str(onnx_model(f"norms_opset{opset}")), tmp_path / "out"
    convert_then_check(model, str(out), source="onnx", target=target)
    text = (out / "model.py").read_text()
    instance = "nn.InstanceNorm2d(" if target == "torch" else "nn.InstanceNorm2D("
    assert text.count("nn.GroupNorm(2, 8") == 1 and text.count(instance) == 1, text
    assert "reshape" not in text
    _assert_parity(check(model, str(out), source="onnx", target=target, rtol=1e-5))


@pytest.mark.parametrize("opset, ops", [(21, {"GroupNormalization", "InstanceNormalization"}),
                                        (17, {"ReduceMean", "InstanceNormalization"})])
def test_group_norm_to_onnx_by_opset(onnx_model, tmp_path, opset, ops):
    """--to onnx: GroupNormalization from opset 21 (its meaning changed there),
    decomposed before; a group per channel is InstanceNormalization."""
    model, out = str(onnx_model("norms_opset21")), tmp_path / "out"
    convert_then_check(model, str(out), source="onnx", target="onnx", emit_options={"opset": opset})
    assert ops <= set(onnx_facts(out / "model.onnx")["ops"])
    _assert_parity(check(model, str(out), source="onnx", target="onnx", rtol=1e-5))


def test_onnx_dynamic_batch(onnx_model, tmp_path):
    out = tmp_path / "out"
    report = convert_then_check(str(onnx_model("torch_cnn")), str(out), source="onnx",
                                target="paddle")
    assert report.inputs[0]["shape"][0] is None
    for batch in (1, 5):
        result = check(str(onnx_model("torch_cnn")), str(out), source="onnx", target="paddle",
                       rtol=RTOL, batch=batch)
        assert result["passed"] and result["input_shapes"] == [[batch, 3, 16, 16]]


# -- round trip ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["small_cnn", "mlp", "residual_cnn",
                                  pytest.param("mobilenet_v2", marks=pytest.mark.slow),
                                  pytest.param("resnet50", marks=pytest.mark.slow)])
def test_round_trip_tf_onnx_paddle(sample, tmp_path, name):
    """TF -> IR -> ONNX -> IR -> Paddle gives TensorFlow's numbers."""
    convert_then_check(str(sample(name)), str(tmp_path / "onnx"), target="onnx")
    report = convert_then_check(str(tmp_path / "onnx" / "model.onnx"), str(tmp_path / "paddle"),
                                source="onnx", target="paddle")
    assert report.transposes_left <= 1
    _assert_parity(check(str(sample(name)), str(tmp_path / "paddle"), source="tf",
                         target="paddle", rtol=RTOL))


# -- bad input ----------------------------------------------------------------

def _cli_fails(model, out, *needles):
    proc = run_cli("convert", "--from", "onnx", "--to", "paddle", "--model", str(model),
                   "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    text = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in text, text
    assert not os.path.exists(out)


def test_truncated_and_foreign_files(onnx_model, tmp_path):
    data = onnx_model("torch_cnn").read_bytes()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(data[: len(data) // 2])
    _cli_fails(truncated, tmp_path / "o1", "truncated.onnx", "not a readable ONNX model")
    text = tmp_path / "notes.onnx"
    text.write_text("these are my notes, not a model\n" * 20)
    _cli_fails(text, tmp_path / "o2", "notes.onnx")
    _cli_fails(tmp_path / "missing.onnx", tmp_path / "o3", "missing.onnx", "no such file")


def test_all_unsupported_onnx_ops_listed_at_once(onnx_model, tmp_path):
    _cli_fails(onnx_model("unsupported_ops"), tmp_path / "out", "2 onnx op type(s)",
               "Round", "x2", "com.example.FancyOp", "x1")
    with pytest.raises(UnsupportedOpsError) as info:
        convert(str(onnx_model("unsupported_ops")), str(tmp_path / "out"), source="onnx")
    assert info.value.details["unsupported"]["Round"]["count"] == 2


def test_old_opset_is_upgraded_by_onnx_version_converter(onnx_model, tmp_path):
    import onnxruntime as ort
    report = convert(str(onnx_model("old_opset")), str(tmp_path / "out"), source="onnx",
                     target="onnx")
    assert report.ops_seen == {"Relu": 1}
    x = np.array([-1.5, 2.0], np.float32)
    (y,) = ort.InferenceSession(str(tmp_path / "out" / "model.onnx"),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(y, [0.0, 2.0])


def test_dangling_input_is_named(onnx_model, tmp_path):
    with pytest.raises(ModelLoadError, match="'ghost'"):
        convert(str(onnx_model("dangling_input")), str(tmp_path / "out"), source="onnx")
    _cli_fails(onnx_model("dangling_input"), tmp_path / "out", "ghost",
               "which no node, input or initializer defines")


def test_onnx_numbers_really_differ_when_weights_do(onnx_model, tmp_path):
    """Guard against a parity check that compares a model with itself."""
    import onnx  # noqa: F401  (onnx alone is safe in the test process)
    from onnx import numpy_helper
    model = onnx.load(str(onnx_model("torch_cnn")))
    init = model.graph.initializer[0]
    array = numpy_helper.to_array(init) + np.float32(0.5)
    init.CopyFrom(numpy_helper.from_array(array, init.name))
    changed = tmp_path / "changed.onnx"
    onnx.save(model, str(changed))
    convert_then_check(str(changed), str(tmp_path / "out"), source="onnx", target="onnx")
    result = check(str(onnx_model("torch_cnn")), str(tmp_path / "out"), source="onnx",
                   target="onnx", rtol=RTOL)
    assert not result["passed"]


def test_negative_step_slice_to_torch(onnx_model, tmp_path):
    """torch slicing has no negative step: handmade_opset13's reversed Slice is
    written as flip + slice, and the model runs and matches."""
    out = tmp_path / "out"
    convert_then_check(str(onnx_model("handmade_opset13")), str(out), source="onnx", target="torch")
    assert "torch.flip(" in (out / "model.py").read_text()
    _assert_parity(check(str(onnx_model("handmade_opset13")), str(out), source="onnx",
                         target="torch", rtol=RTOL))
