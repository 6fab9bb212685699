"""Arithmetic, comparisons, matrix products and reductions."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from ._util import (args, axes, axis, cast_to, is_value, operand, result_type, type_category,
                    unsupported)
from .sizes import is_size

_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow",
           "maximum": "maximum", "minimum": "minimum", "eq": "equal", "ne": "not_equal",
           "gt": "greater", "ge": "greater_equal", "lt": "less", "le": "less_equal",
           "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
           "bitwise_xor": "bitwise_xor", "remainder": "mod",
           # `a & b` on tensors, as torch.export captures it (decomposed: bitwise_and)
           "__and__": "bitwise_and", "__or__": "bitwise_or"}


def _scaled(ctx, op, value: str, alpha, like: str) -> str:
    """`value * alpha` for the alpha argument of add/sub (1 needs no node)."""
    if alpha in (None, 1):
        return value
    return ctx.emit("mul", [value, operand(ctx, op, alpha, like)], shape=ctx.shape(value),
                    hint="alpha")


# The ATen overloads that exist (checked against torch 2.13's op registry).
_OVERLOADS = {"add": ("Tensor", "Scalar"), "sub": ("Tensor", "Scalar"),
              "mul": ("Tensor", "Scalar"), "div": ("Tensor", "Scalar"),
              **{name: ("Tensor", "Scalar") for name in (
                  "eq", "ne", "gt", "ge", "lt", "le", "bitwise_and", "bitwise_or",
                  "bitwise_xor", "remainder")},
              "pow": ("Tensor_Scalar", "Tensor_Tensor", "Scalar"),
              "maximum": ("default",), "minimum": ("default",),
              "__and__": ("Tensor",), "__or__": ("Tensor",)}


@torch_mapper(*[f"aten.{name}.{overload}" for name, overloads in _OVERLOADS.items()
                for overload in overloads])
def binary(ctx, op):
    """the elementwise IR op (add/sub alpha becomes a mul; Python scalars become
    constants). Operands are cast to torch's result type first, so that every
    target computes in the dtype torch does (true division of ints in float)."""
    name = op.type.split(".")[1]
    a, b = args(op)[:2]
    # a size computed from a dynamic dim (cache_position + past length) is a Python int to torch
    common = result_type(ctx, [0 if is_size(x) else x for x in (a, b)])
    if name == "div" and type_category(common) < 2:
        common = "float32"   # torch's true division: ints give the default float dtype
    a, b = (cast_to(ctx, x.value, common) if is_size(x) else
            cast_to(ctx, x, common) if is_value(x) else
            ctx.constant(np.array(x, dtype=common), "scalar") for x in (a, b))
    if name in ("add", "sub"):
        b = _scaled(ctx, op, b, op.attrs["kwargs"].get("alpha"), a)
    ctx.emit(_BINARY[name], [a, b], outputs=op.outputs)



@torch_mapper("aten.div.Tensor_mode", "aten.div.Scalar_mode")
def div_rounding(ctx, op):
    """`floor_div` (rounding_mode="floor": toward -inf, as torch and Python
    round it); "trunc" toward 0: sign(a / b) * floor(|a / b|), for ints in
    float64."""
    a, b = args(op)[:2]
    mode = op.attrs["kwargs"].get("rounding_mode", (args(op) + [None] * 3)[2])
    if mode is None:
        binary(ctx, op)
        return
    common = result_type(ctx, [a, b])
    a, b = (cast_to(ctx, x, common) if is_value(x) else
            ctx.constant(np.array(x, dtype=common), "scalar") for x in (a, b))
    if mode == "floor":
        ctx.emit("floor_div", [a, b], outputs=op.outputs)
        return
    shape = ctx.shape(op.outputs[0])

    def emit(name, inputs, dtype=common, hint=""):
        return ctx.emit(name, inputs, dtype=dtype, shape=shape, hint=hint or name)

    # sign(q) * floor(|q|): one rounding op, no comparison; ints in float64,
    # exact below 2**53
    wide = common if type_category(common) == 2 else "float64"
    quotient = emit("div", [cast_to(ctx, a, wide), cast_to(ctx, b, wide)], wide, "quotient")
    magnitude = emit("floor", [emit("abs", [quotient], wide, "size")], wide, "whole")
    truncated = emit("mul", [emit("sign", [quotient], wide), magnitude], wide, "truncated")
    ctx.alias(op.outputs[0], cast_to(ctx, truncated, common))


@torch_mapper("aten.cumsum.default")
def cumsum(ctx, op):
    """`cumsum` along dim, in the dtype asked for (the input cast first, as torch does)."""
    x, dim = args(op)[:2]
    if op.attrs["kwargs"].get("dtype") is not None:
        x = cast_to(ctx, x, ctx.dtype(op.outputs[0]))
    ctx.emit("cumsum", [x], {"axis": axis(ctx, x, dim)}, outputs=op.outputs)


@torch_mapper("aten.rsub.Scalar", "aten.rsub.Tensor")
def rsub(ctx, op):
    """`sub(other, x * alpha)`."""
    x, other = args(op)[:2]
    x = _scaled(ctx, op, x, op.attrs["kwargs"].get("alpha"), x)
    ctx.emit("sub", [operand(ctx, op, other, x), x], outputs=op.outputs)


@torch_mapper("aten.where.self")
def where(ctx, op):
    """`where`."""
    cond, a, b = args(op)
    like = a if is_value(a) else b
    ctx.emit("where", [cond, operand(ctx, op, a, like), operand(ctx, op, b, like)],
             outputs=op.outputs)


@torch_mapper("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def matmul(ctx, op):
    """`matmul` (a constant 2-D right operand becomes `dense` in the fuse pass)."""
    ctx.emit("matmul", op.inputs[:2], outputs=op.outputs)


@torch_mapper("aten.addmm.default")
def addmm(ctx, op):
    """`matmul` + `add` of the bias (fused into `dense` for constant weights)."""
    bias, a, b = args(op)[:3]
    beta, alpha = op.attrs["kwargs"].get("beta", 1), op.attrs["kwargs"].get("alpha", 1)
    out_shape = ctx.shape(op.outputs[0])
    product = ctx.emit("matmul", [a, b], shape=out_shape, hint="mm")
    product = _scaled(ctx, op, product, alpha, a)
    bias = _scaled(ctx, op, bias, beta, a)
    ctx.emit("add", [product, bias], outputs=op.outputs)


@torch_mapper("aten.linear.default")
def linear(ctx, op):
    """`matmul` by the transposed weight (+ bias): `dense` after the fuse pass."""
    x, w, b = args(op, None, None, None)
    wt = ctx.emit("transpose", [w], {"perm": [1, 0]}, shape=ctx.shape(w)[::-1], hint="wt")
    if b is None:
        ctx.emit("matmul", [x, wt], outputs=op.outputs)
        return
    y = ctx.emit("matmul", [x, wt], shape=ctx.shape(op.outputs[0]), hint="matmul")
    ctx.emit("add", [y, b], outputs=op.outputs)


_REDUCE = {"mean": "reduce_mean", "sum": "reduce_sum", "amax": "reduce_max",
           "amin": "reduce_min", "any": "reduce_any", "prod": "reduce_prod"}


@torch_mapper("aten.mean.dim", "aten.sum.dim_IntList", "aten.amax.default",
              "aten.amin.default", "aten.any.dim", "aten.any.dims", "aten.mean.default",
              "aten.sum.default")
def reduce(ctx, op):
    """the `reduce_*` op over dim (all axes when dim is empty)."""
    x, dims, keepdim = args(op, None, None, False)[:3]
    if op.attrs["kwargs"].get("dtype") is not None:
        raise unsupported(op, "a reduction with a dtype argument is not supported yet")
    ctx.emit(_REDUCE[op.type.split(".")[1]], [x],
             {"axes": axes(ctx, x, dims), "keepdims": bool(keepdim)}, outputs=op.outputs)


@torch_mapper("aten.argmax.default")
def argmax(ctx, op):
    """`argmax` along dim (dim=None, the flattened input, is refused)."""
    x, dim, keepdim = args(op, None, None, False)[:3]
    if dim is None:
        raise unsupported(op, "argmax over the flattened input (dim=None) is not supported")
    ctx.emit("argmax", [x], {"axis": axis(ctx, x, dim), "keepdims": bool(keepdim)},
             outputs=op.outputs)


@torch_mapper("aten.var.correction", "aten.var.dim")
def var(ctx, op):
    """`reduce_mean` of squared deviations, times n/(n - correction)."""
    x, dims = args(op, None, None)[:2]
    kwargs = op.attrs["kwargs"]
    correction = kwargs.get("correction", 1 if kwargs.get("unbiased", True) else 0)
    keepdim = bool(kwargs.get("keepdim", (args(op) + [None, None, False])[3]
                              if op.type == "aten.var.dim" else False))
    red = axes(ctx, x, dims)
    shape = ctx.shape(x)
    kept = tuple(1 if i in red else d for i, d in enumerate(shape))
    mean = ctx.emit("reduce_mean", [x], {"axes": red, "keepdims": True}, shape=kept,
                    hint="mean")
    dev = ctx.emit("sub", [x, mean], shape=shape, hint="dev")
    sq = ctx.emit("mul", [dev, dev], shape=shape, hint="sq")
    count = int(np.prod([shape[i] for i in red]))
    if correction in (0, None):
        ctx.emit("reduce_mean", [sq], {"axes": red, "keepdims": keepdim}, outputs=op.outputs)
        return
    total = ctx.emit("reduce_mean", [sq], {"axes": red, "keepdims": keepdim},
                     shape=ctx.shape(op.outputs[0]), hint="var")
    factor = ctx.constant(np.array(count / (count - correction), ctx.dtype(x)), "bessel")
    ctx.emit("mul", [total, factor], outputs=op.outputs)


@torch_mapper("aten.linalg_vector_norm.default")
def linalg_vector_norm(ctx, op):
    """the p-norm over dim from `reduce_*`: sqrt of the sum of squares (2), the
    sum of abs (1), max/min of abs (inf/-inf), the count of non-zeros (0),
    else pow(sum(pow(abs(x), p)), 1/p). A dtype argument is refused."""
    x, p, dims, keepdim = args(op, None, 2, None, False)
    if op.attrs["kwargs"].get("dtype") is not None:
        raise unsupported(op, "a vector norm with a dtype argument is not supported yet")
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise unsupported(op, f"the norm order must be a number, got {p!r}")
    dtype, shape = ctx.dtype(x), ctx.shape(x)
    red = axes(ctx, x, dims)
    attrs = {"axes": red, "keepdims": bool(keepdim)}
    p = float(p)

    def const(value, hint):
        return ctx.constant(np.array(value, dtype), hint)

    if p == 2:
        sq = ctx.emit("mul", [x, x], shape=shape, hint="square")
        total = ctx.emit("reduce_sum", [sq], attrs, shape=ctx.shape(op.outputs[0]), hint="sum")
        ctx.emit("sqrt", [total], outputs=op.outputs)
        return
    if p == 0:
        nonzero = ctx.emit("not_equal", [x, const(0, "zero")], dtype="bool", shape=shape,
                           hint="nonzero")
        count = ctx.emit("cast", [nonzero], {"dtype": dtype}, dtype=dtype, shape=shape,
                         hint="count")
        ctx.emit("reduce_sum", [count], attrs, outputs=op.outputs)
        return
    mag = ctx.emit("abs", [x], shape=shape, hint="abs")
    if p in (np.inf, -np.inf):
        ctx.emit("reduce_max" if p > 0 else "reduce_min", [mag], attrs, outputs=op.outputs)
    elif p == 1:
        ctx.emit("reduce_sum", [mag], attrs, outputs=op.outputs)
    else:
        powered = ctx.emit("pow", [mag, const(p, "p")], shape=shape, hint="pow")
        total = ctx.emit("reduce_sum", [powered], attrs, shape=ctx.shape(op.outputs[0]),
                         hint="sum")
        ctx.emit("pow", [total, const(1 / p, "inv_p")], outputs=op.outputs)
