"""Module scopes of a Keras model (issue 47, x2/ir/scopes.py): which of its
layers that hold layers (a nested functional model or Sequential, a
subclassed layer such as keras_hub's TransformerEncoder, Keras's own
MultiHeadAttention) ran each op of the traced graph. Plain layers (Dense,
Conv2D, ...) are no scopes: x2 writes each as one call anyway.

The ops a layer's call made are those the traced graph gained while its
`call` ran (recording(), around the trace): exact where name scopes are
not (TensorFlow numbers a scope entered again, `block_1`, which another
layer may be called).

A scope's path is the layer names from the model down, joined by "."
(`transformer_layer_0.self_attention_layer`); siblings named `stem_0`,
`stem_1`, ... (or from `stem_1`) of one class read as a list `stems.0`,
`stems.1`, which the module tree writes as a loop. Its class is the layer's class; a functional
model or Sequential, whose class says nothing, is named after the model
(`block_0` -> `Block`)."""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from ...ir.scopes import Scope, encode

# Keras's own model classes, which hold whatever layers they were built with
_GENERIC_MODELS = {"Functional", "Sequential"}


@dataclass
class Recorded:
    """What recording() found: op name -> its scopes (encoded), module path
    -> class name (GraphMeta.source_modules) and the model's class."""
    op_scopes: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    root_class: str = ""
    # the traced function's (captured tensor, placeholder) pairs (keras_weights.py)
    captures: list = field(default_factory=list)


def _children(layer) -> list:
    return list(layer._flatten_layers(include_self=False, recursive=False))


def _holds_layers(layer) -> bool:
    """Whether the layer is a module of its own: it holds layers, and is no
    recurrent layer (its cell is its own, and x2 writes it as one nn.LSTM,
    or unrolls it with provenance per step)."""
    import keras
    if isinstance(layer, (keras.layers.RNN, keras.layers.Bidirectional)):
        return False
    return any(type(c).__name__ != "InputLayer" for c in _children(layer))


def _class_of(layer) -> str:
    kind = type(layer)
    if kind.__name__ in _GENERIC_MODELS and kind.__module__.startswith("keras."):
        return f"keras.{kind.__name__}.{camel_name(layer.name)}"
    return f"{kind.__module__}.{kind.__qualname__}"


def camel_name(name: str) -> str:
    """A class name for a layer named `name` (`block_0` -> `Block`)."""
    stem = re.sub(r"(_\d+)+$", "", name) or "block"
    camel = "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", stem) if p)
    return camel or "Block"


def segments(children: list[tuple[str, object]]) -> list[str]:
    """Each child's path segment, given (name, kind) per child: its name, or
    `stems.N` for a run `stem_0`, `stem_1`, ... (or from `stem_1`, as ViT
    numbers its blocks) of one kind (a list the tree loops over)."""
    out = [name for name, _kind in children]
    runs: dict[tuple, dict[int, int]] = {}
    for position, (name, kind) in enumerate(children):
        found = re.fullmatch(r"(.+)_(\d+)", name)
        if found:
            runs.setdefault((found.group(1), kind), {})[int(found.group(2))] = position
    for (stem, _kind), items in runs.items():
        plural = stem + ("_list" if stem.endswith("s") else "s")
        first = min(items)
        if len(items) < 2 or first > 1 or sorted(items) != list(range(first, first + len(items))) \
                or plural in out:
            continue
        for index, position in items.items():
            out[position] = f"{plural}.{index - first}"
    return out


def _scoped_layers(model) -> dict[int, tuple]:
    """Layer id -> (layer, path, class) for every layer under `model` that
    holds layers; a layer reached twice keeps its first path."""
    found: dict[int, tuple] = {}

    def walk(layer, prefix: str) -> None:
        children = _children(layer)
        named = segments([(c.name, type(c)) for c in children])
        for child, segment in zip(children, named):
            if id(child) in found or not _holds_layers(child):
                continue
            path = f"{prefix}{segment}"
            found[id(child)] = (child, path, _class_of(child))
            walk(child, path + ".")
    walk(model, "")
    return found


@contextmanager
def recording(tf, model, out: Recorded):
    """While the model is traced, each scoped layer's `call` notes which ops
    the graph gained; finish() turns the notes into `out`."""
    layers = _scoped_layers(model) if hasattr(model, "_flatten_layers") else {}  # (Keras)
    spans: list[tuple] = []   # (graph, first op index, end index, path, class)
    for layer, path, cls in layers.values():
        layer.call = _noting_call(tf, layer.call, path, cls, spans)
    try:
        yield lambda graph: _finish(graph, spans, layers, model, out)
    finally:
        for layer, _path, _cls in layers.values():
            del layer.call


def _noting_call(tf, call, path: str, cls: str, spans: list):
    def noted(*args, **kwargs):
        graph = tf.compat.v1.get_default_graph()
        start = len(graph.get_operations())
        try:
            return call(*args, **kwargs)
        finally:
            spans.append((graph, start, len(graph.get_operations()), path, cls))
    return noted


def _finish(graph, spans: list, layers: dict, model, out: Recorded) -> None:
    """The scopes of `graph`'s ops (the traced function's graph: calls
    Keras made elsewhere, to infer shapes, count for nothing)."""
    mine = sorted((s for s in spans if s[0] is graph), key=lambda s: (s[1], -s[2]))
    calls: dict[str, int] = {}
    numbered = []
    for _graph, start, end, path, cls in mine:
        numbered.append((start, end, Scope(path, calls.get(path, 0), cls)))
        calls[path] = calls.get(path, 0) + 1
    operations = graph.get_operations()
    for index, op in enumerate(operations):
        chains = [scope for start, end, scope in numbered if start <= index < end]
        if chains:
            out.op_scopes[op.name] = encode(chains)
    if layers:
        out.modules = {path: cls.rpartition(".")[2] for _layer, path, cls in layers.values()}
        out.root_class = _class_of(model)
