"""Elementwise arithmetic, matrix products and reductions."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import check_axis, const_ints, rank_of, refuse_empty_max

_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow",
           "Equal": "equal", "Greater": "greater", "Less": "less",
           "GreaterOrEqual": "greater_equal", "LessOrEqual": "less_equal",
           "And": "bitwise_and", "Or": "bitwise_or", "Xor": "bitwise_xor",
           "BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or", "BitwiseXor": "bitwise_xor"}


@onnx_mapper(*_BINARY)
def binary(ctx, op):
    """The broadcasting binary IR op (arithmetic, comparisons; And/Or/Xor are the
    bitwise ops on bool). Integer Div truncates toward zero and Pow keeps the
    base's dtype, as ONNX says (both computed in float64, then cast back;
    uint64 Div is refused: float64 is not exact for its values)."""
    a, b = op.inputs[:2]
    kind = np.dtype(ctx.dtype(a) or "float32").kind
    if op.type == "Div" and kind in "iu":
        if ctx.dtype(a) == "uint64":
            # float64 holds integers exactly only below 2**53; uint64 values reach 2**64.
            raise ConversionError(f"Div '{op.name}': uint64 division is not supported (x2 "
                                  f"divides integers in float64, exact below 2**53 only); "
                                  f"cast to int64 or float64 in the model if its values allow")
        q = ctx.emit("div", [_f64(ctx, a), _f64(ctx, b)], dtype="float64")
        negative = ctx.emit("less", [q, ctx.constant(np.array(0.0), "zero")], dtype="bool")
        q = ctx.emit("where", [negative, ctx.emit("ceil", [q]), ctx.emit("floor", [q])],
                     dtype="float64")
        ctx.emit("cast", [q], {"dtype": ctx.dtype(a)}, outputs=op.outputs)
        return
    if op.type == "Pow" and ctx.dtype(b) and ctx.dtype(b) != ctx.dtype(a):
        if kind in "iu":
            p = ctx.emit("pow", [_f64(ctx, a), _f64(ctx, b)], dtype="float64")
            ctx.emit("cast", [p], {"dtype": ctx.dtype(a)}, outputs=op.outputs)
            return
        b = ctx.emit("cast", [b], {"dtype": ctx.dtype(a)}, dtype=ctx.dtype(a))
    ctx.emit(_BINARY[op.type], [a, b], outputs=op.outputs)


def _f64(ctx, value: str) -> str:
    return ctx.emit("cast", [value], {"dtype": "float64"}, dtype="float64")


@onnx_mapper("Mod")
def mod(ctx, op):
    """`mod` (Python/numpy sign convention; fmod=1 is refused)."""
    if op.attrs.get("fmod"):
        raise ConversionError(f"Mod '{op.name}': fmod=1 (C-style remainder) is not supported")
    ctx.emit("mod", op.inputs[:2], outputs=op.outputs)


_VARIADIC = {"Sum": "add", "Max": "maximum", "Min": "minimum"}


@onnx_mapper(*_VARIADIC)
def variadic(ctx, op):
    """A chain of `add` / `maximum` / `minimum` over all inputs."""
    ir_op = _VARIADIC[op.type]
    if len(op.inputs) == 1:
        ctx.alias(op.outputs[0], op.inputs[0])
        return
    acc = op.inputs[0]
    for value in op.inputs[1:-1]:
        acc = ctx.emit(ir_op, [acc, value], shape=ctx.shape(op.outputs[0]), hint=ir_op)
    ctx.emit(ir_op, [acc, op.inputs[-1]], outputs=op.outputs)


@onnx_mapper("Where")
def where(ctx, op):
    """`where(cond, a, b)`."""
    ctx.emit("where", op.inputs[:3], outputs=op.outputs)


@onnx_mapper("MatMul")
def matmul(ctx, op):
    """`matmul`; a constant 2-D weight becomes `dense` in the fuse pass."""
    _check_inner(ctx, op, ctx.shape(op.inputs[0]), ctx.shape(op.inputs[1]))
    ctx.emit("matmul", op.inputs[:2], outputs=op.outputs)


def _check_inner(ctx, op, a, b) -> None:
    """numpy.matmul's rule: the inner dimensions agree (where both are known)."""
    if a is None or b is None or not a or not b:
        return
    k_a = a[-1]
    k_b = b[0] if len(b) == 1 else b[-2]
    if k_a is not None and k_b is not None and k_a != k_b:
        raise ConversionError(f"{op.type} '{op.name}': inner dimensions do not match: "
                              f"{list(a)} @ {list(b)} ({k_a} != {k_b})")


@onnx_mapper("Gemm")
def gemm(ctx, op):
    """`alpha * A' @ B' + beta * C` as transposes (folded on constants), matmul and add."""
    a, b = op.inputs[:2]
    alpha, beta = float(op.attrs.get("alpha", 1.0)), float(op.attrs.get("beta", 1.0))
    out_shape = ctx.shape(op.outputs[0])
    if op.attrs.get("transA"):
        shape = ctx.shape(a)
        a = ctx.emit("transpose", [a], {"perm": [1, 0]},
                     shape=None if shape is None else tuple(shape[::-1]), hint="a_t")
    weight = ctx.const(b)
    if op.attrs.get("transB"):
        if weight is not None:
            weight = np.ascontiguousarray(weight.T)
            b = ctx.constant(weight, "weight_t")
        else:
            shape = ctx.shape(b)
            b = ctx.emit("transpose", [b], {"perm": [1, 0]},
                         shape=None if shape is None else tuple(shape[::-1]), hint="b_t")
    if alpha != 1.0:
        if weight is not None:
            b = ctx.constant((ctx.const(b) * alpha).astype(ctx.const(b).dtype), "weight_scaled")
        else:
            a = ctx.emit("mul", [a, ctx.constant(np.array(alpha, ctx.dtype(a)))],
                         shape=ctx.shape(a), hint="alpha")
    has_c = len(op.inputs) > 2 and op.inputs[2]
    if not has_c:
        ctx.emit("matmul", [a, b], outputs=op.outputs)
        return
    product = ctx.emit("matmul", [a, b], shape=out_shape, dtype=ctx.dtype(op.inputs[0]),
                       hint="matmul")
    c = op.inputs[2]
    if beta != 1.0:
        bias = ctx.const(c)
        c = ctx.constant((bias * beta).astype(bias.dtype), "bias_scaled") if bias is not None \
            else ctx.emit("mul", [c, ctx.constant(np.array(beta, ctx.dtype(c)))], hint="beta")
    ctx.emit("add", [product, c], outputs=op.outputs)


_REDUCE = {"ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max",
           "ReduceMin": "reduce_min", "ReduceProd": "reduce_prod"}


def _reduce(ctx, op, axes):
    rank = rank_of(ctx, op, op.inputs[0])
    keepdims = bool(op.attrs.get("keepdims", 1))
    if axes is None or axes == []:
        if op.attrs.get("noop_with_empty_axes"):
            ctx.alias(op.outputs[0], op.inputs[0])
            return
        axes = list(range(rank))
    axes = sorted({check_axis(op, a, rank, "axis") for a in axes})
    if op.type in ("ReduceMax", "ReduceMin"):
        refuse_empty_max(ctx, op, op.inputs[0], axes)
    ctx.emit(_REDUCE[op.type], op.inputs[:1], {"axes": axes,
                                               "keepdims": keepdims}, outputs=op.outputs)


@onnx_mapper(*_REDUCE, until=18)
def reduce_attr_axes(ctx, op):
    """`reduce_*` with axes from the attribute (opset < 18; ReduceSum < 13)."""
    if op.type == "ReduceSum" and ctx.source.version >= 13:
        _reduce(ctx, op, const_ints(ctx, op, 1, "the axes"))
        return
    _reduce(ctx, op, op.attrs.get("axes"))


@onnx_mapper(*_REDUCE, since=18)
def reduce_input_axes(ctx, op):
    """`reduce_*` with axes from the constant second input (opset >= 18)."""
    _reduce(ctx, op, const_ints(ctx, op, 1, "the axes"))
