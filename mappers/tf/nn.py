"""Normalization, pooling, softmax and activations."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import tf_mapper

from .._lrn import emit_lrn
from .._pool import emit_avg_pool, emit_max_pool

from ._util import emit_ncdhw, emit_nchw, padding, same_pads, spatial


@tf_mapper("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def fused_batch_norm(ctx, op):
    """`batch_norm` (inference only; training mode is refused)."""
    if op.attrs.get("is_training", False):
        raise ConversionError(f"{op.type} '{op.name}' is in training mode (is_training=True); "
                              f"export the model for inference (training=False) first")
    x, scale, offset, mean, var = op.inputs[:5]
    for value, what in ((scale, "scale"), (offset, "offset"), (mean, "mean"), (var, "variance")):
        ctx.require_const(value, what)
    emit_nchw(ctx, op, "batch_norm", [x, scale, offset, mean, var],
              {"epsilon": float(op.attrs.get("epsilon", 1e-3))})


def _pool(ctx, op, ir_op, extra):
    ksize = spatial(op, op.attrs["ksize"])
    strides = spatial(op, op.attrs["strides"])
    emit_nchw(ctx, op, ir_op, [op.inputs[0]], {"kernel": ksize, "strides": strides,
                                                **padding(ctx, op, ksize, strides, [1, 1]), **extra})


@tf_mapper("MaxPool")
def max_pool(ctx, op):
    """`max_pool2d`, SAME/VALID as pads (`auto_pad` where they depend on run-time sizes)."""
    _pool(ctx, op, "max_pool2d", {})


@tf_mapper("AvgPool")
def avg_pool(ctx, op):
    """`avg_pool2d`, padding excluded from the average (TF semantics)."""
    # TF's SAME average pooling divides by the number of real (unpadded) inputs.
    _pool(ctx, op, "avg_pool2d", {"count_include_pad": False})


@tf_mapper("MaxPool3D", "AvgPool3D")
def pool3d(ctx, op):
    """NDHWC to NCDHW, then a maximum / sum over strided slices (mappers/_pool.py;
    TF averages over the real inputs only), and back."""
    x = op.inputs[0]
    if op.attrs.get("data_format", "NDHWC") != "NDHWC":
        raise ConversionError(f"{op.type} '{op.name}': only NDHWC is supported")
    shape = ctx.shape(x)
    kernel, strides = op.attrs["ksize"][1:4], op.attrs["strides"][1:4]
    pads = same_pads(ctx, op, list(shape[1:4]), kernel, strides, [1, 1, 1])
    if op.type == "MaxPool3D":
        emit_ncdhw(ctx, op, lambda x_, out: emit_max_pool(ctx, op, x_, out, kernel, strides,
                                                          [1, 1, 1], pads))
    else:
        emit_ncdhw(ctx, op, lambda x_, out: emit_avg_pool(ctx, op, x_, out, kernel, strides,
                                                          pads, False))


def _axis_last(ctx, op):
    shape = ctx.shape(op.inputs[0])
    return -1 if shape is None else len(shape) - 1


@tf_mapper("Softmax")
def softmax(ctx, op):
    """`softmax` over the last axis."""
    ctx.emit("softmax", op.inputs, {"axis": _axis_last(ctx, op)}, outputs=op.outputs)


@tf_mapper("LogSoftmax")
def log_softmax(ctx, op):
    """`log_softmax` over the last axis."""
    ctx.emit("log_softmax", op.inputs, {"axis": _axis_last(ctx, op)}, outputs=op.outputs)


_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Selu": "selu",
          "Softplus": "softplus", "Erf": "erf", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
          "Rsqrt": "rsqrt", "Neg": "neg", "Abs": "abs", "Square": "square", "Sin": "sin",
          "Cos": "cos", "Floor": "floor", "Ceil": "ceil", "Sign": "sign", "IsNan": "isnan",
          "IsInf": "isinf"}


@tf_mapper(*_UNARY)
def unary(ctx, op):
    """the elementwise IR op of the same name."""
    ctx.emit(_UNARY[op.type], op.inputs[:1], outputs=op.outputs)


@tf_mapper("Relu6")
def relu6(ctx, op):
    """`clip(0, 6)`."""
    ctx.emit("clip", op.inputs[:1], {"min": 0.0, "max": 6.0}, outputs=op.outputs)


@tf_mapper("Elu")
def elu(ctx, op):
    """`elu(alpha=1)`."""
    ctx.emit("elu", op.inputs[:1], {"alpha": 1.0}, outputs=op.outputs)


@tf_mapper("LeakyRelu")
def leaky_relu(ctx, op):
    """`leaky_relu(alpha)`."""
    ctx.emit("leaky_relu", op.inputs[:1], {"alpha": float(op.attrs.get("alpha", 0.2))},
             outputs=op.outputs)


@tf_mapper("Gelu")
def gelu(ctx, op):
    """`gelu(approximate)`."""
    ctx.emit("gelu", op.inputs[:1], {"approximate": bool(op.attrs.get("approximate", False))},
             outputs=op.outputs)


@tf_mapper("Swish", "Silu")
def swish(ctx, op):
    """`silu`."""
    ctx.emit("silu", op.inputs[:1], outputs=op.outputs)


@tf_mapper("Erfc")
def erfc(ctx, op):
    """`1 - erf(x)`."""
    erf = ctx.emit("erf", op.inputs[:1], shape=ctx.shape(op.outputs[0]), hint="erf")
    one = ctx.constant(np.array(1, dtype=ctx.dtype(op.inputs[0])), "one")
    ctx.emit("sub", [one, erf], outputs=op.outputs)


@tf_mapper("LRN")
def lrn(ctx, op):
    """Across-channel LRN (NHWC) as square -> windowed mean over C -> pow -> div."""
    radius = int(op.attrs.get("depth_radius", 5))
    size = 2 * radius + 1
    # TF: x / (bias + alpha * sum(x^2 over the window)) ** beta; alpha is per element
    # of the sum (ONNX divides it by the window size), so the mean is scaled by size.
    emit_lrn(ctx, op, size, float(op.attrs.get("alpha", 1.0)) * size,
             float(op.attrs.get("bias", 1.0)), float(op.attrs.get("beta", 0.5)),
             channels_last=True)


@tf_mapper("ResizeBilinear", "ResizeNearestNeighbor")
def resize(ctx, op):
    """`resize` (bilinear: half_pixel_centers / align_corners / legacy; nearest: legacy,
    and half_pixel_centers where each output size is a whole multiple of the input's)."""
    x, size_value = op.inputs
    size = ctx.require_const(size_value, "the output size").astype(int).tolist()
    align, half = op.attrs.get("align_corners", False), op.attrs.get("half_pixel_centers", False)
    mode = "bilinear" if op.type == "ResizeBilinear" else "nearest"
    coord = "align_corners" if align else ("half_pixel" if half else "asymmetric")
    if mode == "nearest" and coord == "half_pixel":
        # TF takes source pixel floor((i + 0.5) * in / out); for out = k * in that is
        # floor(i / k), the legacy (asymmetric) choice.
        in_hw = spatial(op, list(ctx.shape(x) or [None] * 4))
        if any(i is None or o % i for i, o in zip(in_hw, size)):
            raise ConversionError(
                f"{op.type} '{op.name}': nearest resize with half_pixel_centers (TF2's "
                f"tf.image.resize default) is supported for whole-number upscaling only; "
                f"this one is {in_hw} -> {size}")
        coord = "asymmetric"
    if mode == "nearest" and coord != "asymmetric":
        raise ConversionError(f"{op.type} '{op.name}': nearest with {coord} is not supported "
                              f"(only the legacy mode, as Keras UpSampling2D emits)")
    emit_nchw(ctx, op, "resize", [x], {"size": size, "mode": mode, "coord": coord})
