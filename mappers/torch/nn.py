"""Convolution, normalization, pooling, softmax and activations."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from .._conv import emit_conv, emit_conv_transpose
from .._pool import ceil_pads, emit_avg_pool, emit_max_pool
from ._util import args, axis, unsupported


@torch_mapper("aten.convolution.default")
def convolution(ctx, op):
    """`conv2d` (groups, dilation, symmetric padding); 1-D and 3-D, and transposed 1-D
    and 2-D (groups 1, dilation 1) through mappers/_conv.py."""
    x, w, b, stride, padding, dilation, transposed, out_pad, groups = args(op)
    rank = len(ctx.shape(w)) - 2
    stride, padding, dilation = (_window(v, rank, None) for v in (stride, padding, dilation))
    if not transposed:
        emit_conv(ctx, op, x, w, b, op.outputs[0], stride, dilation, padding * 2, int(groups))
        return
    if groups != 1 or any(d != 1 for d in dilation):
        raise unsupported(op, f"transposed convolution with groups ({groups}) or dilation "
                          f"({list(dilation)}) is not supported")
    # torch's output: the full (in - 1) * stride + k, less `padding` at both ends,
    # plus output_padding at the end.
    out_pad = _window(out_pad, rank, [0])
    crop = list(padding) + [p - e for p, e in zip(padding, out_pad)]
    emit_conv_transpose(ctx, op, x, w, b, op.outputs[0], stride, crop)


@torch_mapper("aten._native_batch_norm_legit_no_training.default")
def batch_norm(ctx, op):
    """`batch_norm` (eval-mode statistics); the saved mean/rstd outputs must be unused."""
    x, w, b, mean, var, _momentum, eps = args(op)
    if w is None or b is None:
        channels = ctx.shape(mean)[0]
        w = w or ctx.constant(np.ones(channels, ctx.dtype(x)), "scale")
        b = b or ctx.constant(np.zeros(channels, ctx.dtype(x)), "bias")
    ctx.emit("batch_norm", [x, w, b, mean, var], {"epsilon": float(eps)},
             outputs=op.outputs[:1])


@torch_mapper("aten.native_layer_norm.default", "aten.layer_norm.default")
def layer_norm(ctx, op):
    """`layer_norm` over the trailing normalized_shape axes."""
    x, shape, w, b, eps = args(op, None, None, None, None, 1e-5)[:5]
    inputs = [x] + ([w] if w is not None else []) + ([b] if b is not None else [])
    if w is None and b is not None:
        raise unsupported(op, "a bias without a weight is not supported")
    ctx.emit("layer_norm", inputs, {"axis": len(ctx.shape(x)) - len(shape),
                                    "epsilon": float(eps)}, outputs=op.outputs[:1])


@torch_mapper("aten.native_group_norm.default", "aten.group_norm.default")
def group_norm(ctx, op):
    """`group_norm` (the saved mean/rstd outputs must be unused)."""
    if op.type == "aten.group_norm.default":
        x, groups, w, b, eps = args(op, None, None, None, None, 1e-5)[:5]
        channels = ctx.shape(x)[1]
    else:
        x, w, b, _n, channels, _hw, groups, eps = args(op)
    _emit_group_norm(ctx, op, x, w, b, int(channels), int(groups), float(eps))


def _emit_group_norm(ctx, op, x, w, b, channels: int, groups: int, eps: float) -> None:
    w = w if w is not None else ctx.constant(np.ones(channels, ctx.dtype(x)), "scale")
    b = b if b is not None else ctx.constant(np.zeros(channels, ctx.dtype(x)), "bias")
    ctx.emit("group_norm", [x, w, b], {"groups": groups, "epsilon": eps},
             outputs=op.outputs[:1])


@torch_mapper("aten.instance_norm.default")
def instance_norm(ctx, op):
    """`group_norm` with a group per channel; `batch_norm` where running stats are used."""
    x, w, b, mean, var, use_input_stats, _momentum, eps = args(op)[:8]
    channels = ctx.shape(x)[1]
    if use_input_stats:
        _emit_group_norm(ctx, op, x, w, b, channels, channels, float(eps))
        return
    w = w if w is not None else ctx.constant(np.ones(channels, ctx.dtype(x)), "scale")
    b = b if b is not None else ctx.constant(np.zeros(channels, ctx.dtype(x)), "bias")
    ctx.emit("batch_norm", [x, w, b, mean, var], {"epsilon": float(eps)}, outputs=op.outputs[:1])


def _window(values, rank: int, default) -> list[int]:
    values = list(values or default)
    return values * (rank // len(values)) if len(values) == 1 else values


@torch_mapper("aten.max_pool2d_with_indices.default", "aten.max_pool2d.default",
              "aten.max_pool3d_with_indices.default", "aten.max_pool3d.default")
def max_pool(ctx, op):
    """`max_pool2d`; ceil_mode as end padding, dilated or 3-D windows as a maximum
    over strided slices (mappers/_pool.py). The indices output must be unused."""
    rank = 3 if "max_pool3d" in op.type else 2
    x, kernel, stride, padding, dilation, ceil = args(op, None, None, [], [0], [1], False)
    kernel = _window(kernel, rank, None)
    stride, padding = _window(stride, rank, kernel), _window(padding, rank, [0])
    dilation = _window(dilation, rank, [1])
    pads = ceil_pads(ctx, op, x, kernel, stride, dilation, padding * 2, ceil)
    emit_max_pool(ctx, op, x, op.outputs[0], kernel, stride, dilation, pads)


@torch_mapper("aten.avg_pool2d.default", "aten.avg_pool3d.default")
def avg_pool(ctx, op):
    """`avg_pool2d`, 3-D as a sum of strided slices (mappers/_pool.py); count_include_pad
    kept; ceil_mode where exact (see mappers/_pool.py); divisor_override refused."""
    rank = 3 if "avg_pool3d" in op.type else 2
    x, kernel, stride, padding, ceil, include, divisor = args(
        op, None, None, [], [0], False, True, None)
    if divisor is not None:
        raise unsupported(op, "divisor_override is not supported yet")
    kernel = _window(kernel, rank, None)
    stride, padding = _window(stride, rank, kernel), _window(padding, rank, [0])
    # Without padding, counting it changes nothing: the overhang of ceil_mode then
    # averages over the elements present, as count_include_pad=False does.
    include = bool(include) and any(padding)
    pads = ceil_pads(ctx, op, x, kernel, stride, [1] * rank, padding * 2, ceil, include)
    emit_avg_pool(ctx, op, x, op.outputs[0], kernel, stride, pads, include)


@torch_mapper("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(ctx, op):
    """`reduce_mean` for 1x1 output, `avg_pool2d` when the input divides evenly, else
    two `matmul`s by constant averaging matrices (bins of uneven size)."""
    x, size = args(op)
    h, w = ctx.shape(x)[-2:]
    oh, ow = [d if d is not None else s for d, s in zip(list(size) * (2 // len(size)), (h, w))]
    rank = len(ctx.shape(x))
    if (oh, ow) == (1, 1):
        ctx.emit("reduce_mean", [x], {"axes": [rank - 2, rank - 1], "keepdims": True},
                 outputs=op.outputs)
    elif h % oh == 0 and w % ow == 0 and rank == 4:
        kernel = [h // oh, w // ow]
        ctx.emit("avg_pool2d", [x], {"kernel": kernel, "strides": kernel, "pads": [0, 0, 0, 0],
                                     "count_include_pad": False}, outputs=op.outputs)
    else:
        dtype = ctx.dtype(x)
        cols = ctx.constant(_bin_means(w, ow, dtype).T, "cols")
        rows = ctx.constant(_bin_means(h, oh, dtype), "rows")
        half = ctx.emit("matmul", [x, cols], shape=tuple(ctx.shape(x)[:-1]) + (ow,),
                        hint="cols")
        ctx.emit("matmul", [rows, half], outputs=op.outputs)


def _bin_means(size: int, bins: int, dtype) -> np.ndarray:
    """[bins, size]: row i averages PyTorch's adaptive bin i,
    [floor(i*size/bins), ceil((i+1)*size/bins))."""
    out = np.zeros((bins, size), dtype)
    for i in range(bins):
        lo, hi = i * size // bins, -(-(i + 1) * size // bins)
        out[i, lo:hi] = 1 / (hi - lo)
    return out


@torch_mapper("aten._softmax.default", "aten.softmax.int")
def softmax(ctx, op):
    """`softmax` along dim."""
    x, dim = args(op)[:2]
    ctx.emit("softmax", [x], {"axis": axis(ctx, x, dim)}, outputs=op.outputs)


@torch_mapper("aten._log_softmax.default", "aten.log_softmax.int")
def log_softmax(ctx, op):
    """`log_softmax` along dim."""
    x, dim = args(op)[:2]
    ctx.emit("log_softmax", [x], {"axis": axis(ctx, x, dim)}, outputs=op.outputs)


_UNARY = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "silu": "silu", "exp": "exp",
          "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt", "neg": "neg", "abs": "abs",
          "erf": "erf", "logical_not": "logical_not", "bitwise_not": "bitwise_not",
          "sin": "sin", "cos": "cos", "floor": "floor", "ceil": "ceil", "sign": "sign",
          "reciprocal": "reciprocal", "isnan": "isnan", "isinf": "isinf", "log1p": "log1p",
          **{name: name for name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
                                     "acosh", "atanh")}}


@torch_mapper(*[f"aten.{name}.default" for name in _UNARY])
def unary(ctx, op):
    """the elementwise IR op of the same name (an integer input that torch
    promotes, as in `sin` or `reciprocal` of int, is cast first). torch's
    sign of NaN is 0 (numpy's and the IR's is NaN): a `where` says so."""
    x, out_dtype = op.inputs[0], ctx.dtype(op.outputs[0])
    if ctx.dtype(x) != out_dtype and out_dtype != "bool":
        x = ctx.emit("cast", [x], {"dtype": out_dtype}, shape=ctx.shape(x), hint="promoted")
    name = _UNARY[op.type.split(".")[1]]
    if name == "sign" and out_dtype.startswith(("float", "bfloat")):
        nan = ctx.emit("isnan", [x], dtype="bool", shape=ctx.shape(x), hint="nan")
        sign = ctx.emit("sign", [x], shape=ctx.shape(x), hint="sign")
        ctx.emit("where", [nan, ctx.constant(np.array(0, out_dtype), "zero"), sign],
                 outputs=op.outputs)
        return
    ctx.emit(name, [x], outputs=op.outputs)


@torch_mapper("aten.gelu.default")
def gelu(ctx, op):
    """`gelu` (approximate='tanh' kept)."""
    approximate = op.attrs["kwargs"].get("approximate", (args(op) + ["none"])[1])
    ctx.emit("gelu", op.inputs[:1], {"approximate": approximate == "tanh"}, outputs=op.outputs)


@torch_mapper("aten.clamp.default", "aten.hardtanh.default")
def clamp(ctx, op):
    """`clip` (relu6, hardtanh and the clamps of decomposed hardswish)."""
    default = (-1.0, 1.0) if op.type == "aten.hardtanh.default" else (None, None)
    x, lo, hi = args(op, None, *default)
    attrs = {k: float(v) for k, v in (("min", lo), ("max", hi)) if v is not None}
    ctx.emit("clip", [x], attrs, outputs=op.outputs)


@torch_mapper("aten.hardswish.default")
def hardswish(ctx, op):
    """`hard_swish`: x * relu6(x + 3) / 6."""
    ctx.emit("hard_swish", op.inputs[:1], outputs=op.outputs)


@torch_mapper("aten.hardsigmoid.default")
def hardsigmoid(ctx, op):
    """`hard_sigmoid`: relu6(x + 3) / 6."""
    ctx.emit("hard_sigmoid", op.inputs[:1], outputs=op.outputs)


@torch_mapper("aten.leaky_relu.default")
def leaky_relu(ctx, op):
    """`leaky_relu(negative_slope)`."""
    x, slope = args(op, None, 0.01)
    ctx.emit("leaky_relu", [x], {"alpha": float(slope)}, outputs=op.outputs)


@torch_mapper("aten.scaled_dot_product_attention.default")
def scaled_dot_product_attention(ctx, op):
    """`attention` (a boolean mask, True = attend, becomes an additive 0/-inf one)."""
    q, k, v, mask, dropout, causal = args(op, None, None, None, None, 0.0, False)[:6]
    kwargs = op.attrs["kwargs"]
    mask, causal = kwargs.get("attn_mask", mask), kwargs.get("is_causal", causal)
    dropout, scale = kwargs.get("dropout_p", dropout), kwargs.get("scale")
    if kwargs.get("enable_gqa"):
        raise unsupported(op, "enable_gqa (grouped-query attention) is not supported")
    if dropout:
        raise unsupported(op, f"dropout_p={dropout} (a training-time op) is not supported")
    inputs = [q, k, v]
    if mask is not None:
        if ctx.dtype(mask) == "bool":
            dtype = ctx.dtype(q)
            mask = ctx.emit("where", [mask, ctx.constant(np.array(0, dtype), "zero"),
                                      ctx.constant(np.array(-np.inf, dtype), "minus_inf")],
                            shape=ctx.shape(mask), dtype=dtype, hint="additive_mask")
    if causal:
        # A constant additive mask, so every target writes it the same way.
        sq, sk = ctx.shape(q)[-2], ctx.shape(k)[-2]
        if not isinstance(sq, int) or not isinstance(sk, int):
            raise unsupported(op, "is_causal with a sequence length unknown at conversion time")
        dtype = ctx.dtype(q)
        causal_mask = ctx.constant(np.where(np.tril(np.ones((sq, sk), bool)), 0, -np.inf)
                                   .astype(dtype), "causal_mask")
        mask = causal_mask if mask is None else ctx.emit(
            "add", [mask, causal_mask], hint="causal_mask")
    if mask is not None:
        inputs.append(mask)
    ctx.emit("attention", inputs, {"scale": None if scale is None else float(scale)},
             outputs=op.outputs[:1])


@torch_mapper("aten.upsample_bilinear2d.vec", "aten.upsample_nearest2d.vec",
              "aten.upsample_bilinear2d.default", "aten.upsample_nearest2d.default")
def upsample(ctx, op):
    """`resize` of H, W to the output size (F.interpolate, nn.Upsample):
    bilinear with half-pixel or align-corners coordinates, nearest with
    floor(dst * in / out). A scale factor whose output size is rounded
    (torch then maps coordinates by the factor, not by the sizes) is refused."""
    bilinear = "bilinear" in op.type
    given = args(op, None, None, False, None) if bilinear else args(op, None, None, None)
    x = given[0]
    align = bool(given[2]) if bilinear else False
    scales = given[3] if bilinear else given[2]
    if op.type.endswith(".default"):
        scales = [s for s in given[3 if bilinear else 2:] if s is not None] or None
    in_size, out_size = ctx.shape(x)[2:], ctx.shape(op.outputs[0])[2:]
    if None in in_size or None in out_size:
        _upsample_by_whole_scales(ctx, op, x, scales, bilinear, align)
        return
    if scales and not align and any(float(o) != float(i) * float(s)
                                    for o, i, s in zip(out_size, in_size, scales)):
        raise unsupported(op, f"scale factors {list(scales)} on {list(in_size)} give output "
                              f"sizes {list(out_size)} that torch rounds, and it maps "
                              f"coordinates by the factors; pass size= instead")
    if bilinear:
        coord = "align_corners" if align else "half_pixel"
        if not align and any(o == 1 and i != 1 for o, i in zip(out_size, in_size)):
            raise unsupported(op, "a half-pixel bilinear resize to a size of 1 is not "
                                  "supported (torch samples coordinate 0 there)")
    else:
        coord = "asymmetric"
    ctx.emit("resize", [x], {"size": [int(d) for d in out_size],
                             "mode": "bilinear" if bilinear else "nearest", "coord": coord},
             outputs=op.outputs)


def _upsample_by_whole_scales(ctx, op, x, scales, bilinear: bool, align: bool):
    """`upsample` of an image whose size is known only at run time by whole
    scale factors (F.interpolate(scale_factor=2)): the output is exactly the
    input's size times the factor, so torch's coordinates by the factor and
    by the sizes agree. A size= or a fractional factor (torch rounds the
    output size) over such an image is refused."""
    whole = scales and all(float(s) == int(s) and int(s) >= 1 for s in scales)
    if not whole:
        raise unsupported(op, f"a resize of an image whose size is known only at run time "
                              f"is supported by whole scale factors (scale_factor=2); "
                              f"{'scale factors ' + str(list(scales)) if scales else 'an output size'}"
                              f" over such an image is not supported yet: give its height and "
                              f"width as numbers in --input-shape")
    coord = ("align_corners" if align else "half_pixel") if bilinear else "asymmetric"
    ctx.emit("upsample", [x], {"scales": [int(s) for s in scales],
                               "mode": "bilinear" if bilinear else "nearest", "coord": coord},
             outputs=op.outputs)
