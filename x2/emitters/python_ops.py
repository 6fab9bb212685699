"""IR op -> Python code for Paddle and PyTorch, one function per op (or op
family), written once for both.

Each function gets the emitter context `e` and the IR node and returns the
expression computing the node's output. `e.api(key, ...)` writes a call the
way the target spells it (spelling.py); the context's hooks say what the two
frameworks do differently in an op they share (how a convolution pads, how a
layer is told it has a bias). Ops whose code differs as a whole live in
paddle_ops.py and torch_ops.py. Layers with weights become submodules so
that the generated model can be fine-tuned."""
from __future__ import annotations

import numpy as np

from .codegen import Assign, Expr, binop, call, literal, strided_index, subscript, take
from .registry import OpRegistry

PYTHON_OPS = OpRegistry("Python")
register = PYTHON_OPS.register


@register("relu", "sigmoid", "tanh", "exp", "log", "log1p", "sqrt", "rsqrt", "abs", "erf", "square",
          "silu", "hard_sigmoid", "hard_swish", "softplus", "selu", "logical_not", "bitwise_not", "sin", "cos", "floor",
          "ceil", "sign", "reciprocal", "isnan", "isinf", "tan", "asin", "acos", "atan", "sinh",
          "cosh", "asinh", "acosh", "atanh")
def unary(e, node):
    return e.api(node.op, e.value(node.inputs[0]))


@register("identity")
def identity(e, node):
    """An identity left by the passes gives a graph output its own name (two
    outputs that are one tensor: a Keras LSTM's output and its state h)."""
    x = e.value(node.inputs[0])
    return e.output_copy(x) if node.outputs[0] in e.graph.outputs else x


@register("neg")
def neg(e, node):
    return Expr(f"-{e.value(node.inputs[0])}")


@register("clip")
def clip(e, node):
    lo, hi = node.attrs.get("min"), node.attrs.get("max")
    if lo == 0.0 and hi == 6.0:
        return e.api("relu6", e.value(node.inputs[0]))
    return e.api("clip", e.value(node.inputs[0]), min=lo, max=hi)


# leaky_relu: each target registers it (Paddle writes it apart from a conv).
def leaky_relu(e, node):
    return e.api("leaky_relu", e.value(node.inputs[0]), negative_slope=node.attrs["alpha"])


@register("elu")
def elu(e, node):
    return e.api("elu", e.value(node.inputs[0]), alpha=node.attrs.get("alpha", 1.0))


_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "equal": "=="}

# Paddle has no CPU kernels for these ops on these dtypes (its jit.save or
# run fails): computed in a wider dtype and cast back. Exact for max/min;
# for sub/mul the cast back wraps as the IR's (numpy's) integers do, and the
# post-emit check compares with the IR's kernels either way.
_PADDLE_WIDER = {"int8": "int32", "int16": "int32", "uint8": "int32", "float16": "float32",
                 "bool": "int32"}
_PADDLE_NARROW = {"maximum": ("int8", "int16", "uint8", "float16"),
                  "minimum": ("int8", "int16", "uint8", "float16"),
                  "reduce_max": ("bool",), "reduce_min": ("bool",),
                  "mul": ("int8", "int16", "uint8"), "sub": ("int8", "int16", "uint8")}


def _paddle_widened(e, node):
    """Paddle's code for `node` in a wider dtype, or None where none is needed."""
    if e.framework != "Paddle" or node.op not in _PADDLE_NARROW:
        return None
    dtype = e.graph.dtype(node.outputs[0])
    if dtype not in _PADDLE_NARROW[node.op]:
        return None
    wide = [call("paddle.cast", e.value(v, tensor=True), e.dtype(_PADDLE_WIDER[dtype]))
            for v in node.inputs]
    if node.op in _OPERATORS:
        out = binop(wide[0], _OPERATORS[node.op], wide[1])
    elif node.op in ("maximum", "minimum"):
        out = e.api(node.op, *wide)
    else:
        out = e.api(node.op, wide[0], axis=node.attrs["axes"], keepdim=node.attrs["keepdims"])
    return call("paddle.cast", out, e.dtype(dtype))


@register(*_OPERATORS)
def operator(e, node):
    widened = _paddle_widened(e, node)
    if widened is not None:
        return widened
    a, b = node.inputs
    # Two Python scalars would make a Python number, not a tensor.
    tensor_a = e.is_scalar(a) and e.is_scalar(b)
    symbol = _OPERATORS[node.op]
    dtype = e.graph.dtype(node.outputs[0]) or ""
    if symbol == "/" and dtype.startswith(("int", "uint")):
        # Both frameworks' / makes floats of integers; the IR's integer division
        # truncates, which // (flooring) matches for the sizes it divides. A
        # tensor divisor: paddle's 0-d int // a Python int has shape [1].
        return binop(e.value(a, tensor=tensor_a), "//", e.value(b, tensor=True))
    return binop(e.value(a, tensor=tensor_a), symbol, e.value(b))


@register("floor_div")
def floor_div(e, node):
    # Both frameworks' // rounds as Python does, on ints and floats alike.
    a, b = node.inputs
    return binop(e.value(a, tensor=e.is_scalar(a) and e.is_scalar(b)), "//",
                 e.value(b, tensor=True))


@register("mod")
def mod(e, node):
    # Both frameworks' % is floor-mod like numpy's, which the IR op follows.
    return binop(e.value(node.inputs[0], tensor=True), "%", e.value(node.inputs[1]))


# where: each target registers it (Paddle brings its operands to one shape).
@register("maximum", "minimum", "greater", "less", "greater_equal", "less_equal", "not_equal",
          "bitwise_and", "bitwise_or", "bitwise_xor", "matmul")
def on_tensors(e, node):
    widened = _paddle_widened(e, node)
    if widened is not None:
        return widened
    return e.api(node.op, *[e.value(v, tensor=True) for v in node.inputs])


# reduce_mean: each target registers it (Paddle writes global average pooling
# as a pool), the others share this.
@register("reduce_sum", "reduce_max", "reduce_min", "reduce_any")
def reduce(e, node):
    widened = _paddle_widened(e, node)
    if widened is not None:
        return widened
    return e.api(node.op, e.value(node.inputs[0]), axis=node.attrs["axes"],
                 keepdim=node.attrs["keepdims"])


@register("softmax", "log_softmax")
def softmax(e, node):
    return e.softmax_rows(node, e.api(node.op, e.value(node.inputs[0]), axis=node.attrs["axis"]))


@register("concat", "stack")
def concat(e, node):
    items = Expr("[" + ", ".join(str(e.value(v, tensor=True)) for v in node.inputs) + "]")
    return e.api(node.op, items, axis=node.attrs["axis"])


@register("split")
def split(e, node):
    return e.api("split", e.value(node.inputs[0]), node.attrs["sizes"], axis=node.attrs["axis"])


@register("transpose")
def transpose(e, node):
    return e.api("transpose", e.value(node.inputs[0]), perm=node.attrs["perm"])


@register("expand")
def expand(e, node):
    return e.api("expand", e.value(node.inputs[0]),
                 shape=expand_target(e.graph.shape(node.inputs[0]), node.attrs["shape"]))


def expand_target(in_shape, shape) -> list[int]:
    """The IR's ONNX-style expand target for paddle.expand/torch.broadcast_to: a 1
    against an input dim that is not 1 (e.g. a dynamic batch) keeps that dim (-1)."""
    if in_shape is None:
        return list(shape)
    aligned = [1] * (len(shape) - len(in_shape)) + list(in_shape)
    return [-1 if d == 1 and a != 1 else d for d, a in zip(shape, aligned)]


@register("tile")
def tile(e, node):
    return e.api("tile", e.value(node.inputs[0]), repeats=list(node.attrs["repeats"]))


def host_items(e, node, value: str) -> list:
    """A computed 1-D size value as a list of Python numbers and expressions
    read from the inputs' shapes (`[0, 0, 0, (8 - h % 8) % 8]`)."""
    if e.size_list(value) is None:
        raise e.unsupported(node, "sizes computed from tensor values (not from shapes)")
    return [item if isinstance(item, int) else Expr(item) for item in e.host[value].items]


@register("tile_dynamic")
def tile_dynamic(e, node):
    return e.api("tile", e.value(node.inputs[0]), repeats=host_items(e, node, node.inputs[1]))


@register("argmax")
def argmax(e, node):
    return e.api("argmax", e.value(node.inputs[0]), axis=node.attrs["axis"],
                 keepdim=bool(node.attrs.get("keepdims")))


@register("topk")
def topk(e, node):
    # Tied elements go to the lower index (the IR's rule, and ONNX TopK's):
    # torch.topk and paddle.topk order ties as their kernels find them, so a
    # stable sort, then the first k.
    x, axis, k = literal(e.value(node.inputs[0])), node.attrs["axis"], node.attrs["k"]
    largest = bool(node.attrs.get("largest", True))
    if e.framework == "PyTorch":
        ordered = f"torch.sort({x}, dim={axis}, descending={largest}, stable=True)"
        return Expr(ordered if k == -1 else
                    f"[part.narrow({axis}, 0, {int(k)}) for part in {ordered}]")
    pair = (f"paddle.sort({x}, axis={axis}, descending={largest}, stable=True), "
            f"paddle.argsort({x}, axis={axis}, descending={largest}, stable=True)")
    return Expr(f"({pair})" if k == -1 else
                f"[paddle.slice(part, [{axis}], [0], [{int(k)}]) for part in ({pair})]")


@register("gather")
def gather(e, node):
    x, idx = node.inputs
    axis = node.attrs["axis"]
    if e.is_const(idx) and e.const(idx).ndim == 0:
        # One constant index (ONNX Gather on a shape or a qkv stack): plain indexing.
        return take(e.value(x), axis, Expr(str(int(e.const(idx)))))
    if _is_embedding(e, node):
        return call(str(e.ref(_embedding_layer(e, node))), e.value(idx))
    if e.has_api("index_select") and len(e.graph.shape(idx) or (0, 0)) == 1:
        return e.api("index_select", e.value(x), e.value(idx), axis=axis)
    # Tensor indexing on one axis is numpy.take for any index shape.
    source = e.value(x)
    if e.framework == "Paddle" and axis > 0:
        # Paddle 3.3 indexes a strided view (a slice, reshaped) past its first
        # axis by an index of 2 or more dims wrongly: wrong shape, or "index out
        # of range"; contiguous() is the tensor itself where it is contiguous.
        source = Expr(f"{literal(source)}.contiguous()")
    return take(source, axis, e.value(idx, tensor=True))


def _is_embedding(e, node) -> bool:
    return (node.op == "gather" and node.attrs["axis"] == 0 and e.is_const(node.inputs[0])
            and e.const(node.inputs[0]).ndim == 2)


def _embedding_layer(e, node) -> str:
    """The nn.Embedding a gather of table rows is (one per table)."""
    rows, width = e.const(node.inputs[0]).shape
    padding = node.attrs.get("padding_idx")
    # torch's padding_idx only stops the row's gradient; paddle's also zeroes
    # the row in forward, which a checkpoint with a trained pad row (the pad id
    # set to eos after pre-training) must not see. Paddle keeps torch's rule
    # for fine-tuning with a gradient hook instead.
    if padding is None or e.framework != "Paddle":
        extra = {} if padding is None else {"padding_idx": padding}
        return e.layer(node, "embedding", e.api("Embedding", rows, width, **extra),
                       {"weight": node.inputs[0]})
    ctor = e.api("Embedding", rows, width)
    if getattr(e, "for_training", False):
        e.helper(PADDLE_PADDING_ROW)
        ctor = call("padding_row_without_gradient", ctor, padding)
    return e.layer(node, "embedding", ctor, {"weight": node.inputs[0]})


PADDLE_PADDING_ROW = '''def padding_row_without_gradient(embedding, padding_idx):
    """torch's padding_idx: that row of the table gets no gradient, and forward
    reads it as it is (paddle's padding_idx would return zeros there)."""
    def hook(grad):
        keep = paddle.ones([grad.shape[0], 1], grad.dtype)
        keep[padding_idx] = 0
        return grad * keep
    embedding.weight.register_hook(hook)
    return embedding
'''



def _tied_embedding(e, w: str) -> str | None:
    """The embedding layer whose table `w` is the transpose of: a head tied
    to its input embedding (GPT-2's lm_head is wte.weight)."""
    origin = e.graph.origin.get(w)
    if origin is None or origin.perm != (1, 0):
        return None
    gather = _embedding_gathers(e).get(origin.tensor)
    return None if gather is None else _embedding_layer(e, gather)


def _embedding_gathers(e) -> dict:
    """Source tensor -> the first embedding gather of its rows, untransposed."""
    if "embedding_gathers" not in e.memo:
        gathers = {}
        for node in e.graph.nodes:
            if _is_embedding(e, node):
                table = e.graph.origin.get(node.inputs[0])
                if table is not None and table.perm is None:
                    gathers.setdefault(table.tensor, node)
        e.memo["embedding_gathers"] = gathers
    return e.memo["embedding_gathers"]


@register("gather_nd")
def gather_nd(e, node):
    """x[arange(B0)[:, None], idx[..., 0], idx[..., 1]]: the kernel's advanced
    index (x2/ir/kernels.py: gather_nd_index); negative indices count from the end."""
    x, idx = node.inputs
    x_shape, idx_shape = e.graph.shape(x), e.graph.shape(idx)
    if x_shape is None or not idx_shape or idx_shape[-1] is None:
        raise e.unsupported(node, "the ranks and the index depth must be known")
    b, rest = node.attrs["batch_dims"], len(idx_shape) - 1 - node.attrs["batch_dims"]
    value, index = e.value(x), e.value(idx, tensor=True)
    grids = [Expr(f"{e.api('arange', e.dim(value, j) if n is None else n)}"
                  f".reshape({[-1] + [1] * (b - 1 - j + rest)})")
             for j, n in enumerate(x_shape[:b])]
    columns = [Expr(f"{index}[..., {i}]") for i in range(idx_shape[-1])]
    return Expr(f"{value}[{', '.join(str(p) for p in grids + columns)}]")


@register("cumsum")
def cumsum(e, node):
    a = node.attrs
    axis, rank = a["axis"], len(e.graph.shape(node.inputs[0]))
    x = e.value(node.inputs[0])
    if a["reverse"]:
        x = e.api("flip", x, axis=[axis])
    dtype = e.graph.dtype(node.inputs[0])
    # torch.cumsum of an int32 tensor gives int64 unless told: keep the IR's dtype.
    y = e.api("cumsum", x, axis=axis,
              **({"dtype": e.dtype(dtype)} if dtype and "int" in dtype else {}))
    if a["exclusive"]:
        # A zero in front, the last sum dropped (subtracting x would round floats).
        pads = [0] * (2 * rank)
        pads[axis] = 1
        shape = e.graph.shape(node.inputs[0])
        shape = None if shape is None else [d - (i == axis) if isinstance(d, int) else d
                                            for i, d in enumerate(shape)]
        y = e.constant_pad(subscript(y, rank, [axis], [0], [-1], [1]), pads, 0, shape, dtype)
    return e.api("flip", y, axis=[axis]) if a["reverse"] else y


@register("trilu")
def trilu(e, node):
    return e.api("triu" if node.attrs["upper"] else "tril", e.value(node.inputs[0]),
                 diagonal=node.attrs["k"])


@register("slice")
def slice_(e, node):
    a = node.attrs
    shape = e.graph.shape(node.inputs[0])
    x, starts, ends, steps = e.value(node.inputs[0]), a["starts"], a["ends"], a["steps"]
    flipped = [axis for axis, step in zip(a["axes"], steps) if step < 0]
    huge = 1 << 62
    if flipped and all(step == -1 and start == -1 and end <= -huge for start, end, step
                       in zip(starts, ends, steps)):
        return e.api("flip", x, axis=flipped)  # the whole axis reversed, whatever its size
    if flipped and not e.negative_slice_steps:
        # x[b:e:-s] along an axis of n is flip(x)[n-1-b : n-1-e : s], with b and e
        # normalised the way Python normalises them.
        if any(not isinstance(shape[axis], int) for axis in flipped):
            raise e.unsupported(node, "a negative slice step on a dimension of unknown size")
        x = e.api("flip", x, axis=flipped)
        starts, ends, steps = list(starts), list(ends), list(steps)
        for i, axis in enumerate(a["axes"]):
            if steps[i] < 0:
                n = shape[axis]
                begin, stop, step = slice(starts[i], ends[i], steps[i]).indices(n)
                starts[i], ends[i], steps[i] = n - 1 - begin, n - 1 - stop, -step
    if e.framework == "Paddle":
        starts = [_clamped_start(x, shape, axis, start) if step > 0 else start
                  for axis, start, step in zip(a["axes"], starts, steps)]
    return subscript(x, len(shape), a["axes"], starts, ends, steps)


def _clamped_start(x, shape, axis: int, start: int):
    """A negative start that may reach before the first element, as a start
    Paddle Inference can run: its oneDNN slice throws on `x[-7:]` of 5
    elements (Python and the IR take all 5)."""
    if start >= 0:
        return start
    size = shape[axis]
    if isinstance(size, int):
        return max(size + start, 0)
    return Expr(f"paddle.clip(paddle.shape({x})[{axis}] - {-start}, min=0)")


@register("slice_dynamic")
def slice_dynamic(e, node):
    """x[starts[0]:ends[0], ...] with the computed bounds indexed in place (a
    constant bound stays a literal)."""
    a = node.attrs
    rank = len(e.graph.shape(node.inputs[0]) or ())
    if not rank:
        raise e.unsupported(node, "a computed slice of a tensor whose rank is unknown")
    if any(step < 0 for step in a["steps"]) and not e.negative_slice_steps:
        raise e.unsupported(node, "a computed slice with a negative step")
    starts, ends = (_bounds(e, value, len(a["axes"])) for value in node.inputs[1:3])
    return subscript(e.value(node.inputs[0]), rank, a["axes"], starts, ends, a["steps"])


def _bounds(e, value: str, count: int) -> list:
    if e.is_const(value):
        return [int(b) for b in e.const(value).reshape(-1)]
    if e.size_list(value) is not None:
        return [b if isinstance(b, int) else Expr(b) for b in e.host[value].items]
    return [Expr(f"{e.value(value)}[{i}]") for i in range(count)]


@register("repeat_interleave")
def repeat_interleave(e, node):
    return e.api("repeat_interleave", e.value(node.inputs[0]), node.attrs["repeats"],
                 axis=node.attrs["axis"])


@register("range")
def range_(e, node):
    start, limit, delta = (e.value(v) for v in node.inputs)
    return e.api("arange", start, limit, delta, dtype=e.dtype(e.graph.dtype(node.outputs[0])))


@register("strided_slice")
def strided_slice(e, node):
    rank = len(e.graph.shape(node.inputs[0]) or ())
    return strided_index(e.value(node.inputs[0]), rank, node.attrs)


@register("pad")
def pad(e, node):
    pads, mode = node.attrs["pads"], node.attrs.get("mode", "constant")
    rank = len(pads) // 2
    x = e.value(node.inputs[0])
    if mode == "constant":
        return e.constant_pad(x, pads, node.attrs.get("value", 0.0),
                              e.graph.shape(node.inputs[0]), e.graph.dtype(node.inputs[0]))
    padded = [i for i in range(rank) if pads[i] or pads[i + rank]]
    if not padded:
        return x
    # Both frameworks pad the last 1-3 dims of an [N, C, ...] tensor, taking
    # (begin, end) pairs from the last dim back; the dims before the first
    # padded one beyond N, C are padded by 0, and unit dims in front give a
    # smaller tensor its N and C.
    spatial = max(rank - padded[0], rank - 2)
    if spatial > 3:
        raise e.unsupported(node, f"{mode} padding of {rank - padded[0]} dims of a rank-{rank} "
                                  f"tensor (at most 3 after two leading dims)")
    lead = spatial + 2 - rank
    if lead:
        x = Expr(f"{literal(x)}[{', '.join(['None'] * lead)}]")
    order = [v for d in reversed(range(rank - spatial, rank)) for v in (pads[d], pads[d + rank])]
    out = e.api("pad", x, order, mode={"reflect": "reflect", "edge": "replicate"}[mode])
    return Expr(f"{literal(out)}[{', '.join(['0'] * lead)}]") if lead else out


@register("rms_norm")
def rms_norm(e, node):
    """Paddle: one fused_rms_norm call (Paddle Inference runs it 15x faster than
    the five ops of its arithmetic); torch: F.rms_norm. Spelled out without a
    scale, and on Paddle --for training (the fused op has no CPU gradient)."""
    x, eps = node.inputs[0], float(node.attrs["epsilon"])
    rank = len(e.graph.shape(x))
    axis = node.attrs["axis"] % rank
    scale = e.value(node.inputs[1]) if len(node.inputs) > 1 and node.inputs[1] else None
    if e.framework == "Paddle" and scale is not None and not e.for_training:
        fused = call("paddle.incubate.nn.functional.fused_rms_norm", e.value(x), scale,
                     Expr("None"), eps, axis)
        return Expr(f"{fused}[0]")
    if e.framework != "Paddle":
        shape = tuple(e.graph.shape(x)[axis:])
        return call("F.rms_norm", e.value(x), shape, *([scale] if scale is not None else []),
                    eps=eps)
    v = e.value(x)
    out = Expr(f"({v} * paddle.rsqrt(({v} * {v}).mean(axis={list(range(axis, rank))}, "
               f"keepdim=True) + {eps!r}))")
    return binop(out, "*", scale) if scale is not None else out


@register("layer_norm")
def layer_norm(e, node):
    x = node.inputs[0]
    shape = list(e.graph.shape(x)[node.attrs["axis"]:])
    eps = node.attrs["epsilon"]
    # (paddle compares its float32 epsilon with 0.001f: Keras's 1e-3 is in range)
    spelled_out = e.framework == "Paddle" and (node.attrs["axis"] % len(e.graph.shape(x)) == 0
                                               or not 0 <= np.float32(eps) <= np.float32(1e-3))
    if len(shape) == 1 and len(node.inputs) == 3 and not spelled_out and \
            all(e.is_const(v) for v in node.inputs[1:]):
        # A learned scale and bias over one axis: nn.LayerNorm, as one writes it.
        layer = e.layer(node, "norm", e.api("LayerNorm", shape[0], epsilon=eps),
                        _params(*node.inputs[1:]))
        return call(str(e.ref(layer)), e.value(x))
    extra = [e.value(v) for v in node.inputs[1:]]
    if spelled_out:
        # paddle's layer_norm op takes begin_norm_axis >= 1 and epsilon in
        # [0, 0.001] only: spelled out as (x - mean) / sqrt(var + eps).
        axes = list(range(node.attrs["axis"] % len(e.graph.shape(x)), len(e.graph.shape(x))))
        v = e.value(x)
        out = Expr(f"(({v} - {v}.mean(axis={axes}, keepdim=True)) / paddle.sqrt({v}.var("
                   f"axis={axes}, unbiased=False, keepdim=True) + {float(eps)!r}))")
        if extra:
            out = Expr(f"({out} * {extra[0]})")
        if len(extra) > 1:
            out = Expr(f"({out} + {extra[1]})")
        return out
    if e.framework == "Paddle" and len(shape) > 1:
        # paddle's static graph takes a 1-D scale and bias over the normalized dims.
        extra = [Expr(f"{v}.reshape([-1])") for v in extra]
    return e.api("layer_norm", e.value(x), shape, *extra, epsilon=node.attrs["epsilon"])


@register("group_norm")
def group_norm(e, node):
    """A learned scale and bias: nn.InstanceNorm1d/2d where every channel is a
    group (as one writes it), else nn.GroupNorm; otherwise F.group_norm."""
    x, scale, bias = node.inputs
    groups, eps = node.attrs["groups"], node.attrs["epsilon"]
    shape = e.graph.shape(x) or ()
    if not (e.is_const(scale) and e.is_const(bias)) or len(shape) < 3 or \
            not isinstance(shape[1], int):
        return e.api("group_norm", e.value(x), groups, epsilon=eps, weight=e.value(scale),
                     bias=e.value(bias))
    channels = shape[1]
    if groups == channels and len(shape) in (3, 4):
        # torch's InstanceNorm has no weights unless affine; Paddle's calls its weight scale.
        ctor = e.api(f"InstanceNorm{len(shape) - 2}d", channels, epsilon=eps,
                     **({"affine": True} if e.framework == "PyTorch" else {}))
        params = {"scale" if e.framework == "Paddle" else "weight": scale, "bias": bias}
        layer = e.layer(node, "norm", ctor, params)
    else:
        layer = e.layer(node, "norm", e.api("GroupNorm", groups, channels, epsilon=eps),
                        _params(scale, bias))
    return call(str(e.ref(layer)), e.value(x))


@register("dropout")
def dropout(e, node):
    """nn.Dropout(p): inactive in eval(), the source's dropout in train()."""
    layer = e.layer(node, "dropout", e.api("Dropout", p=node.attrs["rate"]), {})
    return call(str(e.ref(layer)), e.value(node.inputs[0]))


@register("batch_norm")
def batch_norm(e, node):
    x, scale, bias, mean, var = node.inputs
    eps = node.attrs["epsilon"]
    rank = len(e.graph.shape(x) or ())
    if not all(e.is_const(v) for v in (scale, bias, mean, var)) or rank not in (2, 3, 4):
        return e.api("batch_norm", e.value(x), e.value(mean), e.value(var),
                     weight=e.value(scale), bias=e.value(bias), training=False, epsilon=eps,
                     **e.data_format(node))
    layer = e.layer(node, "bn", e.api("BatchNorm2d" if rank == 4 else "BatchNorm1d",
                                      e.const(scale).shape[0], epsilon=eps,
                                      **e.data_format(node)),
                    e.norm_state(scale, bias, mean, var))
    return call(str(e.ref(layer)), e.value(x))


def _params(weight, bias) -> dict:
    return {"weight": weight, **({"bias": bias} if bias else {})}


@register("conv2d")
def conv2d(e, node):
    a = node.attrs
    w = node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    inp, padding = e.conv_padding(node, list((e.graph.shape(w) or (None,) * 4)[2:]))
    if not e.is_const(w) or (bias and not e.is_const(bias)):
        args = [inp, e.value(w)] + ([e.value(bias)] if bias else [])
        return e.api("conv2d", *args, stride=a["strides"], padding=padding,
                     dilation=a["dilations"], groups=a["groups"], **e.data_format(node))
    out_ch, in_per_group, kh, kw = e.const(w).shape
    layer = e.layer(node, "conv", e.api(
        "Conv2d", in_per_group * a["groups"], out_ch, kernel_size=[kh, kw], stride=a["strides"],
        padding=padding, dilation=a["dilations"], groups=a["groups"], **e.bias_flag(bias),
        **e.data_format(node)), _params(w, bias))
    return call(str(e.ref(layer)), inp)


@register("conv_transpose2d")
def conv_transpose2d(e, node):
    a = node.attrs
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    in_ch, out_ch, kh, kw = e.const(w).shape
    layer = e.layer(node, "deconv", e.api(
        "ConvTranspose2d", in_ch, out_ch, kernel_size=[kh, kw], stride=a["strides"],
        **e.bias_flag(bias)), _params(w, bias))
    # The IR's pads crop the full output: x[:, :, top:-bottom, left:-right].
    t, l, b, r = a["pads"]
    huge = 1 << 62
    return subscript(call(str(e.ref(layer)), e.value(x)), 4, [2, 3], [t, l],
                     [-b if b else huge, -r if r else huge], [1, 1])


@register("dense")
def dense(e, node):
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    tied = _tied_embedding(e, w)
    if tied is not None:
        # A separate Linear would untie the head: fine-tuning would move one copy.
        return e.tied_linear(e.value(x), Expr(f"{e.ref(tied)}.weight"),
                             e.value(bias) if bias else None)
    size_in, size_out = e.const(w).shape
    in_out = e.in_out_linear(w, bias)
    if in_out is not None:
        # the source's own layer holds the weight as [in, out] (transformers'
        # Conv1D in GPT-2): a layer of that layout keeps it at its source key
        layer = e.layer(node, "linear", in_out, _params(w, bias))
        return call(str(e.ref(layer)), e.value(x))
    layer = e.layer(node, "linear", e.linear(size_in, size_out, bias),
                    _params(e.dense_weight(w), bias), name_from=w)
    return call(str(e.ref(layer)), e.value(x))


# ONNX's gate blocks (the IR's) in torch's and Paddle's order: LSTM i,o,f,c -> i,f,c,o;
# GRU z,r,h -> r,z,h.
_GATE_ORDER = {"lstm": (0, 2, 3, 1), "gru": (1, 0, 2), "rnn": (0,)}


def _regate(array, order):
    return np.ascontiguousarray(np.concatenate(
        [block for i in order for block in [np.split(array, len(order))[i]]]))


@register("lstm", "gru", "rnn")
def recurrent(e, node):
    """The framework's own nn.LSTM/GRU/RNN layer, weights re-laid-out once."""
    a = node.attrs
    x, w, r, b, lens, h0, c0 = (list(node.inputs) + [""] * 7)[:7]
    if not all(e.is_const(v) for v in (w, r, b) if v):
        raise e.unsupported(node, "its weights are computed at run time, and a recurrent "
                                  "layer needs them as parameters")
    if node.op == "gru" and not a["linear_before_reset"]:
        return _gru_reset_before(e, node, x, w, r, b, lens, h0)
    if a["direction"] == "reverse" and lens:
        raise e.unsupported(node, "a reverse-only recurrent layer with sequence lengths")
    order = _GATE_ORDER[node.op]
    directions = 2 if a["direction"] == "bidirectional" else 1
    params = {}
    for d, suffix in enumerate(("", "_reverse")[:directions]):
        params[f"weight_ih_l0{suffix}"] = _regate(e.const(w)[d], order)
        params[f"weight_hh_l0{suffix}"] = _regate(e.const(r)[d], order)
        if b:
            w_bias, r_bias = np.split(e.const(b)[d], 2)
            params[f"bias_ih_l0{suffix}"] = _regate(w_bias, order)
            params[f"bias_hh_l0{suffix}"] = _regate(r_bias, order)
    input_size = e.const(w).shape[2]
    ctor = e.recurrent_layer(node, input_size, bool(b))
    layer = e.layer(node, node.op, ctor, e.recurrent_params(params, directions),
                    name_from=w)
    time_axis = 1 if a["batch_first"] else 0
    state = None
    if h0 or c0:
        state = e.value(h0) if h0 else e.api("zeros_like", e.value(c0))
        if node.op == "lstm":
            cell = e.value(c0) if c0 else e.api("zeros_like", e.value(h0))
            state = Expr(f"({state}, {cell})")
    y, *states = [e.namer(o) for o in node.outputs]
    targets = [y, f"({', '.join(states)})" if len(states) > 1 else states[0]]
    inp = e.value(x)
    if a["direction"] == "reverse":   # neither framework has a reverse-only layer
        inp = e.api("flip", inp, axis=[time_axis])
    steps = e.recurrent_call(node, str(e.ref(layer)), inp, state, e.value(lens) if lens else None,
                             targets, time_axis)
    if a["direction"] == "reverse":
        steps.append(Assign([y], e.api("flip", Expr(y), axis=[time_axis])))
    return steps


def _gru_reset_before(e, node, x, w, r, b, lens, h0) -> list:
    """A GRU resetting before its recurrent matmul, which no nn.GRU does: x2's
    own GRUResetBefore class in model.py (recurrent_classes.py), weights as
    the IR has them."""
    a = node.attrs
    e.reset_before_gru_supported(node, x)
    e.helper(e.gru_reset_before_class)
    directions, _, input_size = e.const(w).shape
    ctor = call("GRUResetBefore", input_size, a["hidden_size"], directions=directions,
                reverse=a["direction"] == "reverse", bias=bool(b),
                batch_first=a["batch_first"])
    params = {"weight_ih": w, "weight_hh": r, **({"bias": b} if b else {})}
    layer = e.layer(node, "gru", ctor, params)
    args = [e.value(x), e.value(h0) if h0 else None] + ([e.value(lens)] if lens else [])
    while args[-1] is None:
        args.pop()
    return [Assign([e.namer(o) for o in node.outputs], call(str(e.ref(layer)), *args))]
