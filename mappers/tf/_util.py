"""Helpers shared by the TF mappers: layout wrapping and padding arithmetic."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.ir import TensorInfo

NHWC_TO_NCHW = [0, 3, 1, 2]
NCHW_TO_NHWC = [0, 2, 3, 1]


def is_nhwc(op) -> bool:
    return op.attrs.get("data_format", "NHWC") in ("NHWC", "NDHWC", "NWC")


def to_nchw(ctx, value: str) -> str:
    """Transpose an NHWC value to NCHW. The layout pass removes the pairs this creates."""
    shape = ctx.shape(value)
    nchw = None if shape is None else tuple(shape[i] for i in NHWC_TO_NCHW)
    return ctx.emit("transpose", [value], {"perm": NHWC_TO_NCHW}, shape=nchw, hint="to_nchw")


def emit_nchw(ctx, op, ir_op: str, inputs: list[str], attrs: dict) -> None:
    """Emit a layout-sensitive IR op (defined on NCHW) for a TF op in either layout."""
    out = op.outputs[0]
    if not is_nhwc(op):
        ctx.emit(ir_op, inputs, attrs, outputs=[out])
        return
    x = to_nchw(ctx, inputs[0])
    shape = ctx.shape(out)
    nchw = None if shape is None else tuple(shape[i] for i in NHWC_TO_NCHW)
    y = ctx.emit(ir_op, [x] + inputs[1:], attrs, shape=nchw, dtype=ctx.dtype(out), hint=ir_op)
    ctx.emit("transpose", [y], {"perm": NCHW_TO_NHWC}, outputs=[out])


def spatial(op, values: list) -> list:
    """The H, W entries of a 4-vector given in the op's data_format."""
    return [values[1], values[2]] if is_nhwc(op) else [values[2], values[3]]


def padding(ctx, op, kernel: list[int], strides: list[int], dilations: list[int]) -> list[int]:
    """Explicit pads [top, left, bottom, right] for TF's SAME / VALID / EXPLICIT."""
    mode = op.attrs.get("padding", "VALID")
    if mode == "VALID":
        return [0, 0, 0, 0]
    if mode == "EXPLICIT":
        flat = op.attrs["explicit_paddings"]
        pairs = [flat[i:i + 2] for i in range(0, len(flat), 2)]
        h, w = spatial(op, pairs)
        return [h[0], w[0], h[1], w[1]]
    in_shape = ctx.shape(op.inputs[0])
    if in_shape is None:
        raise ConversionError(f"{op.type} '{op.name}' uses SAME padding on an input of unknown "
                              f"rank; give static shapes with --input-shape")
    sizes = spatial(op, list(in_shape))
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        if size is None:
            # SAME pads depend on the size only through size % stride: where
            # every remainder gives the same pads (stride 1, a 1-wide kernel),
            # an unknown size has them too.
            totals = {_same_total(s * 64 + r, k, s, d) for r in range(s)}
            if len(totals) != 1:
                raise ConversionError(
                    f"{op.type} '{op.name}' uses SAME padding with stride {s} on an input "
                    f"whose height/width are unknown, where the padding depends on the size; "
                    f"give them with --input-shape")
            total = totals.pop()
        else:
            total = _same_total(size, k, s, d)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin + end


def _same_total(size: int, kernel: int, stride: int, dilation: int) -> int:
    out = -(-size // stride)
    return max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)


def same_pads(ctx, op, sizes, kernel, strides, dilations) -> list[int]:
    """Explicit [begins..., ends...] for TF's SAME / VALID over any spatial rank."""
    if op.attrs.get("padding", "VALID") == "VALID":
        return [0] * (2 * len(kernel))
    if op.attrs.get("padding") != "SAME" or any(s is None for s in sizes):
        raise ConversionError(f"{op.type} '{op.name}': padding {op.attrs.get('padding')!r} "
                              f"needs SAME or VALID and static spatial sizes")
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin + end


def emit_ncdhw(ctx, op, emit) -> None:
    """Run `emit(x, out)`, which computes an NCDHW result, for an NDHWC TF op:
    its input transposed to NCDHW, the result transposed back."""
    x = op.inputs[0]
    shape = ctx.shape(x)
    channels_first = ctx.emit("transpose", [x], {"perm": [0, 4, 1, 2, 3]},
                              shape=(shape[0], shape[4]) + tuple(shape[1:4]), hint="to_ncdhw")
    out_shape = ctx.shape(op.outputs[0])
    result = ctx.graph.fresh_name(f"{op.name}/ncdhw")
    ctx.graph.info[result] = TensorInfo(ctx.dtype(x), (out_shape[0], out_shape[4]) +
                                        tuple(out_shape[1:4]))
    emit(channels_first, result)
    ctx.emit("transpose", [result], {"perm": [0, 2, 3, 4, 1]}, outputs=op.outputs)
