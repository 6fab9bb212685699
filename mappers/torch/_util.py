"""Helpers shared by the PyTorch mappers: argument access and scalars."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError

_MAX_INDEX = 1 << 62


def args(op, *defaults):
    """The op's positional args, padded with `defaults` for those left out
    (FX drops trailing arguments that equal the schema default)."""
    given = list(op.attrs["args"])
    return given + list(defaults[len(given):]) if len(defaults) > len(given) else given


def is_value(arg) -> bool:
    return type(arg).__name__ == "TensorRef"


def operand(ctx, op, arg, like: str) -> str:
    """A tensor value for `arg`: itself, or a 0-d constant of `like`'s dtype."""
    if is_value(arg):
        return arg
    dtype = ctx.dtype(like)
    if isinstance(arg, float) and np.dtype(dtype).kind != "f":
        dtype = "float32"
    return ctx.constant(np.array(arg, dtype=dtype), "scalar")


def rank(ctx, value: str) -> int:
    shape = ctx.shape(value)
    if shape is None:
        raise ConversionError(f"'{value}' has unknown rank")
    return len(shape)


def axis(ctx, value: str, dim: int) -> int:
    return dim % rank(ctx, value)


def axes(ctx, value: str, dims) -> list[int]:
    if dims is None or dims == []:
        return list(range(rank(ctx, value)))
    dims = [dims] if isinstance(dims, int) else dims
    return sorted(axis(ctx, value, d) for d in dims)


def clamp_range(size: int, start, end, step: int = 1) -> tuple[int, int]:
    """Python-slice bounds resolved against a known size (ATen uses INT64_MAX for 'to the end')."""
    start, end, _ = slice(start, min(end, _MAX_INDEX) if end is not None else None,
                          step).indices(size)
    return start, end


def unsupported(op, why: str) -> ConversionError:
    return ConversionError(f"{op.type} node '{op.name}': {why}")
