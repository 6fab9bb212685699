"""Constant folding, including the shape arithmetic around a dynamic batch.

A node whose inputs are all constants is evaluated with the IR's numpy
kernels. Shape(x) of a tensor whose shape is known except for some dims
becomes a *partial* value (unknown dims are None); slicing, stacking and
concatenating partial values is tracked, and a reshape_dynamic whose target
shape resolves with at most one unknown dim becomes a static reshape (-1);
a slice_dynamic or expand_dynamic with constant bounds becomes slice or expand."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ConversionError
from ..ir import Graph, TensorInfo, recipes
from ..ir.bounds import foldable
from ..ir.ops import OPS, evaluate
from ..ir.provenance import looks_up_source_table, rearranges_weight, reshapes_keras_weight
from ..ir.shape_rules import infer as infer_shape

# Ops that move shape values around without computing on them: numpy runs
# them on object arrays holding None for unknown dims.
_PARTIAL_OPS = {"strided_slice", "stack", "concat", "squeeze", "unsqueeze", "identity", "cast",
                "gather", "slice", "reshape"}
# Arithmetic on shape values: an unknown operand gives an unknown result.
_PARTIAL_ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b,
                  "mul": lambda a, b: a * b, "div": lambda a, b: a // b,
                  "mod": lambda a, b: a % b}
# Reductions of shape values (Tensordot's Prod of the free dims): any unknown
# entry in a reduced group makes that result unknown.
_PARTIAL_REDUCE = {"reduce_prod": lambda xs: int(np.prod(xs)),
                   "reduce_sum": lambda xs: int(np.sum(xs)),
                   "reduce_max": lambda xs: int(np.max(xs)),
                   "reduce_min": lambda xs: int(np.min(xs))}
def fold_constants(graph: Graph, keep_trainable: bool = False) -> Graph:
    """Evaluate every node whose inputs are constants. `keep_trainable`
    (x2 convert --for training): a node computing on a weight the source
    learns stays in the graph (a transpose of it still folds, keeping its
    origin), so the weight itself stays a trainable parameter of the output."""
    partial: dict[str, np.ndarray] = {}
    kept = []
    for node in graph.nodes:
        _refine_elementwise_shape(graph, node)
        if (keep_trainable and _computes_on_trainable(graph, node)) or \
                _looks_up_source_table(graph, node):
            kept.append(node)
            continue
        if _try_fold(graph, node, keep_trainable):
            continue
        _static_form(graph, node)
        value = _partial_value(graph, node, partial)
        if value is not None:
            if all(d is not None for d in value.reshape(-1)):
                # Fully known after all (e.g. Shape of a static tensor): a constant.
                info = graph.info.get(node.outputs[0])
                dtype = info.dtype if info is not None else "int64"
                graph.constants[node.outputs[0]] = np.array(value.tolist(), dtype=dtype)
                graph.info[node.outputs[0]] = TensorInfo(dtype, tuple(value.shape))
                continue
            partial[node.outputs[0]] = value
        elif node.op == "reshape_dynamic" and node.inputs[1] in partial:
            _resolve_reshape(graph, node, list(partial[node.inputs[1]].reshape(-1)))
        elif node.op == "reshape_dynamic" and node.inputs[1] in graph.constants:
            _check_reshape(graph, node, graph.shape(node.inputs[0]),
                           [int(d) for d in graph.constants[node.inputs[1]].reshape(-1)])
        kept.append(node)
    graph.nodes = kept
    return graph.remove_unused()


def _partial_value(graph: Graph, node, partial) -> np.ndarray | None:
    """The node's output as an object array with None for unknown entries."""
    if node.op == "shape":
        shape = graph.shape(node.inputs[0])
        return None if shape is None else np.array(list(shape), dtype=object)
    if not any(v in partial for v in node.inputs):
        return None
    values = [partial.get(v, graph.constants.get(v)) for v in node.inputs]
    if any(v is None for v in values):
        return None
    if node.op in _PARTIAL_ARITH:
        a, b = np.broadcast_arrays(*[np.asarray(v, dtype=object) for v in values])
        fn = _PARTIAL_ARITH[node.op]
        return np.array([None if x is None or y is None else int(fn(int(x), int(y)))
                         for x, y in zip(a.reshape(-1), b.reshape(-1))],
                        dtype=object).reshape(a.shape)
    if node.op in _PARTIAL_REDUCE:
        return _partial_reduce(node, np.asarray(values[0], dtype=object))
    if node.op in _PARTIAL_OPS:
        if node.op == "cast":
            return np.asarray(values[0], dtype=object)
        arrays = [np.asarray(v, dtype=object) if name in partial else v
                  for name, v in zip(node.inputs, values)]
        result = evaluate(node.op, arrays, node.attrs)
        # np.take of one index returns a bare element: keep arrays.
        return None if not result else np.asarray(result[0], dtype=object)
    return None


def _refine_elementwise_shape(graph: Graph, node) -> None:
    """Fill unknown output dims of an elementwise op from its inputs' shapes (a
    reshape resolved above knows dims the source's own inference did not)."""
    opdef = OPS.get(node.op)
    if opdef is None or opdef.layout != "elementwise" or len(node.outputs) != 1:
        return
    info = graph.info.get(node.outputs[0])
    if info is None or info.shape is None or all(d is not None for d in info.shape):
        return
    shapes = [graph.shape(v) for v in node.inputs if v]
    if any(s is None for s in shapes):
        return
    rank = len(info.shape)
    if any(len(s) > rank for s in shapes):
        return
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    refined = []
    for i, old in enumerate(info.shape):
        dims = [s[i] for s in padded]
        known = {d for d in dims if d is not None and d != 1}
        if old is not None or len(known) > 1:
            refined.append(old)
        elif known:
            refined.append(known.pop())
        else:
            refined.append(1 if all(d == 1 for d in dims) else None)
    graph.info[node.outputs[0]] = TensorInfo(info.dtype, tuple(refined))


def _partial_reduce(node, x: np.ndarray) -> np.ndarray:
    axes = sorted(a % max(x.ndim, 1) for a in node.attrs.get("axes", range(x.ndim)))
    kept = [i for i in range(x.ndim) if i not in axes]
    rows = np.transpose(x, kept + axes).reshape(
        [x.shape[i] for i in kept] + [-1]) if x.ndim else x.reshape(1)
    flat = rows.reshape(-1, rows.shape[-1]) if x.ndim else rows.reshape(1, 1)
    fn = _PARTIAL_REDUCE[node.op]
    out = np.array([None if any(v is None for v in row) else fn([int(v) for v in row])
                    for row in flat], dtype=object)
    if node.attrs.get("keepdims"):
        return out.reshape([1 if i in axes else x.shape[i] for i in range(x.ndim)])
    return out.reshape([x.shape[i] for i in kept])


def _static_form(graph: Graph, node) -> None:
    """A computed slice or expand whose bounds or target shape turned out
    constant becomes the op with them as attributes."""
    if node.op not in ("slice_dynamic", "expand_dynamic", "pad_dynamic", "tile_dynamic") or not all(
            v in graph.constants for v in node.inputs[1:]):
        return
    values = [[int(d) for d in graph.constants[v].reshape(-1)] for v in node.inputs[1:]]
    if node.op == "slice_dynamic":
        attrs = {"starts": values[0], "ends": values[1], "axes": node.attrs["axes"],
                 "steps": node.attrs["steps"]}
    elif node.op == "pad_dynamic":
        attrs = {"pads": values[0], "mode": "constant", "value": node.attrs.get("value", 0.0)}
    elif node.op == "tile_dynamic":
        attrs = {"repeats": values[0]}
    else:
        attrs = {"shape": values[0]}
    node.op = node.op.removesuffix("_dynamic")
    node.attrs = attrs
    node.inputs = node.inputs[:1]
    info = graph.info.get(node.outputs[0])
    shape = infer_shape(node.op, [graph.shape(node.inputs[0])], attrs, [None])
    if info is not None and shape is not None and (
            info.shape is None or len(info.shape) == len(shape)):
        old = info.shape or shape
        graph.info[node.outputs[0]] = TensorInfo(info.dtype, tuple(
            o if o is not None else d for o, d in zip(old, shape)))


def _resolve_reshape(graph: Graph, node, target: list) -> None:
    unknown = sum(d is None for d in target)
    if not (unknown == 0 or (unknown == 1 and -1 not in target)):
        return
    node.op = "reshape"
    node.attrs = {"shape": [-1 if d is None else int(d) for d in target]}
    node.inputs = node.inputs[:1]
    in_shape = graph.shape(node.inputs[0])
    _check_reshape(graph, node, in_shape, node.attrs["shape"])
    info = graph.info.get(node.outputs[0])
    if in_shape is None or info is None:
        return
    dims = [in_shape[i] if d == 0 else (None if d == -1 else d)
            for i, d in enumerate(node.attrs["shape"])]
    known_in = [d for d in in_shape if d is not None]
    if -1 in node.attrs["shape"] and len(known_in) == len(in_shape):
        rest = int(np.prod([d for d in dims if d is not None]))
        dims[node.attrs["shape"].index(-1)] = int(np.prod(in_shape)) // max(rest, 1)
    old = info.shape if info.shape is not None and len(info.shape) == len(dims) else dims
    graph.info[node.outputs[0]] = TensorInfo(info.dtype, tuple(
        o if o is not None else d for o, d in zip(old, dims)))


def _check_reshape(graph: Graph, node, in_shape, target: list) -> None:
    """A shape computed in the graph that cannot fit the tensor: the model
    would fail when run, so it is refused here with its node named."""
    if in_shape is None or any(d is None for d in in_shape) or (
            0 in target and graph.meta.source_framework != "onnx"):
        return  # (a 0 copies the input dim in ONNX only)
    dims = [in_shape[i] if d == 0 and i < len(in_shape) else d for i, d in enumerate(target)]
    known = math.prod(d for d in dims if d != -1)
    total = math.prod(in_shape)
    bad = dims.count(-1) > 1 or any(d < -1 for d in dims) or (
        total != known if -1 not in dims else (known == 0 and total) or total % max(known, 1))
    if bad:
        source = node.source or {}
        where = graph.meta.source_model
        raise ConversionError(
            f"{where + ': ' if where else ''}{source.get('op', node.op)} node "
            f"'{source.get('name', node.name)}': cannot reshape a tensor of shape "
            f"{list(in_shape)} ({total} elements) to the computed shape {list(target)}")


def fold_constants_for_training(graph: Graph) -> Graph:
    return fold_constants(graph, keep_trainable=True)


def _looks_up_source_table(graph: Graph, node) -> bool:
    return bool(node.inputs) and looks_up_source_table(
        node.op, graph.origin.get(node.inputs[0]), graph.meta.source_framework)


def _computes_on_trainable(graph: Graph, node) -> bool:
    """Whether folding `node` would turn a source variable (a learned weight,
    BatchNorm statistics) into a new constant."""
    origins = [graph.origin.get(v) if v in graph.constants else None for v in node.inputs]
    learned = [o for o in origins if o is not None and (o.trainable or o.param)]
    return bool(learned) and not (len(learned) == 1 and origins[0] is learned[0]
                                  and rearranges_weight(node.op, learned[0]))


def _try_fold(graph: Graph, node, keep_trainable: bool = False) -> bool:
    if not node.inputs or not all(v in graph.constants for v in node.inputs if v):
        return False
    if node.op == "shape":
        return False
    inputs = [graph.constants[v] for v in node.inputs]
    if not foldable(node.op, inputs, node.attrs):
        return False
    try:
        results = evaluate(node.op, inputs, node.attrs)
    except Exception:  # leave it to the runtime rather than guess
        return False
    if results is None:
        return False
    for name, value in zip(node.outputs, results):
        value = np.asarray(value)
        graph.constants[name] = value
        graph.info[name] = TensorInfo(str(value.dtype), tuple(value.shape))
    if node.op in ("transpose", "identity"):
        graph.derive_origin(node.outputs[0], node.inputs[0], node.attrs.get("perm"))
    elif keep_trainable and rearranges_weight(node.op, graph.origin.get(node.inputs[0])) or \
            reshapes_keras_weight(node.op, graph.origin.get(node.inputs[0]),
                                  graph.meta.source_state):
        graph.derive_origin(node.outputs[0], node.inputs[0])
    else:   # computed from Keras weights (x2/ir/recipes.py)
        recipes.note_folded(graph, node.op, node.inputs, node.outputs[0])
    return True
