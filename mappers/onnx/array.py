"""Shape and data movement: reshape, flatten, transpose, squeeze, gather,
slice, split, pad, concat, expand, casts and shape arithmetic."""
from __future__ import annotations

import math

import numpy as np

from x2.errors import ConversionError
from x2.ir.bounds import MAX_FOLD_ELEMENTS, MAX_TENSOR_BYTES
from x2.registry import onnx_mapper

from ._util import check_axis, choice, const_ints, norm_axes, rank_of


@onnx_mapper("Concat")
def concat(ctx, op):
    """`concat(axis)`."""
    if "axis" not in op.attrs:
        raise ConversionError(f"Concat '{op.name}': the required attribute axis is missing")
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs["axis"]])[0]
    ctx.emit("concat", [v for v in op.inputs if v], {"axis": axis}, outputs=op.outputs)


@onnx_mapper("Reshape")
def reshape(ctx, op):
    """`reshape` (0 copies a dim unless allowzero); a computed shape becomes `reshape_dynamic`."""
    shape = ctx.const(op.inputs[1])
    if shape is None:
        target = op.inputs[1]
        if not op.attrs.get("allowzero"):
            target = _copy_zero_dims(ctx, op)
        ctx.emit("reshape_dynamic", [op.inputs[0], target], outputs=op.outputs)
        return
    shape = [int(d) for d in np.asarray(shape).reshape(-1)]
    if op.attrs.get("allowzero") and 0 in shape:
        raise ConversionError(f"Reshape '{op.name}': allowzero=1 with a 0 dim is not supported")
    _check_reshape(op, ctx.shape(op.inputs[0]), shape)
    ctx.emit("reshape", op.inputs[:1], {"shape": shape}, outputs=op.outputs)


def _copy_zero_dims(ctx, op) -> str:
    """A runtime target shape with ONNX's 0 = "copy the input's dim there":
    where(target == 0, shape(x)[:n], target)."""
    length = (ctx.shape(op.inputs[1]) or [None])[0]
    rank = len(ctx.shape(op.inputs[0]) or []) if ctx.shape(op.inputs[0]) is not None else None
    if length is None or rank is None:
        return op.inputs[1]  # as computed (models compute their shapes without 0s)
    target = ctx.emit("cast", [op.inputs[1]], {"dtype": "int64"}, dtype="int64")
    dims = ctx.emit("shape", [op.inputs[0]], {"dtype": "int64"}, dtype="int64", shape=(rank,))
    if length > rank:  # a 0 past the input's rank stays 0 (an empty dim)
        dims = ctx.emit("concat", [dims, ctx.constant(np.zeros(length - rank, np.int64))],
                        {"axis": 0}, dtype="int64", shape=(length,))
    elif length < rank:
        dims = ctx.emit("slice", [dims], {"starts": [0], "ends": [length], "axes": [0],
                                          "steps": [1]}, dtype="int64", shape=(length,))
    zero = ctx.emit("equal", [target, ctx.constant(np.array(0, np.int64), "zero")],
                    dtype="bool", shape=(length,))
    return ctx.emit("where", [zero, dims, target], dtype="int64", shape=(length,))


def _check_reshape(op, in_shape, shape: list[int]) -> None:
    """ONNX's rules for a Reshape target (at most one -1, no other negative dim,
    0 copies an existing dim) and, where the input's size is known, that the
    target holds exactly as many elements."""
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise ConversionError(f"Reshape '{op.name}': target shape {shape} is invalid (at "
                              f"most one -1 and no other negative dimension)")
    if in_shape is None:
        return
    if any(d == 0 and i >= len(in_shape) for i, d in enumerate(shape)):
        raise ConversionError(f"Reshape '{op.name}': target shape {shape} copies (0) a "
                              f"dimension the rank-{len(in_shape)} input does not have")
    dims = [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]
    if any(d is None for d in in_shape):
        # Dynamic input: only the known dims it keeps can be checked.
        return
    total = math.prod(in_shape)
    known = math.prod(d for d in dims if d != -1)
    fits = total == known if -1 not in dims else (known > 0 and total % known == 0) or (
        known == 0 and total == 0)
    if not fits:
        raise ConversionError(f"Reshape '{op.name}': cannot reshape a tensor of shape "
                              f"{list(in_shape)} ({total} elements) to {shape}")


@onnx_mapper("Flatten")
def flatten(ctx, op):
    """`reshape` to 2-D at `axis`."""
    shape = ctx.shape(op.inputs[0])
    rank = rank_of(ctx, op, op.inputs[0])
    # axis is in [-rank, rank]: a negative one counts from rank, not rank + 1.
    axis = op.attrs.get("axis", 1)
    axis = check_axis(op, axis + rank if axis < 0 else axis, rank + 1) if rank else 0
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
    shape = ctx.shape(op.inputs[0])
    if sorted(perm) != list(range(len(perm))) or (shape is not None and len(perm) != len(shape)):
        raise ConversionError(f"Transpose '{op.name}': perm {list(perm)} is not a permutation "
                              f"of the input's {len(shape) if shape else len(perm)} axes")
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
    axes = norm_axes(ctx, op, op.inputs[0], axes)
    if shape is not None and any(shape[a] not in (1, None) for a in axes):
        raise ConversionError(f"Squeeze '{op.name}': axes {axes} of a tensor of shape "
                              f"{list(shape)} are not all of size 1")
    ctx.emit("squeeze", op.inputs[:1], {"axes": norm_axes(ctx, op, op.inputs[0], axes)},
             outputs=op.outputs)


@onnx_mapper("Unsqueeze")
def unsqueeze(ctx, op):
    """`unsqueeze(axes)`; axes from the attribute (< 13) or input (>= 13)."""
    axes = _axes(ctx, op, None)
    if axes is None:
        raise ConversionError(f"Unsqueeze '{op.name}': no axes given")
    ctx.emit("unsqueeze", op.inputs[:1],
             {"axes": norm_axes(ctx, op, op.inputs[0], axes, extra_rank=len(axes))},
             outputs=op.outputs)


@onnx_mapper("Gather")
def gather(ctx, op):
    """`gather(axis)` (numpy.take; negative constant indices wrapped)."""
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs.get("axis", 0)])[0]
    indices = ctx.const(op.inputs[1])
    inputs = list(op.inputs[:2])
    size = None if ctx.shape(op.inputs[0]) is None else ctx.shape(op.inputs[0])[axis]
    if indices is not None and size is not None and indices.size and (
            indices.min() < -size or indices.max() >= size):
        raise ConversionError(f"Gather '{op.name}': constant indices {indices.min()}.."
                              f"{indices.max()} are out of range for an axis of size {size}")
    if indices is not None and (indices < 0).any():
        if size is None:
            raise ConversionError(f"Gather '{op.name}': negative indices on a dynamic axis")
        inputs[1] = ctx.constant(np.where(indices < 0, indices + size, indices), "indices")
    ctx.emit("gather", inputs, {"axis": axis}, outputs=op.outputs)


@onnx_mapper("GatherElements")
def gather_elements(ctx, op):
    """`gather_elements(axis)` (numpy.take_along_axis; negative constant indices wrapped)."""
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs.get("axis", 0)])[0]
    indices = _wrapped_indices(ctx, op, op.inputs[1], op.inputs[0], axis)
    ctx.emit("gather_elements", [op.inputs[0], indices], {"axis": axis}, outputs=op.outputs)


def _wrapped_indices(ctx, op, indices: str, data: str, axis: int) -> str:
    """`indices` into `axis` of `data` with negative ones counted from the end,
    as ONNX's *Elements ops take them: wrapped now if constant, else by a
    `where` in the graph (which needs the axis's size)."""
    const = ctx.const(indices)
    size = (ctx.shape(data) or [None] * (axis + 1))[axis]
    if const is not None and not (const < 0).any():
        return indices
    if size is None:
        raise ConversionError(f"{op.type} '{op.name}': "
                              f"{'negative' if const is not None else 'runtime'} indices on a "
                              f"dynamic axis (they may be negative)")
    if const is not None:
        return ctx.constant(np.where(const < 0, const + size, const), "indices")
    dtype = ctx.dtype(indices) or "int64"
    negative = ctx.emit("less", [indices, ctx.constant(np.array(0, dtype), "zero")],
                        dtype="bool")
    wrapped = ctx.emit("add", [indices, ctx.constant(np.array(size, dtype), "size")],
                       dtype=dtype)
    return ctx.emit("where", [negative, wrapped, indices], dtype=dtype)


_SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _scatter_elements(ctx, op, reduction: str) -> None:
    data, indices, updates = op.inputs[:3]
    axis = norm_axes(ctx, op, data, [op.attrs.get("axis", 0)])[0]
    shapes = ctx.shape(indices), ctx.shape(updates)
    if None not in shapes and (len(shapes[0]) != len(shapes[1]) or any(
            a is not None and b is not None and a != b for a, b in zip(*shapes))):
        raise ConversionError(f"{op.type} '{op.name}': indices {list(ctx.shape(indices))} and "
                              f"updates {list(ctx.shape(updates))} must have one shape")
    indices = _wrapped_indices(ctx, op, indices, data, axis)
    ctx.emit("scatter_elements", [data, indices, updates],
             {"axis": axis, "reduction": reduction}, outputs=op.outputs)


@onnx_mapper("Scatter", since=9, until=11)
def scatter(ctx, op):
    """`scatter_elements(axis)` (ScatterElements' old name, opsets 9-10)."""
    _scatter_elements(ctx, op, "none")


@onnx_mapper("ScatterElements", since=11)
def scatter_elements(ctx, op):
    """`scatter_elements(axis, reduction)`: reduction none/add/mul (opset 16),
    max/min (opset 18); negative indices count from the end."""
    _scatter_elements(ctx, op, choice(op, "reduction", "none", _SCATTER_REDUCTIONS))


@onnx_mapper("ScatterND", since=11)
def scatter_nd(ctx, op):
    """`scatter_elements` on axis 0 of data seen as [rows, width] (rows: the
    dims the index tuples address), at each tuple's row-major row (`mod` by the
    dims wraps negative components, then `mul` by the strides and `reduce_sum`),
    `expand`ed over the width; reduction none/add/mul (opset 16), max/min (18)."""
    reduction = choice(op, "reduction", "none", _SCATTER_REDUCTIONS)
    data, indices, updates = op.inputs[:3]
    shape, idx_shape = ctx.shape(data), ctx.shape(indices)
    if shape is None or idx_shape is None or None in shape or None in idx_shape or \
            not idx_shape:
        raise ConversionError(f"ScatterND '{op.name}': the shapes of data and indices must be "
                              f"known (run onnx shape inference or give --input-shape)")
    shape, idx_shape = list(shape), list(idx_shape)
    k = idx_shape[-1]
    if not 1 <= k <= len(shape):
        raise ConversionError(f"ScatterND '{op.name}': index tuples of {k} components do not "
                              f"fit data of rank {len(shape)}")
    n, rows, width = math.prod(idx_shape[:-1]), math.prod(shape[:k]), math.prod(shape[k:])
    if ctx.shape(updates) is not None and \
            list(ctx.shape(updates)) != idx_shape[:-1] + shape[k:]:
        raise ConversionError(f"ScatterND '{op.name}': updates {list(ctx.shape(updates))} do "
                              f"not have the shape indices[:-1] + data[k:] "
                              f"({idx_shape[:-1] + shape[k:]})")
    dtype = ctx.dtype(indices) or "int64"
    dims = ctx.constant(np.array(shape[:k], dtype), "dims")
    strides = ctx.constant(np.array([math.prod(shape[i + 1:k]) for i in range(k)], dtype),
                           "strides")
    wrapped = ctx.emit("mod", [indices, dims], dtype=dtype, shape=tuple(idx_shape))
    offsets = ctx.emit("mul", [wrapped, strides], dtype=dtype, shape=tuple(idx_shape))
    row = ctx.emit("reduce_sum", [offsets], {"axes": [len(idx_shape) - 1], "keepdims": False},
                   dtype=dtype, shape=tuple(idx_shape[:-1]))
    row = ctx.emit("reshape", [row], {"shape": [n, 1]}, dtype=dtype, shape=(n, 1))
    row = ctx.emit("expand", [row], {"shape": [n, width]}, dtype=dtype, shape=(n, width))
    flat = ctx.emit("reshape", [data], {"shape": [rows, width]}, shape=(rows, width),
                    hint="rows")
    flat_updates = ctx.emit("reshape", [updates], {"shape": [n, width]}, shape=(n, width),
                            hint="updates")
    written = ctx.emit("scatter_elements", [flat, row, flat_updates],
                       {"axis": 0, "reduction": reduction}, shape=(rows, width), hint="written")
    ctx.emit("reshape", [written], {"shape": shape}, outputs=op.outputs)


@onnx_mapper("GatherND", since=11)
def gather_nd(ctx, op):
    """`gather_nd(batch_dims)` (negative indices count from the end).

    Constant indices are checked against the data's dims."""
    x_shape, idx_shape = ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1])
    if x_shape is None or idx_shape is None or not idx_shape or idx_shape[-1] is None:
        raise ConversionError(f"GatherND '{op.name}': the ranks of data and indices and the "
                              f"last dim of indices must be known (run onnx shape inference "
                              f"or give --input-shape)")
    b, depth = op.attrs.get("batch_dims", 0), idx_shape[-1]
    if not isinstance(b, int) or not 0 <= b < min(len(x_shape), len(idx_shape)) or \
            not 1 <= depth <= len(x_shape) - b:
        raise ConversionError(f"GatherND '{op.name}': batch_dims={b} and an index depth of "
                              f"{depth} do not fit data of rank {len(x_shape)} and indices "
                              f"of rank {len(idx_shape)}")
    if any(p is not None and q is not None and p != q
           for p, q in zip(x_shape[:b], idx_shape[:b])):
        raise ConversionError(f"GatherND '{op.name}': the {b} batch dims of data "
                              f"{list(x_shape)} and indices {list(idx_shape)} differ")
    indices = ctx.const(op.inputs[1])
    if indices is not None and indices.size:
        for i, size in enumerate(x_shape[b:b + depth]):
            column = indices[..., i]
            if size is not None and (column.min() < -size or column.max() >= size):
                raise ConversionError(f"GatherND '{op.name}': constant indices "
                                      f"{column.min()}..{column.max()} are out of range for "
                                      f"axis {b + i} of size {size}")
    ctx.emit("gather_nd", op.inputs[:2], {"batch_dims": b}, outputs=op.outputs)


def _slice(ctx, op, starts, ends, axes, steps):
    if starts is None or ends is None or len(starts) != len(ends):
        raise ConversionError(f"Slice '{op.name}': starts and ends must be given with one "
                              f"value per sliced axis")
    axes, steps = _slice_axes(ctx, op, len(starts), axes, steps)
    big = np.iinfo(np.int64).max
    ends = [min(e, big) for e in ends]
    ctx.emit("slice", op.inputs[:1], {"starts": starts, "ends": ends, "axes": axes,
                                      "steps": steps}, outputs=op.outputs)


def _slice_axes(ctx, op, count: int, axes, steps) -> tuple[list[int], list[int]]:
    """The sliced axes (non-negative) and steps of a Slice with `count` starts."""
    if axes is None:
        axes = list(range(count))
    elif any(a < 0 for a in axes):  # keep the order: starts/ends pair with axes by position
        rank = rank_of(ctx, op, op.inputs[0])
        axes = [check_axis(op, a, rank) for a in axes]
    steps = [1] * count if steps is None else steps
    if len(axes) != count or len(steps) != count or 0 in steps:
        raise ConversionError(f"Slice '{op.name}': axes {list(axes)} and steps {list(steps)} "
                              f"must pair with the {count} starts, and no step may be 0")
    return list(axes), list(steps)


@onnx_mapper("Slice", until=10)
def slice_attrs(ctx, op):
    """`slice` from attributes (opset < 10)."""
    _slice(ctx, op, op.attrs["starts"], op.attrs["ends"], op.attrs.get("axes"), None)


@onnx_mapper("Slice", since=10)
def slice_inputs(ctx, op):
    """`slice` from constant inputs (opset >= 10); starts/ends computed by the
    graph (a length read from a dynamic shape) make `slice_dynamic`."""
    axes, steps = const_ints(ctx, op, 3, "axes"), const_ints(ctx, op, 4, "steps")
    if ctx.const(op.inputs[1]) is not None and ctx.const(op.inputs[2]) is not None:
        _slice(ctx, op, const_ints(ctx, op, 1, "starts"), const_ints(ctx, op, 2, "ends"),
               axes, steps)
        return
    count = _length(ctx, op, op.inputs[1]) or _length(ctx, op, op.inputs[2])
    if count is None:
        raise ConversionError(f"Slice '{op.name}': the number of sliced axes is unknown "
                              f"(starts and ends are computed and their length is not known)")
    axes, steps = _slice_axes(ctx, op, count, axes, steps)
    bounds = [_as_int64_vector(ctx, v, count) for v in op.inputs[1:3]]
    ctx.emit("slice_dynamic", [op.inputs[0], *bounds], {"axes": axes, "steps": steps},
             outputs=op.outputs)


def _length(ctx, op, value: str) -> int | None:
    """The length of a 1-D integer input (None: unknown)."""
    shape = ctx.shape(value)
    if shape is None:
        return None
    if len(shape) != 1:
        raise ConversionError(f"{op.type} '{op.name}': '{value}' must be 1-D, its shape is "
                              f"{list(shape)}")
    return shape[0]


def _as_int64_vector(ctx, value: str, length: int) -> str:
    array = ctx.const(value)
    if array is not None:
        return ctx.constant(np.asarray(array).astype(np.int64).reshape(-1), "bound")
    if ctx.dtype(value) == "int64":
        return value
    return ctx.emit("cast", [value], {"dtype": "int64"}, dtype="int64", shape=(length,))


@onnx_mapper("Split")
def split(ctx, op):
    """`split(axis, sizes)`; sizes from the attribute (< 13), input (>= 13) or
    equal parts (num_outputs, >= 18)."""
    shape = ctx.shape(op.inputs[0])
    rank = rank_of(ctx, op, op.inputs[0])
    axis = check_axis(op, op.attrs.get("axis", 0), rank)
    sizes = op.attrs.get("split") if ctx.source.version < 13 else const_ints(ctx, op, 1,
                                                                              "the split sizes")
    parts = len(op.outputs)
    if sizes is None:
        if shape[axis] is None:
            raise ConversionError(f"Split '{op.name}': equal split of a dynamic axis")
        chunk = -(-shape[axis] // parts)
        sizes = [min(chunk, shape[axis] - i * chunk) for i in range(parts)]
    if len(sizes) != parts or any(s < 0 for s in sizes) or (
            shape[axis] is not None and sum(sizes) != shape[axis]):
        raise ConversionError(f"Split '{op.name}': sizes {list(sizes)} do not split an axis "
                              f"of size {shape[axis]} into {parts} outputs")
    ctx.emit("split", op.inputs[:1], {"axis": axis, "sizes": list(sizes)}, outputs=op.outputs)


_PAD_MODES = ("constant", "reflect", "edge")


def _check_pads(ctx, op, pads) -> list[int]:
    shape = ctx.shape(op.inputs[0])
    if pads is None or len(pads) % 2 or (shape is not None and len(pads) != 2 * len(shape)):
        raise ConversionError(f"Pad '{op.name}': pads {pads} must hold a begin and an end "
                              f"value for each of the input's axes")
    return [int(p) for p in pads]


@onnx_mapper("Pad", until=11)
def pad_attrs(ctx, op):
    """`pad` from attributes (opset < 11)."""
    mode = choice(op, "mode", "constant", _PAD_MODES)
    pads = _check_pads(ctx, op, op.attrs.get("pads"))
    ctx.emit("pad", op.inputs[:1], {"pads": pads, "mode": mode,
                                    "value": float(op.attrs.get("value", 0.0))},
             outputs=op.outputs)


@onnx_mapper("Pad", since=11)
def pad_inputs(ctx, op):
    """`pad` from constant inputs (opset >= 11; `axes` from 18)."""
    mode = choice(op, "mode", "constant", _PAD_MODES)
    pads = const_ints(ctx, op, 1, "the pads")
    value = 0.0
    if len(op.inputs) > 2 and op.inputs[2]:
        value = float(ctx.require_const(op.inputs[2], "the pad value"))
    axes = const_ints(ctx, op, 3, "the pad axes")
    if axes is not None:
        rank = rank_of(ctx, op, op.inputs[0])
        if pads is None or len(pads) != 2 * len(axes):
            raise ConversionError(f"Pad '{op.name}': pads {pads} must hold a begin and an end "
                                  f"value for each of the axes {axes}")
        full = [0] * (2 * rank)
        for i, axis in enumerate(check_axis(op, a, rank) for a in axes):
            full[axis], full[axis + rank] = pads[i], pads[i + len(axes)]
        pads = full
    pads = _check_pads(ctx, op, pads)
    ctx.emit("pad", op.inputs[:1], {"pads": pads, "mode": mode, "value": value},
             outputs=op.outputs)


@onnx_mapper("Expand")
def expand(ctx, op):
    """`expand(shape)` with a constant shape; a computed one makes `expand_dynamic`."""
    if ctx.const(op.inputs[1]) is None:
        length, in_shape = _length(ctx, op, op.inputs[1]), ctx.shape(op.inputs[0])
        if length is None or in_shape is None:
            raise ConversionError(f"Expand '{op.name}': the rank of the computed target "
                                  f"shape or of the input is unknown")
        x, target = op.inputs[0], _as_int64_vector(ctx, op.inputs[1], length)
        if length > len(in_shape):  # the same broadcast, with ranks made equal
            x = ctx.emit("unsqueeze", [x], {"axes": list(range(length - len(in_shape)))},
                         shape=(1,) * (length - len(in_shape)) + tuple(in_shape))
        elif length < len(in_shape):
            ones = ctx.constant(np.ones(len(in_shape) - length, np.int64), "ones")
            target = ctx.emit("concat", [ones, target], {"axis": 0}, dtype="int64",
                              shape=(len(in_shape),))
        ctx.emit("expand_dynamic", [x, target], outputs=op.outputs)
        return
    shape = const_ints(ctx, op, 1, "the shape")
    if shape is None or any(d < 0 for d in shape):
        raise ConversionError(f"Expand '{op.name}': target shape {shape} must hold "
                              f"non-negative dimensions")
    in_shape = ctx.shape(op.inputs[0])
    if in_shape is not None:
        rank = max(len(in_shape), len(shape))
        a = (1,) * (rank - len(in_shape)) + tuple(in_shape)
        b = (1,) * (rank - len(shape)) + tuple(shape)
        if any(x is not None and x != 1 and y != 1 and x != y for x, y in zip(a, b)):
            raise ConversionError(f"Expand '{op.name}': a tensor of shape {list(in_shape)} "
                                  f"cannot be broadcast to {shape}")
        out = [y if x is None else max(x, y) if 0 not in (x, y) else 0 for x, y in zip(a, b)]
        _check_size(ctx, op, [d for d in out], ctx.dtype(op.inputs[0]))
    ctx.emit("expand", op.inputs[:1], {"shape": shape}, outputs=op.outputs)


def _check_size(ctx, op, dims: list, dtype) -> None:
    """A static output no runtime could hold is refused, not converted."""
    if any(d is None for d in dims):
        return
    size = math.prod(dims) * np.dtype(dtype).itemsize
    if size > MAX_TENSOR_BYTES:
        raise ConversionError(f"{op.type} '{op.name}': its output of shape {list(dims)} "
                              f"({dtype}) would take {size / 2 ** 40:.2f} TiB; no runtime "
                              f"can hold it")


# x2's IR types that numpy holds (bfloat16 is the precision pass's, not a Cast's).
_TARGET_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64"}


@onnx_mapper("Cast")
def cast(ctx, op):
    """`cast(dtype)`."""
    from onnx import TensorProto, helper
    to = op.attrs.get("to")
    try:
        if to in (None, TensorProto.UNDEFINED, TensorProto.STRING):
            raise KeyError(to)
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(to))
    except (KeyError, TypeError, ValueError):
        raise ConversionError(f"Cast '{op.name}': attribute to={to!r} is not a numeric ONNX "
                              f"element type") from None
    if dtype.kind not in "biuf" or dtype.itemsize * 8 not in (8, 16, 32, 64) or \
            dtype.name not in _TARGET_DTYPES:
        raise ConversionError(f"Cast '{op.name}': to {TensorProto.DataType.Name(to)}, a type "
                              f"x2's IR does not hold (x2 converts bool, int8-64, uint8-64 and "
                              f"float16/32/64)")
    dtype = dtype.name
    ctx.emit("cast", op.inputs[:1], {"dtype": dtype}, outputs=op.outputs)


@onnx_mapper("Shape")
def shape(ctx, op):
    """`shape` (then `slice` for start/end, opset 15); folded where dims are known."""
    start, end = op.attrs.get("start", 0), op.attrs.get("end")
    if start == 0 and end is None:
        ctx.emit("shape", op.inputs[:1], {"dtype": "int64"}, outputs=op.outputs)
        return
    shape = ctx.shape(op.inputs[0])
    full = ctx.emit("shape", op.inputs[:1], {"dtype": "int64"}, hint="shape", dtype="int64",
                    shape=None if shape is None else (len(shape),))
    big = np.iinfo(np.int64).max
    ctx.emit("slice", [full], {"starts": [start], "ends": [big if end is None else end],
                               "axes": [0], "steps": [1]}, outputs=op.outputs)


@onnx_mapper("ConstantOfShape")
def constant_of_shape(ctx, op):
    """A constant where the shape is known; `full` of a computed shape."""
    value = op.attrs.get("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    if ctx.const(op.inputs[0]) is None:
        if fill.size != 1:
            raise ConversionError(f"ConstantOfShape '{op.name}': attribute value must hold "
                                  f"one element, it holds {fill.size}")
        ctx.emit("full", op.inputs[:1], {"value": fill[0].item(), "dtype": fill.dtype.name},
                 outputs=op.outputs)
        return
    dims = const_ints(ctx, op, 0, "the shape")
    if dims is None or any(d < 0 for d in dims):
        raise ConversionError(f"ConstantOfShape '{op.name}': shape {dims} must hold "
                              f"non-negative dimensions")
    value = op.attrs.get("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    if fill.size != 1:
        raise ConversionError(f"ConstantOfShape '{op.name}': attribute value must hold one "
                              f"element, it holds {fill.size}")
    _check_size(ctx, op, dims, fill.dtype)
    if math.prod(dims) <= MAX_FOLD_ELEMENTS:
        ctx.emit("identity", [ctx.constant(np.full(dims, fill[0], fill.dtype))],
                 outputs=op.outputs)
        return
    # Too big to store as a weight: the runtime broadcasts the scalar.
    ctx.emit("expand", [ctx.constant(fill.reshape(()), "fill")], {"shape": dims},
             outputs=op.outputs)


@onnx_mapper("Range")
def range_(ctx, op):
    """`range` of scalar start, limit and delta (a constant zero delta is refused)."""
    delta = ctx.const(op.inputs[2])
    if delta is not None and not np.all(np.asarray(delta)):
        raise ConversionError(f"Range '{op.name}': delta is 0, the range would never end")
    bounds = []
    for value in op.inputs[:3]:
        shape = ctx.shape(value)
        if shape is not None and int(np.prod(shape or (1,))) != 1:
            raise ConversionError(f"Range '{op.name}': start, limit and delta must be "
                                  f"scalars; '{value}' has shape {list(shape)}")
        if shape:  # one element of rank 1 (a Split of a shape), which onnxruntime takes
            value = ctx.emit("reshape", [value], {"shape": []}, shape=(), hint="scalar")
        bounds.append(value)
    ctx.emit("range", bounds, outputs=op.outputs)


@onnx_mapper("Size")
def size(ctx, op):
    """The element count: the product of `shape` (folded where the shape is static)."""
    shape = ctx.shape(op.inputs[0])
    if shape is not None and all(isinstance(d, int) for d in shape):
        ctx.emit("identity", [ctx.constant(np.array(math.prod(shape), np.int64), "size")],
                 outputs=op.outputs)
        return
    dims = ctx.emit("shape", op.inputs[:1], {"dtype": "int64"}, hint="shape", dtype="int64",
                    shape=None if shape is None else (len(shape),))
    ctx.emit("reduce_prod", [dims], {"axes": [0], "keepdims": False}, outputs=op.outputs)
