"""Module scopes of a SavedModel exported from Keras (issue 47,
x2/ir/scopes.py), read from names alone: the SavedModel keeps no layers,
only each variable's path (`transformer_layer_0/self_attention_layer/query/
kernel`) and each op's name scopes (`.../transformer_layer_0_1/
self_attention_layer_1/value_1/Add`).

A layer that holds layers is a proper prefix of a variable's layer path
(`transformer_layer_0`, `transformer_layer_0/self_attention_layer`): Keras
names a subclassed layer's variables after the layers above it (keras_hub's
blocks). A nested functional model's variables carry their own layer's name
only, so it is not found here (a .keras file is: keras_scopes.py).

An op is in such a layer where its name scopes spell the layer's path, each
name as written or with the number TensorFlow adds to a scope entered again
(`_1`); another spelling of the same layer is another call of it. The
classes are named after the layers (`transformer_layer_0` ->
`TransformerLayer`): the SavedModel records none."""
from __future__ import annotations

import re

from ...ir.scopes import Scope, encode
from ..common import SourceGraph
from .keras_scopes import camel_name, segments


def record(source: SourceGraph, variables: list[str] | None = None) -> None:
    """Set `source`'s ops' scopes and its modules, where its variables name
    layers that hold layers. `variables`: their paths, where the ops do not
    carry them (a graph frozen by TensorFlow)."""
    if variables is None:
        variables = [op.param for op in source.ops if op.const_value is not None]
    layers = {v.rpartition("/")[0] for v in variables if v.count("/") >= 2}
    holders = {"/".join(p.split("/")[:i]) for p in layers for i in range(1, p.count("/") + 1)}
    # A recurrent layer holds only its cell (lstm/lstm_cell/kernel): it is no
    # module of its own (x2 writes it as one nn.LSTM, or unrolls it step by step).
    below = {h: [p.rpartition("/")[2] for p in layers if p.rpartition("/")[0] == h]
             for h in holders}
    recurrent = {h for h, names in below.items()
                 if names and all(n.endswith("cell") for n in names)}
    holders = {h for h in holders if not any(h == r or h.startswith(r + "/")
                                             for r in recurrent)}
    if not holders:
        return
    children: dict[str, list[str]] = {}
    for holder in sorted(holders):
        parent, _, name = holder.rpartition("/")
        children.setdefault(parent, []).append(name)
    paths = {"": ""}
    for holder in sorted(holders, key=lambda h: h.count("/")):
        parent = holder.rpartition("/")[0]
        names = children[parent]
        segment = segments([(n, None) for n in names])[names.index(holder.rpartition("/")[2])]
        paths[holder] = f"{paths[parent]}.{segment}" if paths[parent] else segment
    classes = {h: camel_name(h.rpartition("/")[2]) for h in holders}
    calls: dict[str, dict[str, int]] = {}   # holder -> its spelled scope -> which call
    depth = None                            # where the first holder's scope sits in names
    for op in source.ops:
        chain, holder = [], ""
        parts = op.name.split("/")[:-1]
        for k, part in enumerate(parts):
            name = _spelled(part, children.get(holder, ()))
            if name is None:
                if chain or (depth is not None and k >= depth):
                    break
                continue
            if not chain:
                depth = k if depth is None else depth
                if k != depth:
                    break
            holder = f"{holder}/{name}" if holder else name
            spelled = calls.setdefault(holder, {})
            call = spelled.setdefault("/".join(parts[:k + 1]), len(spelled))
            chain.append(Scope(paths[holder], call, f"keras.Layer.{classes[holder]}"))
        op.scope = encode(chain)
    source.source_modules = {paths[h]: classes[h] for h in holders}


def _spelled(part: str, names) -> str | None:
    """The layer among `names` a name scope is (as named, or numbered again)."""
    if part in names:
        return part
    found = re.fullmatch(r"(.+)_\d+", part)
    return found.group(1) if found and found.group(1) in names else None
