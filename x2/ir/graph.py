"""The shared IR: a small, framework-free dataflow graph (see docs/IR.md).

A Graph holds named values. A value is produced by exactly one of: a graph
input, a constant (a numpy array), or one output of a node. Nodes are kept in
topological order; passes are plain functions Graph -> Graph that may mutate
and return the graph they were given.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

# A dimension is an int, or None when unknown at conversion time (e.g. batch).
Shape = tuple  # tuple[int | None, ...]

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16",
          "int32", "int64", "bool")


@dataclass
class TensorInfo:
    dtype: str
    shape: Shape | None  # None: rank unknown

    def to_json(self) -> dict:
        return {"dtype": self.dtype, "shape": None if self.shape is None else list(self.shape)}

    @staticmethod
    def from_json(d: dict) -> "TensorInfo":
        return TensorInfo(d["dtype"], None if d["shape"] is None else tuple(d["shape"]))


@dataclass
class Node:
    op: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    name: str = ""
    # Where the node came from: {"op": source op type, "name": source node name,
    # "mapper": mapper function}. Kept through passes for diagnostics.
    source: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"op": self.op, "name": self.name, "inputs": self.inputs,
                "outputs": self.outputs, "attrs": self.attrs, "source": self.source}

    @staticmethod
    def from_json(d: dict) -> "Node":
        return Node(d["op"], list(d["inputs"]), list(d["outputs"]), dict(d["attrs"]),
                    d.get("name", ""), dict(d.get("source", {})))


class Graph:
    def __init__(self) -> None:
        self.inputs: list[str] = []
        self.outputs: list[str] = []
        self.nodes: list[Node] = []
        self.constants: dict[str, np.ndarray] = {}
        self.info: dict[str, TensorInfo] = {}
        # Free-form facts about the graph: source framework, layout of each
        # graph input/output ("NHWC"/"NCHW"/None), signature name, ...
        self.meta: dict[str, Any] = {}
        self._names = itertools.count()

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

    def add_node(self, op: str, inputs: list[str], *, attrs: dict | None = None,
                 name: str = "", n_outputs: int = 1, outputs: list[str] | None = None,
                 source: dict | None = None) -> Node:
        name = name or self.fresh_name(op)
        if outputs is None:
            outputs = [name if n_outputs == 1 else f"{name}:{i}" for i in range(n_outputs)]
        node = Node(op, list(inputs), list(outputs), dict(attrs or {}), name, dict(source or {}))
        self.nodes.append(node)
        return node

    # -- queries ----------------------------------------------------------
    def producers(self) -> dict[str, Node]:
        return {out: node for node in self.nodes for out in node.outputs}

    def consumers(self) -> dict[str, list[Node]]:
        users: dict[str, list[Node]] = {}
        for node in self.nodes:
            for value in node.inputs:
                if value:
                    users.setdefault(value, []).append(node)
        return users

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

    # -- editing ----------------------------------------------------------
    def replace_uses(self, old: str, new: str) -> None:
        """Point every consumer (and graph output) of `old` at `new`."""
        for node in self.nodes:
            node.inputs = [new if v == old else v for v in node.inputs]
        self.outputs = [new if v == old else v for v in self.outputs]

    def remove_unused(self) -> "Graph":
        """Drop nodes and constants that no graph output depends on."""
        live = set(self.outputs)
        kept: list[Node] = []
        for node in reversed(self.nodes):
            if any(o in live for o in node.outputs):
                kept.append(node)
                live.update(v for v in node.inputs if v)
        self.nodes = kept[::-1]
        for name in [c for c in self.constants if c not in live]:
            del self.constants[name]
        used = live | set(self.inputs) | {o for n in self.nodes for o in n.outputs}
        for name in [v for v in self.info if v not in used]:
            del self.info[name]
        return self

    def toposort(self) -> "Graph":
        available = set(self.inputs) | set(self.constants) | {""}
        pending = list(self.nodes)
        ordered: list[Node] = []
        users = {}
        for node in pending:
            for v in node.inputs:
                users.setdefault(v, []).append(node)
        missing = {id(n): sum(1 for v in n.inputs if v not in available) for n in pending}
        ready = [n for n in pending if missing[id(n)] == 0]
        seen = set()
        while ready:
            node = ready.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            ordered.append(node)
            for out in node.outputs:
                for user in users.get(out, []):
                    missing[id(user)] -= sum(1 for v in user.inputs if v == out)
                    if missing[id(user)] == 0:
                        ready.append(user)
        if len(ordered) != len(pending):
            stuck = [n.name for n in pending if id(n) not in seen][:5]
            raise ValueError(f"graph has a cycle or dangling inputs near nodes {stuck}")
        self.nodes = ordered
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

    def count(self, op: str) -> int:
        return sum(1 for n in self.nodes if n.op == op)

    def __repr__(self) -> str:
        return (f"Graph(inputs={self.inputs}, outputs={self.outputs}, nodes={len(self.nodes)}, "
                f"constants={len(self.constants)})")


def iter_values(nodes: Iterable[Node]) -> Iterable[str]:
    for node in nodes:
        yield from node.inputs
        yield from node.outputs
