"""Module scopes on IR nodes (issue 47): which source modules' forward ran
the op a node computes, outermost first, as `node.source["scope"]`.

A torch frontend records them (torch.export's `nn_module_stack`, a trace's
scope names); so do the Keras reader, for layers that hold layers
(x2/frontends/tf/keras_scopes.py), the SavedModel readers, for those a
Keras export's variable paths name (x2/frontends/tf/savedmodel_scopes.py),
and the ONNX reader for a file torch exported (x2/frontends/onnx/scopes.py).
Passes keep a node's `source`, and a node made of several takes the scope
they share (`shared`). The Python emitters write a class per source module
from them (x2/emitters/module_tree.py). Other sources (other ONNX files,
frozen graphs) have no scopes: their nodes carry no "scope" key.

One scope is a module's path (its state_dict prefix, "model.layers.0"), the
call of that module it was (0 for the first; torch.export counts a module
called again), and its class's qualified name. An ONNX file from torch's
TorchScript exporter names paths only (x2/frontends/onnx/scopes.py): its
classes are named after the module's attribute, under DERIVED."""
from __future__ import annotations

from dataclasses import dataclass

# separators no module path or class name holds in practice; a name that
# holds one reads as a different scope, which at worst writes no class
_ITEM, _FIELD = "\x1f", "\x1e"
# the "module" of a class x2 named after its path (the source named none)
DERIVED = "x2.derived."


@dataclass(frozen=True)
class Scope:
    path: str     # "model.layers.0"
    call: int     # which call of that module (torch.export's "@1" suffix)
    cls: str      # "transformers.models.llama.modeling_llama.LlamaDecoderLayer"

    @property
    def key(self) -> str:
        """The call's identity: its path, and "@N" for a later call."""
        return self.path if not self.call else f"{self.path}@{self.call}"

    @property
    def name(self) -> str:
        """The class's own name (`LlamaDecoderLayer`)."""
        return self.cls.rpartition(".")[2]

    @property
    def derived(self) -> bool:
        """Whether the source named no class here (x2 named it, DERIVED)."""
        return self.cls.startswith(DERIVED)


def encode(chain: list[Scope]) -> str:
    return _ITEM.join(f"{s.path}{_FIELD}{s.call}{_FIELD}{s.cls}" for s in chain)


def decode(text: str | None) -> list[Scope]:
    out = []
    for item in (text or "").split(_ITEM):
        parts = item.split(_FIELD)
        if len(parts) != 3 or not parts[0]:
            continue
        try:
            call = int(parts[1])
        except ValueError:
            continue
        out.append(Scope(parts[0], call, parts[2]))
    return out


def of(node) -> list[Scope]:
    return decode((node.source or {}).get("scope"))


def shared(sources: list[dict]) -> str | None:
    """The scope a node made from nodes with these `source`s takes: the
    chain they all share (None where none of them has one)."""
    chains = [decode(s.get("scope")) for s in sources if s is not None]
    if not any(chains):
        return None
    return encode(common(chains))


def common(chains: list[list[Scope]]) -> list[Scope]:
    """The outermost scopes every chain starts with."""
    shared_part = chains[0]
    for chain in chains[1:]:
        n = 0
        while n < min(len(shared_part), len(chain)) and shared_part[n] == chain[n]:
            n += 1
        shared_part = shared_part[:n]
    return shared_part


def with_shared_scope(source: dict, sources: list[dict]) -> dict:
    """`source` (a fused node's provenance) with the scope its parts share."""
    scope = shared(sources)
    if scope is None:
        return source
    out = dict(source)
    if scope:
        out["scope"] = scope
    else:
        out.pop("scope", None)
    return out
