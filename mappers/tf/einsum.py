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
    a, ta = _sum_out(ctx, op, a, ta, keep=set(tb) | set(out), sizes=sizes)
    b, tb = _sum_out(ctx, op, b, tb, keep=set(ta) | set(out), sizes=sizes)
    batch = [i for i in out if i in ta and i in tb]
    contracted = [i for i in ta if i in tb and i not in out]
    free_a = [i for i in ta if i not in tb]
    free_b = [i for i in tb if i not in ta]
    a = _arrange(ctx, op, a, ta, batch, [free_a, contracted], sizes)
    b = _arrange(ctx, op, b, tb, batch, [contracted, free_b], sizes)
    grouped = [sizes[i] for i in batch] + [_product(sizes, free_a), _product(sizes, free_b)]
    product = ctx.emit("matmul", [a, b], shape=tuple(grouped), hint="matmul")
    order = batch + free_a + free_b
    ungrouped = [sizes[i] for i in order]
    if len(free_a) != 1 or len(free_b) != 1:
        product = ctx.emit("reshape", [product], {"shape": _target(op, batch, ungrouped)},
                           shape=tuple(ungrouped), hint="ungroup")
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


def _target(op, batch: list[str], dims: list) -> list[int]:
    """A reshape target: batch dims copied (0), known dims, at most one -1."""
    target = [0] * len(batch) + [-1 if d is None else d for d in dims[len(batch):]]
    if target.count(-1) > 1:
        raise ConversionError(f"Einsum '{op.name}': more than one non-batch dimension is "
                              f"unknown; give static shapes with --input-shape")
    return target


def _arrange(ctx, op, value: str, term: str, batch: list[str], groups: list[list[str]],
             sizes: dict) -> str:
    """Transpose to [batch, *groups] and make each group one dim."""
    order = batch + groups[0] + groups[1]
    perm = [term.index(i) for i in order]
    if perm != list(range(len(perm))):
        value = ctx.emit("transpose", [value], {"perm": perm},
                         shape=tuple(sizes[i] for i in order), hint="arrange")
    if all(len(g) == 1 for g in groups):
        return value
    grouped = [sizes[i] for i in batch] + [_product(sizes, g) for g in groups]
    return ctx.emit("reshape", [value], {"shape": _target(op, batch, grouped)},
                    shape=tuple(grouped), hint="group")
