"""x2 convert --precision fp16|bf16 (issue 18): the IR pass keeps sensitive and
overflowing ops in fp32 with casts only at island boundaries; every target
writes a half-precision model its own API loads; x2 check compares it with
the fp32 source at the precision's tolerance, or says precisely why this CPU
cannot run it (Paddle: no CPU fp16/bf16 kernels; onnxruntime: no CPU bf16)."""
import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT, _build, convert_then_check
from x2.convert import convert
from x2.errors import X2Error
from x2.ir import Graph
from x2.check.parity import check
from x2.passes.precision import choose_precision, lower_precision

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("precision")

TORCH_MODELS = ROOT / "tests" / "torch_models.py"
ENCODER = dict(model=f"{TORCH_MODELS}:encoder", source="torch", input_shapes={"tokens": [2, 16]},
               options={"input_dtypes": {"tokens": "int64"}})


def _ir_attention() -> Graph:
    g = Graph()
    rng = np.random.default_rng(0)
    x = g.add_input("x", "float32", (2, 8))
    w = g.add_constant("w", rng.standard_normal((8, 8)).astype(np.float32))
    h = g.add_node("matmul", [x, w]).outputs[0]
    s = g.add_node("softmax", [h], attrs={"axis": -1}).outputs[0]
    y = g.add_node("matmul", [s, w]).outputs[0]
    big = g.add_node("mul", [y, g.add_constant("k", np.float32(1e6))]).outputs[0]
    out = g.add_node("tanh", [big]).outputs[0]
    for v in (h, s, y, big, out):
        g.info[v] = type(g.info[x])("float32", (2, 8))
    g.outputs = [out]
    return g


def test_ir_pass_keeps_softmax_and_overflow_in_fp32_with_minimal_casts():
    graph, record = lower_precision(_ir_attention(), "fp16")
    ops = {n.op: n for n in graph.nodes}
    assert graph.dtype(ops["softmax"].outputs[0]) == "float32"
    assert graph.dtype(ops["matmul"].outputs[0]) == "float16"
    kept = {v["op"]: v["why"] for v in record["kept_fp32"].values()}
    assert kept["softmax"].startswith("numerically sensitive")
    assert "overflows fp16" in kept["mul"]            # |y * 1e6| > 65504
    assert graph.dtype(graph.outputs[0]) == "float16" and graph.dtype("x") == "float16"
    # The weight is read by half nodes only: converted in place, no fp32 copy kept.
    assert graph.constants["w"].dtype == np.float16
    for node in graph.nodes:   # no cast of a cast back to where it came from
        if node.op == "cast":
            producer = graph.producer(node.inputs[0])
            assert not (producer is not None and producer.op == "cast" and
                        graph.dtype(producer.inputs[0]) == node.attrs["dtype"]), node
    # softmax in, softmax out, the overflowing mul in: three casts, the mul's
    # fp32 output feeds tanh after one more: four in all.
    assert graph.count("cast") == 4, [n for n in graph.nodes if n.op == "cast"]


def test_io_dtype_fp32_keeps_the_interface():
    graph, record = lower_precision(_ir_attention(), "bf16", io_dtype="fp32")
    assert graph.dtype("x") == "float32" and graph.dtype(graph.outputs[0]) == "float32"
    assert record["kept_fp32"] and all("overflow" not in v["why"]   # bf16 has fp32's range
                                       for v in record["kept_fp32"].values())


@pytest.fixture(scope="module")
def encoder_onnx(tmp_path_factory):
    root = tmp_path_factory.mktemp("precision")
    outs = {}
    for precision in ("fp32", "fp16"):
        outs[precision] = root / precision
        convert(ENCODER["model"], str(outs[precision]), source="torch", target="onnx",
                input_shapes=ENCODER["input_shapes"], options=ENCODER["options"],
                emit_options={"precision": precision})
    return outs


def test_fp16_onnx_graph_keeps_softmax_and_norms_in_fp32_without_cancelling_casts(encoder_onnx):
    import onnx
    from x2.emitters.onnx_precision import cancelling_casts
    path = encoder_onnx["fp16"] / "model.onnx"
    onnx.checker.check_model(str(path), full_check=True)
    model = onnx.shape_inference.infer_shapes(onnx.load(str(path)))
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(model.graph.input) + list(model.graph.value_info)}
    types.update({t.name: t.data_type for t in model.graph.initializer})
    sensitive = [n for n in model.graph.node
                 if n.op_type in ("Softmax", "LogSoftmax", "LayerNormalization")]
    assert len(sensitive) >= 4   # 2 layers x (attention softmax, 2 norms) + final norm
    for node in sensitive:
        assert types[node.input[0]] == onnx.TensorProto.FLOAT, node.name
    # The fused attention op holds its softmax: it runs in float32 as a whole.
    gemms = [n for n in model.graph.node if n.op_type in ("MatMul", "Gemm")
             and "attention" not in n.name]
    assert gemms and all(types[n.input[0]] == onnx.TensorProto.FLOAT16 for n in gemms)
    assert cancelling_casts(model) == []
    sizes = {p: (encoder_onnx[p] / "model.onnx").stat().st_size for p in ("fp32", "fp16")}
    assert sizes["fp16"] < 0.65 * sizes["fp32"], sizes


def _check_or_reason(model, out, source, target):
    """(check result, None), or (None, why a runner could not run the model)."""
    try:
        result = check(model, str(out), source=source, target=target)
    except X2Error as exc:
        return None, exc.message
    if result["runner_errors"]:   # the runner failed; the check went on without it
        return None, " ".join(result["runner_errors"].values())
    return result, None


# (source builder, target, precision): the error against the fp32 source, or
# the precise reason this CPU cannot run the model (asserted, not skipped).
CASES = [("encoder", "torch", "fp16"), ("encoder", "torch", "bf16"), ("encoder", "onnx", "bf16"),
         ("encoder", "paddle", "fp16"),
         ("keras_cnn", "onnx", "fp16"), ("keras_cnn", "torch", "bf16"),
         ("keras_cnn", "paddle", "bf16"),
         ("onnx_cnn", "torch", "fp16"), ("onnx_cnn", "onnx", "fp16"),
         ("onnx_cnn", "paddle", "fp16")]


@pytest.fixture(scope="module")
def sources(sample, model_dir):
    onnx_cnn = _build([str(ROOT / "tests" / "onnx_models.py"), "torch_cnn"],
                      model_dir / "torch_cnn.onnx")
    return {"encoder": ENCODER,
            "keras_cnn": dict(model=str(sample("small_cnn")), source="tf"),
            "onnx_cnn": dict(model=str(onnx_cnn), source="onnx")}


@pytest.mark.parametrize("name,target,precision", CASES)
def test_half_precision_conversion_loads_and_matches_or_says_why(sources, tmp_path, name, target,
                                                                 precision):
    src = sources[name]
    out = tmp_path / "out"
    report = convert(src["model"], str(out), source=src["source"], target=target,
                     input_shapes=src.get("input_shapes"), options=src.get("options"),
                     emit_options={"precision": precision})
    half = {"fp16": "float16", "bf16": "bfloat16"}[precision]
    assert all(i["dtype"] == half for i in report.inputs if i["dtype"].startswith(("float", "bf")))
    assert _weights_dtype(out, target) == half
    if target == "paddle" and name != "encoder":
        return   # the CPU refusal is the same for every Paddle model: asserted once (encoder)
    result, reason = _check_or_reason(src["model"], out, src["source"], target)
    if target == "paddle":   # Paddle's CPU kernels: none for fp16/bf16 conv/matmul/add
        assert reason and f"no CPU {precision} kernels" in reason and "--device gpu" in reason
    elif target == "onnx" and precision == "bf16":  # onnxruntime CPU: no bfloat16 kernels
        assert reason and "no bfloat16 kernels" in reason
    else:
        assert result is not None, reason
        assert result["precision"] == precision and result["passed"], result["outputs"]
        assert 0 < result["outputs"][0]["max_rel"] <= result["rtol"]


def _weights_dtype(out, target) -> str:
    """The dtype most weight bytes have, read with the target's own API (in a
    subprocess: paddle and torch stay out of this process)."""
    code = {
        "torch": "import torch; m = __import__('importlib').util; import sys; "
                 "sys.path.insert(0, D); import model; "
                 "s = model.load_model().state_dict(); "
                 "print(max(s.values(), key=lambda t: t.numel()).dtype)",
        "paddle": "import paddle, sys; sys.path.insert(0, D); import model; "
                  "s = model.load_model().state_dict(); "
                  "print(str(max(s.values(), key=lambda t: t.numel()).dtype))",
        "onnx": "import onnx; from onnx import numpy_helper as h; "
                "m = onnx.load(D + '/model.onnx'); "
                "print(max((h.to_array(t) for t in m.graph.initializer), "
                "key=lambda a: a.size).dtype)",
    }[target]
    proc = subprocess.run([sys.executable, "-c", f"D = {str(out)!r}; " + code],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().split("\n")[-1].replace("torch.", "").replace("paddle.", "")


def test_fp16_overflow_is_kept_in_fp32(tmp_path):
    model = f"{TORCH_MODELS}:overflow"
    out = tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target="torch",
                                input_shapes={"x": [2, 8]}, emit_options={"precision": "fp16"})
    kept = report.target_details["precision"]["kept_fp32"]
    overflow = [v for v in kept.values() if "overflows fp16" in v["why"]]
    assert {v["op"] for v in overflow} >= {"mul", "add"}, kept
    result = check(model, str(out), source="torch", target="torch")
    assert result["passed"], result["outputs"]


def test_cli_precision_flags_and_bad_keep_list(tmp_path):
    from conftest import run_cli
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model",
                   f"{TORCH_MODELS}:mlp", "--input-shape", "x:2,20", "--out",
                   str(tmp_path / "a"), "--precision", "fp16", "--keep-fp32", "default,tanh",
                   "--io-dtype", "fp32", "--quiet")
    assert proc.returncode == 0, proc.stderr
    details = json.loads((tmp_path / "a" / "report.json").read_text())["target_details"]
    assert "tanh" in details["precision"]["keep_fp32"]
    assert json.loads((tmp_path / "a" / "report.json").read_text())["inputs"][0]["dtype"] == \
        "float32"
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model",
                   f"{TORCH_MODELS}:mlp", "--input-shape", "x:2,20", "--out",
                   str(tmp_path / "b"), "--precision", "fp16", "--keep-fp32", "softmaxx")
    assert proc.returncode == 2 and "--keep-fp32 softmaxx: not an IR op" in proc.stderr
    assert not (tmp_path / "b").exists()


def test_default_precision_is_the_stored_dtype_where_the_target_computes_it():
    """Without --precision a bf16/fp16 checkpoint keeps its dtype where the
    target's CPU runtime has its kernels (so verify can judge it), else
    converts in float32 and says why; --precision always wins."""
    assert choose_precision(None, "bfloat16", "torch") == (
        "bf16", "the checkpoint is stored in bfloat16; --precision fp32 converts in float32")
    assert choose_precision(None, "float16", "onnx")[0] == "fp16"
    precision, why = choose_precision(None, "bfloat16", "onnx")
    assert precision == "fp32" and "onnxruntime's CPU provider has no bfloat16 kernels" in why
    assert "--precision bf16 writes bfloat16" in why
    precision, why = choose_precision(None, "float16", "paddle")
    assert precision == "fp32" and "Paddle has no CPU float16" in why
    assert choose_precision("fp32", "bfloat16", "torch") == (
        "fp32", "--precision fp32; the checkpoint is stored in bfloat16")
    assert choose_precision("bf16", "bfloat16", "paddle") == ("bf16", "--precision bf16")
    assert choose_precision(None, None, "torch")[0] == "fp32"


def test_a_bf16_module_converts_in_bf16_by_default(tmp_path):
    """A factory whose weights are all bfloat16 (which x2 could not read
    before): torch's state dict holds bf16, the outputs are bf16 within
    bf16's tolerance of the source (run in float32 on the same weights,
    upcast exactly). --precision fp32: tests/test_hf_folder.py. About 6-10 s
    (a tiny conversion, a load of the written model)."""
    model = f"{TORCH_MODELS}:mlp_bf16"
    out = tmp_path / "default"
    report = convert(model, str(out), source="torch", target="torch",
                     input_shapes={"x": [2, 20]})
    precision = report.target_details["precision"]
    assert report.source["stored_dtype"] == "bfloat16"
    assert precision["precision"] == "bf16" and "stored in bfloat16" in precision["chosen"]
    assert precision["source_run"].startswith("float32: the bfloat16 weights upcast exactly")
    assert [o["dtype"] for o in report.outputs] == ["bfloat16"]
    assert _weights_dtype(out, "torch") == "bfloat16"
    verify = report.target_details["verify"]
    assert verify["verified"] and verify["tolerance"]["rtol"] == 5e-2
    assert 0 < verify["max_rel"]["torch:python"]["output"] <= 5e-2   # really bf16


def test_a_half_model_may_part_from_the_source_generation_only_at_a_near_tie():
    """x2 check --generate on a bf16 model: greedy tokens that part from the
    fp32 source where its top two logits are within bf16's tolerance pass
    (rounding may pick either); a clear winner taken differently fails, and
    so does any difference in an fp32 model. numpy only."""
    from x2.check.generation import _compare
    logits = np.array([[[0.0, 1.0, 0.99, -1.0]], [[0.0, 0.0, 0.0, 2.0]]])  # [steps, batch, vocab]
    reference = {"tokens": np.array([[1, 3]]), "logits": logits}
    near = {"tokens": np.array([[2, 3]]), "logits": logits + 0.001}
    rtol, atol = 5e-2, 1e-2
    assert _compare("bf16", reference, near, rtol, atol, half=True)["passed"]
    assert _compare("bf16", reference, near, rtol, atol, half=True)["near_tie"]
    assert not _compare("fp32", reference, near, rtol, atol)["passed"]
    far = {"tokens": np.array([[3, 3]]), "logits": logits + 0.001}
    assert not _compare("bf16", reference, far, rtol, atol, half=True)["passed"]


def test_mixed_torch_autocasts_with_fp32_weights(tmp_path):
    model = f"{TORCH_MODELS}:resnet"
    out = tmp_path / "out"
    convert_then_check(model, str(out), source="torch", target="torch",
                       input_shapes={"x": [2, 3, 32, 32]}, emit_options={"precision": "mixed"})
    code = (out / "model.py").read_text()
    assert "with torch.autocast(device_type=x.device.type, dtype=torch.float16):" in code
    assert _weights_dtype(out, "torch") == "float32"
    result = check(model, str(out), source="torch", target="torch")
    assert result["precision"] == "mixed" and result["rtol"] == 1e-2 and result["passed"]
    assert 0 < result["outputs"][0]["max_rel"] <= 1e-2   # really computed in fp16


def test_bisect_names_the_first_layer_over_the_budget(sample, tmp_path):
    """A budget tighter than fp16 rounding: the first converted layer exceeds it."""
    model = str(sample("small_cnn"))
    out = tmp_path / "out"
    convert_then_check(model, str(out), target="torch", emit_options={"precision": "fp16"})
    result = check(model, str(out), target="torch", rtol=1e-6, atol=1e-7, bisect=True)
    assert not result["passed"]
    first = result["bisect"]["first_divergence"]
    assert first is not None and first["source_op"] == "Conv2D", result["bisect"]
    assert first["max_rel"] > 1e-6
