"""ONNX ops written as short compositions of IR ops: the reductions
ReduceL1/L2/SumSquare/LogSum/LogSumExp, CastLike, IsInf's sign filters,
Mean, ArgMin, Hardmax, Shrink, ThresholdedRelu, PRelu, LpNormalization,
CumSum, Tile, Trilu and the losses NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss. Every step keeps ONNX's dtype."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import check_axis, const_ints, norm_axes, rank_of, refuse_empty_max


def _scalar(ctx, value, like: str, hint: str = "const") -> str:
    return ctx.constant(np.array(value, ctx.dtype(like) or "float32"), hint)


@onnx_mapper("CastLike")
def cast_like(ctx, op):
    """`cast` to the dtype of the second input."""
    dtype = ctx.dtype(op.inputs[1])
    if dtype is None:
        raise ConversionError(f"CastLike '{op.name}': the target input's dtype is unknown")
    ctx.emit("cast", op.inputs[:1], {"dtype": dtype}, outputs=op.outputs)


@onnx_mapper("IsInf", since=10)
def is_inf(ctx, op):
    """`isinf`, and'ed with x > 0 / x < 0 when one sign is not detected."""
    positive, negative = op.attrs.get("detect_positive", 1), op.attrs.get("detect_negative", 1)
    x = op.inputs[0]
    if positive and negative:
        ctx.emit("isinf", [x], outputs=op.outputs)
        return
    if not positive and not negative:
        ctx.emit("identity", [ctx.constant(np.zeros(ctx.shape(x) or (), bool))],
                 outputs=op.outputs)
        if ctx.shape(x) is None or None in ctx.shape(x):
            raise ConversionError(f"IsInf '{op.name}': detects nothing on a dynamic shape")
        return
    inf = ctx.emit("isinf", [x], dtype="bool")
    side = ctx.emit("greater" if positive else "less", [x, _scalar(ctx, 0, x)], dtype="bool")
    ctx.emit("bitwise_and", [inf, side], outputs=op.outputs)


@onnx_mapper("Mean")
def mean(ctx, op):
    """A chain of `add`, divided by the number of inputs."""
    acc = op.inputs[0]
    for value in op.inputs[1:]:
        acc = ctx.emit("add", [acc, value], hint="sum")
    ctx.emit("div", [acc, _scalar(ctx, len(op.inputs), op.inputs[0], "count")],
             outputs=op.outputs)


def _axes(ctx, op):
    """The reduction's axes (attribute before opset 18, input from 18), all
    axes when none are given, or None for noop_with_empty_axes."""
    rank = rank_of(ctx, op, op.inputs[0])
    if ctx.source.version >= 18:
        axes = const_ints(ctx, op, 1, "the axes")
    else:
        axes = op.attrs.get("axes")
    if not axes:
        if op.attrs.get("noop_with_empty_axes"):
            return None
        axes = list(range(rank))
    return sorted({check_axis(op, a, rank, "axis") for a in axes})


_NORM_REDUCE = ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp")


@onnx_mapper(*_NORM_REDUCE)
def reduce_composed(ctx, op):
    """abs / square / exp, `reduce_sum`, then sqrt / log (LogSumExp shifted by
    the max, as numerically stable as onnx's reference)."""
    x = op.inputs[0]
    axes = _axes(ctx, op)
    keepdims = bool(op.attrs.get("keepdims", 1))
    if axes is None:  # noop_with_empty_axes: the elementwise part only
        pre = {"ReduceL1": "abs", "ReduceL2": "abs", "ReduceSumSquare": "square",
               "ReduceLogSum": "identity", "ReduceLogSumExp": "identity"}[op.type]
        ctx.emit(pre, [x], outputs=op.outputs)
        return
    reduce = {"axes": axes, "keepdims": keepdims}
    if op.type == "ReduceL1":
        ctx.emit("reduce_sum", [ctx.emit("abs", [x])], reduce, outputs=op.outputs)
    elif op.type == "ReduceSumSquare":
        ctx.emit("reduce_sum", [ctx.emit("square", [x])], reduce, outputs=op.outputs)
    elif op.type == "ReduceL2":
        total = ctx.emit("reduce_sum", [ctx.emit("square", [x])], reduce)
        if np.dtype(ctx.dtype(x) or "float32").kind in "iu":
            raise ConversionError(f"ReduceL2 '{op.name}': integer inputs are not supported")
        ctx.emit("sqrt", [total], outputs=op.outputs)
    elif op.type == "ReduceLogSum":
        ctx.emit("log", [ctx.emit("reduce_sum", [x], reduce)], outputs=op.outputs)
    else:
        refuse_empty_max(ctx, op, x, axes)
        peak = ctx.emit("reduce_max", [x], {"axes": axes, "keepdims": True})
        # An all -inf slice would give nan from inf - inf: shift by 0 there.
        finite = ctx.emit("where", [ctx.emit("isinf", [peak], dtype="bool"),
                                    _scalar(ctx, 0, x), peak], dtype=ctx.dtype(x))
        shifted = ctx.emit("exp", [ctx.emit("sub", [x, finite])])
        total = ctx.emit("log", [ctx.emit("reduce_sum", [shifted], reduce)])
        if not keepdims:
            finite = ctx.emit("squeeze", [finite], {"axes": axes})
        ctx.emit("add", [total, finite], outputs=op.outputs)


@onnx_mapper("ArgMin")
def argmin(ctx, op):
    """`argmax` of the negated input (select_last_index: of the reversed input)."""
    x = op.inputs[0]
    if np.dtype(ctx.dtype(x) or "float32").kind == "u":
        raise ConversionError(f"ArgMin '{op.name}': unsigned inputs are not supported")
    _arg(ctx, op, ctx.emit("neg", [x]))


@onnx_mapper("ArgMax")
def argmax_last(ctx, op):
    """`argmax(axis, keepdims)`; select_last_index=1 reverses the axis first."""
    _arg(ctx, op, op.inputs[0])


def _arg(ctx, op, x):
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs.get("axis", 0)])[0]
    keepdims = bool(op.attrs.get("keepdims", 1))
    if not op.attrs.get("select_last_index"):
        ctx.emit("argmax", [x], {"axis": axis, "keepdims": keepdims}, outputs=op.outputs)
        return
    size = (ctx.shape(op.inputs[0]) or [None] * (axis + 1))[axis]
    if size is None:
        raise ConversionError(f"{op.type} '{op.name}': select_last_index on a dynamic axis")
    index = ctx.constant(np.arange(size - 1, -1, -1, dtype=np.int64), "reversed")
    flipped = ctx.emit("gather", [x, index], {"axis": axis})
    first = ctx.emit("argmax", [flipped], {"axis": axis, "keepdims": keepdims}, dtype="int64")
    ctx.emit("sub", [ctx.constant(np.array(size - 1, np.int64), "last"), first],
             outputs=op.outputs)


@onnx_mapper("Hardmax", since=13)
def hardmax(ctx, op):
    """1 where `argmax` along axis (the first maximum), else 0."""
    x = op.inputs[0]
    rank = rank_of(ctx, op, x)
    axis = check_axis(op, op.attrs.get("axis", -1), rank)
    size = (ctx.shape(x) or [None] * rank)[axis]
    if size is None:
        raise ConversionError(f"Hardmax '{op.name}': needs a static size along axis {axis}")
    top = ctx.emit("argmax", [x], {"axis": axis, "keepdims": True}, dtype="int64")
    positions = np.arange(size, dtype=np.int64).reshape([-1] + [1] * (rank - 1 - axis))
    hit = ctx.emit("equal", [top, ctx.constant(positions, "positions")], dtype="bool")
    ctx.emit("cast", [hit], {"dtype": ctx.dtype(x)}, outputs=op.outputs)


@onnx_mapper("Shrink")
def shrink(ctx, op):
    """x + bias below -lambd, x - bias above lambd, else 0."""
    x = op.inputs[0]
    lambd, bias = float(op.attrs.get("lambd", 0.5)), float(op.attrs.get("bias", 0.0))
    dtype = ctx.dtype(x)
    low = ctx.emit("less", [x, _scalar(ctx, -lambd, x)], dtype="bool")
    high = ctx.emit("greater", [x, _scalar(ctx, lambd, x)], dtype="bool")
    up = ctx.emit("add", [x, _scalar(ctx, bias, x)])
    down = ctx.emit("sub", [x, _scalar(ctx, bias, x)])
    inner = ctx.emit("where", [high, down, _scalar(ctx, 0, x)], dtype=dtype)
    ctx.emit("where", [low, up, inner], outputs=op.outputs)


@onnx_mapper("ThresholdedRelu")
def thresholded_relu(ctx, op):
    """x where x > alpha, else 0."""
    x = op.inputs[0]
    above = ctx.emit("greater", [x, _scalar(ctx, float(op.attrs.get("alpha", 1.0)), x)],
                     dtype="bool")
    ctx.emit("where", [above, x, _scalar(ctx, 0, x)], outputs=op.outputs)


@onnx_mapper("PRelu")
def prelu(ctx, op):
    """where(x < 0, x * slope, x), the slope broadcast as ONNX does."""
    x, slope = op.inputs[:2]
    shape, weights = ctx.shape(x), ctx.const(slope)
    if shape and len(shape) > 2 and weights is not None and weights.ndim == 1 and \
            weights.size == shape[1] and weights.size not in (1, shape[-1]):
        # Opset < 7 applied a [C] slope per channel (models upgraded by
        # onnx.version_converter keep it so); numpy broadcasting cannot mean it.
        slope = ctx.constant(weights.reshape([-1] + [1] * (len(shape) - 2)), "slope")
    negative = ctx.emit("less", [x, _scalar(ctx, 0, x)], dtype="bool")
    scaled = ctx.emit("mul", [x, slope], dtype=ctx.dtype(x))
    ctx.emit("where", [negative, scaled, x], outputs=op.outputs)


@onnx_mapper("LpNormalization")
def lp_normalization(ctx, op):
    """x / (L1 or L2 norm along axis), 0 where the norm is 0."""
    x = op.inputs[0]
    rank = rank_of(ctx, op, x)
    axis = check_axis(op, op.attrs.get("axis", -1), rank)
    p = op.attrs.get("p", 2)
    if p not in (1, 2):
        raise ConversionError(f"LpNormalization '{op.name}': p={p} (ONNX allows 1 or 2)")
    reduce = {"axes": [axis], "keepdims": True}
    if p == 1:
        norm = ctx.emit("reduce_sum", [ctx.emit("abs", [x])], reduce)
    else:
        norm = ctx.emit("sqrt", [ctx.emit("reduce_sum", [ctx.emit("square", [x])], reduce)])
    zero = ctx.emit("equal", [norm, _scalar(ctx, 0, x)], dtype="bool")
    safe = ctx.emit("where", [zero, _scalar(ctx, 1, x), norm], dtype=ctx.dtype(x))
    ctx.emit("div", [x, safe], outputs=op.outputs)


@onnx_mapper("CumSum")
def cumsum(ctx, op):
    """`cumsum(axis, exclusive, reverse)` with a constant axis."""
    axis = const_ints(ctx, op, 1, "the axis")
    if axis is None or len(axis) != 1:
        raise ConversionError(f"CumSum '{op.name}': the axis must be one constant integer")
    axis = check_axis(op, axis[0], rank_of(ctx, op, op.inputs[0]))
    ctx.emit("cumsum", op.inputs[:1], {"axis": axis,
                                       "exclusive": bool(op.attrs.get("exclusive", 0)),
                                       "reverse": bool(op.attrs.get("reverse", 0))},
             outputs=op.outputs)


@onnx_mapper("Tile", since=6)
def tile(ctx, op):
    """`tile(repeats)` with constant repeats."""
    repeats = const_ints(ctx, op, 1, "the repeats")
    if repeats is None or any(r < 0 for r in repeats):
        raise ConversionError(f"Tile '{op.name}': repeats must be constant and non-negative")
    ctx.emit("tile", op.inputs[:1], {"repeats": repeats}, outputs=op.outputs)


@onnx_mapper("NegativeLogLikelihoodLoss")
def nll_loss(ctx, op):
    """-input[n, target[n, ...], ...] * weight[target], ignored targets 0;
    reduced as ONNX says (mean: divided by the weights' sum)."""
    _nll(ctx, op, op.inputs[0], op.outputs[0])


@onnx_mapper("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy(ctx, op):
    """`log_softmax` over axis 1, then NegativeLogLikelihoodLoss; the optional
    second output is the log-probabilities."""
    rank = rank_of(ctx, op, op.inputs[0])
    if rank < 2:
        raise ConversionError(f"{op.type} '{op.name}': scores must have rank >= 2")
    log_prob = ctx.emit("log_softmax", [op.inputs[0]], {"axis": 1},
                        outputs=[op.outputs[1]] if len(op.outputs) > 1 and op.outputs[1]
                        else None)
    _nll(ctx, op, log_prob, op.outputs[0])


def _nll(ctx, op, scores: str, output: str) -> None:
    target = op.inputs[1]
    weight = op.inputs[2] if len(op.inputs) > 2 and op.inputs[2] else None
    reduction = op.attrs.get("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise ConversionError(f"{op.type} '{op.name}': reduction={reduction!r}")
    dtype = ctx.dtype(op.inputs[0]) or "float32"
    t_shape = ctx.shape(target)
    target = ctx.emit("cast", [target], {"dtype": "int64"}, dtype="int64", shape=t_shape)
    ignore = op.attrs.get("ignore_index")
    keep = None
    if ignore is not None:
        keep = ctx.emit("not_equal", [target, ctx.constant(np.array(ignore, np.int64), "ignore")],
                        dtype="bool", shape=t_shape)
        target = ctx.emit("where", [keep, target, ctx.constant(np.array(0, np.int64), "zero")],
                          dtype="int64", shape=t_shape)
    index = ctx.emit("unsqueeze", [target], {"axes": [1]}, dtype="int64")
    picked = ctx.emit("squeeze", [ctx.emit("gather_elements", [scores, index], {"axis": 1},
                                           dtype=dtype)], {"axes": [1]}, dtype=dtype,
                      shape=t_shape)
    if weight is not None:
        w = ctx.emit("gather", [weight, target], {"axis": 0}, dtype=dtype, shape=t_shape)
    else:
        if t_shape is None or None in t_shape:
            raise ConversionError(f"{op.type} '{op.name}': needs a static target shape")
        w = ctx.constant(np.ones(t_shape, dtype), "ones")
    if keep is not None:
        w = ctx.emit("where", [keep, w, ctx.constant(np.array(0, dtype), "zero_w")],
                     dtype=dtype, shape=t_shape)
    loss = ctx.emit("neg", [ctx.emit("mul", [picked, w], dtype=dtype)], dtype=dtype,
                    shape=t_shape, outputs=[output] if reduction == "none" else None)
    if reduction == "none":
        return
    axes = list(range(len(t_shape)))
    total = ctx.emit("reduce_sum", [loss], {"axes": axes, "keepdims": False},
                     outputs=[output] if reduction == "sum" else None)
    if reduction == "mean":
        ctx.emit("div", [total, ctx.emit("reduce_sum", [w], {"axes": axes, "keepdims": False})],
                 outputs=[output])


@onnx_mapper("Trilu", since=14)
def trilu(ctx, op):
    """`trilu(upper, k)` with a constant k (default 0)."""
    k = const_ints(ctx, op, 1, "k")
    if k is not None and len(k) != 1:
        raise ConversionError(f"Trilu '{op.name}': k must be one integer")
    rank_of(ctx, op, op.inputs[0])
    ctx.emit("trilu", op.inputs[:1], {"upper": bool(op.attrs.get("upper", 1)),
                                      "k": k[0] if k else 0}, outputs=op.outputs)
