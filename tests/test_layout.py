"""Layout choices: --io-layout nchw leaves no Transpose at all, --layout nhwc
keeps the source layout inside (Paddle data_format=NHWC, torch channels_last),
and every Transpose left is explained. Parity within rtol 1e-4 throughout."""

import re

import numpy as np
import pytest

from conftest import convert_then_check, run_cli
from x2.convert import convert
from x2.ir import Graph
from x2.ir.interpret import interpret
from x2.check.parity import check
from x2.passes import pipeline_for, run_pipeline

RTOL = 1e-4


def _passes(result):
    for r in result["outputs"]:
        assert not r["ref_constant"] and r["passed"], r


@pytest.mark.parametrize("target", ["onnx", "paddle"])
@pytest.mark.parametrize("name", ["small_cnn", "residual_cnn", "mlp"])
def test_nchw_interface_leaves_no_transpose(sample, tmp_path, target, name):
    report = convert_then_check(str(sample(name)), str(tmp_path / "out"), target=target,
                                io_layout="nchw")
    assert report.transposes_left == 0 and report.transposes_where == []
    if name != "mlp":
        assert report.inputs[0]["shape"][1] in (3, 8)  # channels now come first
        assert report.layout["io_transposes"]
    _passes(check(str(sample(name)), str(tmp_path / "out"), target=target, rtol=RTOL))


def test_default_interface_keeps_one_transpose_per_image_input_and_explains_it(sample, tmp_path):
    report = convert(str(sample("residual_cnn")), str(tmp_path / "out"), target="onnx")
    assert report.transposes_left == 1
    (item,) = report.transposes_where
    assert "graph input 'pixels'" in item["where"] and "--io-layout nchw" in item["why"]


def test_nhwc_inside_for_paddle(sample, tmp_path):
    out = tmp_path / "out"
    report = convert_then_check(str(sample("residual_cnn")), str(out), target="paddle",
                                layout="nhwc")
    assert report.transposes_left == 0 and report.layout["inside"] == "nhwc"
    code = (out / "model.py").read_text()
    assert code.count("data_format='NHWC'") >= 3 and "transpose" not in code
    _passes(check(str(sample("residual_cnn")), str(out), target="paddle", rtol=RTOL))
    # Paddle 3.3's oneDNN runs an NHWC conv fused with its relu as NCHW:
    # x2 check fails that runner, saying so and what to do instead; the others run.
    result = check(str(sample("residual_cnn")), str(out), target="paddle", rtol=RTOL,
                   serving=True)
    assert not result["passed"]
    assert re.search(r"--layout nhwc.*--layout nchw \(the default\)",
                     result["runner_errors"]["paddle:inference"])
    assert {r["runner"] for r in result["outputs"]} == {"paddle:python", "paddle:jit.load"}


def test_nhwc_inside_with_nchw_interface_explains_its_transpose(sample, tmp_path):
    report = convert_then_check(str(sample("small_cnn")), str(tmp_path / "out"), target="paddle",
                                layout="nhwc", io_layout="nchw")
    assert report.transposes_left == 1
    assert "--layout nhwc" in report.transposes_where[0]["why"]
    _passes(check(str(sample("small_cnn")), str(tmp_path / "out"), target="paddle", rtol=RTOL))


def test_nhwc_for_torch_is_channels_last(sample, tmp_path):
    out = tmp_path / "out"
    convert_then_check(str(sample("small_cnn")), str(out), target="torch", layout="nhwc")
    assert "channels_last" in (out / "model.py").read_text()
    _passes(check(str(sample("small_cnn")), str(out), target="torch", rtol=RTOL))


_TORCH_WEIGHT_COPIES = r"""
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
import model
torch.set_num_threads(1)
net = model.load_model()
convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
weights = {tuple(m.weight.shape) for m in convs}
shape = json.load(open(sys.argv[1] + "/report.json"))["inputs"][0]["shape"]
image = torch.randn([2 if d is None else d for d in shape])   # NHWC, as Keras takes it
with torch.inference_mode(), torch.profiler.profile(record_shapes=True) as prof:
    net(image)
copies = [e.input_shapes[0] for e in prof.events() if e.name == "aten::copy_"
          and e.input_shapes and tuple(e.input_shapes[0]) in weights]
print(json.dumps({"channels_last": model.CHANNELS_LAST, "convs": len(convs),
                  "weights_channels_last": all(m.weight.is_contiguous(
                      memory_format=torch.channels_last) for m in convs),
                  "weight_copies": len(copies)}))
"""


def test_keras_images_to_torch_spare_every_conv_a_weight_reorder(sample, tmp_path):
    """An NHWC image enters as a channels_last view of its permute, and torch's
    convolutions keep that format: weights left NCHW were reordered on every
    call (1.6-3.2x TensorFlow's time at small images); they load as
    channels_last, so one forward copies no weight."""
    import json
    import subprocess
    import sys

    from conftest import ENV, ROOT
    out = tmp_path / "out"
    convert_then_check(str(sample("residual_cnn")), str(out), target="torch")
    proc = subprocess.run([sys.executable, "-c", _TORCH_WEIGHT_COPIES, str(out)],
                          capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["convs"] >= 3 and found["channels_last"] and found["weights_channels_last"]
    assert found["weight_copies"] == 0, found
    _passes(check(str(sample("residual_cnn")), str(out), target="torch", rtol=1e-5))


def test_nhwc_for_onnx_is_refused_clearly(sample, tmp_path):
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--out", str(tmp_path / "out"), "--layout", "nhwc")
    assert proc.returncode == 2 and "NCHW-only" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


@pytest.mark.slow
# ResNet50's layout is plain convolutions and adds; its parity (onnx, paddle)
# is test_onnx.py's round trip and test_tf_to_paddle.py's.
@pytest.mark.parametrize("name", ["mobilenet_v2", "efficientnet_b0"])
def test_keras_applications_without_transposes(sample, tmp_path, name):
    for target in ("onnx", "paddle"):
        out = tmp_path / target
        report = convert_then_check(str(sample(name)), str(out), target=target, io_layout="nchw")
        assert report.transposes_left == 0
        _passes(check(str(sample(name)), str(out), target=target, rtol=RTOL,
                      serving=target == "paddle"))
    if name == "efficientnet_b0":
        # Forms Paddle Inference's oneDNN runs fast (2.3x its time otherwise):
        # swish, not silu; the squeeze-and-excite mean as a global pool.
        code = (tmp_path / "paddle" / "model.py").read_text()
        assert "F.swish(" in code and "F.silu(" not in code
        assert "F.adaptive_avg_pool2d(" in code and "paddle.mean(" not in code
    if name == "mobilenet_v2":
        return   # their default interface: test_onnx.py test_keras_applications_to_onnx
    # The default (NHWC) interface: one Transpose, at the input.
    report = convert_then_check(str(sample(name)), str(tmp_path / "nhwc_io"), target="onnx")
    assert report.transposes_left == 1
    assert report.transposes_where[0]["where"].startswith("at graph input")


def _nhwc_ir_model():
    """A frontend-style NHWC graph: conv (wrapped in Transposes), residual add,
    concat, pad, BN, max-pool and flatten -> dense."""
    rng = np.random.default_rng(3)
    g = Graph()
    g.meta.source_layout = "NHWC"
    g.add_input("x", "float32", (2, 6, 6, 4))
    info = type(g.info["x"])

    def op(name, inputs, out_shape, **attrs):
        g.add_node(name, inputs, attrs=attrs, name=g.fresh_name(name))
        out = g.nodes[-1].outputs[0]
        g.info[out] = info("float32", out_shape)
        return out

    def conv(x, cin, cout):
        w = g.add_constant("w", rng.normal(0, 0.3, (cout, cin, 3, 3)).astype("float32"))
        t = op("transpose", [x], (2, cin, 6, 6), perm=[0, 3, 1, 2])
        y = op("conv2d", [t, w], (2, cout, 6, 6), strides=[1, 1], dilations=[1, 1],
               pads=[1, 1, 1, 1], groups=1)
        return op("transpose", [y], (2, 6, 6, cout), perm=[0, 2, 3, 1])

    a = op("relu", [conv("x", 4, 4)], (2, 6, 6, 4))
    r = op("add", ["x", a], (2, 6, 6, 4))
    c = op("concat", [r, conv(r, 4, 4)], (2, 6, 6, 8), axis=3)
    scale = g.add_constant("s", rng.uniform(0.5, 1.5, 8).astype("float32"))
    c = op("mul", [c, scale], (2, 6, 6, 8))
    t = op("transpose", [c], (2, 8, 6, 6), perm=[0, 3, 1, 2])
    p = op("max_pool2d", [t], (2, 8, 3, 3), kernel=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0])
    p = op("transpose", [p], (2, 3, 3, 8), perm=[0, 2, 3, 1])
    f = op("reshape", [p], (2, 72), shape=[-1, 72])
    w = g.add_constant("fc", rng.normal(0, 0.3, (72, 5)).astype("float32"))
    g.outputs = [op("matmul", [f, w], (2, 5))]
    return g


@pytest.mark.parametrize("layout,io_layout,left", [("nchw", "source", 1), ("nchw", "nchw", 0),
                                                   ("nhwc", "source", 0), ("nhwc", "nchw", 1)])
def test_layout_modes_preserve_numbers_on_ir(layout, io_layout, left):
    g = _nhwc_ir_model()
    x = np.random.default_rng(4).normal(size=(2, 6, 6, 4)).astype("float32")
    (ref,) = interpret(g, [x])
    g, _ = run_pipeline(g, pipeline_for(layout, io_layout))
    fed = x.transpose(0, 3, 1, 2) if io_layout == "nchw" else x
    (got,) = interpret(g, [fed])
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert g.count("transpose") == left
