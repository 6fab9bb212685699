"""Activations, softmax, dropout and layer normalization."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import check_axis, choice, rank_of

_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Erf": "erf", "Exp": "exp",
          "Log": "log", "Sqrt": "sqrt", "Neg": "neg", "Abs": "abs", "Softplus": "softplus",
          "Identity": "identity", "Not": "logical_not", "BitwiseNot": "bitwise_not",
          "Sin": "sin", "Cos": "cos", "Floor": "floor", "Ceil": "ceil", "Sign": "sign",
          "Reciprocal": "reciprocal", "IsNaN": "isnan",
          "Tan": "tan", "Asin": "asin", "Acos": "acos", "Atan": "atan", "Sinh": "sinh",
          "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh"}


@onnx_mapper(*_UNARY)
def unary(ctx, op):
    """The elementwise IR op of the same name."""
    ctx.emit(_UNARY[op.type], op.inputs[:1], outputs=op.outputs)


@onnx_mapper("LeakyRelu")
def leaky_relu(ctx, op):
    """`leaky_relu(alpha)` (ONNX default alpha 0.01)."""
    ctx.emit("leaky_relu", op.inputs[:1], {"alpha": float(op.attrs.get("alpha", 0.01))},
             outputs=op.outputs)


@onnx_mapper("Elu")
def elu(ctx, op):
    """`elu(alpha)`."""
    ctx.emit("elu", op.inputs[:1], {"alpha": float(op.attrs.get("alpha", 1.0))},
             outputs=op.outputs)


@onnx_mapper("Selu")
def selu(ctx, op):
    """`selu` (only the standard alpha/gamma)."""
    alpha, gamma = op.attrs.get("alpha", 1.67326319217681884765625), op.attrs.get(
        "gamma", 1.05070102214813232421875)
    if abs(alpha - 1.6732632) > 1e-6 or abs(gamma - 1.0507010) > 1e-6:
        raise ConversionError(f"Selu '{op.name}': non-standard alpha/gamma")
    ctx.emit("selu", op.inputs[:1], outputs=op.outputs)


@onnx_mapper("Gelu", since=20)
def gelu(ctx, op):
    """`gelu` (approximate='tanh' kept)."""
    approximate = choice(op, "approximate", "none", ("none", "tanh"))
    ctx.emit("gelu", op.inputs[:1], {"approximate": approximate == "tanh"},
             outputs=op.outputs)


@onnx_mapper("HardSigmoid")
def hard_sigmoid(ctx, op):
    """`clip(alpha * x + beta, 0, 1)`; `hard_sigmoid` at torch's alpha 1/6, beta 1/2."""
    alpha, beta = op.attrs.get("alpha", 0.2), op.attrs.get("beta", 0.5)
    if np.isclose(alpha, 1 / 6, rtol=1e-6, atol=0) and beta == 0.5:
        ctx.emit("hard_sigmoid", op.inputs[:1], outputs=op.outputs)
        return
    dtype = ctx.dtype(op.inputs[0])
    shape = ctx.shape(op.inputs[0])
    scaled = ctx.emit("mul", [op.inputs[0], ctx.constant(np.array(alpha, dtype))], shape=shape)
    shifted = ctx.emit("add", [scaled, ctx.constant(np.array(beta, dtype))], shape=shape)
    ctx.emit("clip", [shifted], {"min": 0.0, "max": 1.0}, outputs=op.outputs)


@onnx_mapper("Clip", until=11)
def clip_attrs(ctx, op):
    """`clip(min, max)` from attributes (opset < 11)."""
    _clip(ctx, op, op.attrs.get("min"), op.attrs.get("max"))


def _clip(ctx, op, low, high):
    """No bound is the identity (torch.clamp needs one); integer inputs get
    integral bounds."""
    if low is None and high is None:
        ctx.alias(op.outputs[0], op.inputs[0])
        return
    ctx.emit("clip", op.inputs[:1], {"min": low, "max": high}, outputs=op.outputs)


@onnx_mapper("Clip", since=11)
def clip_inputs(ctx, op):
    """`clip(min, max)` from constant inputs (opset >= 11)."""
    bounds = []
    for index in (1, 2):
        if len(op.inputs) > index and op.inputs[index]:
            bounds.append(float(ctx.require_const(op.inputs[index], "the clip bound")))
        else:
            bounds.append(None)
    _clip(ctx, op, *bounds)


def _softmax(ctx, op, ir_op):
    rank = rank_of(ctx, op, op.inputs[0])
    axis = check_axis(op, op.attrs.get("axis", -1 if ctx.source.version >= 13 else 1), rank)
    if ctx.source.version < 13 and axis != rank - 1:
        # Before opset 13 softmax normalizes over all axes from `axis` on.
        raise ConversionError(f"{op.type} '{op.name}': opset<13 softmax over axes "
                              f"{axis}..{rank - 1} is not supported (only the last axis)")
    ctx.emit(ir_op, op.inputs[:1], {"axis": axis}, outputs=op.outputs)


@onnx_mapper("Softmax")
def softmax(ctx, op):
    """`softmax(axis)`; opset<13 semantics checked."""
    _softmax(ctx, op, "softmax")


@onnx_mapper("LogSoftmax")
def log_softmax(ctx, op):
    """`log_softmax(axis)`; opset<13 semantics checked."""
    _softmax(ctx, op, "log_softmax")


@onnx_mapper("HardSwish")
def hard_swish(ctx, op):
    """`hard_swish`: x * clip(x / 6 + 0.5, 0, 1)."""
    ctx.emit("hard_swish", op.inputs[:1], outputs=op.outputs)


@onnx_mapper("Dropout")
def dropout(ctx, op):
    """Nothing: inference dropout is the identity. A mask output that is declared
    but read by nothing is dropped; one the graph reads is refused."""
    if len(op.inputs) > 2 and op.inputs[2]:
        training = ctx.const(op.inputs[2])
        ratio = ctx.const(op.inputs[1]) if op.inputs[1] else np.array(0.5)
        if (training is None or bool(np.asarray(training).reshape(-1)[0])) and not (
                ratio is not None and float(np.asarray(ratio).reshape(-1)[0]) == 0.0):
            raise ConversionError(
                f"Dropout '{op.name}': training_mode is "
                f"{'a runtime input' if training is None else 'true'}"
                f"; x2 converts inference graphs (random dropout is not reproducible). "
                f"Export the model in eval mode")
    used = _dropouts_with_used_mask(ctx.source)
    if op.name in used:
        names = ", ".join(f"'{n}'" for n in used)
        raise ConversionError(
            f"Dropout node(s) {names}: the mask output is read by the graph (a training "
            f"graph); x2 converts inference graphs, where Dropout is the identity "
            f"and has no mask. Export the model in eval mode, or prune the graph with "
            f"--outputs so that no mask is needed")
    ctx.alias(op.outputs[0], op.inputs[0])


def _dropouts_with_used_mask(source) -> list[str]:
    """Every Dropout whose mask (output 1) another node or the graph output reads."""
    read = {v for op in source.ops for v in op.inputs} | set(source.outputs)
    return [op.name for op in source.ops
            if op.type == "Dropout" and len(op.outputs) > 1 and op.outputs[1] in read]


@onnx_mapper("InstanceNormalization")
def instance_norm(ctx, op):
    """`group_norm` with a group per channel."""
    x = op.inputs[0]
    channels = (ctx.shape(x) or (None, None))[1]
    if not isinstance(channels, int):
        raise ConversionError(f"InstanceNormalization '{op.name}': the channel count of "
                              f"'{x}' is unknown")
    _group_norm(ctx, op, channels)


@onnx_mapper("GroupNormalization", since=21)
def group_norm(ctx, op):
    """`group_norm` (num_groups, epsilon; stash_type is float32 either way)."""
    x = op.inputs[0]
    groups = int(op.attrs["num_groups"])
    channels = (ctx.shape(x) or (None, None))[1]
    if not isinstance(channels, int) or channels % groups:
        raise ConversionError(f"GroupNormalization '{op.name}': the channel count of '{x}' "
                              f"must be known and a multiple of num_groups ({groups})")
    _group_norm(ctx, op, groups)


def _group_norm(ctx, op, groups: int):
    """Both ops take x, a per-channel scale and bias, and epsilon: the IR
    group_norm with them as they are."""
    x, scale, bias = op.inputs[:3]
    ctx.emit("group_norm", [x, scale, bias],
             {"groups": groups, "epsilon": float(op.attrs.get("epsilon", 1e-5))},
             outputs=op.outputs[:1], shape=ctx.shape(x))


@onnx_mapper("LayerNormalization", since=17)
def layer_norm(ctx, op):
    """`layer_norm(axis, epsilon)` with scale and bias; the optional mean and
    inverse-std outputs are computed beside it (reduce_mean, rsqrt)."""
    rank = rank_of(ctx, op, op.inputs[0])
    axis = check_axis(op, op.attrs.get("axis", -1), rank)
    epsilon = float(op.attrs.get("epsilon", 1e-5))
    ctx.emit("layer_norm", [v for v in op.inputs[:3]], {"axis": axis, "epsilon": epsilon},
             outputs=op.outputs[:1])
    extra = [o for o in op.outputs[1:3] if o]
    if not extra:
        return
    x = op.inputs[0]
    if ctx.dtype(x) != "float32":
        raise ConversionError(f"LayerNormalization '{op.name}': mean/inv-std outputs are "
                              f"supported for float32 only")
    reduce = {"axes": list(range(axis, rank)), "keepdims": True}
    mean = ctx.emit("reduce_mean", [x], reduce, outputs=[op.outputs[1]] if len(
        op.outputs) > 1 and op.outputs[1] else None)
    if len(op.outputs) > 2 and op.outputs[2]:
        centered = ctx.emit("sub", [x, mean])
        var = ctx.emit("reduce_mean", [ctx.emit("square", [centered])], reduce)
        shifted = ctx.emit("add", [var, ctx.constant(np.array(epsilon, np.float32), "eps")])
        ctx.emit("rsqrt", [shifted], outputs=[op.outputs[2]])
