"""Sizes as plain Python numbers in generated code.

A model with dynamic dims computes sizes at run time: `x.size(1)`, a view's
target `[batch, seq, 4, 8]`, an arange's length. In the IR they are small
integer tensors (shape, gather, concat, arithmetic); written as tensor ops
each costs a kernel call (a tensor-to-list copy for every reshape) and reads
like no code a person writes. Written here as Python instead:

    seq = input_ids.shape[1]
    y = torch.reshape(x, [batch, seq, 4, 8])

torch's eager code runs it as it reads; Paddle's dynamic-to-static
conversion (jit.save) turns each `x.shape[i]` of a dynamic dim into a
tensor it tracks, so the same code saves a model that runs at every size.

`plan(graph)` picks the values that can be written so: int
values of rank 0 or 1 computed only from shapes and integer constants,
whose every use reads a Python number or list. A value some use needs as a
tensor is left to the tensor ops, and so are the size values it is computed
from (no tensor is built back from Python numbers)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.symbols import value_dims


# (op, input position) that read a computed shape or bound as Python numbers.
_SIZE_OPERANDS = {("reshape_dynamic", 1), ("full", 0), ("range", 0), ("range", 1),
                  ("range", 2), ("slice_dynamic", 1), ("slice_dynamic", 2),
                  ("expand_dynamic", 1), ("pad_dynamic", 1), ("tile_dynamic", 1)}
# Integer arithmetic that keeps its meaning on Python ints (`div` is written
# `//`: the IR's truncating division agrees with flooring on sizes, which are
# never negative).
_ARITHMETIC = {"add": "+", "sub": "-", "mul": "*", "div": "//", "mod": "%"}
# Tensor ops whose code takes a Python int for an int64 operand, as they take
# a 0-d constant.
_TENSOR_OPERATORS = {"add", "sub", "mul", "mod"}
_INT = ("int32", "int64")


@dataclass
class HostSize:
    """A size value written as Python: `items` for a 1-D value, `scalar` for a
    0-D one; each an int or the text of an expression."""
    scalar: int | str | None = None
    items: list | None = None

    def text(self) -> str:
        if self.items is None:
            return str(self.scalar)
        return "[" + ", ".join(str(i) for i in self.items) + "]"

    def is_name(self) -> bool:
        return isinstance(self.scalar, str) and self.scalar.isidentifier()


def plan(graph) -> set[str]:
    """The values of `graph` (not its subgraphs) to write as Python numbers."""
    host = {n.outputs[0] for n in graph.nodes if _candidate(graph, n)}
    changed = True
    while changed:
        changed = False
        for node in graph.nodes:
            out = node.outputs[0] if len(node.outputs) == 1 else None
            if out in host and node.op != "shape" and not all(
                    v in host or _int_constant(graph, v) for v in node.inputs):
                host.discard(out)
                changed = True
        for value in list(host):
            if value in graph.outputs or not all(
                    _reads_python(graph, user, value, host)
                    for user in graph.users(value)):
                host.discard(value)
                changed = True
    return host


def _candidate(graph, node) -> bool:
    if len(node.outputs) != 1 or graph.dtype(node.outputs[0]) not in _INT:
        return False
    shape = graph.shape(node.outputs[0])
    if shape is None or len(shape) > 1 or (shape and shape[0] is None):
        return False
    a = node.attrs
    if node.op == "shape":
        return graph.shape(node.inputs[0]) is not None
    if node.op == "gather":
        return a["axis"] == 0 and _int_constant(graph, node.inputs[1])
    if node.op == "slice":
        return list(a["axes"]) == [0]
    if node.op == "unsqueeze":
        return list(a["axes"]) == [0] and len(shape) == 1
    if node.op == "squeeze":
        return not shape
    if node.op == "concat":
        return a["axis"] == 0
    if node.op in ("cast", "identity"):
        return True
    if node.op in _ARITHMETIC or node.op == "neg":
        return not shape
    return False


def _int_constant(graph, value: str) -> bool:
    array = graph.constants.get(value)
    return array is not None and array.ndim <= 1 and array.dtype.kind in "iu"


def _reads_python(graph, user, value, host) -> bool:
    if len(user.outputs) == 1 and user.outputs[0] in host:
        return True
    positions = {i for i, v in enumerate(user.inputs) if v == value}
    if all((user.op, i) in _SIZE_OPERANDS for i in positions):
        return True
    # `x % seq`: the other operand is an int64 tensor, so a Python int keeps its dtype.
    if user.op in _TENSOR_OPERATORS and positions == {1} and not graph.shape(value):
        other = user.inputs[0]
        return other not in host and graph.dtype(other) == graph.dtype(user.outputs[0]) == "int64"
    return False


def size_of(graph, node, written: dict, x: str) -> HostSize:
    """What host node `node` computes, from the HostSizes `written` of its
    inputs; `x`: the text of its first input (the tensor a `shape` reads)."""
    if node.op == "shape":
        return HostSize(items=[d if isinstance(d, int) else f"{x}.shape[{i}]"
                               for i, d in enumerate(graph.shape(node.inputs[0]))])
    a = node.attrs
    inputs = [written[v] if v in written else _constant(graph, v) for v in node.inputs]
    if node.op == "gather":
        index = graph.constants[node.inputs[1]]
        picked = [inputs[0].items[int(i)] for i in index.reshape(-1)]
        return HostSize(scalar=picked[0]) if index.ndim == 0 else HostSize(items=picked)
    if node.op == "slice":
        step = a["steps"][0] if a["steps"] else 1
        return HostSize(items=inputs[0].items[slice(a["starts"][0], a["ends"][0], step)])
    if node.op == "unsqueeze":
        return HostSize(items=[inputs[0].scalar])
    if node.op == "squeeze":
        return HostSize(scalar=inputs[0].items[0])
    if node.op == "concat":
        return HostSize(items=[i for each in inputs for i in each.items])
    if node.op in ("cast", "identity"):
        return inputs[0]
    # Every computed scalar is a name or an int (codegen names each one), so
    # no operator needs parentheses.
    if node.op == "neg":
        return HostSize(scalar=f"-{inputs[0].scalar}")
    left, right = (i.scalar for i in inputs)
    return HostSize(scalar=f"{left} {_ARITHMETIC[node.op]} {right}")


def _constant(graph, value: str) -> HostSize:
    array = np.asarray(graph.constants[value])
    if array.ndim == 0:
        return HostSize(scalar=int(array))
    return HostSize(items=[int(v) for v in array])


def symbol_hint(graph, node) -> str | None:
    """`batch`, `seq`: the symbol the source named the input dim a size reads."""
    if node.op != "gather":
        return None
    shape_node = graph.producer(node.inputs[0])
    index = graph.constants[node.inputs[1]]
    if shape_node is None or shape_node.op != "shape" or index.ndim != 0:
        return None
    source = shape_node.inputs[0]
    if source not in graph.inputs:
        return None
    dims = value_dims(graph, source, unnamed=False) or []
    axis = int(index)
    return dims[axis] if -len(dims) <= axis < len(dims) else None
