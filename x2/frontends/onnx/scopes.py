"""Module scopes of an ONNX file exported from torch (issue 47): which
source module computed each node, as x2/ir/scopes.py writes them, so that
the Python emitters write the source's tree of classes (module_tree.py).

torch.onnx writes them two ways:

- the dynamo exporter (`dynamo=True`): each node's metadata_props
  `pkg.torch.onnx.name_scopes` (`['', 'model', 'model.layers.0', ...,
  'linear']`) and `pkg.torch.onnx.class_hierarchy` (the root's class, each
  module's qualified class, ..., the ATen op): a path and a class per level;
- the TorchScript exporter (`dynamo=False`): node names such as
  `/model/layers.0/self_attn/q_proj/MatMul`, each part a module's name in
  its parent: paths, no classes. A class is then named after the module's
  attribute (`self_attn`: `SelfAttn`, `layers.0`: `Layer`), marked derived
  (x2/ir/scopes.py DERIVED): module_tree.py lets such modules share a class
  where their code is the same, whatever their names.

A file says neither which call of a module a node belongs to; as in a
torch trace (x2/frontends/torch/trace.py), a module entered again after
nodes outside it ran is its next call, and a module called more than once
stays inline in its parent. Only files torch wrote (producer "pytorch")
are read so: another tool's names need not be module paths."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from ...ir.scopes import DERIVED, Scope, encode

NAME_SCOPES = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY = "pkg.torch.onnx.class_hierarchy"


@dataclass
class FileScopes:
    chains: list[str]                                   # per node, as scopes.encode writes it
    modules: dict[str, str] = field(default_factory=dict)   # path -> class name
    root_class: str = ""                                # the exported module's class


def read_scopes(model) -> FileScopes | None:
    """The scopes of `model`'s top-level nodes, or None where it has none."""
    if model.producer_name != "pytorch":
        return None
    levels = [None if node.op_type == "Constant" else _levels(node)
              for node in model.graph.node]
    if not any(levels):
        return None
    out = FileScopes([])
    classes: dict[str, str] = {}
    calls: dict[str, int] = {}
    current: list[str] = []
    for node, chain in zip(model.graph.node, levels):
        if chain is None:    # no scope written (a Constant): not a step of any call
            out.chains.append("")
            continue
        paths = [path for path, _ in chain]
        same = 0
        while same < min(len(paths), len(current)) and paths[same] == current[same]:
            same += 1
        for path in paths[same:]:
            calls[path] = calls.get(path, -1) + 1
        current = paths
        for path, cls in chain:
            classes.setdefault(path, cls)
        # a path that names two classes is no one module: its scope ends there
        kept = []
        for path, cls in chain:
            if classes[path] != cls:
                break
            kept.append(Scope(path, calls[path], cls))
        out.chains.append(encode(kept))
        if not out.root_class:
            out.root_class = _root_class(node)
    out.modules = {path: cls.rpartition(".")[2] for path, cls in classes.items()}
    return out


def _levels(node) -> list[tuple[str, str]] | None:
    """(module path, qualified class) of each module around `node`,
    outermost first; None where the node records none."""
    props = {p.key: p.value for p in node.metadata_props}
    if NAME_SCOPES in props:
        return _dynamo_levels(props)
    return _torchscript_levels(node.name)


def _dynamo_levels(props: dict) -> list[tuple[str, str]] | None:
    names, classes = _string_list(props.get(NAME_SCOPES)), \
        _string_list(props.get(CLASS_HIERARCHY))
    if names is None or classes is None or len(names) != len(classes) or len(names) < 2:
        return None
    # the first level is the root module, the last the op itself
    out = []
    for path, cls in zip(names[1:-1], classes[1:-1]):
        if not _nested(path, out[-1][0] if out else ""):
            break
        out.append((path, cls))
    return out


def _torchscript_levels(name: str) -> list[tuple[str, str]] | None:
    if not name.startswith("/"):
        return None
    parts = name.split("/")[1:-1]
    out = []
    for part in parts:
        if not part or not all(_IDENT.match(p) for p in part.split(".")):
            break
        path = f"{out[-1][0]}.{part}" if out else part
        out.append((path, DERIVED + _class_name(path)))
    return out


def _root_class(node) -> str:
    props = {p.key: p.value for p in node.metadata_props}
    classes = _string_list(props.get(CLASS_HIERARCHY))
    return classes[0] if classes else ""


_IDENT = re.compile(r"^(?:[A-Za-z_]\w*|\d+)$")


def _nested(path: str, parent: str) -> bool:
    """Whether `path` is a module path right under `parent` or deeper."""
    if parent and not path.startswith(parent + "."):
        return False
    return bool(path) and all(_IDENT.match(p) for p in path.split("."))


def _string_list(text: str | None) -> list[str] | None:
    if not text:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return value


def _class_name(path: str) -> str:
    """A class name from a module's attribute (`self_attn`: SelfAttn); an
    item of a list from the list's name, singular (`layers.0`: Layer)."""
    parts = path.split(".")
    name = parts[-1]
    if name.isdigit() and len(parts) > 1:
        name = parts[-2]
        if len(name) > 3 and name.endswith("s") and not name.endswith("ss"):
            name = name[:-1]
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    return "".join(w[:1].upper() + w[1:] for w in words) or "Block"
