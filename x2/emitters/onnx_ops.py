"""IR op -> ONNX nodes, one small function per op (or family).

Each function gets the emitter context `e` (x2/emitters/onnx.py) and the IR
node, and adds ONNX nodes that write the node's outputs. `e.opset` selects
the form an op takes where ONNX changed it (axes as attribute or input,
Gelu as one op from opset 20)."""
from __future__ import annotations

import numpy as np

from . import onnx_control
from .registry import OpRegistry

ONNX_OPS = OpRegistry("ONNX")
onnx_op = ONNX_OPS.register
onnx_op("if")(onnx_control.if_)
onnx_op("loop")(onnx_control.loop)


_SIMPLE = {"equal": "Equal", "logical_not": "Not", "relu": "Relu", "sigmoid": "Sigmoid",
           "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "neg": "Neg",
           "abs": "Abs", "erf": "Erf", "softplus": "Softplus", "sin": "Sin", "cos": "Cos",
           "floor": "Floor", "ceil": "Ceil", "sign": "Sign", "reciprocal": "Reciprocal",
           "isnan": "IsNaN", "isinf": "IsInf",
           "tan": "Tan", "asin": "Asin", "acos": "Acos", "atan": "Atan", "sinh": "Sinh",
           "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh", "atanh": "Atanh",
           "identity": "Identity", "add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div",
           "pow": "Pow", "maximum": "Max", "minimum": "Min", "matmul": "MatMul",
           "where": "Where", "dropout": "Identity"}


@onnx_op(*_SIMPLE)
def simple(e, node):
    e.node(_SIMPLE[node.op], node.inputs, node.outputs)


def _fmod_and_shift(e, node, a, b, dtype):
    """(C's fmod(a, b), which has a's sign, and where numpy's floor mod is
    b more: the remainder is not 0 and its sign is not b's)."""
    rest = e.node("Mod", [a, b], [e.fresh(node, "fmod")], fmod=1)
    zero = e.scalar(0.0, dtype)
    signs_differ = e.node("Xor", [e.node("Less", [rest, zero], [e.fresh(node, "r_negative")]),
                                  e.node("Less", [b, zero], [e.fresh(node, "b_negative")])],
                          [e.fresh(node, "signs_differ")])
    nonzero = e.node("Not", [e.node("Equal", [rest, zero], [e.fresh(node, "exact")])],
                     [e.fresh(node, "inexact")])
    return rest, e.node("And", [signs_differ, nonzero], [e.fresh(node, "shift")])


@onnx_op("mod")
def mod(e, node):
    # fmod=0 is numpy's sign convention, which the IR op follows. Floats need
    # fmod=1 (C's fmod, a's sign): b is added where the signs differ.
    a, b = node.inputs
    dtype = e.dtype(a)
    if not dtype.startswith(("float", "bfloat")):
        e.node("Mod", node.inputs, node.outputs)
        return
    rest, shift = _fmod_and_shift(e, node, a, b, dtype)
    e.node("Where", [shift, e.node("Add", [rest, b], [e.fresh(node, "shifted")]), rest],
           node.outputs)


@onnx_op("floor_div")
def floor_div(e, node):
    """ONNX's Div truncates ints: one less where the remainder is not 0 and
    the signs differ. Floats as torch and numpy round them: (a - fmod(a, b))
    / b, one less where fmod's sign is not b's, to the nearest whole number
    (halves down); a / b where b is 0."""
    a, b = node.inputs
    dtype = e.dtype(a)
    zero = e.scalar(0, dtype)

    def step(op, inputs, hint, **attrs):
        return e.node(op, inputs, [e.fresh(node, hint)], **attrs)

    if not dtype.startswith(("float", "bfloat")):
        signs_differ = step("Xor", [step("Less", [a, zero], "a_negative"),
                                    step("Less", [b, zero], "b_negative")], "signs_differ")
        inexact = step("Not", [step("Equal", [step("Mod", [a, b], "rest"), zero], "exact")],
                       "inexact")
        down = step("Cast", [step("And", [signs_differ, inexact], "down")], "one",
                    to=e.onnx_dtype(dtype))
        e.node("Sub", [step("Div", [a, b], "truncated"), down], node.outputs)
        return
    rest, shift = _fmod_and_shift(e, node, a, b, dtype)
    multiple = step("Div", [step("Sub", [a, rest], "whole"), b], "multiple")
    floored = step("Sub", [multiple, step("Cast", [shift], "one", to=e.onnx_dtype(dtype))],
                   "floored")
    nearest = step("Ceil", [step("Sub", [floored, e.scalar(0.5, dtype)], "less_half")],
                   "nearest")
    e.node("Where", [step("Equal", [b, zero], "by_zero"), step("Div", [a, b], "quotient"),
                     nearest], node.outputs)


@onnx_op("rsqrt")
def rsqrt(e, node):
    root = e.node("Sqrt", node.inputs, [e.fresh(node, "sqrt")])
    e.node("Reciprocal", [root], node.outputs)


@onnx_op("square")
def square(e, node):
    e.node("Mul", [node.inputs[0], node.inputs[0]], node.outputs)


@onnx_op("silu")
def silu(e, node):
    gate = e.node("Sigmoid", node.inputs, [e.fresh(node, "sigmoid")])
    e.node("Mul", [node.inputs[0], gate], node.outputs)


@onnx_op("hard_sigmoid")
def hard_sigmoid(e, node):
    e.node("HardSigmoid", node.inputs, node.outputs, alpha=1 / 6, beta=0.5)


@onnx_op("hard_swish")
def hard_swish(e, node):
    gate = e.node("HardSigmoid", node.inputs, [e.fresh(node, "gate")], alpha=1 / 6, beta=0.5)
    e.node("Mul", [node.inputs[0], gate], node.outputs)


@onnx_op("selu")
def selu(e, node):
    e.node("Selu", node.inputs, node.outputs)


@onnx_op("elu")
def elu(e, node):
    e.node("Elu", node.inputs, node.outputs, alpha=float(node.attrs.get("alpha", 1.0)))


@onnx_op("leaky_relu")
def leaky_relu(e, node):
    e.node("LeakyRelu", node.inputs, node.outputs, alpha=float(node.attrs["alpha"]))


@onnx_op("gelu")
def gelu(e, node):
    x = node.inputs[0]
    approximate = bool(node.attrs.get("approximate"))
    if e.opset >= 20:
        e.node("Gelu", [x], node.outputs, approximate="tanh" if approximate else "none")
        return
    dtype = e.dtype(x)
    if approximate:  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        # x^3 as Pow: onnxruntime fuses this form into one FastGelu, not x * x * x
        # (GPT-2 small: the MLP's activation 19 -> 5 ms a run).
        cube = e.node("Pow", [x, e.scalar(3.0, dtype)], [e.fresh(node, "x3")])
        inner = e.node("Add", [x, e.node("Mul", [cube, e.scalar(0.044715, dtype)],
                                          [e.fresh(node, "c")])], [e.fresh(node, "inner")])
        core = e.node("Tanh", [e.node("Mul", [inner, e.scalar(0.7978845608028654, dtype)],
                                       [e.fresh(node, "scaled")])], [e.fresh(node, "tanh")])
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        core = e.node("Erf", [e.node("Div", [x, e.scalar(np.sqrt(2.0), dtype)],
                                     [e.fresh(node, "scaled")])], [e.fresh(node, "erf")])
    one_plus = e.node("Add", [core, e.scalar(1.0, dtype)], [e.fresh(node, "one_plus")])
    half_x = e.node("Mul", [x, e.scalar(0.5, dtype)], [e.fresh(node, "half_x")])
    e.node("Mul", [half_x, one_plus], node.outputs)


@onnx_op("log1p")
def log1p(e, node):
    """ONNX has no Log1p, and log(1 + x) loses x's digits when |x| is tiny:
    log(u) * x / (u - 1) with u = 1 + x corrects the rounding of u (exact to
    a few ulps; Goldberg, "What every computer scientist should know about
    floating-point arithmetic", thm. 4); x itself where u rounds to 1, and
    log(u) where u is infinite (inf / inf would be NaN)."""
    x, dtype = node.inputs[0], e.dtype(node.inputs[0])
    u = e.node("Add", [x, e.scalar(1.0, dtype)], [e.fresh(node, "u")])
    d = e.node("Sub", [u, e.scalar(1.0, dtype)], [e.fresh(node, "u_minus_1")])
    log_u = e.node("Log", [u], [e.fresh(node, "log_u")])
    ratio = e.node("Div", [x, d], [e.fresh(node, "ratio")])
    corrected = e.node("Mul", [log_u, ratio], [e.fresh(node, "corrected")])
    tiny = e.node("Equal", [d, e.scalar(0.0, dtype)], [e.fresh(node, "tiny")])
    finite = e.node("Where", [tiny, x, corrected], [e.fresh(node, "finite")])
    e.node("Where", [e.node("IsInf", [u], [e.fresh(node, "huge")]), log_u, finite],
           node.outputs)


@onnx_op("clip")
def clip(e, node):
    dtype = e.dtype(node.inputs[0])
    lo, hi = node.attrs.get("min"), node.attrs.get("max")
    e.node("Clip", [node.inputs[0], e.scalar(lo, dtype) if lo is not None else "",
                    e.scalar(hi, dtype) if hi is not None else ""], node.outputs)


@onnx_op("cast")
def cast(e, node):
    e.node("Cast", node.inputs, node.outputs, to=e.onnx_dtype(node.attrs["dtype"]))


@onnx_op("conv2d")
def conv2d(e, node):
    a = node.attrs
    kernel = list(e.graph.constants[node.inputs[1]].shape[2:]) \
        if node.inputs[1] in e.graph.constants else None
    extra = {"kernel_shape": kernel} if kernel else {}
    e.node("Conv", node.inputs, node.outputs, strides=a["strides"], dilations=a["dilations"],
           group=a["groups"], **_padding(a), **extra)


def _padding(a: dict) -> dict:
    """A window op's `pads`, or `auto_pad` where they are computed at run time."""
    if a.get("auto_pad", "NOTSET") == "NOTSET":
        return {"pads": a["pads"]}
    return {"auto_pad": a["auto_pad"]}


def _tied_table(e, w: str) -> str | None:
    """The constant whose transpose dense weight `w` is, when `w` is read by
    this node alone (a head tied to its input embedding: the IR holds the
    table and its folded transpose). The head then reads the table through a
    Transpose and the weights are written once (onnxruntime folds it at load)."""
    from ..ir.control_flow import walk_graphs
    origin = e.graph.origin.get(w)
    if origin is None or origin.perm != (1, 0) or w in e.graph.outputs:
        return None
    weight = e.graph.constants[w]
    for name, array in e.graph.constants.items():
        found = e.graph.origin.get(name)
        if name != w and found is not None and found.tensor == origin.tensor and \
                found.perm is None and array.shape == weight.shape[::-1] and \
                array.dtype == weight.dtype:
            uses = sum(v == w for g in walk_graphs(e.graph) for n in g.nodes for v in n.inputs)
            return name if uses == 1 else None
    return None


@onnx_op("dense")
def dense(e, node):
    x = node.inputs[0]
    inputs = list(node.inputs)
    table = _tied_table(e, inputs[1]) if inputs[1] in e.graph.constants else None
    if table is not None:
        e.unwritten.add(inputs[1])
        inputs[1] = e.node("Transpose", [table], [e.fresh(node, "wt")], perm=[1, 0])
    rank = len(e.graph.shape(x) or ())
    if rank == 2:
        e.node("Gemm", inputs, node.outputs)
        return
    if len(inputs) == 2:
        e.node("MatMul", inputs, node.outputs)
        return
    product = e.node("MatMul", inputs[:2], [e.fresh(node, "matmul")])
    e.node("Add", [product, inputs[2]], node.outputs)


@onnx_op("batch_norm")
def batch_norm(e, node):
    e.node("BatchNormalization", node.inputs, node.outputs,
           epsilon=float(node.attrs["epsilon"]))


@onnx_op("max_pool2d")
def max_pool2d(e, node):
    a = node.attrs
    e.node("MaxPool", node.inputs, node.outputs, kernel_shape=a["kernel"], strides=a["strides"],
           **_padding(a))


@onnx_op("avg_pool2d")
def avg_pool2d(e, node):
    a = node.attrs
    e.node("AveragePool", node.inputs, node.outputs, kernel_shape=a["kernel"],
           strides=a["strides"], **_padding(a),
           count_include_pad=int(bool(a.get("count_include_pad", False))))


_REDUCE = {"reduce_mean": "ReduceMean", "reduce_sum": "ReduceSum", "reduce_max": "ReduceMax",
           "reduce_min": "ReduceMin", "reduce_prod": "ReduceProd"}


@onnx_op("reduce_any")
def reduce_any(e, node):
    # ONNX has no boolean reduction: any(x) = max over x as 0/1.
    as_int = e.node("Cast", node.inputs, [e.fresh(node, "as_int")], to=e.onnx_dtype("int32"))
    reduced = e.fresh(node, "max")
    fake = type(node)(op="reduce_max", inputs=[as_int], outputs=[reduced], attrs=node.attrs,
                      name=node.name, source=node.source)
    reduce(e, fake)
    e.node("Cast", [reduced], node.outputs, to=e.onnx_dtype("bool"))


@onnx_op("group_norm")
def group_norm(e, node):
    """GroupNormalization from opset 21 (at 18 its scale and bias were per group),
    InstanceNormalization where every channel is a group; else decomposed:
    reshape to [N, G, -1], normalize over the last axis, reshape back, scale, shift."""
    x, scale, bias = node.inputs
    shape = e.graph.shape(x)
    groups, eps = node.attrs["groups"], node.attrs["epsilon"]
    if shape is not None and len(shape) >= 3 and shape[1] == groups:
        e.node("InstanceNormalization", [x, scale, bias], node.outputs, epsilon=eps)
        return
    if e.opset >= 21:
        e.node("GroupNormalization", [x, scale, bias], node.outputs, num_groups=groups,
               epsilon=eps)
        return
    if shape is None or any(d is None for d in shape[1:]):
        raise e.unsupported(node, "group_norm needs static non-batch dims")
    dtype = e.dtype(x)
    grouped = e.node("Reshape", [x, e.ints([0, node.attrs["groups"], -1])],
                     [e.fresh(node, "grouped")])
    mean = e.fresh(node, "mean")
    reduce(e, type(node)(op="reduce_mean", inputs=[grouped], outputs=[mean],
                         attrs={"axes": [2], "keepdims": True}, name=node.name,
                         source=node.source))
    centered = e.node("Sub", [grouped, mean], [e.fresh(node, "centered")])
    var = e.fresh(node, "var")
    squared = e.node("Mul", [centered, centered], [e.fresh(node, "squared")])
    reduce(e, type(node)(op="reduce_mean", inputs=[squared], outputs=[var],
                         attrs={"axes": [2], "keepdims": True}, name=node.name,
                         source=node.source))
    std = e.node("Sqrt", [e.node("Add", [var, e.scalar(node.attrs["epsilon"], dtype)],
                                 [e.fresh(node, "var_eps")])], [e.fresh(node, "std")])
    normed = e.node("Div", [centered, std], [e.fresh(node, "normed")])
    back = e.node("Reshape", [normed, e.ints([0] + list(shape[1:]))], [e.fresh(node, "back")])
    per_channel = [1, -1] + [1] * (len(shape) - 2)
    scaled = e.node("Mul", [back, e.node("Reshape", [scale, e.ints(per_channel)],
                                         [e.fresh(node, "scale")])], [e.fresh(node, "scaled")])
    e.node("Add", [scaled, e.node("Reshape", [bias, e.ints(per_channel)],
                                  [e.fresh(node, "bias")])], node.outputs)


@onnx_op(*_REDUCE)
def reduce(e, node):
    op_type = _REDUCE[node.op]
    keepdims = int(bool(node.attrs["keepdims"]))
    axes = node.attrs["axes"]
    info = e.graph.info.get(node.inputs[0])
    if op_type in ("ReduceMean", "ReduceMax") and info is not None and info.shape is not None \
            and len(info.shape) == 4 and sorted(a % 4 for a in axes) == [2, 3] \
            and info.dtype in ("float16", "float32", "float64"):
        # Global pooling: onnxruntime runs it in its blocked conv layout, where
        # ReduceMean first reorders the whole activation back to NCHW.
        pool = "GlobalAveragePool" if op_type == "ReduceMean" else "GlobalMaxPool"
        if keepdims:
            e.node(pool, node.inputs, node.outputs)
        else:
            e.node("Flatten", [e.node(pool, node.inputs, [e.fresh(node, "pooled")])],
                   node.outputs, axis=1)
        return
    # Axes became an input: ReduceSum at opset 13, the other reductions at 18.
    if e.opset >= (13 if op_type == "ReduceSum" else 18):
        e.node(op_type, [node.inputs[0], e.ints(axes)], node.outputs, keepdims=keepdims)
    else:
        e.node(op_type, node.inputs, node.outputs, axes=axes, keepdims=keepdims)


@onnx_op("softmax", "log_softmax")
def softmax(e, node):
    e.node("Softmax" if node.op == "softmax" else "LogSoftmax", node.inputs, node.outputs,
           axis=node.attrs["axis"])


@onnx_op("concat")
def concat(e, node):
    e.node("Concat", node.inputs, node.outputs, axis=node.attrs["axis"])


@onnx_op("stack")
def stack(e, node):
    axis = node.attrs["axis"]
    parts = [e.node("Unsqueeze", [v, e.ints([axis])], [e.fresh(node, f"part{i}")])
             for i, v in enumerate(node.inputs)]
    e.node("Concat", parts, node.outputs, axis=axis)


@onnx_op("pad")
def pad(e, node):
    mode = node.attrs.get("mode", "constant")
    inputs = [node.inputs[0], e.ints(node.attrs["pads"])]
    if mode == "constant":
        inputs.append(e.scalar(node.attrs.get("value", 0.0), e.dtype(node.inputs[0])))
    e.node("Pad", inputs, node.outputs, mode=mode)


@onnx_op("transpose")
def transpose(e, node):
    e.node("Transpose", node.inputs, node.outputs, perm=node.attrs["perm"])


@onnx_op("reshape")
def reshape(e, node):
    e.node("Reshape", [node.inputs[0], e.ints(node.attrs["shape"])], node.outputs)


@onnx_op("reshape_dynamic")
def reshape_dynamic(e, node):
    shape = e.node("Cast", [node.inputs[1]], [e.fresh(node, "shape64")], to=e.onnx_dtype("int64"))
    e.node("Reshape", [node.inputs[0], shape], node.outputs)


@onnx_op("full")
def full(e, node):
    shape = e.node("Cast", [node.inputs[0]], [e.fresh(node, "shape64")], to=e.onnx_dtype("int64"))
    e.node("Expand", [e.scalar(node.attrs["value"], node.attrs["dtype"]), shape], node.outputs)


@onnx_op("expand_dynamic")
def expand_dynamic(e, node):
    e.node("Expand", node.inputs, node.outputs)


@onnx_op("repeat_interleave")
def repeat_interleave(e, node):
    """Each element k times along an axis: unsqueeze after it, expand that
    unit axis to k, and fold it back with the computed shape (the size may
    be dynamic)."""
    x, axis, k = node.inputs[0], node.attrs["axis"], node.attrs["repeats"]
    rank = len(e.graph.shape(x))
    tiled = [1] * (rank + 1)
    tiled[axis + 1] = k
    grown = [1] * rank
    grown[axis] = k
    wide = e.node("Unsqueeze", [x, e.ints([axis + 1])], [e.fresh(node, "unsqueezed")])
    wide = e.node("Expand", [wide, e.ints(tiled)], [e.fresh(node, "expanded")])
    shape = e.node("Mul", [e.node("Shape", [x], [e.fresh(node, "shape")]), e.ints(grown)],
                   [e.fresh(node, "target")])
    e.node("Reshape", [wide, shape], node.outputs)


@onnx_op("range")
def range_(e, node):
    e.node("Range", node.inputs, node.outputs)


@onnx_op("slice_dynamic")
def slice_dynamic(e, node):
    a = node.attrs
    e.node("Slice", [*node.inputs, e.ints(a["axes"]), e.ints(a["steps"])], node.outputs)


@onnx_op("squeeze", "unsqueeze")
def squeeze(e, node):
    e.node(node.op.capitalize(), [node.inputs[0], e.ints(node.attrs["axes"])], node.outputs)


@onnx_op("shape")
def shape(e, node):
    dtype = node.attrs.get("dtype", "int64")
    if dtype == "int64":
        e.node("Shape", node.inputs, node.outputs)
        return
    raw = e.node("Shape", node.inputs, [e.fresh(node, "shape")])
    e.node("Cast", [raw], node.outputs, to=e.onnx_dtype(dtype))


@onnx_op("layer_norm")
def layer_norm(e, node):
    x = node.inputs[0]
    inputs = list(node.inputs)
    if len(inputs) < 2 or not inputs[1]:
        width = (e.graph.shape(x) or [None])[-1]
        if width is None or node.attrs["axis"] % len(e.graph.shape(x)) != len(e.graph.shape(x)) - 1:
            raise e.unsupported(node, "layer_norm without scale over several axes")
        inputs = [x, e.const(np.ones(width, e.dtype(x)), "ones")] + inputs[2:]
    e.node("LayerNormalization", inputs, node.outputs, axis=node.attrs["axis"],
           epsilon=float(node.attrs["epsilon"]))


@onnx_op("rms_norm")
def rms_norm(e, node):
    """Spelled out: ONNX's RMSNormalization needs opset 23."""
    x = node.inputs[0]
    rank = len(e.graph.shape(x))
    axes = list(range(node.attrs["axis"] % rank, rank))
    square = e.node("Mul", [x, x], [e.fresh(node, "square")])
    if e.opset >= 18:
        mean = e.node("ReduceMean", [square, e.ints(axes)], [e.fresh(node, "mean")], keepdims=1)
    else:
        mean = e.node("ReduceMean", [square], [e.fresh(node, "mean")], axes=axes, keepdims=1)
    shifted = e.node("Add", [mean, e.scalar(float(node.attrs["epsilon"]), e.dtype(x))],
                     [e.fresh(node, "shifted")])
    root = e.node("Sqrt", [shifted], [e.fresh(node, "root")])
    scaled = len(node.inputs) > 1 and node.inputs[1]
    normed = e.node("Div", [x, root], [e.fresh(node, "normed")] if scaled else node.outputs)
    if scaled:
        e.node("Mul", [normed, node.inputs[1]], node.outputs)


@onnx_op("gather")
def gather(e, node):
    e.node("Gather", node.inputs, node.outputs, axis=node.attrs["axis"])


@onnx_op("slice")
def slice_(e, node):
    a = node.attrs
    e.node("Slice", [node.inputs[0], e.ints(a["starts"]), e.ints(a["ends"]), e.ints(a["axes"]),
                     e.ints(a["steps"])], node.outputs)


@onnx_op("split")
def split(e, node):
    e.node("Split", [node.inputs[0], e.ints(node.attrs["sizes"])], node.outputs,
           axis=node.attrs["axis"])


@onnx_op("expand")
def expand(e, node):
    e.node("Expand", [node.inputs[0], e.ints(node.attrs["shape"])], node.outputs)


@onnx_op("strided_slice")
def strided_slice(e, node):
    """Slice the input's axes, Squeeze the shrunk ones, Unsqueeze the new ones:
    the numpy index the IR kernel uses, item by item."""
    from ..ir.kernels import strided_slice_index
    big = np.iinfo(np.int64).max
    starts, ends, axes, steps, shrunk, new_axes = [], [], [], [], [], []
    axis = out_axis = 0
    for item in strided_slice_index(len(e.graph.shape(node.inputs[0])), node.attrs):
        if item is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if isinstance(item, slice):
            step = item.step or 1
            if (item.start, item.stop, step) != (None, None, 1):
                starts.append(item.start if item.start is not None else (0 if step > 0 else big))
                ends.append(item.stop if item.stop is not None else (big if step > 0 else -big))
                axes.append(axis), steps.append(step)
            out_axis += 1
        else:
            starts.append(item), ends.append(item + 1 if item != -1 else big)
            axes.append(axis), steps.append(1), shrunk.append(axis)
        axis += 1
    value = node.inputs[0]
    stages = [bool(axes), bool(shrunk), bool(new_axes)]
    last = max([i for i, used in enumerate(stages) if used], default=-1)

    def out(stage, hint):
        return node.outputs if stage == last else [e.fresh(node, hint)]
    if last == -1:
        e.node("Identity", [value], node.outputs)
        return
    if axes:
        value = e.node("Slice", [value, e.ints(starts), e.ints(ends), e.ints(axes),
                                 e.ints(steps)], out(0, "slice"))
    if shrunk:
        value = e.node("Squeeze", [value, e.ints(shrunk)], out(1, "squeeze"))
    if new_axes:
        e.node("Unsqueeze", [value, e.ints(new_axes)], out(2, "unsqueeze"))


@onnx_op("conv_transpose2d")
def conv_transpose2d(e, node):
    a = node.attrs
    kernel = list(e.graph.constants[node.inputs[1]].shape[2:])
    full = e.node("ConvTranspose", node.inputs, [e.fresh(node, "full")], strides=a["strides"],
                  kernel_shape=kernel)
    t, l, b, r = a["pads"]
    huge = (1 << 62)
    e.node("Slice", [full, e.ints([t, l]), e.ints([-b if b else huge, -r if r else huge]),
                     e.ints([2, 3])], node.outputs)


@onnx_op("resize")
def resize(e, node):
    a = node.attrs
    x = node.inputs[0]
    batch_channels = e.node("Slice", [e.node("Shape", [x], [e.fresh(node, "shape")]),
                                      e.ints([0]), e.ints([2])], [e.fresh(node, "nc")])
    sizes = e.node("Concat", [batch_channels, e.ints(a["size"])], [e.fresh(node, "sizes")],
                   axis=0)
    extra = {"nearest_mode": "floor"} if a["mode"] == "nearest" else {}
    e.node("Resize", [x, "", "", sizes], node.outputs,
           mode="linear" if a["mode"] == "bilinear" else "nearest",
           coordinate_transformation_mode=a["coord"], **extra)


@onnx_op("tile")
def tile(e, node):
    e.node("Tile", [node.inputs[0], e.ints(node.attrs["repeats"])], node.outputs)


@onnx_op("tile_dynamic")
def tile_dynamic(e, node):
    repeats = e.node("Cast", [node.inputs[1]], [e.fresh(node, "repeats64")],
                     to=e.onnx_dtype("int64"))
    e.node("Tile", [node.inputs[0], repeats], node.outputs)


@onnx_op("pad_dynamic")
def pad_dynamic(e, node):
    pads = e.node("Cast", [node.inputs[1]], [e.fresh(node, "pads64")], to=e.onnx_dtype("int64"))
    value = e.scalar(node.attrs.get("value", 0.0), e.dtype(node.inputs[0]))
    e.node("Pad", [node.inputs[0], pads, value], node.outputs, mode="constant")


@onnx_op("upsample")
def upsample(e, node):
    """Resize to sizes computed at run time: the input's shape times [1, 1, sh, sw]."""
    a, x = node.attrs, node.inputs[0]
    shape = e.node("Shape", [x], [e.fresh(node, "shape")])
    sizes = e.node("Mul", [shape, e.ints([1, 1, *a["scales"]])], [e.fresh(node, "sizes")])
    extra = {"nearest_mode": "floor"} if a["mode"] == "nearest" else {}
    e.node("Resize", [x, "", "", sizes], node.outputs,
           mode="linear" if a["mode"] == "bilinear" else "nearest",
           coordinate_transformation_mode=a["coord"], **extra)


@onnx_op("argmax")
def argmax(e, node):
    e.node("ArgMax", node.inputs[:1], node.outputs, axis=node.attrs["axis"],
           keepdims=int(bool(node.attrs.get("keepdims"))))


@onnx_op("topk")
def topk(e, node):
    x, axis = node.inputs[0], node.attrs["axis"]
    k = e.ints([node.attrs["k"]])
    if node.attrs["k"] == -1:  # the whole axis: its run-time length
        k = e.node("Gather", [e.node("Shape", [x], [e.fresh(node, "shape")]), e.ints([axis])],
                   [e.fresh(node, "length")], axis=0)
    e.node("TopK", [x, k], node.outputs, axis=axis,
           largest=int(node.attrs.get("largest", True)), sorted=1)


_COMPARE = {"greater": "Greater", "less": "Less", "greater_equal": "GreaterOrEqual",
            "less_equal": "LessOrEqual"}


@onnx_op(*_COMPARE)
def compare(e, node):
    e.node(_COMPARE[node.op], node.inputs, node.outputs)


@onnx_op("not_equal")
def not_equal(e, node):
    e.node("Not", [e.node("Equal", node.inputs, [e.fresh(node, "equal")])], node.outputs)


_BITWISE = {"bitwise_and": ("And", "BitwiseAnd"), "bitwise_or": ("Or", "BitwiseOr"),
            "bitwise_xor": ("Xor", "BitwiseXor"), "bitwise_not": ("Not", "BitwiseNot")}


@onnx_op(*_BITWISE)
def bitwise(e, node):
    # ONNX's Bitwise* ops (opset 18) take integers only; bool takes the logical ops.
    logical, bitwise_op = _BITWISE[node.op]
    if e.dtype(node.inputs[0]) == "bool":
        e.node(logical, node.inputs, node.outputs)
    elif e.opset >= 18:
        e.node(bitwise_op, node.inputs, node.outputs)
    else:
        raise e.unsupported(node, f"integer {node.op} needs ONNX opset 18 or newer")


@onnx_op("gather_elements")
def gather_elements(e, node):
    e.node("GatherElements", node.inputs, node.outputs, axis=node.attrs["axis"])


@onnx_op("scatter_elements")
def scatter_elements(e, node):
    reduction = node.attrs["reduction"]
    # ONNX ScatterElements took reduction add/mul at opset 16, max/min at 18.
    needed = {"none": 11, "add": 16, "mul": 16, "max": 18, "min": 18}[reduction]
    if e.opset < needed:
        raise e.unsupported(node, f"reduction {reduction!r} needs ONNX opset {needed} or newer")
    extra = {} if reduction == "none" else {"reduction": reduction}
    e.node("ScatterElements", node.inputs, node.outputs, axis=node.attrs["axis"], **extra)


@onnx_op("gather_nd")
def gather_nd(e, node):
    e.node("GatherND", node.inputs, node.outputs, batch_dims=node.attrs["batch_dims"])


@onnx_op("trilu")
def trilu(e, node):
    a = node.attrs
    e.node("Trilu", [node.inputs[0], e.scalar(a["k"], "int64")], node.outputs,
           upper=int(a["upper"]))


@onnx_op("cumsum")
def cumsum(e, node):
    a = node.attrs
    e.node("CumSum", [node.inputs[0], e.scalar(a["axis"], "int64")], node.outputs,
           exclusive=int(a["exclusive"]), reverse=int(a["reverse"]))


_RECURRENT = {"lstm": "LSTM", "gru": "GRU", "rnn": "RNN"}


@onnx_op(*_RECURRENT)
def recurrent(e, node):
    """ONNX LSTM/GRU/RNN in layout 0 (onnxruntime runs no other), its Y
    [seq, dirs, batch, hidden] made the IR's [seq or batch, ..., dirs*hidden]."""
    a = node.attrs
    inputs = list(node.inputs)
    if a["batch_first"]:
        inputs[0] = e.node("Transpose", [inputs[0]], [e.fresh(node, "time_major")],
                           perm=[1, 0, 2])
    if len(inputs) > 4 and inputs[4] and e.dtype(inputs[4]) != "int32":
        inputs[4] = e.node("Cast", [inputs[4]], [e.fresh(node, "lengths")],
                           to=e.onnx_dtype("int32"))
    attrs = {"hidden_size": a["hidden_size"], "direction": a["direction"]}
    if node.op == "gru":
        attrs["linear_before_reset"] = int(a["linear_before_reset"])
    if node.op == "rnn":
        attrs["activations"] = [a["activation"].capitalize()] * \
            (2 if a["direction"] == "bidirectional" else 1)
    y_split = e.fresh(node, "y")
    e.node(_RECURRENT[node.op], inputs, [y_split] + list(node.outputs[1:]), **attrs)
    perm = [2, 0, 1, 3] if a["batch_first"] else [0, 2, 1, 3]
    y_time = e.node("Transpose", [y_split], [e.fresh(node, "y_t")], perm=perm)
    e.node("Reshape", [y_time, e.ints([0, 0, -1])], node.outputs[:1])


@onnx_op("attention")
def attention(e, node):
    """Written out (MatMul, Mul, Add, Softmax, MatMul): ONNX's Attention op
    needs opset 23, which onnxruntime does not run on every build."""
    q, k, v = node.inputs[:3]
    shape = e.graph.shape(q)
    if shape is None or (node.attrs.get("scale") is None and not isinstance(shape[-1], int)):
        raise e.unsupported(node, "attention whose head size is unknown")
    if node.attrs.get("causal"):
        raise e.unsupported(node, "causal attention (the fusions never make it)")
    rank = len(shape)
    scale = node.attrs.get("scale")
    scale = 1 / float(np.sqrt(shape[-1])) if scale is None else float(scale)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    k_t = e.node("Transpose", [k], [e.fresh(node, "k_t")], perm=perm)
    scores = e.node("MatMul", [q, k_t], [e.fresh(node, "scores")])
    scores = e.node("Mul", [scores, e.scalar(scale, e.dtype(q))], [e.fresh(node, "scaled")])
    if len(node.inputs) > 3 and node.inputs[3]:
        scores = e.node("Add", [scores, node.inputs[3]], [e.fresh(node, "masked")])
        weights = e.node("Softmax", [scores], [e.fresh(node, "softmax")], axis=-1)
        if len(node.inputs) > 4 and node.inputs[4]:   # every row of the mask sees a key
            weights = e.node("Mul", [weights, node.inputs[4]], [e.fresh(node, "weights")])
        else:
            weights = _zero_rows_seeing_nothing(e, node, scores, weights)
    else:
        weights = e.node("Softmax", [scores], [e.fresh(node, "weights")], axis=-1)
    e.node("MatMul", [weights, v], node.outputs)


def _zero_rows_seeing_nothing(e, node, scores: str, weights: str) -> str:
    """onnxruntime's Softmax of a row that is all -inf is NaN; the IR's
    attention (torch's) gives 0 there: Where(IsInf(ReduceMax(row), -inf), 0, w)."""
    top = e.fresh(node, "row_max")
    if e.opset >= 18:
        e.node("ReduceMax", [scores, e.ints([-1])], [top], keepdims=1)
    else:
        e.node("ReduceMax", [scores], [top], axes=[-1], keepdims=1)
    hidden = e.node("IsInf", [top], [e.fresh(node, "sees_nothing")], detect_positive=0)
    return e.node("Where", [hidden, e.scalar(0, e.dtype(node.inputs[0])), weights],
                  [e.fresh(node, "weights")])
