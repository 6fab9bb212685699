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


# torch's type categories: a higher one wins whatever the operands' sizes.
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
# The dtype torch gives a Python scalar of a category that wins over every tensor.
_SCALAR_DEFAULT = {0: "bool", 1: "int64", 2: "float32", 3: "complex64"}


def type_category(dtype: str) -> int:
    return 2 if dtype == "bfloat16" else _CATEGORY[np.dtype(dtype).kind]


def _promote(dtypes: list[str]) -> str:
    top = max(type_category(d) for d in dtypes)
    same = [d for d in dtypes if type_category(d) == top]
    result = same[0]
    for dtype in same[1:]:
        if dtype != result:
            # float16 with bfloat16 is float32 in torch; numpy agrees on the rest.
            result = ("float32" if {dtype, result} == {"float16", "bfloat16"}
                      else str(np.promote_types(result, dtype)))
    return result


def result_type(ctx, operands) -> str:
    """torch.result_type of a binary op's operands (values or Python scalars):
    the highest category wins; within it, tensors with dims decide over 0-d
    tensors, and those over Python scalars, whatever their sizes (a float32
    tensor times an int64 tensor is float32, times a 0-d float64 tensor too;
    an int tensor times 2.5 is float32). numpy would widen to float64."""
    tiers: list[list[str]] = [[], [], []]   # tensors with dims, 0-d tensors, scalars
    for x in operands:
        if is_value(x):
            tiers[0 if ctx.shape(x) != () and ctx.shape(x) != [] else 1].append(ctx.dtype(x))
        else:
            kind = bool if isinstance(x, bool) else int if isinstance(x, int) else float
            tiers[2].append({bool: "bool", int: "int64", float: "float64"}[kind])
    top = max(type_category(d) for tier in tiers for d in tier)
    for tier in tiers[:2]:
        if any(type_category(d) == top for d in tier):
            return _promote(tier)
    return _SCALAR_DEFAULT[top]


def cast_to(ctx, value: str, dtype: str) -> str:
    """`value` as `dtype`: itself when it is already, a new constant when it is one."""
    if ctx.dtype(value) == dtype:
        return value
    const = ctx.const(value)
    if const is not None:
        return ctx.constant(const.astype(dtype), "promoted")
    return ctx.emit("cast", [value], {"dtype": dtype}, shape=ctx.shape(value), dtype=dtype,
                    hint="promoted")
