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

from ...ir.scopes import DERIVED, Scope, decode, encode

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


@dataclass(frozen=True)
class Claim:
    """Node input `slot` of node `node` reads the source's weight `key`
    transposed by `perm` (None: as it is)."""
    node: int
    slot: int
    key: str
    perm: tuple | None


_FX_TARGET = re.compile(r"target=torch\.ops\.aten\.(\w+)\.")
_FX_PLACEHOLDER = re.compile(r"%([pb]_\w+)")


def weight_claims(model, scopes: FileScopes, shapes: dict[str, tuple],
                  keys: set[str]) -> list[Claim]:
    """The source's weights behind initializers torch.onnx renamed or shared.
    `shapes`: each initializer's shape; `keys`: those named by state_dict keys.

    - dynamo: a node's `pkg.torch.onnx.fx_node` names the parameter it read
      (`%p_model_layers_0_q_proj_weight`): a weight of the node's own module
      (its path + a leaf) that an `aten.linear` reads as the transposed table
      its MatMul reads, or that another module's equal initializer stands for
      (the exporter keeps one of equal tensors: RMSNorm weights of ones);
    - TorchScript: a leaf module whose one node is a MatMul reading a table
      no other node reads, named `onnx::MatMul_N` (the transpose of an
      nn.Linear's weight the exporter folded): that module's `weight`."""
    readers: dict[str, int] = {}
    per_path: dict[str, int] = {}
    for node, chain in zip(model.graph.node, scopes.chains):
        for value in node.input:
            readers[value] = readers.get(value, 0) + 1
        if chain and node.op_type != "Constant":
            path = _innermost(chain)
            per_path[path] = per_path.get(path, 0) + 1
    out = []
    for index, (node, chain) in enumerate(zip(model.graph.node, scopes.chains)):
        if not chain:
            continue
        path = _innermost(chain)
        props = {p.key: p.value for p in node.metadata_props}
        fx = props.get("pkg.torch.onnx.fx_node", "")
        if fx:
            claim = _dynamo_claim(index, node, fx, path, shapes, keys)
        elif node.op_type == "MatMul" and per_path.get(path) == 1 and \
                len(node.input) == 2 and node.input[1].startswith("onnx::MatMul") and \
                len(shapes.get(node.input[1], ())) == 2 and readers[node.input[1]] == 1 and \
                f"{path}.weight" not in keys and \
                not any(p.startswith(path + ".") for p in scopes.modules):
            claim = Claim(index, 1, f"{path}.weight", (1, 0))
        else:
            claim = None
        if claim is not None:
            out.append(claim)
    # a key claimed twice is no one weight
    counts: dict[str, int] = {}
    for claim in out:
        counts[claim.key] = counts.get(claim.key, 0) + 1
    return [c for c in out if counts[c.key] == 1]


def _innermost(chain: str) -> str:
    scopes = decode(chain)
    return scopes[-1].path if scopes else ""


def _dynamo_claim(index: int, node, fx: str, path: str, shapes: dict,
                  keys: set[str]) -> Claim | None:
    placeholders = _FX_PLACEHOLDER.findall(fx.partition("args = ")[2])
    target = _FX_TARGET.search(fx)
    if len(placeholders) != 1 or target is None or not path:
        return None
    prefix = f"{placeholders[0][:2]}{path.replace('.', '_')}_"
    leaf = placeholders[0][len(prefix):]
    if not placeholders[0].startswith(prefix) or not leaf.isidentifier():
        return None
    key = f"{path}.{leaf}"
    if key in keys:
        return None
    if target.group(1) == "linear" and node.op_type == "MatMul" and len(node.input) == 2 \
            and len(shapes.get(node.input[1], ())) == 2:
        return Claim(index, 1, key, (1, 0))
    shared = [slot for slot, value in enumerate(node.input) if value in keys]
    if len(shared) == 1:
        return Claim(index, shared[0], key, None)
    return None


def hoist_shared(ops: list) -> None:
    """Ops whose results the exporter shared across modules (the additive
    mask layer 0's attention computed and layer 1's reads again: torch.onnx
    merges equal subexpressions) take the scope their readers share, when
    they read nothing their own module computed: the value is then the
    parent's, passed down to each layer as in the source, and the layers
    read alike. Scopes only name where code is written; module_tree.py
    checks each class's nodes anyway. A hoisted op moves up to right after
    what it reads, so that the first layer's ops come in the order of the
    others'."""
    readers: dict[str, list] = {}
    for op in ops:
        for value in op.inputs:
            readers.setdefault(value, []).append(op)
    producer = {value: op for op in ops for value in op.outputs}
    hoisted = []
    changed = True
    while changed:
        changed = False
        for op in reversed(ops):
            chain = decode(op.scope)
            if not chain:
                continue
            inner = chain[-1]
            if any(_within(producer.get(value), inner) for value in op.inputs):
                continue
            users = [user for value in op.outputs for user in readers.get(value, [])]
            if not users or all(_within(user, inner) for user in users):
                continue
            shared = _common([chain, *(decode(user.scope) for user in users)])
            if len(shared) < len(chain):
                op.scope = encode(shared)
                hoisted.append(op)
                changed = True
    _move_up(ops, set(map(id, hoisted)))


def _move_up(ops: list, moved: set[int]) -> None:
    """The ops in `moved` right after the last op that computes what they read."""
    kept = [op for op in ops if id(op) not in moved]
    for op in [op for op in ops if id(op) in moved]:
        needed = set(op.inputs)
        at = max((i + 1 for i, other in enumerate(kept) if needed & set(other.outputs)),
                 default=0)
        kept.insert(at, op)
    ops[:] = kept


def _within(op, scope: Scope) -> bool:
    """Whether `op` ran in the call `scope` (or in a module under it)."""
    return op is not None and scope in decode(op.scope)


def _common(chains: list[list[Scope]]) -> list[Scope]:
    common = chains[0]
    for chain in chains[1:]:
        n = 0
        while n < min(len(common), len(chain)) and common[n] == chain[n]:
            n += 1
        common = common[:n]
    return common
