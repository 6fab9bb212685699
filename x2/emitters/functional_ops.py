"""IR ops whose generated code is the same for Paddle and PyTorch but for a
few function names (both emitters import their functional API as `F`)."""
from __future__ import annotations

from .codegen import Expr, binop, call


def define_common(register, unary: dict[str, str], clip_fn: str) -> None:
    """Register the shared op emitters into one target's table.

    `unary` maps elementwise IR ops to the target's function; `clip_fn` is
    paddle.clip / torch.clamp."""

    @register(*unary)
    def unary_op(e, node):
        return call(unary[node.op], e.value(node.inputs[0]))

    @register("identity")
    def identity(e, node):
        return Expr(e.value(node.inputs[0]))

    @register("neg")
    def neg(e, node):
        return Expr(f"-{e.value(node.inputs[0])}")

    @register("clip")
    def clip(e, node):
        lo, hi = node.attrs.get("min"), node.attrs.get("max")
        if lo == 0.0 and hi == 6.0:
            return call("F.relu6", e.value(node.inputs[0]))
        return call(clip_fn, e.value(node.inputs[0]), min=lo, max=hi)

    @register("leaky_relu")
    def leaky_relu(e, node):
        return call("F.leaky_relu", e.value(node.inputs[0]), negative_slope=node.attrs["alpha"])

    @register("elu")
    def elu(e, node):
        return call("F.elu", e.value(node.inputs[0]), alpha=node.attrs.get("alpha", 1.0))

    @register("mod")
    def mod(e, node):
        # Both frameworks' % is floor-mod like numpy's, which the IR op follows.
        return binop(e.value(node.inputs[0], tensor=True), "%", e.value(node.inputs[1]))


def expand_target(in_shape, shape) -> list[int]:
    """The IR's ONNX-style expand target for paddle.expand/torch.broadcast_to: a 1
    against an input dim that is not 1 (e.g. a dynamic batch) keeps that dim (-1)."""
    if in_shape is None:
        return list(shape)
    aligned = [1] * (len(shape) - len(in_shape)) + list(in_shape)
    return [-1 if d == 1 and a != 1 else d for d, a in zip(shape, aligned)]
