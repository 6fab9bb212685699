"""The ops real models still missed (issue 31), each converted to paddle,
onnx and torch with parity against its source framework (fp32, rtol 1e-5;
Paddle also through Paddle Inference, as served): mixture-of-experts
routing (topk, scatter_add, sort, histc, index_put, transformers' grouped
matmul), writes into tensors (slice_scatter, select_scatter, copy,
index_put, scatter), rounding divisions, log1p, repeat, bilinear and
nearest upsampling; from ONNX, TopK, DepthToSpace/SpaceToDepth, Size and
reflect Pad of a 2-D signal. Each source is first run on two inputs and
every output must change (tests/test_zoo_ops.py's helper). The scripted
loop's ONNX conversion and check add about 10 s on 2 cores."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT, convert_then_check, run_cli
from test_zoo_ops import TARGETS, _inputs, _run_source
from x2.check.parity import check
from x2.convert import convert
from x2.errors import X2Error

pytestmark = pytest.mark.xdist_group("real_ops")

RTOL = 1e-5
TORCH_MODELS = str(ROOT / "tests" / "real_ops_torch.py")
ONNX_BUILDER = str(ROOT / "tests" / "real_ops_onnx.py")


def _assert_parity(source, model, shapes, tmp_path, serving=True, **convert_args):
    first, second = _inputs(shapes, 1), _inputs(shapes, 2)
    ref_a = _run_source(source, model, first, tmp_path)
    ref_b = _run_source(source, model, second, tmp_path)
    for i, (a, b) in enumerate(zip(ref_a, ref_b)):
        assert not (a == b).all(), f"output {i} of {model} does not depend on its input"
    for target in TARGETS:
        out = tmp_path / target
        convert_then_check(model, str(out), source=source, target=target, **convert_args)
        result = check(model, str(out), source=source, target=target, rtol=RTOL,
                       inputs=first, serving=serving)
        runners = {r["runner"] for r in result["outputs"]}
        if target == "paddle" and serving:
            assert "paddle:inference" in runners, runners
        for r in result["outputs"]:
            assert r["passed"], f"{target} {r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
        assert len({r["name"] for r in result["outputs"]}) == len(ref_a)


def _torch(name, shape, tmp_path, serving=True):
    _assert_parity("torch", f"{TORCH_MODELS}:{name}", [shape], tmp_path, serving,
                   input_shapes={"x": list(shape)})


def test_hand_written_top2_mixture_of_experts(tmp_path):
    """topk of the gate, scatter_add of the weights, topk(largest=False)."""
    _torch("top_two_experts", (6, 8), tmp_path)


def test_values_read_again_survive_paddle_inference(tmp_path):
    """Paddle Inference's in-place pass (paddle 3.3, default config) let
    these ops write over a value later ops read: the written code hands each
    a copy, and Paddle Inference matches torch (without the copies 24 of the
    25 outputs came out wrong there, right in dygraph and jit.load)."""
    _torch("read_again", (2, 3, 4), tmp_path)
    code = (tmp_path / "paddle" / "model.py").read_text()
    assert "paddle.concat([" in code and "would overwrite" in code


@pytest.mark.parametrize("batch", [2, "batch"])
def test_where_takes_its_operands_at_one_shape_in_paddle(tmp_path, batch):
    """A saved program's paddle.where broadcasts by adding zeros, which
    Paddle Inference's oneDNN ran slowly (BERT-base 3.8x slower): the Paddle
    code expands each operand first where that is sure to be valid (a
    dynamic batch against another leaves it to paddle.where), and Paddle
    Inference matches torch (masked rows of the attention included)."""
    _assert_parity("torch", f"{TORCH_MODELS}:broadcasts", [(2, 3, 4)], tmp_path,
                   input_shapes={"x": [batch, 3, 4]})
    if batch != 2:
        return
    program = json.loads((tmp_path / "paddle" / "inference" / "model.json").read_text())
    ops = [op["#"] for block in program["program"]["regions"][0]["blocks"]
           for op in block["ops"]]
    # the one add is the attention mask's; a broadcasting where makes five
    assert ops.count("1.where") == 4 and ops.count("1.add") == 1, sorted(ops)


def test_leaky_relu_after_a_conv_runs_in_paddle_inference(tmp_path):
    """Paddle Inference (3.3, default config) fuses conv2d + leaky_relu and
    crashes (SIGSEGV) on it: after a convolution the Paddle code writes the
    max of x and alpha * x, elsewhere F.leaky_relu."""
    _torch("conv_leaky", (2, 3, 8, 8), tmp_path)
    code = (tmp_path / "paddle" / "model.py").read_text()
    assert code.count("paddle.maximum(") == 2 and code.count("F.leaky_relu(") == 1


@pytest.mark.parametrize("batch", [2, None])
def test_channels_last_tokens_and_head_run_in_paddle_inference(batch, tmp_path):
    """transpose -> reshape -> concat is written with paddle.flatten, which
    Paddle Inference does not fuse with the transpose; the NHWC mean as
    paddle.mean, not as an NHWC pool."""
    _assert_parity("torch", f"{TORCH_MODELS}:channels_last_head", [(2, 3, 8, 8)], tmp_path,
                   input_shapes={"x": [batch or "batch", 3, 8, 8]})
    code = (tmp_path / "paddle" / "model.py").read_text()
    assert "paddle.flatten(" in code and "adaptive_avg_pool2d" not in code, code


def test_a_pool_of_one_whole_window_is_a_reduction(tmp_path):
    """x2/passes/pools.py: the torch code of transformers' EfficientNet
    padded its head by 318 and pooled a 320x320 window (100x the source's
    time); one window over the whole map is a mean (a max)."""
    _torch("whole_window_pools", (2, 3, 2, 3), tmp_path)
    code = (tmp_path / "torch" / "model.py").read_text()
    assert code.count("avg_pool2d(") == 1 and "max_pool2d(" not in code, code
    assert "torch.mean(" in code and "torch.amax(" in code, code


def test_tanh_gelu_is_one_fast_gelu_in_onnxruntime(tmp_path):
    """At opset 17 (no Gelu op) the ONNX output spells x^3 as Pow, the form
    onnxruntime's optimizer fuses into one FastGelu kernel; x * x * x kept
    eight element-wise ops a call (GPT-2 small 1.03-1.06x torch.onnx's)."""
    import onnx
    import onnxruntime as ort
    _torch("tanh_gelu_mlp", (2, 5, 8), tmp_path)
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(str(tmp_path / "onnx" / "model.onnx"), options,
                         providers=["CPUExecutionProvider"])
    ops = [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node]
    assert ops.count("FastGelu") == 1 and "Tanh" not in ops, ops


def test_repeat_log1p_rounding_divisions_remainder(tmp_path):
    """repeat (with a new leading dim), log1p of tiny values, div with
    rounding_mode floor/trunc on floats and ints, // and % of floats;
    through Paddle Inference too, where the divisions and every integer op
    read a value another op reads after them (x2/emitters/paddle_inplace.py)."""
    _torch("arithmetic", (2, 3, 4), tmp_path)


def test_bilinear_and_nearest_upsampling(tmp_path):
    _torch("upsample", (2, 3, 5, 6), tmp_path)


def test_writes_into_slices_indices_and_masks(tmp_path):
    """x[:, a:b] = v, x[:, ::2, i] = c, x[i] = v, x[:, :, i] = c, x[idx] = v
    with a negative index, x[:, idx] = v, index_put_ accumulating at repeated
    indices, x[mask] = 0, scatter of src."""
    _torch("writes", (4, 6, 5), tmp_path)


def test_sort_histc_empty_like(tmp_path):
    _torch("sorting", (3, 7), tmp_path)


def test_scale_factor_with_rounded_size_is_refused(tmp_path):
    """torch maps coordinates by the factor when the size is rounded; x2's
    resize maps by sizes, so it says so instead of drifting."""
    model = tmp_path / "m.py"
    model.write_text("import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                     "        return torch.nn.functional.interpolate(x, scale_factor=1.7, "
                     "mode='bilinear')\ndef m():\n    return M()\n")
    with pytest.raises(X2Error) as info:
        convert(f"{model}:m", str(tmp_path / "out"), source="torch", target="onnx",
                input_shapes={"x": [1, 2, 5, 6]})
    assert "scale factors [1.7, 1.7]" in str(info.value) and "size=" in str(info.value)


@pytest.mark.parametrize("name", ["mixtral", "mixtral_batched", "qwen2_moe"])
def test_transformers_mixture_of_experts_decoder(name, tmp_path):
    """A transformers MoE decoder converts as transformers runs it on CPU:
    its default experts implementation sorts tokens by expert (sort, div
    floor, histc, cumsum), multiplies them by their expert's weights
    (transformers::grouped_mm_fallback) and puts them back (index_put of an
    empty_like); batched_mm gathers each token's expert weights instead.
    Logits checked with left- and right-padded masks on every target."""
    model = f"{TORCH_MODELS}:{name}"
    for target in TARGETS:
        out = tmp_path / target
        convert_then_check(model, str(out), source="torch", target=target,
                           input_shapes={"input_ids": [2, 7], "attention_mask": [2, 7]},
                           options={"input_dtypes": {"*": "int64"}})
        result = check(model, str(out), source="torch", target=target, serving=True,
                       rtol=1e-4)
        assert result["passed"], (target, result["outputs"])


def _onnx(name: str, tmp_path) -> str:
    out = tmp_path / f"{name}.onnx"
    proc = subprocess.run([sys.executable, ONNX_BUILDER, name, str(out)], capture_output=True,
                          text=True, env=ENV, cwd=ROOT / "tests")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


def test_onnx_topk_largest_smallest_and_size(tmp_path):
    _assert_parity("onnx", _onnx("ordering", tmp_path), [(2, 6, 5)], tmp_path)


def test_onnx_depth_to_space_both_orders_and_space_to_depth(tmp_path):
    _assert_parity("onnx", _onnx("pixel_shuffle", tmp_path), [(2, 8, 6, 9)], tmp_path)


def test_onnx_reflect_pad_of_a_2d_signal(tmp_path):
    _assert_parity("onnx", _onnx("reflect_pad_2d_input", tmp_path), [(2, 16)], tmp_path)


# -- capture of real modules ----------------------------------------------------

def test_a_data_dependent_branch_names_the_line_and_what_to_do(tmp_path):
    with pytest.raises(X2Error) as info:
        convert(f"{TORCH_MODELS}:data_dependent_branch", str(tmp_path / "out"),
                source="torch", target="onnx", input_shapes={"x": [2, 4]})
    message = str(info.value)
    assert "real_ops_torch.py, line" in message and "`if x.sum() > 0:`" in message, message
    assert "torch.where" in message and "torch.cond" in message
    assert not (tmp_path / "out").exists()


def test_lengths_are_captured_at_one_when_zero_is_out_of_range(tmp_path):
    """`lengths - 1` indexes each sequence's last step: the 0/1 integers x2
    draws by default make an index of -1, which torch rejects; capture tries
    again with lengths of 1. x2 check draws lengths in [1, 6)."""
    model = f"{TORCH_MODELS}:last_by_length"
    for target in TARGETS:
        out = tmp_path / target
        convert_then_check(model, str(out), source="torch", target=target,
                           input_shapes={"x": [3, 5, 4], "lengths": [3]},
                           options={"input_dtypes": {"lengths": "int64"},
                                    "input_ranges": {"lengths": [1, 6]}})
        result = check(model, str(out), source="torch", target=target, serving=True)
        assert result["passed"], (target, result["outputs"])


def test_an_int_argument_is_fixed_with_input_value(tmp_path):
    """forward(x, sr: int): --input-value sr=16000 makes the rate a constant
    (the Python branch on it keeps the 16 kHz side); the converted model
    takes x alone and x2 check passes the rate to the source."""
    model = f"{TORCH_MODELS}:sample_rate"
    for target in TARGETS:
        out = tmp_path / target
        report = convert_then_check(model, str(out), source="torch", target=target,
                                    input_shapes={"x": [2, 8]},
                                    options={"input_values": {"sr": 16000}})
        assert [i["name"] for i in report.inputs] == ["x"]
        result = check(model, str(out), source="torch", target=target, serving=True)
        assert result["passed"], (target, result["outputs"])
        assert {r["name"] for r in result["outputs"]} and all(
            r["ref_scale"] > 1 for r in result["outputs"])   # tanh(x) * 2: the 16 kHz side


def test_an_onnx_branch_on_an_input_folds_with_input_value(tmp_path):
    """If(sr == 16000) whose branches give different ranks (Silero VAD's
    exports): with the rate fixed the branch taken is inlined; through the
    CLI, and x2 check feeds sr to onnxruntime."""
    model = _onnx("rate_branch", tmp_path)
    for target in TARGETS:
        out = tmp_path / target
        proc = run_cli("convert", "--from", "onnx", "--to", target, "--model", model,
                       "--out", str(out), "--input-value", "sr=16000")
        assert proc.returncode == 0, proc.stderr
        result = check(model, str(out), source="onnx", target=target, serving=True)
        assert result["passed"], (target, result["outputs"])
    bad = run_cli("convert", "--from", "onnx", "--to", "onnx", "--model", model,
                  "--out", str(tmp_path / "bad"), "--input-value", "rate=16000")
    assert bad.returncode != 0 and "'rate' is not an input; inputs are x, sr" in bad.stderr
    assert not (tmp_path / "bad").exists()


_SCRIPTED = """import sys, torch
class Branch(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x - 1
class Loop(torch.nn.Module):
    def forward(self, x):
        y = x
        for i in range(x.shape[0]):
            y = y + x[i]
        return y
class InPlace(torch.nn.Module):
    def forward(self, x):
        out = torch.zeros(x.shape[0], 3)
        for i in range(x.shape[0]):
            out[i] = x[i] * 2
        return out
torch.jit.script(Branch()).save(sys.argv[1] + "/branch.pt")
torch.jit.script(Loop()).save(sys.argv[1] + "/loop.pt")
torch.jit.script(InPlace()).save(sys.argv[1] + "/in_place.pt")
"""


def test_scripted_torchscript_branch_and_loop_convert_and_an_in_place_loop_is_refused(
        tmp_path):
    """A scripted `if` on a value of the input becomes the IR's `if` (torch's
    TorchScript converter makes it a torch.cond): both branches match. A
    loop over the input's size becomes a while_loop (tests/test_control_flow.py
    covers every target); one that writes a tensor from outside it in place
    is refused naming its line and what to give instead."""
    builder = tmp_path / "build_scripted.py"   # torch.jit.script reads the class's source
    builder.write_text(_SCRIPTED)
    proc = subprocess.run([sys.executable, str(builder), str(tmp_path)], capture_output=True,
                          text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    model = str(tmp_path / "branch.pt")
    for target in TARGETS:
        out = tmp_path / target
        convert_then_check(model, str(out), source="torch", target=target,
                           input_shapes={"x": [2, 3]})
        for sign in (1, -1):   # one input per branch
            data = sign * (np.abs(_inputs([(2, 3)], 1)[0]) + 0.1)
            result = check(model, str(out), source="torch", target=target, inputs=[data])
            assert result["passed"], (target, sign, result["outputs"])
    model = str(tmp_path / "loop.pt")
    convert_then_check(model, str(tmp_path / "loop"), source="torch", target="onnx",
                       input_shapes={"x": ["n=4", 3]})
    result = check(model, str(tmp_path / "loop"), source="torch", target="onnx")
    assert [s["input_shapes"][0][0] for s in result["shapes_checked"]] == [4, 1, 7]
    assert result["passed"], result["outputs"]
    with pytest.raises(X2Error) as info:
        convert_then_check(str(tmp_path / "in_place.pt"), str(tmp_path / "out"),
                           source="torch", target="onnx", input_shapes={"x": [4, 3]})
    message = str(info.value)
    assert "loop (at build_scripted.py, line 16)" in message, message   # InPlace's `for`
    assert "out[i] = ..." in message and "nn.Module" in message
    assert not (tmp_path / "out").exists()


def test_packed_sequences_are_refused_from_torch_and_convert_through_onnx(tmp_path):
    """pack_padded_sequence(enforce_sorted=False): torch.export cannot hold a
    packed batch, and the message says to export to ONNX, where it is an LSTM
    with sequence lengths after a TopK that sorts them: that file converts
    to every target, checked on lengths 5, 2 and 4."""
    with pytest.raises(X2Error) as info:
        convert_then_check(f"{TORCH_MODELS}:packed_lstm", str(tmp_path / "out"), source="torch",
                           target="onnx", input_shapes={"x": [3, 5, 4], "lengths": [3]},
                           options={"input_dtypes": {"lengths": "int64"}})
    assert "packed sequences" in str(info.value) and "torch.onnx.export" in str(info.value)
    model = tmp_path / "packed.onnx"
    proc = subprocess.run([sys.executable, TORCH_MODELS, "packed_lstm_onnx", str(model)],
                          capture_output=True, text=True, env=ENV, cwd=ROOT / "tests")
    assert proc.returncode == 0, proc.stderr[-2000:]
    x = _inputs([(3, 5, 4)], 1)[0]
    lengths = np.array([5, 2, 4], np.int64)
    for target in TARGETS:
        out = tmp_path / target
        # Lengths are 1..5 (x2 cannot tell behind the TopK): verify feeds those.
        convert_then_check(str(model), str(out), source="onnx", target=target,
                           options={"input_ranges": {"lengths": [1, 6]}})
        result = check(str(model), str(out), source="onnx", target=target, inputs=[x, lengths],
                       serving=True)
        assert result["passed"], (target, result["outputs"])
