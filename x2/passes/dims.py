"""Reshapes to computed sizes that only restate their input's dims.

A torch export reshapes to sizes it read from shapes: transformers' Conv1D
restores `x.size()[:-1] + (nf,)` after its matmul, attention splits heads
with `view(batch, seq, heads, dim)`. Each such reshape_dynamic costs a size
computation in the written model (a list threaded through every module, a
shape tensor built per call in a static program) though the sizes are the
input's own. Here each dynamic dim is followed from the graph's inputs as a
`Dim` (the source's symbol where it named one, else the input and axis), and
a reshape_dynamic whose target is known dim by dim becomes a static reshape:
a dim equal to the input's at the same place is copied (0), one left over
is inferred (-1). A reshape that then changes nothing is removed.
"""
from __future__ import annotations

from ..ir import Graph
from ..ir.shape_rules import infer
from ..ir.symbols import value_dims
from .cleanup import remove_identities


class Dim:
    """A size known only at run time; equal Dims are equal sizes. Not
    ordered, so shape rules that compare sizes give up on it."""

    __slots__ = ("key",)

    def __init__(self, key) -> None:
        self.key = key

    def __eq__(self, other) -> bool:
        return isinstance(other, Dim) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"Dim({self.key!r})"


_INT = ("int32", "int64")
_ARITHMETIC = {"add", "mul", "sub"}


class Dims:
    """The dims of every value of a graph, as ints, Dims or None (unknown)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.of: dict[str, tuple | None] = {}
        for value in graph.inputs:
            shape, named = graph.shape(value), value_dims(graph, value, unnamed=False)
            if shape is not None:
                self.of[value] = tuple(
                    d if d is not None else Dim(named[i] if named and named[i]
                                                else (value, i)) for i, d in enumerate(shape))
        self._items: dict[str, list | None] = {}

    def dims(self, value: str) -> tuple | None:
        if value in self.of:
            return self.of[value]
        shape = self.graph.shape(value)
        return None if shape is None else tuple(shape)

    def follow(self, node) -> None:
        """Record the dims of `node`'s output from its inputs'."""
        if len(node.outputs) != 1:
            return
        shape = self.graph.shape(node.outputs[0])
        if shape is None or all(d is not None for d in shape):
            return
        dims = self._rule(node)
        if dims is not None and len(dims) == len(shape):
            # what the IR knows as a number wins; None where the two disagree
            self.of[node.outputs[0]] = tuple(
                s if s is not None else (d if isinstance(d, Dim) else None)
                for s, d in zip(shape, dims))

    def _rule(self, node) -> tuple | None:
        ins = [self.dims(v) if v else None for v in node.inputs]
        if node.op == "reshape_dynamic":
            items = self.items(node.inputs[1])
            return None if items is None else tuple(
                d if isinstance(d, Dim) or (isinstance(d, int) and d > 0) else None
                for d in items)
        if node.op == "attention" and ins[0] is not None and ins[2] is not None:
            return tuple(ins[0][:-1]) + tuple(ins[2][-1:])
        if node.op == "concat" and ins[0] is not None:
            axis = node.attrs["axis"] % len(ins[0])
            return tuple(None if i == axis else d for i, d in enumerate(ins[0]))
        try:
            return infer(node.op, ins, node.attrs, [None] * len(ins))
        except TypeError:   # a rule that compared a Dim with a number
            return None

    def items(self, value: str) -> list | None:
        """A 1-D (or 0-D) integer value as its entries (ints, Dims, None), or
        None when it is not a size computed from shapes and constants."""
        if value not in self._items:
            self._items[value] = self._compute_items(value)
        return self._items[value]

    def _compute_items(self, value: str) -> list | None:
        graph = self.graph
        shape = graph.shape(value)
        if graph.dtype(value) not in _INT or shape is None or len(shape) > 1:
            return None
        if value in graph.constants:
            return [int(v) for v in graph.constants[value].reshape(-1)]
        node = graph.producer(value)
        if node is None:
            return None
        if node.op == "shape":
            dims = self.dims(node.inputs[0])
            return None if dims is None else list(dims)
        if node.op in ("unsqueeze", "squeeze", "cast", "identity", "reshape"):
            return self.items(node.inputs[0])
        if node.op == "concat":
            parts = [self.items(v) for v in node.inputs]
            return None if any(p is None for p in parts) else [d for p in parts for d in p]
        if node.op == "gather" and node.inputs[1] in graph.constants:
            items = self.items(node.inputs[0])
            if items is None:
                return None
            indices = graph.constants[node.inputs[1]].reshape(-1)
            if any(not -len(items) <= int(i) < len(items) for i in indices):
                return None
            return [items[int(i)] for i in indices]
        if node.op == "slice" and list(node.attrs["axes"]) in ([0], [-1]):
            items = self.items(node.inputs[0])
            steps = node.attrs.get("steps") or [1]
            return None if items is None else items[
                node.attrs["starts"][0]:node.attrs["ends"][0]:steps[0]]
        if node.op in _ARITHMETIC:
            a, b = (self.items(v) for v in node.inputs)
            if a is None or b is None or len(a) != len(b):
                return None
            return [_combine(node.op, x, y) for x, y in zip(a, b)]
        return None


def _combine(op: str, a, b):
    if a is None or b is None:
        return None
    if isinstance(a, int) and isinstance(b, int):
        return {"add": a + b, "mul": a * b, "sub": a - b}[op]
    if op != "sub":   # the same sum or product whichever operand comes first
        a, b = sorted((a, b), key=repr)
    return Dim((op, a, b))


def static_reshape_target(x_dims: tuple, items: list) -> list | None:
    """The IR reshape target (0 copies the input's dim, -1 infers one) that
    `items` amount to for an input of dims `x_dims`, or None. A literal 0
    (an empty dim, or ONNX's copy already spelled out by its mapper) or a
    negative size keeps the computed reshape."""
    target = []
    for i, item in enumerate(items):
        if isinstance(item, int) and (item == 0 or item < -1):
            return None
        if isinstance(item, int):
            target.append(item)
        elif isinstance(item, Dim) and i < len(x_dims) and x_dims[i] == item:
            target.append(0)
        else:
            target.append(None)
    if target.count(None) + target.count(-1) > 1:
        return None
    return [-1 if t is None else t for t in target]


def restates_input(x_dims: tuple, target: list) -> bool:
    """A reshape to `target` gives its input back unchanged: the same rank,
    every dim copied or equal, at most one inferred (then equal by count)."""
    return len(target) == len(x_dims) and all(
        t in (0, -1) or (isinstance(d, int) and d == t) for t, d in zip(target, x_dims))


def reshapes_from_dims(graph: Graph) -> Graph:
    """reshape_dynamic whose target is the input's own dims, known dim by dim,
    becomes a static reshape, or goes where it changes nothing."""
    dims = Dims(graph)
    for node in list(graph.nodes):
        items = dims.items(node.inputs[1]) if node.op == "reshape_dynamic" else None
        if items is not None:
            _linear_on_leading_dims(graph, dims, node, items)
        x_dims = dims.dims(node.inputs[0]) if items is not None else None
        target = None if x_dims is None else static_reshape_target(x_dims, items)
        dims.follow(node)   # (a reshape_dynamic's dims as its computed target tells them)
        if target is None:
            continue
        if restates_input(x_dims, target):
            dims.of[node.outputs[0]] = x_dims
            node.op, node.attrs = "identity", {}
        else:
            node.op, node.attrs = "reshape", {"shape": target}
        node.inputs = node.inputs[:1]
    return remove_identities(graph).remove_unused()


def _linear_on_leading_dims(graph: Graph, dims: Dims, node, items: list) -> None:
    """reshape(linear(reshape(x, [-1, K])), x's leading dims + [N]) ->
    linear(x), the outer reshape then an identity (transformers' Conv1D:
    `x.view(-1, K)`, addmm, `view(size_out)`). The linear is a matmul or
    dense by a constant [K, N], a constant bias maybe added after it."""
    chain = [graph.producer(node.inputs[0])]
    if chain[0] is not None and chain[0].op == "add" and graph.is_constant(chain[0].inputs[1]):
        chain.insert(0, graph.producer(chain[0].inputs[0]))
    linear = chain[0]
    if linear is None or linear.op not in ("dense", "matmul") or \
            not graph.is_constant(linear.inputs[1]) or \
            any(len(graph.users(n.outputs[0])) != 1 for n in chain):
        return
    weight = graph.shape(linear.inputs[1])
    flat = graph.producer(linear.inputs[0])
    if flat is None or len(weight) != 2 or len(graph.users(flat.outputs[0])) != 1 or not (
            (flat.op == "reshape" and flat.attrs["shape"] == [-1, weight[0]]) or
            (flat.op == "reshape_dynamic" and dims.items(flat.inputs[1]) == [-1, weight[0]])):
        return
    x = flat.inputs[0]
    x_dims = dims.dims(x)
    if x_dims is None or x_dims[-1] != weight[0] or items != [*x_dims[:-1], weight[1]]:
        return
    linear.inputs = (x, *linear.inputs[1:])
    for step in chain:
        info = graph.info[step.outputs[0]]
        graph.info[step.outputs[0]] = type(info)(info.dtype, (*graph.shape(x)[:-1], weight[1]))
        dims.of[step.outputs[0]] = (*x_dims[:-1], weight[1])
