"""The IR op set: each op's layout behaviour and a numpy reference kernel.

`layout` says how an op relates to a Transpose on its inputs, so the layout
pass can push Transposes through it without an op-by-op if-chain:
  "elementwise"  works on any layout (constants are permuted to match)
  "reduce"       reduces `axes`; the pass permutes the axes
  "axis"         acts along one `axis` (concat, softmax); the pass permutes it
  "pad"          the pass permutes its `pads`
  "slice"        the pass permutes its `axes`
  None           layout-sensitive: Transposes stop here

The numpy kernels define the semantics (docs/IR.md) and serve constant
folding; emitters must agree with them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class OpDef:
    name: str
    layout: str | None
    kernel: Callable | None  # (inputs: list[np.ndarray], attrs) -> list[np.ndarray]


OPS: dict[str, OpDef] = {}


def _define(name: str, layout: str | None = None):
    def decorate(fn):
        OPS[name] = OpDef(name, layout, fn)
        return fn
    return decorate


def _nhwc_aware(kernel):
    """Run an NCHW kernel on data_format="NHWC" data (x2/passes/layout_modes.py)."""
    def run(xs, a):
        if a.get("data_format", "NCHW") != "NHWC":
            return kernel(xs, a)
        y = kernel([np.transpose(xs[0], (0, 3, 1, 2))] + list(xs[1:]), a)
        return [np.transpose(y[0], (0, 2, 3, 1))]
    return run


def _unary(name: str, fn: Callable) -> None:
    OPS[name] = OpDef(name, "elementwise", lambda xs, a: [fn(xs[0], a)])


def _binary(name: str, fn: Callable) -> None:
    OPS[name] = OpDef(name, "elementwise", lambda xs, a: [fn(xs[0], xs[1])])


def _erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x


def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


for _name, _fn in {
    "identity": lambda x, a: x,
    "relu": lambda x, a: np.maximum(x, 0).astype(x.dtype),
    "sigmoid": lambda x, a: _sigmoid(x),
    "tanh": lambda x, a: np.tanh(x),
    "exp": lambda x, a: np.exp(x),
    "log": lambda x, a: np.log(x),
    "sqrt": lambda x, a: np.sqrt(x),
    "rsqrt": lambda x, a: (1 / np.sqrt(x)).astype(x.dtype),
    "neg": lambda x, a: -x,
    "abs": lambda x, a: np.abs(x),
    "erf": lambda x, a: _erf(x),
    "square": lambda x, a: x * x,
    "silu": lambda x, a: x * _sigmoid(x),
    "softplus": lambda x, a: np.logaddexp(0, x).astype(x.dtype),
    "clip": lambda x, a: np.clip(x, a.get("min"), a.get("max")).astype(x.dtype),
    "leaky_relu": lambda x, a: np.where(x >= 0, x, x * a["alpha"]).astype(x.dtype),
    "elu": lambda x, a: np.where(x > 0, x, a.get("alpha", 1.0) * np.expm1(x)).astype(x.dtype),
    "selu": lambda x, a: (1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))).astype(x.dtype),
    "gelu": lambda x, a: (0.5 * x * (1 + (np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))
                          if a.get("approximate") else _erf(x / np.sqrt(2).astype(x.dtype)))
                          )).astype(x.dtype),
    "cast": lambda x, a: x.astype(a["dtype"]),
}.items():
    _unary(_name, _fn)

for _name, _fn in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "mod": np.mod,
}.items():
    _binary(_name, lambda a, b, f=_fn: np.asarray(f(a, b)).astype(np.result_type(a, b)))


def _reduce(fn):
    return lambda xs, a: [np.asarray(fn(xs[0], axis=tuple(a["axes"]), keepdims=a["keepdims"]))]


for _name, _fn in {"reduce_mean": np.mean, "reduce_sum": np.sum, "reduce_max": np.max,
                   "reduce_min": np.min, "reduce_prod": np.prod}.items():
    OPS[_name] = OpDef(_name, "reduce", _reduce(_fn))


@_define("softmax", "axis")
def _softmax(xs, a):
    x = xs[0]
    e = np.exp(x - x.max(axis=a["axis"], keepdims=True))
    return [e / e.sum(axis=a["axis"], keepdims=True)]


@_define("log_softmax", "axis")
def _log_softmax(xs, a):
    x = xs[0]
    shifted = x - x.max(axis=a["axis"], keepdims=True)
    return [shifted - np.log(np.exp(shifted).sum(axis=a["axis"], keepdims=True))]


@_define("concat", "axis")
def _concat(xs, a):
    return [np.concatenate(xs, axis=a["axis"])]


@_define("pad", "pad")
def _pad(xs, a):
    pads = a["pads"]
    rank = len(pads) // 2
    width = [(pads[i], pads[i + rank]) for i in range(rank)]
    mode = {"constant": "constant", "reflect": "reflect", "edge": "edge"}[a.get("mode", "constant")]
    kwargs = {"constant_values": a.get("value", 0)} if mode == "constant" else {}
    return [np.pad(xs[0], width, mode=mode, **kwargs)]


@_define("transpose")
def _transpose(xs, a):
    return [np.transpose(xs[0], a["perm"])]


def reshape_target(in_shape, shape):
    """ONNX-style: 0 copies the input dim, -1 is inferred."""
    return [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]


@_define("reshape")
def _reshape(xs, a):
    return [xs[0].reshape(reshape_target(xs[0].shape, a["shape"]))]


@_define("squeeze")
def _squeeze(xs, a):
    return [np.squeeze(xs[0], axis=tuple(a["axes"]))]


@_define("unsqueeze")
def _unsqueeze(xs, a):
    return [np.expand_dims(xs[0], axis=tuple(a["axes"]))]


@_define("matmul")
def _matmul(xs, a):
    return [np.matmul(xs[0], xs[1])]


@_define("dense")
def _dense(xs, a):
    y = np.matmul(xs[0], xs[1])
    return [y + xs[2] if len(xs) > 2 and xs[2] is not None else y]


@_define("shape")
def _shape(xs, a):
    return [np.array(xs[0].shape, dtype=a.get("dtype", "int64"))]


@_define("stack")
def _stack(xs, a):
    return [np.stack(xs, axis=a["axis"])]


@_define("strided_slice")
def _strided_slice(xs, a):
    """TF StridedSlice semantics with begin/end/strides as attrs (masks as bitfields)."""
    x = xs[0]
    index = strided_slice_index(x.ndim, a)
    return [np.asarray(x[index])]


def strided_slice_index(rank: int, a: dict) -> tuple:
    begin, end, strides = a["begin"], a["end"], a["strides"]
    index: list = []
    dim = 0
    shrink = []
    for i in range(len(begin)):
        bit = 1 << i
        if a.get("ellipsis_mask", 0) & bit:
            fill = rank - (len(begin) - i - 1) - dim
            index.extend([slice(None)] * fill)
            dim += fill
            continue
        if a.get("new_axis_mask", 0) & bit:
            index.append(None)
            continue
        if a.get("shrink_axis_mask", 0) & bit:
            index.append(begin[i])
            dim += 1
            continue
        b = None if a.get("begin_mask", 0) & bit else begin[i]
        e = None if a.get("end_mask", 0) & bit else end[i]
        index.append(slice(b, e, strides[i]))
        dim += 1
    del shrink
    return tuple(index)


@_define("batch_norm")
@_nhwc_aware
def _batch_norm(xs, a):
    x, scale, bias, mean, var = xs
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + a["epsilon"])
    return [(x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)]


def _windows(x, kernel, strides, dilations, pads, fill):
    """(N, C, OH, OW, KH, KW) view of the padded NCHW input's sliding windows."""
    top, left, bottom, right = pads
    x = np.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)], constant_values=fill)
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]


@_define("conv2d")
@_nhwc_aware
def _conv2d(xs, a):
    """NCHW input, OIHW weight, pads [top, left, bottom, right]."""
    x, w = xs[0], xs[1]
    groups = a.get("groups", 1)
    win = _windows(x, w.shape[2:], a["strides"], a["dilations"], a["pads"], 0)
    n, c, oh, ow = win.shape[:4]
    per_group = c // groups
    outs = []
    for g in range(groups):
        wg = w[g * (w.shape[0] // groups):(g + 1) * (w.shape[0] // groups)]
        xg = win[:, g * per_group:(g + 1) * per_group]
        outs.append(np.einsum("nchwij,ocij->nohw", xg, wg, optimize=True))
    y = np.concatenate(outs, axis=1).astype(x.dtype)
    if len(xs) > 2:
        y = y + xs[2].reshape(1, -1, 1, 1)
    return [y]


@_define("max_pool2d")
@_nhwc_aware
def _max_pool2d(xs, a):
    win = _windows(xs[0], a["kernel"], a["strides"], [1, 1], a["pads"], -np.inf)
    return [win.max(axis=(4, 5)).astype(xs[0].dtype)]


@_define("avg_pool2d")
@_nhwc_aware
def _avg_pool2d(xs, a):
    x = xs[0]
    total = _windows(x, a["kernel"], a["strides"], [1, 1], a["pads"], 0).sum(axis=(4, 5))
    if a.get("count_include_pad", False):
        count = a["kernel"][0] * a["kernel"][1]
    else:
        ones = np.ones((1, 1) + x.shape[2:], x.dtype)
        count = _windows(ones, a["kernel"], a["strides"], [1, 1], a["pads"], 0).sum(axis=(4, 5))
    return [(total / count).astype(x.dtype)]


@_define("layer_norm")
def _layer_norm(xs, a):
    """Normalize over axes [axis, rank); optional scale and bias inputs."""
    x = xs[0]
    axes = tuple(range(a["axis"] % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + a["epsilon"])
    if len(xs) > 1 and xs[1] is not None:
        y = y * xs[1]
    if len(xs) > 2 and xs[2] is not None:
        y = y + xs[2]
    return [y.astype(x.dtype)]


@_define("gather")
def _gather(xs, a):
    """numpy.take: indices of any rank along `axis` (embedding lookup is axis 0)."""
    return [np.take(xs[0], xs[1].astype(np.int64), axis=a["axis"])]


@_define("slice", "slice")
def _slice(xs, a):
    """ONNX Slice with constant starts/ends/axes/steps attrs (ends clamp)."""
    x = xs[0]
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(a["starts"], a["ends"], a["axes"], a["steps"]):
        index[axis] = slice(start, end, step)
    return [x[tuple(index)]]


@_define("split")
def _split(xs, a):
    """Split along `axis` into pieces of `sizes`; one output per piece."""
    bounds = np.cumsum(a["sizes"])[:-1]
    return list(np.split(xs[0], bounds, axis=a["axis"]))


@_define("expand")
def _expand(xs, a):
    """ONNX Expand: broadcast x against `shape` (either side may be 1)."""
    return [xs[0] * np.ones(a["shape"], dtype=xs[0].dtype)]


@_define("where", "elementwise")
def _where(xs, a):
    return [np.where(xs[0], xs[1], xs[2])]


@_define("group_norm")
def _group_norm(xs, a):
    x, scale, bias = xs
    n, c = x.shape[:2]
    g = x.reshape(n, a["groups"], -1)
    mean = g.mean(axis=2, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + a["epsilon"])).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return [(y * scale.reshape(shape) + bias.reshape(shape)).astype(x.dtype)]


OPS["equal"] = OpDef("equal", "elementwise", lambda xs, a: [np.equal(xs[0], xs[1])])
OPS["greater"] = OpDef("greater", "elementwise", lambda xs, a: [np.greater(xs[0], xs[1])])
OPS["less"] = OpDef("less", "elementwise", lambda xs, a: [np.less(xs[0], xs[1])])


@_define("conv_transpose2d")
@_nhwc_aware
def _conv_transpose2d(xs, a):
    """NCHW transposed conv, weight [C_in, C_out, kH, kW] (groups=1, dilation 1); the
    full output (in-1)*stride + k is cropped by `pads` [top, left, bottom, right]."""
    x, w = xs[0], xs[1]
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    sh, sw = a["strides"]
    full = np.zeros((n, o, (h - 1) * sh + kh, (wd - 1) * sw + kw), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            full[:, :, i:i + (h - 1) * sh + 1:sh, j:j + (wd - 1) * sw + 1:sw] += np.einsum(
                "nchw,co->nohw", x.astype(np.float64), w[:, :, i, j].astype(np.float64))
    t, l, b, r = a["pads"]
    y = full[:, :, t:full.shape[2] - b, l:full.shape[3] - r]
    if len(xs) > 2 and xs[2] is not None:
        y = y + xs[2].reshape(1, -1, 1, 1)
    return [y.astype(x.dtype)]


def _resize_index(out_size, in_size, coord):
    """Source coordinates of each output pixel along one axis."""
    out = np.arange(out_size, dtype=np.float64)
    if coord == "align_corners":
        return out * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    if coord == "half_pixel":
        return np.maximum((out + 0.5) * in_size / out_size - 0.5, 0.0)
    return out * in_size / out_size  # asymmetric


@_define("resize")
@_nhwc_aware
def _resize(xs, a):
    """NCHW resize of H, W to `size`; mode bilinear|nearest; coord half_pixel |
    align_corners | asymmetric (nearest: asymmetric, floor of the source coordinate)."""
    x = xs[0].astype(np.float64)
    (oh, ow), (ih, iw) = a["size"], x.shape[2:]
    ys, xs_ = _resize_index(oh, ih, a["coord"]), _resize_index(ow, iw, a["coord"])
    if a["mode"] == "nearest":
        yi = np.minimum(np.floor(ys).astype(int), ih - 1)
        xi = np.minimum(np.floor(xs_).astype(int), iw - 1)
        return [x[:, :, yi][:, :, :, xi].astype(xs[0].dtype)]
    y0 = np.minimum(np.floor(ys).astype(int), ih - 1)
    x0 = np.minimum(np.floor(xs_).astype(int), iw - 1)
    y1, x1 = np.minimum(y0 + 1, ih - 1), np.minimum(x0 + 1, iw - 1)
    dy, dx = (ys - y0)[:, None], (xs_ - x0)[None, :]
    top = x[:, :, y0][:, :, :, x0] * (1 - dx) + x[:, :, y0][:, :, :, x1] * dx
    bottom = x[:, :, y1][:, :, :, x0] * (1 - dx) + x[:, :, y1][:, :, :, x1] * dx
    return [(top * (1 - dy) + bottom * dy).astype(xs[0].dtype)]


@_define("tile")
def _tile(xs, a):
    return [np.tile(xs[0], a["repeats"])]


@_define("argmax")
def _argmax(xs, a):
    y = np.argmax(xs[0], axis=a["axis"])
    return [np.expand_dims(y, a["axis"]) if a.get("keepdims") else y.astype(np.int64)]


@_define("topk")
def _topk(xs, a):
    """The `k` largest along `axis`, sorted descending; ties keep the lower index."""
    x, axis, k = xs[0], a["axis"], a["k"]
    order = np.argsort(-x, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)]


OPS["logical_not"] = OpDef("logical_not", "elementwise", lambda xs, a: [np.logical_not(xs[0])])
OPS["reduce_any"] = OpDef("reduce_any", "reduce", _reduce(np.any))


# Semantics in docs/IR.md; the fold pass rewrites it to `reshape` when it can.
OPS.setdefault("reshape_dynamic", OpDef("reshape_dynamic", None, None))


def evaluate(op: str, inputs: list[np.ndarray], attrs: dict) -> list[np.ndarray] | None:
    opdef = OPS.get(op)
    if opdef is None or opdef.kernel is None:
        return None
    return opdef.kernel(inputs, attrs)
