"""Helpers shared by the ONNX mappers."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError


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


def spatial_pads(ctx, op, kernel: list[int], strides: list[int], dilations: list[int]):
    """Explicit [top, left, bottom, right] pads for ONNX pads / auto_pad."""
    auto_pad = op.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", "VALID"):
        pads = op.attrs.get("pads", [0] * 2 * len(kernel)) if auto_pad == "NOTSET" else \
            [0] * 2 * len(kernel)
        return list(pads)
    shape = ctx.shape(op.inputs[0])
    sizes = None if shape is None else shape[2:]
    if sizes is None or any(s is None for s in sizes):
        raise ConversionError(f"{op.type} '{op.name}': auto_pad={auto_pad} needs static "
                              f"spatial sizes")
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto_pad == "SAME_UPPER" else large)
        end.append(large if auto_pad == "SAME_UPPER" else small)
    return begin + end


def require_2d(op, kernel) -> None:
    if len(kernel) != 2:
        raise ConversionError(f"{op.type} '{op.name}': only 2-D (NCHW) is supported, this one "
                              f"is {len(kernel)}-D")


def norm_axes(ctx, op, value: str, axes: list[int], extra_rank: int = 0) -> list[int]:
    """Non-negative, sorted axes; the rank is only needed for negative ones."""
    if all(a >= 0 for a in axes):
        return sorted(axes)
    rank = rank_of(ctx, op, value) + extra_rank
    return sorted(a % rank for a in axes)
