"""Provenance as data: what each IR value is in the source model, and what
the graph as a whole is (its source, interface and layout).

Mappers and passes set these; nothing decodes them from value names.
`x2 check --bisect` reads `Origin` to fetch the matching source tensor and
permute it like the converted value; emitters read `Origin.param` to name a
layer after the source parameter it holds.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence


@dataclass(frozen=True)
class Origin:
    """The value equals source tensor `tensor` with its axes permuted by
    `perm` (value = transpose(tensor, perm); None: not permuted). A learned
    weight that --for training kept may also be reshaped first (RESHAPES):
    value = transpose(tensor.reshape(s), perm) for the value's own shape. `param` is
    the source's parameter name (a state_dict key, a TF variable's name) when
    the value holds one; `trainable` whether the source learns it (a torch
    parameter, a trainable TF variable; not BatchNorm statistics or buffers):
    the emitters make exactly these trainable parameters of the output."""
    tensor: str
    perm: tuple[int, ...] | None = None
    param: str = ""
    trainable: bool = False
    # a value x2 computed from Keras weights: how (x2/ir/recipes.py), its
    # result reshaped to the value's shape
    recipe: list | None = None

    def permuted(self, perm: Sequence[int]) -> "Origin":
        """The origin of transpose(value, perm)."""
        base = self.perm if self.perm is not None else tuple(range(len(perm)))
        if len(base) != len(perm):
            raise ValueError(f"perm {list(perm)} does not fit a rank-{len(base)} value")
        composed = tuple(base[p] for p in perm)
        return Origin(self.tensor, None if composed == tuple(range(len(composed))) else composed,
                      self.param, self.trainable, self.recipe)

    def to_json(self) -> dict:
        return {"tensor": self.tensor, "perm": None if self.perm is None else list(self.perm),
                "param": self.param, **({"trainable": True} if self.trainable else {}),
                **({"recipe": self.recipe} if self.recipe is not None else {})}

    @staticmethod
    def from_json(d: dict) -> "Origin":
        return Origin(d["tensor"], None if d.get("perm") is None else tuple(d["perm"]),
                      d.get("param", ""), bool(d.get("trainable", False)), d.get("recipe"))


# Ops that only lay a weight out anew: their folded result is still the weight
# (transpose records its perm in the Origin; these keep the row-major order,
# so value.reshape(source shape) is the source tensor when perm is None).
RESHAPES = ("reshape", "squeeze", "unsqueeze")


def rearranges_weight(op: str, origin: "Origin | None") -> bool:
    """Whether `op` on a value of `origin` gives the same weight laid out anew
    (--for training folds only these on a learned weight)."""
    return op in ("transpose", "identity") or (
        op in RESHAPES and origin is not None and origin.perm is None and origin.trainable)


def looks_up_source_table(op: str, origin: "Origin | None", framework: str) -> bool:
    """Whether `op` reads rows of a torch source's learned table (GPT-2's
    position embedding at constant positions): it stays a node, so that the
    table stays a parameter at its state_dict key, which the source's
    state_dict then refreshes (x2/emitters/source_paths.py)."""
    return (op == "gather" and framework == "pytorch" and origin is not None
            and origin.trainable and bool(origin.param) and origin.perm is None)


def reshapes_keras_weight(op: str, origin: "Origin | None", state: dict) -> bool:
    """Whether `op` only reshapes a Keras weight that has a name in the
    converted model (`state`: GraphMeta.source_state, x2/frontends/tf/
    keras_weights.py): the result is still that weight, which
    load_source_checkpoint reshapes back (a conv bias Keras adds as
    [1, 1, 1, C]). A torch source's reshaped weights keep x2's names."""
    return op in RESHAPES and origin is not None and origin.perm is None and \
        "keras" in state.get(origin.param, {})


@dataclass
class GraphMeta:
    """Facts about the whole graph, set by the frontend and the layout passes."""
    source_framework: str = ""
    source_model: str = ""
    # source op type -> how many the model has (report.json "ops_seen")
    source_ops: dict[str, int] = field(default_factory=dict)
    # "NHWC" when the source's image tensors are channels-last (TF), else ""
    source_layout: str = ""
    io_layout: str = "source"     # "source" | "nchw" (--io-layout)
    layout: str = "nchw"          # inside the converted model: "nchw" | "nhwc"
    # interface value -> {"role": "input"|"output", "perm": [...]}: what --io-layout changed
    io_transposes: dict[str, dict] = field(default_factory=dict)
    opset: int | None = None      # ONNX sources: the model's opset
    # interface value -> the symbol of each axis, None where static or unnamed
    # (x2/ir/symbols.py): the same symbol is the same size at run time
    dims: dict[str, list] = field(default_factory=dict)
    # symbol -> the size the source was captured or given at (torch's example)
    dim_examples: dict[str, int] = field(default_factory=dict)
    # torch sources: the module's state_dict key -> {"shape": [...], "tied": the
    # first key holding the same tensor}, and module path -> class name: where
    # the emitters put each weight (x2/emitters/source_paths.py); Keras models:
    # the modules only (x2/frontends/tf/keras_scopes.py)
    source_state: dict[str, dict] = field(default_factory=dict)
    source_modules: dict[str, str] = field(default_factory=dict)
    # the root module's class (qualified name), which model.py's Model stands for
    source_class: str = ""

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "GraphMeta":
        known = GraphMeta.__dataclass_fields__
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ValueError(f"graph meta has unknown fields {unknown}")
        return GraphMeta(**d)
