"""TensorFlow 1's dataflow control flow (what tf.compat.v1 graphs, frozen
GraphDefs, TF1 checkpoints and TF1 SavedModels hold) rebuilt as the
functional While / If SourceOps that mappers/tf/control.py converts to the
IR's `loop` / `if`.

A v1 while loop is a frame: Enter nodes bring values in (is_constant: an
invariant), each loop variable is a Merge(Enter, NextIteration) whose value
the LoopCond's Switch passes to the body (output 1) or to an Exit (output 0).
A v1 cond is Switch(x, pred) per value a branch reads (output 1 feeds the
true branch, 0 the false one) and a Merge per result. Every value gets a
context, the stack of frames and branches it lives in, found in one pass in
topological order (NextIteration -> Merge back edges left out); the nodes of
one frame or one cond become one SourceOp whose subgraphs hold the nodes
inside, nested frames and conds rebuilt the same way first.

v1 TensorArrays (dynamic_rnn's) are read as tensors first
(v1_tensor_arrays.py): an unstacked one is its value, one a loop writes at
its counter the loop's scan output."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from ...errors import ConversionError
from ...ir import TensorInfo
from . import v1_tensor_arrays as arrays
from ..common import SourceGraph, SourceOp
from .v1_tensor_arrays import refuse as _refuse

# Nodes that shape a frame or a cond: never SourceOps of their own.
_STRUCTURE = {"Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond"}
V1_OPS = _STRUCTURE | arrays.TENSOR_ARRAY_OPS


@dataclass(eq=False)   # nodes are compared by identity (names are unique)
class Node:
    type: str
    name: str
    inputs: list[str]                 # data input values
    controls: list[str]               # control input node names
    outputs: list[str]
    attrs: dict = field(default_factory=dict)
    const_value: np.ndarray | None = None


class _Rebuild:
    def __init__(self, nodes: list[Node], info: dict[str, TensorInfo]):
        self.info = info
        self.nodes = nodes
        self._index()

    def _index(self):
        self.by_name = {n.name: n for n in self.nodes}
        self.producer = {v: n for n in self.nodes for v in n.outputs}
        self.consumers: dict[str, list[Node]] = {}
        for n in self.nodes:
            for v in n.inputs:
                self.consumers.setdefault(v, []).append(n)

    def through_identity(self, value: str) -> str:
        while (p := self.producer.get(value)) is not None and p.type == "Identity":
            value = p.inputs[0]
        return value

    def const(self, value: str):
        p = self.producer.get(self.through_identity(value))
        return None if p is None or p.const_value is None else p.const_value

    def tensor_arrays(self) -> None:
        self.nodes = arrays.rewrite(self)
        self._index()

    def dedupe_switches(self) -> None:
        """One Switch per value and condition (TF makes one per use): a branch
        then takes each outer value once, as the IR's `if` operands must."""
        first: dict[tuple, Node] = {}
        rename: dict[str, str] = {}
        kept = []
        for n in self.nodes:
            if n.type == "Switch" and not self.loop_switch(n):
                key = (n.inputs[0], self.through_identity(n.inputs[1]))
                if key in first:
                    rename.update(zip(n.outputs, first[key].outputs))
                    continue
                first[key] = n
            kept.append(n)
        for n in kept:
            n.inputs = [rename.get(v, v) for v in n.inputs]
        self.nodes = kept
        self._index()

    # -- contexts ------------------------------------------------------------------
    def order(self) -> list[Node]:
        """Topological order; a Merge waits only for its inputs that are not
        NextIteration (the loop's back edge)."""
        deps = {}
        for n in self.nodes:
            ins = [self.producer[v] for v in n.inputs if v in self.producer]
            if n.type == "Merge":
                ins = [p for p in ins if p.type != "NextIteration"]
            ins += [self.by_name[c] for c in n.controls if c in self.by_name]
            deps[n.name] = {p.name for p in ins}
        return _kahn(self.nodes, deps, "is on a cycle that is not a while loop's "
                                       "NextIteration -> Merge back edge")

    def contexts(self) -> None:
        """self.ctx[value]: the frames and branches it lives in, outermost first;
        self.home[node]: the context the node belongs to (inside its frame or
        branch for the nodes that open and close them)."""
        self.ctx: dict[str, tuple] = {}
        self.home: dict[str, tuple] = {}
        node_ctx: dict[str, tuple] = {}
        for n in self.order():
            ins = [self.ctx[v] for v in n.inputs if v in self.ctx]
            ins += [node_ctx[c] for c in n.controls if c in node_ctx]
            if n.type == "Enter":
                inner = self.ctx.get(n.inputs[0], ()) + (("frame", n.attrs.get("frame_name")),)
                outs, home = [inner], inner
            elif n.type == "Exit":
                inside = self.ctx.get(n.inputs[0], ())
                frames = [i for i, m in enumerate(inside) if m[0] == "frame"]
                if not frames:
                    raise _refuse(n, "leaves no while loop: its input is not inside a frame "
                                     "(an Exit without its Enter)")
                outs, home = [inside[:frames[-1]]], inside
            elif n.type == "Merge" and self.loop_merge(n):
                enter = next(v for v in n.inputs if self.producer[v].type == "Enter")
                outs = [self.ctx[enter]] * len(n.outputs)
                home = self.ctx[enter]
            elif n.type == "Merge":
                stripped = [c[:-1] if c and c[-1][0] == "cond" else c for c in ins]
                base = self._deepest(n, stripped)
                markers = [c[len(base)] for c in ins if len(c) > len(base)]
                if not markers or markers[0][0] != "cond":
                    raise _refuse(n, "joins values of no tf.cond branch")
                outs, home = [base] * len(n.outputs), base + (markers[0][:2] + (1,),)
            elif n.type == "Switch" and not self.loop_switch(n):
                base = self._deepest(n, ins)
                pred = ("cond", self.through_identity(n.inputs[1]))
                outs = [base + (pred + (0,),), base + (pred + (1,),)]
                home = outs[1]
            else:
                base = self._deepest(n, ins)
                outs, home = [base] * len(n.outputs), base
            for v, c in zip(n.outputs, outs):
                self.ctx[v] = c
            self.home[n.name] = home
            node_ctx[n.name] = outs[0] if outs else home

    def loop_merge(self, n: Node) -> bool:
        return any(self.producer.get(v) is not None and
                   self.producer[v].type in ("Enter", "NextIteration") for v in n.inputs)

    def loop_switch(self, n: Node) -> bool:
        p = self.producer.get(n.inputs[1])
        return p is not None and p.type == "LoopCond"

    @staticmethod
    def _deepest(n: Node, contexts: list[tuple]) -> tuple:
        deepest = max(contexts, key=len, default=())
        for c in contexts:
            if deepest[:len(c)] != c:
                raise _refuse(n, "reads values of different while loops or tf.cond branches "
                                 "(the graph's v1 control flow is malformed)")
        return deepest

    # -- regions -------------------------------------------------------------------
    def build(self, prefix: tuple, members: list[Node]) -> list[SourceOp]:
        """The SourceOps of context `prefix`: its own nodes, and one While / If
        per frame / cond directly inside it."""
        depth = len(prefix)
        ops: list[SourceOp] = []
        groups: dict[tuple, list[Node]] = {}
        for n in members:
            home = self.home[n.name]
            if len(home) > depth:
                groups.setdefault(home[depth][:2], []).append(n)
            elif n.type in _STRUCTURE:
                raise _refuse(n, "is not part of a well-formed while loop or tf.cond")
            elif n.type in V1_OPS:
                raise _refuse(n, f"uses a TensorArray {arrays.UNCONVERTED}")
            else:
                ops.append(SourceOp(n.type, n.name, list(n.inputs), list(n.outputs),
                                    dict(n.attrs), n.const_value))
        for key, nodes in groups.items():
            inner = prefix + (key,)
            ops += self.frame(inner, nodes) if key[0] == "frame" else self.cond(prefix, key, nodes)
        return _toposort(ops)

    def frame(self, inner: tuple, nodes: list[Node]) -> list[SourceOp]:
        name = str(inner[-1][1]).removesuffix("/while_context")
        own = [n for n in nodes if self.home[n.name] == inner and n.type in _STRUCTURE]
        loop_conds = [n for n in own if n.type == "LoopCond"]
        if len(loop_conds) != 1:
            raise _refuse(own[0] if own else nodes[0],
                          f"is in while loop '{name}', which has {len(loop_conds)} LoopCond "
                          f"nodes instead of one")
        invariants = [n for n in own if n.type == "Enter" and n.attrs.get("is_constant")]
        merges = [n for n in own if n.type == "Merge"]
        carried, scans = [], []   # (init, cond input, body input, body output, exit)
        for m in merges:
            init = next(self.producer[v] for v in m.inputs if self.producer[v].type == "Enter")
            back = next((self.producer[v] for v in m.inputs
                         if self.producer[v].type == "NextIteration"), None)
            switch = next((c for c in self.consumers.get(m.outputs[0], [])
                           if c.type == "Switch"), None)
            if back is None or switch is None:
                raise _refuse(m, f"is a loop variable of '{name}' without its "
                                 f"NextIteration or Switch")
            exits = [c for c in self.consumers.get(switch.outputs[0], []) if c.type == "Exit"]
            exit_value = exits[0].outputs[0] if exits else f"{m.name}_final"
            body_in = switch.outputs[1]
            writer = self.producer.get(back.inputs[0])
            if writer is not None and writer.type == "TensorArrayWriteV3":
                scans.append((writer, body_in, exit_value))
            else:
                carried.append((init.inputs[0], m.outputs[0], body_in, back.inputs[0],
                                exit_value))
        writers = [w for w, _, _ in scans]
        ops = self.build(inner, [n for n in nodes if n not in own and n not in writers])
        for n in own:
            if n.type == "Enter" and not n.attrs.get("is_constant") and \
                    not any(c.type == "Merge" for c in self.consumers.get(n.outputs[0], [])):
                raise _refuse(n, f"enters while loop '{name}' as a variable but no Merge "
                                 f"makes it one")
        scan_values = [arrays.scan_value(self, name, w, body_in, carried)
                       for w, body_in, _ in scans]
        for (w, _, exit_value), value in zip(scans, scan_values):
            element = self.info.get(w.inputs[2])
            self.info[exit_value] = TensorInfo(element.dtype if element else "float32",
                                               None if element is None or element.shape is None
                                               else (None, *element.shape))
        inv_inside = [n.outputs[0] for n in invariants]
        cond = self.subgraph(ops, [c[1] for c in carried] + inv_inside,
                             [loop_conds[0].inputs[0]], inner)
        body = self.subgraph(ops, [c[2] for c in carried] + inv_inside,
                             [c[3] for c in carried] + scan_values, inner)
        captures = list(dict.fromkeys(body.captures + cond.captures))
        body.captures = cond.captures = captures
        inputs = [c[0] for c in carried] + [n.inputs[0] for n in invariants] + captures
        outputs = [c[4] for c in carried] + [s[2] for s in scans]
        return [SourceOp("While", name, inputs, outputs,
                         {"cond_graph": cond, "body_graph": body, "carried": len(carried)})]

    def cond(self, prefix: tuple, key: tuple, nodes: list[Node]) -> list[SourceOp]:
        switches = [n for n in nodes if n.type == "Switch" and len(self.home[n.name]) ==
                    len(prefix) + 1]
        merges = [n for n in nodes if n.type == "Merge" and len(self.home[n.name]) ==
                  len(prefix) + 1]
        if not switches or not merges:
            raise _refuse(nodes[0], "is in a tf.cond without both its Switch and Merge nodes")
        rest = [n for n in nodes if n not in switches and n not in merges]
        branches = {}
        for side in (1, 0):
            inside = prefix + (key + (side,),)
            members = [n for n in rest if self.home[n.name][:len(inside)] == inside]
            branches[side] = (inside, self.build(inside, members))
        results = {1: [], 0: []}
        for m in merges:
            if any(self.consumers.get(v) for v in m.outputs[1:]):
                raise _refuse(m, "has its value_index output used; x2 converts a tf.cond's "
                                 "results only")
            sides = {}
            for v in m.inputs:
                c = self.ctx.get(v, ())
                sides[c[len(prefix)][2] if len(c) > len(prefix) else None] = v
            if len(m.inputs) != 2 or set(sides) - {0, 1, None} or len(sides) != 2:
                raise _refuse(m, "does not join one value of each branch of a tf.cond")
            for side in (1, 0):
                results[side].append(sides.get(side) or sides[None])
        name = merges[0].name.rsplit("/", 1)[0]
        subs = {}
        for side, attr in ((1, "then_branch"), (0, "else_branch")):
            params = [s.outputs[side] for s in switches]
            subs[attr] = self.subgraph(branches[side][1], params, results[side],
                                       branches[side][0])
        captures = list(dict.fromkeys(subs["then_branch"].captures +
                                      subs["else_branch"].captures))
        for sub in subs.values():
            sub.captures = captures
        inputs = [switches[0].inputs[1]] + [s.inputs[0] for s in switches] + captures
        for m in merges:
            self.info.setdefault(m.outputs[0], self.info.get(results[1][0]))
        return [SourceOp("If", name, inputs, [m.outputs[0] for m in merges], subs)]

    def subgraph(self, ops: list[SourceOp], inputs: list[str], outputs: list[str],
                 inner: tuple) -> SourceGraph:
        """The ops `outputs` need, back to `inputs`; what else they read from
        outside context `inner` is captured."""
        producer = {v: op for op in ops for v in op.outputs}
        needed, stack, seen = set(), list(outputs), set(inputs)
        while stack:
            value = stack.pop()
            if value in seen:
                continue
            seen.add(value)
            op = producer.get(value)
            if op is not None and op.name not in needed:
                needed.add(op.name)
                stack.extend(op.inputs)
        kept = [op for op in ops if op.name in needed]
        made = set(inputs) | {v for op in kept for v in op.outputs}
        captures = [v for op in kept for v in op.inputs if v and v not in made]
        captures += [v for v in outputs if v not in made]
        for v in captures:
            if self.ctx.get(v, ())[:len(inner)] == inner:
                raise _refuse(self.producer[v], "is read inside its while loop or tf.cond "
                                                "other than through its Switch")
        info = {v: self.info[v] for v in made | set(captures) if v in self.info}
        return SourceGraph("tensorflow", kept, list(inputs), list(outputs), info,
                           captures=list(dict.fromkeys(captures)))


def _toposort(ops: list[SourceOp]) -> list[SourceOp]:
    producer = {v: op for op in ops for v in op.outputs}
    deps = {op.name: {producer[v].name for v in op.inputs if v in producer} for op in ops}
    return _kahn(ops, deps, "is on a cycle")


def _kahn(items: list, deps: dict[str, set[str]], cycle: str) -> list:
    """`items` (named) in an order where each comes after its `deps`, stable."""
    users: dict[str, list] = {}
    waiting = {item.name: len(deps[item.name]) for item in items}
    for item in items:
        for dep in deps[item.name]:
            users.setdefault(dep, []).append(item)
    ready = deque(item for item in items if not waiting[item.name])
    order = []
    while ready:
        item = ready.popleft()
        order.append(item)
        for user in users.get(item.name, []):
            waiting[user.name] -= 1
            if not waiting[user.name]:
                ready.append(user)
    if len(order) < len(items):
        stuck = next(item for item in items if waiting[item.name])
        raise ConversionError(f"{stuck.type} node '{stuck.name}' {cycle}",
                              details={"node": stuck.name, "op": stuck.type})
    return order


def rebuild(nodes: list[Node], info: dict[str, TensorInfo]) -> list[SourceOp]:
    """The graph's SourceOps with its v1 loops and conds as While / If ops."""
    state = _Rebuild(nodes, info)
    state.tensor_arrays()
    state.dedupe_switches()
    state.contexts()
    dropped, is_handle = arrays.handles(state.nodes)
    ops = state.build((), [n for n in state.nodes if n.name not in dropped])
    arrays.refuse_handle_reads(ops, is_handle)
    return ops


def shape_graph(tf, graph_def):
    """The graph imported for TensorFlow's shape inference only. TF infers no
    shape through a v1 loop (a non-constant Enter's and a loop Merge's are
    unknown), so each loop variable is made its initial value (Merge ->
    Identity of the Enter), then, where the body gives it another shape,
    relaxed to the dims both agree on (a PlaceholderWithDefault of that
    shape), until no loop variable changes: the shape the IR loop's state
    keeps. TensorArrays are read as rebuild() reads them (the stack of one a
    loop writes keeps TF's shape, from its element_shape)."""
    relaxed: dict = {}
    for _ in range(8):   # each round relaxes a dim at least; loops nest a few deep
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(_shape_copy(tf, graph_def, relaxed), name="")
        changed = False
        for node in graph_def.node:
            back = [graph.get_operation_by_name(i.split(":")[0]) for i in node.input
                    if not i.startswith("^")] if node.op == "Merge" else []
            back = [b for b in back if b.type == "NextIteration"]
            if not back:
                continue
            first = graph.get_tensor_by_name(f"{node.name}:0").shape
            both = first.most_specific_compatible_shape(back[0].inputs[0].shape)
            if both.rank != first.rank or (both.rank is not None and
                                           both.as_list() != first.as_list()):
                relaxed[node.name] = both
                changed = True
        if not changed:
            break
    return graph


def _shape_copy(tf, graph_def, relaxed: dict):
    copy = type(graph_def)()
    copy.CopyFrom(graph_def)
    by_name = {n.name: n for n in copy.node}

    def identity(node, source: str, dtype) -> None:
        node.op = "Identity"
        del node.input[:]
        node.input.append(source)
        type_attr = node.attr[dtype].type
        node.ClearField("attr")
        node.attr["T"].type = type_attr

    for node in list(copy.node):
        data = [i for i in node.input if not i.startswith("^")]
        if node.op == "Enter" and not node.attr["is_constant"].b:
            identity(node, data[0], "T")
        elif node.op == "Merge" and any(by_name.get(i.split(":")[0]) is not None and
                                        by_name[i.split(":")[0]].op == "NextIteration"
                                        for i in data):
            first = next(i for i in data if by_name[i.split(":")[0]].op != "NextIteration")
            identity(node, first, "T")
            if node.name in relaxed:
                node.op = "PlaceholderWithDefault"
                node.attr["dtype"].type = node.attr["T"].type
                del node.attr["T"]
                node.attr["shape"].shape.CopyFrom(relaxed[node.name].as_proto())
    arrays.for_shape_inference(tf, copy)
    return copy
