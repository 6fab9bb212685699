"""Sizes a torch model computes from its inputs at run time (issue 49), on
every target: pads to a multiple of 8 (an image) and of a hop (a waveform),
F.interpolate(scale_factor=2) nearest and bilinear over an image of any
size, and a repeat by a count read from a shape. One module
(tests/torch_run_time_sizes.py) converted once per target with its dims
dynamic, then `x2 check` against torch at three sizes per dynamic dim, odd
ones included (Paddle: model.py, jit.load and Paddle Inference's default
config). Parity: x2 check's fp32 rule, max|converted - source| <= 1e-6 +
1e-4 * max|source|.

Two dims asked dynamic that the module's code fixes (a table of 6 positions
added to `patches`, a per-item loop over `anchors`): torch.export refuses
them as Dim.DYNAMIC; x2 exports with Dim.AUTO, keeps them at their example
size, names the line that fixed each in report.json, and x2 check runs them
there while the other dims take their three sizes; and one it bounds
(`if frames.shape[1] > 8`: the branch taken holds from 9 up), recorded and
checked within its bound. No conversion of its own: the same module and
conversions.

And an ONNX model that branches on a scalar input's value (`If(sr == 16000)`,
branches of different ranks) is refused naming that input and --input-value."""
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import convert_then_check
from x2.check.parity import check
from x2.convert import convert
from x2.errors import X2Error

pytestmark = pytest.mark.xdist_group("run_time_sizes")
MODEL = str(Path(__file__).with_name("torch_run_time_sizes.py")) + ":factory"
SHAPES = {"image": ["batch", 3, "h=20", "w=28"], "tokens": ["batch", "t=8", 5],
          "wave": ["batch", "n=100"], "patches": ["batch", "p=6", 4], "anchors": ["k=3", 4],
          "frames": ["batch", "f=12", 2]}
# Every size odd or off the multiple at least once; h and w differ at each size.
SIZES = {"h": [20, 13, 33], "w": [28, 9, 31], "t": [8, 4, 12], "n": [100, 7, 161]}
RUNNERS = {"onnx": {"onnx:onnxruntime"}, "torch": {"torch:python"},
           "paddle": {"paddle:python", "paddle:jit.load", "paddle:inference"}}


@pytest.mark.parametrize("target", ["onnx", "paddle", "torch"])
def test_sizes_computed_at_run_time(target, tmp_path):
    out = tmp_path / target
    report = convert_then_check(MODEL, str(out), source="torch", target=target,
                                input_shapes=SHAPES)
    fixed = report.source["specialized_dims"]
    assert [(d["input"], d["axis"], d["size"]) for d in fixed] == [("patches", 1, 6),
                                                                   ("anchors", 0, 3)]
    assert "torch_run_time_sizes.py:" in fixed[0]["why"] and "self.positions" in fixed[0]["why"]
    assert "range(anchors.shape[0])" in fixed[1]["why"], fixed
    assert report.source["bounded_dims"] == [{"input": "frames", "axis": 1, "min": 9,
                                              "max": None}]
    assert report.source["dim_sizes"] == {"f": [12, 9, 19]}   # within the bound
    result = check(MODEL, str(out), source="torch", target=target, dim_sizes=SIZES,
                   serving=target == "paddle")
    checked = [s["input_shapes"] for s in result["shapes_checked"]]
    assert checked == [[[2, 3, 20, 28], [2, 8, 5], [2, 100], [2, 6, 4], [3, 4], [2, 12, 2]],
                       [[1, 3, 13, 9], [1, 4, 5], [1, 7], [1, 6, 4], [3, 4], [1, 9, 2]],
                       [[3, 3, 33, 31], [3, 12, 5], [3, 161], [3, 6, 4], [3, 4], [3, 19, 2]]]
    assert {r["runner"] for r in result["outputs"]} == RUNNERS[target]
    assert not any(r["ref_constant"] for r in result["outputs"]), result["outputs"]
    assert result["passed"], result["outputs"]
    if target != "onnx":
        code = (out / "model.py").read_text()
        # Sizes read from the inputs at run time, not the example's numbers.
        assert "image.shape[2]" in code and "tokens.shape[1]" in code and "scale_factor" in code \
            or target == "paddle"
        assert ("paddle.tile" if target == "paddle" else "torch.tile") in code
    else:
        ops = {n.op_type for n in onnx.load(str(out / "model.onnx")).graph.node}
        assert {"Pad", "Resize", "Tile"} <= ops


def _branch_on_sample_rate(path: Path) -> None:
    """x [batch, n], sr int64 scalar: If(sr == 16000) gives x itself (rank 2)
    in one branch, x unsqueezed (rank 3) in the other, then an LSTM reads it."""
    then_out = helper.make_tensor_value_info("t", TensorProto.FLOAT, None)
    else_out = helper.make_tensor_value_info("e", TensorProto.FLOAT, None)
    then_graph = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                                   [then_out])
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
    else_graph = helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes"], ["e"])],
                                   "else", [], [else_out], initializer=[axes])
    nodes = [helper.make_node("Equal", ["sr", "rate"], ["is_16k"]),
             helper.make_node("If", ["is_16k"], ["picked"], then_branch=then_graph,
                              else_branch=else_graph),
             helper.make_node("Unsqueeze", ["picked", "axes0"], ["seq"]),
             helper.make_node("LSTM", ["seq", "W", "R"], ["y"], hidden_size=2)]
    rng = np.random.default_rng(0)
    inits = [helper.make_tensor("rate", TensorProto.INT64, [], [16000]),
             helper.make_tensor("axes0", TensorProto.INT64, [1], [0]),
             onnx.numpy_helper.from_array(rng.standard_normal((1, 8, 3)).astype(np.float32), "W"),
             onnx.numpy_helper.from_array(rng.standard_normal((1, 8, 2)).astype(np.float32), "R")]
    graph = helper.make_graph(nodes, "vad", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
        helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))


def test_a_branch_on_an_input_value_names_the_input_and_input_value(tmp_path):
    path = tmp_path / "vad.onnx"
    _branch_on_sample_rate(path)
    with pytest.raises(X2Error) as error:
        convert(str(path), str(tmp_path / "out"), source="onnx", target="onnx",
                emit_options={"verify": False})
    message = str(error.value)
    assert "'sr'" in message and "--input-value sr=" in message, message


@pytest.mark.parametrize("target", ["paddle"])
def test_a_tf_spectrogram_over_audio_of_any_length(tf_model, target, tmp_path):
    """tf.signal.stft with the audio's length dynamic: parity with TensorFlow
    at three lengths (one hop past a frame, a second of 16 kHz audio, an odd
    one) through model.py, jit.load and Paddle Inference. About 15 s. (onnx:
    the verify test below; torch writes the same Python as paddle's model.py.)"""
    model = str(tf_model("spectrogram"))
    out = tmp_path / target
    convert_then_check(model, str(out), target=target)
    result = check(model, str(out), target=target, dim_sizes={"dim1": [280, 16000, 1601]},
                   serving=target == "paddle")
    assert [s["input_shapes"][0][1] for s in result["shapes_checked"]] == [280, 16000, 1601]
    assert {r["runner"] for r in result["outputs"]} == RUNNERS[target]
    assert result["passed"], [(r["runner"], r["max_rel"]) for r in result["outputs"]]
    assert not result["input_independent"]


def test_verify_grows_audio_too_short_for_one_frame(tf_model, tmp_path):
    """Verify's default length (16 samples) gives no frame, an empty output
    that would prove nothing: it grows the length until the source computes
    something, and verifies there."""
    report = convert(str(tf_model("spectrogram")), str(tmp_path / "out"), target="onnx")
    verify = report.target_details["verify"]
    assert verify["verified"], verify
    first = verify["shapes"][0]["input_shapes"][0]
    assert first[1] >= 200, verify["shapes"]   # at least one frame of 200 samples
