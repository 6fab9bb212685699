"""Keras recurrent layers recognised in their TensorFlow While loops, so that
they convert to one IR `lstm`/`gru`/`rnn` (nn.LSTM, nn.GRU... in the output)
instead of a loop or a copy of the cell per step.

A loop is taken for a recurrent layer only when
  * its body reads step `t` of one TensorList (the input sequence), carries
    float states, writes one TensorList, and counts `t` up from 0 to the
    list's length (its condition, evaluated at read time, says so; over a
    run-time length, sequence.py proves it from the condition's form);
  * its weights are a kernel used as `x_t @ kernel` [in, G*H], a recurrent
    kernel [H, G*H] and at most one bias: an LSTM (G = 4, 2 states), GRU
    (3) or SimpleRNN (1);
  * and, decisively, the body *computes* that cell: its new states and the
    step it writes out, evaluated in numpy on random inputs with the layer's
    own weights, equal one step of the IR op (x2/ir/rnn_kernels.py) to 1e-6.
So a masked layer, a custom cell or any other loop is never mistaken for
one; those are left to the generic loop handling (loops.py).

The body is read as expression trees over its arguments; `_evaluate`
covers the ops Keras cells are written with, and a tree with any other op
simply does not match."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Callable

import numpy as np

from ...ir import TensorInfo
from ...ir.kernels import strided_slice
from ...ir.rnn_kernels import recurrent as recurrent_kernel

# The synthetic source op a recognised layer becomes (mapped by mappers/tf/rnn.py);
# the direct reader refuses a model node of an "x2." type.
RECURRENT_OP = "x2.KerasRecurrent"
# Bodies larger than this are not Keras cells (an LSTM body has about 40 nodes);
# the bound also keeps the trees' recursive construction shallow.
MAX_BODY_NODES = 200

_COMMUTATIVE = {"AddV2", "Mul"}
_PASS = {"Identity", "ReadVariableOp", "Snapshot"}
_KEEP_ATTRS = {"transpose_a", "transpose_b", "begin_mask", "end_mask", "ellipsis_mask",
               "new_axis_mask", "shrink_axis_mask", "squeeze_dims", "axis", "num",
               "num_split", "DstT"}


@dataclass
class Protos:
    """tf_direct's readers of TensorProto and AttrValue (passed in: tf_direct imports us)."""
    tensor_value: Callable
    attr_value: Callable


class Trees:
    """Each value of a function body as a hash-consed node: ("arg", i),
    ("const", key) or (op, attrs, *child ids); `of`/`ret` give node ids, so
    shared subexpressions cost nothing however the body nests them."""

    def __init__(self, fdef, protos: Protos):
        self.fdef, self.protos = fdef, protos
        self.nodes = {n.name: n for n in fdef.node_def}
        self.args = {a.name: i for i, a in enumerate(fdef.signature.input_arg)}
        self.table: list[tuple] = []
        self.ids: dict[tuple, int] = {}
        self.consts: dict[int, np.ndarray] = {}
        self.memo: dict[str, int] = {}

    def node(self, tree_id: int) -> tuple:
        return self.table[tree_id]

    def intern(self, tree: tuple) -> int:
        if tree not in self.ids:
            self.ids[tree] = len(self.table)
            self.table.append(tree)
        return self.ids[tree]

    def ret(self, index: int) -> int:
        return self.of(self.fdef.ret[self.fdef.signature.output_arg[index].name])

    def of(self, ref: str) -> int:
        if ref not in self.memo:
            self.memo[ref] = self.intern(self._build(ref))
        return self.memo[ref]

    def _build(self, ref: str) -> tuple:
        if ":" not in ref:
            return ("arg", self.args[ref]) if ref in self.args else ("?", ref)
        name, _, index = ref.split(":")
        node = self.nodes.get(name)
        if node is None:
            return ("?", ref)
        inputs = [i for i in node.input if not i.startswith("^")]
        if node.op in _PASS and inputs:
            return self.table[self.of(inputs[0])]
        if node.op == "Const":
            value = self.protos.tensor_value(node.attr["value"].tensor)
            tree = ("const", str(value.dtype), value.shape, value.tobytes())
            self.consts[self.intern(tree)] = value
            return tree
        attrs = tuple(sorted((k, _hashable(self.protos.attr_value(v)))
                             for k, v in node.attr.items() if k in _KEEP_ATTRS))
        if node.op in ("Split", "Unpack"):
            attrs += (("output", int(index)),)
        return ("AddV2" if node.op == "Add" else node.op, attrs,
                *(self.of(i) for i in inputs))

    def walk(self, root: int):
        """The ids reachable from `root`, each once."""
        seen, stack = set(), [root]
        while stack:
            tree_id = stack.pop()
            if tree_id in seen:
                continue
            seen.add(tree_id)
            yield tree_id
            tree = self.table[tree_id]
            if tree[0] not in ("arg", "const", "?"):
                stack.extend(tree[2:])


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


_BINARY = {"AddV2": np.add, "Sub": np.subtract, "Mul": np.multiply, "RealDiv": np.divide,
           "Maximum": np.maximum, "Minimum": np.minimum, "BiasAdd": np.add}
_UNARY = {"Sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "Tanh": np.tanh,
          "Relu": lambda x: np.maximum(x, 0.0), "Neg": np.negative, "Exp": np.exp}


def _evaluate(trees: Trees, tree_id: int, values: dict, memo: dict):
    """The numpy value of a tree; None when it uses an op outside the cell vocabulary."""
    if tree_id in memo:
        return memo[tree_id]
    stack = [tree_id]
    while stack:   # children first, without recursion (bodies may nest deeply)
        current = stack[-1]
        tree = trees.node(current)
        kind = tree[0]
        if kind == "const":
            memo[current] = trees.consts[current]
        elif kind in ("arg", "TensorListGetItem", "?"):
            memo[current] = values.get(current)
        else:
            pending = [c for c in tree[2:] if c not in memo]
            if pending:
                stack.extend(pending)
                continue
            args = [memo[c] for c in tree[2:]]
            memo[current] = None if any(a is None for a in args) else \
                _apply(kind, dict(tree[1]), args)
        stack.pop()
    return memo[tree_id]


def _apply(op: str, attrs: dict, args: list):
    if op in _BINARY:
        return _BINARY[op](args[0], args[1])
    if op in _UNARY:
        return _UNARY[op](args[0])
    if op == "MatMul":
        a = args[0].T if attrs.get("transpose_a") else args[0]
        b = args[1].T if attrs.get("transpose_b") else args[1]
        return a @ b
    if op == "Split":
        return np.split(args[1], attrs["num_split"], axis=int(args[0]))[attrs["output"]]
    if op == "Unpack":
        return np.take(args[0], attrs["output"], axis=attrs.get("axis", 0))
    if op == "Squeeze":
        dims = attrs.get("squeeze_dims") or None
        return np.squeeze(args[0], axis=None if dims is None else tuple(dims))
    if op == "StridedSlice":
        a = {k: attrs.get(k, 0) for k in ("begin_mask", "end_mask", "ellipsis_mask",
                                          "new_axis_mask", "shrink_axis_mask")}
        a.update(begin=args[1].tolist(), end=args[2].tolist(), strides=args[3].tolist())
        return strided_slice([args[0]], a)[0]
    if op == "ConcatV2":
        return np.concatenate(args[:-1], axis=int(args[-1]))
    return None


@dataclass
class Match:
    kind: str              # lstm | gru | rnn
    attrs: dict            # the IR op's attributes (hidden_size, linear_before_reset, ...)
    weights: tuple         # W [1, G*H, I], R [1, G*H, H], B [1, 2*G*H] in ONNX gate order
    states: list           # loop-argument index of h (and c)
    counters: list         # loop-argument indices that count iterations
    in_list: int
    out_list: int
    out_index: int | None  # the list element every step overwrites; None: step t writes t


def match(trees: Trees, inputs: list, weight_of: Callable, is_list: Callable) -> Match | None:
    """The recurrent layer a While body computes, or None."""
    n = len(inputs)
    node = trees.node
    rets = [trees.ret(i) for i in range(n)]
    arg = {i: trees.intern(("arg", i)) for i in range(n)}
    invariant = [i for i in range(n) if rets[i] == arg[i]]
    counters = [i for i in range(n) if _counts(trees, rets[i], arg[i])]
    writes = [i for i in range(n) if node(rets[i])[0] == "TensorListSetItem"
              and node(rets[i])[2] == arg[i]]
    reachable = {t for r in rets for t in trees.walk(r)}
    reads = [t for t in reachable if node(t)[0] == "TensorListGetItem"]
    if len(writes) != 1 or len(reads) != 1:
        return None
    x_tree = reads[0]
    in_list, time = node(node(x_tree)[2]), node(node(x_tree)[3])
    if in_list[0] != "arg" or time[0] != "arg" or in_list[1] not in invariant or \
            time[1] not in counters or not is_list(inputs[in_list[1]]):
        return None
    out_list = writes[0]
    states = [i for i in range(n) if i not in invariant and i not in counters and i != out_list]
    weights = {i: weight_of(inputs[i]) for i in invariant if i != in_list[1]}
    weights = {i: w for i, w in weights.items() if w is not None}
    arg_index = {v: i for i, v in arg.items()}
    kernels = {arg_index[node(t)[3]] for t in reachable if node(t)[0] == "MatMul"
               and node(t)[2] == x_tree and node(t)[3] in arg_index
               and not dict(node(t)[1]).get("transpose_b")}
    if len(kernels) != 1 or next(iter(kernels)) not in weights:
        return None
    k = next(iter(kernels))
    kernel = weights[k]
    if kernel.ndim != 2 or not kernel.shape[1]:
        return None
    # The recurrent kernel [H, G*H] (used whole or in gate slices) and at most one
    # bias; a GRU's bias [2, 3H] can have the recurrent kernel's shape: try each.
    candidates = [i for i, w in weights.items() if i != k and w.ndim == 2 and w.shape[0] and
                  w.shape[1] == kernel.shape[1] and w.shape[1] // w.shape[0] in (1, 3, 4) and
                  w.shape[1] % w.shape[0] == 0]
    for r in candidates:
        found = _match_with(trees, rets, arg, node, x_tree, weights, k, r, states, counters,
                            in_list[1], out_list, time[1])
        if found is not None:
            return found
    return None


def _match_with(trees, rets, arg, node, x_tree, weights, k, r, states, counters, in_list,
                out_list, time) -> Match | None:
    kernel, rkernel = weights[k], weights[r]
    biases = [i for i in weights if i not in (k, r)]
    if len(biases) > 1:
        return None
    hidden = rkernel.shape[0]
    kind = {4: "lstm", 3: "gru", 1: "rnn"}.get(kernel.shape[1] // hidden)
    if kind is None or len(states) != (2 if kind == "lstm" else 1):
        return None
    index = node(rets[out_list])[3]
    if index == arg[time]:
        out_index = None
    elif index in trees.consts and trees.consts[index].size == 1:
        out_index = int(trees.consts[index].item())
    else:
        return None
    bias = weights[biases[0]] if biases else None
    bindings = {arg[i]: w for i, w in weights.items()}
    written = node(rets[out_list])[4]
    for order in permutations(states):   # which state is h (and which c)
        for attrs in _variants(kind, hidden):
            onnx_weights = _onnx_weights(kind, kernel, rkernel, bias, attrs)
            if onnx_weights is not None and _computes(
                    trees, [rets[s] for s in order], written, x_tree, [arg[s] for s in order],
                    kind, attrs, onnx_weights, bindings):
                return Match(kind, attrs, onnx_weights, list(order), counters, in_list,
                             out_list, out_index)
    return None


def _counts(trees: Trees, tree_id: int, arg_id: int) -> bool:
    """The tree is arg + 1."""
    tree = trees.node(tree_id)
    if tree[0] != "AddV2" or len(tree) != 4 or arg_id not in tree[2:]:
        return False
    other = tree[3] if tree[2] == arg_id else tree[2]
    value = trees.consts.get(other)
    return value is not None and value.size == 1 and value.item() == 1


def _variants(kind: str, hidden: int):
    base = {"hidden_size": int(hidden)}
    if kind == "gru":
        yield {**base, "linear_before_reset": True}
        yield {**base, "linear_before_reset": False}
    elif kind == "rnn":
        yield {**base, "activation": "tanh"}
        yield {**base, "activation": "relu"}
    else:
        yield base


# Keras gate blocks in the IR's (ONNX's) order: LSTM i,f,c,o -> i,o,f,c; GRU z,r,h as is.
_KERAS_TO_ONNX = {"lstm": (0, 3, 1, 2), "gru": (0, 1, 2), "rnn": (0,)}


def _onnx_weights(kind: str, kernel, rkernel, bias, attrs):
    order = _KERAS_TO_ONNX[kind]
    size = kernel.shape[1]

    def regate(matrix):  # [in, G*H] -> [G*H, in] in ONNX gate order
        blocks = np.split(matrix.T, len(order))
        return np.concatenate([blocks[i] for i in order])

    def regate_vector(vector):
        blocks = np.split(vector, len(order))
        return np.concatenate([blocks[i] for i in order])

    if bias is None:
        b = np.zeros(2 * size, kernel.dtype)
    elif bias.shape == (size,):
        b = np.concatenate([regate_vector(bias), np.zeros(size, bias.dtype)])
    elif bias.shape == (2, size) and kind == "gru" and attrs["linear_before_reset"]:
        b = np.concatenate([regate_vector(bias[0]), regate_vector(bias[1])])
    else:
        return None
    return (regate(kernel)[None], regate(rkernel)[None], b[None].astype(kernel.dtype))


def _computes(trees: Trees, new_states: list, written: int, x_tree: int, state_args: list,
              kind: str, attrs: dict, weights: tuple, bindings: dict) -> bool:
    """Whether the body's new states and the step it writes equal one IR step,
    on random inputs and states (batch 2, float64)."""
    rng = np.random.default_rng(0)
    hidden = attrs["hidden_size"]
    x = rng.standard_normal((2, weights[0].shape[2]))
    state_values = [rng.standard_normal((2, hidden)) for _ in state_args]
    values = {x_tree: x, **bindings, **dict(zip(state_args, state_values))}
    memo: dict = {}
    try:
        got = [_evaluate(trees, t, values, memo) for t in new_states + [written]]
    except (ValueError, IndexError, TypeError, KeyError):   # shapes that do not fit: no cell
        return False
    full = {"direction": "forward", "batch_first": False, "linear_before_reset": True,
            "activation": "tanh", **attrs}
    step = recurrent_kernel(kind)([x[None], *(w.astype(np.float64) for w in weights), None,
                                   *(v[None] for v in state_values)], full)
    want = [s[0] for s in step[1:]] + [step[1][0]]
    return all(g is not None and np.shape(g) == w.shape and
               np.allclose(g, w, rtol=1e-6, atol=1e-9) for g, w in zip(got, want))


def unstacked_source(inliner, items: tuple):
    """(tensor, axis, reversed) when `items` are one Unpack's outputs (in order
    or reversed), else None."""
    op = inliner.producer.get(items[0]) if items and isinstance(items[0], str) else None
    if op is None or op.type != "Unpack":
        return None
    outputs = list(op.outputs)
    if list(items) == outputs:
        return op.inputs[0], op.attrs.get("axis", 0), False
    if list(items) == outputs[::-1]:
        return op.inputs[0], op.attrs.get("axis", 0), True
    return None


def emit(inliner, name: str, m: Match, inputs: list, source: tuple, steps: int | None,
         dtype: str, zero_state):
    """Add the recognised layer as one op over `source` (tensor, time axis,
    reversed), `steps` long (None: a run-time length); returns its (y, states)
    value names, the time axis and whether the sequence runs in reverse."""
    tensor, axis, reverse = source
    info = inliner.info.get(tensor)
    if axis not in (0, 1) or info is None or info.shape is None or len(info.shape) != 3:
        return None
    batch = info.shape[1 - axis]
    hidden = m.attrs["hidden_size"]
    consts = [inliner.const(f"{name}/{part}", array.astype(dtype))
              for part, array in zip(("W", "R", "B"), m.weights)]
    given = [i for i, s in enumerate(m.states) if not zero_state(inputs[s])]
    attrs = {"kind": m.kind, "direction": "reverse" if reverse else "forward",
             "batch_first": axis == 1, "initial_states": given, **m.attrs}
    y_shape = (batch, steps, hidden) if axis == 1 else (steps, batch, hidden)
    infos = [TensorInfo(dtype, y_shape)] + [TensorInfo(dtype, (1, batch, hidden))] * \
        len(m.states)
    outputs = inliner.add_op(RECURRENT_OP, name, [tensor] + consts +
                             [inputs[m.states[i]] for i in given], attrs, infos)
    finals = [inliner.add_op("Squeeze", f"{name}/state_{i}", [out], {"T": dtype,
                                                                    "squeeze_dims": [0]},
                             [TensorInfo(dtype, (batch, hidden))])[0]
              for i, out in enumerate(outputs[1:])]
    return outputs[0], finals, axis, reverse
