"""Elementwise arithmetic, matrix products and reductions."""
from __future__ import annotations

import numpy as np

from x2.registry import tf_mapper

_BINARY = {"Add": "add", "AddV2": "add", "Sub": "sub", "Mul": "mul", "RealDiv": "div",
           "Div": "div", "Maximum": "maximum", "Minimum": "minimum", "Pow": "pow"}


@tf_mapper(*_BINARY)
def binary(ctx, op):
    """the broadcasting binary IR op (`add sub mul div maximum minimum pow`)."""
    ctx.emit(_BINARY[op.type], op.inputs[:2], outputs=op.outputs)


@tf_mapper("FloorDiv")
def floor_div(ctx, op):
    """`floor_div` of integers; `floor(a / b)` of floats, as TensorFlow rounds
    them (Python's // takes the remainder's route: 1.0 // 0.1 is 9, TF's 10)."""
    if np.issubdtype(np.dtype(ctx.dtype(op.outputs[0])), np.integer):
        ctx.emit("floor_div", op.inputs[:2], outputs=op.outputs)
        return
    ratio = ctx.emit("div", op.inputs[:2], shape=ctx.shape(op.outputs[0]), hint="ratio")
    ctx.emit("floor", [ratio], outputs=op.outputs)


@tf_mapper("FloorMod")
def floor_mod(ctx, op):
    """`mod`: the remainder takes the divisor's sign, in TensorFlow as in numpy."""
    ctx.emit("mod", op.inputs[:2], outputs=op.outputs)


@tf_mapper("SquaredDifference")
def squared_difference(ctx, op):
    """`(a - b) * (a - b)`."""
    diff = ctx.emit("sub", op.inputs[:2], shape=ctx.shape(op.outputs[0]), hint="diff")
    ctx.emit("mul", [diff, diff], outputs=op.outputs)


@tf_mapper("Reciprocal", "Inv")
def reciprocal(ctx, op):
    """`reciprocal`."""
    ctx.emit("reciprocal", op.inputs[:1], outputs=op.outputs)


def _maybe_transposed(ctx, value: str, flag: bool) -> str:
    if not flag:
        return value
    shape = ctx.shape(value)
    rank = len(shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return ctx.emit("transpose", [value], {"perm": perm},
                    shape=tuple(shape[i] for i in perm), hint="transpose")


@tf_mapper("MatMul")
def matmul(ctx, op):
    """`matmul` (transpose_a/b as explicit `transpose`); constant weights become `dense`."""
    a = _maybe_transposed(ctx, op.inputs[0], op.attrs.get("transpose_a", False))
    b = _maybe_transposed(ctx, op.inputs[1], op.attrs.get("transpose_b", False))
    ctx.emit("matmul", [a, b], outputs=op.outputs)


@tf_mapper("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def batch_matmul(ctx, op):
    """`matmul` (adj_x/adj_y as explicit `transpose`)."""
    a = _maybe_transposed(ctx, op.inputs[0], op.attrs.get("adj_x", False))
    b = _maybe_transposed(ctx, op.inputs[1], op.attrs.get("adj_y", False))
    ctx.emit("matmul", [a, b], outputs=op.outputs)


_REDUCE = {"Mean": "reduce_mean", "Sum": "reduce_sum", "Max": "reduce_max",
           "Min": "reduce_min", "Prod": "reduce_prod"}


@tf_mapper(*_REDUCE)
def reduce(ctx, op):
    """`reduce_*` with constant axes and keep_dims."""
    x, axes_value = op.inputs
    axes = np.atleast_1d(ctx.require_const(axes_value, "the reduction axes")).tolist()
    rank = len(ctx.shape(x))
    axes = sorted(a % rank for a in axes)
    ctx.emit(_REDUCE[op.type], [x], {"axes": axes, "keepdims": bool(op.attrs.get("keep_dims"))},
             outputs=op.outputs)


_COMPARE = {"Greater": "greater", "Less": "less", "GreaterEqual": "greater_equal",
            "LessEqual": "less_equal", "Equal": "equal", "NotEqual": "not_equal"}


@tf_mapper(*_COMPARE)
def compare(ctx, op):
    """The comparison IR op of the same meaning."""
    ctx.emit(_COMPARE[op.type], op.inputs[:2], outputs=op.outputs)


@tf_mapper("Cumsum")
def cumsum(ctx, op):
    """`cumsum` along the constant axis, exclusive and reverse kept."""
    x, axis_value = op.inputs[:2]
    rank = len(ctx.shape(x))
    axis = int(ctx.require_const(axis_value, "the axis")) % rank
    ctx.emit("cumsum", [x], {"axis": axis, "exclusive": bool(op.attrs.get("exclusive")),
                             "reverse": bool(op.attrs.get("reverse"))}, outputs=op.outputs)


@tf_mapper("LogicalNot")
def logical_not(ctx, op):
    """`logical_not`."""
    ctx.emit("logical_not", op.inputs[:1], outputs=op.outputs)


@tf_mapper("ArgMax")
def argmax(ctx, op):
    """`argmax` (int64), `cast` to int32 when asked."""
    x, axis_value = op.inputs
    axis = int(ctx.require_const(axis_value, "the axis")) % len(ctx.shape(x))
    if op.attrs.get("output_type", "int64") == "int64":
        ctx.emit("argmax", [x], {"axis": axis}, outputs=op.outputs)
        return
    y = ctx.emit("argmax", [x], {"axis": axis}, dtype="int64", shape=ctx.shape(op.outputs[0]))
    ctx.emit("cast", [y], {"dtype": op.attrs["output_type"]}, outputs=op.outputs)


@tf_mapper("TopKV2")
def top_k(ctx, op):
    """`topk` over the last axis (constant k, sorted); int32 indices by `cast`."""
    from x2.ir import TensorInfo
    x = op.inputs[0]
    k = int(ctx.require_const(op.inputs[1], "k")) if len(op.inputs) > 1 else int(op.attrs["k"])
    rank = len(ctx.shape(x))
    values, indices = op.outputs[:2]
    attrs = {"k": k, "axis": rank - 1}
    if ctx.dtype(indices) == "int64":
        ctx.emit("topk", [x], attrs, outputs=[values, indices])
        return
    raw = ctx.graph.fresh_name(f"{op.name}/indices64")
    ctx.emit("topk", [x], attrs, outputs=[values, raw])
    ctx.graph.info[raw] = TensorInfo("int64", ctx.shape(indices))
    ctx.emit("cast", [raw], {"dtype": ctx.dtype(indices) or "int32"}, outputs=[indices])
