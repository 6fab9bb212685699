"""Structured control flow: the `if` and `loop` ops hold subgraphs.

A subgraph is an ordinary Graph that is *closed*: it reads only its own
inputs and constants, never a value of the graph around it. Whatever a
branch or a loop body needs from outside is passed to the node as an input
(ONNX lets a subgraph capture outer values by name; the mappers make those
captures explicit). So every pass can treat a subgraph as a graph of its
own, and the use lists of the outer graph stay complete.

  if(cond, x*)             then_branch / else_branch take the x, give the outputs
  loop(max_trip?, cond?, x*)   x = carried initial values, then invariants;
      body inputs:  iteration (int64 scalar), cond (bool scalar), carried..., invariants...
      body outputs: cond, carried..., scan...
      node outputs: carried final values, then each scan output stacked on a new axis 0

The loop runs while (no max_trip or iteration < max_trip) and cond, as ONNX Loop.
Their numpy semantics are in x2/ir/interpret.py, which runs subgraphs.
"""
from __future__ import annotations

from typing import Iterator

GRAPH_ATTRS = {"if": ("then_branch", "else_branch"), "loop": ("body",)}


def subgraphs(node) -> Iterator:
    """The subgraphs a node holds (none for ops without control flow)."""
    for name in GRAPH_ATTRS.get(node.op, ()):
        sub = node.attrs.get(name)
        if sub is not None:
            yield sub


def walk_graphs(graph) -> Iterator:
    """The graph and every subgraph inside it, innermost first."""
    for node in graph.nodes:
        for sub in subgraphs(node):
            yield from walk_graphs(sub)
    yield graph


def has_control_flow(graph) -> bool:
    return any(node.op in GRAPH_ATTRS for node in graph.nodes)


def inline(graph, sub, inputs: list[str], prefix: str, source: dict | None = None) -> list[str]:
    """Append the nodes of closed subgraph `sub` to `graph`, its inputs bound
    to the values `inputs`; returns the values that are its outputs."""
    rename = dict(zip(sub.inputs, inputs))
    for name, array in sub.constants.items():
        rename[name] = graph.add_constant(f"{prefix}/{name}", array)
        if name in sub.origin:
            graph.origin[rename[name]] = sub.origin[name]
    for node in sub.nodes:
        outputs = [graph.fresh_name(f"{prefix}/{v}") for v in node.outputs]
        for old, new in zip(node.outputs, outputs):
            rename[old] = new
            if old in sub.info:
                graph.info[new] = sub.info[old]
        graph.add_node(node.op, [rename.get(v, v) if v else "" for v in node.inputs],
                       attrs=dict(node.attrs), name=outputs[0], outputs=outputs,
                       source=dict(source or node.source))
    return [rename.get(v, v) for v in sub.outputs]
