"""A small declarative pattern matcher for IR rewrites (docs/IR.md, "Patterns").

A pattern is a nested expression over IR ops, read like the formula it
matches:

    x = Var("x")
    SILU = Op("mul", x, Op("sigmoid", x))          # x * sigmoid(x)

  * `Op(op, *inputs, attrs=...)` matches a node of that op whose inputs match
    the sub-patterns; for the commutative ops (add, mul, maximum, minimum)
    both input orders are tried. `attrs` maps an attribute to the value it
    must have, or to a predicate on it.
  * `Var(name, pred=None)` matches any value; a name used twice must bind the
    same value both times (that is what makes `x * sigmoid(x)` a silu).
  * `Const(pred_or_value, name=None)` matches a constant: a number compares
    (within 1e-6 relative) with every element, a predicate gets the array.
  * `Alt(p1, p2, ...)` matches the first alternative that does (one rewrite
    covers `x * 0.5 * A` and `0.5 * (x * A)`).

One `Rewrite(name, pattern, replace)` per fusion: `replace(graph, match)`
adds the replacement node(s) and returns the value that takes the place of
the matched root (or None to decline, e.g. when a shape check fails).
`apply_rewrites` matches every rewrite at every node and rewires the root's
users; the matched interior nodes are dropped by `remove_unused` when
nothing else reads them. A match whose interior values are read outside the
pattern (or are graph outputs) is skipped, so a rewrite never duplicates work.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..ir import Graph, Node
from ..ir.scopes import with_shared_scope

COMMUTATIVE = frozenset({"add", "mul", "maximum", "minimum"})


class Pattern:
    """Base of the pattern expressions."""


@dataclass(frozen=True, eq=False)
class Var(Pattern):
    name: str
    pred: Callable[[Graph, str], bool] | None = None


@dataclass(frozen=True, eq=False)
class Const(Pattern):
    value: Any  # a number (every element equals it) or a predicate on the array
    name: str | None = None


@dataclass(frozen=True, eq=False)
class Op(Pattern):
    op: str
    inputs: tuple
    attrs: dict
    name: str | None

    def __init__(self, op: str, *inputs: Pattern, attrs: dict | None = None,
                 name: str | None = None):
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "inputs", inputs)
        object.__setattr__(self, "attrs", dict(attrs or {}))
        object.__setattr__(self, "name", name)


@dataclass(frozen=True, eq=False)
class Alt(Pattern):
    options: tuple

    def __init__(self, *options: Pattern):
        object.__setattr__(self, "options", options)


@dataclass
class Match:
    """What a pattern bound: `values[name]` for Vars and named Consts,
    `nodes[name]` for named Ops, `root` the node the pattern's top matched,
    `interior` every node the pattern covered."""
    root: Node
    values: dict[str, str] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    interior: list[Node] = field(default_factory=list)

    def const(self, graph: Graph, name: str) -> np.ndarray:
        return graph.constants[self.values[name]]


def scalar(value: float, rtol: float = 1e-6) -> Callable[[np.ndarray], bool]:
    """A Const predicate: every element is `value` (within rtol)."""
    return lambda a: a.size > 0 and np.issubdtype(a.dtype, np.number) and \
        bool(np.allclose(a, value, rtol=rtol, atol=0))


def _const_ok(graph: Graph, pattern: Const, value: str) -> bool:
    array = graph.constants.get(value)
    if array is None:
        return False
    test = pattern.value if callable(pattern.value) else scalar(pattern.value)
    return bool(test(array))


def _attrs_ok(node: Node, attrs: dict) -> bool:
    for key, want in attrs.items():
        have = node.attrs.get(key)
        if callable(want):
            if not want(have):
                return False
        elif have != want:
            return False
    return True


def _match(graph: Graph, pattern: Pattern, value: str, state: Match) -> bool:
    """Match `pattern` at `value`, extending `state`; on failure `state` may
    hold partial bindings, so callers match on a copy."""
    if isinstance(pattern, Var):
        bound = state.values.get(pattern.name)
        if bound is not None:
            return bound == value
        if pattern.pred is not None and not pattern.pred(graph, value):
            return False
        state.values[pattern.name] = value
        return True
    if isinstance(pattern, Const):
        if not _const_ok(graph, pattern, value):
            return False
        if pattern.name:
            bound = state.values.get(pattern.name)
            if bound is not None and bound != value:
                return False
            state.values[pattern.name] = value
        return True
    if isinstance(pattern, Alt):
        for option in pattern.options:
            trial = _copy(state)
            if _match(graph, option, value, trial):
                _assign(state, trial)
                return True
        return False
    node = graph.producer(value)
    if node is None or node.op != pattern.op or not _attrs_ok(node, pattern.attrs) \
            or len(node.outputs) != 1:
        return False
    orders = [node.inputs]
    if pattern.op in COMMUTATIVE and len(node.inputs) == 2:
        orders.append(node.inputs[::-1])
    for inputs in orders:
        if len(inputs) != len(pattern.inputs):
            continue
        trial = _copy(state)
        if all(_match(graph, p, v, trial) for p, v in zip(pattern.inputs, inputs)):
            if pattern.name:
                trial.nodes[pattern.name] = node
            trial.interior.append(node)
            _assign(state, trial)
            return True
    return False


def _copy(state: Match) -> Match:
    return Match(state.root, dict(state.values), dict(state.nodes), list(state.interior))


def _assign(state: Match, other: Match) -> None:
    state.values, state.nodes, state.interior = other.values, other.nodes, other.interior


def match(graph: Graph, pattern: Pattern, node: Node) -> Match | None:
    """The match of `pattern` rooted at `node`'s (single) output, or None.
    Interior values read by anything outside the match refuse it."""
    if len(node.outputs) != 1:
        return None
    state = Match(node)
    if not _match(graph, pattern, node.outputs[0], state):
        return None
    covered = set(state.interior)
    outputs = set(graph.outputs)
    for inner in state.interior:
        if inner is node:
            continue
        value = inner.outputs[0]
        if value in outputs or any(u not in covered for u in graph.users(value)):
            return None
    return state


@dataclass(frozen=True)
class Rewrite:
    """One fusion: `replace(graph, match)` adds the new node(s) and returns
    the value standing for the root's output, or None to leave it alone."""
    name: str
    pattern: Pattern
    replace: Callable[[Graph, Match], str | None]


def apply_rewrites(graph: Graph, rewrites: list[Rewrite],
                   counts: dict[str, int] | None = None) -> Graph:
    """Apply every rewrite wherever it matches until none does; `counts`
    (if given) gets how many times each fired."""
    changed = True
    while changed:
        changed = False
        for node in list(graph.nodes):
            if node.graph is not graph:
                continue  # dropped by an earlier rewrite in this sweep
            for rewrite in rewrites:
                found = match(graph, rewrite.pattern, node)
                if found is None:
                    continue
                before = len(graph.nodes)
                new = rewrite.replace(graph, found)
                if new is None:
                    continue
                # Provenance: the fused nodes come from the matched root's
                # source node, in the module scope the matched nodes share.
                fused = with_shared_scope(dict(node.source),
                                          [inner.source for inner in found.interior])
                for made in graph.nodes[before:]:
                    made.source = made.source or dict(fused)
                _take_place(graph, node, new)
                if counts is not None:
                    counts[rewrite.name] = counts.get(rewrite.name, 0) + 1
                changed = True
                break
        if changed:
            # Replacement nodes were appended: order first, then drop the
            # matched nodes nothing reads any more.
            graph.toposort()
            graph.remove_unused()
    return graph


def _take_place(graph: Graph, root: Node, new: str) -> None:
    """Make `new` stand where the root's output stood. A graph output keeps
    its name (callers and origins know it by it): the replacement's producer
    is renamed to write it, or an identity copies it."""
    old = root.outputs[0]
    graph.remove_node(root)
    if old not in graph.outputs:
        graph.replace_uses(old, new)
        if new not in graph.info and old in graph.info:
            graph.info[new] = graph.info[old]
        graph.forget(old)
        return
    info = graph.info.get(old)
    producer = graph.producer(new)
    if producer is not None and new not in graph.outputs and not graph.users(new):
        producer.outputs = [old if o == new else o for o in producer.outputs]
        graph.forget(new)
    else:
        graph.add_node("identity", [new], outputs=[old], name=graph.fresh_name("identity"),
                       source=dict(root.source))
    if info is not None:
        graph.info[old] = info
