"""Convolutions of any spatial rank from the IR's 2-D ones, shared by the
PyTorch, ONNX and TF mappers (NCHW-like inputs, OI... weights, pads as
[begins..., ends...]).

1-D: a unit height is inserted (x [N, C, W] -> [N, C, 1, W], weight
[O, I, k] -> [O, I, 1, k]) and removed after. 3-D: each depth tap i of the
kernel is a 2-D convolution of the depth slices it reads, with the output
depth folded into the batch, and the taps are summed; the weights must be
constants. 3-D transposed convolution is refused."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError


def _weight_2d(ctx, w: str, hint: str) -> str:
    """[O, I, k] -> [O, I, 1, k] (constant reshaped now, else an unsqueeze node)."""
    array = ctx.const(w)
    if array is not None:
        return ctx.constant(np.ascontiguousarray(array[:, :, None, :]), hint)
    shape = ctx.shape(w)
    return ctx.emit("unsqueeze", [w], {"axes": [2]}, shape=tuple(shape[:2]) + (1, shape[2]),
                    hint=hint)


def _with_unit_height(shape):
    return None if shape is None else tuple(shape[:2]) + (1,) + tuple(shape[2:])


def _as_image(ctx, x: str) -> str:
    shape = ctx.shape(x)
    return ctx.emit("unsqueeze", [x], {"axes": [2]}, shape=tuple(shape[:2]) + (1,) + tuple(
        shape[2:]), hint="as_image")


def emit_conv(ctx, op, x: str, w: str, bias: str | None, out: str, strides, dilations, pads,
              groups: int) -> None:
    rank = len(strides)
    extra = [bias] if bias else []
    if rank == 2:
        ctx.emit("conv2d", [x, w] + extra, {"strides": list(strides),
                                            "dilations": list(dilations), "pads": list(pads),
                                            "groups": groups}, outputs=[out])
        return
    if rank == 1:
        y = ctx.emit("conv2d", [_as_image(ctx, x), _weight_2d(ctx, w, "weight_2d")] + extra,
                     {"strides": [1] + list(strides), "dilations": [1] + list(dilations),
                      "pads": [0, pads[0], 0, pads[1]], "groups": groups},
                     shape=_with_unit_height(ctx.shape(out)), hint="conv")
        ctx.emit("squeeze", [y], {"axes": [2]}, outputs=[out])
        return
    if rank == 3:
        _conv3d(ctx, op, x, w, bias, out, strides, dilations, pads, groups)
        return
    raise ConversionError(f"{op.type} '{op.name}': {rank}-D convolution is not supported")


def _conv3d(ctx, op, x, w, bias, out, strides, dilations, pads, groups) -> None:
    weight = ctx.const(w)
    shape = ctx.shape(x)
    if weight is None or (bias and ctx.const(bias) is None) or shape is None or \
            any(d is None for d in shape[1:]):
        raise ConversionError(f"{op.type} '{op.name}': 3-D convolution needs a constant "
                              f"weight and bias and static channel and spatial sizes")
    n, c, depth, h, wd = shape
    kd = weight.shape[2]
    sd, dd, front, back = strides[0], dilations[0], pads[0], pads[3]
    padded = depth + front + back
    out_depth = (padded - dd * (kd - 1) - 1) // sd + 1
    if front or back:
        x = ctx.emit("pad", [x], {"pads": [0, 0, front, 0, 0, 0, 0, back, 0, 0]},
                     shape=(n, c, padded, h, wd), hint="pad_depth")
    attrs = {"strides": list(strides[1:]), "dilations": list(dilations[1:]),
             "pads": [pads[1], pads[2], pads[4], pads[5]], "groups": groups}
    _, o, _, oh, ow = ctx.shape(out)
    batch = None if n is None else n * out_depth
    total = None
    for i in range(kd):
        # The depth slices tap i reads, with the output depth moved into the batch.
        taps = ctx.emit("slice", [x], {"starts": [i * dd], "ends": [i * dd + (out_depth - 1) * sd
                                                                    + 1],
                                       "axes": [2], "steps": [sd]},
                        shape=(n, c, out_depth, h, wd), hint="taps")
        taps = ctx.emit("transpose", [taps], {"perm": [0, 2, 1, 3, 4]},
                        shape=(n, out_depth, c, h, wd), hint="depth_first")
        images = ctx.emit("reshape", [taps], {"shape": [-1, c, h, wd]},
                          shape=(batch, c, h, wd), hint="images")
        part = ctx.emit("conv2d", [images, ctx.constant(np.ascontiguousarray(weight[:, :, i]),
                                                        "weight_tap")], attrs,
                        shape=(batch, o, oh, ow), hint="tap")
        total = part if total is None else ctx.emit("add", [total, part],
                                                    shape=(batch, o, oh, ow), hint="sum_taps")
    if bias:
        total = ctx.emit("add", [total, ctx.constant(ctx.const(bias).reshape(-1, 1, 1), "bias")],
                         shape=(batch, o, oh, ow), hint="bias")
    back_5d = ctx.emit("reshape", [total], {"shape": [-1, out_depth, o, oh, ow]},
                       shape=(n, out_depth, o, oh, ow), hint="volumes")
    ctx.emit("transpose", [back_5d], {"perm": [0, 2, 1, 3, 4]}, outputs=[out])


def emit_conv_transpose(ctx, op, x: str, w: str, bias: str | None, out: str, strides, crop
                        ) -> None:
    """`conv_transpose2d` (weight [C_in, C_out, k...], groups 1, dilation 1); `crop`
    [begins..., ends...] is taken off the full output; 1-D through a unit height."""
    rank = len(strides)
    if ctx.const(w) is None:
        raise ConversionError(f"{op.type} '{op.name}': transposed convolution needs a "
                              f"constant weight")
    if rank not in (1, 2):
        raise ConversionError(f"{op.type} '{op.name}': {rank}-D transposed convolution is "
                              f"not supported (1-D and 2-D are)")
    if any(c < 0 for c in crop):
        raise ConversionError(f"{op.type} '{op.name}': output padding beyond the padding "
                              f"(a negative crop) is not supported")
    extra = [bias] if bias else []
    if rank == 2:
        ctx.emit("conv_transpose2d", [x, w] + extra, {"strides": list(strides),
                                                      "pads": list(crop)}, outputs=[out])
        return
    y = ctx.emit("conv_transpose2d", [_as_image(ctx, x), _weight_2d(ctx, w, "weight_2d")] + extra,
                 {"strides": [1] + list(strides), "pads": [0, crop[0], 0, crop[1]]},
                 shape=_with_unit_height(ctx.shape(out)), hint="deconv")
    ctx.emit("squeeze", [y], {"axes": [2]}, outputs=[out])
