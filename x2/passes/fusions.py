"""Activation and normalization fusions, written as patterns (x2/passes/patterns.py).

Exporters spell high-level ops as arithmetic: torch's decompositions write
gelu as `x * 0.5 * (1 + erf(x * 0.7071))`, ONNX graphs before opset 17 write
layer norm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div, TF writes swish
as `x * sigmoid(x)`. These rewrites give the IR back the one op, so the
emitted model.py reads `F.gelu(x)` and runs the framework's fused kernel.

The normalization rewrites (layer_norm, group_norm) live in norm_rewrites.py,
the linear-layer ones in dense_rewrites.py. Each rewrite is one pattern plus
a small `replace`; the order in REWRITES matters only in that the
simplifications (x*1, x+0, x/1) come first, so the forms they hide match
afterwards.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, TensorInfo
from . import dense_rewrites, norm_rewrites
from .patterns import Alt, Const, Match, Op, Rewrite, Var, apply_rewrites

SQRT2 = math.sqrt(2.0)
GELU_TANH_C = math.sqrt(2.0 / math.pi)  # 0.7978845608...


def _simplify(graph: Graph, m: Match) -> str | None:
    """x op c -> x, when c (a size-1 constant) can change neither x's shape nor its
    dtype: a `x * ones(big)` broadcasts x up, and a float 1 turns int x float."""
    x, c = m.values["x"], graph.constants[m.values["c"]]
    shape, dtype = graph.shape(x), graph.dtype(x)
    if dtype != str(c.dtype):
        return None
    if c.ndim and (shape is None or c.ndim > len(shape)):
        return None
    return x


def _unit_const(value: float):
    """A Const predicate: a size-1 float constant equal to `value`."""
    return lambda a: a.size == 1 and np.issubdtype(a.dtype, np.floating) and \
        float(a.reshape(())) == value


# -- simplifications: x * 1, x + 0, x - 0, x / 1 -------------------------------
_x = Var("x")
SIMPLIFY = [
    Rewrite("mul_one", Op("mul", _x, Const(_unit_const(1.0), "c")), _simplify),
    Rewrite("add_zero", Op("add", _x, Const(_unit_const(0.0), "c")), _simplify),
    Rewrite("sub_zero", Op("sub", _x, Const(_unit_const(0.0), "c")), _simplify),
    Rewrite("div_one", Op("div", _x, Const(_unit_const(1.0), "c")), _simplify),
]


def _unary(op: str, **attrs):
    def replace(graph: Graph, m: Match) -> str:
        x = m.values["x"]
        node = graph.add_node(op, [x], attrs=attrs, name=graph.fresh_name(op))
        return node.outputs[0]
    return replace


# -- silu / swish: x * sigmoid(x) ----------------------------------------------
SILU = Rewrite("silu", Op("mul", _x, Op("sigmoid", _x)), _unary("silu"))

# -- hard_sigmoid / hard_swish: relu6(x + 3) / 6, x * relu6(x + 3) / 6 ----------
_relu6_x_plus_3 = Op("clip", Op("add", _x, Const(3.0)),
                     attrs={"min": lambda v: v == 0, "max": lambda v: v == 6})


def _over_six(a):
    return Alt(Op("div", a, Const(6.0)), Op("mul", a, Const(1 / 6)))


HARD_SIGMOID = Rewrite("hard_sigmoid", _over_six(_relu6_x_plus_3), _unary("hard_sigmoid"))
HARD_SWISH = Rewrite("hard_swish", Alt(Op("mul", _x, Op("hard_sigmoid", _x)),
                                       # torch's decomposition: (x * relu6(x + 3)) / 6
                                       _over_six(Op("mul", _x, _relu6_x_plus_3))),
                     _unary("hard_swish"))

# -- gelu, erf form: 0.5 * x * (1 + erf(x / sqrt(2))) --------------------------
_half = Const(0.5)
_erf_arg = Alt(Op("div", _x, Const(SQRT2)), Op("mul", _x, Const(1 / SQRT2)))
_one_plus_erf = Op("add", Op("erf", _erf_arg), Const(1.0))


def _half_x_times(a):
    """The three ways a product 0.5 * x * A is bracketed (mul commutes)."""
    return Alt(Op("mul", Op("mul", _x, _half), a),
               Op("mul", _x, Op("mul", a, _half)),
               Op("mul", Op("mul", _x, a), _half))


GELU_ERF = Rewrite("gelu_erf", _half_x_times(_one_plus_erf), _unary("gelu", approximate=False))

# -- gelu, erfc form (TF's and Keras's gelu): 0.5 * x * erfc(-x / sqrt(2)) ------
# erfc(z) arrives as 1 - erf(z); erfc(-x / sqrt(2)) = 1 + erf(x / sqrt(2)).
_neg_x = Op("neg", _x)
_erfc_of_neg = Op("sub", Const(1.0), Op("erf", Alt(Op("mul", _neg_x, Const(1 / SQRT2)),
                                                   Op("div", _neg_x, Const(SQRT2)),
                                                   Op("neg", _erf_arg))))
GELU_ERFC = Rewrite("gelu_erfc", _half_x_times(_erfc_of_neg), _unary("gelu", approximate=False))

# -- gelu, tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) ----
_cube = Alt(Op("pow", _x, Const(3.0)), Op("mul", _x, Op("mul", _x, _x)),
            Op("mul", Op("mul", _x, _x), _x))
_inner = Op("add", _x, Op("mul", _cube, Const(0.044715)))
_tanh_arg = Alt(Op("mul", _inner, Const(GELU_TANH_C)),
                # x * (c + c * 0.044715 * x^2), torch's decomposition of the tanh form
                Op("add", Op("mul", _x, Const(GELU_TANH_C)),
                   Op("mul", _cube, Const(GELU_TANH_C * 0.044715))))
GELU_TANH = Rewrite("gelu_tanh", _half_x_times(Op("add", Op("tanh", _tanh_arg), Const(1.0))),
                    _unary("gelu", approximate=True))


# -- attention: softmax(q @ k^T * scale (+ mask)) @ v ------------------------------
_q, _k, _v = Var("q"), Var("k"), Var("v")
# k^T is any transpose: exporters fold the heads' transpose into it ([0, 2, 3, 1]
# from [batch, seq, heads, dim]); `_attention` gives the op the k it implies.
_scores = Op("matmul", _q, Op("transpose", _k, name="k_t"))
_scale_const = Const(lambda a: a.size == 1 and np.issubdtype(a.dtype, np.floating)
                     and float(a.reshape(())) != 0, name="scale")
_scaled = Alt(Op("div", _scores, _scale_const, name="div"), Op("mul", _scores, _scale_const),
              _scores)
_logits = Alt(Op("add", _scaled, Var("mask")), _scaled)


def _attention(graph: Graph, m: Match) -> str | None:
    q, k, v = m.values["q"], m.values["k"], m.values["v"]
    shapes = [graph.shape(x) for x in (q, k, v)]
    if any(s is None or len(s) < 2 for s in shapes) or len({len(s) for s in shapes}) != 1:
        return None
    rank = len(shapes[0])
    perm = list(m.nodes["k_t"].attrs["perm"])
    if len(perm) != rank or m.nodes["softmax"].attrs["axis"] % rank != rank - 1:
        return None
    if "scale" in m.values:
        c = float(m.const(graph, "scale").reshape(()))
        scale = 1 / c if "div" in m.nodes else c
    else:
        scale = 1.0
    perm[-2:] = perm[-1], perm[-2]  # k^T = transpose(k_source, perm_t), so k = this
    if perm != list(range(rank)):
        k = graph.add_node("transpose", [k], attrs={"perm": perm},
                           name=graph.fresh_name("transpose")).outputs[0]
        graph.info[k] = TensorInfo(graph.dtype(m.values["k"]), tuple(shapes[1][p] for p in perm))
    inputs = [q, k, v] + ([m.values["mask"]] if "mask" in m.values else [])
    node = graph.add_node("attention", inputs, attrs={"scale": scale},
                          name=graph.fresh_name("attention"))
    return node.outputs[0]

ATTENTION = Rewrite("attention", Op("matmul", Op("softmax", _logits, name="softmax"), _v),
                    _attention)


def _unmasked(graph: Graph, m: Match) -> str | None:
    """attention without its mask where the mask is all zeros (torch.export
    bakes a model's `attn_mask=None` path into one): the add of a [1, 1, q, k]
    block of zeros cost Paddle Inference more than the matmuls around it."""
    node = m.nodes["attention"]
    q, k = graph.shape(m.values["q"]), graph.shape(m.values["k"])
    mask = graph.constants[m.values["mask"]]
    if not q or not k or len(q) != len(k) or mask.ndim > len(q):
        return None
    scores = (*q[:-1], k[-2])  # q @ k^T, before the mask
    if any(d != 1 and d != s for d, s in zip(reversed(mask.shape), reversed(scores))):
        return None  # the mask would broadcast the scores to more rows
    kept = graph.add_node("attention", [m.values["q"], m.values["k"], m.values["v"]],
                          attrs=dict(node.attrs), name=graph.fresh_name("attention"))
    return kept.outputs[0]


UNMASKED = Rewrite("attention_zero_mask",
                   Op("attention", Var("q"), Var("k"), Var("v"),
                      Const(lambda a: a.dtype.kind == "f" and not a.any(), "mask"),
                      name="attention"), _unmasked)

REWRITES = SIMPLIFY + [SILU, HARD_SIGMOID, HARD_SWISH, GELU_ERF, GELU_ERFC, GELU_TANH,
                       *norm_rewrites.REWRITES, ATTENTION, UNMASKED, *dense_rewrites.REWRITES]


def fuse_patterns(graph: Graph, counts: dict[str, int] | None = None) -> Graph:
    """Apply REWRITES (the docstring above) until none matches."""
    return apply_rewrites(graph, REWRITES, counts)
