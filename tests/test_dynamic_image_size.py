"""Keras models over images of any size ((None, None, 3) inputs), converted
once per target with height and width left dynamic and checked against
TensorFlow at three image sizes, odd ones included: a stride-2 SAME
convolution pads an odd size differently from an even one, so its pads are
computed at run time (ONNX auto_pad=SAME_UPPER, Paddle padding="SAME", the
pad_same() helper in torch's model.py). Paddle runs as written, through
paddle.jit.load and through Paddle Inference (default config, oneDNN).

Parity: x2 check's fp32 rule, max|converted - source| <= 1e-6 + 1e-4 *
max|source|, every runner at every size. Convert's own verify is left out
(the check below runs more sizes than it does) to keep the suite's time."""
import onnx
import pytest

from conftest import _build
from x2.check.parity import check
from x2.convert import convert

pytestmark = pytest.mark.xdist_group("dynamic_image_size")
TARGETS = ["onnx", "paddle", "torch"]
# Height and width differ at each size, so a swapped pair cannot pass; 57 and
# 33 are odd, 45 is odd and not a multiple of any stride.
SIZES = {"dim1": [32, 57, 64], "dim2": [45, 33, 64]}
CHECKED = [[2, 32, 45, 3], [1, 57, 33, 3], [3, 64, 64, 3]]
RUNNERS = {"onnx": {"onnx:onnxruntime"}, "torch": {"torch:python"},
           "paddle": {"paddle:python", "paddle:jit.load", "paddle:inference"}}


@pytest.fixture(scope="module")
def models(model_dir):
    return _build(["tests/tf_models.py", "any_size_images"], model_dir / "any_size_images")


@pytest.fixture(scope="module")
def mobilenet(models, tmp_path_factory):
    """MobileNetV2 converted to each target once: target -> (report, folder)."""
    folder = tmp_path_factory.mktemp("mobilenet_v2")
    return {target: (convert(str(models / "mobilenet_v2"), str(folder / target), target=target,
                             emit_options={"verify": False}), folder / target)
            for target in TARGETS}


def _checked_at_three_sizes(model, out, target) -> dict:
    result = check(str(model), str(out), target=target, dim_sizes=SIZES,
                   serving=target == "paddle")
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == CHECKED
    assert {r["runner"] for r in result["outputs"]} == RUNNERS[target]
    assert not any(r["ref_constant"] for r in result["outputs"]), result["outputs"]
    assert result["passed"], result["outputs"]
    return result


@pytest.mark.parametrize("target", TARGETS)
def test_mobilenet_v2_takes_any_image_size(models, mobilenet, target):
    report, out = mobilenet[target]
    assert report.inputs[0]["shape"] == [None, None, None, 3]
    # NHWC in and out, NCHW inside: the layout pass leaves only the interface's two.
    assert report.transposes_left == 2
    assert [t["where"].split(" '")[0] for t in report.transposes_where] == [
        "at graph input", "at graph output"]
    _checked_at_three_sizes(models / "mobilenet_v2", out, target)
    if target == "onnx":
        convs = [n for n in onnx.load(str(out / "model.onnx")).graph.node if n.op_type == "Conv"]
        same = [n for n in convs if any(a.name == "auto_pad" and a.s == b"SAME_UPPER"
                                        for a in n.attribute)]
        # The stem; Keras pads its stride-2 blocks with ZeroPadding2D, as for any size.
        assert len(same) == 1
    else:
        code = (out / "model.py").read_text()
        assert code.count("padding='SAME'" if target == "paddle" else "(pad_same(") == 1


@pytest.mark.parametrize("target", TARGETS)
def test_keras_preprocessing_and_windows_over_an_image_of_any_size(models, target, tmp_path):
    """Rescaling and Normalization, then a bilinear Resizing to 20 x 24 under
    a stride-2 SAME convolution, from any input size to a fixed one (Paddle
    computes its resize taps from the size at run time); and stride-2 SAME
    depthwise convolution, max and average pooling (TF's average leaves the
    padding out) at the image's own size."""
    model, out = models / "preprocessing", tmp_path / "out"
    report = convert(str(model), str(out), target=target, emit_options={"verify": False})
    assert report.inputs[0]["shape"] == [None, None, None, 3]
    assert [o["shape"][1:] for o in report.outputs] == [[10, 12, 4], [None, None, 6]]
    result = _checked_at_three_sizes(model, out, target)
    assert {r["name"] for r in result["outputs"]} == {"output_0", "output_1"}
    if target != "onnx":
        code = (out / "model.py").read_text()
        # The depthwise convolution and the pools (the resized 20 x 24 image's
        # convolution pads by fixed amounts); torch's average pads its count too.
        if target == "paddle":
            assert "def resize_taps(" in code and code.count("padding='SAME'") == 3
        else:
            assert code.count("(pad_same(") == 4


def _onnx_same_windows(path, auto_pad="SAME_UPPER"):
    """Conv, max pool and average pool, each stride 2 with auto_pad over an
    image whose height and width the file leaves open."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w"),
               numpy_helper.from_array(rng.normal(size=(4,)).astype(np.float32), "b")]
    window = {"auto_pad": auto_pad, "strides": [2, 2], "kernel_shape": [3, 3]}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], **window),
             helper.make_node("MaxPool", ["conv"], ["max"], **window),
             helper.make_node("AveragePool", ["max"], ["y"], **window)]
    graph = helper.make_graph(
        nodes, "same_windows", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                              ["batch", 3, "dim1", "dim2"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("target", TARGETS)
def test_onnx_same_upper_windows_over_an_image_of_any_size(target, tmp_path):
    """ONNX's auto_pad=SAME_UPPER at sizes known only at run time: the IR's
    auto_pad, as for TF's SAME (SAME_LOWER stays refused, saying what to do)."""
    model = _onnx_same_windows(str(tmp_path / "same.onnx"))
    out = tmp_path / target
    report = convert(model, str(out), source="onnx", target=target,
                     emit_options={"verify": False})
    assert report.inputs[0]["shape"] == [None, 3, None, None]
    result = check(model, str(out), source="onnx", target=target, dim_sizes=SIZES,
                   serving=target == "paddle")
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [n, 3, h, w] for n, h, w, _ in CHECKED]
    assert {r["runner"] for r in result["outputs"]} == RUNNERS[target]
    assert result["passed"], result["outputs"]
    if target == "onnx":
        lower = _onnx_same_windows(str(tmp_path / "lower.onnx"), "SAME_LOWER")
        with pytest.raises(Exception, match="SAME_LOWER over spatial sizes known only at "
                                            "run time is not supported.*--input-shape"):
            convert(lower, str(tmp_path / "lower"), source="onnx", target="onnx")
