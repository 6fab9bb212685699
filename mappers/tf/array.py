"""Shape and data movement: reshape, squeeze, concat, pad, transpose, casts,
identities, and the shape arithmetic Keras emits around Flatten/Reshape."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import tf_mapper


@tf_mapper("StopGradient", "Snapshot", "PreventGradient", "EnsureShape",
           "PlaceholderWithDefault", "CheckNumerics")
def identity(ctx, op):
    """nothing (removed by the cleanup pass)."""
    ctx.alias(op.outputs[0], op.inputs[0])


@tf_mapper("Identity")
def identity_or_dropout(ctx, op):
    """nothing (removed by the cleanup pass); a Keras Dropout --for training: `dropout(rate)`."""
    rate = ctx.source.dropouts.get(op.name)
    if rate is None:
        ctx.alias(op.outputs[0], op.inputs[0])
    else:
        ctx.emit("dropout", [op.inputs[0]], {"rate": rate}, outputs=op.outputs)


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
    out = ctx.shape(op.outputs[0])
    if shape is None and out is not None and sum(d is None for d in out) <= 1:
        # TF inferred every dim but (at most) the batch: a static reshape with -1.
        shape = np.array([-1 if d is None else d for d in out])
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
    """`concat` of the pieces that are not empty along the axis (a shape
    vector's empty tail in tf.signal.frame)."""
    *values, axis_value = op.inputs
    axis = int(ctx.require_const(axis_value, "the axis")) % len(ctx.shape(op.outputs[0]))
    kept = [v for v in values if (ctx.shape(v) or [None] * (axis + 1))[axis] != 0]
    if len(kept) == 1:
        ctx.alias(op.outputs[0], kept[0])
        return
    ctx.emit("concat", kept or values[:1], {"axis": axis}, outputs=op.outputs)


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


# A slice end before any axis's start: with step -1 from -1, the whole axis reversed.
_TO_THE_START = -(1 << 62)
# A slice end past any axis's end.
_TO_THE_END = 1 << 62


@tf_mapper("StridedSlice")
def strided_slice(ctx, op):
    """`strided_slice` (all masks); begin or end computed at run time (a
    signal framed to a whole number of hops, tf.signal.frame): `slice_dynamic`,
    then `squeeze` for shrink_axis_mask (no ellipsis or new axes then)."""
    x, begin, end, strides = op.inputs
    if ctx.const(begin) is None or ctx.const(end) is None:
        _strided_slice_dynamic(ctx, op)
        return
    attrs = {"begin": ctx.require_const(begin, "begin").astype(int).tolist(),
             "end": ctx.require_const(end, "end").astype(int).tolist(),
             "strides": ctx.require_const(strides, "strides").astype(int).tolist()}
    for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        attrs[mask] = int(op.attrs.get(mask, 0))
    ctx.emit("strided_slice", [x], attrs, outputs=op.outputs)


def _strided_slice_dynamic(ctx, op):
    x, begin, end, strides_value = op.inputs
    masks = {m: int(op.attrs.get(m, 0)) for m in ("begin_mask", "end_mask", "ellipsis_mask",
                                                   "new_axis_mask", "shrink_axis_mask")}
    steps = ctx.require_const(strides_value, "strides").astype(int).reshape(-1).tolist()
    if masks["ellipsis_mask"] or masks["new_axis_mask"] or any(s == 0 for s in steps):
        ctx.require_const(begin if ctx.const(begin) is None else end, "begin and end (with "
                          "an ellipsis or a new axis)")
    n = len(steps)
    axes = list(range(n))

    def bounds(value: str, mask: int, hint: str) -> str:
        """The bounds, with a masked axis's from its edge (toward the step's end)."""
        value = _as_int64(ctx, value)
        edges = [(0 if steps[i] > 0 else -1) if hint == "starts" else
                 (_TO_THE_END if steps[i] > 0 else _TO_THE_START) for i in axes]
        masked = [bool(mask >> i & 1) for i in axes]
        if not any(masked):
            return value
        return ctx.emit("where", [ctx.constant(np.array(masked), f"{hint}_masked"),
                                  ctx.constant(np.array(edges, np.int64), f"{hint}_edge"),
                                  value], dtype="int64", shape=(n,), hint=hint)

    shrink = [i for i in axes if masks["shrink_axis_mask"] >> i & 1]
    starts = bounds(begin, masks["begin_mask"], "starts")
    ends = bounds(end, masks["end_mask"], "ends")
    if shrink:  # one element: from its start to start + 1 (-1 to the end)
        one = ctx.constant(np.array([int(i in shrink) for i in axes], np.int64), "one")
        after = ctx.emit("add", [starts, one], dtype="int64", shape=(n,), hint="after")
        to_end = ctx.emit("equal", [after, ctx.constant(np.array(0, np.int64), "zero")],
                          dtype="bool", shape=(n,), hint="to_end")
        after = ctx.emit("where", [to_end, ctx.constant(np.array(_TO_THE_END, np.int64),
                                                        "end"), after],
                         dtype="int64", shape=(n,), hint="after")
        ends = ctx.emit("where", [ctx.constant(np.array([i in shrink for i in axes]),
                                               "shrunk"), after, ends],
                        dtype="int64", shape=(n,), hint="ends")
        sliced = ctx.emit("slice_dynamic", [x, starts, ends], {"axes": axes, "steps": steps},
                          hint="slice")
        ctx.emit("squeeze", [sliced], {"axes": shrink}, outputs=op.outputs)
        return
    ctx.emit("slice_dynamic", [x, starts, ends], {"axes": axes, "steps": steps},
             outputs=op.outputs)


@tf_mapper("ZerosLike", "OnesLike")
def fill_like(ctx, op):
    """a constant of the input's static shape; dynamic shapes: `pow(x, 0)` (minus 1)."""
    shape = ctx.shape(op.inputs[0])
    if shape is None or any(d is None for d in shape):
        # x**0 is 1 everywhere (NaN and inf included) and keeps x's dynamic shape.
        dtype = ctx.dtype(op.inputs[0])
        zero = ctx.constant(np.array(0, dtype=dtype), "zero")
        if op.type == "OnesLike":
            ctx.emit("pow", [op.inputs[0], zero], outputs=op.outputs)
            return
        ones = ctx.emit("pow", [op.inputs[0], zero], shape=shape, hint="ones")
        ctx.emit("sub", [ones, ctx.constant(np.array(1, dtype=dtype), "one")],
                 outputs=op.outputs)
        return
    fill = np.zeros if op.type == "ZerosLike" else np.ones
    ctx.emit("identity", [ctx.constant(fill(shape, ctx.dtype(op.inputs[0])))], outputs=op.outputs)


@tf_mapper("GatherV2", "Gather")
def gather(ctx, op):
    """`gather` along a constant axis (batch_dims 0)."""
    x, idx = op.inputs[:2]
    axis = int(ctx.require_const(op.inputs[2], "the axis")) if len(op.inputs) > 2 else 0
    if int(op.attrs.get("batch_dims", 0) or 0):
        raise ConversionError(f"{op.type} '{op.name}': batch_dims is not supported")
    ctx.emit("gather", [x, idx], {"axis": axis % len(ctx.shape(x))}, outputs=op.outputs)




@tf_mapper("ReverseV2")
def reverse(ctx, op):
    """`gather` of the indices in reverse order; `slice` step -1 where the size is dynamic."""
    x, axis_value = op.inputs
    shape = ctx.shape(x)
    axes = ctx.require_const(axis_value, "the axes").reshape(-1).astype(int).tolist()
    if shape is None:
        raise ConversionError(f"ReverseV2 '{op.name}': the input's rank is unknown")
    axes = sorted({a % len(shape) for a in axes})
    if not axes:
        ctx.alias(op.outputs[0], x)
        return
    value = x
    for i, axis in enumerate(axes):
        outputs = op.outputs if i == len(axes) - 1 else None
        if shape[axis] is None:   # a run-time sequence length (Keras go_backwards)
            value = ctx.emit("slice", [value], {"starts": [-1], "ends": [_TO_THE_START],
                                                "axes": [axis], "steps": [-1]},
                             outputs=outputs, shape=shape, hint="reverse")
            continue
        index = ctx.constant(np.arange(shape[axis] - 1, -1, -1, dtype=np.int64), "reversed")
        value = ctx.emit("gather", [value, index], {"axis": axis}, outputs=outputs, shape=shape,
                         hint="reverse")


@tf_mapper("Tile")
def tile(ctx, op):
    """`tile` with constant multiples; multiples computed at run time (a class
    token tiled over the batch) make `expand_dynamic` where every dim tiled is
    1 and TF knows the others keep their size."""
    x, multiples = op.inputs[:2]
    reps = ctx.const(multiples)
    if reps is not None:
        ctx.emit("tile", [x], {"repeats": reps.astype(int).tolist()}, outputs=op.outputs)
        return
    in_shape, out_shape = ctx.shape(x), ctx.shape(op.outputs[0])
    if in_shape is None or out_shape is None or not all(
            d == 1 or (d is not None and d == o) for d, o in zip(in_shape, out_shape)):
        ctx.require_const(multiples, "the multiples")  # the error: what must be constant
    # Broadcasting a 1 to m is tiling it m times; a multiple of 1 keeps the dim.
    ctx.emit("expand_dynamic", [x, _as_int64(ctx, multiples)], outputs=op.outputs)


@tf_mapper("Split", "SplitV")
def split(ctx, op):
    """`split` (Split: equal pieces; SplitV: sizes, one -1 inferred)."""
    if op.type == "Split":
        axis_value, x = op.inputs
        axis = int(ctx.require_const(axis_value, "the axis")) % len(ctx.shape(x))
        n = int(op.attrs["num_split"])
        sizes = [ctx.shape(x)[axis] // n] * n
    else:
        x, sizes_value, axis_value = op.inputs
        axis = int(ctx.require_const(axis_value, "the axis")) % len(ctx.shape(x))
        sizes = ctx.require_const(sizes_value, "the sizes").astype(int).tolist()
        if -1 in sizes:
            sizes[sizes.index(-1)] = ctx.shape(x)[axis] - sum(s for s in sizes if s != -1)
    # An empty piece (tf.signal.frame splits a shape vector [1, 1, 0]) is an
    # empty slice: paddle.split takes no more pieces than the axis has elements.
    for size, out in zip(sizes, op.outputs):
        if size == 0:
            ctx.emit("slice", [x], {"starts": [0], "ends": [0], "axes": [axis], "steps": [1]},
                     outputs=[out])
    kept = [(size, out) for size, out in zip(sizes, op.outputs) if size != 0]
    if len(kept) == 1:
        ctx.alias(kept[0][1], x)
    elif kept:
        ctx.emit("split", [x], {"axis": axis, "sizes": [size for size, _ in kept]},
                 outputs=[out for _, out in kept])


@tf_mapper("Unpack")
def unpack(ctx, op):
    """`split` into size-1 pieces, each `squeeze`d."""
    x = op.inputs[0]
    shape = ctx.shape(x)
    axis = int(op.attrs.get("axis", 0)) % len(shape)
    piece = tuple(1 if i == axis else d for i, d in enumerate(shape))
    parts = [ctx.graph.fresh_name(f"{op.name}/piece") for _ in op.outputs]
    ctx.emit("split", [x], {"axis": axis, "sizes": [1] * len(op.outputs)}, outputs=parts)
    for part, out in zip(parts, op.outputs):
        ctx.graph.info[part] = type(ctx.graph.info.get(out) or ctx.source.info[out])(
            ctx.dtype(x), piece)
        ctx.emit("squeeze", [part], {"axes": [axis]}, outputs=[out])


@tf_mapper("Select", "SelectV2")
def select(ctx, op):
    """`where`."""
    ctx.emit("where", op.inputs[:3], outputs=op.outputs)


@tf_mapper("Fill")
def fill(ctx, op):
    """a constant, or `full` when the dims are computed (a dynamic batch).

    The fill value must be a constant."""
    value = ctx.require_const(op.inputs[1], "the value")
    dims = ctx.const(op.inputs[0])
    if dims is None:
        ctx.emit("full", op.inputs[:1], {"value": float(value), "dtype": str(value.dtype)},
                 outputs=op.outputs)
        return
    dims = dims.astype(int).tolist()
    ctx.emit("identity", [ctx.constant(np.full(dims, value, dtype=value.dtype))],
             outputs=op.outputs)


@tf_mapper("SpaceToDepth", "DepthToSpace")
def space_depth(ctx, op):
    """`reshape` + `transpose` + `reshape` (NHWC, DCR order as TF)."""
    if op.attrs.get("data_format", "NHWC") != "NHWC":
        raise ConversionError(f"{op.type} '{op.name}': only NHWC is supported")
    b = int(op.attrs["block_size"])
    _, h, w, c = ctx.shape(op.inputs[0])
    if op.type == "SpaceToDepth":
        first, last = [0, h // b, b, w // b, b, c], [0, h // b, w // b, b * b * c]
    else:
        first, last = [0, h, w, b, b, c // (b * b)], [0, h * b, w * b, c // (b * b)]
    y = ctx.emit("reshape", op.inputs[:1], {"shape": first}, hint="blocks")
    y = ctx.emit("transpose", [y], {"perm": [0, 1, 3, 2, 4, 5]}, hint="swap")
    ctx.emit("reshape", [y], {"shape": last}, outputs=op.outputs)


@tf_mapper("Slice")
def slice_(ctx, op):
    """`slice` with constant begin/size (size -1: to the end); `slice_dynamic`
    when they are computed (a position table cut to a run-time length)."""
    x, begin_value, size_value = op.inputs
    begin, size = ctx.const(begin_value), ctx.const(size_value)
    big = np.iinfo(np.int64).max
    if begin is not None and size is not None:
        begin, size = begin.astype(int).tolist(), size.astype(int).tolist()
        ends = [big if s == -1 else b + s for b, s in zip(begin, size)]
        ctx.emit("slice", [x], {"starts": begin, "ends": ends, "axes": list(range(len(begin))),
                                "steps": [1] * len(begin)}, outputs=op.outputs)
        return
    n = len(ctx.shape(x))
    axes = list(range(n))
    starts = _as_int64(ctx, begin_value)
    sizes = _as_int64(ctx, size_value)
    whole = ctx.emit("equal", [sizes, ctx.constant(np.array(-1, np.int64), "whole")],
                     dtype="bool", shape=(n,), hint="to_end")
    ends = ctx.emit("where", [whole, ctx.constant(np.array(big, np.int64), "end"),
                              ctx.emit("add", [starts, sizes], dtype="int64", shape=(n,),
                                       hint="end")], dtype="int64", shape=(n,), hint="ends")
    ctx.emit("slice_dynamic", [x, starts, ends], {"axes": axes, "steps": [1] * n},
             outputs=op.outputs)


def _as_int64(ctx, value: str) -> str:
    if ctx.dtype(value) == "int64":
        return value
    return ctx.emit("cast", [value], {"dtype": "int64"}, dtype="int64", shape=ctx.shape(value),
                    hint="int64")


@tf_mapper("Range")
def range_(ctx, op):
    """`range` (folded when its bounds are constants)."""
    ctx.emit("range", op.inputs[:3], outputs=op.outputs)


@tf_mapper("BroadcastTo")
def broadcast_to(ctx, op):
    """`expand` to the constant shape (a dynamic batch dim keeps its size)."""
    x, shape_value = op.inputs[:2]
    out_shape = ctx.shape(op.outputs[0])
    shape = ctx.const(shape_value)
    if shape is None:
        if out_shape is None or any(d is None for d in out_shape[1:]):
            _broadcast_to_computed(ctx, op, x, shape_value)
            return
        shape = [1 if d is None else d for d in out_shape]  # 1: keep the input's batch
    ctx.emit("expand", [x], {"shape": [int(d) for d in shape]}, outputs=op.outputs)


def _broadcast_to_computed(ctx, op, x: str, shape_value: str) -> None:
    """`expand_dynamic` to a shape computed at run time, the input first given
    the shape's rank (leading 1s)."""
    length = (ctx.shape(shape_value) or [None])[0]
    if length is None:
        raise ConversionError(f"BroadcastTo '{op.name}': the length of its computed shape "
                              f"is unknown")
    lead = length - len(ctx.shape(x))
    if lead > 0:
        x = ctx.emit("unsqueeze", [x], {"axes": list(range(lead))},
                     shape=(1,) * lead + tuple(ctx.shape(x)), hint="ranked")
    ctx.emit("expand_dynamic", [x, _as_int64(ctx, shape_value)], outputs=op.outputs)


def _linear_index(ctx, op, indices: str, dims) -> str:
    """Row-major positions of the index tuples in `indices` ([..., K]) within `dims`."""
    strides = np.cumprod([1] + [int(d) for d in dims[:0:-1]])[::-1].astype(
        ctx.dtype(indices))
    idx_shape = ctx.shape(indices)
    weighted = ctx.emit("mul", [indices, ctx.constant(strides, "strides")], shape=idx_shape,
                        hint="weighted")
    return ctx.emit("reduce_sum", [weighted], {"axes": [len(idx_shape) - 1], "keepdims": False},
                    shape=tuple(idx_shape[:-1]), hint="linear")


def _static(ctx, op, value: str, what: str):
    shape = ctx.shape(value)
    if shape is None or any(d is None for d in shape):
        raise ConversionError(f"{op.type} '{op.name}': {what} needs a static shape")
    return list(shape)


@tf_mapper("GatherNd")
def gather_nd(ctx, op):
    """`gather` of rows of x flattened over its first K dims, at the row-major
    positions of the index tuples (indices [..., K])."""
    x, indices = op.inputs[:2]
    shape = _static(ctx, op, x, "the params")
    k = _static(ctx, op, indices, "the indices")[-1]
    if op.attrs.get("bad_indices_policy") not in (None, "", "DEFAULT"):
        raise ConversionError(f"GatherNd '{op.name}': bad_indices_policy is not supported")
    rows = int(np.prod(shape[:k]))
    flat = ctx.emit("reshape", [x], {"shape": [rows] + shape[k:]},
                    shape=(rows,) + tuple(shape[k:]), hint="rows")
    ctx.emit("gather", [flat, _linear_index(ctx, op, indices, shape[:k])], {"axis": 0},
             outputs=op.outputs)


@tf_mapper("ScatterNd")
def scatter_nd(ctx, op):
    """zeros of `shape` with `updates` added at the index tuples: a one-hot matrix of
    the row-major positions (`equal` against 0..rows-1), transposed, `matmul` the
    updates (duplicates add up, as in TF). Float updates only."""
    indices, updates, shape_value = op.inputs[:3]
    shape = ctx.require_const(shape_value, "the output shape").astype(int).tolist()
    idx_shape = _static(ctx, op, indices, "the indices")
    dtype = ctx.dtype(updates)
    if not dtype.startswith(("float", "bfloat")):
        raise ConversionError(f"ScatterNd '{op.name}': {dtype} updates are not supported "
                              f"(float only)")
    k, n = idx_shape[-1], int(np.prod(idx_shape[:-1]))
    rows, rest = int(np.prod(shape[:k])), shape[k:]
    linear = ctx.emit("reshape", [_linear_index(ctx, op, indices, shape[:k])], {"shape": [n, 1]},
                      shape=(n, 1), hint="linear_column")
    positions = ctx.constant(np.arange(rows, dtype=ctx.dtype(indices)).reshape(1, rows),
                             "positions")
    hits = ctx.emit("equal", [linear, positions], dtype="bool", shape=(n, rows), hint="hits")
    onehot = ctx.emit("cast", [hits], {"dtype": dtype}, dtype=dtype, shape=(n, rows),
                      hint="onehot")
    onehot_t = ctx.emit("transpose", [onehot], {"perm": [1, 0]}, shape=(rows, n), hint="per_row")
    width = int(np.prod(rest))
    flat = ctx.emit("reshape", [updates], {"shape": [n, width]}, shape=(n, width),
                    hint="updates")
    placed = ctx.emit("matmul", [onehot_t, flat], shape=(rows, width), hint="placed")
    ctx.emit("reshape", [placed], {"shape": shape}, outputs=op.outputs)


@tf_mapper("LogicalAnd", "LogicalOr")
def logical(ctx, op):
    """`bitwise_and` / `bitwise_or` (logical on bool)."""
    ctx.emit("bitwise_and" if op.type == "LogicalAnd" else "bitwise_or", op.inputs[:2],
             outputs=op.outputs)
