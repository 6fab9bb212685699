"""Convolutions. TF filters are HWIO (depthwise: HWCM); the IR wants OIHW, so
weights are transposed here, once, at conversion time."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import tf_mapper

from .._conv import emit_conv
from ._util import emit_ncdhw, emit_nchw, padding, same_pads, spatial


def _conv_attrs(ctx, op, kernel_hw, groups):
    strides = spatial(op, op.attrs.get("strides", [1, 1, 1, 1]))
    dilations = spatial(op, op.attrs.get("dilations", [1, 1, 1, 1]))
    return {"strides": strides, "dilations": dilations, "groups": groups,
            **padding(ctx, op, kernel_hw, strides, dilations)}


@tf_mapper("Conv2D")
def conv2d(ctx, op):
    """`conv2d`, HWIO filter transposed to OIHW at conversion time."""
    x, w = op.inputs
    hwio = ctx.require_const(w, "the filter")
    in_channels = ctx.shape(x)[3 if op.attrs.get("data_format", "NHWC") == "NHWC" else 1]
    groups = in_channels // hwio.shape[2] if in_channels else 1
    weight = ctx.constant(np.ascontiguousarray(hwio.transpose(3, 2, 0, 1)), "weight")
    ctx.graph.derive_origin(weight, w, (3, 2, 0, 1))  # still the kernel variable, transposed
    emit_nchw(ctx, op, "conv2d", [x, weight], _conv_attrs(ctx, op, list(hwio.shape[:2]), groups))


@tf_mapper("DepthwiseConv2dNative")
def depthwise_conv2d(ctx, op):
    """`conv2d` with groups=C, HWCM filter to (C*M)1HW."""
    x, w = op.inputs
    hwcm = ctx.require_const(w, "the filter")
    h, k, c, m = hwcm.shape
    # Output channel c*M + m reads input channel c: OIHW with O = C*M, I = 1.
    weight = ctx.constant(np.ascontiguousarray(hwcm.reshape(h, k, 1, c * m).transpose(3, 2, 0, 1)),
                          "weight")
    ctx.graph.derive_origin(weight, w, (3, 2, 0, 1))  # (HWCM read as HW1(C*M), transposed)
    emit_nchw(ctx, op, "conv2d", [x, weight], _conv_attrs(ctx, op, [h, k], c))


@tf_mapper("BiasAdd", "BiasAddV1")
def bias_add(ctx, op):
    """`add` of the bias (reshaped to [C,1,1] for NCHW)."""
    x, b = op.inputs
    bias = ctx.const(b)
    rank = len(ctx.shape(x) or ())
    if op.attrs.get("data_format", "NHWC") == "NCHW" and rank > 2:
        if bias is None:
            b = ctx.emit("unsqueeze", [b], {"axes": list(range(1, rank - 1))},
                         shape=(ctx.shape(b)[0],) + (1,) * (rank - 2))
        else:
            b, variable = ctx.constant(bias.reshape((-1,) + (1,) * (rank - 2)), "bias"), b
            ctx.graph.derive_origin(b, variable)  # the same elements in the same order
    ctx.emit("add", [x, b], outputs=op.outputs)


@tf_mapper("Conv2DBackpropInput")
def conv2d_transpose(ctx, op):
    """`conv_transpose2d` (Conv2DTranspose), HWOI filter to IOHW; SAME/VALID as a crop."""
    sizes_value, w, x = op.inputs
    sizes = list(ctx.shape(op.outputs[0]) or [None] * 4)
    if any(d is None for d in spatial(op, sizes)):  # height/width from the sizes input
        sizes = ctx.require_const(sizes_value, "the output size").astype(int).tolist()
    hwoi = ctx.require_const(w, "the filter")
    kh, kw = hwoi.shape[:2]
    strides = spatial(op, op.attrs.get("strides", [1, 1, 1, 1]))
    if spatial(op, op.attrs.get("dilations", [1, 1, 1, 1])) != [1, 1]:
        raise ConversionError(f"Conv2DBackpropInput '{op.name}': dilation is not supported")
    in_hw = spatial(op, list(ctx.shape(x)))
    out_hw = spatial(op, sizes)
    pads = []
    for size_in, size_out, k, s in zip(in_hw, out_hw, (kh, kw), strides):
        pads.append((size_in - 1) * s + k - size_out)  # total crop of the full output
    if any(p < 0 for p in pads):
        raise ConversionError(f"Conv2DBackpropInput '{op.name}': output size {out_hw} needs "
                              f"output padding, which is not supported")
    if op.attrs.get("padding") == "VALID":
        crop = [0, 0, pads[0], pads[1]]
    else:  # SAME: the forward conv padded total//2 before
        crop = [pads[0] // 2, pads[1] // 2, pads[0] - pads[0] // 2, pads[1] - pads[1] // 2]
    weight = ctx.constant(np.ascontiguousarray(hwoi.transpose(3, 2, 0, 1)), "weight")
    ctx.graph.derive_origin(weight, w, (3, 2, 0, 1))  # still the kernel variable, transposed
    emit_nchw(ctx, op, "conv_transpose2d", [x, weight], {"strides": strides, "pads": crop})


@tf_mapper("Conv3D")
def conv3d(ctx, op):
    """NDHWC to NCDHW, DHWIO filter to OIDHW, the 3-D convolution of mappers/_conv.py
    (per-depth-tap conv2d), and back."""
    x, w = op.inputs
    if op.attrs.get("data_format", "NDHWC") != "NDHWC":
        raise ConversionError(f"Conv3D '{op.name}': only NDHWC is supported")
    dhwio = ctx.require_const(w, "the filter")
    shape = ctx.shape(x)
    strides = op.attrs.get("strides", [1] * 5)[1:4]
    dilations = op.attrs.get("dilations", [1] * 5)[1:4]
    pads = same_pads(ctx, op, list(shape[1:4]), list(dhwio.shape[:3]), strides, dilations)
    groups = shape[4] // dhwio.shape[3]
    weight = ctx.constant(np.ascontiguousarray(dhwio.transpose(4, 3, 0, 1, 2)), "weight")
    ctx.graph.derive_origin(weight, w, (4, 3, 0, 1, 2))  # still the kernel, transposed
    emit_ncdhw(ctx, op, lambda x_, out: emit_conv(ctx, op, x_, weight, None, out, strides,
                                                  dilations, pads, groups))
