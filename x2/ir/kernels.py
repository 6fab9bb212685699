"""numpy reference kernels of the IR ops that take more than a line.

Each kernel is `(inputs: list[np.ndarray], attrs: dict) -> list[np.ndarray]`
and defines its op's semantics (docs/IR.md); constant folding runs them and
emitters must agree with them. The one-line kernels sit in the op table
(x2/ir/ops.py) next to their schema.
"""
from __future__ import annotations

import math

import numpy as np


def erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x


def sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


def gelu(x, approximate: bool):
    inner = (np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)) if approximate
             else erf(x / np.sqrt(2).astype(x.dtype)))
    return (0.5 * x * (1 + inner)).astype(x.dtype)


def nhwc_aware(kernel):
    """Run an NCHW kernel on data_format="NHWC" data (x2/passes/layout_modes.py)."""
    def run(xs, a):
        if a.get("data_format", "NCHW") != "NHWC":
            return kernel(xs, a)
        y = kernel([np.transpose(xs[0], (0, 3, 1, 2))] + list(xs[1:]), a)
        return [np.transpose(y[0], (0, 2, 3, 1))]
    return run


def reduce(fn):
    return lambda xs, a: [np.asarray(fn(xs[0], axis=tuple(a["axes"]), keepdims=a["keepdims"]))]


def _row_max(x, axis):
    """The max along `axis` for the shift; an empty axis has none (and no output)."""
    return x.max(axis=axis, keepdims=True) if x.shape[axis] else 0


def softmax(xs, a):
    x = xs[0]
    e = np.exp(x - _row_max(x, a["axis"]))
    return [e / e.sum(axis=a["axis"], keepdims=True)]


def log_softmax(xs, a):
    x = xs[0]
    shifted = x - _row_max(x, a["axis"])
    return [shifted - np.log(np.exp(shifted).sum(axis=a["axis"], keepdims=True))]


def pad(xs, a):
    pads = a["pads"]
    rank = len(pads) // 2
    width = [(pads[i], pads[i + rank]) for i in range(rank)]
    mode = {"constant": "constant", "reflect": "reflect", "edge": "edge"}[a.get("mode", "constant")]
    kwargs = {"constant_values": a.get("value", 0)} if mode == "constant" else {}
    return [np.pad(xs[0], width, mode=mode, **kwargs)]


def reshape_target(in_shape, shape):
    """ONNX-style: 0 copies the input dim, -1 is inferred."""
    return [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]


def strided_slice(xs, a):
    """TF StridedSlice semantics with begin/end/strides as attrs (masks as bitfields)."""
    x = xs[0]
    return [np.asarray(x[strided_slice_index(x.ndim, a)])]


def strided_slice_index(rank: int, a: dict) -> tuple:
    begin, end, strides = a["begin"], a["end"], a["strides"]
    index: list = []
    dim = 0
    for i in range(len(begin)):
        bit = 1 << i
        if a.get("ellipsis_mask", 0) & bit:
            fill = rank - (len(begin) - i - 1) - dim
            index.extend([slice(None)] * fill)
            dim += fill
            continue
        if a.get("new_axis_mask", 0) & bit:
            index.append(None)
            continue
        if a.get("shrink_axis_mask", 0) & bit:
            index.append(begin[i])
            dim += 1
            continue
        b = None if a.get("begin_mask", 0) & bit else begin[i]
        e = None if a.get("end_mask", 0) & bit else end[i]
        index.append(slice(b, e, strides[i]))
        dim += 1
    return tuple(index)


@nhwc_aware
def batch_norm(xs, a):
    x, scale, bias, mean, var = xs
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + a["epsilon"])
    return [(x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)]


def same_upper_pads(sizes, kernel, strides, dilations=(1, 1)) -> list[int]:
    """[top, left, bottom, right] of TF's SAME padding (ONNX SAME_UPPER) for an
    input of these heights and widths: ceil(size / stride) outputs, the odd
    row or column of padding at the bottom/right."""
    begin, end = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
    return begin + end


def window_pads(a: dict, sizes, kernel) -> list[int]:
    """A conv's or pool's [top, left, bottom, right] for an NCHW input of
    height and width `sizes`: its `pads`, or SAME's for these sizes."""
    if a.get("auto_pad", "NOTSET") == "SAME_UPPER":
        return same_upper_pads(sizes, kernel, a["strides"], a.get("dilations") or (1, 1))
    return list(a["pads"])


def _windows(x, kernel, strides, dilations, pads, fill):
    """(N, C, OH, OW, KH, KW) view of the padded NCHW input's sliding windows."""
    top, left, bottom, right = pads
    x = np.pad(x, [(0, 0), (0, 0), (top, bottom), (left, right)], constant_values=fill)
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    span_h, span_w = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    win = np.lib.stride_tricks.sliding_window_view(x, (span_h, span_w), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw]


@nhwc_aware
def conv2d(xs, a):
    """NCHW input, OIHW weight, pads [top, left, bottom, right]."""
    x, w = xs[0], xs[1]
    groups = a.get("groups", 1)
    pads = window_pads(a, x.shape[2:], w.shape[2:])
    win = _windows(x, w.shape[2:], a["strides"], a["dilations"], pads, 0)
    per_group = win.shape[1] // groups
    outs = []
    for g in range(groups):
        wg = w[g * (w.shape[0] // groups):(g + 1) * (w.shape[0] // groups)]
        xg = win[:, g * per_group:(g + 1) * per_group]
        outs.append(np.einsum("nchwij,ocij->nohw", xg, wg, optimize=True))
    y = np.concatenate(outs, axis=1).astype(x.dtype)
    if len(xs) > 2:
        y = y + xs[2].reshape(1, -1, 1, 1)
    return [y]


@nhwc_aware
def max_pool2d(xs, a):
    pads = window_pads(a, xs[0].shape[2:], a["kernel"])
    win = _windows(xs[0], a["kernel"], a["strides"], [1, 1], pads, -np.inf)
    return [win.max(axis=(4, 5)).astype(xs[0].dtype)]


@nhwc_aware
def avg_pool2d(xs, a):
    x = xs[0]
    pads = window_pads(a, x.shape[2:], a["kernel"])
    total = _windows(x, a["kernel"], a["strides"], [1, 1], pads, 0).sum(axis=(4, 5))
    if a.get("count_include_pad", False):
        count = a["kernel"][0] * a["kernel"][1]
    else:
        ones = np.ones((1, 1) + x.shape[2:], x.dtype)
        count = _windows(ones, a["kernel"], a["strides"], [1, 1], pads, 0).sum(axis=(4, 5))
    return [(total / count).astype(x.dtype)]


def dense(xs, a):
    y = np.matmul(xs[0], xs[1])
    return [y + xs[2] if len(xs) > 2 and xs[2] is not None else y]


def layer_norm(xs, a):
    """Normalize over axes [axis, rank); optional scale and bias inputs."""
    x = xs[0]
    axes = tuple(range(a["axis"] % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + a["epsilon"])
    if len(xs) > 1 and xs[1] is not None:
        y = y * xs[1]
    if len(xs) > 2 and xs[2] is not None:
        y = y + xs[2]
    return [y.astype(x.dtype)]


def rms_norm(xs, a):
    """x over the root of its mean square on axes [axis, rank); optional scale."""
    x = xs[0]
    axes = tuple(range(a["axis"] % x.ndim, x.ndim))
    y = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + a["epsilon"])
    if len(xs) > 1 and xs[1] is not None:
        y = y * xs[1]
    return [y.astype(x.dtype)]


def group_norm(xs, a):
    x, scale, bias = xs
    n, c = x.shape[:2]
    g = x.reshape(n, a["groups"], -1)
    mean = g.mean(axis=2, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + a["epsilon"])).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return [(y * scale.reshape(shape) + bias.reshape(shape)).astype(x.dtype)]


def slice_(xs, a):
    """ONNX Slice with constant starts/ends/axes/steps attrs (ends clamp)."""
    x = xs[0]
    index = [slice(None)] * x.ndim
    for start, end, axis, step in zip(a["starts"], a["ends"], a["axes"], a["steps"]):
        index[axis] = slice(start, end, step)
    return [x[tuple(index)]]


def range_(xs, a):
    start, limit, delta = (np.asarray(x).reshape(()) for x in xs)
    dtype = np.result_type(start, limit, delta)
    return [np.arange(start, limit, delta).astype(dtype)]


def slice_dynamic(xs, a):
    starts, ends = (np.asarray(x).astype(np.int64).reshape(-1).tolist() for x in xs[1:3])
    return slice_(xs[:1], {"starts": starts, "ends": ends, "axes": a["axes"], "steps": a["steps"]})


def expand_dynamic(xs, a):
    shape = [int(d) for d in np.asarray(xs[1]).reshape(-1)]
    return [xs[0] * np.ones(shape, dtype=xs[0].dtype)]


def _ints(value) -> list[int]:
    return [int(d) for d in np.asarray(value).reshape(-1)]


def pad_dynamic(xs, a):
    return pad(xs[:1], {"pads": _ints(xs[1]), "mode": "constant", "value": a.get("value", 0.0)})


def tile_dynamic(xs, a):
    return [np.tile(xs[0], _ints(xs[1]))]


def split(xs, a):
    bounds = np.cumsum(a["sizes"])[:-1]
    return list(np.split(xs[0], bounds, axis=a["axis"]))


def conv_transpose2d(xs, a):
    """NCHW transposed conv, weight [C_in, C_out, kH, kW] (groups=1, dilation 1); the
    full output (in-1)*stride + k is cropped by `pads` [top, left, bottom, right]."""
    x, w = xs[0], xs[1]
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    sh, sw = a["strides"]
    full = np.zeros((n, o, (h - 1) * sh + kh, (wd - 1) * sw + kw), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            full[:, :, i:i + (h - 1) * sh + 1:sh, j:j + (wd - 1) * sw + 1:sw] += np.einsum(
                "nchw,co->nohw", x.astype(np.float64), w[:, :, i, j].astype(np.float64))
    t, l, b, r = a["pads"]
    y = full[:, :, t:full.shape[2] - b, l:full.shape[3] - r]
    if len(xs) > 2 and xs[2] is not None:
        y = y + xs[2].reshape(1, -1, 1, 1)
    return [y.astype(x.dtype)]


def _resize_index(out_size, in_size, coord):
    """Source coordinates of each output pixel along one axis."""
    out = np.arange(out_size, dtype=np.float64)
    if coord == "align_corners":
        return out * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    if coord == "half_pixel":
        return np.maximum((out + 0.5) * in_size / out_size - 0.5, 0.0)
    return out * in_size / out_size  # asymmetric


def resize_taps(out_size: int, in_size: int, mode: str, coord: str):
    """What each output pixel of a resize reads along one axis: the source
    pixels below and above its source coordinate and the weight of the one
    above (nearest: the floor, twice, weight 0). Emitters that cannot use
    their framework's interpolate write the resize from these tables."""
    src = _resize_index(out_size, in_size, coord)
    low = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    if mode == "nearest":
        return low, low, np.zeros(out_size)
    return low, np.minimum(low + 1, in_size - 1), src - low


def resize(xs, a):
    """NCHW resize of H, W to `size`; mode bilinear|nearest; coord half_pixel |
    align_corners | asymmetric (nearest: asymmetric, floor of the source coordinate)."""
    x = xs[0].astype(np.float64)
    (oh, ow), (ih, iw) = a["size"], x.shape[2:]
    y0, y1, dy = resize_taps(oh, ih, a["mode"], a["coord"])
    x0, x1, dx = resize_taps(ow, iw, a["mode"], a["coord"])
    if a["mode"] == "nearest":
        return [x[:, :, y0][:, :, :, x0].astype(xs[0].dtype)]
    dy, dx = dy[:, None], dx[None, :]
    top = x[:, :, y0][:, :, :, x0] * (1 - dx) + x[:, :, y0][:, :, :, x1] * dx
    bottom = x[:, :, y1][:, :, :, x0] * (1 - dx) + x[:, :, y1][:, :, :, x1] * dx
    return [(top * (1 - dy) + bottom * dy).astype(xs[0].dtype)]


def upsample(xs, a):
    """`resize` to the input's H, W times the whole `scales`."""
    size = [d * s for d, s in zip(xs[0].shape[2:], a["scales"])]
    return resize(xs, {"size": size, "mode": a["mode"], "coord": a["coord"]})


def argmax(xs, a):
    y = np.argmax(xs[0], axis=a["axis"])
    return [np.expand_dims(y, a["axis"]) if a.get("keepdims") else y.astype(np.int64)]


def topk(xs, a):
    """The `k` largest (or smallest) along `axis`, sorted from the first; ties
    keep the lower index. NaN counts as the largest, as in torch and ONNX."""
    x, axis, k = xs[0], a["axis"], a["k"]
    k = x.shape[axis] if k == -1 else k
    largest = a.get("largest", True)
    key = -x.astype(np.float64 if x.dtype.kind == "f" else np.int64) if largest else x
    order = np.argsort(key, axis=axis, kind="stable")   # NaN last
    if largest and x.dtype.kind == "f":
        # then NaN first (the largest), each group keeping its order
        nan_last = ~np.isnan(np.take_along_axis(x, order, axis=axis))
        order = np.take_along_axis(order, np.argsort(nan_last, axis=axis, kind="stable"),
                                   axis=axis)
    indices = np.take(order, np.arange(k), axis=axis)
    return [np.take_along_axis(x, indices, axis=axis), indices.astype(np.int64)]


def cumsum(xs, a):
    x, axis = xs[0], a["axis"]
    y = np.flip(x, axis) if a.get("reverse") else x
    y = np.cumsum(y, axis=axis, dtype=x.dtype)
    if a.get("exclusive"):
        y = _shift_forward(y, axis)
    return [np.flip(y, axis) if a.get("reverse") else y]


def _shift_forward(y, axis):
    """y moved one step along `axis`, a zero in front (exclusive running sums)."""
    width = [(0, 0)] * y.ndim
    width[axis] = (1, 0)
    return np.take(np.pad(y, width), np.arange(y.shape[axis]), axis=axis)


_SCATTER_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def scatter_elements(xs, a):
    """x with updates[..i..] written at x[..indices[..i..] at `axis`..]; a
    reduction combines each with the value there (x's, or an earlier
    update's), in index order; reduction none: the last duplicate wins."""
    x, idx, updates = xs[0], xs[1].astype(np.int64), xs[2]
    axis = a["axis"] % x.ndim
    idx = np.where(idx < 0, idx + x.shape[axis], idx)
    where = list(np.indices(idx.shape, sparse=True))
    where[axis] = idx
    out = x.copy()
    if a["reduction"] == "none":
        out[tuple(where)] = updates
    else:
        _SCATTER_COMBINE[a["reduction"]].at(out, tuple(where), updates)
    return [out]


def gather_elements(xs, a):
    """take_along_axis without broadcasting: other dims of x cut to the index's."""
    x, idx = xs[0], xs[1].astype(np.int64)
    axis = a["axis"] % x.ndim
    x = x[tuple(slice(None) if d == axis else slice(0, idx.shape[d]) for d in range(x.ndim))]
    return [np.take_along_axis(x, idx, axis=axis)]


def gather_nd_index(batch_shape, index_rank: int, depth: int, column):
    """The advanced index of ONNX GatherND as a tuple: one arange per batch dim
    (shaped to broadcast against the indices), then the indices' `depth` columns.
    `column(i)` is indices[..., i]; emitters write the same index as code."""
    b = len(batch_shape)
    rest = index_rank - 1 - b  # the indices' own dims between batch and depth
    grids = tuple(np.arange(n).reshape((-1,) + (1,) * (b - 1 - j + rest))
                  for j, n in enumerate(batch_shape))
    return grids + tuple(column(i) for i in range(depth))


def gather_nd(xs, a):
    x, idx = xs[0], xs[1].astype(np.int64)
    b = a["batch_dims"]
    index = gather_nd_index(x.shape[:b], idx.ndim, idx.shape[-1], lambda i: idx[..., i])
    return [x[index]]


def attention(xs, a):
    """softmax(q @ k^T * scale + mask) @ v; `causal` hides key j from query i
    when j > i (top-left aligned, as torch's is_causal). A query that sees no
    key (every score -inf: a left-padded row under a causal mask) gives 0, as
    torch's scaled_dot_product_attention does, not softmax's NaN."""
    q, k, v = xs[:3]
    mask = xs[3] if len(xs) > 3 else None
    scale = a.get("scale")
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * np.asarray(scale, q.dtype)
    if mask is not None:
        scores = scores + mask
    if a.get("causal"):
        sq, sk = scores.shape[-2:]
        scores = np.where(np.tril(np.ones((sq, sk), bool)), scores, -np.inf)
    with np.errstate(invalid="ignore"):
        weights = softmax([scores], {"axis": -1})[0]
    sees_nothing = np.isneginf(scores.max(axis=-1, keepdims=True))
    weights = np.where(sees_nothing, np.zeros((), weights.dtype), weights)
    if len(xs) > 4 and xs[4] is not None:
        weights = weights * xs[4]
    return [np.matmul(weights, v).astype(q.dtype)]
