"""TF Einsum with two operands as IR transpose / reshape / matmul.

Every index of a two-operand einsum (no repeated index within an operand,
no ellipsis) is one of:
  batch       in both operands and the output  -> matmul batch dims
  contracted  in both operands, not the output -> the matmul's inner dim
  free        in one operand and the output    -> the matmul's rows / cols
  summed      in one operand only              -> reduce_sum first
So a = transpose(a) to [batch, free_a, contracted], b to [batch, contracted,
free_b]; reshape each group to one dim; matmul; reshape the free groups back
and transpose to the output's order. Keras MultiHeadAttention and EinsumDense
are einsums of this kind ('abc,cde->abde', 'aecd,abcd->acbe', ...).
"""
from __future__ import annotations

from math import prod

import numpy as np

from x2.errors import ConversionError
from x2.registry import tf_mapper


@tf_mapper("Einsum")
def einsum(ctx, op):
    """Two-operand einsum: transpose, reshape, `matmul`, reshape, transpose."""
    equation = op.attrs.get("equation", "").replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    terms = lhs.split(",")
    if not arrow or len(terms) != 2 or len(op.inputs) != 2 or "." in equation or \
            any(len(set(t)) != len(t) for t in terms + [out]) or \
            any(i not in lhs for i in out):
        raise ConversionError(
            f"Einsum '{op.name}': equation {equation!r} is not supported; x2 maps "
            f"two-operand einsums without repeated indices or '...' (e.g. 'abc,cde->abde')")
    (a, b), (ta, tb) = op.inputs, terms
    sizes = _index_sizes(ctx, op, {ta: a, tb: b})
    # Where each index's size can be read at run time, for sizes unknown now.
    where = {i: (v, k) for t, v in ((tb, b), (ta, a)) for k, i in enumerate(t)}
    a, ta = _sum_out(ctx, op, a, ta, keep=set(tb) | set(out), sizes=sizes)
    b, tb = _sum_out(ctx, op, b, tb, keep=set(ta) | set(out), sizes=sizes)
    batch = [i for i in out if i in ta and i in tb]
    contracted = [i for i in ta if i in tb and i not in out]
    free_a = [i for i in ta if i not in tb]
    free_b = [i for i in tb if i not in ta]
    a = _arrange(ctx, a, ta, batch, [free_a, contracted], sizes, where)
    b = _arrange(ctx, b, tb, batch, [contracted, free_b], sizes, where)
    grouped = [sizes[i] for i in batch] + [_product(sizes, free_a), _product(sizes, free_b)]
    product = ctx.emit("matmul", [a, b], shape=tuple(grouped), hint="matmul")
    order = batch + free_a + free_b
    if len(free_a) != 1 or len(free_b) != 1:
        product = _reshape(ctx, product, [[i] for i in order], sizes, where, len(batch),
                           "ungroup")
    perm = [order.index(i) for i in out]
    if perm == list(range(len(perm))):
        ctx.alias(op.outputs[0], product)
    else:
        ctx.emit("transpose", [product], {"perm": perm}, outputs=op.outputs)


def _index_sizes(ctx, op, operands: dict) -> dict:
    sizes: dict[str, int | None] = {}
    for term, value in operands.items():
        shape = ctx.shape(value)
        if shape is None or len(shape) != len(term):
            raise ConversionError(f"Einsum '{op.name}': operand '{value}' has shape {shape}, "
                                  f"which does not match '{term}'")
        for index, dim in zip(term, shape):
            if sizes.get(index) is None:
                sizes[index] = dim
    return sizes


def _sum_out(ctx, op, value: str, term: str, keep: set, sizes: dict) -> tuple[str, str]:
    axes = [k for k, i in enumerate(term) if i not in keep]
    if not axes:
        return value, term
    rest = "".join(i for i in term if i in keep)
    value = ctx.emit("reduce_sum", [value], {"axes": axes, "keepdims": False},
                     shape=tuple(sizes[i] for i in rest), hint="sum")
    return value, rest


def _product(sizes: dict, group: list[str]):
    dims = [sizes[i] for i in group]
    return None if None in dims else prod(dims)


def _reshape(ctx, value: str, groups: list[list[str]], sizes: dict, where: dict,
             batch: int, hint: str) -> str:
    """`value` reshaped to one dim per group of indices (its leading `batch`
    groups are its own dims): a `reshape` when at most one group's size is
    unknown, else `reshape_dynamic` to the sizes read from the operands."""
    dims = [_product(sizes, g) for g in groups]
    target = [0] * batch + [-1 if d is None else d for d in dims[batch:]]
    if target.count(-1) <= 1:
        return ctx.emit("reshape", [value], {"shape": target}, shape=tuple(dims), hint=hint)
    pieces = [_group_size(ctx, g, sizes, where) for g in groups]
    shape = ctx.emit("concat", pieces, {"axis": 0}, dtype="int64", shape=(len(groups),),
                     hint=f"{hint}_shape")
    return ctx.emit("reshape_dynamic", [value, shape], dtype=ctx.dtype(value),
                    shape=tuple(dims), hint=hint)


def _group_size(ctx, group: list[str], sizes: dict, where: dict) -> str:
    """A group's size as a 1-D int64 tensor of one element: the known sizes'
    product times each unknown one read from the shape of an operand."""
    unknown = [i for i in group if sizes[i] is None]
    known = prod(sizes[i] for i in group if sizes[i] is not None)
    factors = [ctx.constant(np.array([known], np.int64), "size")] if known != 1 or \
        not unknown else []
    for i in unknown:
        factors.append(ctx.emit("unsqueeze", [ctx.run_time_dim(*where[i])], {"axes": [0]},
                                dtype="int64", shape=(1,), hint="dim"))
    size = factors[0]
    for factor in factors[1:]:
        size = ctx.emit("mul", [size, factor], dtype="int64", shape=(1,), hint="size")
    return size


def _arrange(ctx, value: str, term: str, batch: list[str], groups: list[list[str]],
             sizes: dict, where: dict) -> str:
    """Transpose to [batch, *groups] and make each group one dim."""
    order = batch + groups[0] + groups[1]
    perm = [term.index(i) for i in order]
    if perm != list(range(len(perm))):
        value = ctx.emit("transpose", [value], {"perm": perm},
                         shape=tuple(sizes[i] for i in order), hint="arrange")
    if all(len(g) == 1 for g in groups):
        return value
    return _reshape(ctx, value, [[i] for i in batch] + groups, sizes, where, len(batch),
                    "group")
