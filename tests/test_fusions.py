"""Pattern fusions (x2/passes/fusions.py): each rewrite turns the arithmetic an
exporter writes back into one IR op, and the graph after computes what the
graph before did (numpy kernels, within 1e-6)."""
import math

import numpy as np
import pytest

from conftest import convert_then_check
from x2.ir import Graph, TensorInfo
from x2.ir.interpret import interpret, interpret_all
from x2.passes.fusions import fuse_patterns
from x2.passes.patterns import Const, Op, Var, match

RNG = np.random.default_rng(0)


class Builder:
    """A tiny graph writer: b.op("mul", a, b) returns the output's name;
    numbers become float32 scalar constants."""

    def __init__(self, shape=(2, 3, 8)):
        self.g = Graph()
        self.x = self.g.add_input("x", "float32", shape)
        self.shape = shape

    def const(self, value):
        return self.g.add_constant("c", np.asarray(value, np.float32))

    def op(self, op, *inputs, **attrs):
        """Add a node; its output gets dtype/shape info, as a frontend gives it."""
        names = [self.const(v) if isinstance(v, (int, float, np.ndarray)) else v for v in inputs]
        out = self.g.add_node(op, names, attrs=attrs).outputs[0]
        value = interpret_all(self.g, [np.ones(self.shape, np.float32)])[out]
        self.g.info[out] = TensorInfo(str(value.dtype), tuple(value.shape))
        return out

    def fused(self, output):
        """(graph before as a copy's result, graph after, op counts after)."""
        self.g.outputs = [output]
        data = RNG.standard_normal(self.shape).astype(np.float32)
        before = interpret(self.g, [data])[0]
        n_before = len(self.g.nodes)
        counts = {}
        graph = fuse_patterns(self.g, counts)
        after = interpret(graph, [data])[0]
        np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)
        return graph, n_before, counts


def _ops(graph):
    return [n.op for n in graph.nodes]


def test_silu_from_x_times_sigmoid_either_order():
    for flip in (False, True):
        b = Builder()
        s = b.op("sigmoid", b.x)
        y = b.op("mul", *((s, b.x) if flip else (b.x, s)))
        graph, n_before, counts = b.fused(y)
        assert _ops(graph) == ["silu"] and n_before == 2 and counts == {"silu": 1}


def test_swish_hidden_behind_times_one_plus_zero():
    b = Builder()
    x1 = b.op("div", b.op("add", b.op("mul", b.x, 1.0), 0.0), 1.0)
    y = b.op("mul", x1, b.op("sigmoid", x1))
    graph, n_before, counts = b.fused(y)
    assert n_before == 5 and _ops(graph) == ["silu"], _ops(graph)


def test_times_one_that_broadcasts_or_changes_dtype_stays():
    b = Builder((3,))
    y = b.op("mul", b.x, np.ones((2, 3), np.float32))  # broadcasts x to [2, 3]
    graph, _, counts = b.fused(y)
    assert _ops(graph) == ["mul"] and counts == {}


@pytest.mark.parametrize("scale", ["div", "mul"])
def test_hard_sigmoid_and_hard_swish_from_relu6(scale):
    """Keras's relu6(x + 3) / 6 and x * that; torch's decomposition (x * relu6(x + 3)) / 6."""
    def over_six(b, v):
        return b.op("div", v, 6.0) if scale == "div" else b.op("mul", v, 1 / 6)

    b = Builder()
    gate = over_six(b, b.op("clip", b.op("add", b.x, 3.0), min=0.0, max=6.0))
    graph, _, counts = b.fused(gate)
    assert _ops(graph) == ["hard_sigmoid"] and counts == {"hard_sigmoid": 1}

    b = Builder()
    gate = over_six(b, b.op("clip", b.op("add", b.x, 3.0), min=0.0, max=6.0))
    graph, _, _ = b.fused(b.op("mul", b.x, gate))
    assert _ops(graph) == ["hard_swish"]

    b = Builder()
    relu6 = b.op("clip", b.op("add", b.x, 3.0), min=0.0, max=6.0)
    graph, n_before, _ = b.fused(over_six(b, b.op("mul", b.x, relu6)))
    assert n_before == 4 and _ops(graph) == ["hard_swish"]


def test_a_clip_to_other_bounds_is_no_hard_sigmoid():
    b = Builder()
    graph, _, counts = b.fused(b.op("div", b.op("clip", b.op("add", b.x, 3.0), min=0.0, max=5.0),
                                    6.0))
    assert counts == {} and "hard_sigmoid" not in _ops(graph)


def test_sigmoid_of_another_value_is_not_silu():
    b = Builder()
    y = b.op("mul", b.x, b.op("sigmoid", b.op("neg", b.x)))
    graph, _, counts = b.fused(y)
    assert "silu" not in _ops(graph) and counts == {}


def test_silu_is_not_fused_when_the_sigmoid_is_read_elsewhere():
    b = Builder()
    s = b.op("sigmoid", b.x)
    y = b.op("mul", b.x, s)
    b.g.outputs = [y, s]
    counts = {}
    fuse_patterns(b.g, counts)
    assert counts == {} and sorted(_ops(b.g)) == ["mul", "sigmoid"]


@pytest.mark.parametrize("bracket", ["(x*0.5)*A", "x*(A*0.5)", "(x*A)*0.5"])
@pytest.mark.parametrize("arg", ["div", "mul"])
def test_gelu_erf_forms(bracket, arg):
    b = Builder()
    scaled = b.op("div", b.x, math.sqrt(2)) if arg == "div" else b.op("mul", b.x, 1 / math.sqrt(2))
    a = b.op("add", 1.0, b.op("erf", scaled))
    y = {"(x*0.5)*A": lambda: b.op("mul", b.op("mul", 0.5, b.x), a),
         "x*(A*0.5)": lambda: b.op("mul", b.x, b.op("mul", a, 0.5)),
         "(x*A)*0.5": lambda: b.op("mul", b.op("mul", a, b.x), 0.5)}[bracket]()
    graph, n_before, _ = b.fused(y)
    assert n_before == 5 and _ops(graph) == ["gelu"]
    assert graph.nodes[0].attrs["approximate"] is False


@pytest.mark.parametrize("cube", ["pow", "mul"])
def test_gelu_tanh_form(cube):
    b = Builder()
    x3 = b.op("pow", b.x, 3.0) if cube == "pow" else b.op("mul", b.op("mul", b.x, b.x), b.x)
    inner = b.op("mul", math.sqrt(2 / math.pi), b.op("add", b.x, b.op("mul", 0.044715, x3)))
    y = b.op("mul", b.op("mul", b.x, 0.5), b.op("add", b.op("tanh", inner), 1.0))
    graph, n_before, _ = b.fused(y)
    assert _ops(graph) == ["gelu"] and graph.nodes[0].attrs["approximate"] is True


def test_gelu_with_a_wrong_constant_stays_arithmetic():
    b = Builder()
    a = b.op("add", 1.0, b.op("erf", b.op("mul", b.x, 0.7))) # not 1/sqrt(2)
    y = b.op("mul", b.op("mul", 0.5, b.x), a)
    graph, _, counts = b.fused(y)
    assert "gelu" not in _ops(graph) and counts == {}


def _decomposed_layer_norm(b, square="pow", root="sqrt", axes=(-1,), affine=True):
    mean = b.op("reduce_mean", b.x, axes=list(axes), keepdims=True)
    d = b.op("sub", b.x, mean)
    sq = {"pow": lambda: b.op("pow", d, 2.0), "mul": lambda: b.op("mul", d, d),
          "square": lambda: b.op("square", d)}[square]()
    var = b.op("reduce_mean", sq, axes=list(axes), keepdims=True)
    denom = b.op("add", var, 1e-5)
    y = (b.op("div", d, b.op("sqrt", denom)) if root == "sqrt"
         else b.op("mul", d, b.op("rsqrt", denom)))
    if affine:
        norm_shape = b.shape[len(b.shape) - len(axes):]
        gamma = RNG.standard_normal(norm_shape).astype(np.float32)
        beta = RNG.standard_normal(norm_shape).astype(np.float32)
        y = b.op("add", b.op("mul", gamma, y), beta)
    return y


@pytest.mark.parametrize("square,root", [("pow", "sqrt"), ("mul", "rsqrt"), ("square", "sqrt")])
def test_layer_norm_decomposed(square, root):
    b = Builder()
    graph, n_before, counts = b.fused(_decomposed_layer_norm(b, square, root))
    assert n_before == 9 and _ops(graph) == ["layer_norm"], _ops(graph)
    node = graph.nodes[0]
    assert node.attrs["axis"] == 2 and node.attrs["epsilon"] == pytest.approx(1e-5)
    assert len(node.inputs) == 3
    assert counts == {"layer_norm": 1, "layer_norm_scale": 1, "layer_norm_bias": 1}


def test_layer_norm_over_two_trailing_axes_without_affine():
    b = Builder((2, 3, 4))
    graph, _, _ = b.fused(_decomposed_layer_norm(b, axes=(1, 2), affine=False))
    assert _ops(graph) == ["layer_norm"] and graph.nodes[0].attrs["axis"] == 1


def test_normalizing_a_leading_axis_is_not_layer_norm():
    b = Builder()
    graph, _, counts = b.fused(_decomposed_layer_norm(b, axes=(1,), affine=False))
    assert "layer_norm" not in _ops(graph) and counts == {}


@pytest.mark.parametrize("square,root", [("pow", "rsqrt"), ("mul", "sqrt")])
def test_rms_norm_decomposed_with_its_weight(square, root):
    """Llama's RMSNorm (`weight * (x * rsqrt(mean(x ** 2) + eps))`) is one
    rms_norm holding its weight; numbers equal (Builder.fused)."""
    b = Builder()
    sq = b.op("pow", b.x, 2.0) if square == "pow" else b.op("mul", b.x, b.x)
    denom = b.op("add", b.op("reduce_mean", sq, axes=[-1], keepdims=True), 1e-6)
    y = (b.op("mul", b.x, b.op("rsqrt", denom)) if root == "rsqrt"
         else b.op("div", b.x, b.op("sqrt", denom)))
    y = b.op("mul", RNG.standard_normal(8).astype(np.float32), y)
    graph, n_before, counts = b.fused(y)
    assert n_before == 6 and _ops(graph) == ["rms_norm"], _ops(graph)
    node = graph.nodes[0]
    assert node.attrs == {"axis": 2, "epsilon": pytest.approx(1e-6)} and len(node.inputs) == 2
    assert counts == {"rms_norm": 1, "rms_norm_scale": 1}


def test_a_centered_norm_stays_a_layer_norm():
    b = Builder()
    graph, _, counts = b.fused(_decomposed_layer_norm(b, "pow", "rsqrt", affine=False))
    assert _ops(graph) == ["layer_norm"] and "rms_norm" not in counts


def _onnx_group_norm(b, inner):
    """torch.onnx.export's GroupNorm(2, 8): reshape to [N, 2, -1], normalize each
    group (InstanceNormalization with unit scale, or layer-norm arithmetic),
    reshape back, scale and shift by [8, 1, 1] constants."""
    split = b.op("reshape", b.x, shape=[0, 2, -1])
    if inner == "instance_norm":
        normed = b.op("group_norm", split, np.ones(2, np.float32), np.zeros(2, np.float32),
                      groups=2, epsilon=1e-5)
    else:
        mean = b.op("reduce_mean", split, axes=[2], keepdims=True)
        centered = b.op("sub", split, mean)
        var = b.op("reduce_mean", b.op("mul", centered, centered), axes=[2], keepdims=True)
        normed = b.op("div", centered, b.op("sqrt", b.op("add", var, 1e-5)))
    back = b.op("reshape", normed, shape=list(b.shape))
    gamma = RNG.uniform(0.5, 1.5, (8, 1, 1)).astype(np.float32)
    beta = RNG.standard_normal((8, 1, 1)).astype(np.float32)
    return b.op("add", b.op("mul", back, gamma), beta)


@pytest.mark.parametrize("inner", ["instance_norm", "arithmetic"])
def test_group_norm_from_the_onnx_export_form(inner):
    b = Builder((2, 8, 3, 3))
    graph, n_before, counts = b.fused(_onnx_group_norm(b, inner))
    assert n_before == (5 if inner == "instance_norm" else 11) and _ops(graph) == ["group_norm"]
    node = graph.nodes[0]
    assert node.attrs["groups"] == 2 and node.attrs["epsilon"] == pytest.approx(1e-5)
    assert counts["group_norm_onnx"] == 1
    assert [graph.constants[v].shape for v in node.inputs[1:]] == [(8,), (8,)]


def _keras_group_norm(b, axes=(1, 2, 4), gamma_shape=(1, 1, 1, 2, 4)):
    """Keras GroupNormalization(groups=2) of an NHWC [2, 4, 4, 8] image: moments
    over [N, H, W, G, C/G] but N and G, TF's batch-norm arithmetic, reshape back."""
    grouped = b.op("reshape", b.x, shape=[-1, 4, 4, 2, 4])
    mean = b.op("reduce_mean", grouped, axes=list(axes), keepdims=True)
    diff = b.op("sub", grouped, mean)
    var = b.op("reduce_mean", b.op("mul", diff, diff), axes=list(axes), keepdims=True)
    gamma = RNG.uniform(0.5, 1.5, gamma_shape).astype(np.float32)
    m = b.op("mul", b.op("rsqrt", b.op("add", var, 1e-3)), gamma)
    beta = RNG.standard_normal((1, 1, 1, 2, 4)).astype(np.float32)
    shift = b.op("add", b.op("mul", b.op("neg", mean), m), beta)
    return b.op("reshape", b.op("add", b.op("mul", grouped, m), shift), shape=[-1, 4, 4, 8])


def test_group_norm_from_keras_moments_form():
    """NHWC in and out: the NCHW group_norm between two transposes."""
    b = Builder((2, 4, 4, 8))
    graph, n_before, counts = b.fused(_keras_group_norm(b))
    assert n_before == 14 and _ops(graph) == ["transpose", "group_norm", "transpose"], _ops(graph)
    node = graph.nodes[1]
    assert node.attrs["groups"] == 2 and node.attrs["epsilon"] == pytest.approx(1e-3)
    assert counts == {"group_norm_moments": 1}


@pytest.mark.parametrize("axes, gamma_shape", [((1, 2), (1, 1, 1, 2, 4)),
                                               ((1, 2, 4), (1, 4, 1, 2, 4))])
def test_other_moments_or_a_spatial_gamma_are_not_group_norm(axes, gamma_shape):
    """Statistics per (group, channel) or a gamma varying over H: the arithmetic stays."""
    b = Builder((2, 4, 4, 8))
    graph, _, counts = b.fused(_keras_group_norm(b, axes, gamma_shape))
    assert "group_norm" not in _ops(graph) and counts == {}, counts


def test_pattern_binds_a_repeated_var_to_one_value():
    g = Graph()
    g.add_input("x", "float32", (2,))
    g.add_input("y", "float32", (2,))
    s = g.add_node("sigmoid", ["y"]).outputs[0]
    m = g.add_node("mul", ["x", s])
    x = Var("x")
    assert match(g, Op("mul", x, Op("sigmoid", x)), m) is None
    found = match(g, Op("mul", Var("a"), Op("sigmoid", Var("b"))), m)
    assert found.values == {"a": "x", "b": "y"}
    assert match(g, Op("mul", Var("a"), Const(1.0)), m) is None


# -- end to end: an exporter's decomposed ops come out as one call each -----------

_EXPORT_BLOCK = r'''
import sys, torch
torch.manual_seed(0)

class Block(torch.nn.Module):
    """A BERT-style layer in eager form (scores / sqrt(d) + additive mask,
    softmax, @ v), LayerNorm, GELU and SiLU, which the legacy exporter at
    opset 13 writes as MatMul/Div/Add/Softmax/MatMul, ReduceMean/Sub/Pow/
    Sqrt/Div, Div/Erf/Add/Mul and Sigmoid/Mul."""
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(16, 16) for _ in range(3))
        self.norm = torch.nn.LayerNorm(16)
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)
        self.register_buffer("mask", torch.triu(torch.full((5, 5), -1e4), 1))
    def forward(self, x):
        q, k, v = (f(x).reshape(-1, 5, 2, 8).transpose(1, 2) for f in (self.q, self.k, self.v))
        scores = q @ k.transpose(-1, -2) / 8 ** 0.5 + self.mask
        a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(-1, 5, 16)
        x = self.norm(x + a)
        h = self.down(torch.nn.functional.gelu(self.up(x)))
        return torch.nn.functional.silu(h) + x

with torch.no_grad():
    block = Block().eval()
    for p in block.parameters():
        p.uniform_(-0.5, 0.5)
torch.onnx.export(block, (torch.randn(2, 5, 16),), sys.argv[1], opset_version=13,
                  input_names=["x"], output_names=["y"], dynamo=False)
'''


def test_onnx_decomposed_block_becomes_one_call_each(tmp_path):
    import collections
    import subprocess
    import sys

    import onnx
    from conftest import ENV, ROOT
    from x2.check.parity import check

    model = tmp_path / "block.onnx"
    proc = subprocess.run([sys.executable, "-c", _EXPORT_BLOCK, str(model)], capture_output=True,
                          text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    source_ops = collections.Counter(n.op_type for n in onnx.load(str(model)).graph.node)
    assert source_ops["Erf"] == 1 and source_ops["Sigmoid"] == 1 and source_ops["ReduceMean"] == 2
    for target in ("torch", "onnx", "paddle"):
        out = tmp_path / target
        convert_then_check(str(model), str(out), source="onnx", target=target)
        if target == "torch":
            code = (out / "model.py").read_text()
            for call in ("F.gelu(", "F.silu(", "nn.LayerNorm(", "F.scaled_dot_product_attention("):
                assert code.count(call) == 1, (call, code)
            assert "erf" not in code and "sigmoid" not in code
        elif target == "onnx":
            ops = collections.Counter(n.op_type for n in onnx.load(str(out / "model.onnx")).graph.node)
            assert ops["LayerNormalization"] == 1 and ops["ReduceMean"] == 0, ops
            assert ops["Softmax"] == 1 and ops["Erf"] == 1, ops
        result = check(str(model), str(out), source="onnx", target=target, rtol=1e-4)
        assert result["outputs"] and all(r["passed"] for r in result["outputs"]), result


@pytest.mark.parametrize("scale", ["div", "mul", "none"])
@pytest.mark.parametrize("mask", [False, True])
def test_attention_from_matmul_softmax_matmul(scale, mask):
    b = Builder((2, 4, 5, 8))  # [batch, heads, seq, dim]
    q = b.op("mul", b.x, 0.9)
    k = b.op("mul", b.x, 1.1)
    v = b.op("neg", b.x)
    s = b.op("matmul", q, b.op("transpose", k, perm=[0, 1, 3, 2]))
    s = {"div": lambda: b.op("div", s, math.sqrt(8)), "mul": lambda: b.op("mul", s, 0.25),
         "none": lambda: s}[scale]()
    if mask:
        s = b.op("add", s, np.where(np.tril(np.ones((5, 5))), 0, -1e9).astype(np.float32))
    y = b.op("matmul", b.op("softmax", s, axis=-1), v)
    graph, _, counts = b.fused(y)
    assert counts == {"attention": 1} and sorted(_ops(graph)) == ["attention", "mul", "mul", "neg"]
    node = next(n for n in graph.nodes if n.op == "attention")
    assert node.attrs["scale"] == pytest.approx({"div": 1 / math.sqrt(8), "mul": 0.25,
                                                 "none": 1.0}[scale])
    assert len(node.inputs) == (4 if mask else 3)


@pytest.mark.parametrize("mask_shape, dropped", [((1, 1, 5, 5), True), ((5,), True),
                                                 ((3, 4, 5, 5), False)])
def test_attention_drops_a_mask_of_zeros_that_broadcasts_nothing(mask_shape, dropped):
    """torch.export bakes `attn_mask=None` into a constant block of zeros:
    it goes (Paddle Inference spent more on its add than on the matmuls),
    unless it would broadcast the scores to a larger batch."""
    b = Builder((1, 4, 5, 8))
    mask = b.g.add_constant("mask", np.zeros(mask_shape, np.float32))
    y = b.g.add_node("attention", [b.x, b.x, b.x, mask], attrs={"scale": 0.25}).outputs[0]
    b.g.info[y] = TensorInfo("float32", (3, 4, 5, 8) if not dropped else (1, 4, 5, 8))
    graph, _, counts = b.fused(y)
    node = next(n for n in graph.nodes if n.op == "attention")
    assert len(node.inputs) == (3 if dropped else 4), counts
    assert node.attrs["scale"] == 0.25


def test_attention_keeps_a_mask_that_masks():
    b = Builder((1, 4, 5, 8))
    mask = b.g.add_constant("mask", np.where(np.tril(np.ones((5, 5))), 0, -1e9).astype("float32"))
    y = b.g.add_node("attention", [b.x, b.x, b.x, mask], attrs={"scale": 0.25}).outputs[0]
    b.g.info[y] = TensorInfo("float32", (1, 4, 5, 8))
    graph, _, counts = b.fused(y)
    assert counts == {} and len(graph.nodes[0].inputs) == 4


def test_softmax_over_another_axis_is_not_attention():
    b = Builder((2, 5, 5))
    s = b.op("matmul", b.x, b.op("transpose", b.x, perm=[0, 2, 1]))
    y = b.op("matmul", b.op("softmax", s, axis=1), b.x)
    graph, _, counts = b.fused(y)
    assert counts == {}


_EXPORT_ENCODER = r'''
import sys, torch
torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, activation="gelu",
                                         batch_first=True).eval()
torch.export.save(torch.export.export(layer, (torch.randn(2, 5, 16),)), sys.argv[1])
'''


def test_torch_encoder_layer_keeps_its_high_level_ops(tmp_path):
    """The torch route maps linear, gelu, layer_norm and scaled_dot_product_attention
    as torch.export captured them (only ops without a mapper are decomposed)."""
    import subprocess
    import sys

    from conftest import ENV, ROOT
    from x2.check.parity import check

    model = tmp_path / "encoder.pt2"
    proc = subprocess.run([sys.executable, "-c", _EXPORT_ENCODER, str(model)], capture_output=True,
                          text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "torch"
    convert_then_check(str(model), str(out), source="torch", target="torch")
    code = (out / "model.py").read_text()
    counts = {call: code.count(call) for call in
              ("F.scaled_dot_product_attention(", "F.gelu(", "nn.LayerNorm(", "F.softmax(")}
    assert counts == {"F.scaled_dot_product_attention(": 1, "F.gelu(": 1, "nn.LayerNorm(": 2,
                      "F.softmax(": 0}, counts
    result = check(str(model), str(out), source="torch", target="torch", rtol=1e-4)
    assert result["outputs"] and all(r["passed"] for r in result["outputs"]), result


@pytest.mark.parametrize("reverse_sub", [False, True])
def test_per_channel_affine_moves_after_the_transpose_as_one_mul_and_add(reverse_sub):
    """Keras' Rescaling and Normalization on an NHWC image (x * a - m, / s)
    before the Transpose to NCHW: one mul and one add after it, whose
    constants broadcast along the channel dim (x2/passes/affine.py)."""
    from x2.passes.affine import affine_after_transpose
    b = Builder((2, 4, 5, 3))
    mean, std = RNG.uniform(0.2, 0.8, 3), RNG.uniform(0.1, 0.5, 3)
    y = b.op("mul", b.x, 1 / 255)
    y = b.op("sub", *((mean.astype(np.float32), y) if reverse_sub else (y, mean.astype(np.float32))))
    y = b.op("div", y, std.astype(np.float32))
    t = b.op("transpose", y, perm=[0, 3, 1, 2])
    out = b.op("relu", t)
    b.g.outputs = [out]
    data = RNG.uniform(0, 255, (2, 4, 5, 3)).astype(np.float32)
    before = interpret(b.g, [data])[0]
    graph = affine_after_transpose(b.g)
    assert _ops(graph) == ["transpose", "mul", "add", "relu"]
    assert list(graph.nodes[0].inputs) == ["x"]
    assert [graph.constants[n.inputs[1]].shape for n in graph.nodes[1:3]] == [(1, 3, 1, 1)] * 2
    np.testing.assert_allclose(interpret(graph, [data])[0], before, rtol=1e-6, atol=1e-5)


def test_affine_read_elsewhere_or_dividing_a_constant_stays():
    from x2.passes.affine import affine_after_transpose
    b = Builder((2, 4, 5, 3))
    scaled = b.op("mul", b.x, 2.0)
    t = b.op("transpose", scaled, perm=[0, 3, 1, 2])
    inverted = b.op("div", 1.0, b.x)
    u = b.op("transpose", inverted, perm=[0, 3, 1, 2])
    b.g.outputs = [t, scaled, u]
    graph = affine_after_transpose(b.g)
    assert _ops(graph) == ["mul", "transpose", "div", "transpose"]
