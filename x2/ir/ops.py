"""The IR op set: one schema entry per op (inputs, attributes, outputs,
layout behaviour, a one-line doc) bound to its numpy reference kernel.

`layout` says how an op relates to a Transpose on its inputs, so the layout
pass can push Transposes through it without an op-by-op if-chain (the kinds
are listed in x2/ir/schema.py: LAYOUT_KINDS).

This table is the IR's contract: `Graph.add_node` fills in attribute
defaults from it, `Graph.lint` checks every node against it, and docs/IR.md's
op table (`python -m x2.ir.optable`) and the emitter-coverage test are
generated from it. Adding an op: docs/IR.md, "Adding an op".
"""
from __future__ import annotations

import numpy as np

from . import kernels as K
from . import rnn_kernels as RK
from .kernels import reshape_target, strided_slice_index  # noqa: F401  (re-exported)
from .schema import Attr, OpDef, parse_inputs

OPS: dict[str, OpDef] = {}

INT, INTS, FLOAT, BOOL, DTYPE = Attr("int"), Attr("ints"), Attr("float"), Attr("bool"), \
    Attr("dtype")
DATA_FORMAT = Attr("str", "NCHW", ("NCHW", "NHWC"), "NHWC after --layout nhwc")
PADS_2D = Attr("ints", doc="[top, left, bottom, right]")
AUTO_PAD = Attr("str", "NOTSET", ("NOTSET", "SAME_UPPER"),
                "SAME_UPPER: TF's SAME, pads computed at run time from the input's size; "
                "`pads` then zeros")


def op(name: str, inputs: str, kernel, doc: str, /, *, layout: str | None = None,
       outputs: int | None = 1, **attrs: Attr) -> None:
    """Define an IR op: `inputs` as "x w b?" (? optional, ... variadic), its
    kernel, a one-line doc, and its attributes as keywords."""
    if name in OPS:
        raise ValueError(f"IR op {name!r} is defined twice")
    OPS[name] = OpDef(name, parse_inputs(inputs), attrs, outputs, layout, kernel, doc)


def _unary(fn):
    return lambda xs, a: [fn(xs[0], a)]


op("identity", "x", _unary(lambda x, a: x), "x", layout="elementwise")

# One doc per family: docs/IR.md shows ops with the same schema and doc in one row.
_MATH = "elementwise, as the numpy kernel"
for _name, _fn in {
    "relu": lambda x, a: np.maximum(x, 0).astype(x.dtype),
    "sigmoid": lambda x, a: K.sigmoid(x),
    "tanh": lambda x, a: np.tanh(x),
    "exp": lambda x, a: np.exp(x),
    "log": lambda x, a: np.log(x),
    "log1p": lambda x, a: np.log1p(x),
    "sqrt": lambda x, a: np.sqrt(x),
    "rsqrt": lambda x, a: (1 / np.sqrt(x)).astype(x.dtype),
    "neg": lambda x, a: -x,
    "abs": lambda x, a: np.abs(x),
    "erf": lambda x, a: K.erf(x),
    "square": lambda x, a: x * x,
    "silu": lambda x, a: x * K.sigmoid(x),
    "hard_sigmoid": lambda x, a: (np.clip(x + 3, 0, 6) / 6).astype(x.dtype),
    "hard_swish": lambda x, a: (x * np.clip(x + 3, 0, 6) / 6).astype(x.dtype),
    "softplus": lambda x, a: np.logaddexp(0, x).astype(x.dtype),
    "selu": lambda x, a: (1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))).astype(x.dtype),
    "sin": lambda x, a: np.sin(x),
    "cos": lambda x, a: np.cos(x),
    "floor": lambda x, a: np.floor(x),
    "ceil": lambda x, a: np.ceil(x),
    "sign": lambda x, a: np.sign(x),
    "reciprocal": lambda x, a: (1 / x).astype(x.dtype),
    "tan": lambda x, a: np.tan(x),
    "asin": lambda x, a: np.arcsin(x),
    "acos": lambda x, a: np.arccos(x),
    "atan": lambda x, a: np.arctan(x),
    "sinh": lambda x, a: np.sinh(x),
    "cosh": lambda x, a: np.cosh(x),
    "asinh": lambda x, a: np.arcsinh(x),
    "acosh": lambda x, a: np.arccosh(x),
    "atanh": lambda x, a: np.arctanh(x),
}.items():
    op(_name, "x", _unary(_fn), _MATH, layout="elementwise")

op("elu", "x", _unary(lambda x, a: np.where(x > 0, x, a["alpha"] * np.expm1(x)).astype(x.dtype)),
   "x if x > 0 else alpha * (exp(x) - 1)", layout="elementwise", alpha=Attr("float", 1.0))
op("leaky_relu", "x", _unary(lambda x, a: np.where(x >= 0, x, x * a["alpha"]).astype(x.dtype)),
   "x if x >= 0 else alpha * x", layout="elementwise", alpha=FLOAT)
op("gelu", "x", _unary(lambda x, a: K.gelu(x, a.get("approximate"))),
   "x * Phi(x); `approximate`: the tanh form", layout="elementwise",
   approximate=Attr("bool", False))
op("clip", "x", _unary(lambda x, a: np.clip(x, a.get("min"), a.get("max")).astype(x.dtype)),
   "clamp to [min, max], either bound may be None (relu6 = clip(0, 6))", layout="elementwise",
   min=Attr("float", None), max=Attr("float", None))
op("cast", "x", _unary(lambda x, a: x.astype(a["dtype"])), "convert to `dtype`",
   layout="elementwise", dtype=DTYPE)

for _name, _fn in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum, "mod": np.mod,
}.items():
    op(_name, "a b", lambda xs, a, f=_fn: [np.asarray(f(xs[0], xs[1])).astype(
        np.result_type(xs[0], xs[1]))], "numpy broadcasting (`mod`: numpy's sign convention)",
       layout="elementwise")
op("floor_div", "a b", lambda xs, a: [np.asarray(np.floor_divide(xs[0], xs[1])).astype(
    np.result_type(xs[0], xs[1]))], "a // b as Python and numpy round it (toward -inf; floats "
   "from the remainder, so 1.0 // 0.1 is 9), broadcasting", layout="elementwise")

for _name, _fn in {"equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
                   "greater_equal": np.greater_equal, "less": np.less,
                   "less_equal": np.less_equal}.items():
    op(_name, "a b", lambda xs, a, f=_fn: [f(xs[0], xs[1])],
       "elementwise comparison, bool output, broadcasting", layout="elementwise")
op("logical_not", "x", lambda xs, a: [np.logical_not(xs[0])], "bool", layout="elementwise")
op("isnan", "x", lambda xs, a: [np.isnan(xs[0])], "bool: x is NaN", layout="elementwise")
op("isinf", "x", lambda xs, a: [np.isinf(xs[0])], "bool: x is +inf or -inf",
   layout="elementwise")
for _name, _fn in {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
                   "bitwise_xor": np.bitwise_xor}.items():
    op(_name, "a b", lambda xs, a, f=_fn: [f(xs[0], xs[1])],
       "bitwise on integers, logical on bool, broadcasting", layout="elementwise")
op("bitwise_not", "x", lambda xs, a: [np.invert(xs[0])], "bitwise on integers, logical on bool",
   layout="elementwise")
op("where", "cond a b", lambda xs, a: [np.where(xs[0], xs[1], xs[2])],
   "`numpy.where`, broadcasting", layout="elementwise")

for _name, _fn in {"reduce_mean": np.mean, "reduce_sum": np.sum, "reduce_max": np.max,
                   "reduce_min": np.min, "reduce_prod": np.prod}.items():
    op(_name, "x", K.reduce(_fn), "reduce over `axes`", layout="reduce", axes=INTS,
       keepdims=BOOL)
op("reduce_any", "x", K.reduce(np.any), "bool reduction over `axes`", layout="reduce",
   axes=INTS, keepdims=BOOL)

op("softmax", "x", K.softmax, "softmax along `axis`", layout="axis", axis=INT)
op("log_softmax", "x", K.log_softmax, "log of softmax along `axis`", layout="axis", axis=INT)
op("concat", "x...", lambda xs, a: [np.concatenate(xs, axis=a["axis"])],
   "join along an existing `axis`", layout="axis", axis=INT)
op("stack", "x...", lambda xs, a: [np.stack(xs, axis=a["axis"])],
   "join along a new `axis`", axis=INT)

op("pad", "x", K.pad, "`numpy.pad`", layout="pad",
   pads=Attr("ints", doc="ONNX order: all begins, then all ends"),
   mode=Attr("str", "constant", ("constant", "reflect", "edge")), value=Attr("float", 0.0))
op("transpose", "x", lambda xs, a: [np.transpose(xs[0], a["perm"])], "numpy transpose",
   perm=INTS)
op("reshape", "x", lambda xs, a: [xs[0].reshape(reshape_target(xs[0].shape, a["shape"]))],
   "ONNX Reshape, allowzero=0", shape=Attr("ints", doc="0 copies the input dim, -1 is inferred"))
# No kernel on purpose: folding a constant one would change what conversions
# produce; the fold pass turns it into `reshape` once the shape is known.
op("reshape_dynamic", "x shape", None, "reshape to a computed shape; the fold pass turns it "
   "into `reshape` when it can")
op("full", "shape", lambda xs, a: [np.full([int(d) for d in np.reshape(xs[0], -1)],
                                          a["value"], dtype=a["dtype"])],
   "a tensor of the computed `shape` (1-D ints) filled with `value` (TF Fill, ONNX "
   "ConstantOfShape); folded when the shape is known", value=FLOAT, dtype=DTYPE)
op("squeeze", "x", lambda xs, a: [np.squeeze(xs[0], axis=tuple(a["axes"]))],
   "drop the unit `axes`", axes=INTS)
op("unsqueeze", "x", lambda xs, a: [np.expand_dims(xs[0], axis=tuple(a["axes"]))],
   "insert unit `axes` (positions in the output)", axes=INTS)
op("shape", "x", lambda xs, a: [np.array(xs[0].shape, dtype=a["dtype"])],
   "the shape as a 1-D tensor", dtype=Attr("dtype", "int64"))
op("strided_slice", "x", K.strided_slice, "TF StridedSlice with constant bounds",
   begin=INTS, end=INTS, strides=INTS,
   **{mask: Attr("int", 0, doc="bitfield") for mask in (
       "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")})
op("slice", "x", K.slice_, "ONNX Slice with constant bounds (ends clamp)", layout="slice",
   starts=INTS, ends=INTS, axes=INTS, steps=INTS)
op("split", "x", K.split, "pieces of `sizes` along `axis`, one output each", outputs=None,
   axis=INT, sizes=INTS)
op("gather", "x indices", lambda xs, a: [np.take(xs[0], xs[1].astype(np.int64), axis=a["axis"])],
   "`numpy.take` (embedding lookup: axis 0)", axis=INT,
   padding_idx=Attr("int", None, doc="an embedding row that gets no gradient (torch's "
                                     "padding_idx; inference ignores it)"))
op("gather_elements", "x indices", K.gather_elements,
   "out[..i..] = x[..indices[..i..] at `axis`..]: output has the index's shape, x is read "
   "only where the index reaches (torch.gather, ONNX GatherElements)", axis=INT)
op("scatter_elements", "x indices updates", K.scatter_elements,
   "x with out[..indices[..i..] at `axis`..] = updates[..i..] (indices and updates of one "
   "shape, in range); `reduction` combines each update with the value there (torch."
   "scatter_reduce with include_self, ONNX ScatterElements); none: the last duplicate wins",
   axis=INT, reduction=Attr("str", "none", ("none", "add", "mul", "max", "min")))
op("cumsum", "x", K.cumsum, "running sum along `axis`; `exclusive` starts at 0, `reverse` "
   "runs from the end", axis=INT, exclusive=Attr("bool", False), reverse=Attr("bool", False))
op("expand", "x", lambda xs, a: [xs[0] * np.ones(a["shape"], dtype=xs[0].dtype)],
   "ONNX Expand (two-way broadcast)", shape=INTS)
op("range", "start limit delta", K.range_, "`numpy.arange(start, limit, delta)` of scalar "
   "inputs, in their dtype (ONNX Range, torch.arange): positions computed from a dynamic length")
op("slice_dynamic", "x starts ends", K.slice_dynamic, "`slice` whose starts and ends (1-D, one "
   "per axis in `axes`) are computed by the graph; the fold pass makes it `slice` when they "
   "are known", axes=INTS, steps=INTS)
op("expand_dynamic", "x shape", K.expand_dynamic, "`expand` to a computed shape (1-D ints); "
   "the fold pass makes it `expand` when the shape is known")
op("pad_dynamic", "x pads", K.pad_dynamic, "`pad` with `value` by amounts computed by the "
   "graph (1-D ints, ONNX order: all begins, then all ends; F.pad to a multiple of a size); "
   "the fold pass makes it `pad` when they are known", value=Attr("float", 0.0))
op("tile_dynamic", "x repeats", K.tile_dynamic, "`tile` by counts computed by the graph (1-D "
   "ints, one per dim: a repeat by a count read from a shape); the fold pass makes it `tile` "
   "when they are known")
op("repeat_interleave", "x", lambda xs, a: [np.repeat(xs[0], a["repeats"], axis=a["axis"])],
   "each element `repeats` times in a row along `axis` (a nearest upsampling by a whole "
   "factor, on any size)", layout="axis", repeats=INT, axis=INT)
op("trilu", "x", lambda xs, a: [(np.triu if a["upper"] else np.tril)(xs[0], a["k"])],
   "upper (triu) or lower (tril) triangle of the last two axes from diagonal `k`",
   upper=Attr("bool", True), k=Attr("int", 0))
op("tile", "x", lambda xs, a: [np.tile(xs[0], a["repeats"])], "numpy tile", repeats=INTS)
op("argmax", "x", K.argmax, "int64 index of the largest along `axis`", axis=INT,
   keepdims=Attr("bool", False))
op("topk", "x", K.topk, "the `k` largest (`largest` false: smallest) along `axis`, sorted "
   "from the first, and their int64 indices; ties keep the lower index", outputs=2,
   k=Attr("int", doc="-1: every element of the axis (a sort, of any length)"), axis=INT,
   largest=Attr("bool", True))
op("gather_nd", "x indices", K.gather_nd, "ONNX GatherND: x indexed by the last axis of "
   "`indices` (negative allowed) after `batch_dims` shared leading dims",
   batch_dims=Attr("int", 0))

op("matmul", "a b", lambda xs, a: [np.matmul(xs[0], xs[1])], "numpy matmul")
op("dense", "x w b?", K.dense, "x @ w + b, w [in, out] (the fuse pass makes it from a constant matmul)")
op("conv2d", "x w b?", K.conv2d, "cross-correlation, x NCHW, w OIHW", strides=INTS,
   dilations=INTS, pads=PADS_2D, groups=Attr("int", 1), data_format=DATA_FORMAT,
   auto_pad=AUTO_PAD)
op("conv_transpose2d", "x w b?", K.conv_transpose2d, "NCHW transposed convolution, "
   "w [C_in, C_out, kH, kW], groups 1, dilation 1; `pads` crop the full output",
   strides=INTS, pads=PADS_2D)
op("batch_norm", "x scale bias mean var", K.batch_norm, "inference batch norm over the channel axis",
   epsilon=FLOAT, data_format=DATA_FORMAT)
op("max_pool2d", "x", K.max_pool2d, "NCHW; padding never wins the max", kernel=INTS,
   strides=INTS, pads=PADS_2D, data_format=DATA_FORMAT, auto_pad=AUTO_PAD)
op("avg_pool2d", "x", K.avg_pool2d, "NCHW window mean", kernel=INTS, strides=INTS, pads=PADS_2D,
   count_include_pad=Attr("bool", False), data_format=DATA_FORMAT, auto_pad=AUTO_PAD)
op("layer_norm", "x scale? bias?", K.layer_norm, "normalize over axes [axis, rank)", axis=INT,
   epsilon=FLOAT)
op("rms_norm", "x scale?", K.rms_norm, "x / sqrt(mean(x^2 over axes [axis, rank)) + epsilon), "
   "times scale (Llama's RMSNorm)", axis=INT, epsilon=FLOAT)
op("group_norm", "x scale bias", K.group_norm, "normalize each group of channels (axis 1) over "
   "it and the spatial axes, then scale and shift per channel; instance norm is groups = channels",
   groups=INT, epsilon=FLOAT)
op("dropout", "x", _unary(lambda x, a: x), "x (inference); a dropout layer of `rate` in a model "
   "converted --for training, left out otherwise", layout="elementwise", rate=FLOAT)
op("resize", "x", K.resize, "NCHW resize of H, W to `size`; nearest takes the floor of the "
   "source coordinate", size=Attr("ints", doc="[H, W]"),
   mode=Attr("str", choices=("bilinear", "nearest")),
   coord=Attr("str", choices=("half_pixel", "align_corners", "asymmetric")))

op("upsample", "x", K.upsample, "NCHW resize of H, W by whole `scales` (an input whose "
   "size is known only at run time: the output is the input's size times the scale)",
   scales=Attr("ints", doc="[H, W], each at least 1"), mode=Attr("str", choices=("bilinear", "nearest")),
   coord=Attr("str", choices=("half_pixel", "align_corners", "asymmetric")))

_DIRECTION = Attr("str", "forward", ("forward", "reverse", "bidirectional"))
_RNN_DOC = ("ONNX weights and gate order, torch's time-major output: y [seq, batch, dirs*hidden], "
            "final states [dirs, batch, hidden]; steps past `seq_lens` give 0 and keep the state")
op("lstm", "x w r b? seq_lens? h0? c0?", RK.recurrent("lstm"), "LSTM (gates i, o, f, c); "
   + _RNN_DOC, outputs=3, hidden_size=INT, direction=_DIRECTION, batch_first=Attr("bool", False))
op("gru", "x w r b? seq_lens? h0?", RK.recurrent("gru"), "GRU (gates z, r, h); " + _RNN_DOC,
   outputs=2, hidden_size=INT, direction=_DIRECTION, batch_first=Attr("bool", False),
   linear_before_reset=Attr("bool", True, doc="reset gate applied after the recurrent matmul "
                                               "(torch, Paddle, Keras reset_after)"))
op("rnn", "x w r b? seq_lens? h0?", RK.recurrent("rnn"), "Elman RNN; " + _RNN_DOC, outputs=2,
   hidden_size=INT, direction=_DIRECTION, batch_first=Attr("bool", False),
   activation=Attr("str", "tanh", ("tanh", "relu")))

# Structured control flow (x2/ir/control_flow.py): subgraphs are closed, what
# they read from outside is an input of the node. No kernel here: running a
# subgraph is the interpreter's (x2/ir/interpret.py), and folding never runs a loop.
op("if", "cond x*", None, "run `then_branch` or `else_branch` (closed subgraphs taking "
   "the x) as the bool scalar `cond` says; the outputs are the branch's", outputs=None,
   then_branch=Attr("graph"), else_branch=Attr("graph"))
op("loop", "max_trip? cond? x*", None, "ONNX Loop with closed `body` (iteration, "
   "cond, carried..., invariants...) -> (cond, carried..., scans...); x = the `carried` initial "
   "values, then invariants; outputs: final carried values, then scans stacked on axis 0",
   outputs=None, body=Attr("graph"), carried=Attr("int", 0))


# -- attention (x2/passes/fusions.py makes it from the matmul/softmax/matmul chain) --
op("attention", "q k v mask? seen?", K.attention, "softmax(q @ k^T * scale + mask) @ v over "
   "the last two axes ([..., seq, dim], torch's layout); `mask` is additive and broadcasts "
   "to the scores; `causal` masks keys after the query's position; a query whose every "
   "key is masked gives 0 (torch's scaled_dot_product_attention), not NaN. `seen` "
   "([..., seq, 1]: 1 where the query sees a key, 0 where it sees none) scales each "
   "query's weights, and says the mask has no all -inf row "
   "(x2/passes/attention_masks.py)",
   scale=Attr("float", None, doc="None: 1/sqrt(dim)"), causal=Attr("bool", False))

def evaluate(op: str, inputs: list[np.ndarray], attrs: dict) -> list[np.ndarray] | None:
    """Run the op's kernel; None when it has none. Mappers fold constants
    before their node exists, so the schema defaults are filled in here too."""
    opdef = OPS.get(op)
    if opdef is None or opdef.kernel is None:
        return None
    return opdef.kernel(inputs, opdef.with_defaults(dict(attrs)))
