"""Keras recurrent layers over a run-time sequence length, for the direct
SavedModel reader (loops.py calls in here; no TensorFlow import).

With an input shape like (None, None, features) the list of time steps has
no static length, so the loop's trip count cannot be computed at read time.
A loop recurrent.py recognised is still one layer op when its structure
proves it runs exactly T times, T being dim 0 of the tensor the step list
was unstacked from (TensorListFromTensor of the time-major input):
  * its condition is a conjunction of `counter < bound` only, each counter
    starting at 0 and stepping by 1 (tf_recurrent.match checks the step),
    each bound a loop invariant that is `Shape(v)[d]` for a (v, d) whose
    size is T: dim 0 of that tensor, or the dim of a tensor it was
    transposed or reversed from (Keras: `time < T`, `loop_counter < T`);
  * the list it writes was reserved with T elements, written at step t.
The numeric check that the body computes the cell (tf_recurrent._computes)
is unchanged and still decides whether the loop is a layer at all.

After the loop, the written list is a `Sequence`: the layer op's output y.
Keras stacks it (time-major), transposes it back and reverses it
(go_backwards, Bidirectional): each of those is a `View` of y made directly,
so the IR keeps no Transpose pair; the stack's last element is the layer's
final h."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import TensorInfo
from .known import complete
from .recurrent import Trees


@dataclass(frozen=True)
class Sequence:
    """A recognised layer's per-step outputs over a run-time length: `tensor`
    has time on `axis`; list element k is time k, or T-1-k when `reverse`
    (the loop ran backwards); `last` is the last step's output (the final h)."""
    tensor: str
    axis: int
    reverse: bool
    last: str


@dataclass(frozen=True)
class View:
    """A value that is the sequence's tensor with time moved to `pos` and
    reversed along it when `reverse` (the stacked list: pos 0, list order)."""
    sequence: Sequence
    pos: int
    reverse: bool


def perm(inliner, op) -> list | None:
    value = inliner.known.get(op.inputs[1]) if len(op.inputs) > 1 else None
    return [int(p) for p in value.reshape(-1)] if complete(value) else None


def untransposed(inliner, tensor: str) -> tuple:
    """(source, axis, reversed): `tensor`'s rows along axis 0 are `source`'s
    along `axis` (in reverse order if reversed) when `tensor` is a ReverseV2
    of axis 0 and/or a Transpose that moves only that axis to the front."""
    reverse = False
    op = inliner.producer.get(tensor)
    shape = inliner.info[tensor].shape if tensor in inliner.info else None
    if op is not None and op.type == "ReverseV2" and shape:
        axes = perm(inliner, op)
        if axes is not None and sorted({a % len(shape) for a in axes}) == [0]:
            reverse, tensor = True, op.inputs[0]
            op = inliner.producer.get(tensor)
    if op is not None and op.type == "Transpose":
        order = perm(inliner, op)
        if order is not None and order[1:] == sorted(order[1:]):
            return op.inputs[0], order[0], reverse
    return tensor, 0, reverse


# The trip count, proven ---------------------------------------------------------

def _length_dims(inliner, tensor: str) -> set:
    """(value, dim) pairs whose size is dim 0 of `tensor`: back through
    ReverseV2 (same dim) and Transpose (the dim it came from)."""
    pairs, value, dim = set(), tensor, 0
    while (value, dim) not in pairs:
        pairs.add((value, dim))
        op = inliner.producer.get(value)
        order = perm(inliner, op) if op is not None and op.type == "Transpose" else None
        if op is not None and op.type == "ReverseV2":
            value = op.inputs[0]
        elif order is not None and dim < len(order):
            value, dim = op.inputs[0], order[dim]
    return pairs


def _is_length(inliner, value, pairs: set) -> bool:
    """`value` is StridedSlice(Shape(v), [d]) picking one dim, (v, d) in pairs."""
    op = inliner.producer.get(value) if isinstance(value, str) else None
    if op is None or op.type != "StridedSlice" or len(op.inputs) != 4:
        return False
    shape = inliner.producer.get(op.inputs[0])
    if shape is None or shape.type != "Shape":
        return False
    begin, strides = (inliner.known.get(op.inputs[i]) for i in (1, 3))
    masks = [int(op.attrs.get(k, 0) or 0) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                                    "new_axis_mask")]
    if any(masks) or int(op.attrs.get("shrink_axis_mask", 0) or 0) != 1 or \
            not complete(begin) or begin.size != 1 or not complete(strides) or \
            strides.reshape(-1).tolist() != [1]:
        return False
    info = inliner.info.get(shape.inputs[0])
    if info is None or info.shape is None:
        return False
    rank = len(info.shape)
    dim = int(begin.item())
    return -rank <= dim < rank and (shape.inputs[0], dim % rank) in pairs


def _conjuncts(trees: Trees, tree_id: int) -> list:
    tree = trees.node(tree_id)
    if tree[0] == "LogicalAnd":
        return [t for child in tree[2:] for t in _conjuncts(trees, child)]
    return [tree_id]


def trip_count(inliner, cond, body: Trees, inputs: list, counters: list, tensor: str,
               out_length) -> str | None:
    """The loop input that is T when the loop provably runs exactly T times
    (T: dim 0 of `tensor`) and its output list holds T elements (a Reserve's
    count `out_length`; None: a list of static length, every step writing
    one element); None when not proven."""
    if len(cond.signature.input_arg) != len(inputs) or len(cond.signature.output_arg) != 1:
        return None
    pairs = _length_dims(inliner, tensor)
    if out_length is not None and not _is_length(inliner, out_length, pairs):
        return None
    trees = Trees(cond, body.protos)
    bound = None
    for term in _conjuncts(trees, trees.ret(0)):
        tree = trees.node(term)
        if tree[0] != "Less" or len(tree) != 4:
            return None
        counter, limit = trees.node(tree[2]), trees.node(tree[3])
        if counter[0] != "arg" or counter[1] not in counters or limit[0] != "arg":
            return None
        j = limit[1]
        invariant = body.ret(j) == body.intern(("arg", j))
        if not invariant or not _is_length(inliner, inputs[j], pairs):
            return None
        bound = inputs[j]
    return bound


# The written list after the loop, and Keras's views of it ----------------------

def stack(inliner, name: str, sequence: Sequence, dtype: str) -> str:
    """TensorListStack of the layer's list: time-major, in list order."""
    return _view(inliner, name, View(sequence, 0, sequence.reverse), dtype)


def view_op(inliner, op: str, name: str, inputs: list, attrs: dict, infos: list,
            view: View):
    """A Transpose, ReverseV2 or one-step StridedSlice of a View, made from the
    sequence's tensor directly; None where it is not one of those."""
    spec = inliner.known.get(inputs[1]) if len(inputs) > 1 and isinstance(inputs[1], str) \
        else None
    if not complete(spec):
        return None
    spec = [int(v) for v in spec.reshape(-1)]
    dtype = infos[0].dtype
    if op == "Transpose":
        rest = [p for p in spec if p != view.pos]
        if len(spec) != 3 or rest != sorted(rest):
            return None
        return [_view(inliner, name, View(view.sequence, spec.index(view.pos), view.reverse),
                      dtype)]
    if op == "ReverseV2":
        if sorted({a % 3 for a in spec}) != [view.pos]:
            return None
        return [_view(inliner, name, View(view.sequence, view.pos, not view.reverse), dtype)]
    # StridedSlice of one step along axis 0: the step the loop wrote last is
    # the final h (element -1 in list order, 0 in reversed order).
    masks = [int(attrs.get(k, 0) or 0) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                                  "new_axis_mask")]
    strides = inliner.known.get(inputs[3]) if op == "StridedSlice" and len(inputs) > 3 \
        else None
    if op != "StridedSlice" or view.pos != 0 or len(spec) != 1 or any(masks) or \
            int(attrs.get("shrink_axis_mask", 0) or 0) != 1 or not complete(strides) or \
            strides.reshape(-1).tolist() != [1]:
        return None
    in_list_order = view.reverse == view.sequence.reverse
    return [view.sequence.last] if spec[0] == (-1 if in_list_order else 0) else None


def _view(inliner, name: str, view: View, dtype: str) -> str:
    """The value `view` describes: the tensor, transposed and/or reversed."""
    sequence = view.sequence
    value, shape = sequence.tensor, inliner.info[sequence.tensor].shape
    if view.pos != sequence.axis:
        order = [a for a in range(3) if a != sequence.axis]
        order.insert(view.pos, sequence.axis)
        shape = tuple(shape[a] for a in order)
        value = inliner.add_op("Transpose", f"{name}/time_{view.pos}", [
            value, inliner.const(f"{name}/perm", _ints(order))], {"T": dtype, "Tperm": "int32"},
            [TensorInfo(dtype, shape)])[0]
    if view.reverse:
        value = inliner.add_op("ReverseV2", f"{name}/reversed", [
            value, inliner.const(f"{name}/axis", _ints([view.pos]))], {"T": dtype,
                                                                       "Tidx": "int32"},
            [TensorInfo(dtype, shape)])[0]
    inliner.stacked[value] = view
    return value


def _ints(values: list) -> np.ndarray:
    return np.array(values, dtype=np.int32)
