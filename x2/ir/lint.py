"""Graph.lint: check a graph against the op schemas (x2/ir/ops.py) and the
IR's invariants, in one pass over the nodes.

A mapper or pass that builds a node the emitters cannot read would otherwise
fail later, inside an emitter worker, as an internal error far from its
cause. With `X2_LINT=1` (x2/passes/__init__.py) every graph is linted after
the frontend and after each pass, as torch.fx does with Graph.lint.
"""
from __future__ import annotations

from .control_flow import GRAPH_ATTRS
from .ops import OPS
from .schema import DTYPES
from .symbols import dims_problems

_SHOWN = 20  # problems listed in the message; all of them are in .problems


class LintError(ValueError):
    def __init__(self, problems: list[str], where: str = ""):
        self.problems = problems
        head = f"IR lint{' ' + where if where else ''}: {len(problems)} problem(s): "
        more = len(problems) - _SHOWN
        super().__init__(head + "; ".join(problems[:_SHOWN]) +
                         (f"; and {more} more" if more > 0 else ""))


def describe(node) -> str:
    """The node and where it came from, for a message."""
    src = node.source or {}
    origin = f" from {src.get('op', '?')} '{src.get('name', '?')}'" if src else ""
    mapper = f" (mapper {src['mapper']})" if src.get("mapper") else ""
    return f"node '{node.name}' ({node.op}){origin}{mapper}"


def lint(graph, where: str = "") -> None:
    problems = graph_problems(graph)
    if problems:
        raise LintError(problems, where)


def graph_problems(graph) -> list[str]:
    """Every problem of `graph` and, prefixed with where they are, of its subgraphs."""
    problems: list[str] = []
    defined_by: dict[str, str] = {}
    for name in graph.inputs:
        if name in defined_by:
            problems.append(f"graph input '{name}' is listed twice")
        defined_by[name] = "a graph input"
        if name not in graph.info:
            problems.append(f"graph input '{name}' has no dtype/shape info")
    for name in graph.constants:
        if name in defined_by:
            problems.append(f"'{name}' is both a graph input and a constant")
        defined_by.setdefault(name, "a constant")
    producers = {out: node for node in graph.nodes for out in node.outputs}
    for node in graph.nodes:
        problems.extend(f"{describe(node)}: {p}" for p in _node_problems(
            node, defined_by, producers))
        for out in node.outputs:
            defined_by.setdefault(out, f"node '{node.name}'")
    for name in graph.outputs:
        if name not in defined_by:
            problems.append(f"graph output '{name}' is not defined")
    problems.extend(_info_problems(graph, defined_by))
    problems.extend(dims_problems(graph))
    if not problems:  # a value defined twice would also upset the index
        problems.extend(_index_problems(graph, producers))
    for node in graph.nodes:
        for attr in GRAPH_ATTRS.get(node.op, ()):
            sub = node.attrs.get(attr)
            if hasattr(sub, "nodes"):
                problems.extend(f"in {attr} of {describe(node)}: {p}"
                                for p in graph_problems(sub))
    return problems


def _node_problems(node, defined_by: dict, producers: dict) -> list[str]:
    out = []
    opdef = OPS.get(node.op)
    if opdef is None:
        return [f"unknown IR op {node.op!r}"]
    count, low, high = len(node.inputs), opdef.min_inputs, opdef.max_inputs
    if count < low or (high is not None and count > high):
        want = f"{low}" if low == high else f"{low} to {high if high is not None else 'any'}"
        out.append(f"has {count} inputs, {node.op} takes {want}")
    for i, value in enumerate(node.inputs):
        spec = opdef.input_spec(i)
        if not value:
            if spec is not None and not spec.optional:
                out.append(f"input {i} ({spec.name}) is empty but required")
        elif value not in defined_by:
            later = producers.get(value)
            out.append(f"reads '{value}' before it is defined (by node '{later.name}')"
                       if later is not None else f"reads undefined value '{value}'")
    if opdef.outputs is not None and len(node.outputs) != opdef.outputs:
        out.append(f"has {len(node.outputs)} outputs, {node.op} gives {opdef.outputs}")
    if not node.outputs:
        out.append("has no outputs")
    for value in node.outputs:
        if not value:
            out.append("has an empty output name")
        elif value in defined_by:
            out.append(f"defines '{value}', already defined by {defined_by[value]}")
    for name, attr in opdef.attrs.items():
        if name not in node.attrs:
            out.append(f"attribute '{name}' is missing" + (
                "" if attr.required else " (Graph.add_node fills in defaults; a pass that "
                                          "changes node.op sets the new op's attributes)"))
        else:
            problem = attr.problem(node.attrs[name])
            if problem:
                out.append(f"attribute '{name}' {problem}")
    unknown = sorted(set(node.attrs) - set(opdef.attrs))
    if unknown:
        out.append(f"unknown attribute(s) {', '.join(unknown)} for {node.op}")
    if not out and node.op in GRAPH_ATTRS:
        out.extend(_interface_problems(node))
    return out


def _interface_problems(node) -> list[str]:
    """A subgraph must take and give what its node passes and expects."""
    operands = len(node.inputs) - 1 if node.op == "if" else len(node.inputs) - 2
    if node.op == "if":
        want_in, want_out = operands, len(node.outputs)
        graphs = [("then_branch", node.attrs["then_branch"]),
                  ("else_branch", node.attrs["else_branch"])]
    else:
        carried = node.attrs["carried"]
        if len(node.inputs) < 2 or not 0 <= carried <= operands:
            return [f"carries {carried} values but has {max(operands, 0)} operands "
                    f"(inputs: max_trip, cond, then the operands; '' for one left out)"]
        want_in, want_out = 2 + operands, 1 + len(node.outputs)
        graphs = [("body", node.attrs["body"])]
    out = []
    for attr, sub in graphs:
        if len(sub.inputs) != want_in:
            out.append(f"{attr} takes {len(sub.inputs)} inputs, the node passes {want_in}")
        if len(sub.outputs) != want_out:
            out.append(f"{attr} gives {len(sub.outputs)} outputs, the node needs {want_out}")
    return out


def _info_problems(graph, defined_by: dict) -> list[str]:
    out = []
    for name, info in graph.info.items():
        if name not in defined_by:
            out.append(f"info for '{name}', which nothing defines")
        if info.dtype not in DTYPES:
            out.append(f"info for '{name}': unknown dtype {info.dtype!r}")
        shape = info.shape
        if shape is not None and (not isinstance(shape, tuple) or any(
                d is not None and (not isinstance(d, int) or isinstance(d, bool) or d < 0)
                for d in shape)):
            out.append(f"info for '{name}': shape {shape!r} is not a tuple of dims "
                       f"(int >= 0 or None)")
    for name, origin in graph.origin.items():
        info = graph.info.get(name)
        if name not in defined_by:
            out.append(f"origin for '{name}', which nothing defines")
        elif origin.perm is not None and (
                sorted(origin.perm) != list(range(len(origin.perm))) or (
                    info is not None and info.shape is not None
                    and len(info.shape) != len(origin.perm))):
            out.append(f"origin of '{name}': perm {list(origin.perm)} is not a permutation "
                       f"of its axes")
    for name, array in graph.constants.items():
        info = graph.info.get(name)
        if info is None or info.dtype != str(array.dtype) or info.shape != tuple(array.shape):
            out.append(f"constant '{name}' is {array.dtype}{list(array.shape)} but its info "
                       f"says {info.dtype + str(list(info.shape or [])) if info else 'nothing'}")
    return out


def _index_problems(graph, producers: dict) -> list[str]:
    """The producer/consumer lists Graph maintains must match the nodes."""
    if producers != graph._producer:
        return ["the graph's producer index is out of date (a node list was edited in place)"]
    users: dict[str, set] = {}
    for node in graph.nodes:
        for value in node.inputs:
            if value:
                users.setdefault(value, set()).add(node)
    if users != {v: set(u) for v, u in graph._users.items()}:
        return ["the graph's consumer index is out of date (a node list was edited in place)"]
    return []
