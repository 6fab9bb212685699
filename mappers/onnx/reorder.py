"""Ordering and block rearrangements: TopK, and DepthToSpace / SpaceToDepth
(pixel shuffle: super-resolution and detection heads)."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import const_ints, norm_axes, rank_of


@onnx_mapper("TopK", since=10)
def topk(ctx, op):
    """`topk(k, axis, largest)` with a constant K; sorted=0 leaves the order
    free in ONNX, and sorted is one such order."""
    k = const_ints(ctx, op, 1, "K")
    if k is None or len(k) != 1:
        raise ConversionError(f"TopK '{op.name}': K must be one constant number")
    axis = norm_axes(ctx, op, op.inputs[0], [op.attrs.get("axis", -1)])[0]
    ctx.emit("topk", op.inputs[:1], {"k": int(k[0]), "axis": axis,
                                     "largest": bool(op.attrs.get("largest", 1))},
             outputs=op.outputs[:2])


@onnx_mapper("DepthToSpace", "SpaceToDepth")
def depth_space(ctx, op):
    """`reshape` + `transpose` + `reshape` on NCHW, in DCR (depth-column-row,
    the default) or CRD order (SpaceToDepth's `mode` since opset 25). The
    batch may be dynamic; H, W and C must be known."""
    x = op.inputs[0]
    if rank_of(ctx, op, x) != 4:
        raise ConversionError(f"{op.type} '{op.name}': only 4-D NCHW inputs are supported")
    _, c, h, w = ctx.shape(x)
    if None in (c, h, w):
        raise ConversionError(f"{op.type} '{op.name}': channels, height and width must be "
                              f"known at conversion time (give --input-shape)")
    b = int(op.attrs["blocksize"])
    crd = op.attrs.get("mode", "DCR") == "CRD"
    if op.type == "SpaceToDepth":  # DCR: channel (row, col, c); CRD: (c, row, col)
        first, perm, last = [0, c, h // b, b, w // b, b], \
            [0, 1, 3, 5, 2, 4] if crd else [0, 3, 5, 1, 2, 4], [0, c * b * b, h // b, w // b]
    elif not crd:
        first, perm, last = [0, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2], \
            [0, c // (b * b), h * b, w * b]
    else:
        first, perm, last = [0, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3], \
            [0, c // (b * b), h * b, w * b]
    blocks = ctx.emit("reshape", [x], {"shape": first}, hint="blocks")
    moved = ctx.emit("transpose", [blocks], {"perm": perm}, hint="moved")
    ctx.emit("reshape", [moved], {"shape": last}, outputs=op.outputs)
