"""Convolution, normalization, pooling, softmax and activations."""
from __future__ import annotations

from x2.registry import torch_mapper

from ._util import args, axis, unsupported


@torch_mapper("aten.convolution.default")
def convolution(ctx, op):
    """`conv2d` (groups, dilation, symmetric padding); transposed/1-D/3-D are refused."""
    x, w, b, stride, padding, dilation, transposed, _out_pad, groups = args(op)
    if transposed:
        raise unsupported(op, "transposed convolution is not supported yet")
    if len(ctx.shape(w)) != 4:
        raise unsupported(op, f"only 2-D convolution is supported (weight rank "
                          f"{len(ctx.shape(w))})")
    inputs = [x, w] + ([b] if b is not None else [])
    ph, pw = padding
    ctx.emit("conv2d", inputs, {"strides": list(stride), "dilations": list(dilation),
                                "pads": [ph, pw, ph, pw], "groups": int(groups)},
             outputs=op.outputs[:1])


@torch_mapper("aten._native_batch_norm_legit_no_training.default")
def batch_norm(ctx, op):
    """`batch_norm` (eval-mode statistics); the saved mean/rstd outputs must be unused."""
    x, w, b, mean, var, _momentum, eps = args(op)
    if w is None or b is None:
        channels = ctx.shape(mean)[0]
        import numpy as np
        w = w or ctx.constant(np.ones(channels, ctx.dtype(x)), "scale")
        b = b or ctx.constant(np.zeros(channels, ctx.dtype(x)), "bias")
    ctx.emit("batch_norm", [x, w, b, mean, var], {"epsilon": float(eps)},
             outputs=op.outputs[:1])


@torch_mapper("aten.native_layer_norm.default")
def layer_norm(ctx, op):
    """`layer_norm` over the trailing normalized_shape axes."""
    x, shape, w, b, eps = args(op)
    inputs = [x] + ([w] if w is not None else []) + ([b] if b is not None else [])
    if w is None and b is not None:
        raise unsupported(op, "a bias without a weight is not supported")
    ctx.emit("layer_norm", inputs, {"axis": len(ctx.shape(x)) - len(shape),
                                    "epsilon": float(eps)}, outputs=op.outputs[:1])


@torch_mapper("aten.native_group_norm.default")
def group_norm(ctx, op):
    """`group_norm`."""
    x, w, b, _n, channels, _hw, groups, eps = args(op)
    import numpy as np
    w = w if w is not None else ctx.constant(np.ones(channels, ctx.dtype(x)), "scale")
    b = b if b is not None else ctx.constant(np.zeros(channels, ctx.dtype(x)), "bias")
    ctx.emit("group_norm", [x, w, b], {"groups": int(groups), "epsilon": float(eps)},
             outputs=op.outputs[:1])


def _pool_pads(padding) -> list[int]:
    ph, pw = (list(padding) * 2)[:2] if len(padding) == 1 else padding
    return [ph, pw, ph, pw]


@torch_mapper("aten.max_pool2d_with_indices.default", "aten.max_pool2d.default")
def max_pool2d(ctx, op):
    """`max_pool2d` (the indices output must be unused; ceil_mode/dilation refused)."""
    x, kernel, stride, padding, dilation, ceil = args(op, None, None, [], [0, 0], [1, 1], False)
    if ceil or any(d != 1 for d in dilation):
        raise unsupported(op, "ceil_mode and dilated max pooling are not supported yet")
    kernel = list(kernel) * (2 // len(kernel))
    stride = list(stride or kernel) * (2 // len(stride or kernel))
    ctx.emit("max_pool2d", [x], {"kernel": kernel, "strides": stride,
                                 "pads": _pool_pads(padding)}, outputs=op.outputs[:1])


@torch_mapper("aten.avg_pool2d.default")
def avg_pool2d(ctx, op):
    """`avg_pool2d` (count_include_pad kept; ceil_mode/divisor_override refused)."""
    x, kernel, stride, padding, ceil, include, divisor = args(
        op, None, None, [], [0, 0], False, True, None)
    if ceil or divisor is not None:
        raise unsupported(op, "ceil_mode and divisor_override are not supported yet")
    kernel = list(kernel) * (2 // len(kernel))
    stride = list(stride or kernel) * (2 // len(stride or kernel))
    ctx.emit("avg_pool2d", [x], {"kernel": kernel, "strides": stride,
                                 "pads": _pool_pads(padding),
                                 "count_include_pad": bool(include)}, outputs=op.outputs)


@torch_mapper("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default")
def adaptive_avg_pool2d(ctx, op):
    """`reduce_mean` for 1x1 output, `avg_pool2d` when the input divides evenly."""
    x, size = args(op)
    h, w = ctx.shape(x)[2:]
    oh, ow = [d if d is not None else s for d, s in zip(list(size) * (2 // len(size)), (h, w))]
    if (oh, ow) == (1, 1):
        ctx.emit("reduce_mean", [x], {"axes": [2, 3], "keepdims": True}, outputs=op.outputs)
    elif h % oh == 0 and w % ow == 0:
        kernel = [h // oh, w // ow]
        ctx.emit("avg_pool2d", [x], {"kernel": kernel, "strides": kernel, "pads": [0, 0, 0, 0],
                                     "count_include_pad": False}, outputs=op.outputs)
    else:
        raise unsupported(op, f"adaptive pooling {h}x{w} -> {oh}x{ow} does not divide evenly")


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
          "erf": "erf", "logical_not": "logical_not"}


@torch_mapper(*[f"aten.{name}.default" for name in _UNARY])
def unary(ctx, op):
    """the elementwise IR op of the same name."""
    ctx.emit(_UNARY[op.type.split(".")[1]], op.inputs[:1], outputs=op.outputs)


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
    """`x * clip(x + 3, 0, 6) / 6`."""
    import numpy as np
    x = op.inputs[0]
    dtype = ctx.dtype(x)
    shape = ctx.shape(x)
    shifted = ctx.emit("add", [x, ctx.constant(np.array(3, dtype), "three")], shape=shape,
                       hint="shift")
    gate = ctx.emit("clip", [shifted], {"min": 0.0, "max": 6.0}, shape=shape, hint="gate")
    scaled = ctx.emit("mul", [x, gate], shape=shape, hint="scaled")
    ctx.emit("div", [scaled, ctx.constant(np.array(6, dtype), "six")], outputs=op.outputs)


@torch_mapper("aten.leaky_relu.default")
def leaky_relu(ctx, op):
    """`leaky_relu(negative_slope)`."""
    x, slope = args(op, None, 0.01)
    ctx.emit("leaky_relu", [x], {"alpha": float(slope)}, outputs=op.outputs)
