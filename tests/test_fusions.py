"""Pattern fusions (x2/passes/fusions.py): each rewrite turns the arithmetic an
exporter writes back into one IR op, and the graph after computes what the
graph before did (numpy kernels, within 1e-6)."""
import math

import numpy as np
import pytest

from x2.ir import Graph
from x2.ir.interpret import interpret
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
        names = [self.const(v) if isinstance(v, (int, float, np.ndarray)) else v for v in inputs]
        return self.g.add_node(op, names, attrs=attrs).outputs[0]

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
