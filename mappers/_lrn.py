"""Local response normalization, shared by the TF and ONNX mappers (neither IR
nor most targets have it as one op): square, mean over a window of channels
(average pooling with zero padding counted), then x / (bias + alpha*mean)^beta.

The mean is over the window, so `alpha_per_mean` is ONNX's alpha as is and
TF's alpha times the window size (TF applies alpha to the sum)."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError


def emit_lrn(ctx, op, size: int, alpha_per_mean: float, bias: float, beta: float,
             channels_last: bool) -> None:
    x = op.inputs[0]
    shape = ctx.shape(x)
    layout = "NHWC" if channels_last else "NCHW"
    if shape is None or len(shape) != 4 or any(d is None for d in shape[1:]):
        raise ConversionError(f"LRN '{op.name}': needs an {layout} input with known C, H, W")
    dtype = ctx.dtype(x)
    below, above = (size - 1) // 2, size - 1 - (size - 1) // 2
    square = ctx.emit("mul", [x, x], shape=shape, hint="square")
    # Lay the channels along one spatial axis of a single-channel image, so a
    # size-long average pool walks over them.
    if channels_last:
        n, h, w, c = shape
        rows_shape, kernel, pads = (n, 1, h * w, c), [1, size], [0, below, 0, above]
        rows_target, back_target = [-1, 1, h * w, c], [-1, h, w, c]
    else:
        n, c = shape[:2]
        rows_shape, kernel, pads = (n, 1, c, None), [size, 1], [below, 0, above, 0]
        rows_target, back_target = [0, 1, c, -1], [0, c] + list(shape[2:])
    rows = ctx.emit("reshape", [square], {"shape": rows_target}, shape=rows_shape,
                    hint="channels_as_rows")
    mean = ctx.emit("avg_pool2d", [rows], {"kernel": kernel, "strides": [1, 1], "pads": pads,
                                           "count_include_pad": True}, shape=rows_shape,
                    hint="window_mean")
    mean = ctx.emit("reshape", [mean], {"shape": back_target}, shape=shape,
                    hint="window_mean_back")
    scaled = ctx.emit("mul", [mean, ctx.constant(np.array(alpha_per_mean, dtype), "alpha")],
                      shape=shape, hint="scaled")
    base = ctx.emit("add", [scaled, ctx.constant(np.array(bias, dtype), "bias")], shape=shape,
                    hint="base")
    denom = ctx.emit("pow", [base, ctx.constant(np.array(beta, dtype), "beta")], shape=shape,
                     hint="denominator")
    ctx.emit("div", [x, denom], outputs=op.outputs)
