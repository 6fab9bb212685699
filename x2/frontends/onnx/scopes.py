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

from ...ir.scopes import DERIVED, Scope, common, decode, encode

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

    - dynamo: a node's `pkg.torch.onnx.fx_node` names the parameters its ATen
      op read (`%p_model_layers_0_q_proj_weight`, lower-cased): weights of
      the node's own module (its path + a leaf). An `aten.linear`'s MatMul
      reads the first as the transposed table, its Add the second (the
      bias); any other node reads them as the initializers named by other
      keys it reads, in order (the exporter keeps one of equal tensors:
      RMSNorm weights of ones, zero biases);
    - TorchScript: a leaf module whose nodes are a MatMul reading a table no
      other node reads, named `onnx::MatMul_N` (the transpose of an
      nn.Linear's weight the exporter folded), and at most an Add of its
      `bias`: that module's `weight`.

    A key two different tensors would hold is claimed by neither."""
    readers: dict[str, int] = {}
    per_path: dict[str, list] = {}
    for node, chain in zip(model.graph.node, scopes.chains):
        for value in node.input:
            readers[value] = readers.get(value, 0) + 1
        if chain:
            per_path.setdefault(_innermost(chain), []).append(node)
    out = []
    for index, (node, chain) in enumerate(zip(model.graph.node, scopes.chains)):
        if not chain:
            continue
        path = _innermost(chain)
        props = {p.key: p.value for p in node.metadata_props}
        fx = props.get("pkg.torch.onnx.fx_node", "")
        if fx:
            out += _dynamo_claims(index, node, fx, path, shapes, keys)
        elif _linear_leaf(node, path, per_path[path], shapes, keys, readers, scopes.modules):
            out.append(Claim(index, 1, f"{path}.weight", (1, 0)))
    held: dict[str, set] = {}
    for claim in out:
        value = model.graph.node[claim.node].input[claim.slot]
        held.setdefault(claim.key, set()).add((value, claim.perm))
    return [c for c in out if len(held[c.key]) == 1]


def _innermost(chain: str) -> str:
    scopes = decode(chain)
    return scopes[-1].path if scopes else ""


def _dynamo_claims(index: int, node, fx: str, path: str, shapes: dict,
                   keys: set[str]) -> list[Claim]:
    placeholders = _FX_PLACEHOLDER.findall(fx.partition("args = ")[2])
    target = _FX_TARGET.search(fx)
    if not placeholders or target is None or not path:
        return []
    wanted = []
    for placeholder in placeholders:
        prefix = f"{placeholder[:2]}{path.replace('.', '_')}_".lower()
        leaf = placeholder[len(prefix):]
        if not placeholder.lower().startswith(prefix) or not leaf.isidentifier():
            return []
        wanted.append(f"{path}.{leaf}")
    # a key the file names itself is that initializer's (a tied table read
    # as the head's transposed table stays x2's own)
    return [c for c in _claims_of(index, node, target.group(1), wanted, shapes, keys)
            if c.key not in keys]


def _claims_of(index: int, node, target: str, wanted: list[str], shapes: dict,
               keys: set[str]) -> list[Claim]:
    inputs = list(node.input)
    if target == "linear":
        if node.op_type == "MatMul" and len(inputs) == 2 and \
                len(shapes.get(inputs[1], ())) == 2 and inputs[1] not in keys:
            return [Claim(index, 1, wanted[0], (1, 0))]
        tables = [slot for slot, value in enumerate(inputs) if len(shapes.get(value, ())) == 1]
        if node.op_type == "Add" and len(wanted) == 2 and len(tables) == 1:
            return [Claim(index, tables[0], wanted[1], None)]
        return []
    shared = [slot for slot, value in enumerate(inputs) if value in keys]
    if len(shared) != len(wanted):
        return []
    return [Claim(index, slot, key, None) for slot, key in zip(shared, wanted)]


def _linear_leaf(node, path: str, nodes: list, shapes: dict, keys: set, readers: dict,
                 modules: dict) -> bool:
    """Whether `node` is the MatMul of a TorchScript-exported nn.Linear at `path`
    (see weight_claims)."""
    if node.op_type != "MatMul" or len(node.input) != 2 or f"{path}.weight" in keys or \
            any(p.startswith(path + ".") for p in modules):
        return False
    table = node.input[1]
    if not table.startswith("onnx::MatMul") or len(shapes.get(table, ())) != 2 or \
            readers[table] != 1:
        return False
    others = [n for n in nodes if n is not node and n.op_type != "Constant"]
    return all(n.op_type == "Add" and f"{path}.bias" in n.input and
               node.output[0] in n.input for n in others) and len(others) <= 1


def hoist_shared(ops: list) -> None:
    """Ops whose results the exporter shared across repeated modules (the
    additive mask layer 0's attention computed and layer 1's reads again:
    torch.onnx merges equal subexpressions) take the scope their readers
    share, when they read nothing the modules they leave computed: the value
    is then the parent's, passed down to each layer as in the source, and
    the layers read alike. A reader counts where its module and the op's
    part at two modules of one class (`layers.0` and `layers.1`); a value
    one module passes to the next (an activation to a Linear) stays.
    Scopes only name where code is written; module_tree.py checks each
    class's nodes anyway. A hoisted op moves up to right after what it
    reads, so that the first layer's ops come in the order of the others'."""
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
            users = [decode(user.scope) for value in op.outputs
                     for user in readers.get(value, [])]
            if not chain or not any(_repeated(chain, user) for user in users):
                continue
            shared = common([chain, *users])
            left = chain[len(shared)]
            if any(_within(producer.get(value), left) for value in op.inputs):
                continue
            op.scope = encode(shared)
            hoisted.append(op)
            changed = True
    _move_up(ops, set(map(id, hoisted)))


def _repeated(chain: list[Scope], other: list[Scope]) -> bool:
    """Whether two scope chains part at two modules of one class."""
    for mine, theirs in zip(chain, other):
        if mine != theirs:
            return mine.cls == theirs.cls
    return False


def _move_up(ops: list, moved: set[int]) -> None:
    """The ops in `moved` right after the last op that computes what they
    read from other ops; the constants they read come along (a constant may
    move up anywhere)."""
    kept = [op for op in ops if id(op) not in moved]
    for op in [op for op in ops if id(op) in moved]:
        needed = set(op.inputs)
        made = [i for i, other in enumerate(kept) if needed & set(other.outputs)]
        at = max((i + 1 for i in made if kept[i].inputs), default=0)
        constants = [kept[i] for i in made if not kept[i].inputs and i >= at]
        kept = [other for other in kept if all(other is not c for c in constants)]
        kept[at:at] = [*constants, op]
    ops[:] = kept


def _within(op, scope: Scope) -> bool:
    """Whether `op` ran in the call `scope` (or in a module under it)."""
    return op is not None and scope in decode(op.scope)
