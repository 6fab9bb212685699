"""ONNX Resize in the spec's separable form: each resized axis is one linear
map of that axis (out[o] = sum_i w[o, i] * x[i]), applied one axis after
another as the spec (and onnx's reference implementation) does. The weights
depend only on the sizes and attributes, so they are constants computed here:
nearest becomes a `gather` of constant indices (exact for every dtype);
linear and cubic (also antialiased, cubic_coeff_a, exclude_outside) a
`matmul` with a constant weight matrix; tf_crop_and_resize's points outside
the input take extrapolation_value (a `where` on a constant mask).

Used for what F.interpolate-style `resize` cannot write (conv.py's resize
mapper tries that first)."""
from __future__ import annotations

import math

import numpy as np

from x2.errors import ConversionError

from ._util import check_axis, choice

COORDS = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
          "asymmetric", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
# A weight matrix bigger than this many entries (in * out) is refused.
MAX_WEIGHTS = 1 << 24


def _nearest(mode: str):
    def coeffs(ratio: float, scale: float) -> np.ndarray:
        if ratio == 1.0:  # an exact source position: the right-hand neighbour
            return np.array([0.0, 1.0])
        pick_right = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
                      "floor": False, "ceil": True}[mode]
        return np.array([0.0, 1.0]) if pick_right else np.array([1.0, 0.0])
    return coeffs


def _linear(ratio: float, scale: float) -> np.ndarray:
    return np.array([1 - ratio, ratio])


def _linear_antialias(ratio: float, scale: float) -> np.ndarray:
    scale = min(scale, 1.0)  # antialias widens the kernel only when downsampling
    start = int(np.floor(-1 / scale) + 1)
    taps = (np.arange(start, start + 2 - 2 * start) - ratio) * scale
    weights = np.clip(1 - np.abs(taps), 0, 1)
    return weights / weights.sum()


def _cubic(a: float):
    def coeffs(ratio: float, scale: float) -> np.ndarray:
        r, s = ratio, 1 - ratio
        return np.array([((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                         ((a + 2) * r - (a + 3)) * r * r + 1,
                         ((a + 2) * s - (a + 3)) * s * s + 1,
                         ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a])
    return coeffs


def _cubic_antialias(a: float):
    def kernel(x: float) -> float:
        x = abs(x)
        if x <= 1:
            return (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1
        return a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a if x < 2 else 0.0

    def coeffs(ratio: float, scale: float) -> np.ndarray:
        scale = min(scale, 1.0)
        start = int(np.floor(-2 / scale) + 1)
        weights = np.array([kernel(scale * (i - ratio)) for i in range(start, 2 - start)])
        return weights / weights.sum()
    return coeffs


def source_coords(coord: str, out_size: int, in_size: int, scale: float, roi):
    """Each output index's coordinate in the input (the spec's
    coordinate_transformation_mode), and which are outside it (tf_crop_and_resize)."""
    y = np.arange(out_size, dtype=np.float64)
    length = scale * in_size  # the unfloored output length
    outside = None
    if coord == "align_corners":
        x = np.zeros(out_size) if length == 1 else y * (in_size - 1) / (length - 1)
    elif coord == "asymmetric":
        x = y / scale
    elif coord == "tf_crop_and_resize":
        if length == 1:
            x = np.full(out_size, (roi[1] - roi[0]) * (in_size - 1) / 2)
        else:
            x = y * (roi[1] - roi[0]) * (in_size - 1) / (length - 1)
        x = x + roi[0] * (in_size - 1)
        outside = (x < 0) | (x > in_size - 1)
    elif coord == "pytorch_half_pixel":
        x = np.full(out_size, -0.5) if length == 1 else (y + 0.5) / scale - 0.5
    elif coord == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric: the centre of the input on the centre of the output
        offset = in_size / 2 * (1 - out_size / length)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


def axis_weights(in_size: int, out_size: int, scale: float, coeffs, coord: str, roi,
                 exclude_outside: bool):
    """(weights [out, in], outside mask [out] or None) of one axis: each
    output's kernel taps (the n input positions nearest its source
    coordinate, ties to the lower; past the edges the edge value) times the
    coefficients for the fractional part (1 at an exact position)."""
    x, outside = source_coords(coord, out_size, in_size, scale, roi)
    weights = np.zeros((out_size, in_size))
    for o in range(out_size):
        base = math.floor(x[o])
        ratio = 1.0 if x[o] == base else x[o] - base
        taps = np.asarray(coeffs(ratio, scale), np.float64)
        n = len(taps)
        pad = math.ceil(n / 2)
        padded = x[o] + pad
        p = math.floor(padded)
        frac = padded - p
        if n % 2 == 0:
            first = p - n // 2 if frac == 0 else p - n // 2 + 1
        else:
            first = p - (n - 1) // 2 + (0 if frac <= 0.5 else 1)
        index = np.arange(first, first + n) - pad
        if exclude_outside:
            taps = np.where((index < 0) | (index >= in_size), 0.0, taps)
            total = taps.sum()
            taps = taps / (total if total != 0 else 1.0)
        np.add.at(weights[o], np.clip(index, 0, in_size - 1), taps)
    return weights, outside


def resize_separable(ctx, op, roi, scales, sizes) -> None:
    """Emit Resize (opset 11+) as per-axis `gather` / `matmul` (see the module doc)."""
    x = op.inputs[0]
    shape = ctx.shape(x)
    if shape is None:
        raise ConversionError(f"Resize '{op.name}': the input's rank must be known")
    rank = len(shape)
    a = op.attrs
    mode = choice(op, "mode", "nearest", ("nearest", "linear", "cubic"))
    coord = choice(op, "coordinate_transformation_mode", "half_pixel", COORDS)
    nearest_mode = choice(op, "nearest_mode", "round_prefer_floor", NEAREST_MODES)
    policy = choice(op, "keep_aspect_ratio_policy", "stretch",
                    ("stretch", "not_larger", "not_smaller"))
    antialias = bool(a.get("antialias", 0))
    if antialias and mode == "nearest":
        raise ConversionError(f"Resize '{op.name}': antialias applies to linear and cubic, "
                              f"not nearest")
    axes = a.get("axes")
    axes = list(range(rank)) if axes is None else [check_axis(op, d, rank, "axes")
                                                   for d in axes]
    if len(set(axes)) != len(axes):
        raise ConversionError(f"Resize '{op.name}': repeated axis in axes {a.get('axes')}")
    given = sizes if sizes is not None else scales
    if given is None or len(given) != len(axes):
        raise ConversionError(f"Resize '{op.name}': give scales or sizes with one value per "
                              f"resized axis ({len(axes)})")
    if any(shape[d] is None for d in axes):
        raise ConversionError(f"Resize '{op.name}': the sizes of the resized axes must be known "
                              f"(give --input-shape)")
    in_sizes = [int(shape[d]) for d in axes]
    if sizes is not None:
        if any(int(s) < 1 for s in sizes):
            raise ConversionError(f"Resize '{op.name}': sizes {sizes} must be positive")
        factors = [int(s) / i for s, i in zip(sizes, in_sizes)]
        out_sizes = [int(s) for s in sizes]
        if policy != "stretch":
            common = min(factors) if policy == "not_larger" else max(factors)
            factors = [common] * len(axes)
            out_sizes = [int(common * i + 0.5) for i in in_sizes]  # round half up
    else:
        if not all(np.isfinite(s) and s > 0 for s in scales):
            raise ConversionError(f"Resize '{op.name}': scales {scales} must be positive")
        factors = [float(s) for s in scales]
        out_sizes = [int(f * i) for f, i in zip(factors, in_sizes)]
        if min(out_sizes) < 1:
            raise ConversionError(f"Resize '{op.name}': scales {scales} give an empty output")
    if roi is not None and coord == "tf_crop_and_resize":
        if len(roi) not in (2 * len(axes), 2 * rank):
            raise ConversionError(f"Resize '{op.name}': roi {roi} needs 2 values per resized "
                                  f"axis")
        if len(roi) == 2 * rank and len(axes) != rank:
            roi = [roi[d] for d in axes] + [roi[rank + d] for d in axes]
        k = len(axes)
        rois = [(float(roi[i]), float(roi[k + i])) for i in range(k)]
    elif coord == "tf_crop_and_resize":
        raise ConversionError(f"Resize '{op.name}': tf_crop_and_resize needs the roi input")
    else:
        rois = [(0.0, 1.0)] * len(axes)
    dtype = ctx.dtype(x) or "float32"
    if mode != "nearest" and not dtype.startswith("float"):
        raise ConversionError(f"Resize '{op.name}': {mode} resize of {dtype} data is not "
                              f"supported (float only)")
    a_coeff = float(a.get("cubic_coeff_a", -0.75))
    coeffs = {"nearest": _nearest(nearest_mode),
              "linear": _linear_antialias if antialias else _linear,
              "cubic": (_cubic_antialias if antialias else _cubic)(a_coeff)}[mode]
    extrapolation = float(a.get("extrapolation_value", 0.0))
    value, current = x, list(shape)
    steps = [(d, i, o, f, r) for d, i, o, f, r in zip(axes, in_sizes, out_sizes, factors, rois)
             if not (math.isclose(f, 1.0) and o == i and math.isclose(r[0], 0.0)
                     and math.isclose(r[1], 1.0))]  # the spec skips identity axes
    for n, (axis, in_size, out_size, factor, axis_roi) in enumerate(steps):
        if in_size * out_size > MAX_WEIGHTS:
            raise ConversionError(f"Resize '{op.name}': axis {axis} from {in_size} to "
                                  f"{out_size} would take a {in_size}x{out_size} weight matrix")
        weights, outside = axis_weights(in_size, out_size, factor, coeffs, coord, axis_roi,
                                        bool(a.get("exclude_outside", 0)))
        current[axis] = out_size
        last = n == len(steps) - 1
        value = _apply_axis(ctx, value, axis, rank, weights, mode, dtype, tuple(current),
                            outputs=op.outputs if last and outside is None else None)
        if outside is not None and outside.any():
            mask = outside.reshape([out_size if d == axis else 1 for d in range(rank)])
            value = ctx.emit("where", [ctx.constant(mask, "outside"),
                                       ctx.constant(np.array(extrapolation, dtype),
                                                    "extrapolation"), value],
                             outputs=op.outputs if last else None, dtype=dtype,
                             shape=tuple(current), hint="extrapolated")
        elif outside is not None and last:
            ctx.emit("identity", [value], outputs=op.outputs)
    if not steps:
        ctx.emit("identity", [x], outputs=op.outputs)


def _apply_axis(ctx, value, axis, rank, weights, mode, dtype, shape, outputs):
    """`value` resized along `axis` by `weights` [out, in]."""
    kwargs = {"outputs": outputs} if outputs else {"dtype": dtype, "shape": shape,
                                                   "hint": f"resized_{axis}"}
    if mode == "nearest":  # one 1 per row: a gather, exact for every value (inf, NaN too)
        index = ctx.constant(weights.argmax(axis=1).astype(np.int64), "nearest_index")
        return ctx.emit("gather", [value, index], {"axis": axis}, **kwargs)
    if axis == rank - 1:
        return ctx.emit("matmul", [value, ctx.constant(weights.T.astype(dtype), "weights")],
                        **kwargs)
    if axis == rank - 2:
        return ctx.emit("matmul", [ctx.constant(weights.astype(dtype), "weights"), value],
                        **kwargs)
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved_shape = tuple(shape[d] for d in perm)
    moved = ctx.emit("transpose", [value], {"perm": perm}, dtype=dtype,
                     shape=tuple(moved_shape[:-1]) + (weights.shape[1],), hint="axis_last")
    product = ctx.emit("matmul", [moved, ctx.constant(weights.T.astype(dtype), "weights")],
                       dtype=dtype, shape=moved_shape, hint="resized")
    return ctx.emit("transpose", [product], {"perm": [int(i) for i in np.argsort(perm)]},
                    **kwargs)
