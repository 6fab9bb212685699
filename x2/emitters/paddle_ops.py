"""IR op -> Paddle code, one small function per op (or op family).

Each function gets the emitter context `e` and the IR node, and returns the
expression computing the node's output. Layers with weights become nn.Layer
submodules so that the generated model can be fine-tuned."""
from __future__ import annotations

from .codegen import Expr, binop, call, strided_index, subscript, take
from .functional_ops import define_common, expand_target

PADDLE_OPS: dict = {}


def paddle_op(*names: str):
    def decorate(fn):
        for name in names:
            PADDLE_OPS[name] = fn
        return fn
    return decorate


def _data_format(node) -> dict:
    """data_format="NHWC" when --layout nhwc kept the source layout; NCHW is Paddle's default."""
    return {"data_format": "NHWC"} if node.attrs.get("data_format") == "NHWC" else {}


def _paddle_pads(pads: list[int]):
    top, left, bottom, right = pads
    if top == bottom and left == right:
        return [top, left]
    return [top, bottom, left, right]


@paddle_op("conv2d")
def conv2d(e, node):
    a = node.attrs
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    if not e.is_const(w) or (bias and not e.is_const(bias)):
        args = [e.value(x), e.value(w)] + ([e.value(bias)] if bias else [])
        return call("F.conv2d", *args, stride=a["strides"], padding=_paddle_pads(a["pads"]),
                    dilation=a["dilations"], groups=a["groups"], **_data_format(node))
    weight = e.const(w)
    out_ch, in_per_group, kh, kw = weight.shape
    layer = e.layer(node, "conv", call(
        "nn.Conv2D", in_per_group * a["groups"], out_ch, kernel_size=[kh, kw],
        stride=a["strides"], padding=_paddle_pads(a["pads"]), dilation=a["dilations"],
        groups=a["groups"], bias_attr=Expr("None" if bias else "False"), **_data_format(node)),
        {"weight": w, **({"bias": bias} if bias else {})})
    return call(f"self.{layer}", e.value(x))


@paddle_op("dense")
def dense(e, node):
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    weight = e.const(w)
    layer = e.layer(node, "linear", call("nn.Linear", weight.shape[0], weight.shape[1],
                                         bias_attr=Expr("None" if bias else "False")),
                    {"weight": w, **({"bias": bias} if bias else {})})
    return call(f"self.{layer}", e.value(x))


@paddle_op("batch_norm")
def batch_norm(e, node):
    x, scale, bias, mean, var = node.inputs
    channels = e.const(scale).shape[0]
    layer = e.layer(node, "bn", call("nn.BatchNorm2D", channels, epsilon=node.attrs["epsilon"],
                                     **_data_format(node)),
                    {"weight": scale, "bias": bias, "_mean": mean, "_variance": var})
    return call(f"self.{layer}", e.value(x))


@paddle_op("max_pool2d", "avg_pool2d")
def pool2d(e, node):
    a = node.attrs
    kwargs = {"kernel_size": a["kernel"], "stride": a["strides"],
              "padding": _paddle_pads(a["pads"]), **_data_format(node)}
    if node.op == "avg_pool2d":
        kwargs["exclusive"] = not a.get("count_include_pad", False)
        return call("F.avg_pool2d", e.value(node.inputs[0]), **kwargs)
    return call("F.max_pool2d", e.value(node.inputs[0]), **kwargs)


_UNARY = {"relu": "F.relu", "sigmoid": "F.sigmoid", "tanh": "paddle.tanh", "exp": "paddle.exp",
          "log": "paddle.log", "sqrt": "paddle.sqrt", "rsqrt": "paddle.rsqrt",
          "abs": "paddle.abs", "erf": "paddle.erf", "square": "paddle.square",
          "silu": "F.silu", "softplus": "F.softplus", "selu": "F.selu"}


define_common(paddle_op, _UNARY, clip_fn="paddle.clip")


@paddle_op("gelu")
def gelu(e, node):
    return call("F.gelu", e.value(node.inputs[0]),
                approximate=bool(node.attrs.get("approximate", False)))


@paddle_op("cast")
def cast(e, node):
    return call("paddle.cast", e.value(node.inputs[0]), node.attrs["dtype"])


_BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**"}
_BINARY_FUNCS = {"maximum": "paddle.maximum", "minimum": "paddle.minimum"}


@paddle_op(*_BINARY_OPERATORS)
def binary_operator(e, node):
    a, b = node.inputs
    return binop(e.value(a), _BINARY_OPERATORS[node.op], e.value(b))


@paddle_op(*_BINARY_FUNCS)
def binary_func(e, node):
    return call(_BINARY_FUNCS[node.op], *[e.value(v, tensor=True) for v in node.inputs])


_REDUCE = {"reduce_mean": "paddle.mean", "reduce_sum": "paddle.sum", "reduce_max": "paddle.max",
           "reduce_min": "paddle.min", "reduce_prod": "paddle.prod"}


@paddle_op(*_REDUCE)
def reduce(e, node):
    return call(_REDUCE[node.op], e.value(node.inputs[0]), axis=node.attrs["axes"],
                keepdim=node.attrs["keepdims"])


@paddle_op("softmax", "log_softmax")
def softmax(e, node):
    return call(f"F.{node.op}", e.value(node.inputs[0]), axis=node.attrs["axis"])


@paddle_op("concat", "stack")
def concat(e, node):
    items = Expr("[" + ", ".join(str(e.value(v, tensor=True)) for v in node.inputs) + "]")
    return call(f"paddle.{node.op}", items, axis=node.attrs["axis"])


@paddle_op("transpose")
def transpose(e, node):
    return call("paddle.transpose", e.value(node.inputs[0]), perm=node.attrs["perm"])


@paddle_op("reshape")
def reshape(e, node):
    return call("paddle.reshape", e.value(node.inputs[0]), shape=node.attrs["shape"])


@paddle_op("squeeze", "unsqueeze")
def squeeze(e, node):
    return call(f"paddle.{node.op}", e.value(node.inputs[0]), axis=node.attrs["axes"])


@paddle_op("matmul")
def matmul(e, node):
    return call("paddle.matmul", *[e.value(v, tensor=True) for v in node.inputs])


@paddle_op("pad")
def pad(e, node):
    pads, mode = node.attrs["pads"], node.attrs.get("mode", "constant")
    rank = len(pads) // 2
    x = e.value(node.inputs[0])
    if mode == "constant":
        # Paddle takes [begin_0, end_0, begin_1, end_1, ...] when every dim is given.
        flat = [p for i in range(rank) for p in (pads[i], pads[i + rank])]
        return call("F.pad", x, flat, mode="constant", value=node.attrs.get("value", 0.0))
    if rank != 4 or any(pads[i] or pads[i + rank] for i in (0, 1)):
        raise e.unsupported(node, f"{mode} padding of batch/channel dims or rank {rank}")
    paddle_mode = {"reflect": "reflect", "edge": "replicate"}[mode]
    return call("F.pad", x, [pads[3], pads[7], pads[2], pads[6]], mode=paddle_mode,
                data_format="NCHW")


@paddle_op("layer_norm")
def layer_norm(e, node):
    x = node.inputs[0]
    shape = list(e.graph.shape(x)[node.attrs["axis"]:])
    extra = [e.value(v) for v in node.inputs[1:]]
    return call("F.layer_norm", e.value(x), shape, *extra, epsilon=node.attrs["epsilon"])


@paddle_op("group_norm")
def group_norm(e, node):
    x, scale, bias = node.inputs
    return call("F.group_norm", e.value(x), node.attrs["groups"], epsilon=node.attrs["epsilon"],
                weight=e.value(scale), bias=e.value(bias))


@paddle_op("gather")
def gather(e, node):
    x, idx = node.inputs
    axis = node.attrs["axis"]
    if e.is_const(idx) and e.const(idx).ndim == 0:
        # One constant index (ONNX Gather on a shape or a qkv stack): plain indexing.
        return take(e.value(x), axis, Expr(str(int(e.const(idx)))))
    if axis == 0 and e.is_const(x) and e.const(x).ndim == 2:
        return call("F.embedding", e.value(idx), e.value(x))
    if len(e.graph.shape(idx) or (0, 0)) == 1:
        return call("paddle.index_select", e.value(x), e.value(idx), axis=axis)
    return take(e.value(x), axis, e.value(idx, tensor=True))


@paddle_op("slice")
def slice_(e, node):
    a = node.attrs
    return subscript(e.value(node.inputs[0]), len(e.graph.shape(node.inputs[0])), a["axes"],
                     a["starts"], a["ends"], a["steps"])


@paddle_op("expand")
def expand(e, node):
    shape = expand_target(e.graph.shape(node.inputs[0]), node.attrs["shape"])
    return call("paddle.expand", e.value(node.inputs[0]), shape=shape)


@paddle_op("where")
def where(e, node):
    return call("paddle.where", *[e.value(v, tensor=True) for v in node.inputs])


@paddle_op("equal")
def equal(e, node):
    return call("paddle.equal", *[e.value(v, tensor=True) for v in node.inputs])


@paddle_op("logical_not")
def logical_not(e, node):
    return call("paddle.logical_not", e.value(node.inputs[0]))


@paddle_op("reduce_any")
def reduce_any(e, node):
    return call("paddle.any", e.value(node.inputs[0]), axis=node.attrs["axes"],
                keepdim=node.attrs["keepdims"])


@paddle_op("split")
def split(e, node):
    return call("paddle.split", e.value(node.inputs[0]), node.attrs["sizes"],
                axis=node.attrs["axis"])


@paddle_op("shape")
def shape(e, node):
    return call("paddle.cast", call("paddle.shape", e.value(node.inputs[0])),
                node.attrs.get("dtype", "int64"))


@paddle_op("reshape_dynamic")
def reshape_dynamic(e, node):
    return call("paddle.reshape", e.value(node.inputs[0]),
                shape=call("paddle.cast", e.value(node.inputs[1]), "int32"))


@paddle_op("strided_slice")
def strided_slice(e, node):
    rank = len(e.graph.shape(node.inputs[0]) or ())
    return strided_index(e.value(node.inputs[0]), rank, node.attrs)


def _crop(x, pads):
    """x[:, :, top:-bottom, left:-right] for conv_transpose2d's crop."""
    t, l, b, r = pads
    huge = 1 << 62
    return subscript(x, 4, [2, 3], [t, l], [-b if b else huge, -r if r else huge], [1, 1])


@paddle_op("conv_transpose2d")
def conv_transpose2d(e, node):
    a = node.attrs
    x, w = node.inputs[0], node.inputs[1]
    bias = node.inputs[2] if len(node.inputs) > 2 else None
    in_ch, out_ch, kh, kw = e.const(w).shape
    layer = e.layer(node, "deconv", call(
        "nn.Conv2DTranspose", in_ch, out_ch, kernel_size=[kh, kw], stride=a["strides"],
        bias_attr=Expr("None" if bias else "False")),
        {"weight": w, **({"bias": bias} if bias else {})})
    return _crop(call(f"self.{layer}", e.value(x)), a["pads"])


@paddle_op("resize")
def resize(e, node):
    a = node.attrs
    extra = {"align_corners": a["coord"] == "align_corners"}
    if a["mode"] == "bilinear":
        extra["align_mode"] = 1 if a["coord"] == "asymmetric" else 0
    return call("F.interpolate", e.value(node.inputs[0]), size=a["size"], mode=a["mode"],
                **extra)


@paddle_op("tile")
def tile(e, node):
    return call("paddle.tile", e.value(node.inputs[0]), repeat_times=node.attrs["repeats"])


@paddle_op("argmax")
def argmax(e, node):
    return call("paddle.argmax", e.value(node.inputs[0]), axis=node.attrs["axis"],
                keepdim=bool(node.attrs.get("keepdims")))


@paddle_op("topk")
def topk(e, node):
    return call("paddle.topk", e.value(node.inputs[0]), k=node.attrs["k"],
                axis=node.attrs["axis"], largest=True, sorted=True)


@paddle_op("greater", "less")
def compare(e, node):
    fn = "paddle.greater_than" if node.op == "greater" else "paddle.less_than"
    return call(fn, *[e.value(v, tensor=True) for v in node.inputs])
