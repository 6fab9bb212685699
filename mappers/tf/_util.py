"""Helpers shared by the TF mappers: layout wrapping and padding arithmetic."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.ir import TensorInfo
from x2.ir.kernels import same_upper_pads

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


def padding(ctx, op, kernel: list[int], strides: list[int], dilations: list[int]) -> dict:
    """A 2-D conv's or pool's padding attributes for TF's SAME / VALID /
    EXPLICIT: explicit `pads` [top, left, bottom, right], or, for SAME over a
    height/width known only at run time whose pads depend on it,
    `auto_pad="SAME_UPPER"` (each target computes them from the input)."""
    mode = op.attrs.get("padding", "VALID")
    if mode == "VALID":
        return {"pads": [0, 0, 0, 0]}
    if mode == "EXPLICIT":
        flat = op.attrs["explicit_paddings"]
        pairs = [flat[i:i + 2] for i in range(0, len(flat), 2)]
        h, w = spatial(op, pairs)
        return {"pads": [h[0], w[0], h[1], w[1]]}
    in_shape = ctx.shape(op.inputs[0])
    if in_shape is None:
        raise ConversionError(f"{op.type} '{op.name}' uses SAME padding on an input of unknown "
                              f"rank; give static shapes with --input-shape")
    sizes = spatial(op, list(in_shape))
    if any(size is None and not _same_pads_fixed(k, s, d)
           for size, k, s, d in zip(sizes, kernel, strides, dilations)):
        return {"pads": [0, 0, 0, 0], "auto_pad": "SAME_UPPER"}
    # An unknown size whose pads do not depend on it: any size gives them.
    known = [size if size is not None else 64 * s for size, s in zip(sizes, strides)]
    return {"pads": same_upper_pads(known, kernel, strides, dilations)}


def _same_pads_fixed(kernel: int, stride: int, dilation: int) -> bool:
    """Whether SAME's pads are the same for every size: they depend on it only
    through size % stride (not at all at stride 1, or for a 1-wide kernel)."""
    return len({tuple(same_upper_pads([stride * 64 + r], [kernel], [stride], [dilation]))
                for r in range(stride)}) == 1


def same_pads(ctx, op, sizes, kernel, strides, dilations) -> list[int]:
    """Explicit [begins..., ends...] for TF's SAME / VALID over any spatial rank."""
    if op.attrs.get("padding", "VALID") == "VALID":
        return [0] * (2 * len(kernel))
    if op.attrs.get("padding") != "SAME" or any(s is None for s in sizes):
        raise ConversionError(f"{op.type} '{op.name}': padding {op.attrs.get('padding')!r} "
                              f"needs SAME or VALID and static spatial sizes")
    return same_upper_pads(sizes, kernel, strides, dilations)


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
