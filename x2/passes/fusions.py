"""Activation and normalization fusions, written as patterns (x2/passes/patterns.py).

Exporters spell high-level ops as arithmetic: torch's decompositions write
gelu as `x * 0.5 * (1 + erf(x * 0.7071))`, ONNX graphs before opset 17 write
layer norm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div, TF writes swish
as `x * sigmoid(x)`. These rewrites give the IR back the one op, so the
emitted model.py reads `F.gelu(x)` and runs the framework's fused kernel.

Each rewrite is one pattern plus a small `replace`; the order in REWRITES
matters only in that the simplifications (x*1, x+0, x/1) come first, so the
forms they hide match afterwards.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, TensorInfo
from . import dense_rewrites
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


# -- layer_norm: (x - mean) / sqrt(var + eps), mean and var over trailing axes --
def _keepdims(value) -> bool:
    return bool(value)


_mean = Op("reduce_mean", _x, attrs={"keepdims": _keepdims}, name="mean")
_centered = Op("sub", _x, _mean)
_var = Op("reduce_mean", Alt(Op("pow", _centered, Const(2.0)), Op("mul", _centered, _centered),
                             Op("square", _centered)),
          attrs={"keepdims": _keepdims}, name="var")
_denominator = Op("add", _var, Const(lambda a: a.size == 1 and 0 <= float(a.reshape(())) < 1,
                                     name="eps"))
LAYER_NORM_PATTERN = Alt(Op("div", _centered, Op("sqrt", _denominator)),
                         Op("mul", _centered, Op("rsqrt", _denominator)))


def _trailing_axis(graph: Graph, x: str, *reductions) -> int | None:
    """The first normalized axis when every reduction is over the same
    trailing axes of x and their sizes are known; else None."""
    shape = graph.shape(x)
    if shape is None:
        return None
    rank = len(shape)
    axes_seen = {tuple(sorted(a % rank for a in r.attrs["axes"])) for r in reductions}
    if len(axes_seen) != 1:
        return None
    axes = axes_seen.pop()
    if not axes or axes != tuple(range(rank - len(axes), rank)):
        return None
    if any(not isinstance(d, int) for d in shape[axes[0]:]):
        return None
    return axes[0]


def _layer_norm(graph: Graph, m: Match) -> str | None:
    x = m.values["x"]
    axis = _trailing_axis(graph, x, m.nodes["mean"], m.nodes["var"])
    if axis is None or graph.dtype(x) not in ("float32", "float64", "float16", "bfloat16"):
        return None
    epsilon = float(m.const(graph, "eps").reshape(()))
    node = graph.add_node("layer_norm", [x], attrs={"axis": axis, "epsilon": epsilon},
                          name=graph.fresh_name("layer_norm"))
    return node.outputs[0]


LAYER_NORM = Rewrite("layer_norm", LAYER_NORM_PATTERN, _layer_norm)


# -- layer_norm, TF's moments form (Keras LayerNormalization, tf.nn.batch_normalization):
#    x * m + (beta - mean * m), m = rsqrt(var + eps) * gamma; the scale and the
#    centring each optional.
_rsqrt = Op("rsqrt", _denominator, name="rsqrt")
_m = Alt(Op("mul", _rsqrt, Var("gamma", lambda graph, v: graph.is_constant(v))), _rsqrt)
_mean_again = Op("reduce_mean", _x, attrs={"keepdims": _keepdims}, name="mean_again")
_shift = Alt(Op("add", Op("mul", Op("neg", _mean_again), _m), Var("beta")),
             Op("sub", Var("beta"), Op("mul", _mean_again, _m)),
             Op("mul", Op("neg", _mean_again), _m))
TF_LAYER_NORM_PATTERN = Alt(Op("add", Op("mul", _x, _m), _shift),
                            Op("sub", Op("mul", _x, _m), Op("mul", _mean_again, _m)))


def _tf_layer_norm(graph: Graph, m: Match) -> str | None:
    """The moments form as layer_norm(x, gamma, beta): gamma and beta keep
    their source provenance (a trainable weight stays one, reshaped)."""
    if m.nodes["mean_again"].attrs["axes"] != m.nodes["mean"].attrs["axes"]:
        return None
    if "beta" in m.values and not graph.is_constant(m.values["beta"]):
        return None
    x = m.values["x"]
    axis = _trailing_axis(graph, x, m.nodes["mean"], m.nodes["var"])
    if axis is None or graph.dtype(x) not in ("float32", "float64", "float16", "bfloat16"):
        return None
    vectors = {key: _normalized_vector(graph, x, axis, m.values[key])
               for key in ("gamma", "beta") if key in m.values}
    if any(v is None for v in vectors.values()):
        return None
    name = graph.fresh_name("layer_norm")
    inputs = [x]
    if vectors:
        inputs.append(_vector_constant(graph, name + "/scale", vectors["gamma"], m.values["gamma"])
                      if "gamma" in vectors else   # beta without gamma: a scale of ones
                      graph.add_constant(name + "/scale", np.ones_like(vectors["beta"])))
    if "beta" in vectors:
        inputs.append(_vector_constant(graph, name + "/bias", vectors["beta"], m.values["beta"]))
    epsilon = float(m.const(graph, "eps").reshape(()))
    node = graph.add_node("layer_norm", inputs, attrs={"axis": axis, "epsilon": epsilon}, name=name)
    return node.outputs[0]


def _vector_constant(graph: Graph, name: str, vector: np.ndarray, source: str) -> str:
    """A constant holding `vector`, the constant `source` laid out anew: a
    learned weight keeps its provenance when only its shape changed."""
    made = graph.add_constant(name, vector)
    origin = graph.origin.get(source)
    if origin is not None and origin.perm is None and \
            vector.size == graph.constants[source].size:
        graph.origin[made] = origin
    return made


TF_LAYER_NORM = Rewrite("layer_norm_moments", TF_LAYER_NORM_PATTERN, _tf_layer_norm)


def _normalized_vector(graph: Graph, x: str, axis: int, value: str) -> np.ndarray | None:
    """The constant broadcast to the shape normalized from `axis` of x, if it
    varies only there."""
    const = graph.constants.get(value)
    shape = graph.shape(x)
    if const is None or shape is None or not np.issubdtype(const.dtype, np.floating):
        return None
    norm_shape = tuple(shape[axis % len(shape):])
    if const.ndim > len(shape):
        return None
    lead = const.shape[:max(0, const.ndim - len(norm_shape))]
    if any(d != 1 for d in lead):
        return None
    tail = const.reshape(const.shape[len(lead):])
    try:
        return np.broadcast_to(tail, norm_shape).astype(graph.dtype(x))
    except ValueError:
        return None


def _absorb(slot: int):
    """layer_norm(x) * gamma -> layer_norm(x, gamma); layer_norm(x, g) + beta -> (x, g, beta)."""
    def replace(graph: Graph, m: Match) -> str | None:
        ln = m.nodes["ln"]
        if len(ln.inputs) != slot:
            return None
        vector = _normalized_vector(graph, ln.inputs[0], ln.attrs["axis"], m.values["c"])
        if vector is None:
            return None
        name = _vector_constant(graph, ln.name + ("/scale" if slot == 1 else "/bias"), vector,
                                m.values["c"])
        node = graph.add_node("layer_norm", list(ln.inputs) + [name], attrs=dict(ln.attrs),
                              name=graph.fresh_name("layer_norm"))
        return node.outputs[0]
    return replace


_c = Var("c", lambda graph, v: graph.is_constant(v))
LAYER_NORM_SCALE = Rewrite("layer_norm_scale", Op("mul", Op("layer_norm", _x, name="ln"), _c),
                           _absorb(1))
LAYER_NORM_BIAS = Rewrite("layer_norm_bias",
                          Op("add", Op("layer_norm", _x, Var("scale"), name="ln"), _c), _absorb(2))


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

REWRITES = SIMPLIFY + [SILU, HARD_SIGMOID, HARD_SWISH, GELU_ERF, GELU_ERFC, GELU_TANH, LAYER_NORM, TF_LAYER_NORM,
                       LAYER_NORM_SCALE, LAYER_NORM_BIAS, ATTENTION, *dense_rewrites.REWRITES]


def fuse_patterns(graph: Graph, counts: dict[str, int] | None = None) -> Graph:
    """Apply REWRITES (the docstring above) until none matches."""
    return apply_rewrites(graph, REWRITES, counts)
