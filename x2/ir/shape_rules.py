"""Output shapes of IR ops from their inputs' shapes, where the source's own
shape inference left them unknown.

ONNX shape inference loses the rank after a Reshape whose target is computed
(paddle2onnx's `Shape -> Cast -> Slice -> Concat` graphs), and every shape
after it. The mappers need ranks (a softmax axis, a reduction's axes), so
MapContext fills an unknown output shape from these rules. A dim the rules
cannot tell stays None; an op without a rule keeps an unknown shape.
"""
from __future__ import annotations

from .ops import OPS

Shape = tuple


def broadcast(*shapes: Shape) -> Shape:
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) == 1:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(max(dims) if dims else 1)
    return tuple(out)


def _matmul(a: Shape, b: Shape) -> Shape | None:
    if len(a) < 1 or len(b) < 1:
        return None
    if len(a) == 1 or len(b) == 1:
        return tuple(a[:-1]) if len(b) == 1 else tuple(b[:-2]) + (b[-1],)
    return broadcast(a[:-2], b[:-2]) + (a[-2], b[-1])


def _reshape(x: Shape, target: list[int]) -> Shape:
    dims = [x[i] if d == 0 and i < len(x) else (None if d == -1 else d)
            for i, d in enumerate(target)]
    if -1 in target and all(d is not None for d in x):
        rest = 1
        for d in dims:
            rest *= d if d is not None else 1
        total = 1
        for d in x:
            total *= d
        dims[target.index(-1)] = total // rest if rest else None
    return tuple(dims)


def _reduce(x: Shape, attrs: dict) -> Shape:
    axes = {a % len(x) for a in attrs.get("axes") or range(len(x))} if x else set()
    if attrs.get("keepdims"):
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def _unsqueeze(x: Shape, axes: list[int]) -> Shape:
    out = list(x)
    rank = len(x) + len(axes)
    for axis in sorted(a % rank for a in axes):
        out.insert(axis, 1)
    return tuple(out)


def _slice(x: Shape, attrs: dict) -> Shape:
    out = list(x)
    for start, end, axis, step in zip(attrs["starts"], attrs["ends"], attrs["axes"],
                                      attrs["steps"]):
        out[axis] = None if out[axis] is None else len(range(*slice(start, end, step)
                                                             .indices(out[axis])))
    return tuple(out)


def _window(size, kernel: int, stride: int, begin: int, end: int, dilation: int = 1):
    if size is None:
        return None
    return (size + begin + end - dilation * (kernel - 1) - 1) // stride + 1


def _conv(x: Shape, channels, kernel, attrs: dict) -> Shape:
    strides, dilations = attrs["strides"], attrs.get("dilations") or [1, 1]
    if attrs.get("auto_pad", "NOTSET") == "SAME_UPPER":  # SAME: ceil(size / stride)
        return (x[0], channels) + tuple(None if x[2 + i] is None else -(-x[2 + i] // strides[i])
                                        for i in range(2))
    pads = attrs["pads"]
    return (x[0], channels) + tuple(
        _window(x[2 + i], kernel[i], strides[i], pads[i], pads[i + 2], dilations[i])
        for i in range(2))


_SAME = {"softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm", "dropout",
         "cumsum", "trilu", "identity", "cast"}


def infer(op: str, shapes: list[Shape | None], attrs: dict, lengths: list[int | None]
          ) -> Shape | None:
    """The output shape of a one-output `op`, or None when unknown. `lengths`:
    the length of each 1-D input (a computed target shape), else None."""
    opdef = OPS.get(op)
    if opdef is None or not shapes:
        return None
    x = shapes[0]
    try:
        if opdef.layout == "elementwise" or op in _SAME:
            known = [s for s in shapes if s is not None]
            if op in _SAME:
                return x
            return broadcast(*known) if len(known) == len(shapes) else None
        if x is None:
            return None
        if op == "matmul" and shapes[1] is not None:
            return _matmul(x, shapes[1])
        if op == "dense" and shapes[1] is not None:
            return tuple(x[:-1]) + (shapes[1][1],)
        if op == "transpose":
            return tuple(x[p] for p in attrs["perm"])
        if op.startswith("reduce_"):
            return _reduce(x, attrs)
        if op == "reshape":
            return _reshape(x, list(attrs["shape"]))
        if op in ("reshape_dynamic", "full", "expand_dynamic") and lengths[-1] is not None:
            return (None,) * lengths[-1] if op != "expand_dynamic" or len(x) == lengths[-1] \
                else None
        if op == "expand":
            return broadcast(x, tuple(attrs["shape"]))
        if op == "shape":
            return (len(x),)
        if op == "squeeze":
            axes = {a % len(x) for a in attrs["axes"]}
            return tuple(d for i, d in enumerate(x) if i not in axes)
        if op == "unsqueeze":
            return _unsqueeze(x, list(attrs["axes"]))
        if op == "concat" and all(s is not None for s in shapes):
            axis = attrs["axis"] % len(x)
            sizes = [s[axis] for s in shapes]
            out = list(x)
            out[axis] = None if None in sizes else sum(sizes)
            return tuple(out)
        if op == "gather" and shapes[1] is not None:
            axis = attrs["axis"] % len(x)
            return tuple(x[:axis]) + tuple(shapes[1]) + tuple(x[axis + 1:])
        if op == "slice":
            return _slice(x, attrs)
        if op == "conv2d" and shapes[1] is not None and attrs.get("data_format") != "NHWC":
            return _conv(x, shapes[1][0], shapes[1][2:], attrs)
        if op in ("max_pool2d", "avg_pool2d") and attrs.get("data_format") != "NHWC":
            return _conv(x, x[1], attrs["kernel"], attrs)
        if op == "repeat_interleave":
            axis = attrs["axis"] % len(x)
            return tuple(None if d is None else d * attrs["repeats"] if i == axis else d
                         for i, d in enumerate(x))
        if op == "pad":
            rank, pads = len(x), attrs["pads"]
            return tuple(None if d is None else d + pads[i] + pads[i + rank]
                         for i, d in enumerate(x))
        if op in ("pad_dynamic", "tile_dynamic"):
            return (None,) * len(x)
        if op == "upsample":
            return tuple(x[:2]) + tuple(None if d is None else d * s
                                        for d, s in zip(x[2:], attrs["scales"]))
        if op == "slice_dynamic":
            return tuple(None if i in attrs["axes"] else d for i, d in enumerate(x))
    except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError):
        return None
    return None
