"""Transpose elimination: the NHWC -> NCHW layout pass.

Frontends wrap every layout-sensitive op of an NHWC graph in a Transpose
pair (to NCHW and back). This pass then, until nothing changes:
  * pushes a Transpose down through ops that do not care about layout (each
    IR op declares how in x2/ir/ops.py: elementwise, reduce, axis, pad),
    permuting their constants, axes or pads instead;
  * merges consecutive Transposes and drops the ones that cancel;
  * turns Transpose -> Flatten -> MatMul(const) into Flatten -> MatMul with the
    weight rows permuted once, at conversion time.
What is left is what the math needs: typically one Transpose per NHWC input.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, TensorInfo, recipes
from ..ir.ops import OPS


def _inverse(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _permute_shape(shape, perm):
    return None if shape is None else tuple(shape[i] for i in perm)


class _Rewriter:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.changed = False
        # (input value, perm) -> output of an existing Transpose, to reuse it.
        self.existing = {(n.inputs[0], tuple(n.attrs["perm"])): n.outputs[0]
                         for n in graph.nodes if n.op == "transpose"}

    def transpose_of(self, value: str) -> Node | None:
        node = self.graph.producer(value)
        return node if node is not None and node.op == "transpose" else None

    def add_transpose(self, value: str, perm: list[int], output: str, source: dict) -> None:
        self.graph.add_node("transpose", [value], attrs={"perm": list(perm)},
                            name=self.graph.fresh_name("transpose"), outputs=[output],
                            source=source)
        self.graph.derive_origin(output, value, perm)
        self.existing.setdefault((value, tuple(perm)), output)

    def transposed(self, value: str, perm: list[int], source: dict) -> str:
        """`value` transposed by `perm`, reusing a Transpose the graph already has."""
        key = (value, tuple(perm))
        if key not in self.existing:
            self.add_transpose(value, perm, self.graph.fresh_name("transposed"), source)
            info = self.graph.info.get(value)
            if info is not None:
                self.graph.info[self.existing[key]] = TensorInfo(
                    info.dtype, _permute_shape(info.shape, perm))
        return self.existing[key]

    def retarget_output(self, node: Node, perm: list[int]) -> None:
        """`node` now computes the un-permuted result; restore its old output
        name behind a Transpose with `perm`."""
        old = node.outputs[0]
        info = self.graph.info.get(old)
        new = self.graph.fresh_name(old.split("/")[-1] + "_nchw")
        node.outputs = [new]
        self.graph.derive_origin(new, old, _inverse(perm))
        if info is not None:
            self.graph.info[new] = TensorInfo(info.dtype, _permute_shape(info.shape,
                                                                         _inverse(perm)))
        if perm != list(range(len(perm))):
            self.add_transpose(new, perm, old, node.source)
        else:
            self.graph.add_node("identity", [new], outputs=[old], name=old)
        self.changed = True

    # -- rules --------------------------------------------------------------
    def merge(self, node: Node) -> None:
        inner = self.transpose_of(node.inputs[0])
        perm = node.attrs["perm"]
        if inner is not None:
            composed = [inner.attrs["perm"][i] for i in perm]
            node.inputs = [inner.inputs[0]]
            node.attrs = {"perm": composed}
            perm = composed
            self.changed = True
        if perm == list(range(len(perm))):
            node.op, node.attrs = "identity", {}
            self.changed = True
            return
        twin = self.existing.setdefault((node.inputs[0], tuple(perm)), node.outputs[0])
        if twin != node.outputs[0] and self.graph.producer(twin) is not None:
            node.op, node.inputs, node.attrs = "identity", [twin], {}
            self.changed = True

    def push(self, node: Node) -> None:
        kind = OPS[node.op].layout if node.op in OPS else None
        if kind is None or len(node.outputs) != 1:
            return
        data = [v for v in node.inputs if v and v not in self.graph.constants]
        transposes = [self.transpose_of(v) for v in data]
        perms = {tuple(t.attrs["perm"]) for t in transposes if t is not None}
        if len(perms) != 1:
            return
        perm = list(perms.pop())
        rank = len(perm)
        inv = _inverse(perm)
        plain = [v for v, t in zip(data, transposes) if t is None]
        if plain:
            # Inputs in the other layout need a Transpose of their own: worth it
            # only when the graph already has it or more Transposes go than come.
            if kind not in ("elementwise", "axis") or any(
                    len(self.graph.shape(v) or ()) != rank for v in plain):
                return
            cost = sum(1 for v in plain if (v, tuple(inv)) not in self.existing)
            if cost >= len(data) - len(plain):
                return
        new_inputs = []
        for v in node.inputs:
            if v in self.graph.constants:
                const = self.graph.constants[v]
                if const.ndim > rank or (kind != "elementwise" and const.ndim != rank):
                    return
                if const.size != 1 or const.ndim == rank:
                    expanded = const.reshape((1,) * (rank - const.ndim) + const.shape)
                    permuted = self.graph.add_constant(
                        v + "_nchw", np.ascontiguousarray(expanded.transpose(inv)))
                    if const.ndim == rank:
                        self.graph.derive_origin(permuted, v, inv)
                    elif _is_learned(self.graph, v) and sum(d != 1 for d in const.shape) <= 1:
                        # One axis of size > 1 moved among 1s: the same elements in
                        # the same order, so still the learned weight (--for training).
                        self.graph.derive_origin(permuted, v)
                    else:   # a Keras weight, or computed from them (x2/ir/recipes.py)
                        recipes.note(self.graph, permuted, _permuted_recipe(
                            self.graph, v, list(expanded.shape), inv))
                    v = permuted
                new_inputs.append(v)
            elif v in plain:
                new_inputs.append(self.transposed(v, inv, node.source))
            elif v:
                new_inputs.append(self.transpose_of(v).inputs[0])
            else:
                new_inputs.append(v)
        out_perm = perm
        attrs = dict(node.attrs)
        if kind == "axis":
            attrs["axis"] = perm[attrs["axis"] % rank]
        elif kind == "slice":
            attrs["axes"] = [perm[a] for a in attrs["axes"]]
        elif kind == "pad":
            pads = attrs["pads"]
            begin, end = [0] * rank, [0] * rank
            for i in range(rank):
                begin[perm[i]], end[perm[i]] = pads[i], pads[i + rank]
            attrs["pads"] = begin + end
        elif kind == "reduce":
            axes = attrs["axes"]
            attrs["axes"] = sorted(perm[a] for a in axes)
            if not attrs["keepdims"]:
                kept = [perm[i] for i in range(rank) if i not in axes]
                out_perm = [sorted(kept).index(v) for v in kept]
        node.inputs = new_inputs
        node.attrs = attrs
        self.retarget_output(node, out_perm)

    def flatten_into_weights(self, node: Node) -> None:
        """reshape(T(x)) -> matmul(W) becomes reshape(x) -> matmul(W with rows permuted)."""
        inner = self.transpose_of(node.inputs[0])
        out_shape = self.graph.shape(node.outputs[0])
        in_shape = self.graph.shape(node.inputs[0])
        if inner is None or out_shape is None or in_shape is None or len(out_shape) != 2:
            return
        perm = inner.attrs["perm"]
        if perm[0] != 0 or any(d is None for d in in_shape[1:]):
            return
        # Only a flatten that keeps dim 0 ([N, ...] -> [N, rest]) lines rows up.
        if out_shape[1] != int(np.prod(in_shape[1:])):
            return
        users = self.graph.users(node.outputs[0])
        if not users or node.outputs[0] in self.graph.outputs:
            return
        if any(u.op not in ("matmul", "dense") or u.inputs[0] != node.outputs[0]
               or u.inputs[1] not in self.graph.constants for u in users):
            return
        inv = _inverse(perm)
        # Weight rows follow the flattened order of T(x); re-index them by x's order.
        axes = [inv[j] - 1 for j in range(1, len(perm))] + [len(perm) - 1]
        for user in users:
            weight = self.graph.constants[user.inputs[1]]
            rows = weight.reshape(tuple(in_shape[1:]) + (weight.shape[1],))
            permuted = np.ascontiguousarray(rows.transpose(axes)).reshape(weight.shape)
            rows_first = self.graph.add_constant(user.inputs[1] + "_nchw", permuted)
            reordered = _permuted_recipe(self.graph, user.inputs[1], list(rows.shape), axes)
            recipes.note(self.graph, rows_first,
                         None if reordered is None else ["r", list(weight.shape), reordered])
            user.inputs = [user.inputs[0], rows_first, *user.inputs[2:]]
        node.inputs = [inner.inputs[0]]
        # The flattened rows are now in x's order: no longer the source's tensor.
        self.graph.origin.pop(node.outputs[0], None)
        self.changed = True


def _permuted_recipe(graph: Graph, value: str, shape: list, perm) -> list | None:
    """The recipe of constant `value` reshaped to `shape`, then transposed by
    `perm` (x2/ir/recipes.py), or None where `value` has none."""
    if not graph.meta.source_state:
        return None
    part = recipes.recipe_of(graph, value)
    return None if part is None else ["t", [int(p) for p in perm], shape, part]


def eliminate_transposes(graph: Graph, max_rounds: int = 100) -> Graph:
    for _ in range(max_rounds):
        rewriter = _Rewriter(graph)
        for node in list(graph.nodes):
            if node.op == "transpose":
                rewriter.merge(node)
            elif node.op == "reshape":
                rewriter.flatten_into_weights(node)
            else:
                rewriter.push(node)
        graph.toposort()
        graph.remove_unused()
        if not rewriter.changed:
            break
    return graph


def _as_reshape_target(shape, perm) -> list[int] | None:
    """The reshape equal to this transpose, or None. A transpose that keeps
    the order of every axis that may be longer than 1 only moves unit axes:
    the data order is unchanged ([N, 1, 1, C] -> [N, C, 1, 1] in a
    squeeze-excite block)."""
    if shape is None:
        return None
    moved = [p for p in perm if shape[p] != 1]
    if moved != sorted(moved):
        return None
    target = []
    for i, p in enumerate(perm):
        if shape[p] is not None:
            target.append(shape[p])
        elif p == i:
            target.append(0)  # copy the input's dim at this position
        else:
            target.append(-1)
    return target if target.count(-1) <= 1 else None


def _merged_target(first: list[int], second: list[int]) -> list[int] | None:
    """reshape(reshape(x, first), second) as one reshape of x, or None."""
    merged = []
    for i, d in enumerate(second):
        if d != 0:
            merged.append(d)
        elif i < len(first):
            # a number; 0 (x's own dim i); or -1, inferred the same way again
            # as long as it stays the only unknown (checked by the caller)
            merged.append(first[i])
        else:
            return None
    return merged


def transposes_to_reshapes(graph: Graph) -> Graph:
    """Turn the transposes that only move unit axes into reshapes, and merge
    each reshape into the reshape that feeds it."""
    for node in graph.nodes:
        if node.op != "transpose":
            continue
        info = graph.info.get(node.inputs[0])
        target = _as_reshape_target(info.shape if info else None, node.attrs["perm"])
        if target is not None:
            node.op, node.attrs = "reshape", {"shape": target}
    for node in graph.nodes:
        if node.op != "reshape":
            continue
        first = graph.producer(node.inputs[0])
        if first is None or first.op != "reshape" or node.inputs[0] in graph.outputs:
            continue
        merged = _merged_target(first.attrs["shape"], node.attrs["shape"])
        if merged is not None and merged.count(-1) <= 1:
            node.inputs = [first.inputs[0]]
            node.attrs = {**node.attrs, "shape": merged}
    return graph.remove_unused()


def _is_learned(graph, value: str) -> bool:
    origin = graph.origin.get(value)
    return origin is not None and origin.trainable and origin.perm is None
