"""Paddle's side of the Python-code emitter: the context hooks the shared ops
(python_ops.py) call, and the ops whose Paddle code is its own. Paddle layers
take asymmetric padding and an NHWC data_format themselves, and its reshape
copies a dim for a 0 as the IR does, so most of this is spelling."""
from __future__ import annotations

import numpy as np

from ..ir.kernels import resize_taps
from .codegen import Assign, EmitContext, Expr, binop, call, dtype_name, literal
from . import keras_checkpoint
from . import python_control  # noqa: F401  (registers `if` and `loop` in PYTHON_OPS)
from .paddle_inplace import overwritten_inputs, overwritten_value
from .python_ops import PYTHON_OPS, host_items, leaky_relu, reduce
from .recurrent_classes import gru_reset_before
from .registry import OpRegistry

PADDLE_OPS = OpRegistry("Paddle", PYTHON_OPS)


class PaddleContext(EmitContext):
    framework = "Paddle"
    for_training = False   # x2 convert --for training: forms whose gradients are finite

    def dtype(self, name) -> str:
        return dtype_name(name)  # written as a string literal: paddle.cast(x, 'int64')

    def statements(self, nodes) -> list:
        """As EmitContext's, with a copy for each op Paddle Inference would let
        overwrite a value read again later (paddle_inplace.py). A value's
        copies are made together, each from the one before, before the first
        such op: equal copies of one value would be merged into one by the
        program's common-subexpression pass, and one overwritten before the
        next is taken from it would hand on its result."""
        nodes = list(nodes)
        shared = overwritten_inputs(self.graph, nodes,
                                    skip=set(self.host) | set(self.host_values or ()))
        if not shared:
            return super().statements(nodes)
        readers: dict[str, list[int]] = {}
        for i, value in shared.items():
            readers.setdefault(value, []).append(i)
        out, copy_of = [], {}
        for i, node in enumerate(nodes):
            value = shared.get(i)
            if value is None:
                out.extend(super().statements([node]))
                continue
            original = str(self.value(value))
            if i == readers[value][0]:
                source = original
                for j, reader in enumerate(readers[value]):
                    copy = self.namer(f"{value}\0copy{j}", f"{original}_copy")
                    out.append(Assign([copy], call("paddle.concat", Expr(f"[{source}]")),
                                      f"a copy: Paddle Inference would overwrite {original} "
                                      f"in place"))
                    copy_of[reader], source = copy, copy
            self.namer.bind(value, copy_of[i])
            out.extend(super().statements([node]))
            self.namer.bind(value, original)
        return out

    def overwrites(self, node) -> str | None:
        """What Paddle Inference would let `node` write over (module_tree.py)."""
        return overwritten_value(self.graph, node, set(self.host_values or ()))

    def output_copy(self, x: Expr) -> Expr:
        # paddle.jit.save returns a tensor returned twice only once.
        return call("paddle.assign", x)

    # paddle's static program multiplies a tensor by a Python number with the
    # float32 `scale` op: an int64 hash constant above 2**24 loses its low bits.
    int_literal_limit = 1 << 24

    def scalar_tensor(self, value, dtype: str) -> Expr:
        # paddle.save turns 0-d tensors into shape [1]: keep scalars in the code.
        return call("paddle.full", [], value, self.dtype(dtype))

    # Paddle's layers hold some weights laid out anew (Linear's [in, out]):
    # they keep the source's names, and load_source_checkpoint lays them out.
    source_layout_only = False

    def footer_lines(self) -> list[str]:
        if not self.tree.layouts:
            return []
        if keras_checkpoint.is_keras(self.tree.state):
            return keras_checkpoint.footer_lines(self.tree, "paddle")
        rows = [f"    {key!r}: ({tuple(self.tree.tied_keys(source))!r}, "
                f"{None if perm is None else tuple(perm)}, {tuple(shape)}),"
                for key, (source, perm, shape) in self.tree.layouts.items()]
        return ["", "", "# parameter or buffer -> (the source checkpoint's keys for it (a tied "
                "weight has several), the axes x2", "# permuted it by, its shape here)",
                "SOURCE_KEYS = {", *rows, "}",
                "", "", LOAD_SOURCE_CHECKPOINT]

    def parameter_init(self, array: np.ndarray) -> Expr:
        return call("self.create_parameter", list(array.shape), dtype=self.dtype(array.dtype))

    def data_format(self, node) -> dict:
        """data_format="NHWC" where --layout nhwc kept the source layout (NCHW is
        Paddle's default)."""
        return {"data_format": "NHWC"} if node.attrs.get("data_format") == "NHWC" else {}

    def bias_flag(self, bias) -> dict:
        return {"bias_attr": Expr("None" if bias else "False")}

    def linear(self, size_in: int, size_out: int, bias) -> Expr:
        if bias:
            return super().linear(size_in, size_out, bias)
        self.helper(LINEAR_NO_BIAS)
        return call("LinearNoBias", size_in, size_out)

    def conv_padding(self, node, kernel):
        """Paddle takes [top, left] or, when they differ, [top, bottom, left,
        right]; "SAME" computes TF's SAME pads from the input at run time (and
        ignores the dilation, so a dilated one is refused)."""
        a, x = node.attrs, node.inputs[0]
        if a.get("auto_pad", "NOTSET") == "SAME_UPPER":
            if any(d != 1 for d in a.get("dilations") or (1, 1)):
                raise self.unsupported(node, "SAME padding computed at run time with a "
                                             "dilation (Paddle's padding='SAME' drops the "
                                             "dilation); give the image size with --input-shape")
            return self.value(x), "SAME"
        top, left, bottom, right = a["pads"]
        padding = [top, left] if top == bottom and left == right else [top, bottom, left, right]
        return self.value(x), padding

    def constant_pads(self, pads: list[int]) -> list[int]:
        rank = len(pads) // 2
        if rank == 4 and not any(pads[i] or pads[i + 4] for i in (0, 1)):
            return [pads[3], pads[7], pads[2], pads[6]]   # an image's [left, right, top, bottom]
        # [begin_0, end_0, begin_1, end_1, ...] when every dim is given.
        return [p for i in range(rank) for p in (pads[i], pads[i + rank])]

    def constant_pad(self, x: Expr, pads: list[int], value, shape, dtype) -> Expr:
        """Paddle Inference (paddle 3.3, default config) runs F.pad right only
        in its image forms: an image's height/width (pad2d) or a sequence's
        last axis (NCL). With the all-dims form it crashes, hangs, or pads
        other axes; other pads are written as concatenations with filled blocks."""
        rank = len(pads) // 2
        padded = [i for i in range(rank) if pads[i] or pads[i + rank]]
        static = shape is not None and all(isinstance(d, int) for d in shape)
        if rank == 3 and padded == [2] and all(p >= 0 for p in pads):
            # (at any sizes: framed audio padded to its FFT length crashed oneDNN's
            # pad in the all-dims form, "free(): invalid pointer")
            return self.api("pad", x, [pads[2], pads[5]], value=value, data_format="NCL")
        if padded and rank in (2, 3) and set(padded) <= {rank - 2, rank - 1} \
                and all(p >= 0 for p in pads):
            # As an image: at dynamic sizes the all-dims form crashed or hung Paddle
            # Inference (a waveform's pad, tokens padded at the front).
            lead = 4 - rank
            image = self.api("pad", Expr(f"{literal(x)}[{', '.join(['None'] * lead)}]"),
                             self.constant_pads([0] * lead + pads[:rank] + [0] * lead
                                                + pads[rank:]), value=value)
            return Expr(f"{literal(image)}[{', '.join(['0'] * lead)}]")
        if not padded or (rank == 4 and set(padded) <= {2, 3}) or any(p < 0 for p in pads) \
                or dtype is None \
                or not static:
            return self.api("pad", x, self.constant_pads(pads), value=value)
        dtype = self.dtype(dtype)
        size = list(shape)
        for axis in padded:
            blocks = []
            for count in (pads[axis], pads[axis + rank]):
                block = [*size[:axis], count, *size[axis + 1:]]
                blocks.append(call("paddle.full", block, value, dtype) if count else None)
            parts = [b for b in (blocks[0], x, blocks[1]) if b is not None]
            x = call("paddle.concat", parts, axis=axis)
            size[axis] += pads[axis] + pads[axis + rank]
        return x

    def dense_weight(self, w: str) -> str:
        return w  # nn.Linear keeps [in, out], like the IR

    def tied_linear(self, x: Expr, table: Expr, bias: Expr | None) -> Expr:
        """x @ table.T over an embedding's [rows, width] table (how PaddleNLP
        writes a tied head)."""
        product = call("paddle.matmul", x, table, transpose_y=True)
        return product if bias is None else binop(product, "+", bias)

    def norm_state(self, scale, bias, mean, var) -> dict:
        return {"weight": scale, "bias": bias, "_mean": mean, "_variance": var}

    def softmax_rows(self, node, y: Expr) -> Expr:
        """A row that is all -inf is NaN in the IR (numpy, torch, onnxruntime; HF
        models test for it), but paddle's vectorized CPU softmax makes it uniform:
        where a -inf constant (a mask) reaches the input, y + 0 * max(row) is y
        with such rows NaN (0 * -inf; a NaN literal would not survive jit.save)."""
        if node.inputs[0] not in self._neg_inf_reach():
            return y
        top = call("paddle.max", self.value(node.inputs[0]), axis=node.attrs["axis"],
                   keepdim=True)
        return binop(y, "+", binop(top, "*", 0.0))

    def _neg_inf_reach(self) -> set:
        """The values a float constant holding -inf flows into (computed once)."""
        if getattr(self, "_neg_inf", None) is None:
            reached = {name for name, array in self.graph.constants.items()
                       if array.dtype.kind == "f" and np.isneginf(array).any()}
            for node in self.graph.nodes:
                if any(v in reached for v in node.inputs):
                    reached.update(node.outputs)
            self._neg_inf = reached
        return self._neg_inf

    def dim(self, x, axis: int) -> Expr:
        """A dynamic dim (x.shape holds -1 for it in a static program)."""
        return Expr(f"paddle.shape({x})[{axis}]")

    def recurrent_layer(self, node, input_size: int, bias: bool) -> Expr:
        a = node.attrs
        extra = {"activation": a["activation"]} if node.op == "rnn" else {}
        if not bias:
            extra.update(bias_ih_attr=False, bias_hh_attr=False)
        direction = "bidirect" if a["direction"] == "bidirectional" else "forward"
        return self.api(node.op, input_size, a["hidden_size"], direction=direction,
                        time_major=not a["batch_first"], **extra)

    def recurrent_params(self, params: dict, directions: int) -> dict:
        """Paddle's recurrent layers list each parameter twice in state_dict:
        flat (weight_ih_l0) and per cell (0.cell.weight_ih, 0.cell_fw/bw...)."""
        cells = ["cell"] if directions == 1 else ["cell_fw", "cell_bw"]
        aliases = {}
        for name, array in params.items():
            base, _, reverse = name.removesuffix("_l0").partition("_l0_")
            kind = base if not reverse else name.replace("_l0_reverse", "")
            aliases[f"0.{cells[1 if reverse else 0]}.{kind}"] = array
        return {**params, **aliases}

    gru_reset_before_class = gru_reset_before("Paddle")

    def reset_before_gru_supported(self, node, x) -> None:
        """GRUResetBefore loops over time in Python: jit.save traces it with the
        number of steps known, and a dynamic one would trace no step at all."""
        shape = self.graph.shape(x) or ()
        axis = 1 if node.attrs["batch_first"] else 0
        if len(shape) <= axis or not isinstance(shape[axis], int) or shape[axis] < 0:
            raise self.unsupported(node, "linear_before_reset=0 (reset gate applied before "
                                         "the recurrent matmul, which paddle.nn.GRU cannot "
                                         "do) over a dynamic number of time steps; x2 writes "
                                         "its own GRU class for a fixed number of steps only "
                                         "(convert to torch or onnx, or fix the sequence "
                                         "length)")

    def recurrent_call(self, node, layer: str, x, state, lengths, targets, time_axis):
        args = [x, state if state is not None else None]
        if lengths is not None:
            args.append(Expr(str(lengths)))
        while args[-1] is None:
            args.pop()
        return [Assign(targets, call(layer, *args))]


# paddle.prod takes a list of axes, like the other reductions.
PADDLE_OPS.register("reduce_prod")(reduce)


@PADDLE_OPS.register("reduce_mean")
def reduce_mean(e, node):
    """A mean over the image dims of a 4-D float tensor (a squeeze-and-excite
    block's, a classifier head's) is global average pooling, which Paddle
    Inference runs as one oneDNN pool; its oneDNN mean over a conv's output
    took 3 ms a call, more than EfficientNetB0's whole forward elsewhere.
    Only NCHW: its oneDNN pool of an NHWC tensor (data_format="NHWC") gives
    its dims in another order (ConvNeXt's head failed in the layer norm after)."""
    x = node.inputs[0]
    shape = e.graph.shape(x) or []
    axes = sorted(a % 4 for a in node.attrs["axes"]) if len(shape) == 4 else None
    if axes != [2, 3] or not (e.graph.dtype(x) or "").startswith("float"):
        return reduce(e, node)
    pooled = call("F.adaptive_avg_pool2d", e.value(x), 1)
    return pooled if node.attrs["keepdims"] else call("paddle.flatten", pooled, 1)


@PADDLE_OPS.register("leaky_relu")
def leaky_relu_apart_from_conv(e, node):
    """After a 2-D convolution, as the max (or min) of x and alpha * x: Paddle
    Inference (3.3, default config) fuses conv2d + leaky_relu into one oneDNN
    conv and crashes (SIGSEGV) running it, a depthwise conv's too."""
    x = node.inputs[0]
    producer = e.graph.producer(x)
    if producer is None or producer.op != "conv2d":
        return leaky_relu(e, node)
    alpha = float(node.attrs["alpha"])
    y = e.value(x)
    leaked = binop(y, "*", alpha)
    if alpha < 0:
        return call("paddle.where", binop(y, ">=", 0.0), y, leaked)
    return call("paddle.maximum" if alpha <= 1 else "paddle.minimum", y, leaked)


@PADDLE_OPS.register("where")
def where(e, node):
    """Operands of another shape than the output's are expanded first: a saved
    program's paddle.where broadcasts by adding zeros (five adds, three fills,
    two casts a call), which Paddle Inference's oneDNN runs slowly along the
    last dim (BERT-base's masked attention 3x slower than with the expands)."""
    values = [e.value(v, tensor=True) for v in node.inputs]
    return call("paddle.where", *broadcast_operands(e, node.inputs, values, node.outputs[0]))


def broadcast_operands(e, names, values, out) -> list:
    """`values` (of the tensors `names`) expanded to the shape of `out` where
    that is sure to be valid: to an operand of that shape when each of the
    value's dims is 1 or that operand's fixed size, else to the shape itself
    where it is fixed; as they are otherwise (the op broadcasts them)."""
    shape = e.graph.shape(out)
    shapes = [e.graph.shape(v) for v in names]
    if shape is None:
        return values
    full = next((i for i, s in enumerate(shapes) if s == shape), None)
    if full is None:
        if None in shape or any(s is None for s in shapes):
            return values
        return [v if s == shape else call("paddle.expand", v, shape=list(shape))
                for v, s in zip(values, shapes)]

    def fits(s) -> bool:
        return s is not None and len(s) <= len(shape) and all(
            d == 1 or (d is not None and d == shape[len(shape) - len(s) + i])
            for i, d in enumerate(s))
    return [call("paddle.expand_as", v, values[full]) if s != shape and fits(s) else v
            for v, s in zip(values, shapes)]


_PADDLE_REDUCE = {"none": "assign", "add": "add", "mul": "mul", "max": "amax", "min": "amin"}


@PADDLE_OPS.register("scatter_elements")
def scatter_elements(e, node):
    # broadcast=False: the index covers part of x, as in torch.scatter and ONNX.
    x, idx, updates = node.inputs
    return call("paddle.put_along_axis", e.value(x, tensor=True), e.value(idx, tensor=True),
                e.value(updates, tensor=True), node.attrs["axis"],
                reduce=_PADDLE_REDUCE[node.attrs["reduction"]], include_self=True,
                broadcast=False)


@PADDLE_OPS.register("gather_elements")
def gather_elements(e, node):
    # Without broadcast=False Paddle broadcasts the index against x; the IR
    # (like torch.gather and ONNX) reads only the leading part of x instead.
    x, idx = node.inputs
    return call("paddle.take_along_axis", e.value(x), indices=e.value(idx, tensor=True),
                axis=node.attrs["axis"], broadcast=False)


@PADDLE_OPS.register("max_pool2d", "avg_pool2d")
def pool2d(e, node):
    a = node.attrs
    inp, padding = e.conv_padding(node, a["kernel"])
    kwargs = {"kernel_size": a["kernel"], "stride": a["strides"], "padding": padding,
              **e.data_format(node)}
    if node.op == "avg_pool2d":
        kwargs["exclusive"] = not a.get("count_include_pad", False)
    return call(f"F.{node.op}", inp, **kwargs)


@PADDLE_OPS.register("gelu")
def gelu(e, node):
    return call("F.gelu", e.value(node.inputs[0]),
                approximate=bool(node.attrs.get("approximate", False)))


@PADDLE_OPS.register("cast")
def cast(e, node):
    return call("paddle.cast", e.value(node.inputs[0]), e.dtype(node.attrs["dtype"]))


@PADDLE_OPS.register("reshape")
def reshape(e, node):
    """paddle.reshape, which copies the input dim for a 0 as the IR (ONNX)
    does; after a transpose, a reshape that merges adjacent dims is
    paddle.flatten where Paddle Inference (3.3, oneDNN) would fuse them
    wrongly: transpose + reshape becomes one op that keeps the transpose's
    output type, and a concat after it fails to build ("The type
    tensor<2x16x32xf32> of outputs[0][1] must be equal to type
    tensor<2x4x4x32xf32>": a ViT's patch tokens); matmul + transpose +
    reshape, the attention heads merged, is right, until an add after it is
    fused in too, which it adds before the transpose (wrong numbers)."""
    x = node.inputs[0]
    if not _fused_wrongly_after_transpose(e, x, node):
        return call("paddle.reshape", e.value(x), shape=node.attrs["shape"])
    merged = merged_dims(e.graph.shape(x), e.graph.shape(node.outputs[0]))
    if merged:
        start, stop = merged
        return call("paddle.flatten", e.value(x), start, stop)
    shape = node.attrs["shape"]
    if 0 in shape:   # a 0 copies the input's dim, which a flat copy no longer has
        return call("paddle.reshape", e.value(x), shape=shape)
    # Any other reshape of a transpose goes through a flat copy: Paddle
    # Inference fuses transpose + reshape into a oneDNN transpose that has no
    # int64 kernel, and fuses a transpose, reshape, transpose, reshape chain
    # (windows into the batch and back) into one it cannot build.
    return call("paddle.reshape", call("paddle.flatten", e.value(x)), shape=shape)


def merged_dims(before, after) -> tuple[int, int] | None:
    """(start, stop) when `after` is `before` with dims start..stop merged
    into one, else None. One unknown dim is allowed outside them, at the same
    place on both sides: the element count then makes the two equal."""
    if not before or not after or len(after) >= len(before):
        return None
    start = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), len(after) - 1)
    stop = start + len(before) - len(after)
    kept_before, kept_after = before[:start] + before[stop + 1:], after[:start] + after[start + 1:]
    group = before[start:stop + 1]
    if None in group or after[start] != int(np.prod(group)):
        return None
    unknown = [i for i, d in enumerate(kept_before) if d is None]
    if unknown != [i for i, d in enumerate(kept_after) if d is None] or len(unknown) > 1:
        return None
    return (start, stop) if kept_before == kept_after else None


def _fused_wrongly_after_transpose(e, x, node) -> bool:
    transpose = e.graph.producer(x)
    if transpose is None or transpose.op != "transpose":
        return False
    source = e.graph.producer(transpose.inputs[0])
    heads_merged = (source is not None and source.op in ("matmul", "attention")
                    and list(transpose.attrs["perm"]) == [0, 2, 1, 3]
                    and len(node.attrs["shape"]) == 3)
    added = any(user.op == "add" for user in e.graph.users(node.outputs[0]))
    return not heads_merged or added


@PADDLE_OPS.register("reshape_dynamic")
def reshape_dynamic(e, node):
    if tuple(e.graph.shape(node.inputs[1]) or ()) == (1,):
        # A one-element shape tensor trips paddle.reshape (SystemError); a valid
        # 1-D target holds every element, which is what [-1] says.
        return call("paddle.reshape", e.value(node.inputs[0]), shape=[-1])
    sizes = e.size_list(node.inputs[1])
    return call("paddle.reshape", e.value(node.inputs[0]), shape=sizes or call(
        "paddle.cast", e.value(node.inputs[1]), e.dtype("int32")))


@PADDLE_OPS.register("full")
def full(e, node):
    return call("paddle.full", e.value(node.inputs[0]), node.attrs["value"],
                e.dtype(node.attrs["dtype"]))


@PADDLE_OPS.register("expand_dynamic")
def expand_dynamic(e, node):
    # ONNX Expand broadcasts both ways (a 1 in the target keeps the input's
    # dim); paddle.expand only grows, so the target is the larger of the two.
    x, shape = node.inputs
    rank = len(e.graph.shape(x) or ())
    if not rank or tuple(e.graph.shape(shape) or ()) != (rank,):
        raise e.unsupported(node, "a computed expand to a shape of another rank")
    if e.size_list(shape) is not None:
        return call("paddle.expand", e.value(x),
                    _expand_sizes(e.graph.shape(x), e.host[shape].items))
    target = call("paddle.maximum", call("paddle.cast", e.value(shape), e.dtype("int64")),
                  call("paddle.cast", call("paddle.shape", e.value(x)), e.dtype("int64")))
    return call("paddle.expand", e.value(x), target)


def _expand_sizes(dims, targets) -> list:
    """paddle.expand's sizes for an ONNX (two-way) expand of an input of dims
    `dims` to `targets` (ints, or the text of Python sizes): -1 keeps a dim
    the target leaves (a 1, or any size where the input's is fixed above 1);
    a run-time target over a dynamic dim is taken as it is (torch's expand:
    the dim is 1 or that size)."""
    sizes = []
    for dim, target in zip(dims, targets):
        if isinstance(target, int):
            sizes.append(-1 if target == 1 else target)
        elif isinstance(dim, int) and dim != 1:
            sizes.append(-1)
        else:
            sizes.append(Expr(target))
    return sizes


@PADDLE_OPS.register("pad_dynamic")
def pad_dynamic(e, node):
    """Pads computed from sizes, in the forms Paddle Inference (3.3, default
    config) runs right (see constant_pad): an image's height/width, or the
    last axis of a sequence or a waveform (NCL, a rank-2 input given a unit
    channel axis)."""
    x, value = e.value(node.inputs[0]), node.attrs.get("value", 0.0)
    pads = host_items(e, node, node.inputs[1])
    rank = len(pads) // 2
    padded = [i for i in range(rank) if not (pads[i] == 0 and pads[i + rank] == 0)]
    if rank == 4 and set(padded) <= {2, 3}:
        return call("paddle.nn.functional.pad", x, [pads[3], pads[7], pads[2], pads[6]],
                    value=value)
    if rank in (2, 3) and padded == [rank - 1]:
        wide = call("paddle.unsqueeze", x, 1) if rank == 2 else x
        out = call("paddle.nn.functional.pad", wide, [pads[rank - 1], pads[-1]], value=value,
                   data_format="NCL")
        return call("paddle.squeeze", out, 1) if rank == 2 else out
    raise e.unsupported(node, f"padding axes {padded} of a rank-{rank} tensor by amounts "
                              f"computed at run time (Paddle Inference runs an image's "
                              f"height/width or a sequence's last axis)")


@PADDLE_OPS.register("squeeze", "unsqueeze")
def squeeze(e, node):
    if node.op == "unsqueeze" and e.graph.shape(node.inputs[0]) == ():
        # Paddle Inference (3.3) mistypes `unsqueeze` of a computed 0-D size
        # (`h * w`) as 0-D where a concat reads it ("tensor<1xi64> ... must be
        # equal to type tensor<i64>"); the same reshape passes.
        return call("paddle.reshape", e.value(node.inputs[0]),
                    shape=[1] * len(node.attrs["axes"]))
    if node.op == "unsqueeze" and _integer_product(e, node.inputs[0]):
        shape = _unsqueezed_shape(e.graph.shape(node.inputs[0]), node.attrs["axes"])
        if shape is not None:
            # Paddle Inference (3.3) fuses multiply + unsqueeze into a oneDNN
            # multiply, whose integer kernel drops the unsqueeze (ALiBi's
            # positions from the mask: "Broadcast dimension mismatch").
            return call("paddle.reshape", e.value(node.inputs[0]), shape=shape)
    if node.op == "squeeze" and any(u.op == "transpose" for u in e.graph.users(node.outputs[0])):
        rank = len(e.graph.shape(node.inputs[0]) or ())
        axes = sorted({a % rank for a in node.attrs["axes"]}) if rank else []
        if len(axes) == 1 and rank > 1:
            # Paddle Inference (3.3) fuses squeeze + transpose into a oneDNN
            # transpose typed as its unsqueezed input, and a concat after it
            # fails to build (a sequence pooled between transformer blocks);
            # a reshape there is fused with the transpose wrongly (PP-OCR's
            # recognizer): the unit axis is merged into its neighbour.
            start = axes[0] if axes[0] < rank - 1 else axes[0] - 1
            return call("paddle.flatten", e.value(node.inputs[0]), start_axis=start,
                        stop_axis=start + 1)
    return call(f"paddle.{node.op}", e.value(node.inputs[0]), axis=node.attrs["axes"])


def _copying_shape(dims, kept) -> list[int] | None:
    """paddle.reshape's shape for an output whose dim j is input dim kept[j]
    (None: a new axis of 1): 0 (copy) for a dim still at its own place, a
    known size or -1 (one unknown) elsewhere; None when two unknown dims move."""
    shape = [1 if i is None else 0 if i == j else dims[i] if dims[i] is not None else -1
             for j, i in enumerate(kept)]
    return shape if shape.count(-1) <= 1 else None


def _integer_product(e, value) -> bool:
    """`value` is an integer multiply's, maybe through slices that keep its
    whole shape (paddle's program drops those, leaving multiply + unsqueeze)."""
    producer = e.graph.producer(value)
    while (producer is not None and producer.op == "slice"
           and e.graph.shape(producer.inputs[0]) == e.graph.shape(value)
           and None not in (e.graph.shape(value) or [None])):
        producer = e.graph.producer(producer.inputs[0])
    return (producer is not None and producer.op == "mul"
            and not str(e.graph.dtype(value) or "float32").startswith(("float", "bfloat")))


def _unsqueezed_shape(dims, axes) -> list[int] | None:
    if dims is None:
        return None
    rank = len(dims) + len(axes)
    new = {a % rank for a in axes}
    rest = iter(range(len(dims)))
    return _copying_shape(dims, [None if j in new else next(rest) for j in range(rank)])


@PADDLE_OPS.register("shape")
def shape(e, node):
    return call("paddle.cast", call("paddle.shape", e.value(node.inputs[0])),
                e.dtype(node.attrs.get("dtype", "int64")))


@PADDLE_OPS.register("resize")
def resize(e, node):
    """Rows, then columns, gathered from the source pixels each output pixel
    reads and blended (x2/ir/kernels.py resize_taps): paddle 3.3's Paddle
    Inference cannot run F.interpolate under its default oneDNN config
    ("ConvertPirAttribute2RuntimeAttribute not support ArrayAttribute<DoubleAttribute>").
    The tables are buffers; an axis whose input size is known only at run
    time computes its own (the model.py helper resize_taps)."""
    shape = e.graph.shape(node.inputs[0])
    if shape is None:
        raise e.unsupported(node, "a resize of an input of unknown rank")
    return _resize_axes(e, node, node.attrs["size"])


@PADDLE_OPS.register("upsample")
def upsample(e, node):
    """As `resize`, to the input's size times the whole factors: a size known
    only at run time computes its taps from that size (resize_taps)."""
    shape = e.graph.shape(node.inputs[0])
    if shape is None:
        raise e.unsupported(node, "a resize of an input of unknown rank")
    if node.attrs["coord"] == "align_corners" and None in shape[2:]:
        raise e.unsupported(node, "an align_corners upsampling of an image whose size is "
                                  "known only at run time")
    x = e.value(node.inputs[0])
    sizes = [d * s if isinstance(d, int) else binop(e.dim(x, axis), "*", s)
             for axis, d, s in zip((2, 3), shape[2:], node.attrs["scales"])]
    return _resize_axes(e, node, sizes)


def _resize_axes(e, node, sizes):
    """The statements of a resize of node's input to `sizes` ([H, W]; ints, or
    expressions where the input's size is known only at run time)."""
    a = node.attrs
    shape = e.graph.shape(node.inputs[0])
    y = e.value(node.inputs[0])
    name = e.namer(node.outputs[0])
    dtype = e.graph.dtype(node.inputs[0]) or "float32"
    statements = []
    for axis, out_size, in_size, what in ((2, sizes[0], shape[2], "rows"),
                                          (3, sizes[1], shape[3], "cols")):
        taps = _resize_taps(e, node, y, axis, out_size, in_size, what, dtype, statements)
        if taps is None:
            continue
        low, high, weight = taps
        below = call("paddle.index_select", y, low, axis=axis)
        if a["mode"] == "nearest":
            statements.append(Assign([name], below))
        else:
            below_name = e.namer(f"{node.name}#{what}_below", f"{what}_below")
            above_name = e.namer(f"{node.name}#{what}_above", f"{what}_above")
            above = call("paddle.index_select", y, high, axis=axis)
            statements += [Assign([below_name], below), Assign([above_name], above),
                           Assign([name], binop(Expr(below_name), "+", binop(
                               Expr(f"({above_name} - {below_name})"), "*", weight)))]
        y = Expr(name)
    return statements or [Assign([name], y)]


def _resize_taps(e, node, y, axis, out_size, in_size, what, dtype, statements):
    """(low, high, weight) expressions of one axis of a resize, None where it
    reads every pixel as it is. Tables where the input's size is known; else
    resize_taps() from the size at run time, its weight shaped to broadcast
    along the axis (statements gets the call)."""
    a = node.attrs
    if isinstance(in_size, int):
        low, high, weight = resize_taps(out_size, in_size, a["mode"], a["coord"])
        if out_size == in_size and a["mode"] == "nearest" and (low == np.arange(in_size)).all():
            return None
        tables = f"{node.outputs[0]}/{what}"
        return (e.table(f"{tables}_low", low), e.table(f"{tables}_high", high),
                e.table(f"{tables}_weight",
                        weight.astype(dtype).reshape((-1, 1) if axis == 2 else (-1,))))
    e.helper(PADDLE_RESIZE_TAPS)
    names = [e.namer(f"{node.name}#{what}_{part}", f"{what}_{part}")
             if a["mode"] == "bilinear" or part == "low" else "_"
             for part in ("low", "high", "weight")]
    statements.append(Assign(names, call("resize_taps", e.dim(y, axis), out_size, a["coord"],
                                         e.dtype(dtype))))
    weight = Expr(names[2])
    if axis == 2:
        weight = call("paddle.unsqueeze", weight, 1)
    return Expr(names[0]), Expr(names[1]), weight


PADDLE_RESIZE_TAPS = '''def resize_taps(size, out_size, coord, dtype):
    """What each of the out_size pixels of a resize reads along an axis of
    `size` pixels (a size known only at run time): the source pixels below and
    above its source coordinate, and the weight of the one above."""
    size = paddle.cast(size, "float32")
    position = paddle.arange(out_size, dtype="float32")
    if coord == "align_corners":
        source = position * ((size - 1) / max(out_size - 1, 1))
    elif coord == "half_pixel":
        source = paddle.clip((position + 0.5) * size / out_size - 0.5, min=0.0)
    else:  # asymmetric
        source = position * size / out_size
    # source >= 0: the cast to int is its floor. (Paddle Inference 3.3 runs a
    # paddle.floor here in place, zeroing the weights computed after it.)
    last = paddle.cast(size, "int64") - 1
    low = paddle.minimum(paddle.cast(source, "int64"), last)
    high = paddle.minimum(low + 1, last)
    return low, high, paddle.cast(source - paddle.cast(low, "float32"), dtype)
'''


@PADDLE_OPS.register("attention")
def attention(e, node):
    """Written out: Paddle's F.scaled_dot_product_attention takes [batch, seq,
    heads, dim] and runs only on GPU builds (flash attention), while the IR's
    layout is torch's [batch, heads, seq, dim]."""
    q, k, v = (e.value(x) for x in node.inputs[:3])
    if node.attrs.get("causal"):
        raise e.unsupported(node, "causal attention (the fusions never make it)")
    scale = node.attrs.get("scale")
    if scale is None:
        dim = (e.graph.shape(node.inputs[0]) or [None])[-1]
        if not isinstance(dim, int):
            raise e.unsupported(node, "attention whose head size is unknown")
        scale = 1 / float(np.sqrt(dim))
    scores = binop(call("paddle.matmul", q, k, transpose_y=True), "*", float(scale))
    if len(node.inputs) > 4 and node.inputs[4]:   # every row of the mask sees a key
        scores = binop(scores, "+", e.value(node.inputs[3]))
        weights = binop(call("F.softmax", scores, axis=-1), "*", e.value(node.inputs[4]))
        return call("paddle.matmul", weights, v)
    if not (len(node.inputs) > 3 and node.inputs[3]):
        return call("paddle.matmul", call("F.softmax", scores, axis=-1), v)
    # A query whose every key is masked (every score -inf) gives 0 (the IR's
    # and torch's rule); paddle's softmax makes such a row NaN, which a later
    # matmul spreads even through zero weights: `where` replaces it, and keeps
    # a NaN row NaN. The test is on the scores themselves: a row masked with
    # the lowest float (transformers' finfo.min masks) is a uniform softmax,
    # not a dead row, and Paddle Inference's oneDNN max of an all -inf row is
    # that lowest float, so no test on the row's max tells the two apart.
    # The softmax's gradient there is NaN too, even where no loss reaches it
    # (fine-tuning on a left-padded batch): for training such rows also go
    # in as zeros, one more op per attention (BERT-base 2-4% slower served).
    scores_name = e.namer(f"{node.name}#scores", "scores")
    dead_name = e.namer(f"{node.name}#dead", "sees_nothing")
    weights_name = e.namer(f"{node.name}#weights", "weights")
    scores_, dead, weights = Expr(scores_name), Expr(dead_name), Expr(weights_name)
    computed = [Assign([scores_name], binop(scores, "+", e.value(node.inputs[3])))]
    all_masked = call("paddle.all", binop(scores_, "==", Expr("float('-inf')")), axis=-1,
                      keepdim=True)
    if e.for_training:
        computed += [
            Assign([dead_name], call("paddle.expand_as", all_masked, scores_)),
            Assign([weights_name], call("F.softmax", call(
                "paddle.where", dead, call("paddle.zeros_like", scores_), scores_), axis=-1))]
    else:
        computed.append(Assign([weights_name], call("F.softmax", scores_, axis=-1)))
        dead = call("paddle.expand_as", all_masked, weights)
    return computed + [
        Assign([weights_name], call("paddle.where", dead, call("paddle.zeros_like", weights),
                                    weights)),
        Assign([e.namer(node.outputs[0])], call("paddle.matmul", weights, v))]


LINEAR_NO_BIAS = '''class LinearNoBias(nn.Linear):
    """nn.Linear without a bias, computed with a zero one: Paddle Inference
    (oneDNN) runs a linear with a bias as its fc kernel, and one without as
    a matmul 5-30% slower (tools/bench_generate.py)."""

    def __init__(self, in_features, out_features):
        super().__init__(in_features, out_features, bias_attr=False)

    def forward(self, x):
        return F.linear(x, self.weight, paddle.zeros([self.weight.shape[1]], self.weight.dtype))
'''


LOAD_SOURCE_CHECKPOINT = '''def load_source_checkpoint(path):
    """The model with the weights of a checkpoint of its source: a torch
    state_dict file (torch.save) or a .safetensors file, under the source's
    keys. Each weight is laid out as this model holds it (SOURCE_KEYS); what
    the checkpoint does not hold comes from load_model()."""
    import numpy as np
    if str(path).endswith(".safetensors"):
        from safetensors.numpy import load_file
        source = load_file(str(path))
    else:
        import torch
        source = {key: (tensor.float() if tensor.dtype == torch.bfloat16 else tensor).numpy()
                  for key, tensor in torch.load(path, map_location="cpu",
                                                weights_only=True).items()}
    # (a checkpoint may hold a tied weight under any one of its keys)
    missing = [keys[0] for keys, _, _ in SOURCE_KEYS.values() if not set(keys) & set(source)]
    if missing:
        raise ValueError(f"{path} does not hold the source weights {missing[:5]}")
    model = load_model()
    state = model.state_dict()
    for name, (keys, perm, shape) in SOURCE_KEYS.items():
        array = np.asarray(source[next(key for key in keys if key in source)])
        if perm is not None:  # the source tensor, reshaped if x2 did, then transposed
            array = array.reshape([shape[i] for i in np.argsort(perm)]).transpose(perm)
        state[name] = paddle.to_tensor(array.reshape(shape)).astype(state[name].dtype)
    model.set_state_dict(state)
    return model'''
