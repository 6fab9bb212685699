"""Convolution, normalization and pooling (NCHW already: no layout change)."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import rank_of, require_2d, spatial_pads


@onnx_mapper("Conv")
def conv(ctx, op):
    """`conv2d` (2-D only); auto_pad resolved to explicit pads."""
    weight = ctx.shape(op.inputs[1]) or ctx.require_const(op.inputs[1], "the weight").shape
    kernel = op.attrs.get("kernel_shape") or list(weight[2:])
    require_2d(op, kernel)
    strides = op.attrs.get("strides", [1, 1])
    dilations = op.attrs.get("dilations", [1, 1])
    pads = spatial_pads(ctx, op, kernel, strides, dilations)
    ctx.emit("conv2d", [v for v in op.inputs if v], {
        "strides": strides, "dilations": dilations, "pads": pads,
        "groups": op.attrs.get("group", 1)}, outputs=op.outputs[:1])


@onnx_mapper("BatchNormalization")
def batch_norm(ctx, op):
    """`batch_norm` (inference form; training outputs are refused)."""
    if len([o for o in op.outputs if o]) > 1 or op.attrs.get("training_mode"):
        raise ConversionError(f"BatchNormalization '{op.name}' is in training mode")
    if rank_of(ctx, op, op.inputs[0]) != 4:
        raise ConversionError(f"BatchNormalization '{op.name}': only NCHW (rank 4) is supported")
    ctx.emit("batch_norm", op.inputs[:5], {"epsilon": float(op.attrs.get("epsilon", 1e-5))},
             outputs=op.outputs[:1])


def _pool(ctx, op, ir_op, extra):
    kernel = op.attrs["kernel_shape"]
    require_2d(op, kernel)
    if op.attrs.get("ceil_mode"):
        raise ConversionError(f"{op.type} '{op.name}': ceil_mode=1 is not supported")
    strides = op.attrs.get("strides", [1, 1])
    dilations = op.attrs.get("dilations", [1, 1])
    if any(d != 1 for d in dilations):
        raise ConversionError(f"{op.type} '{op.name}': dilated pooling is not supported")
    pads = spatial_pads(ctx, op, kernel, strides, dilations)
    if len([o for o in op.outputs if o]) > 1:
        raise ConversionError(f"{op.type} '{op.name}': the Indices output is not supported")
    ctx.emit(ir_op, op.inputs[:1], {"kernel": kernel, "strides": strides, "pads": pads, **extra},
             outputs=op.outputs[:1])


@onnx_mapper("MaxPool")
def max_pool(ctx, op):
    """`max_pool2d`."""
    _pool(ctx, op, "max_pool2d", {})


@onnx_mapper("AveragePool")
def average_pool(ctx, op):
    """`avg_pool2d` (count_include_pad kept)."""
    _pool(ctx, op, "avg_pool2d", {"count_include_pad": bool(op.attrs.get("count_include_pad"))})


@onnx_mapper("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx, op):
    """`reduce_mean` / `reduce_max` over the spatial axes, keepdims."""
    rank = rank_of(ctx, op, op.inputs[0])
    ir_op = "reduce_mean" if op.type == "GlobalAveragePool" else "reduce_max"
    ctx.emit(ir_op, op.inputs[:1], {"axes": list(range(2, rank)), "keepdims": True},
             outputs=op.outputs)


@onnx_mapper("LRN")
def lrn(ctx, op):
    """Cross-channel LRN as square -> windowed mean over channels -> pow -> div."""
    x = op.inputs[0]
    shape = ctx.shape(x)
    if shape is None or len(shape) != 4 or any(d is None for d in shape[1:]):
        raise ConversionError(f"LRN '{op.name}': needs an NCHW input with known C, H, W")
    size = int(op.attrs["size"])
    alpha, beta = float(op.attrs.get("alpha", 1e-4)), float(op.attrs.get("beta", 0.75))
    bias = float(op.attrs.get("bias", 1.0))
    dtype = ctx.dtype(x)
    n, c = shape[0], shape[1]
    square = ctx.emit("mul", [x, x], shape=shape, hint="square")
    rows = ctx.emit("reshape", [square], {"shape": [0, 1, c, -1]}, shape=(n, 1, c, None),
                    hint="channels_as_rows")
    below, above = (size - 1) // 2, size - 1 - (size - 1) // 2
    # Mean over the window with zero padding counted = sum / size, as LRN defines.
    mean = ctx.emit("avg_pool2d", [rows], {"kernel": [size, 1], "strides": [1, 1],
                                           "pads": [below, 0, above, 0],
                                           "count_include_pad": True}, shape=(n, 1, c, None),
                    hint="window_mean")
    mean = ctx.emit("reshape", [mean], {"shape": [0, c] + list(shape[2:])}, shape=shape,
                    hint="window_mean_nchw")
    scaled = ctx.emit("mul", [mean, ctx.constant(np.array(alpha, dtype), "alpha")], shape=shape,
                      hint="scaled")
    base = ctx.emit("add", [scaled, ctx.constant(np.array(bias, dtype), "bias")], shape=shape,
                    hint="base")
    denom = ctx.emit("pow", [base, ctx.constant(np.array(beta, dtype), "beta")], shape=shape,
                     hint="denominator")
    ctx.emit("div", [x, denom], outputs=op.outputs)
