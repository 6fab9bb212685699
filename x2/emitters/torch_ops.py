"""IR op -> PyTorch code, one small function per op (or op family).

Each function gets the emitter context `e` and the IR node, and returns the
expression computing the node's output. Layers with weights become nn.Module
submodules (fine-tunable); other constants become registered buffers."""
from __future__ import annotations

import numpy as np

from .codegen import Expr, binop, call, dtype_ref, strided_index, subscript, take
from .functional_ops import define_common, expand_target

TORCH_OPS: dict = {}


def torch_op(*names: str):
    def decorate(fn):
        for name in names:
            TORCH_OPS[name] = fn
        return fn
    return decorate


def _symmetric(pads: list[int]) -> bool:
    top, left, bottom, right = pads
    return top == bottom and left == right


def _pad_input(e, x, pads, value=None) -> Expr:
    """F.pad for the asymmetric pads torch layers cannot take (TF 'SAME' with stride 2)."""
    top, left, bottom, right = pads
    kwargs = {} if value is None else {"value": Expr(value)}
    return call("F.pad", e.value(x), [left, right, top, bottom], **kwargs)


@torch_op("conv2d")
def conv2d(e, node):
    a = node.attrs
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    pads = a["pads"]
    padding = [pads[0], pads[1]] if _symmetric(pads) else [0, 0]
    inp = e.value(x) if _symmetric(pads) else _pad_input(e, x, pads)
    if not e.is_const(w) or (bias and not e.is_const(bias)):
        args = [inp, e.value(w)] + ([e.value(bias)] if bias else [])
        return call("F.conv2d", *args, stride=a["strides"], padding=padding,
                    dilation=a["dilations"], groups=a["groups"])
    out_ch, in_per_group, kh, kw = e.const(w).shape
    layer = e.layer(node, "conv", call(
        "nn.Conv2d", in_per_group * a["groups"], out_ch, kernel_size=[kh, kw],
        stride=a["strides"], padding=padding, dilation=a["dilations"], groups=a["groups"],
        bias=bias is not None), {"weight": w, **({"bias": bias} if bias else {})})
    return call(f"self.{layer}", inp)


@torch_op("dense")
def dense(e, node):
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    weight = e.const(w)
    # IR dense weights are [in, out]; nn.Linear keeps [out, in].
    params = {"weight": np.ascontiguousarray(weight.T), **({"bias": bias} if bias else {})}
    name = e.layer(node, "linear", call("nn.Linear", weight.shape[0], weight.shape[1],
                                        bias=bias is not None), params, name_from=w)
    return call(f"self.{name}", e.value(x))


@torch_op("batch_norm")
def batch_norm(e, node):
    x, scale, bias, mean, var = node.inputs
    eps = node.attrs["epsilon"]
    rank = len(e.graph.shape(x) or ())
    if not all(e.is_const(v) for v in (scale, bias, mean, var)) or rank not in (2, 3, 4):
        return call("F.batch_norm", e.value(x), e.value(mean), e.value(var),
                    weight=e.value(scale), bias=e.value(bias), training=False, eps=eps)
    kind = "nn.BatchNorm2d" if rank == 4 else "nn.BatchNorm1d"
    layer = e.layer(node, "bn", call(kind, e.const(scale).shape[0], eps=eps),
                    {"weight": scale, "bias": bias, "running_mean": mean, "running_var": var,
                     "num_batches_tracked": np.array(0, np.int64)})
    return call(f"self.{layer}", e.value(x))


@torch_op("max_pool2d")
def max_pool2d(e, node):
    a = node.attrs
    pads = a["pads"]
    fits = _symmetric(pads) and 2 * pads[0] <= a["kernel"][0] and 2 * pads[1] <= a["kernel"][1]
    inp = e.value(node.inputs[0]) if fits else _pad_input(e, node.inputs[0], pads, "-float('inf')")
    return call("F.max_pool2d", inp, a["kernel"], a["strides"],
                padding=[pads[0], pads[1]] if fits else [0, 0])


@torch_op("avg_pool2d")
def avg_pool2d(e, node):
    a = node.attrs
    pads, include = a["pads"], a.get("count_include_pad", False)
    x = node.inputs[0]
    fits = _symmetric(pads) and 2 * pads[0] <= a["kernel"][0] and 2 * pads[1] <= a["kernel"][1]
    if fits or not any(pads):
        return call("F.avg_pool2d", e.value(x), a["kernel"], a["strides"],
                    padding=[pads[0], pads[1]], count_include_pad=include)
    summed = call("F.avg_pool2d", _pad_input(e, x, pads), a["kernel"], a["strides"],
                  divisor_override=1)
    if include:
        return binop(summed, "/", a["kernel"][0] * a["kernel"][1])
    top, left, bottom, right = pads
    ones = call("F.pad", call("torch.ones_like", e.value(x)), [left, right, top, bottom])
    count = call("F.avg_pool2d", ones, a["kernel"], a["strides"], divisor_override=1)
    return binop(summed, "/", count)


_UNARY = {"relu": "torch.relu", "sigmoid": "torch.sigmoid", "tanh": "torch.tanh",
          "exp": "torch.exp", "log": "torch.log", "sqrt": "torch.sqrt", "rsqrt": "torch.rsqrt",
          "abs": "torch.abs", "erf": "torch.erf", "square": "torch.square", "silu": "F.silu",
          "softplus": "F.softplus", "selu": "F.selu", "logical_not": "torch.logical_not"}


define_common(torch_op, _UNARY, clip_fn="torch.clamp")


@torch_op("gelu")
def gelu(e, node):
    approximate = "tanh" if node.attrs.get("approximate") else "none"
    return call("F.gelu", e.value(node.inputs[0]), approximate=approximate)


@torch_op("cast")
def cast(e, node):
    return call(f"{e.value(node.inputs[0])}.to", dtype_ref("torch", node.attrs["dtype"]))


_BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**",
                     "equal": "=="}
_BINARY_FUNCS = {"maximum": "torch.maximum", "minimum": "torch.minimum"}


@torch_op(*_BINARY_OPERATORS)
def binary_operator(e, node):
    a, b = node.inputs
    # Two Python scalars would make a Python number, not a tensor.
    tensor_a = e.is_scalar(a) and e.is_scalar(b)
    return binop(e.value(a, tensor=tensor_a), _BINARY_OPERATORS[node.op], e.value(b))


@torch_op(*_BINARY_FUNCS)
def binary_func(e, node):
    return call(_BINARY_FUNCS[node.op], *[e.value(v, tensor=True) for v in node.inputs])


@torch_op("where")
def where(e, node):
    return call("torch.where", *[e.value(v, tensor=True) for v in node.inputs])


_REDUCE = {"reduce_mean": "torch.mean", "reduce_sum": "torch.sum", "reduce_max": "torch.amax",
           "reduce_min": "torch.amin", "reduce_any": "torch.any"}


@torch_op(*_REDUCE)
def reduce(e, node):
    return call(_REDUCE[node.op], e.value(node.inputs[0]), dim=node.attrs["axes"],
                keepdim=node.attrs["keepdims"])


@torch_op("reduce_prod")
def reduce_prod(e, node):
    # torch.prod takes one dim: reduce the axes one by one, highest first.
    expr = e.value(node.inputs[0])
    for axis in sorted(node.attrs["axes"], reverse=True):
        expr = call("torch.prod", expr, dim=axis, keepdim=node.attrs["keepdims"])
    return expr


@torch_op("softmax", "log_softmax")
def softmax(e, node):
    return call(f"F.{node.op}", e.value(node.inputs[0]), dim=node.attrs["axis"])


@torch_op("concat", "stack")
def concat(e, node):
    items = Expr("[" + ", ".join(str(e.value(v, tensor=True)) for v in node.inputs) + "]")
    return call("torch.cat" if node.op == "concat" else "torch.stack", items,
                dim=node.attrs["axis"])


@torch_op("transpose")
def transpose(e, node):
    return call("torch.permute", e.value(node.inputs[0]), node.attrs["perm"])


@torch_op("reshape")
def reshape(e, node):
    x = e.value(node.inputs[0])
    in_shape = e.graph.shape(node.inputs[0])
    # IR reshape copies the input dim for 0 (ONNX); torch would make the dim empty.
    shape = [d if d != 0 else (in_shape[i] if in_shape and in_shape[i] is not None
                               else Expr(f"{x}.shape[{i}]"))
             for i, d in enumerate(node.attrs["shape"])]
    return call("torch.reshape", x, shape)


@torch_op("squeeze")
def squeeze(e, node):
    dims = Expr("(" + ", ".join(str(a) for a in node.attrs["axes"]) + ",)")
    return call("torch.squeeze", e.value(node.inputs[0]), dims)


@torch_op("unsqueeze")
def unsqueeze(e, node):
    expr = e.value(node.inputs[0])
    for axis in sorted(node.attrs["axes"]):
        expr = call("torch.unsqueeze", expr, axis)
    return expr


@torch_op("matmul")
def matmul(e, node):
    return call("torch.matmul", *[e.value(v, tensor=True) for v in node.inputs])


@torch_op("pad")
def pad(e, node):
    pads, mode = node.attrs["pads"], node.attrs.get("mode", "constant")
    rank = len(pads) // 2
    x = e.value(node.inputs[0])
    # F.pad lists (begin, end) pairs from the last dim backwards.
    flat = [p for i in reversed(range(rank)) for p in (pads[i], pads[i + rank])]
    while len(flat) > 2 and flat[-1] == 0 and flat[-2] == 0:
        flat = flat[:-2]
    if mode == "constant":
        return call("F.pad", x, flat, value=node.attrs.get("value", 0.0))
    if rank != 4 or any(pads[i] or pads[i + rank] for i in (0, 1)):
        raise e.unsupported(node, f"{mode} padding of batch/channel dims or rank {rank}")
    return call("F.pad", x, flat[:4], mode={"reflect": "reflect", "edge": "replicate"}[mode])


@torch_op("layer_norm")
def layer_norm(e, node):
    x = node.inputs[0]
    shape = list(e.graph.shape(x)[node.attrs["axis"]:])
    extra = [e.value(v) for v in node.inputs[1:]]
    return call("F.layer_norm", e.value(x), shape, *extra, eps=node.attrs["epsilon"])


@torch_op("group_norm")
def group_norm(e, node):
    x, scale, bias = node.inputs
    return call("F.group_norm", e.value(x), node.attrs["groups"], e.value(scale), e.value(bias),
                eps=node.attrs["epsilon"])


@torch_op("gather")
def gather(e, node):
    x, idx = node.inputs
    if e.is_const(idx) and e.const(idx).ndim == 0:
        return take(e.value(x), node.attrs["axis"], Expr(str(int(e.const(idx)))))
    if node.attrs["axis"] == 0 and e.is_const(x) and e.const(x).ndim == 2:
        return call("F.embedding", e.value(idx), e.value(x))
    # Tensor indexing on one axis is numpy.take for any index shape.
    return take(e.value(x), node.attrs["axis"], e.value(idx, tensor=True))


@torch_op("slice")
def slice_(e, node):
    a = node.attrs
    return subscript(e.value(node.inputs[0]), len(e.graph.shape(node.inputs[0])), a["axes"],
                     a["starts"], a["ends"], a["steps"])


@torch_op("expand")
def expand(e, node):
    shape = expand_target(e.graph.shape(node.inputs[0]), node.attrs["shape"])
    return call("torch.broadcast_to", e.value(node.inputs[0]), shape)


@torch_op("split")
def split(e, node):
    return call("torch.split", e.value(node.inputs[0]), node.attrs["sizes"],
                dim=node.attrs["axis"])


@torch_op("shape")
def shape(e, node):
    return call("torch.tensor", Expr(f"{e.value(node.inputs[0])}.shape"),
                dtype=dtype_ref("torch", node.attrs.get("dtype", "int64")))


@torch_op("reshape_dynamic")
def reshape_dynamic(e, node):
    return call("torch.reshape", e.value(node.inputs[0]),
                Expr(f"{e.value(node.inputs[1])}.tolist()"))


@torch_op("strided_slice")
def strided_slice(e, node):
    rank = len(e.graph.shape(node.inputs[0]) or ())
    return strided_index(e.value(node.inputs[0]), rank, node.attrs)


@torch_op("conv_transpose2d")
def conv_transpose2d(e, node):
    a = node.attrs
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    in_ch, out_ch, kh, kw = e.const(w).shape
    layer = e.layer(node, "deconv", call(
        "nn.ConvTranspose2d", in_ch, out_ch, kernel_size=[kh, kw], stride=a["strides"],
        bias=bias is not None), {"weight": w, **({"bias": bias} if bias else {})})
    t, l, b, r = a["pads"]
    huge = 1 << 62
    return subscript(call(f"self.{layer}", e.value(x)), 4, [2, 3], [t, l],
                     [-b if b else huge, -r if r else huge], [1, 1])


@torch_op("resize")
def resize(e, node):
    a = node.attrs
    if a["mode"] == "bilinear" and a["coord"] == "asymmetric":
        raise ValueError("resize: bilinear with asymmetric coordinates has no torch equivalent")
    extra = {"align_corners": a["coord"] == "align_corners"} if a["mode"] == "bilinear" else {}
    return call("F.interpolate", e.value(node.inputs[0]), size=a["size"], mode=a["mode"],
                **extra)


@torch_op("tile")
def tile(e, node):
    return call("torch.tile", e.value(node.inputs[0]), list(node.attrs["repeats"]))


@torch_op("argmax")
def argmax(e, node):
    return call("torch.argmax", e.value(node.inputs[0]), dim=node.attrs["axis"],
                keepdim=bool(node.attrs.get("keepdims")))


@torch_op("topk")
def topk(e, node):
    return call("torch.topk", e.value(node.inputs[0]), node.attrs["k"], dim=node.attrs["axis"],
                largest=True, sorted=True)


@torch_op("greater", "less")
def compare(e, node):
    fn = "torch.gt" if node.op == "greater" else "torch.lt"
    return call(fn, *[e.value(v, tensor=True) for v in node.inputs])
