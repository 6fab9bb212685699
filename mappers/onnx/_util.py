"""Helpers shared by the ONNX mappers."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.ir.kernels import same_upper_pads


def const_ints(ctx, op, index: int, what: str) -> list[int] | None:
    """A constant integer input as a list; None when the input is absent."""
    if len(op.inputs) <= index or not op.inputs[index]:
        return None
    return np.asarray(ctx.require_const(op.inputs[index], what)).astype(np.int64).reshape(-1) \
        .tolist()


def rank_of(ctx, op, value: str) -> int:
    shape = ctx.shape(value)
    if shape is None:
        raise ConversionError(f"{op.type} '{op.name}': the rank of '{value}' is unknown "
                              f"(run onnx shape inference or give --input-shape)")
    return len(shape)


def choice(op, attr: str, default, allowed) -> object:
    """An enum-like attribute checked against the values x2 handles: anything
    else is an error naming the node, the attribute and the allowed values."""
    value = op.attrs.get(attr, default)
    if value not in allowed:
        raise ConversionError(f"{op.type} '{op.name}': attribute {attr}={value!r} is not "
                              f"supported (allowed: {', '.join(repr(a) for a in allowed)})")
    return value


def check_axis(op, axis, rank: int | None, what: str = "axis") -> int:
    """An axis in [-rank, rank), made non-negative; the rank may be unknown
    only for a non-negative axis."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise ConversionError(f"{op.type} '{op.name}': {what} {axis!r} is not an integer")
    axis = int(axis)
    if rank is None:
        if axis < 0:
            raise ConversionError(f"{op.type} '{op.name}': {what} {axis} is negative and the "
                                  f"rank of the input is unknown")
        return axis
    if not -rank <= axis < rank:
        raise ConversionError(f"{op.type} '{op.name}': {what} {axis} is out of range for a "
                              f"rank-{rank} tensor (allowed: {-rank} to {rank - 1})")
    return axis % rank


def positive_ints(op, attr: str, values, minimum: int = 1) -> list[int]:
    values = list(values)
    if any(not isinstance(v, (int, np.integer)) or v < minimum for v in values):
        raise ConversionError(f"{op.type} '{op.name}': attribute {attr}={values} must hold "
                              f"integers >= {minimum}")
    return [int(v) for v in values]


_AUTO_PAD = ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")


# An auto_pad=SAME_UPPER window over a 2-D image whose size is known only at
# run time: the IR's auto_pad (each target computes the pads from the input).
SAME_AT_RUN_TIME = "SAME_UPPER"


def spatial_pads(ctx, op, kernel: list[int], strides: list[int], dilations: list[int]):
    """Explicit [top, left, bottom, right] pads for ONNX pads / auto_pad, or
    SAME_AT_RUN_TIME for SAME_UPPER over unknown 2-D sizes whose pads depend
    on them."""
    auto_pad = choice(op, "auto_pad", "NOTSET", _AUTO_PAD)
    positive_ints(op, "kernel_shape", kernel)
    positive_ints(op, "strides", strides)
    positive_ints(op, "dilations", dilations)
    if auto_pad in ("NOTSET", "VALID"):
        pads = op.attrs.get("pads", [0] * 2 * len(kernel)) if auto_pad == "NOTSET" else \
            [0] * 2 * len(kernel)
        if len(pads) != 2 * len(kernel):
            raise ConversionError(f"{op.type} '{op.name}': pads {list(pads)} must hold "
                                  f"{2 * len(kernel)} values (begin and end per spatial axis)")
        return positive_ints(op, "pads", pads, minimum=0)
    shape = ctx.shape(op.inputs[0])
    sizes = None if shape is None else shape[2:]
    if sizes is not None and len(sizes) == len(kernel) and any(s is None for s in sizes):
        varies = [len({tuple(same_upper_pads([s * 64 + r], [k], [s], [d])) for r in range(s)})
                  > 1 for s, k, d in zip(strides, kernel, dilations)]
        if not any(v for v, size in zip(varies, sizes) if size is None):
            # pads that do not depend on an unknown size: any size gives them
            sizes = [64 * s if size is None else size for size, s in zip(sizes, strides)]
        elif auto_pad == "SAME_UPPER" and len(kernel) == 2:
            return SAME_AT_RUN_TIME
    if sizes is None or any(s is None for s in sizes):
        raise ConversionError(f"{op.type} '{op.name}': auto_pad={auto_pad} over spatial "
                              f"sizes known only at run time is not supported (SAME_UPPER "
                              f"over 2-D images is); give them with --input-shape")
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def norm_axes(ctx, op, value: str, axes: list[int], extra_rank: int = 0) -> list[int]:
    """Non-negative, sorted axes, checked against the rank where it is known
    (it is only needed for negative ones); a repeated axis is an error."""
    axes = list(axes)
    shape = ctx.shape(value)
    if shape is None and any(isinstance(a, (int, np.integer)) and a < 0 for a in axes):
        rank_of(ctx, op, value)  # raises: the rank is unknown
    rank = None if shape is None else len(shape) + extra_rank
    out = sorted(check_axis(op, a, rank, "axis") for a in axes)
    if len(set(out)) != len(out):
        raise ConversionError(f"{op.type} '{op.name}': repeated axis in {axes}")
    return out


def refuse_empty_max(ctx, op, x: str, axes) -> None:
    """Refuse a max/min reduction over an axis of size 0: ONNX gives the
    identity (-inf/+inf, or the dtype's bounds) where torch and paddle raise."""
    shape = ctx.shape(x)
    if shape is not None and any(shape[a] == 0 for a in axes):
        raise ConversionError(f"{op.type} '{op.name}': reducing an axis of size 0 "
                              f"(input shape {list(shape)}) is not supported")
