"""Ordering and counting: topk, sort, histc (mixture-of-experts routing
sorts tokens by expert and counts them per expert)."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from ._util import args, axis, cast_to, unsupported


@torch_mapper("aten.topk.default")
def topk(ctx, op):
    """`topk` (k largest or smallest, sorted; torch's sorted=False leaves the
    order free, and sorted is one such order)."""
    x, k, dim, largest = args(op, None, None, -1, True)[:4]
    if not isinstance(k, int):
        raise unsupported(op, "k computed at run time is not supported yet")
    ctx.emit("topk", [x], {"k": k, "axis": axis(ctx, x, dim), "largest": bool(largest)},
             outputs=op.outputs[:2])


@torch_mapper("aten.sort.default", "aten.sort.stable")
def sort(ctx, op):
    """`topk` of the whole axis (ascending: the smallest first). Ties keep
    the lower index, which is what stable=True asks for."""
    if op.type == "aten.sort.stable":
        x = args(op)[0]
        kwargs = op.attrs["kwargs"]
        dim, descending = kwargs.get("dim", -1), kwargs.get("descending", False)
    else:
        x, dim, descending = args(op, None, -1, False)[:3]
    dim = axis(ctx, x, dim)
    size = ctx.shape(x)[dim]
    ctx.emit("topk", [x], {"k": -1 if size is None else size, "axis": dim,
                           "largest": bool(descending)}, outputs=op.outputs[:2])


@torch_mapper("aten.histc.default")
def histc(ctx, op):
    """Counts of x in `bins` equal bins over [min, max] (the data's range when
    both are 0): bin = (x - min) * bins / (max - min), as torch computes it,
    the last bin closed; elements outside (and NaN) are not counted. One
    comparison per element and bin, summed."""
    x, bins, lo, hi = args(op, None, 100, 0, 0)
    dtype = ctx.dtype(x)
    flat = ctx.emit("reshape", [x], {"shape": [-1, 1]}, shape=(None, 1), hint="flat")
    if lo == hi:
        lo, hi = _data_range(ctx, x)
    else:
        lo, hi = (ctx.constant(np.array(v, dtype), name) for v, name in ((lo, "min"),
                                                                         (hi, "max")))
    offset = ctx.emit("sub", [flat, lo], shape=(None, 1), hint="offset")
    scaled = ctx.emit("mul", [offset, ctx.constant(np.array(bins, dtype), "bins")],
                      shape=(None, 1), hint="scaled")
    width = ctx.emit("sub", [hi, lo], shape=(), hint="width")
    position = ctx.emit("div", [scaled, width], shape=(None, 1), hint="position")
    inside = ctx.emit("bitwise_and", [
        ctx.emit("greater_equal", [flat, lo], dtype="bool", shape=(None, 1), hint="above"),
        ctx.emit("less_equal", [flat, hi], dtype="bool", shape=(None, 1), hint="below")],
        dtype="bool", shape=(None, 1), hint="inside")
    # outside elements can be far out (or NaN): 0 before the int cast
    position = ctx.emit("where", [inside, position, ctx.constant(np.array(0, dtype), "zero")],
                        shape=(None, 1), hint="position")
    index = cast_to(ctx, ctx.emit("floor", [position], shape=(None, 1), hint="floor"), "int64")
    index = ctx.emit("minimum", [index, ctx.constant(np.array(bins - 1, np.int64), "last")],
                     dtype="int64", shape=(None, 1), hint="bin")
    hit = ctx.emit("bitwise_and", [
        ctx.emit("equal", [index, ctx.constant(np.arange(bins, dtype=np.int64), "bins")],
                 dtype="bool", shape=(None, bins), hint="in_bin"), inside],
        dtype="bool", shape=(None, bins), hint="hit")
    counts = cast_to(ctx, hit, dtype)
    ctx.emit("reduce_sum", [counts], {"axes": [0], "keepdims": False}, outputs=op.outputs)


def _data_range(ctx, x):
    """torch's range when min == max: the data's min and max, widened by 1
    each way when those are equal too."""
    everything = {"axes": list(range(len(ctx.shape(x)))), "keepdims": False}
    lo = ctx.emit("reduce_min", [x], everything, shape=(), hint="data_min")
    hi = ctx.emit("reduce_max", [x], everything, shape=(), hint="data_max")
    same = ctx.emit("equal", [lo, hi], dtype="bool", shape=(), hint="flat_data")
    one = ctx.constant(np.array(1, ctx.dtype(x)), "one")
    lo = ctx.emit("where", [same, ctx.emit("sub", [lo, one], shape=(), hint="lo"), lo],
                  shape=(), hint="min")
    hi = ctx.emit("where", [same, ctx.emit("add", [hi, one], shape=(), hint="hi"), hi],
                  shape=(), hint="max")
    return lo, hi
