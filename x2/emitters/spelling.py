"""How Paddle and PyTorch spell the calls that the shared Python-code ops
(python_ops.py) write, in the manner of X2Paddle's `directly_map_ops`.

A row is a key (an IR op, or a layer class) and its spelling in Paddle and
in PyTorch; one string instead of a pair is spelled the same in both. A
spelling is a function name, or `api(name, keyword=new_keyword)` where the
framework names a keyword differently, or `keyword=POSITIONAL` where it takes
it by position. `None`: the framework has no such call and the shared op
writes something else. Names are pasted into model.py as they stand, so they
are dotted names only (tests/test_emitters.py checks)."""
from __future__ import annotations

from dataclasses import dataclass, field


POSITIONAL = "<positional>"


@dataclass(frozen=True)
class Api:
    name: str
    renames: dict[str, str] = field(default_factory=dict)


def api(name: str, **renames: str) -> Api:
    return Api(name, renames)


FRAMEWORKS = ("Paddle", "PyTorch")

# Keywords a framework renames in every call.
KEYWORDS = {"Paddle": {}, "PyTorch": {"axis": "dim", "epsilon": "eps"}}

SPELLING: dict[str, str | tuple[str | Api | None, str | Api | None]] = {
    # key            Paddle                            PyTorch
    "zeros":        (api("paddle.zeros", dtype=POSITIONAL), "torch.zeros"),
    "relu":         ("F.relu",                        "torch.relu"),
    "sigmoid":      ("F.sigmoid",                     "torch.sigmoid"),
    "tanh":         ("paddle.tanh",                   "torch.tanh"),
    "exp":          ("paddle.exp",                    "torch.exp"),
    "log":          ("paddle.log",                    "torch.log"),
    "log1p":        ("paddle.log1p",                  "torch.log1p"),
    "sqrt":         ("paddle.sqrt",                   "torch.sqrt"),
    "rsqrt":        ("paddle.rsqrt",                  "torch.rsqrt"),
    "abs":          ("paddle.abs",                    "torch.abs"),
    "erf":          ("paddle.erf",                    "torch.erf"),
    "square":       ("paddle.square",                 "torch.square"),
    "sin":          ("paddle.sin",                    "torch.sin"),
    "cos":          ("paddle.cos",                    "torch.cos"),
    "tan":          ("paddle.tan",                    "torch.tan"),
    "asin":         ("paddle.asin",                   "torch.asin"),
    "acos":         ("paddle.acos",                   "torch.acos"),
    "atan":         ("paddle.atan",                   "torch.atan"),
    "sinh":         ("paddle.sinh",                   "torch.sinh"),
    "cosh":         ("paddle.cosh",                   "torch.cosh"),
    "asinh":        ("paddle.asinh",                  "torch.asinh"),
    "acosh":        ("paddle.acosh",                  "torch.acosh"),
    "atanh":        ("paddle.atanh",                  "torch.atanh"),
    "floor":        ("paddle.floor",                  "torch.floor"),
    "ceil":         ("paddle.ceil",                   "torch.ceil"),
    "sign":         ("paddle.sign",                   "torch.sign"),
    "reciprocal":   ("paddle.reciprocal",             "torch.reciprocal"),
    "isnan":        ("paddle.isnan",                  "torch.isnan"),
    "isinf":        ("paddle.isinf",                  "torch.isinf"),
    "logical_not":  ("paddle.logical_not",            "torch.logical_not"),
    # Paddle Inference's oneDNN runs swish (fused into the conv before it);
    # silu there is a plain kernel with layout reorders around each call.
    "silu":         ("F.swish",                       "F.silu"),
    "hard_sigmoid":  "F.hardsigmoid",
    "hard_swish":    "F.hardswish",
    "softplus":      "F.softplus",
    "selu":          "F.selu",
    "relu6":         "F.relu6",
    "leaky_relu":    "F.leaky_relu",
    "elu":           "F.elu",
    "clip":         ("paddle.clip",                   "torch.clamp"),
    "maximum":      ("paddle.maximum",                "torch.maximum"),
    "minimum":      ("paddle.minimum",                "torch.minimum"),
    "greater":      ("paddle.greater_than",           "torch.gt"),
    "less":         ("paddle.less_than",              "torch.lt"),
    "greater_equal": ("paddle.greater_equal",         "torch.ge"),
    "less_equal":   ("paddle.less_equal",             "torch.le"),
    "not_equal":    ("paddle.not_equal",              "torch.ne"),
    "bitwise_and":  ("paddle.bitwise_and",            "torch.bitwise_and"),
    "bitwise_or":   ("paddle.bitwise_or",             "torch.bitwise_or"),
    "bitwise_xor":  ("paddle.bitwise_xor",            "torch.bitwise_xor"),
    "bitwise_not":  ("paddle.bitwise_not",            "torch.bitwise_not"),
    "cumsum":       ("paddle.cumsum",                 "torch.cumsum"),
    "triu":         ("paddle.triu",                   "torch.triu"),
    "tril":         ("paddle.tril",                   "torch.tril"),
    "flip":         ("paddle.flip",                   api("torch.flip", axis="dims")),
    "where":        ("paddle.where",                  "torch.where"),
    "matmul":       ("paddle.matmul",                 "torch.matmul"),
    "reduce_mean":  ("paddle.mean",                   "torch.mean"),
    "reduce_sum":   ("paddle.sum",                    "torch.sum"),
    "reduce_max":   ("paddle.max",                    "torch.amax"),
    "reduce_min":   ("paddle.min",                    "torch.amin"),
    "reduce_prod":  ("paddle.prod",                   None),
    "reduce_any":   ("paddle.any",                    "torch.any"),
    "softmax":       "F.softmax",
    "log_softmax":   "F.log_softmax",
    "concat":       ("paddle.concat",                 "torch.cat"),
    "stack":        ("paddle.stack",                  "torch.stack"),
    "split":        ("paddle.split",                  "torch.split"),
    "transpose":    ("paddle.transpose",              api("torch.permute", perm=POSITIONAL)),
    "expand":       ("paddle.expand",                 api("torch.broadcast_to", shape=POSITIONAL)),
    "tile":         (api("paddle.tile", repeats="repeat_times"),
                     api("torch.tile", repeats=POSITIONAL)),
    "argmax":       ("paddle.argmax",                 "torch.argmax"),
    "index_select": ("paddle.index_select",           None),
    "arange":       ("paddle.arange",                 "torch.arange"),
    "repeat_interleave": ("paddle.repeat_interleave", api("torch.repeat_interleave",
                                                          axis="dim")),
    "embedding":     "F.embedding",
    "pad":           "F.pad",
    "layer_norm":    "F.layer_norm",
    "group_norm":   ("F.group_norm",
                     api("F.group_norm", weight=POSITIONAL, bias=POSITIONAL)),
    "batch_norm":    "F.batch_norm",
    "conv2d":        "F.conv2d",
    "Conv2d":       ("nn.Conv2D",                     "nn.Conv2d"),
    "ConvTranspose2d": ("nn.Conv2DTranspose",         "nn.ConvTranspose2d"),
    "Linear":        "nn.Linear",
    "LayerNorm":     "nn.LayerNorm",
    "Embedding":     "nn.Embedding",
    "GroupNorm":     "nn.GroupNorm",
    "InstanceNorm1d": ("nn.InstanceNorm1D",           "nn.InstanceNorm1d"),
    "InstanceNorm2d": ("nn.InstanceNorm2D",           "nn.InstanceNorm2d"),
    "Dropout":       "nn.Dropout",
    "BatchNorm1d":  ("nn.BatchNorm1D",                "nn.BatchNorm1d"),
    "BatchNorm2d":  ("nn.BatchNorm2D",                "nn.BatchNorm2d"),
    "lstm":          "nn.LSTM",
    "gru":           "nn.GRU",
    "rnn":          ("nn.SimpleRNN",                  "nn.RNN"),
    "zeros_like":   ("paddle.zeros_like",             "torch.zeros_like"),
    "Module":       ("nn.Layer",                      "nn.Module"),
    "ModuleList":   ("nn.LayerList",                  "nn.ModuleList"),
}

# Code, not names, for the classes x2 writes itself (recurrent_classes.py),
# where the frameworks differ beyond a name: x2's own text, no model string.
FRAGMENTS = {
    "Paddle": {
        "swap_first_axes": ".transpose([1, 0, 2])",     # a 3-D tensor's time and batch axes
        "parameter": "self.create_parameter([{shape}])",
    },
    "PyTorch": {
        "swap_first_axes": ".transpose(0, 1)",
        "parameter": "nn.Parameter(torch.zeros({shape}))",
    },
}


def spelling(framework: str, key: str) -> tuple[str, dict[str, str]] | None:
    """(function name, keyword renames) for `key` in `framework`; None where
    the framework has no call for it."""
    row = SPELLING[key]
    spelled = row[FRAMEWORKS.index(framework)] if isinstance(row, tuple) else row
    if spelled is None:
        return None
    if isinstance(spelled, str):
        spelled = Api(spelled)
    return spelled.name, {**KEYWORDS[framework], **spelled.renames}
