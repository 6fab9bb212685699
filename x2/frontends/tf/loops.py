"""TensorFlow's functional control flow in the direct SavedModel reader
(direct.py calls in here; no TensorFlow import).

Keras writes every recurrent layer (LSTM, GRU, SimpleRNN, Bidirectional)
as a `While` loop over TensorLists: the time steps are unstacked into a list
(TensorListFromTensor), the body reads step `t` (TensorListGetItem), runs the
cell and writes its output into another list (TensorListSetItem), which is
stacked after the loop (TensorListStack). A While is, in this order:

  * a Keras recurrent layer recognised by recurrent.py: one IR lstm/gru/rnn,
    over a static sequence length or a run-time one (sequence.py);
  * with --unroll-loops, unrolled: a `While`/`StatelessWhile` whose condition
    can be computed at read time (known.py) has its body inlined once per
    iteration, nodes named "<while node>/iter_K/<node>", the loop-carried
    values threaded through; a condition that depends on input values, or
    more than MAX_ITERATIONS iterations, is refused naming the node. A
    TensorList is then a Python `TensorList` of per-element values (static
    length, static indices once unrolled); FromTensor becomes an Unpack,
    Stack a Pack, so the IR never sees a variant tensor. A list of run-time
    length (FromTensor of a tensor whose dim 0 is unknown, Reserve of an
    unknown count) has no elements: only a recognised layer reads and writes
    it; any other use is refused, saying why its length is unknown;
  * otherwise kept as a loop (control.py): the IR's `loop`, its trip count
    decided at run time. A loop over TensorLists is refused there, naming the
    flag that unrolls it.

An `If`/`StatelessIf` whose condition is known inlines the taken branch; one
whose condition is known only at run time becomes the IR's `if` (control.py).
A `Case`/`StatelessCase` (tf.switch_case) likewise, on its branch index: nested
`if`s (index == k) with the last branch the default.

`inliner` is tf_direct's _Inliner: run(fdef, prefix, args), add_op(...),
const(name, value), known (read-time values), info, library, scratch(), child()."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...errors import ConversionError
from ...ir import TensorInfo
from .common import NeedsTensorFlow
from . import control, recurrent, sequence as tf_sequence
from .known import complete
from .protos import dtype_name

# Iterations one loop may be unrolled to, and ops the unrolled copies may add.
MAX_ITERATIONS = 4096
MAX_UNROLLED_OPS = 1 << 17

WHILE_OPS = {"While", "StatelessWhile"}
IF_OPS = {"If", "StatelessIf"}
CASE_OPS = {"Case", "StatelessCase"}
LIST_OPS = {"TensorListReserve", "TensorListFromTensor", "TensorListGetItem",
            "TensorListSetItem", "TensorListStack", "TensorListLength",
            "TensorListElementShape", "EmptyTensorList", "TensorListPushBack",
            "TensorListPopBack"}
OPS = WHILE_OPS | IF_OPS | CASE_OPS | LIST_OPS


@dataclass(frozen=True)
class TensorList:
    """A TensorList while reading: each element's value name (None: not set).
    A list of run-time length has no items and says `why` it cannot be
    followed; `tensor` (FromTensor's) or `length` (Reserve's count) is what
    proves a recognised layer's trip count, `sequence` what the layer wrote."""
    items: tuple
    dtype: str
    element_shape: tuple | None  # None: unknown rank
    origin: str                  # the node that made it, for messages
    why: str = ""                # non-empty: a run-time length (the refusal message)
    tensor: str | None = None
    length: str | None = None
    sequence: tf_sequence.Sequence | None = None


def node(inliner, node, name: str, inputs: list, attrs: dict) -> list:
    """The outputs (value names, TensorLists) of a node in OPS or one that
    takes a TensorList: a While unrolled, an If's taken branch, a list op."""
    if node.op in IF_OPS:
        return _if(inliner, node, name, inputs)
    if node.op in CASE_OPS:
        return _case(inliner, node, name, inputs)
    if node.op in WHILE_OPS:
        return _while(inliner, node, name, inputs)
    if node.op in LIST_OPS:
        return _list_op(inliner, node, name, inputs, attrs)
    if node.op in ("Identity", "IdentityN"):
        return list(inputs)
    lists = [v for v in inputs if isinstance(v, TensorList)]
    raise ConversionError(f"{node.op} node '{name}' takes a TensorList (a variant tensor, made "
                          f"by '{lists[0].origin}'); x2 follows TensorLists only through the "
                          f"TensorList ops of the loops it unrolls",
                          details={"node": name, "op": node.op})


def _function(inliner, node, name: str, attr: str):
    fdef = inliner.library.get(node.attr[attr].func.name)
    if fdef is None:
        raise NeedsTensorFlow(f"{node.op} {name}: its {attr} function is missing from the "
                              f"library")
    return fdef


def _call(inliner, fdef, prefix: str, args: list) -> list:
    names = [a.name for a in fdef.signature.input_arg]
    if len(names) != len(args):
        raise ConversionError(f"{fdef.signature.name} takes {len(names)} inputs, given "
                              f"{len(args)} (node {prefix.rstrip('/')})")
    return inliner.run(fdef, prefix, dict(zip(names, args)))


def _if(inliner, node, name: str, inputs: list) -> list:
    pred = inliner.known.get(inputs[0]) if isinstance(inputs[0], str) else None
    if not complete(pred):
        return control.structured_if(inliner, node, name, inputs, _function, _call)
    taken = bool(pred.item()) if pred.size == 1 else pred.size > 0
    branch = _function(inliner, node, name, "then_branch" if taken else "else_branch")
    return _call(inliner, branch, name + "/", inputs[1:])


def _case(inliner, node, name: str, inputs: list) -> list:
    """tf.switch_case: the branch of a known index inlined (the last branch for
    an index out of range, as TF runs it), else a Case SourceOp of all of them."""
    fdefs = []
    for k, func in enumerate(node.attr["branches"].list.func):
        fdef = inliner.library.get(func.name)
        if fdef is None:
            raise NeedsTensorFlow(f"{node.op} {name}: its branch {k} function is missing "
                                  f"from the library")
        fdefs.append(fdef)
    index = inliner.known.get(inputs[0]) if isinstance(inputs[0], str) else None
    if not complete(index) or index.size != 1:
        return control.structured_case(inliner, node, name, inputs, fdefs, _call)
    k = int(index.item())
    k = k if 0 <= k < len(fdefs) else len(fdefs) - 1
    return _call(inliner, fdefs[k], f"{name}/branch_{k}/", inputs[1:])


def _while(inliner, node, name: str, inputs: list) -> list:
    cond = _function(inliner, node, name, "cond")
    body = _function(inliner, node, name, "body")
    if len(body.signature.output_arg) != len(inputs):
        raise ConversionError(f"{node.op} node '{name}': its body returns "
                              f"{len(body.signature.output_arg)} values for {len(inputs)} "
                              f"loop variables")
    layer = _recurrent_layer(inliner, node, name, inputs, cond, body)
    if layer is not None:
        return layer
    # Neither unrolled nor kept as a loop (a loop over tensors only); the steps
    # list's message (its tensor's shape) first.
    dynamic = sorted((v for v in inputs if isinstance(v, TensorList) and v.why),
                     key=lambda v: v.tensor is None)
    if dynamic:
        raise ConversionError(dynamic[0].why, details={"node": name, "op": node.op,
                                                       "list": dynamic[0].origin})
    if not inliner.unroll_loops:
        return control.structured_while(inliner, node, name, inputs, cond, body, _call)
    state = list(inputs)
    start = len(inliner.ops)
    with inliner.in_loop():
        for k in range(MAX_ITERATIONS + 1):
            if not _condition(inliner, node, name, cond, state, k):
                inliner.unrolled_loops[name] = k
                return state
            if k == MAX_ITERATIONS:
                break
            state = _call(inliner, body, f"{name}/iter_{k}/", state)
            if len(inliner.ops) - start > MAX_UNROLLED_OPS:
                raise ConversionError(
                    f"{node.op} node '{name}' cannot be unrolled: {k + 1} iterations already "
                    f"made {len(inliner.ops) - start} nodes (more than {MAX_UNROLLED_OPS})")
    raise ConversionError(f"{node.op} node '{name}' cannot be unrolled: it runs more than "
                          f"{MAX_ITERATIONS} iterations")


def _recurrent_layer(inliner, node, name: str, inputs: list, cond, body) -> list | None:
    """The loop's new state when it is a Keras recurrent layer (recurrent.py),
    made by one layer op; None for any other loop."""
    if len(body.node_def) > recurrent.MAX_BODY_NODES:
        return None
    trees = recurrent.Trees(body, inliner.protos)
    found = recurrent.match(trees, inputs, lambda v: _array(inliner, v), _readable)
    if found is None:
        return None
    steps_in, out = inputs[found.in_list], inputs[found.out_list]
    dynamic = bool(steps_in.why)
    starts = [inliner.known.get(inputs[c]) if isinstance(inputs[c], str) else None
              for c in found.counters]
    if not all(complete(v) and v.size == 1 and int(v.item()) == 0 for v in starts):
        return None
    if dynamic:
        # Step t writes element t of a list reserved with T elements, or every
        # step overwrites one element of a list of static length.
        if (out.length is None) if found.out_index is None else bool(out.why):
            return None
        steps = None
        length = tf_sequence.trip_count(inliner, cond, trees, inputs, found.counters,
                                        steps_in.tensor, out.length)
        if length is None:
            return None
        source = tf_sequence.untransposed(inliner, steps_in.tensor)
    else:
        steps = len(steps_in.items)
        source = recurrent.unstacked_source(inliner, steps_in.items)
        if out.why or source is None or \
                not _runs_exactly(inliner, node, name, cond, inputs, found.counters, steps):
            return None
    dtype = inliner.info[inputs[found.states[0]]].dtype
    made = recurrent.emit(inliner, name, found, inputs, source, steps, dtype,
                             lambda v: _is_zeros(inliner, v))
    if made is None:
        return None
    y, finals, time_axis, reverse = made
    state = list(inputs)
    for c in found.counters:   # Less(counter, T) made their dtypes equal
        state[c] = length if dynamic else inliner.const(
            f"{name}/count_{c}", np.array(steps, dtype=starts[0].dtype))
    for s, final in zip(found.states, finals):
        state[s] = final
    items = list(out.items)
    if found.out_index is not None:
        items[found.out_index] = finals[0]
    elif dynamic:
        state[found.out_list] = replace(out, sequence=tf_sequence.Sequence(
            y, time_axis, reverse, finals[0]))
    else:
        shape = inliner.info[finals[0]].shape
        per_step = inliner.add_op("Unpack", f"{name}/steps", [y],
                                  {"T": dtype, "num": steps, "axis": time_axis},
                                  [TensorInfo(dtype, shape)] * steps)
        # Step k of the loop is time k, or time steps-1-k for go_backwards.
        items[:steps] = per_step[::-1] if reverse else per_step
    if not out.why:
        state[found.out_list] = replace(out, items=tuple(items))
    inliner.recurrent_layers[name] = found.kind
    return state


def _readable(value) -> bool:
    """A list a recognised layer can read its steps from: every element set,
    or a run-time length unstacked from a tensor."""
    if not isinstance(value, TensorList):
        return False
    if value.why:
        return value.tensor is not None
    return bool(value.items) and None not in value.items


def _array(inliner, value):
    """A loop input's array when it is a weight: a captured variable or a constant."""
    if hasattr(value, "value") and isinstance(value.value, np.ndarray):
        return value.value
    op = inliner.producer.get(value) if isinstance(value, str) else None
    return op.const_value if op is not None and op.type == "Const" else None


def _is_zeros(inliner, value) -> bool:
    """An initial state that is all zeros (the recurrent op's default)."""
    op = inliner.producer.get(value) if isinstance(value, str) else None
    if op is not None and op.type == "Const" and op.const_value is not None:
        return not op.const_value.any()
    if op is not None and op.type == "Fill":
        fill = inliner.known.get(op.inputs[1])
        fill = fill if fill is not None else _array(inliner, op.inputs[1])
        return fill is not None and fill.size == 1 and fill.item() == 0
    return False


def _runs_exactly(inliner, node, name: str, cond, inputs: list, counters: list,
                  steps: int) -> bool:
    """Whether the condition holds for `steps` iterations and then fails, with
    every counter advanced by one per iteration."""
    scratch = inliner.scratch()
    for k, expected in ((steps - 1, True), (steps, False)):
        state = list(inputs)
        for c in counters:
            dtype = inliner.known[inputs[c]].dtype
            state[c] = scratch.const(f"{name}/probe_{k}_{c}", np.array(k, dtype=dtype))
        try:
            if _condition(scratch, node, name, cond, state, k) != expected:
                return False
        except ConversionError:
            return False
    return True


def _condition(inliner, node, name: str, cond, state: list, k: int) -> bool:
    """Whether the loop runs iteration k: the cond function evaluated on the
    known values (its nodes are computed on the side, not added to the graph)."""
    scratch = inliner.scratch()
    value = _call(scratch, cond, f"{name}/iter_{k}/cond/", state)[0]
    known = scratch.known.get(value) if isinstance(value, str) else None
    if complete(known):
        return bool(known.item()) if known.size == 1 else known.size > 0
    unknown = _unknown_inputs(scratch, value, state, inliner.inputs)
    raise ConversionError(
        f"{node.op} node '{name}' cannot be unrolled: its trip count depends on input values "
        f"(the loop condition {cond.signature.name} reads {unknown}, not known at conversion "
        f"time{'' if k == 0 else f' after {k} iteration(s)'}); x2 unrolls only loops whose "
        f"trip count is static, such as Keras RNNs over a fixed sequence length",
        details={"node": name, "op": node.op, "iterations": k})


def _unknown_inputs(scratch, value: str, state: list, graph_inputs) -> str:
    """Which loop variables the condition's unknown result comes from."""
    producer = {out: op for op in scratch.ops for out in op.outputs}
    seen, stack, reached = set(), [value], []
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in producer:
            stack.extend(i for i in producer[v].inputs if isinstance(i, str))
        else:
            reached.append(v)
    names = []
    for i, binding in enumerate(state):
        if isinstance(binding, str) and binding in reached and not complete(
                scratch.known.get(binding)):
            what = f"the model input '{binding}'" if binding in graph_inputs else f"'{binding}'"
            names.append(f"loop variable {i} ({what})")
    return ", ".join(names) or "values computed at run time"


# TensorList ops --------------------------------------------------------------

def _list_op(inliner, node, name: str, inputs: list, attrs: dict) -> list:
    """The outputs of one TensorList op, on TensorList values."""
    op = node.op
    if op in ("TensorListReserve", "EmptyTensorList"):
        return [_new_list(inliner, node, name, inputs, attrs)]
    if op == "TensorListFromTensor":
        return [_from_tensor(inliner, node, name, inputs[0], attrs)]
    lst = inputs[0]
    if not isinstance(lst, TensorList):
        raise ConversionError(f"{op} node '{name}': its list does not come from a "
                              f"TensorList op x2 can follow")
    if lst.why:
        if op == "TensorListStack" and lst.sequence is not None:
            return [tf_sequence.stack(inliner, name, lst.sequence, lst.dtype)]
        raise ConversionError(lst.why, details={"node": name, "op": op, "list": lst.origin})
    if op == "TensorListGetItem":
        index = _index(inliner, node, name, inputs[1], len(lst.items))
        item = lst.items[index]
        if item is None:
            raise ConversionError(f"{op} node '{name}' reads element {index} of the list "
                                  f"made by '{lst.origin}', which was never set")
        return [item]
    if op == "TensorListSetItem":
        items = list(lst.items)
        index = _index(inliner, node, name, inputs[1], None)
        if index >= len(items):
            if not attrs.get("resize_if_index_out_of_bounds"):
                raise ConversionError(f"{op} node '{name}' writes element {index} of a list "
                                      f"of {len(items)}")
            items += [None] * (index + 1 - len(items))
        items[index] = inputs[2]
        return [replace(lst, items=tuple(items))]
    if op == "TensorListPushBack":
        return [replace(lst, items=lst.items + (inputs[1],))]
    if op == "TensorListPopBack":
        if not lst.items or lst.items[-1] is None:
            raise ConversionError(f"{op} node '{name}' pops from an empty list")
        return [replace(lst, items=lst.items[:-1]), lst.items[-1]]
    if op == "TensorListLength":
        return [inliner.const(name, np.array(len(lst.items), dtype=np.int32))]
    if op == "TensorListElementShape":
        shape = lst.element_shape
        if shape is None or any(d is None for d in shape):
            raise ConversionError(f"{op} node '{name}': the element shape {shape} is not "
                                  f"static")
        return [inliner.const(name, np.array(shape, dtype=attrs.get("shape_type", "int32")))]
    return [_stack(inliner, node, name, lst, attrs)]


def _element_dtype(node) -> str:
    return dtype_name(node.attr["element_dtype"].type)


def _shape_value(inliner, value) -> tuple | None:
    """An element_shape input as a shape tuple (-1: unknown dim, scalar -1: unknown rank)."""
    array = inliner.known.get(value) if isinstance(value, str) else None
    if not complete(array) or (array.ndim == 0 and int(array) == -1):
        return None
    return tuple(None if int(d) < 0 else int(d) for d in array.reshape(-1))


def _new_list(inliner, node, name: str, inputs: list, attrs: dict) -> TensorList:
    shape = _shape_value(inliner, inputs[0])
    if node.op == "EmptyTensorList":
        return TensorList((), _element_dtype(node), shape, name)
    count = inliner.known.get(inputs[1]) if isinstance(inputs[1], str) else None
    if complete(count) and int(count) >= 0:
        return TensorList((None,) * int(count), _element_dtype(node), shape, name)
    why = f"{node.op} node '{name}': the number of elements is not known at conversion time"
    if complete(count) or not isinstance(inputs[1], str):
        raise ConversionError(why)
    return TensorList((), _element_dtype(node), shape, name, why=why, length=inputs[1])


def _from_tensor(inliner, node, name: str, tensor, attrs: dict) -> TensorList:
    """Unstack `tensor` along axis 0: one Unpack op, one output per element.
    Keras makes the time axis first with a Transpose (and reverses it for
    go_backwards): the Unpack reads the untransposed tensor along the time
    axis instead, so the IR keeps no Transpose for it."""
    info = inliner.info.get(tensor) if isinstance(tensor, str) else None
    dtype = _element_dtype(node)
    if info is None or not info.shape or info.shape[0] is None:
        why = (f"{node.op} node '{name}': the length of the list (dim 0 of its tensor, shape "
               f"{None if info is None else info.shape}) is not known at conversion time; "
               f"over a run-time length x2 converts only the Keras recurrent layers it "
               f"recognises (LSTM, GRU, SimpleRNN, without masking) and unrolls other loops "
               f"over a static length only (a fixed sequence length in the input shape)")
        if not isinstance(tensor, str) or (info is not None and info.shape == ()):
            raise ConversionError(why, details={"node": name, "op": node.op})
        element = None if info is None or info.shape is None else tuple(info.shape[1:])
        return TensorList((), dtype, element, name, why=why, tensor=tensor)
    count, element = info.shape[0], tuple(info.shape[1:])
    if count == 0:
        return TensorList((), dtype, element, name)
    source, axis, reverse = tf_sequence.untransposed(inliner, tensor)
    items = inliner.add_op("Unpack", name, [source], {"T": dtype, "num": count, "axis": axis},
                           [TensorInfo(dtype, element)] * count)
    return TensorList(tuple(items[::-1] if reverse else items), dtype, element, name)


def _index(inliner, node, name: str, value, length) -> int:
    array = inliner.known.get(value) if isinstance(value, str) else None
    if not complete(array) or array.size != 1:
        raise ConversionError(f"{node.op} node '{name}': the element index is not known at "
                              f"conversion time")
    index = int(array.item())
    if length is not None and not -length <= index < length:
        raise ConversionError(f"{node.op} node '{name}': index {index} is outside the list "
                              f"of {length}")
    return index % length if length else index


def _stack(inliner, node, name: str, lst: TensorList, attrs: dict) -> str:
    """TensorListStack: one Pack of every element (all must be set)."""
    missing = [i for i, item in enumerate(lst.items) if item is None]
    if missing or not lst.items:
        what = f"elements {missing[:5]} were never set" if missing else "it is empty"
        raise ConversionError(f"{node.op} node '{name}' stacks the list made by "
                              f"'{lst.origin}', but {what}")
    first = inliner.info.get(lst.items[0])
    element = first.shape if first is not None and first.shape is not None \
        else lst.element_shape
    shape = None if element is None else (len(lst.items),) + tuple(element)
    return _pack(inliner, name, lst.items, 0, lst.dtype, TensorInfo(lst.dtype, shape))


def _pack(inliner, name: str, items, axis: int, dtype: str, info: TensorInfo) -> str:
    source = recurrent.unstacked_source(inliner, tuple(items))
    if source is not None and source[1] == axis:
        # Stacking what one Unpack split (a recognised layer's steps) gives its input back.
        tensor, _, reverse = source
        value = tensor if not reverse else inliner.add_op(
            "ReverseV2", name, [tensor, inliner.const(f"{name}/axis", np.array([axis], np.int32))],
            {"T": dtype, "Tidx": "int32"}, [info])[0]
        inliner.stacked[value] = (tuple(items), axis)
        return value
    value = inliner.add_op("Pack", name, list(items), {"T": dtype, "N": len(items), "axis": axis},
                           [info])[0]
    inliner.stacked[value] = (tuple(items), axis)
    return value


def stacked_view(inliner, op: str, name: str, inputs: list, attrs: dict, infos: list):
    """The outputs of a Transpose, ReverseV2 or StridedSlice of a stacked
    TensorList (Keras: back to batch-major, reversed for go_backwards, the
    last step), made from the list's elements directly; None otherwise."""
    stacked = inliner.stacked.get(inputs[0]) if inputs and isinstance(inputs[0], str) else None
    if stacked is None or op not in ("Transpose", "ReverseV2", "StridedSlice"):
        return None
    if isinstance(stacked, tf_sequence.View):   # a recognised layer's run-time-length output
        return tf_sequence.view_op(inliner, op, name, inputs, attrs, infos, stacked)
    (items, axis), dtype = stacked, infos[0].dtype
    spec = inliner.known.get(inputs[1]) if len(inputs) > 1 and isinstance(inputs[1], str) \
        else None
    if not complete(spec):
        return None
    spec = [int(v) for v in spec.reshape(-1)]
    rank = len(items[0:1]) + len(inliner.info[items[0]].shape or ()) \
        if inliner.info.get(items[0]) is not None else None
    if op == "Transpose":
        rest = [p for p in spec if p != axis]
        if rest != sorted(rest):
            return None
        return [_pack(inliner, name, items, spec.index(axis), dtype, infos[0])]
    if op == "ReverseV2":
        if rank is None or sorted({a % rank for a in spec}) != [axis]:
            return None
        return [_pack(inliner, name, items[::-1], axis, dtype, infos[0])]
    # StridedSlice picking one element along the stacked axis 0 (Keras: the last step).
    masks = [int(attrs.get(k, 0) or 0) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                                  "new_axis_mask")]
    strides = inliner.known.get(inputs[3]) if len(inputs) > 3 else None
    if axis != 0 or len(spec) != 1 or int(attrs.get("shrink_axis_mask", 0) or 0) != 1 or \
            any(masks) or not complete(strides) or strides.reshape(-1).tolist() != [1] or \
            not -len(items) <= spec[0] < len(items):
        return None
    return [items[spec[0]]]
