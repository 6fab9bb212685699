"""Writes into a tensor, as torch.export leaves them once functionalized:
`x[a:b] = v` (slice_scatter, select_scatter), `x[idx] = v` and `x[mask] = v`
(index_put), `copy_`, and the scatter family (scatter, scatter_add,
scatter_reduce). Each gives a new tensor; the IR has no mutation."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from ._util import args, axis, cast_to, clamp_range, is_value, rank, unsupported


def _shape_of(ctx, value: str) -> str:
    shape = ctx.shape(value)
    return ctx.emit("shape", [value], {"dtype": "int64"}, dtype="int64", shape=(len(shape),),
                    hint="shape")


def _broadcast_to(ctx, value: str, like: str) -> str:
    """`value` expanded to `like`'s shape (a computed shape where it is dynamic)."""
    return _broadcast_to_shape(ctx, value, ctx.shape(like), like)


def _broadcast_to_shape(ctx, value: str, shape, like: str | None = None) -> str:
    """`value` expanded to `shape`; `like`, a tensor of that shape, gives its
    run-time sizes where the shape has unknown dims."""
    shape, own = tuple(shape), tuple(ctx.shape(value))
    if own == shape and None not in shape:
        return value
    if len(own) < len(shape):
        value = ctx.emit("unsqueeze", [value], {"axes": list(range(len(shape) - len(own)))},
                         shape=(1,) * (len(shape) - len(own)) + own, hint="lead")
    if None in shape:
        return ctx.emit("expand_dynamic", [value, _shape_of(ctx, like)], shape=shape,
                        hint="broadcast")
    return ctx.emit("expand", [value], {"shape": list(shape)}, shape=shape, hint="broadcast")


@torch_mapper("aten.copy.default")
def copy(ctx, op):
    """`src` broadcast to `self`'s shape in `self`'s dtype (what `self.copy_(src)` leaves)."""
    target, src = args(op)[:2]
    src = cast_to(ctx, src, ctx.dtype(target))
    ctx.alias(op.outputs[0], _broadcast_to(ctx, src, target))


@torch_mapper("aten.slice_scatter.default")
def slice_scatter(ctx, op):
    """`x[..., start:end:step, ...] = src`: a `concat` of the pieces around
    src for step 1, a `scatter_elements` at the written positions otherwise."""
    x, src, dim, start, end, step = args(op, None, None, 0, None, None, 1)
    _write_slice(ctx, op, x, src, axis(ctx, x, dim), start, end, step)


@torch_mapper("aten.select_scatter.default")
def select_scatter(ctx, op):
    """`x[..., i, ...] = src`: src given back its axis, then as slice_scatter."""
    x, src, dim, index = args(op)
    dim = axis(ctx, x, dim)
    shape = list(ctx.shape(src))
    src = ctx.emit("unsqueeze", [src], {"axes": [dim]}, shape=tuple(shape[:dim] + [1] +
                                                                   shape[dim:]), hint="row")
    if index < 0 and ctx.shape(x)[dim] is None:
        raise unsupported(op, "a negative index into a dim whose size is known only at run "
                              "time is not supported yet")
    index %= ctx.shape(x)[dim] or (index + 1)
    _write_slice(ctx, op, x, src, dim, index, index + 1, 1)


def _write_slice(ctx, op, x, src, dim, start, end, step):
    size = ctx.shape(x)[dim]
    if not all(b is None or isinstance(b, int) for b in (start, end)):
        raise unsupported(op, "slice bounds computed at run time are not supported yet")
    if size is None:
        if (start or 0) < 0 or (end is not None and end < 0) or step != 1:
            raise unsupported(op, "a negative or strided slice of a dim whose size is known "
                                  "only at run time is not supported yet")
        start, end = start or 0, end
        tail_start = end if end is not None and end < (1 << 62) else None
    else:
        start, end = clamp_range(size, start, end, step)
        tail_start = end if end < size else None
    if step != 1:
        _scatter_positions(ctx, op, x, src, dim, np.arange(start, end, step))
        return
    big = 1 << 62
    pieces = []
    if start > 0:
        pieces.append(_cut(ctx, x, dim, 0, start))
    pieces.append(cast_to(ctx, src, ctx.dtype(x)))
    if tail_start is not None:
        pieces.append(_cut(ctx, x, dim, tail_start, big))
    if len(pieces) == 1:
        ctx.alias(op.outputs[0], pieces[0])
    else:
        ctx.emit("concat", pieces, {"axis": dim}, outputs=op.outputs)


def _cut(ctx, x, dim, start, end):
    shape = list(ctx.shape(x))
    if shape[dim] is not None:
        shape[dim] = min(end, shape[dim]) - start
    return ctx.emit("slice", [x], {"axes": [dim], "starts": [start], "ends": [end],
                                   "steps": [1]}, shape=tuple(shape), hint="kept")


def _scatter_positions(ctx, op, x, src, dim, positions):
    """x with src written at `positions` along dim (src's extent there)."""
    n = rank(ctx, x)
    index = ctx.constant(positions.reshape([-1 if i == dim else 1 for i in range(n)])
                         .astype(np.int64), "positions")
    index = _broadcast_to(ctx, index, src)
    ctx.emit("scatter_elements", [x, index, cast_to(ctx, src, ctx.dtype(x))],
             {"axis": dim, "reduction": "none"}, outputs=op.outputs)


# torch's scatter_reduce names, in the IR's words
_REDUCTIONS = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}


@torch_mapper("aten.scatter.src", "aten.scatter.value", "aten.scatter_add.default",
              "aten.scatter_reduce.two")
def scatter(ctx, op):
    """`scatter_elements` along dim: src (only the part the index covers, as
    torch reads it) or a value, combined by add for scatter_add and by
    scatter_reduce's sum/prod/amax/amin with include_self (mean, or leaving
    self out, is refused)."""
    x, dim, index, src = args(op)[:4]
    dim = axis(ctx, x, dim)
    reduction = "add" if op.type == "aten.scatter_add.default" else "none"
    if op.type == "aten.scatter_reduce.two":
        how = args(op)[4]
        include_self = op.attrs["kwargs"].get("include_self", (args(op) + [True] * 6)[5])
        if how not in _REDUCTIONS or not include_self:
            raise unsupported(op, f"scatter_reduce {how!r} with include_self={include_self} "
                                  f"is not supported yet (sum, prod, amax and amin with "
                                  f"include_self=True are)")
        reduction = _REDUCTIONS[how]
    if op.attrs["kwargs"].get("reduce") is not None:
        raise unsupported(op, "scatter with the deprecated reduce= argument is not supported")
    if ctx.dtype(index) != "int64":
        index = cast_to(ctx, index, "int64")
    if is_value(src):
        src = _cover(ctx, op, cast_to(ctx, src, ctx.dtype(x)), index)
    else:
        value = ctx.constant(np.array(src, ctx.dtype(x)), "value")
        src = _broadcast_to(ctx, value, index)
    ctx.emit("scatter_elements", [x, index, src], {"axis": dim, "reduction": reduction},
             outputs=op.outputs)


def _cover(ctx, op, src: str, index: str) -> str:
    """src cut to the index's shape (torch reads src only where the index reaches)."""
    have, want = ctx.shape(src), ctx.shape(index)
    if tuple(have) == tuple(want):
        return src
    if None in have or None in want:
        raise unsupported(op, "a src larger than the index, with sizes known only at run "
                              "time, is not supported yet")
    return ctx.emit("slice", [src], {"axes": list(range(len(want))), "starts": [0] * len(want),
                                     "ends": list(want), "steps": [1] * len(want)},
                    shape=tuple(want), hint="covered")


@torch_mapper("aten.index_put.default")
def index_put(ctx, op):
    """`x[i, j] = v` (`+=` with accumulate): the indexed dims merged into one
    and `scatter_elements` of v's rows at the flat index i * size(j) + j
    (`add` for accumulate; the last of duplicate indices wins otherwise, as
    on torch's CPU). `x[mask] = v` with one value for all: `where`."""
    x, indices, values, accumulate = args(op, None, None, None, False)
    used = [i for i, v in enumerate(indices) if v is not None]
    values = cast_to(ctx, values, ctx.dtype(x))
    if any(ctx.dtype(indices[i]) == "bool" for i in used):
        _masked_fill(ctx, op, x, indices, used, values, accumulate)
        return
    if used == [0] and len(ctx.shape(indices[0])) == 1:
        _write_rows(ctx, op, x, indices[0], values, accumulate)
        return
    shape = list(ctx.shape(x))
    if None in shape:
        raise unsupported(op, "writing through several index tensors into a tensor with "
                              "sizes known only at run time is not supported yet")
    dims = used
    index_shape = np.broadcast_shapes(*[tuple(ctx.shape(indices[i])) for i in used])
    if None in index_shape:
        raise unsupported(op, "index tensors of a size known only at run time are not "
                              "supported yet")
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    lead = dims[0] if adjacent else 0
    rest = [d for d in range(len(shape)) if d not in dims]
    # The shape x[indices] has in torch, which values broadcast to.
    before, after = [shape[d] for d in rest if d < lead] if adjacent else [], \
        [shape[d] for d in rest if not adjacent or d > lead]
    written = tuple(before) + tuple(index_shape) + tuple(after)
    values = _broadcast_to_shape(ctx, values, written)
    perm = dims + rest
    if perm != list(range(len(shape))):
        x = ctx.emit("transpose", [x], {"perm": perm}, shape=tuple(shape[p] for p in perm),
                     hint="indexed_first")
        if before:  # the index dims of the written rows to the front, too
            k = len(before)
            order = list(range(k, k + len(index_shape))) + list(range(k)) + \
                list(range(k + len(index_shape), len(written)))
            values = ctx.emit("transpose", [values], {"perm": order},
                              shape=tuple(written[o] for o in order), hint="rows_first")
    sizes = [shape[d] for d in dims]
    count = int(np.prod(index_shape, dtype=np.int64))
    row = [shape[d] for d in rest]
    flat = _flat_index(ctx, [indices[i] for i in used], sizes, index_shape, count)
    table = ctx.emit("reshape", [x], {"shape": [int(np.prod(sizes))] + row},
                     shape=(int(np.prod(sizes)), *row), hint="rows")
    rows = ctx.emit("reshape", [values], {"shape": [count] + row}, shape=(count, *row),
                    hint="new_rows")
    at = ctx.emit("reshape", [flat], {"shape": [count] + [1] * len(row)},
                  shape=(count,) + (1,) * len(row), hint="at")
    at = _broadcast_to(ctx, at, rows)
    merged = ctx.emit("scatter_elements", [table, at, rows],
                      {"axis": 0, "reduction": "add" if accumulate else "none"},
                      shape=(int(np.prod(sizes)), *row), hint="written")
    out_shape = [shape[p] for p in perm]
    if perm == list(range(len(shape))):
        ctx.emit("reshape", [merged], {"shape": out_shape}, outputs=op.outputs)
        return
    back = ctx.emit("reshape", [merged], {"shape": out_shape}, shape=tuple(out_shape),
                    hint="unmerged")
    ctx.emit("transpose", [back], {"perm": [int(i) for i in np.argsort(perm)]},
             outputs=op.outputs)


def _write_rows(ctx, op, x, index, values, accumulate):
    """x[i] = v with one 1-D index: `scatter_elements` of v's rows along axis
    0, at any size (the inverse permutation of a mixture-of-experts layer)."""
    shape = ctx.shape(x)
    count = ctx.shape(index)[0]
    written = (count, *shape[1:])
    if tuple(ctx.shape(values)) != tuple(written):
        if None in written:
            raise unsupported(op, "x[i] = v with v broadcast to rows of a size known only at "
                                  "run time is not supported yet")
        values = _broadcast_to_shape(ctx, values, written)
    rows = ctx.run_time_dim(x, 0) if shape[0] is None else \
        ctx.constant(np.array(shape[0], np.int64), "rows")
    at = ctx.emit("mod", [cast_to(ctx, index, "int64"), rows], dtype="int64", shape=(count,),
                  hint="row")   # negative indices count from the end
    if len(shape) > 1:
        at = ctx.emit("reshape", [at], {"shape": [-1] + [1] * (len(shape) - 1)},
                      dtype="int64", shape=(count,) + (1,) * (len(shape) - 1), hint="row")
        at = _broadcast_to(ctx, at, values)
    ctx.emit("scatter_elements", [x, at, values],
             {"axis": 0, "reduction": "add" if accumulate else "none"}, outputs=op.outputs)


def _flat_index(ctx, indices, sizes, index_shape, count) -> str:
    """The row of x[i, j, ...] once the indexed dims are one (negatives count from the end)."""
    flat = None
    for k, idx in enumerate(indices):
        idx = cast_to(ctx, idx, "int64")
        idx = ctx.emit("mod", [idx, ctx.constant(np.array(sizes[k], np.int64), "size")],
                       dtype="int64", shape=ctx.shape(idx), hint="index")
        stride = int(np.prod(sizes[k + 1:], dtype=np.int64))
        if stride != 1:
            idx = ctx.emit("mul", [idx, ctx.constant(np.array(stride, np.int64), "stride")],
                           dtype="int64", shape=ctx.shape(idx), hint="offset")
        flat = idx if flat is None else ctx.emit("add", [flat, idx], dtype="int64",
                                                 shape=tuple(index_shape), hint="flat")
    flat = _broadcast_to_shape(ctx, flat, tuple(index_shape))
    return ctx.emit("reshape", [flat], {"shape": [count]}, dtype="int64", shape=(count,),
                    hint="flat")


def _masked_fill(ctx, op, x, indices, used, values, accumulate):
    """x[mask] = v with a boolean mask and one value for every selected element."""
    if len(used) != 1:
        raise unsupported(op, "a boolean mask together with other indices is not supported "
                              "yet")
    if int(np.prod([d or 0 for d in ctx.shape(values)] or [1])) != 1:
        raise unsupported(op, "x[mask] = values with one value per selected element takes "
                              "them in an order that depends on the data; write "
                              "torch.where(mask, values, x) with values of x's shape")
    mask = indices[used[0]]
    # the mask covers dims used[0]..: the dims after it broadcast
    m, after = rank(ctx, mask), rank(ctx, x) - used[0] - rank(ctx, mask)
    if after:
        mask = ctx.emit("unsqueeze", [mask], {"axes": list(range(m, m + after))},
                        shape=tuple(ctx.shape(mask)) + (1,) * after, hint="mask")
    value = ctx.emit("reshape", [values], {"shape": []}, shape=(), hint="value")
    if accumulate:
        zero = ctx.constant(np.array(0, ctx.dtype(x)), "zero")
        added = ctx.emit("where", [mask, value, zero], shape=ctx.shape(x), hint="added")
        ctx.emit("add", [x, added], outputs=op.outputs)
    else:
        ctx.emit("where", [mask, value, x], outputs=op.outputs)
