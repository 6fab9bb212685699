"""Constant folding of source ops, while the graph is mapped: an op that no
mapper knows, whose inputs depend on no graph input, is run once at
conversion time with the source framework's own semantics and becomes a
constant. Ops that only build constants (a window from Range, FloorMod and
Cos; index arithmetic) then never need a mapper.

map_graph (x2/frontends/common.py) decides before mapping which unmapped ops
can be folded (`constant_values`: no graph input upstream), so ops that read
the model's inputs are still reported all at once before anything is
mapped; it folds them when their turn comes, reading the constants the ops
before them produced (mapped ops on constants fold too, in MapContext.emit).

Random ops are never folded (a constant would freeze one draw), nor what
they feed; an op is run only when the source says its outputs are small, so a hostile Range or
Fill cannot make conversion allocate without bound. Each frontend supplies
`evaluate(op, arrays) -> list of arrays | None` (`arrays` lines up with
op.inputs, None for an optional input left out; None back: it cannot run the
op); an op that fails stays unsupported and is reported as such."""
from __future__ import annotations

import math
import re

import numpy as np

# Elements a folded op may read or produce (a 4096-point window is 4096).
MAX_SOURCE_FOLD_ELEMENTS = 1 << 22
# Random ops (a constant would freeze one draw) and uninitialized memory.
_NOT_FOLDED = re.compile(r"random|rand_|randn|randint|bernoulli|multinomial|normal_|uniform|"
                         r"dropout|poisson|truncatednormal|seed|empty", re.I)


# The op that reads only its input's shape (TF and ONNX spell it alike): with a
# static input shape its output is a constant whatever the input's values (it
# has a mapper, and MapContext.emit folds it).
SHAPE_OPS = {"Shape"}


def is_random(op_type: str) -> bool:
    """A random op (or one reading uninitialized memory): each run differs."""
    return bool(_NOT_FOLDED.search(op_type))


def constant_values(source) -> set[str]:
    """The values of `source` (a SourceGraph) that no graph input's values flow
    into (the shape of a statically shaped input counts as constant)."""
    known: set[str] = set()
    for op in source.ops:
        if op.const_value is not None or (not _NOT_FOLDED.search(op.type) and
                                          all(v in known for v in op.inputs if v)) or \
                (op.type in SHAPE_OPS and all(_static(source, v) for v in op.inputs if v)):
            known.update(op.outputs)
    return known - set(source.inputs)


def is_static(shape) -> bool:
    """Every dim known (a shape of None, or with None or -1 dims, is not)."""
    return shape is not None and all(isinstance(d, int) and d >= 0 for d in shape)


def _static(source, value: str) -> bool:
    info = source.info.get(value)
    return info is not None and is_static(info.shape)


def fold_op(op, arrays: list, info: dict, evaluate) -> list[np.ndarray] | None:
    """The outputs of source op `op` run on constant `arrays`, or None when it
    cannot be folded (too big, unknown size, the evaluator cannot run it)."""
    if any(a is not None and (a.size > MAX_SOURCE_FOLD_ELEMENTS or a.dtype == object)
           for a in arrays):
        return None
    for out in op.outputs:
        shape = info[out].shape if out and out in info else None
        if shape is None or not all(isinstance(d, int) for d in shape) or \
                math.prod(shape) > MAX_SOURCE_FOLD_ELEMENTS:
            return None
    try:
        results = evaluate(op, arrays)
    except Exception:  # the op cannot run here: it stays unsupported
        return None
    if results is None or len(results) < len([o for o in op.outputs if o]):
        return None
    results = [np.asarray(r) for r in results[:len(op.outputs)]]
    if any(r.size > MAX_SOURCE_FOLD_ELEMENTS or r.dtype == object for r in results):
        return None
    return results


# TensorFlow ops that build constants, as numpy computes them (the TF worker
# may not import TensorFlow: the direct SavedModel reader does without it).
def _tf_range(xs, attrs):
    start, limit, delta = (x.item() for x in xs[:3])
    dtype = attrs.get("Tidx") or np.result_type(*xs[:3])
    return [np.arange(start, limit, delta).astype(dtype)]


def _same_dtype(fn):
    return lambda xs, attrs: [np.asarray(fn(*xs)).astype(np.result_type(*xs))]


_TF_NUMPY = {
    "Range": _tf_range,
    "FloorDiv": _same_dtype(np.floor_divide),
    "FloorMod": _same_dtype(np.mod),
    "TruncateDiv": _same_dtype(lambda a, b: np.trunc(a / b) if a.dtype.kind == "f"
                               else np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))),
    "TruncateMod": _same_dtype(np.fmod),
    "Cos": _same_dtype(np.cos), "Sin": _same_dtype(np.sin), "Tan": _same_dtype(np.tan),
    "Acos": _same_dtype(np.arccos), "Asin": _same_dtype(np.arcsin),
    "Atan": _same_dtype(np.arctan), "Atan2": _same_dtype(np.arctan2),
    "Cosh": _same_dtype(np.cosh), "Sinh": _same_dtype(np.sinh),
    "Floor": _same_dtype(np.floor), "Ceil": _same_dtype(np.ceil),
    "Round": _same_dtype(np.round),  # half to even, like TF
    "Rint": _same_dtype(np.rint), "Sign": _same_dtype(np.sign),
    "Log1p": _same_dtype(np.log1p), "Expm1": _same_dtype(np.expm1),
    "IsNan": lambda xs, attrs: [np.isnan(xs[0])],
    "LinSpace": lambda xs, attrs: [np.linspace(xs[0].item(), xs[1].item(), int(xs[2]))
                                   .astype(xs[0].dtype)],
}


# The TF ops folded here (tools/gen_tf_opdefs.py lists their outputs for the
# direct reader, so it knows their dtypes).
FOLDED_TF_OPS = sorted(_TF_NUMPY)


def evaluate_tf(op, arrays: list) -> list[np.ndarray] | None:
    fn = _TF_NUMPY.get(op.type)
    return None if fn is None else fn(arrays, op.attrs)
