"""The shared IR: a small, framework-free dataflow graph (see docs/IR.md).

A Graph holds named values. A value is produced by exactly one of: a graph
input, a constant (a numpy array), or one output of a node. Nodes are kept in
topological order; passes are plain functions Graph -> Graph that may mutate
and return the graph they were given.

The graph keeps each value's producer and consumers up to date as nodes are
added, removed and rewired, so passes ask `producer(v)` / `users(v)` instead
of rebuilding maps. That is why a node's `inputs`/`outputs` are tuples: they
are replaced by assignment (which updates the maps), never edited in place.
"""
from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .lint import lint as _lint
from .ops import OPS
from .provenance import GraphMeta, Origin
from .schema import DTYPES

__all__ = ["DTYPES", "Graph", "GraphMeta", "Node", "Origin", "Shape", "TensorInfo"]

# A dimension is an int, or None when unknown at conversion time (e.g. batch).
Shape = tuple  # tuple[int | None, ...]


@dataclass
class TensorInfo:
    dtype: str
    shape: Shape | None  # None: rank unknown

    def to_json(self) -> dict:
        return {"dtype": self.dtype, "shape": None if self.shape is None else list(self.shape)}

    @staticmethod
    def from_json(d: dict) -> "TensorInfo":
        return TensorInfo(d["dtype"], None if d["shape"] is None else tuple(d["shape"]))


class Node:
    """One op application. Equality is identity (a node is a place in a graph)."""

    __slots__ = ("op", "attrs", "name", "source", "_inputs", "_outputs", "_graph")

    def __init__(self, op: str, inputs: Iterable[str] = (), outputs: Iterable[str] = (),
                 attrs: dict[str, Any] | None = None, name: str = "",
                 source: dict[str, str] | None = None):
        self.op = op
        self.attrs = dict(attrs or {})
        self.name = name
        # Where the node came from: {"op": source op type, "name": source node name,
        # "mapper": mapper function}. Kept through passes for diagnostics.
        self.source = dict(source or {})
        self._inputs = tuple(inputs)
        self._outputs = tuple(outputs)
        self._graph = None  # weakref to the owning Graph: no reference cycle

    @property
    def graph(self) -> "Graph | None":
        return None if self._graph is None else self._graph()

    @property
    def inputs(self) -> tuple[str, ...]:
        return self._inputs

    @inputs.setter
    def inputs(self, values: Iterable[str]) -> None:
        self._relink("_inputs", values)

    @property
    def outputs(self) -> tuple[str, ...]:
        return self._outputs

    @outputs.setter
    def outputs(self, values: Iterable[str]) -> None:
        self._relink("_outputs", values)

    def _relink(self, slot: str, values: Iterable[str]) -> None:
        """Replace the inputs or outputs, keeping the graph's producer/users maps right."""
        graph = self.graph
        if graph is not None:
            graph._unlink(self, slot)
        setattr(self, slot, tuple(values))
        if graph is not None:
            graph._link(self, slot)

    def to_json(self) -> dict:
        return {"op": self.op, "name": self.name, "inputs": list(self.inputs),
                "outputs": list(self.outputs), "attrs": self.attrs, "source": self.source}

    @staticmethod
    def from_json(d: dict) -> "Node":
        return Node(d["op"], d["inputs"], d["outputs"], d["attrs"], d.get("name", ""),
                    d.get("source", {}))

    def __repr__(self) -> str:
        return f"Node({self.op!r}, {list(self.inputs)}, {list(self.outputs)}, name={self.name!r})"


class Graph:
    def __init__(self) -> None:
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.constants: dict[str, np.ndarray] = {}
        self.info: dict[str, TensorInfo] = {}
        self.meta = GraphMeta()
        # value -> what it is in the source model (x2/ir/provenance.py)
        self.origin: dict[str, Origin] = {}
        self._names = itertools.count()
        self._nodes: list[Node] = []
        self._removed = False  # removed nodes still sit in _nodes until `nodes` is read
        self._producer: dict[str, Node] = {}
        self._users: dict[str, dict[Node, None]] = {}  # an ordered set per value
        self._self_ref = weakref.ref(self)

    # -- the node list ----------------------------------------------------
    @property
    def nodes(self) -> list[Node]:
        """The nodes in order. Read it, or assign a new list (to filter or
        reorder); add and remove nodes with add_node / remove_node."""
        if self._removed:
            self._nodes = [n for n in self._nodes if n._graph is self._self_ref]
            self._removed = False
        return self._nodes

    @nodes.setter
    def nodes(self, nodes: Iterable[Node]) -> None:
        nodes = list(nodes)
        kept = set(nodes)
        for node in self._nodes:
            if node not in kept and node._graph is self._self_ref:
                self._detach(node)
        for node in nodes:
            if node._graph is not self._self_ref:
                self._attach(node)
        self._nodes, self._removed = nodes, False

    def _attach(self, node: Node) -> None:
        if node.graph is not None:
            raise ValueError(f"node {node.name!r} already belongs to a graph")
        opdef = OPS.get(node.op)
        if opdef is not None:
            opdef.with_defaults(node.attrs)
        node._graph = self._self_ref
        self._link(node, "_inputs")
        self._link(node, "_outputs")

    def _detach(self, node: Node) -> None:
        self._unlink(node, "_inputs")
        self._unlink(node, "_outputs")
        node._graph = None
        self._removed = True

    def _link(self, node: Node, slot: str) -> None:
        if slot == "_inputs":
            for value in node._inputs:
                if value:
                    self._users.setdefault(value, {})[node] = None
        else:
            for value in node._outputs:
                self._producer[value] = node

    def _unlink(self, node: Node, slot: str) -> None:
        if slot == "_inputs":
            for value in node._inputs:
                users = self._users.get(value)
                if users is not None:
                    users.pop(node, None)
                    if not users:
                        del self._users[value]
        else:
            for value in node._outputs:
                if self._producer.get(value) is node:
                    del self._producer[value]

    # -- construction -----------------------------------------------------
    def fresh_name(self, hint: str) -> str:
        while True:
            name = f"{hint}__{next(self._names)}"
            if name not in self.info and name not in self.constants:
                return name

    def add_input(self, name: str, dtype: str, shape: Shape | None) -> str:
        self.inputs.append(name)
        self.info[name] = TensorInfo(dtype, shape)
        return name

    def add_constant(self, name: str, array: np.ndarray) -> str:
        array = np.asarray(array)
        if name in self.constants or name in self.info:
            name = self.fresh_name(name)
        self.constants[name] = array
        self.info[name] = TensorInfo(str(array.dtype), tuple(array.shape))
        return name

    def add_node(self, op: str, inputs: Iterable[str], *, attrs: dict | None = None,
                 name: str = "", n_outputs: int = 1, outputs: Iterable[str] | None = None,
                 source: dict | None = None, position: int | None = None) -> Node:
        """Append a node (or insert it at `position`); the op's schema fills in
        the attributes left out that have a default."""
        name = name or self.fresh_name(op)
        if outputs is None:
            outputs = [name if n_outputs == 1 else f"{name}:{i}" for i in range(n_outputs)]
        node = Node(op, inputs, outputs, attrs, name, source)
        self._attach(node)
        if position is None:
            self._nodes.append(node)
        else:
            self.nodes.insert(position, node)
        return node

    def remove_node(self, node: Node) -> None:
        """Take `node` out of the graph; O(1), the node list is compacted lazily."""
        if node._graph is not self._self_ref:
            raise ValueError(f"node {node.name!r} is not in this graph")
        self._detach(node)

    def derive_origin(self, value: str, source: str, perm=None) -> None:
        """`value` equals `source` (transposed by `perm`): it has the same origin."""
        origin = self.origin.get(source)
        if origin is not None and origin.recipe is not None and perm is not None:
            # (x2/ir/recipes.py: the recipe's result in the source's shape, transposed)
            shape = self.constants[source].shape if source in self.constants else None
            if shape is not None:
                self.origin[value] = Origin(value, recipe=["t", list(perm), list(shape),
                                                           origin.recipe])
        elif origin is not None:
            self.origin[value] = origin if perm is None else origin.permuted(perm)

    def forget(self, value: str) -> None:
        """Drop what the graph knows about a value nothing defines any more."""
        self.info.pop(value, None)
        self.origin.pop(value, None)

    # -- queries ----------------------------------------------------------
    def producer(self, value: str) -> Node | None:
        """The node that outputs `value` (None for inputs, constants, unknown names)."""
        return self._producer.get(value)

    def users(self, value: str) -> list[Node]:
        """The nodes that read `value`, each once, in the order they started to."""
        return list(self._users.get(value, ()))

    def is_constant(self, value: str) -> bool:
        return value in self.constants

    def shape(self, value: str) -> Shape | None:
        info = self.info.get(value)
        return None if info is None else info.shape

    def dtype(self, value: str) -> str | None:
        info = self.info.get(value)
        return None if info is None else info.dtype

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.op] = counts.get(node.op, 0) + 1
        return dict(sorted(counts.items()))

    def count(self, op: str) -> int:
        return sum(1 for n in self.nodes if n.op == op)

    # -- editing ----------------------------------------------------------
    def replace_uses(self, old: str, new: str, *, graph_outputs: bool = True) -> None:
        """Point every consumer of `old` (and, unless told not to, every graph
        output naming it) at `new`."""
        for node in self.users(old):
            node.inputs = [new if v == old else v for v in node.inputs]
        if graph_outputs:
            self.outputs = [new if v == old else v for v in self.outputs]

    def remove_unused(self) -> "Graph":
        """Drop nodes and constants that no graph output depends on."""
        live = set(self.outputs)
        kept: list[Node] = []
        for node in reversed(self.nodes):
            if any(o in live for o in node.outputs):
                kept.append(node)
                live.update(v for v in node.inputs if v)
            else:
                self._detach(node)
        self._nodes, self._removed = kept[::-1], False
        for name in [c for c in self.constants if c not in live]:
            del self.constants[name]
        used = live | set(self.inputs) | set(self._producer)
        for name in [v for v in self.info if v not in used]:
            del self.info[name]
        for name in [v for v in self.origin if v not in used]:
            del self.origin[name]
        return self

    def toposort(self) -> "Graph":
        available = set(self.inputs) | set(self.constants) | {""}
        pending = self.nodes
        # Release users in list order, so the result depends on nothing but that order.
        position = {n: i for i, n in enumerate(pending)}
        missing = {n: sum(1 for v in n.inputs if v not in available) for n in pending}
        ready = [n for n in pending if missing[n] == 0]
        seen: set[Node] = set()
        ordered: list[Node] = []
        while ready:
            node = ready.pop()
            if node in seen:
                continue
            seen.add(node)
            ordered.append(node)
            for out in node.outputs:
                for user in sorted(self._users.get(out, ()), key=position.__getitem__):
                    missing[user] -= sum(1 for v in user.inputs if v == out)
                    if missing[user] == 0:
                        ready.append(user)
        if len(ordered) != len(pending):
            stuck = [n.name for n in pending if n not in seen][:5]
            raise ValueError(f"graph has a cycle or dangling inputs near nodes {stuck}")
        self._nodes = ordered
        return self

    def validate(self) -> None:
        """Raise ValueError if a value is used before it is defined."""
        defined = set(self.inputs) | set(self.constants) | {""}
        for node in self.nodes:
            for v in node.inputs:
                if v not in defined:
                    raise ValueError(f"node {node.name} ({node.op}) reads undefined value {v!r}")
            defined.update(node.outputs)
        for v in self.outputs:
            if v not in defined:
                raise ValueError(f"graph output {v!r} is not defined")

    def lint(self, where: str = "") -> None:
        """Check every node against its op's schema and the graph's own
        invariants; raise LintError naming each offending node (x2/ir/lint.py).
        `where` says when, in the message ("after pass fold_constants")."""
        _lint(self, where)

    def __repr__(self) -> str:
        return (f"Graph(inputs={self.inputs}, outputs={self.outputs}, nodes={len(self.nodes)}, "
                f"constants={len(self.constants)})")
