"""Convolution, normalization and pooling (NCHW already: no layout change)."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from .._conv import emit_conv, emit_conv_transpose
from .._lrn import emit_lrn
from .._pool import ceil_pads, emit_avg_pool, emit_max_pool

from ._resize import resize_separable
from ._util import SAME_AT_RUN_TIME, choice, positive_ints, rank_of, spatial_pads


@onnx_mapper("Conv")
def conv(ctx, op):
    """`conv2d`; 1-D and 3-D through mappers/_conv.py; auto_pad resolved to explicit pads."""
    weight = ctx.shape(op.inputs[1]) or ctx.require_const(op.inputs[1], "the weight").shape
    kernel = op.attrs.get("kernel_shape") or list(weight[2:])
    rank = len(kernel)
    strides = op.attrs.get("strides", [1] * rank)
    dilations = op.attrs.get("dilations", [1] * rank)
    pads = spatial_pads(ctx, op, kernel, strides, dilations)
    groups = positive_ints(op, "group", [op.attrs.get("group", 1)])[0]
    bias = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] else None
    if pads == SAME_AT_RUN_TIME:
        ctx.emit("conv2d", [op.inputs[0], op.inputs[1]] + ([bias] if bias else []),
                 {"strides": list(strides), "dilations": list(dilations), "pads": [0] * 4,
                  "groups": groups, "auto_pad": SAME_AT_RUN_TIME}, outputs=op.outputs[:1])
        return
    emit_conv(ctx, op, op.inputs[0], op.inputs[1], bias, op.outputs[0], strides, dilations,
              pads, groups)


@onnx_mapper("BatchNormalization")
def batch_norm(ctx, op):
    """`batch_norm` (inference form; training outputs are refused)."""
    if len([o for o in op.outputs if o]) > 1 or op.attrs.get("training_mode"):
        raise ConversionError(f"BatchNormalization '{op.name}' is in training mode")
    if rank_of(ctx, op, op.inputs[0]) != 4:
        raise ConversionError(f"BatchNormalization '{op.name}': only NCHW (rank 4) is supported")
    ctx.emit("batch_norm", op.inputs[:5], {"epsilon": float(op.attrs.get("epsilon", 1e-5))},
             outputs=op.outputs[:1])


def _pool_window(ctx, op):
    """kernel, strides, dilations and pads of a pooling node (ceil_mode as end pads)."""
    if "kernel_shape" not in op.attrs:
        raise ConversionError(f"{op.type} '{op.name}': the required attribute kernel_shape "
                              f"is missing")
    kernel = list(op.attrs["kernel_shape"])
    strides = op.attrs.get("strides", [1] * len(kernel))
    dilations = op.attrs.get("dilations", [1] * len(kernel))
    pads = spatial_pads(ctx, op, kernel, strides, dilations)
    if len([o for o in op.outputs if o]) > 1:
        raise ConversionError(f"{op.type} '{op.name}': the Indices output is not supported")
    if pads == SAME_AT_RUN_TIME:
        if op.attrs.get("ceil_mode") or any(d != 1 for d in dilations):
            raise ConversionError(f"{op.type} '{op.name}': auto_pad=SAME_UPPER with ceil_mode "
                                  f"or dilations needs static spatial sizes (--input-shape)")
        return kernel, strides, dilations, pads
    counts_padding = op.type == "AveragePool" and bool(op.attrs.get("count_include_pad")) \
        and any(pads)
    pads = ceil_pads(ctx, op, op.inputs[0], kernel, strides, dilations, pads,
                     bool(op.attrs.get("ceil_mode")), counts_padding)
    return kernel, strides, dilations, pads


@onnx_mapper("MaxPool")
def max_pool(ctx, op):
    """`max_pool2d`; ceil_mode as end padding; dilated, 1-D and 3-D windows as a maximum
    over strided slices (mappers/_pool.py)."""
    kernel, strides, dilations, pads = _pool_window(ctx, op)
    if pads == SAME_AT_RUN_TIME:
        ctx.emit("max_pool2d", op.inputs[:1], {"kernel": kernel, "strides": list(strides),
                                                "pads": [0] * 4, "auto_pad": pads},
                 outputs=op.outputs[:1])
        return
    emit_max_pool(ctx, op, op.inputs[0], op.outputs[0], kernel, strides, dilations, pads)


@onnx_mapper("AveragePool")
def average_pool(ctx, op):
    """`avg_pool2d` (count_include_pad kept; 1-D through a unit height, 3-D as a sum of
    strided slices; dilations refused)."""
    kernel, strides, dilations, pads = _pool_window(ctx, op)
    if any(d != 1 for d in dilations):
        raise ConversionError(f"AveragePool '{op.name}': dilated average pooling is not "
                              f"supported")
    if pads == SAME_AT_RUN_TIME:
        if op.attrs.get("count_include_pad"):
            raise ConversionError(f"AveragePool '{op.name}': auto_pad=SAME_UPPER counting "
                                  f"the padding (count_include_pad) over sizes known only at "
                                  f"run time is not supported; give them with --input-shape")
        ctx.emit("avg_pool2d", op.inputs[:1], {"kernel": kernel, "strides": list(strides),
                                                "pads": [0] * 4, "auto_pad": pads},
                 outputs=op.outputs[:1])
        return
    emit_avg_pool(ctx, op, op.inputs[0], op.outputs[0], kernel, strides, pads,
                  bool(op.attrs.get("count_include_pad")) and any(pads))


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
    emit_lrn(ctx, op, int(op.attrs["size"]), float(op.attrs.get("alpha", 1e-4)),
             float(op.attrs.get("bias", 1.0)), float(op.attrs.get("beta", 0.75)),
             channels_last=False)


@onnx_mapper("ConvTranspose")
def conv_transpose(ctx, op):
    """`conv_transpose2d` (1-D and 2-D, group 1, dilation 1; output_padding folded into
    the crop)."""
    weight = ctx.require_const(op.inputs[1], "the weight")
    kernel = op.attrs.get("kernel_shape") or list(weight.shape[2:])
    rank = len(kernel)
    if op.attrs.get("group", 1) != 1 or any(d != 1 for d in op.attrs.get("dilations",
                                                                          [1] * rank)):
        raise ConversionError(f"ConvTranspose '{op.name}': groups and dilation are not "
                              f"supported (group={op.attrs.get('group', 1)})")
    if op.attrs.get("output_shape"):
        raise ConversionError(f"ConvTranspose '{op.name}': output_shape is not supported; "
                              f"export with pads/output_padding")
    choice(op, "auto_pad", "NOTSET", ("NOTSET", "VALID"))
    strides = positive_ints(op, "strides", op.attrs.get("strides", [1] * rank))
    pads = list(op.attrs.get("pads", [0] * (2 * rank)))
    extra = op.attrs.get("output_padding", [0] * rank)
    # output_padding adds rows/columns at the end of the full output, i.e. crops less there.
    crop = pads[:rank] + [p - e for p, e in zip(pads[rank:], extra)]
    bias = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] else None
    emit_conv_transpose(ctx, op, op.inputs[0], op.inputs[1], bias, op.outputs[0], strides, crop)


_RESIZE_COORDS = {"half_pixel": "half_pixel", "pytorch_half_pixel": "half_pixel",
                  "align_corners": "align_corners", "asymmetric": "asymmetric"}
_RESIZE_MODES = ("nearest", "linear", "bilinear")
_NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _resize(ctx, op, mode: str, coord: str, scales, sizes):
    mode = choice(op, "mode", "nearest", _RESIZE_MODES if op.type == "Upsample"
                  else _RESIZE_MODES[:2])
    if op.type == "Resize":
        coord = choice(op, "coordinate_transformation_mode", coord, tuple(_RESIZE_COORDS))
        choice(op, "nearest_mode", "round_prefer_floor", _NEAREST_MODES)
        choice(op, "keep_aspect_ratio_policy", "stretch", ("stretch",))
        if op.attrs.get("antialias"):
            raise ConversionError(f"Resize '{op.name}': antialias=1 is not supported")
        if op.attrs.get("axes") is not None:
            raise ConversionError(f"Resize '{op.name}': the axes attribute is not supported "
                                  f"(scales/sizes over all 4 axes are)")
    shape = ctx.shape(op.inputs[0])
    if shape is None or len(shape) != 4:
        raise ConversionError(f"{op.type} '{op.name}': only NCHW (rank 4) input is supported")
    if sizes is not None and len(sizes):
        if len(sizes) != 4 or any(int(s) < 1 for s in sizes):
            raise ConversionError(f"{op.type} '{op.name}': sizes {sizes} must hold 4 positive "
                                  f"values")
        size = [int(sizes[2]), int(sizes[3])]
    else:
        if (shape[2] is None or shape[3] is None) and _repeats(op, mode, coord, scales):
            value, dims = op.inputs[0], list(shape)
            for axis, repeats in ((2, int(scales[2])), (3, int(scales[3]))):
                if repeats > 1:
                    dims[axis] = None if dims[axis] is None else dims[axis] * repeats
                    value = ctx.emit("repeat_interleave", [value],
                                     {"repeats": repeats, "axis": axis}, shape=tuple(dims))
            ctx.alias(op.outputs[0], value)
            return
        if shape[2] is None or shape[3] is None:
            raise ConversionError(f"{op.type} '{op.name}': scales on unknown spatial sizes "
                                  f"are supported for nearest (asymmetric, floor) upsampling "
                                  f"by whole factors; give --input-shape")
        if scales is None or len(scales) != 4 or scales[0] != 1 or scales[1] != 1:
            raise ConversionError(f"{op.type} '{op.name}': only spatial scaling is supported")
        if not all(np.isfinite(s) and s > 0 for s in scales):
            raise ConversionError(f"{op.type} '{op.name}': scales {scales} must be positive")
        size = [int(np.floor(shape[2] * scales[2])), int(np.floor(shape[3] * scales[3]))]
        if any(abs(shape[d] * scales[d] - size[d - 2]) > 1e-6 for d in (2, 3)):
            # ONNX maps coordinates with the scale itself (or the unfloored
            # length), the IR's resize with the ratio of the sizes: they agree
            # only when the scaled sizes are whole numbers.
            raise ConversionError(
                f"{op.type} '{op.name}': scales {scales} on spatial sizes {shape[2:]} give "
                f"fractional output sizes; only scales that give whole sizes are supported")
    if mode == "nearest":
        nearest_mode = op.attrs.get("nearest_mode", "round_prefer_floor")
        if coord != "asymmetric" or (op.type == "Resize" and nearest_mode != "floor"):
            raise ConversionError(
                f"{op.type} '{op.name}': nearest resize is supported with asymmetric "
                f"coordinates and floor rounding (what PyTorch and Keras export); this one "
                f"uses {coord} / {nearest_mode}")
        ir_mode = "nearest"
    elif mode in ("linear", "bilinear"):
        ir_mode = "bilinear"
    else:
        raise ConversionError(f"{op.type} '{op.name}': mode {mode} is not supported "
                              f"(nearest, linear are)")
    if coord == "pytorch_half_pixel" and any(o == 1 and i != 1
                                             for o, i in zip(size, shape[2:])):
        # pytorch_half_pixel samples coordinate 0 for a length-1 output, half_pixel the middle.
        raise ConversionError(f"{op.type} '{op.name}': pytorch_half_pixel with an output "
                              f"size of 1 is not supported")
    if coord not in _RESIZE_COORDS:
        raise ConversionError(f"{op.type} '{op.name}': coordinate_transformation_mode "
                              f"{coord} is not supported")
    ctx.emit("resize", op.inputs[:1], {"size": size, "mode": ir_mode,
                                       "coord": _RESIZE_COORDS[coord]}, outputs=op.outputs)


def _optional_const(ctx, op, index):
    if len(op.inputs) <= index or not op.inputs[index]:
        return None
    value = ctx.require_const(op.inputs[index], "the resize scales/sizes")
    return None if value.size == 0 else value.reshape(-1).tolist()


def _repeats(op, mode: str, coord: str, scales) -> bool:
    """Nearest upsampling by whole spatial factors that maps each output pixel
    to floor(i / k): every input pixel k times, whatever the size."""
    nearest_mode = op.attrs.get("nearest_mode", "round_prefer_floor") \
        if op.type == "Resize" else "floor"
    return (mode == "nearest" and coord == "asymmetric" and nearest_mode == "floor"
            and scales is not None and len(scales) == 4 and list(scales[:2]) == [1, 1]
            and all(float(s).is_integer() and s >= 1 for s in scales[2:]))


@onnx_mapper("Resize", since=11)
def resize(ctx, op):
    """`resize` where it fits (rank 4; nearest: asymmetric+floor; linear: half_pixel /
    align_corners / asymmetric); any other Resize per axis as the spec computes it:
    `gather` (nearest) or `matmul` with constant weights (linear, cubic, antialias),
    `where` for tf_crop_and_resize's extrapolation (mappers/onnx/_resize.py)."""
    scales, sizes = _optional_const(ctx, op, 2), _optional_const(ctx, op, 3)
    try:
        _resize(ctx, op, op.attrs.get("mode", "nearest"),
                op.attrs.get("coordinate_transformation_mode", "half_pixel"), scales, sizes)
    except ConversionError:
        # Not F.interpolate's: the separable form refuses what it cannot compute exactly.
        crop = op.attrs.get("coordinate_transformation_mode") == "tf_crop_and_resize"
        roi = _optional_const(ctx, op, 1) if crop else None
        resize_separable(ctx, op, roi, scales, sizes)


@onnx_mapper("Resize", since=10, until=11)
def resize_v10(ctx, op):
    """`resize` from Resize-10 (scales input, asymmetric coordinates)."""
    _resize(ctx, op, op.attrs.get("mode", "nearest"), "asymmetric",
            _optional_const(ctx, op, 1), None)


@onnx_mapper("Upsample", until=10)
def upsample(ctx, op):
    """`resize` from Upsample (scales attribute before opset 9, input from 9)."""
    scales = op.attrs.get("scales") or _optional_const(ctx, op, 1)
    _resize(ctx, op, op.attrs.get("mode", "nearest"), "asymmetric", scales, None)
