"""Mixture-of-experts kernels that models call as custom ops: transformers'
grouped matmul (its CPU path, `transformers::grouped_mm_fallback`, is what
torch.export records for every transformers MoE layer off GPU)."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from ._util import args, cast_to, unsupported


@torch_mapper("transformers.grouped_mm_fallback.default", "aten._grouped_mm.default")
def grouped_mm(ctx, op):
    """rows of x grouped by expert (x sorted by expert, `offs` the running
    row counts) times their expert's weight: every expert's product
    (`matmul` of x by the [experts, in, out] weights), then each row's own
    expert's row (`gather_elements`; expert = how many offsets are <= the
    row); rows past the last offset are 0, as the fallback leaves them. This
    costs experts / top-k times the grouped FLOPs, with static shapes every
    target runs."""
    x, weight, offs = args(op, None, None, None)[:3]
    if offs is None:
        offs = op.attrs["kwargs"].get("offs")
    if offs is None or len(ctx.shape(x)) != 2 or len(ctx.shape(weight)) != 3:
        raise unsupported(op, "only the 2-D input, 3-D weight form with offsets is supported")
    if op.attrs["kwargs"].get("bias") is not None:
        raise unsupported(op, "a grouped matmul with a bias is not supported yet")
    rows, _ = ctx.shape(x)
    experts, _, width = ctx.shape(weight)
    dtype = ctx.dtype(op.outputs[0])
    products = ctx.emit("matmul", [ctx.emit("unsqueeze", [cast_to(ctx, x, dtype)], {"axes": [0]},
                                            shape=(1, *ctx.shape(x)), hint="rows"), weight],
                        shape=(experts, rows, width), hint="every_expert")
    positions = _positions(ctx, x, rows)
    bounds = ctx.emit("unsqueeze", [cast_to(ctx, offs, "int64")], {"axes": [0]},
                      shape=(1, experts), hint="bounds")
    passed = cast_to(ctx, ctx.emit("greater_equal", [positions, bounds], dtype="bool",
                                   shape=(rows, experts), hint="passed"), "int64")
    expert = ctx.emit("reduce_sum", [passed], {"axes": [1], "keepdims": True}, dtype="int64",
                      shape=(rows, 1), hint="expert")
    grouped = ctx.emit("less", [expert, ctx.constant(np.array(experts, np.int64), "experts")],
                       dtype="bool", shape=(rows, 1), hint="grouped")
    expert = ctx.emit("minimum", [expert, ctx.constant(np.array(experts - 1, np.int64),
                                                       "last")],
                      dtype="int64", shape=(rows, 1), hint="expert")
    at = ctx.emit("expand_dynamic" if rows is None else "expand",
                  [ctx.emit("unsqueeze", [expert], {"axes": [0]}, dtype="int64",
                            shape=(1, rows, 1), hint="at"),
                   *([_out_shape(ctx, x, width)] if rows is None else [])],
                  {} if rows is None else {"shape": [1, rows, width]}, dtype="int64",
                  shape=(1, rows, width), hint="at")
    own = ctx.emit("gather_elements", [products, at], {"axis": 0}, shape=(1, rows, width),
                   hint="own_expert")
    own = ctx.emit("squeeze", [own], {"axes": [0]}, shape=(rows, width), hint="own_expert")
    ctx.emit("where", [grouped, own, ctx.constant(np.array(0, dtype), "zero")],
             outputs=op.outputs)


def _positions(ctx, x, rows) -> str:
    """[rows, 1] int64: 0, 1, ... (a `range` when rows is known only at run time)."""
    if rows is not None:
        return ctx.constant(np.arange(rows, dtype=np.int64).reshape(rows, 1), "positions")
    zero, one = (ctx.constant(np.array(v, np.int64), name) for v, name in ((0, "zero"),
                                                                           (1, "one")))
    count = ctx.run_time_dim(x, 0)
    line = ctx.emit("range", [zero, count, one], dtype="int64", shape=(None,), hint="positions")
    return ctx.emit("unsqueeze", [line], {"axes": [1]}, dtype="int64", shape=(None, 1),
                    hint="positions")


def _out_shape(ctx, x, width) -> str:
    count = ctx.emit("unsqueeze", [ctx.run_time_dim(x, 0)], {"axes": [0]}, dtype="int64",
                     shape=(1,), hint="rows")
    return ctx.emit("concat", [ctx.constant(np.array([1], np.int64), "one"), count,
                               ctx.constant(np.array([width], np.int64), "width")],
                    {"axis": 0}, dtype="int64", shape=(3,), hint="shape")
