"""Values the direct SavedModel reader knows at read time: loop counters,
loop conditions, TensorList indices and the shape arithmetic around them.

The reader emits every op as it always does (map_graph folds constants
later); alongside, it keeps the value of each small integer or bool tensor
whose inputs it knows, so loops.py can decide how often a While loop runs
and which TensorList element an op reads without running TensorFlow.

A known value is a numpy array. Shape() of a tensor whose shape is known
except for some dims (a dynamic batch) is *partial*: an object array with
None for the unknown dims. Ops that only move shape values around
(slicing, stacking, gathering) keep partial values partial; arithmetic needs
complete ones. `complete(value)` says whether a value is fully known."""
from __future__ import annotations

import numpy as np

from ...ir.ops import evaluate
from ..source_fold import evaluate_tf

# Read-time values stay small: shapes, counters, flags.
MAX_KNOWN_ELEMENTS = 4096

_BINARY = {
    "Add": np.add, "AddV2": np.add, "Sub": np.subtract, "Mul": np.multiply,
    "FloorDiv": np.floor_divide, "FloorMod": np.mod, "Maximum": np.maximum,
    "Minimum": np.minimum, "Less": np.less, "LessEqual": np.less_equal,
    "Greater": np.greater, "GreaterEqual": np.greater_equal, "Equal": np.equal,
    "NotEqual": np.not_equal, "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or,
}
_UNARY = {"Neg": np.negative, "Abs": np.abs, "LogicalNot": np.logical_not}
_REDUCE = {"Max": np.max, "Min": np.min, "Sum": np.sum, "Prod": np.prod,
           "All": np.all, "Any": np.any}
# Ops that move values without computing on them: partial values pass.
_MOVE = {"Identity", "Snapshot", "StopGradient", "StridedSlice", "Pack", "ConcatV2",
         "GatherV2", "Squeeze", "ExpandDims", "Reshape", "Cast", "Unpack"}
_SHAPE_OPS = {"Shape", "Size", "Rank"}
# Only integer and bool results are computed: counters, conditions, shapes.
_INT_BOOL = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def complete(value) -> bool:
    """Known entirely (no unknown dim of a partial shape)."""
    if value is None:
        return False
    return value.dtype != object or all(v is not None for v in value.reshape(-1))


def is_small_plain(value: np.ndarray) -> bool:
    """A constant worth remembering: small, numeric or bool."""
    return value.dtype != object and value.dtype.kind in "biuf" and \
        value.size <= MAX_KNOWN_ELEMENTS


def known_outputs(op: str, attrs: dict, arrays: list, shapes: list, dtypes: list[str]):
    """The outputs of TF op `op` when they can be computed now, else None.
    `arrays`: the known input values (None: unknown); `shapes`: the inputs'
    static shapes (None: unknown); `dtypes`: the outputs' dtypes."""
    if not dtypes or any(d not in _INT_BOOL for d in dtypes):
        return None
    if op in _SHAPE_OPS:
        results = _shape_op(op, shapes)
    elif op in _MOVE:
        data = len(arrays) if op == "Pack" else (len(arrays) - 1 if op == "ConcatV2" else 1)
        if any(a is None for a in arrays) or any(not complete(a) for a in arrays[data:]):
            return None  # partial data moves; indices, axes and shapes must be known
        results = _move(op, attrs, arrays)
    elif any(not complete(a) for a in arrays):
        return None
    elif op in _BINARY:
        results = [_BINARY[op](arrays[0], arrays[1])]
    elif op in _UNARY:
        results = [_UNARY[op](arrays[0])]
    elif op in _REDUCE:
        axes = tuple(int(a) % max(arrays[0].ndim, 1) for a in arrays[1].reshape(-1))
        results = [_REDUCE[op](arrays[0], axis=axes, keepdims=bool(attrs.get("keep_dims")))]
    elif op in ("Select", "SelectV2"):
        results = [np.where(*arrays[:3])]
    elif op == "Fill":
        results = [np.full([int(d) for d in arrays[0].reshape(-1)], arrays[1])]
    else:
        results = evaluate_tf(_Op(op, attrs), arrays)
    if results is None or len(results) != len(dtypes):
        return None
    out = []
    for value, dtype in zip(results, dtypes):
        value = np.asarray(value)
        if value.size > MAX_KNOWN_ELEMENTS:
            return None
        out.append(value.astype(dtype) if complete(value) else value)
    return out


class _Op:
    """What source_fold.evaluate_tf reads of an op."""

    def __init__(self, type_: str, attrs: dict):
        self.type, self.attrs = type_, attrs


def _shape_op(op: str, shapes: list):
    shape = shapes[0] if shapes else None
    if shape is None:
        return None
    if op == "Rank":
        return [np.array(len(shape))]
    if op == "Size":
        return None if any(d is None for d in shape) else [np.array(int(np.prod(shape)))]
    dims = np.array(list(shape), dtype=object)
    return [dims if any(d is None for d in shape) else dims.astype(np.int64)]


def _move(op: str, attrs: dict, arrays: list):
    x = arrays[0]
    if op in ("Identity", "Snapshot", "StopGradient", "Cast"):
        return [x]
    if op == "Pack":
        return [np.stack(arrays, axis=int(attrs.get("axis", 0)))]
    if op == "ConcatV2":
        return [np.concatenate(arrays[:-1], axis=int(arrays[-1]))]
    if op == "GatherV2":
        if int(attrs.get("batch_dims", 0) or 0):
            return None
        return [np.take(x, arrays[1].astype(np.int64), axis=int(arrays[2]))]
    if op == "Squeeze":
        dims = attrs.get("squeeze_dims") or [i for i, d in enumerate(x.shape) if d == 1]
        return [np.squeeze(x, axis=tuple(dims))]
    if op == "ExpandDims":
        return [np.expand_dims(x, int(arrays[1]))]
    if op == "Reshape":
        return [x.reshape([int(d) for d in arrays[1].reshape(-1)])]
    if op == "Unpack":
        return list(np.moveaxis(x, int(attrs.get("axis", 0)), 0))
    begin, end, strides = (a.astype(np.int64).reshape(-1).tolist() for a in arrays[1:4])
    masks = {k: int(attrs.get(k, 0) or 0) for k in
             ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")}
    return evaluate("strided_slice", [x], {"begin": begin, "end": end, "strides": strides,
                                           **masks})
