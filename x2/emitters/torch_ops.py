"""PyTorch's side of the Python-code emitter: the context hooks the shared ops
(python_ops.py) call, and the ops whose PyTorch code is its own. torch layers
pad both sides of a dim alike, take one dim at a time in prod/unsqueeze and
empty a dim for a 0 in reshape: those ops are written here."""
from __future__ import annotations

import numpy as np

from ..ir.graph import Node, TensorInfo
from .codegen import Assign, EmitContext, Expr, binop, call, dtype_ref
from . import keras_checkpoint
from . import python_control  # noqa: F401  (registers `if` and `loop` in PYTHON_OPS)
from .lifetimes import release_dead
from .python_ops import PYTHON_OPS, host_items, leaky_relu, on_tensors, reduce
from .recurrent_classes import gru_reset_before
from .registry import OpRegistry

TORCH_OPS = OpRegistry("PyTorch", PYTHON_OPS)
TORCH_OPS.register("reduce_mean")(reduce)
TORCH_OPS.register("where")(on_tensors)
TORCH_OPS.register("leaky_relu")(leaky_relu)


class TorchContext(EmitContext):
    framework = "PyTorch"
    negative_slice_steps = False

    def dtype(self, name) -> Expr:
        return dtype_ref("torch", name)

    def statements(self, nodes) -> list:
        out = []
        for node in nodes:
            widened = None if node.op == "module_call" else _uint_in_int64(self, node)
            out.extend(super().statements([node]) if widened is None else widened)
        return out

    def footer_lines(self) -> list[str]:
        # a Keras source's weights file (a torch source's state_dict loads as it is)
        if self.tree.layouts and keras_checkpoint.is_keras(self.tree.state):
            return keras_checkpoint.footer_lines(self.tree, "torch")
        return []

    def finish_forward(self, body: list, returns: list[str]) -> list:
        # torch's eager mode frees a tensor only when its last name goes
        return release_dead(body, returns)

    def scalar_tensor(self, value, dtype: str) -> Expr:
        return call("torch.tensor", value, dtype=self.dtype(dtype))

    def parameter_init(self, array: np.ndarray) -> Expr:
        return call("nn.Parameter", self.buffer_init(array))

    def own_buffer(self, array: np.ndarray) -> Expr:
        # Beside the source's names, x2's own constants stay out of state_dict,
        # so the source's state_dict loads with strict=True (load_model fills them).
        init = self.buffer_init(array)
        strict = self.tree.active and not keras_checkpoint.is_keras(self.tree.state)
        return Expr(f"{init}, persistent=False") if strict else init

    def data_format(self, node) -> dict:
        return {}  # --layout nhwc is channels_last memory format, not an argument

    def bias_flag(self, bias) -> dict:
        return {"bias": bias is not None}

    def conv_padding(self, node, kernel):
        """torch layers pad both sides alike: pad the input first where they
        differ (TF 'SAME' with stride 2), by pads computed from its size where
        they depend on a size known only at run time."""
        a, x = node.attrs, node.inputs[0]
        if a.get("auto_pad", "NOTSET") == "SAME_UPPER":
            return _pad_same(self, self.value(x), kernel, a), [0, 0]
        if _symmetric(a["pads"]):
            return self.value(x), [a["pads"][0], a["pads"][1]]
        return _pad_input(self, x, a["pads"]), [0, 0]

    def constant_pads(self, pads: list[int]) -> list[int]:
        # (begin, end) pairs from the last dim backwards; leading dims left out.
        rank = len(pads) // 2
        flat = [p for i in reversed(range(rank)) for p in (pads[i], pads[i + rank])]
        while len(flat) > 2 and flat[-1] == 0 and flat[-2] == 0:
            flat = flat[:-2]
        return flat

    def dense_weight(self, w: str) -> np.ndarray:
        # nn.Linear keeps [out, in]: a transposed view of the IR's weight, which
        # torch.save writes as it is (no copy of every weight in memory)
        return self.const(w).T

    def tied_linear(self, x: Expr, table: Expr, bias: Expr | None) -> Expr:
        """x @ table.T over an embedding's [rows, width] table (how transformers
        writes a tied head)."""
        return call("F.linear", x, table, *([bias] if bias is not None else []))

    def in_out_linear(self, w: str, bias: str | None) -> Expr | None:
        # nn.Linear keeps [out, in]: a source module that keeps [in, out] at
        # its own key (GPT-2's Conv1D) is model.py's Conv1D, so that the
        # source's state_dict loads into it as it is
        # (a Keras Dense keeps [in, out] too, but a torch user expects nn.Linear)
        if not self.tree.active or self.graph.meta.source_framework != "pytorch":
            return None
        origin = self.graph.origin.get(w)
        weights = {"weight": w, **({"bias": bias} if bias else {})}
        for param, value in weights.items():
            found = self.graph.origin.get(value)
            if found is None or not found.param.endswith("." + param) or \
                    found.param[:-len(param)] != origin.param[:-len("weight")] or \
                    not self.tree.fits(found, self.const(value).shape):
                return None
        size_in, size_out = self.const(w).shape
        self.helper(CONV1D)
        return call("Conv1D", nf=size_out, nx=size_in, **({} if bias else {"bias": False}))

    def norm_state(self, scale, bias, mean, var) -> dict:
        return {"weight": scale, "bias": bias, "running_mean": mean, "running_var": var,
                "num_batches_tracked": np.array(0, np.int64)}

    def dim(self, x, axis: int) -> Expr:
        """A dynamic dim."""
        return Expr(f"{x}.shape[{axis}]")

    def recurrent_layer(self, node, input_size: int, bias: bool) -> Expr:
        a = node.attrs
        extra = {"nonlinearity": a["activation"]} if node.op == "rnn" else {}
        return self.api(node.op, input_size, a["hidden_size"], bias=bias,
                        batch_first=a["batch_first"],
                        bidirectional=a["direction"] == "bidirectional", **extra)

    def recurrent_params(self, params: dict, directions: int) -> dict:
        return params

    gru_reset_before_class = gru_reset_before("PyTorch")

    def reset_before_gru_supported(self, node, x) -> None:
        """GRUResetBefore runs any number of steps in torch."""

    def recurrent_call(self, node, layer: str, x, state, lengths, targets, time_axis):
        """`layer(x, state)`; with sequence lengths through a packed sequence,
        which also gives each sequence's own final state."""
        args = [x] + ([state] if state is not None else [])
        if lengths is None:
            return [Assign(targets, call(layer, *args))]
        packed = self.namer(f"{node.outputs[0]}#packed", "packed")
        batch_first = node.attrs["batch_first"]
        steps = [Assign([packed], call("nn.utils.rnn.pack_padded_sequence", x,
                                       Expr(f"{lengths}.cpu()"), batch_first=batch_first,
                                       enforce_sorted=False))]
        steps.append(Assign([packed] + targets[1:], call(layer, Expr(packed), *args[1:])))
        steps.append(Assign(targets[:1], Expr(str(call(
            "nn.utils.rnn.pad_packed_sequence", Expr(packed), batch_first=batch_first,
            total_length=Expr(f"{x}.shape[{time_axis}]"))) + "[0]")))
        return steps


# torch has uint16/32/64 tensors but few CPU kernels for them (no add, lt,
# maximum, abs, topk...): ops on them run in int64 and cast back. Exact for
# uint16/32 (every value fits; the cast back wraps as numpy's unsigned ints do).
_WIDE_UNSIGNED = ("uint16", "uint32", "uint64")
# Ops torch runs on these dtypes as they are (data movement, casts, equality, bits).
_UNSIGNED_NATIVE = {"identity", "cast", "reshape", "reshape_dynamic", "transpose", "squeeze",
                    "unsqueeze", "concat", "stack", "slice", "strided_slice", "split",
                    "expand", "where", "equal", "not_equal", "bitwise_and", "bitwise_or",
                    "bitwise_xor", "shape", "if", "loop"}
# uint64 in int64 (the same 64 bits): wrapping arithmetic and bit ops are exact...
_UINT64_WRAPPING = {"add", "sub", "mul", "neg", "bitwise_not", "reduce_sum", "cumsum", "tile",
                    "pad", "gather", "gather_elements", "gather_nd"}
# ...and order comparisons are, on the bits with the sign bit flipped
# (x ^ -2**63 maps 0..2**64-1 onto -2**63..2**63-1 in order).
_UINT64_ORDERED = {"greater", "less", "greater_equal", "less_equal", "maximum", "minimum"}
_SIGN_BIT = Expr(str(-2 ** 63))


def _uint_in_int64(e, node) -> list | None:
    """The statements of a node on uint16/32/64 values computed in int64 (cast
    back to the declared dtype), or None when the node needs no widening."""
    dtypes = {v: e.graph.dtype(v) for v in (*node.inputs, *node.outputs) if v}
    wide = {v for v, d in dtypes.items() if d in _WIDE_UNSIGNED}
    if not wide or node.op in _UNSIGNED_NATIVE:
        return None
    flip = False
    if any(dtypes[v] == "uint64" for v in wide):
        flip = node.op in _UINT64_ORDERED
        if not flip and node.op not in _UINT64_WRAPPING:
            raise e.unsupported(node, "torch has no kernel for it on uint64, and int64 "
                                      "(which x2 computes uint64 in) orders and divides values "
                                      "from 2**63 up differently; x2 computes uint64 "
                                      "add/sub/mul, bit ops and comparisons exactly")
    graph, statements, temporary = e.graph, [], []
    inputs, outputs = [], []

    def int64_twin(v: str) -> str:
        """A temporary int64 value standing for uint value `v`."""
        name = graph.fresh_name(f"{v}_int64")
        graph.info[name] = TensorInfo("int64", graph.shape(v))
        temporary.append(name)
        return name

    try:
        for v in node.inputs:
            if v not in wide:
                inputs.append(v)
                continue
            as_int64 = int64_twin(v)
            expr = call(f"{e.value(v, tensor=True)}.to", Expr("torch.int64"))
            if flip and dtypes[v] == "uint64":
                expr = binop(Expr(f"({expr})"), "^", _SIGN_BIT)
            statements.append(Assign([e.namer(as_int64)], expr))
            inputs.append(as_int64)
        cast_back = []
        for v in node.outputs:
            if v not in wide:
                outputs.append(v)
                continue
            as_int64 = int64_twin(v)
            result = Expr(e.namer(as_int64))
            if flip and dtypes[v] == "uint64":
                result = Expr(f"({binop(result, '^', _SIGN_BIT)})")
            cast_back.append(Assign([e.namer(v)], call(f"{result}.to", e.dtype(dtypes[v]))))
            outputs.append(as_int64)
        in_int64 = Node(node.op, inputs, outputs, node.attrs, node.name, node.source)
        statements += EmitContext.statements(e, [in_int64]) + cast_back
    finally:
        for value in temporary:
            graph.info.pop(value, None)
    # The node's provenance comment goes on its first line.
    note = next((s.comment for s in statements if s.comment), "")
    for statement in statements:
        statement.comment = ""
    statements[0].comment = note
    return statements


def _symmetric(pads: list[int]) -> bool:
    top, left, bottom, right = pads
    return top == bottom and left == right


def _pad_input(e, x, pads, value=None) -> Expr:
    top, left, bottom, right = pads
    kwargs = {} if value is None else {"value": Expr(value)}
    return call("F.pad", e.value(x), [left, right, top, bottom], **kwargs)


CONV1D = '''class Conv1D(nn.Module):
    """transformers' Conv1D (GPT-2's projections): a linear layer that holds
    its weight as [in, out], as the source's checkpoints do. nf: the
    outputs, nx: the inputs (transformers' order). peft's LoRA takes it as
    config._register_custom_module({Conv1D: peft.tuners.lora.Linear}) with
    LoraConfig(fan_in_fan_out=True)."""

    def __init__(self, nf, nx, bias=True):
        super().__init__()
        self.in_features, self.out_features = nx, nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight.t(), self.bias)
'''


PAD_SAME = '''def pad_same(x, kernel_size, stride, dilation=(1, 1), value=0.0):
    """TensorFlow's SAME padding of x's height and width, computed from its
    size: the window after it then gives ceil(size / stride) rows and columns.
    The odd row or column of padding goes at the bottom or right."""
    pads = []
    for size, kernel, step, spread in zip(x.shape[-2:], kernel_size, stride, dilation):
        outputs = (size + step - 1) // step
        total = max((outputs - 1) * step + (kernel - 1) * spread + 1 - size, 0)
        pads.append((total // 2, total - total // 2))
    (top, bottom), (left, right) = pads
    return F.pad(x, [left, right, top, bottom], value=value)
'''


def _pad_same(e, x: Expr, kernel, a, value=None) -> Expr:
    """`pad_same(x, ...)`, the model.py helper that pads as TF's SAME does."""
    e.helper(PAD_SAME)
    dilations = list(a.get("dilations") or (1, 1))
    args = [x, list(kernel), list(a["strides"])] + ([dilations] if dilations != [1, 1] else [])
    return call("pad_same", *args, **({} if value is None else {"value": Expr(value)}))


def _pool_fits(a) -> bool:
    """Whether the pool's own padding can do it: torch pads at most half a kernel."""
    pads = a["pads"]
    return _symmetric(pads) and 2 * pads[0] <= a["kernel"][0] and 2 * pads[1] <= a["kernel"][1]


@TORCH_OPS.register("gather_elements")
def gather_elements(e, node):
    x, idx = node.inputs
    return call("torch.gather", e.value(x), node.attrs["axis"], e.value(idx, tensor=True))


_TORCH_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


@TORCH_OPS.register("scatter_elements")
def scatter_elements(e, node):
    x, idx, updates = node.inputs
    index = e.value(idx, tensor=True)
    if e.graph.dtype(idx) != "int64":  # torch indexes with int64 only
        index = call(f"{index}.to", Expr("torch.int64"))
    base, axis = e.value(x, tensor=True), node.attrs["axis"]
    reduction = node.attrs["reduction"]
    if reduction == "none":
        return call(f"{base}.scatter", axis, index, e.value(updates, tensor=True))
    return call(f"{base}.scatter_reduce", axis, index, e.value(updates, tensor=True),
                reduce=_TORCH_REDUCE[reduction], include_self=True)


@TORCH_OPS.register("max_pool2d")
def max_pool2d(e, node):
    a = node.attrs
    if a.get("auto_pad", "NOTSET") == "SAME_UPPER":
        padded = _pad_same(e, e.value(node.inputs[0]), a["kernel"], a, "float('-inf')")
        return call("F.max_pool2d", padded, a["kernel"], a["strides"])
    pads, fits = a["pads"], _pool_fits(a)
    inp = e.value(node.inputs[0]) if fits else _pad_input(e, node.inputs[0], pads, "-float('inf')")
    return call("F.max_pool2d", inp, a["kernel"], a["strides"],
                padding=[pads[0], pads[1]] if fits else [0, 0])


@TORCH_OPS.register("avg_pool2d")
def avg_pool2d(e, node):
    a = node.attrs
    pads, include = a["pads"], a.get("count_include_pad", False)
    x = node.inputs[0]
    if a.get("auto_pad", "NOTSET") == "SAME_UPPER":
        return _avg_pool_same(e, x, a)
    if _pool_fits(a) or not any(pads):
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


def _avg_pool_same(e, x, a) -> Expr:
    """A window sum over the SAME-padded input, divided by how many of its
    elements are real (TF's average leaves the padding out)."""
    kernel, strides = a["kernel"], a["strides"]
    summed = call("F.avg_pool2d", _pad_same(e, e.value(x), kernel, a), kernel, strides,
                  divisor_override=1)
    if a.get("count_include_pad", False):
        return binop(summed, "/", kernel[0] * kernel[1])
    ones = call("torch.ones_like", e.value(x))
    count = call("F.avg_pool2d", _pad_same(e, ones, kernel, a), kernel, strides,
                 divisor_override=1)
    return binop(summed, "/", count)


@TORCH_OPS.register("gelu")
def gelu(e, node):
    approximate = "tanh" if node.attrs.get("approximate") else "none"
    return call("F.gelu", e.value(node.inputs[0]), approximate=approximate)


@TORCH_OPS.register("cast")
def cast(e, node):
    return call(f"{e.value(node.inputs[0])}.to", e.dtype(node.attrs["dtype"]))


@TORCH_OPS.register("reduce_prod")
def reduce_prod(e, node):
    # torch.prod takes one dim: reduce the axes one by one, highest first.
    expr = e.value(node.inputs[0])
    for axis in sorted(node.attrs["axes"], reverse=True):
        expr = call("torch.prod", expr, dim=axis, keepdim=node.attrs["keepdims"])
    return expr


@TORCH_OPS.register("reshape")
def reshape(e, node):
    x = e.value(node.inputs[0])
    in_shape = e.graph.shape(node.inputs[0])
    kept = _leading_copies(node.attrs["shape"], in_shape)
    if kept is not None:   # the dims after the copied ones split or merged, as a port writes it
        rest = node.attrs["shape"][kept:]
        if len(rest) == 1:
            return call("torch.flatten", x, kept)
        if len(in_shape) == kept + 1:
            return call("torch.unflatten", x, kept, tuple(rest))
    # IR reshape copies the input dim for 0 (ONNX); torch would make the dim empty.
    shape = [d if d != 0 else (in_shape[i] if in_shape and in_shape[i] is not None
                               else Expr(f"{x}.shape[{i}]"))
             for i, d in enumerate(node.attrs["shape"])]
    return call("torch.reshape", x, shape)


def _leading_copies(target: list, in_shape) -> int | None:
    """How many leading dims a reshape copies (0s, or the input's own fixed
    sizes) when at least one dynamic dim is among them and none after them."""
    if in_shape is None:
        return None
    kept = 0
    while kept < min(len(target), len(in_shape)) and (
            target[kept] == 0 or (in_shape[kept] is not None and target[kept] == in_shape[kept])):
        kept += 1
    copied_dynamic = any(in_shape[i] is None for i in range(kept))
    rest_fixed = all(d is not None for d in in_shape[kept:]) and 0 not in target[kept:]
    return kept if kept and copied_dynamic and rest_fixed and kept < len(target) else None


def _sizes(e, value: str) -> Expr:
    """A computed shape as the list torch takes."""
    return e.size_list(value) or Expr(f"{e.value(value)}.tolist()")


@TORCH_OPS.register("reshape_dynamic")
def reshape_dynamic(e, node):
    return call("torch.reshape", e.value(node.inputs[0]), _sizes(e, node.inputs[1]))


@TORCH_OPS.register("full")
def full(e, node):
    return call("torch.full", _sizes(e, node.inputs[0]), node.attrs["value"],
                dtype=e.dtype(node.attrs["dtype"]))


@TORCH_OPS.register("expand_dynamic")
def expand_dynamic(e, node):
    # ONNX Expand broadcasts both ways: a 1 in the target keeps the input's dim.
    x = e.value(node.inputs[0])
    target = call("torch.broadcast_shapes", Expr(f"{x}.shape"), _sizes(e, node.inputs[1]))
    return call("torch.broadcast_to", x, target)


@TORCH_OPS.register("squeeze")
def squeeze(e, node):
    dims = Expr("(" + ", ".join(str(a) for a in node.attrs["axes"]) + ",)")
    return call("torch.squeeze", e.value(node.inputs[0]), dims)


@TORCH_OPS.register("unsqueeze")
def unsqueeze(e, node):
    # torch.unsqueeze takes one dim: insert them lowest first.
    expr = e.value(node.inputs[0])
    for axis in sorted(node.attrs["axes"]):
        expr = call("torch.unsqueeze", expr, axis)
    return expr


@TORCH_OPS.register("shape")
def shape(e, node):
    return call("torch.tensor", Expr(f"{e.value(node.inputs[0])}.shape"),
                dtype=e.dtype(node.attrs.get("dtype", "int64")))


@TORCH_OPS.register("resize")
def resize(e, node):
    a = node.attrs
    if a["mode"] == "bilinear" and a["coord"] == "asymmetric":
        raise ValueError("resize: bilinear with asymmetric coordinates has no torch equivalent")
    extra = {"align_corners": a["coord"] == "align_corners"} if a["mode"] == "bilinear" else {}
    return call("F.interpolate", e.value(node.inputs[0]), size=a["size"], mode=a["mode"],
                **extra)


@TORCH_OPS.register("pad_dynamic")
def pad_dynamic(e, node):
    """F.pad by amounts computed from the inputs' sizes, (begin, end) from the last dim back."""
    pads = host_items(e, node, node.inputs[1])
    return call("F.pad", e.value(node.inputs[0]), e.constant_pads(pads),
                value=node.attrs.get("value", 0.0))


@TORCH_OPS.register("upsample")
def upsample(e, node):
    """F.interpolate by the whole factors: the output is the input's size
    times them, whatever that size is at run time."""
    a = node.attrs
    extra = {"align_corners": a["coord"] == "align_corners"} if a["mode"] == "bilinear" else {}
    scales = a["scales"]
    factor = scales[0] if scales[0] == scales[1] else tuple(scales)
    return call("F.interpolate", e.value(node.inputs[0]), scale_factor=factor, mode=a["mode"],
                **extra)


@TORCH_OPS.register("attention")
def attention(e, node):
    q, k, v = (e.value(x) for x in node.inputs[:3])
    mask = node.inputs[3] if len(node.inputs) > 3 and node.inputs[3] else None
    kwargs = {"attn_mask": e.value(mask)} if mask else {}
    if node.attrs.get("causal"):
        kwargs["is_causal"] = True
    if node.attrs.get("scale") is not None:
        kwargs["scale"] = float(node.attrs["scale"])
    out = call("F.scaled_dot_product_attention", q, k, v, **kwargs)
    # (a query's weights scaled by `seen` is its output scaled by it)
    return binop(out, "*", e.value(node.inputs[4])) if len(node.inputs) > 4 and \
        node.inputs[4] else out
