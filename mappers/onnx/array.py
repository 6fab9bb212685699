"""Shape and data movement: reshape, flatten, transpose, squeeze, gather,
slice, split, pad, concat, expand, casts and shape arithmetic."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import const_ints, norm_axes, rank_of


@onnx_mapper("Concat")
def concat(ctx, op):
    """`concat(axis)`."""
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs["axis"]])[0]
    ctx.emit("concat", [v for v in op.inputs if v], {"axis": axis}, outputs=op.outputs)


@onnx_mapper("Reshape")
def reshape(ctx, op):
    """`reshape` (0 copies a dim unless allowzero); a computed shape becomes `reshape_dynamic`."""
    shape = ctx.const(op.inputs[1])
    if shape is None:
        ctx.emit("reshape_dynamic", op.inputs[:2], outputs=op.outputs)
        return
    shape = [int(d) for d in shape]
    if op.attrs.get("allowzero") and 0 in shape:
        raise ConversionError(f"Reshape '{op.name}': allowzero=1 with a 0 dim is not supported")
    ctx.emit("reshape", op.inputs[:1], {"shape": shape}, outputs=op.outputs)


@onnx_mapper("Flatten")
def flatten(ctx, op):
    """`reshape` to 2-D at `axis`."""
    shape = ctx.shape(op.inputs[0])
    rank = rank_of(ctx, op, op.inputs[0])
    axis = op.attrs.get("axis", 1) % (rank + 1) if rank else 0
    if axis == 0:
        target = [1, -1]
    elif axis == 1:
        target = [0, -1]
    elif all(d is not None for d in shape[:axis]):
        target = [int(np.prod(shape[:axis])), -1]
    elif all(d is not None for d in shape[axis:]):
        target = [-1, int(np.prod(shape[axis:]))]
    else:
        raise ConversionError(f"Flatten '{op.name}': needs static dims on one side of axis "
                              f"{axis}")
    ctx.emit("reshape", op.inputs[:1], {"shape": target}, outputs=op.outputs)


@onnx_mapper("Transpose")
def transpose(ctx, op):
    """`transpose(perm)` (default: reverse the axes)."""
    perm = op.attrs.get("perm") or list(range(rank_of(ctx, op, op.inputs[0])))[::-1]
    ctx.emit("transpose", op.inputs[:1], {"perm": list(perm)}, outputs=op.outputs)


def _axes(ctx, op, out_rank_of):
    version = ctx.source.version
    axes = op.attrs.get("axes") if version < 13 else const_ints(ctx, op, 1, "the axes")
    return axes


@onnx_mapper("Squeeze")
def squeeze(ctx, op):
    """`squeeze(axes)`; axes from the attribute (< 13) or input (>= 13), or every 1-dim."""
    axes = _axes(ctx, op, None)
    shape = ctx.shape(op.inputs[0])
    if axes is None:
        if shape is None or any(d is None for d in shape):
            raise ConversionError(f"Squeeze '{op.name}': no axes and unknown dims")
        axes = [i for i, d in enumerate(shape) if d == 1]
    ctx.emit("squeeze", op.inputs[:1], {"axes": norm_axes(ctx, op, op.inputs[0], axes)},
             outputs=op.outputs)


@onnx_mapper("Unsqueeze")
def unsqueeze(ctx, op):
    """`unsqueeze(axes)`; axes from the attribute (< 13) or input (>= 13)."""
    axes = _axes(ctx, op, None)
    ctx.emit("unsqueeze", op.inputs[:1],
             {"axes": norm_axes(ctx, op, op.inputs[0], axes, extra_rank=len(axes))},
             outputs=op.outputs)


@onnx_mapper("Gather")
def gather(ctx, op):
    """`gather(axis)` (numpy.take; negative constant indices wrapped)."""
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs.get("axis", 0)])[0]
    indices = ctx.const(op.inputs[1])
    inputs = list(op.inputs[:2])
    if indices is not None and (indices < 0).any():
        size = ctx.shape(op.inputs[0])[axis]
        if size is None:
            raise ConversionError(f"Gather '{op.name}': negative indices on a dynamic axis")
        inputs[1] = ctx.constant(np.where(indices < 0, indices + size, indices), "indices")
    ctx.emit("gather", inputs, {"axis": axis}, outputs=op.outputs)


def _slice(ctx, op, starts, ends, axes, steps):
    if axes is None:
        axes = list(range(len(starts)))
    elif any(a < 0 for a in axes):  # keep the order: starts/ends pair with axes by position
        rank = rank_of(ctx, op, op.inputs[0])
        axes = [a % rank for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    big = np.iinfo(np.int64).max
    ends = [min(e, big) for e in ends]
    ctx.emit("slice", op.inputs[:1], {"starts": starts, "ends": ends, "axes": axes,
                                      "steps": steps}, outputs=op.outputs)


@onnx_mapper("Slice", until=10)
def slice_attrs(ctx, op):
    """`slice` from attributes (opset < 10)."""
    _slice(ctx, op, op.attrs["starts"], op.attrs["ends"], op.attrs.get("axes"), None)


@onnx_mapper("Slice", since=10)
def slice_inputs(ctx, op):
    """`slice` from constant inputs (opset >= 10)."""
    _slice(ctx, op, const_ints(ctx, op, 1, "starts"), const_ints(ctx, op, 2, "ends"),
           const_ints(ctx, op, 3, "axes"), const_ints(ctx, op, 4, "steps"))


@onnx_mapper("Split")
def split(ctx, op):
    """`split(axis, sizes)`; sizes from the attribute (< 13), input (>= 13) or
    equal parts (num_outputs, >= 18)."""
    shape = ctx.shape(op.inputs[0])
    rank = rank_of(ctx, op, op.inputs[0])
    axis = op.attrs.get("axis", 0) % rank
    sizes = op.attrs.get("split") if ctx.source.version < 13 else const_ints(ctx, op, 1,
                                                                              "the split sizes")
    parts = len(op.outputs)
    if sizes is None:
        if shape[axis] is None:
            raise ConversionError(f"Split '{op.name}': equal split of a dynamic axis")
        chunk = -(-shape[axis] // parts)
        sizes = [min(chunk, shape[axis] - i * chunk) for i in range(parts)]
    ctx.emit("split", op.inputs[:1], {"axis": axis, "sizes": list(sizes)}, outputs=op.outputs)


@onnx_mapper("Pad", until=11)
def pad_attrs(ctx, op):
    """`pad` from attributes (opset < 11)."""
    ctx.emit("pad", op.inputs[:1], {"pads": list(op.attrs["pads"]),
                                    "mode": op.attrs.get("mode", "constant"),
                                    "value": float(op.attrs.get("value", 0.0))},
             outputs=op.outputs)


@onnx_mapper("Pad", since=11)
def pad_inputs(ctx, op):
    """`pad` from constant inputs (opset >= 11; `axes` from 18)."""
    pads = const_ints(ctx, op, 1, "the pads")
    value = 0.0
    if len(op.inputs) > 2 and op.inputs[2]:
        value = float(ctx.require_const(op.inputs[2], "the pad value"))
    axes = const_ints(ctx, op, 3, "the pad axes")
    if axes is not None:
        rank = rank_of(ctx, op, op.inputs[0])
        full = [0] * (2 * rank)
        for i, axis in enumerate(a % rank for a in axes):
            full[axis], full[axis + rank] = pads[i], pads[i + len(axes)]
        pads = full
    mode = op.attrs.get("mode", "constant")
    if mode not in ("constant", "reflect", "edge"):
        raise ConversionError(f"Pad '{op.name}': mode {mode} is not supported")
    ctx.emit("pad", op.inputs[:1], {"pads": pads, "mode": mode, "value": value},
             outputs=op.outputs)


@onnx_mapper("Expand")
def expand(ctx, op):
    """`expand(shape)` with a constant shape."""
    ctx.emit("expand", op.inputs[:1], {"shape": const_ints(ctx, op, 1, "the shape")},
             outputs=op.outputs)


@onnx_mapper("Cast")
def cast(ctx, op):
    """`cast(dtype)`."""
    from onnx import helper
    dtype = str(np.dtype(helper.tensor_dtype_to_np_dtype(op.attrs["to"])))
    ctx.emit("cast", op.inputs[:1], {"dtype": dtype}, outputs=op.outputs)


@onnx_mapper("Shape")
def shape(ctx, op):
    """`shape` (then `slice` for start/end, opset 15); folded where dims are known."""
    start, end = op.attrs.get("start", 0), op.attrs.get("end")
    if start == 0 and end is None:
        ctx.emit("shape", op.inputs[:1], {"dtype": "int64"}, outputs=op.outputs)
        return
    full = ctx.emit("shape", op.inputs[:1], {"dtype": "int64"}, hint="shape")
    big = np.iinfo(np.int64).max
    ctx.emit("slice", [full], {"starts": [start], "ends": [big if end is None else end],
                               "axes": [0], "steps": [1]}, outputs=op.outputs)


@onnx_mapper("ConstantOfShape")
def constant_of_shape(ctx, op):
    """A constant (the shape input must be constant after folding)."""
    dims = const_ints(ctx, op, 0, "the shape")
    value = op.attrs.get("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    ctx.emit("identity", [ctx.constant(np.full(dims, fill[0], fill.dtype))], outputs=op.outputs)
