"""How big a constant x2 computes at conversion time: frontends (folding as
they map) and the folding pass share one bound, measured from shapes before
anything is allocated."""
from __future__ import annotations

import math

import numpy as np

# Folding these would only copy data around at conversion time; larger
# constants stay as computed to keep memory down. The bound applies to a
# node's inputs and to what it would produce (Expand, Tile, Pad... of a
# small constant can be huge): such a node is left to run at runtime.
MAX_FOLD_ELEMENTS = 1 << 26
# Ops whose numpy kernel returns a view of its input: folded whatever the
# size, as they allocate nothing (a tied head's transposed table, over the
# bound in a large vocabulary, then stays that table, written once).
VIEWS = ("transpose", "identity")
# A static tensor bigger than this cannot be held by any runtime x2 targets:
# a model that needs one is refused instead of converted (1 TiB).
MAX_TENSOR_BYTES = 1 << 40


def _broadcast(*shapes) -> tuple:
    rank = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (rank - len(s)) + tuple(int(d) for d in s) for s in shapes]
    return tuple(max(dims) if all(d != 0 for d in dims) else 0 for dims in zip(*padded))


def output_elements(op: str, inputs: list, attrs: dict) -> int:
    """An upper bound of the elements `op` produces from constant inputs,
    from their shapes alone (before anything is allocated)."""
    shapes = [tuple(np.shape(x)) for x in inputs]
    sizes = [math.prod(s) for s in shapes]
    try:
        if op == "full":
            return math.prod(max(int(d), 0) for d in np.reshape(inputs[0], -1))
        if op == "range":
            start, limit, delta = (float(np.reshape(x, -1)[0]) for x in inputs)
            return max(math.ceil((limit - start) / delta), 0) if delta else 0
        if op == "expand_dynamic":
            return math.prod(_broadcast(shapes[0], [int(d) for d in np.reshape(inputs[1], -1)]))
        if op == "expand":
            return math.prod(_broadcast(shapes[0], attrs["shape"]))
        if op == "tile":
            reps = list(attrs["repeats"])
            shape = (1,) * (len(reps) - len(shapes[0])) + shapes[0]
            reps = [1] * (len(shape) - len(reps)) + reps
            return math.prod(d * int(r) for d, r in zip(shape, reps))
        if op == "pad":
            pads, shape = list(attrs["pads"]), shapes[0]
            rank = len(pads) // 2
            return math.prod(max(d + int(pads[i]) + int(pads[i + rank]), 0) if i < rank else d
                             for i, d in enumerate(shape))
        if op == "resize":
            return math.prod(shapes[0][:2]) * math.prod(int(d) for d in attrs["size"])
        if op in ("matmul", "dense"):
            a, b = shapes[0], shapes[1]
            if len(a) < 2 or len(b) < 2:
                return max(sizes)
            return math.prod(_broadcast(a[:-2], b[:-2])) * a[-2] * b[-1]
        if op == "gather":
            axis = attrs.get("axis", 0)
            return sizes[1] * sizes[0] // max(shapes[0][axis], 1)
        if op == "conv_transpose2d":
            n, _, h, w = shapes[0]
            _, o, kh, kw = shapes[1]
            sh, sw = attrs["strides"]
            return n * o * (h * sh + kh) * (w * sw + kw)
        if op in ("conv2d", "max_pool2d", "avg_pool2d"):
            n, c, h, w = shapes[0]
            channels = shapes[1][0] if op == "conv2d" else c
            t, left, b, r = (list(attrs.get("pads", [0, 0, 0, 0])) + [0] * 4)[:4]
            if attrs.get("auto_pad", "NOTSET") == "SAME_UPPER":  # SAME pads less than a window
                kh, kw = shapes[1][2:] if op == "conv2d" else attrs["kernel"]
                dh, dw = attrs.get("dilations") or (1, 1)
                t, left, b, r = (kh - 1) * dh + 1, (kw - 1) * dw + 1, 0, 0
            return n * channels * (h + t + b) * (w + left + r)
        if op in ("concat", "stack", "split"):
            return sum(sizes)
        if len(shapes) > 1:  # elementwise ops broadcast their inputs
            return max(math.prod(_broadcast(*shapes)), max(sizes))
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):
        return sum(sizes) + MAX_FOLD_ELEMENTS + 1  # malformed: never folded
    return max(sizes, default=0)


def foldable(op: str, inputs: list, attrs: dict) -> bool:
    """Whether evaluating `op` on these constants at conversion time stays
    within the folding bound (inputs and output). Control flow is never
    folded: how long a loop runs is not bounded by its inputs' sizes."""
    if op in ("if", "loop"):
        return False
    if op in VIEWS:
        return True
    return (sum(int(np.size(x)) for x in inputs) <= MAX_FOLD_ELEMENTS
            and output_elements(op, inputs, attrs) <= MAX_FOLD_ELEMENTS)
