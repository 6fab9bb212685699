"""Normalization fusions, written as patterns (x2/passes/patterns.py; the
rewrites run with the others in x2/passes/fusions.py).

layer_norm from the mean/variance arithmetic ONNX graphs before opset 17
write, and from TF's moments form (Keras LayerNormalization); rms_norm from
the root-mean-square arithmetic (Llama's RMSNorm, T5's LayerNorm); group_norm
from the forms its exporters write: torch.onnx.export's reshape to
[N, G, -1], InstanceNormalization (or layer-norm arithmetic), reshape back,
scale and shift; Keras GroupNormalization's moments over [N, *spatial, G,
C/G]. An instance norm is a group_norm with a group per channel."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, TensorInfo
from .patterns import Alt, Const, Match, Op, Rewrite, Var

_x = Var("x")


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


# -- rms_norm: x * rsqrt(mean(x^2) + eps) (Llama's RMSNorm, T5's LayerNorm) --------
_square_mean = Op("reduce_mean", Alt(Op("pow", _x, Const(2.0)), Op("mul", _x, _x),
                                     Op("square", _x)),
                  attrs={"keepdims": _keepdims}, name="var")
_rms = Op("add", _square_mean, Const(lambda a: a.size == 1 and 0 <= float(a.reshape(())) < 1,
                                     name="eps"))
RMS_NORM_PATTERN = Alt(Op("mul", _x, Op("rsqrt", _rms)), Op("div", _x, Op("sqrt", _rms)))


def _rms_norm(graph: Graph, m: Match) -> str | None:
    x = m.values["x"]
    axis = _trailing_axis(graph, x, m.nodes["var"])
    if axis is None or graph.dtype(x) not in ("float32", "float64", "float16", "bfloat16"):
        return None
    node = graph.add_node("rms_norm", [x], attrs={
        "axis": axis, "epsilon": float(m.const(graph, "eps").reshape(()))},
        name=graph.fresh_name("rms_norm"))
    return node.outputs[0]


RMS_NORM = Rewrite("rms_norm", RMS_NORM_PATTERN, _rms_norm)


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


def _absorb(slot: int, op: str = "layer_norm"):
    """layer_norm(x) * gamma -> layer_norm(x, gamma); layer_norm(x, g) + beta -> (x, g, beta)
    (and rms_norm(x) * gamma)."""
    def replace(graph: Graph, m: Match) -> str | None:
        ln = m.nodes["ln"]
        if len(ln.inputs) != slot:
            return None
        vector = _normalized_vector(graph, ln.inputs[0], ln.attrs["axis"], m.values["c"])
        if vector is None:
            return None
        name = _vector_constant(graph, ln.name + ("/scale" if slot == 1 else "/bias"), vector,
                                m.values["c"])
        node = graph.add_node(op, list(ln.inputs) + [name], attrs=dict(ln.attrs),
                              name=graph.fresh_name(op))
        return node.outputs[0]
    return replace


_c = Var("c", lambda graph, v: graph.is_constant(v))
LAYER_NORM_SCALE = Rewrite("layer_norm_scale", Op("mul", Op("layer_norm", _x, name="ln"), _c),
                           _absorb(1))
RMS_NORM_SCALE = Rewrite("rms_norm_scale", Op("mul", Op("rms_norm", _x, name="ln"), _c),
                         _absorb(1, "rms_norm"))
LAYER_NORM_BIAS = Rewrite("layer_norm_bias",
                          Op("add", Op("layer_norm", _x, Var("scale"), name="ln"), _c), _absorb(2))


# -- group_norm, torch.onnx.export's form: reshape(x, [N, G, -1]), normalized per
#    group (InstanceNormalization with unit scale and zero shift, or layer-norm
#    arithmetic over the last axis), reshaped back, scaled and shifted per channel.
def _is_const(graph: Graph, value: str) -> bool:
    return graph.is_constant(value)


_split = Op("reshape", _x, name="split")
_per_group = Alt(Op("group_norm", _split, Const(1.0), Const(0.0), name="inner"),
                 Op("layer_norm", _split, name="inner"))
ONNX_GROUP_NORM_PATTERN = Op("add", Op("mul", Op("reshape", _per_group, name="back"),
                                       Var("gamma", _is_const)), Var("beta", _is_const))


def _channel_vector(graph: Graph, value: str, shape, axis: int) -> np.ndarray | None:
    """A float constant broadcast over `shape` that varies only along `axis`:
    its [shape[axis]] values."""
    const = graph.constants.get(value)
    if const is None or const.ndim > len(shape) or not np.issubdtype(const.dtype, np.floating):
        return None
    full = const.reshape((1,) * (len(shape) - const.ndim) + const.shape)
    if any(d != 1 for i, d in enumerate(full.shape) if i != axis) or \
            full.shape[axis] not in (1, shape[axis]):
        return None
    return np.broadcast_to(full.reshape(-1), (shape[axis],)).astype(const.dtype)


def _static(shape) -> bool:
    """Known dims, but for the batch (a SavedModel's is dynamic)."""
    return shape is not None and len(shape) > 1 and \
        all(isinstance(d, int) and d > 0 for d in shape[1:])


def _onnx_group_norm(graph: Graph, m: Match) -> str | None:
    x, inner = m.values["x"], m.nodes["inner"]
    shape, split = graph.shape(x), graph.shape(inner.inputs[0])
    if not _static(shape) or len(shape) < 3 or not _static(split) or len(split) != 3 or \
            split[0] != shape[0] or shape[1] % split[1] or \
            tuple(graph.shape(m.nodes["back"].outputs[0]) or ()) != tuple(shape):
        return None
    groups = split[1]
    if inner.op == "group_norm" and inner.attrs["groups"] != groups or \
            inner.op == "layer_norm" and inner.attrs["axis"] % 3 != 2:
        return None
    vectors = [_channel_vector(graph, m.values[k], shape, 1) for k in ("gamma", "beta")]
    if any(v is None for v in vectors):
        return None
    return _group_norm(graph, x, vectors, [m.values["gamma"], m.values["beta"]], groups,
                       inner.attrs["epsilon"])


def _group_norm(graph: Graph, x: str, vectors, sources, groups: int, epsilon: float,
                channels_last: bool = False) -> str:
    """group_norm(x) over channel axis 1; a channels-last x goes through a
    transpose each way (the layout pass removes those next to convolutions)."""
    name = graph.fresh_name("group_norm")
    scale, bias = (_vector_constant(graph, f"{name}/{what}", v, src)
                   for what, v, src in zip(("scale", "bias"), vectors, sources))
    shape, dtype = graph.shape(x), graph.dtype(x)
    rank = len(shape)
    perm = [0, rank - 1, *range(1, rank - 1)] if channels_last else None
    if perm is not None:
        x = graph.add_node("transpose", [x], attrs={"perm": perm},
                           name=graph.fresh_name("to_nchw")).outputs[0]
        shape = tuple(shape[p] for p in perm)
        graph.info[x] = TensorInfo(dtype, shape)
    y = graph.add_node("group_norm", [x, scale, bias],
                       attrs={"groups": groups, "epsilon": float(epsilon)}, name=name).outputs[0]
    graph.info[y] = TensorInfo(dtype, tuple(shape))
    if perm is None:
        return y
    back = [perm.index(i) for i in range(rank)]
    return graph.add_node("transpose", [y], attrs={"perm": back},
                          name=graph.fresh_name("to_nhwc")).outputs[0]


# -- group_norm, Keras GroupNormalization's form: x [N, *spatial, C] reshaped to
#    [N, *spatial, G, C/G], moments over all but N and G, the moments
#    arithmetic of TF_LAYER_NORM_PATTERN with gamma and beta laid out as
#    [G, C/G], reshaped back.
KERAS_GROUP_NORM_PATTERN = Op("reshape", TF_LAYER_NORM_PATTERN, name="back")


def _keras_group_norm(graph: Graph, m: Match) -> str | None:
    grouped = m.values["x"]
    split = graph.producer(grouped)
    if split is None or split.op != "reshape":
        return None
    x = split.inputs[0]
    shape, inner = graph.shape(x), graph.shape(grouped)
    if not _static(shape) or len(shape) < 3 or not _static(inner) or \
            tuple(inner) != (*shape[:-1], inner[-2], shape[-1] // inner[-2]) or \
            tuple(graph.shape(m.nodes["back"].outputs[0]) or ()) != tuple(shape):
        return None
    rank = len(inner)
    axes = set(range(1, rank - 2)) | {rank - 1}
    if any({a % rank for a in m.nodes[k].attrs["axes"]} != axes
           for k in ("mean", "var", "mean_again")):
        return None
    vectors, sources = [], []
    for key, default in (("gamma", 1.0), ("beta", 0.0)):
        if key not in m.values:
            vectors.append(np.full(shape[-1], default, graph.dtype(x)))
            sources.append(None)
            continue
        vector = _normalized_vector(graph, grouped, rank - 2, m.values[key])
        if vector is None:
            return None
        vectors.append(vector.reshape(-1))
        sources.append(m.values[key])
    epsilon = float(m.const(graph, "eps").reshape(()))
    return _group_norm(graph, x, vectors, sources, inner[-2], epsilon, channels_last=True)


ONNX_GROUP_NORM = Rewrite("group_norm_onnx", ONNX_GROUP_NORM_PATTERN, _onnx_group_norm)
KERAS_GROUP_NORM = Rewrite("group_norm_moments", KERAS_GROUP_NORM_PATTERN, _keras_group_norm)
REWRITES = [LAYER_NORM, TF_LAYER_NORM, LAYER_NORM_SCALE, LAYER_NORM_BIAS, ONNX_GROUP_NORM,
            KERAS_GROUP_NORM, RMS_NORM, RMS_NORM_SCALE]
