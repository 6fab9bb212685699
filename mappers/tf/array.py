"""Shape and data movement: reshape, squeeze, concat, pad, transpose, casts,
identities, and the shape arithmetic Keras emits around Flatten/Reshape."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import tf_mapper


@tf_mapper("Identity", "StopGradient", "Snapshot", "PreventGradient", "EnsureShape",
           "PlaceholderWithDefault", "CheckNumerics")
def identity(ctx, op):
    """nothing (removed by the cleanup pass)."""
    ctx.alias(op.outputs[0], op.inputs[0])


@tf_mapper("IdentityN")
def identity_n(ctx, op):
    """nothing (each output aliases its input)."""
    for out, value in zip(op.outputs, op.inputs):
        ctx.alias(out, value)


@tf_mapper("Reshape")
def reshape(ctx, op):
    """`reshape`; a computed shape becomes `reshape_dynamic`, folded when possible."""
    x, shape_value = op.inputs
    shape = ctx.const(shape_value)
    if shape is None:
        ctx.emit("reshape_dynamic", [x, shape_value], outputs=op.outputs)
    else:
        ctx.emit("reshape", [x], {"shape": [int(d) for d in shape]}, outputs=op.outputs)


@tf_mapper("Squeeze")
def squeeze(ctx, op):
    """`squeeze`."""
    shape = ctx.shape(op.inputs[0])
    axes = op.attrs.get("squeeze_dims") or [i for i, d in enumerate(shape) if d == 1]
    if any(shape[a] is None for a in axes):
        raise ConversionError(f"Squeeze '{op.name}': axes {axes} have unknown size")
    ctx.emit("squeeze", op.inputs[:1], {"axes": sorted(a % len(shape) for a in axes)},
             outputs=op.outputs)


@tf_mapper("ExpandDims")
def expand_dims(ctx, op):
    """`unsqueeze`."""
    x, axis_value = op.inputs
    axis = int(ctx.require_const(axis_value, "the axis"))
    rank = len(ctx.shape(x)) + 1
    ctx.emit("unsqueeze", [x], {"axes": [axis % rank]}, outputs=op.outputs)


@tf_mapper("ConcatV2")
def concat(ctx, op):
    """`concat`."""
    *values, axis_value = op.inputs
    axis = int(ctx.require_const(axis_value, "the axis"))
    ctx.emit("concat", values, {"axis": axis % len(ctx.shape(op.outputs[0]))},
             outputs=op.outputs)


@tf_mapper("Pack")
def pack(ctx, op):
    """`stack`."""
    rank = len(ctx.shape(op.outputs[0]))
    ctx.emit("stack", op.inputs, {"axis": int(op.attrs.get("axis", 0)) % rank},
             outputs=op.outputs)


@tf_mapper("Pad", "PadV2", "MirrorPad")
def pad(ctx, op):
    """`pad` (constant, or REFLECT MirrorPad)."""
    x, paddings_value = op.inputs[:2]
    paddings = ctx.require_const(paddings_value, "the paddings").astype(int)
    attrs = {"pads": paddings[:, 0].tolist() + paddings[:, 1].tolist(), "mode": "constant"}
    if op.type == "PadV2":
        attrs["value"] = float(ctx.require_const(op.inputs[2], "the pad value"))
    if op.type == "MirrorPad":
        # TF SYMMETRIC repeats the edge; REFLECT does not (numpy/ONNX "reflect").
        mode = op.attrs.get("mode", "REFLECT")
        if mode != "REFLECT":
            raise ConversionError(f"MirrorPad '{op.name}': mode {mode} is not supported "
                                  f"(REFLECT is)")
        attrs["mode"] = "reflect"
    ctx.emit("pad", [x], attrs, outputs=op.outputs)


@tf_mapper("Transpose")
def transpose(ctx, op):
    """`transpose`."""
    x, perm_value = op.inputs
    perm = ctx.require_const(perm_value, "the permutation").astype(int).tolist()
    ctx.emit("transpose", [x], {"perm": perm}, outputs=op.outputs)


@tf_mapper("Cast")
def cast(ctx, op):
    """`cast`."""
    ctx.emit("cast", op.inputs[:1], {"dtype": op.attrs["DstT"]}, outputs=op.outputs)


@tf_mapper("Shape")
def shape(ctx, op):
    """`shape` (folded into constants where dims are known)."""
    ctx.emit("shape", op.inputs[:1], {"dtype": op.attrs.get("out_type", "int32")},
             outputs=op.outputs)


@tf_mapper("StridedSlice")
def strided_slice(ctx, op):
    """`strided_slice` (all masks)."""
    x, begin, end, strides = op.inputs
    attrs = {"begin": ctx.require_const(begin, "begin").astype(int).tolist(),
             "end": ctx.require_const(end, "end").astype(int).tolist(),
             "strides": ctx.require_const(strides, "strides").astype(int).tolist()}
    for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        attrs[mask] = int(op.attrs.get(mask, 0))
    ctx.emit("strided_slice", [x], attrs, outputs=op.outputs)


@tf_mapper("ZerosLike", "OnesLike")
def fill_like(ctx, op):
    """a constant of the input's static shape."""
    shape = ctx.shape(op.inputs[0])
    if shape is None or any(d is None for d in shape):
        raise ConversionError(f"{op.type} '{op.name}' on a tensor of unknown shape")
    fill = np.zeros if op.type == "ZerosLike" else np.ones
    ctx.emit("identity", [ctx.constant(fill(shape, ctx.dtype(op.inputs[0])))], outputs=op.outputs)
