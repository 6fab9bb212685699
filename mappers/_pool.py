"""Pooling of any spatial rank (NCHW-like), shared by the PyTorch, ONNX and TF
mappers. ceil_mode becomes extra end padding (padding never wins a max), and
what the IR's `max_pool2d` / `avg_pool2d` cannot say (dilation, 3-D windows)
becomes a maximum / a sum divided by counts over strided slices of the padded
input; 1-D average pooling goes through a unit height.

Average pooling in ceil_mode is exact the same way when padding is not
counted (the overhang then counts no more than padding does); when padding is
counted, the overhang still is not, which `avg_pool2d` cannot say, so that
case is refused unless ceil_mode leaves the output size unchanged."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError


def _out_size(size: int, k: int, s: int, d: int, begin: int, end: int, ceil: bool) -> int:
    span = size + begin + end - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + begin:
        out -= 1  # the last window must start inside the input or its begin padding
    return out


def ceil_pads(ctx, op, x: str, kernel, strides, dilations, pads, ceil: bool,
              counts_padding: bool = False) -> list[int]:
    """`pads` ([begins..., ends...]) with the ends grown, by the least that
    does it, so that floor-mode pooling gives ceil_mode's output size
    (`counts_padding`: an average pool whose divisor counts padding, refused
    where the overhang would count)."""
    rank = len(kernel)
    if not ceil:
        return list(pads)
    sizes = (ctx.shape(x) or [None] * (rank + 2))[2:]
    if any(s is None for s in sizes):
        raise ConversionError(f"{op.type} '{op.name}': ceil_mode needs static spatial sizes")
    ends = list(pads[rank:])
    for i, (size, k, s, d) in enumerate(zip(sizes, kernel, strides, dilations)):
        want = _out_size(size, k, s, d, pads[i], pads[rank + i], True)
        have = _out_size(size, k, s, d, pads[i], pads[rank + i], False)
        if want != have and counts_padding:
            raise ConversionError(
                f"{op.type} '{op.name}': average pooling with ceil_mode=True, padding counted "
                f"in the divisor (count_include_pad) and a partial last window (spatial axis "
                f"{i}: {want} outputs instead of {have}) is not supported")
        # The least end padding that gives floor mode `want` windows: the last
        # window then just fits, so the padding stays smaller than the window
        # (ONNX Runtime refuses a pad as large as the kernel: HF EfficientNet's
        # 320-wide pool of a 2x2 map).
        ends[i] += max(0, (want - 1) * s + d * (k - 1) + 1 - (size + pads[i] + ends[i]))
    return list(pads[:rank]) + ends


def _window_slices(ctx, x: str, shape, kernel, strides, dilations, pads, fill: float):
    """The input padded with `fill`, then one strided slice per kernel offset:
    the inputs of every window position, as tensors of the output's shape."""
    rank = len(kernel)
    padded_shape = tuple(shape[:2]) + tuple(
        s + pads[i] + pads[rank + i] for i, s in enumerate(shape[2:]))
    padded = x
    if any(pads):
        padded = ctx.emit("pad", [x], {"pads": [0, 0] + list(pads[:rank]) + [0, 0] +
                                       list(pads[rank:]), "value": fill},
                          shape=padded_shape, hint="pad")
    outs = [(p - d * (k - 1) - 1) // s + 1
            for p, k, s, d in zip(padded_shape[2:], kernel, strides, dilations)]
    out_shape = tuple(shape[:2]) + tuple(outs)
    windows = []
    for offset in np.ndindex(*kernel):
        starts = [o * d for o, d in zip(offset, dilations)]
        windows.append(ctx.emit("slice", [padded], {
            "starts": starts, "ends": [b + (n - 1) * s + 1 for b, n, s in
                                       zip(starts, outs, strides)],
            "axes": list(range(2, rank + 2)), "steps": list(strides)},
            shape=out_shape, hint="window"))
    return windows, out_shape


def _static_shape(ctx, op, x: str, what: str):
    shape = ctx.shape(x)
    if shape is None or any(s is None for s in shape[1:]):
        raise ConversionError(f"{op.type} '{op.name}': {what} needs static channel and "
                              f"spatial sizes")
    return shape


def _chain(ctx, ir_op: str, values: list[str], out_shape, out: str | None) -> str:
    acc = values[0]
    for i, v in enumerate(values[1:], 1):
        last = i == len(values) - 1
        acc = ctx.emit(ir_op, [acc, v], outputs=[out] if last and out else None,
                       shape=None if last and out else out_shape, hint=ir_op)
    return acc


def emit_avg_pool(ctx, op, x: str, out: str, kernel, strides, pads,
                  count_include_pad: bool) -> None:
    """Average pooling of NCHW-like `x`: `avg_pool2d`; 1-D through a unit height;
    3-D as a sum of strided slices divided by each window's count."""
    kernel, strides, pads = list(kernel), list(strides), list(pads)
    attrs = {"count_include_pad": bool(count_include_pad)}
    if len(kernel) == 2:
        ctx.emit("avg_pool2d", [x], {"kernel": kernel, "strides": strides, "pads": pads,
                                     **attrs}, outputs=[out])
        return
    shape = _static_shape(ctx, op, x, f"{len(kernel)}-D average pooling")
    if len(kernel) == 1:
        image = ctx.emit("unsqueeze", [x], {"axes": [2]}, shape=tuple(shape[:2]) + (1, shape[2]),
                         hint="as_image")
        pooled = ctx.emit("avg_pool2d", [image], {"kernel": [1] + kernel, "strides": [1] + strides,
                                                  "pads": [0, pads[0], 0, pads[1]], **attrs},
                          hint="pool")
        ctx.emit("squeeze", [pooled], {"axes": [2]}, outputs=[out])
        return
    windows, out_shape = _window_slices(ctx, x, shape, kernel, strides, [1] * len(kernel),
                                        pads, 0.0)
    total = _chain(ctx, "add", windows, out_shape, None)
    ones = np.ones(shape[2:], ctx.dtype(x))
    width = [(b, e) for b, e in zip(pads[:len(kernel)], pads[len(kernel):])]
    counted = np.pad(ones, width, constant_values=1 if count_include_pad else 0)
    counts = np.lib.stride_tricks.sliding_window_view(counted, kernel)[
        tuple(slice(None, None, s) for s in strides)].sum(axis=tuple(range(-len(kernel), 0)))
    ctx.emit("div", [total, ctx.constant(counts.astype(ctx.dtype(x)), "counts")],
             outputs=[out])


def emit_max_pool(ctx, op, x: str, out: str, kernel, strides, dilations, pads) -> None:
    """Max pooling of NCHW-like `x` (pads already include ceil_mode's)."""
    kernel, strides, dilations = list(kernel), list(strides), list(dilations)
    rank = len(kernel)
    if rank == 2 and dilations == [1, 1]:
        ctx.emit("max_pool2d", [x], {"kernel": kernel, "strides": strides, "pads": list(pads)},
                 outputs=[out])
        return
    shape = _static_shape(ctx, op, x, f"{rank}-D or dilated max pooling")
    dtype = ctx.dtype(x)
    lowest = float("-inf") if np.dtype(dtype).kind == "f" else float(np.iinfo(dtype).min)
    windows, out_shape = _window_slices(ctx, x, shape, kernel, strides, dilations, pads, lowest)
    if len(windows) == 1:
        ctx.emit("identity", windows, outputs=[out])
    else:
        _chain(ctx, "maximum", windows, out_shape, out)
