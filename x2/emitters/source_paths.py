"""The source's names in the generated model (issue 47, first step): where a
torch source's state_dict key (`model.layers.0.self_attn.q_proj.weight`)
names a parameter, buffer or layer of the converted model, it sits at that
path in nested containers (`self.model.layers[0].self_attn.q_proj`), so the
converted model's state_dict has the source's keys. A weight that cannot sit
there (a name that is no Python attribute, a layout the target's strict load
would not accept, a path another weight took) keeps x2's flat name, and
report.json says which ("source_names")."""
from __future__ import annotations

import keyword

# IR layer kinds -> what the source's module class is called when it is that layer
# (a tied table picks the alias whose module is the layer x2 writes).
_KIND_CLASS = {"embedding": "embedding", "linear": "linear", "norm": "norm", "bn": "batchnorm",
               "conv": "conv", "deconv": "convtranspose"}


class SourceTree:
    """The generated model's tree of containers at the source's paths.
    `state`: source state_dict key -> {"shape": [...], "tied": the first key
    holding the same tensor}; `modules`: module path -> class name (both
    GraphMeta, from the torch frontend). `reserved`: attributes of the
    framework's base class, which no path segment may replace.
    `source_layout`: the target loads the source's own arrays (torch's strict
    load_state_dict), so a weight x2 laid out anew stays off the source path."""

    def __init__(self, state: dict, modules: dict, reserved, module_ctor: str,
                 list_ctor: str, source_layout: bool, lines: list):
        self.state = state
        self.modules = modules
        self.reserved = set(reserved)
        self.module_ctor, self.list_ctor = module_ctor, list_ctor
        self.source_layout = source_layout
        self.children: dict[str, set[str]] = {}
        for path in [*modules, *state]:
            parts = path.split(".")
            for i in range(1, len(parts) + 1):
                self.children.setdefault(".".join(parts[:i - 1]), set()).add(parts[i - 1])
        self.declared: dict[str, str] = {}      # path -> "container" | "item" | "leaf"
        self.expressions: dict[str, str] = {}   # declared key -> its attribute path
        # where `self.PATH = CTOR` lines go (ModuleCode.submodules): a container
        # before what it holds, aliases after what they alias
        self.lines = lines
        # converted key -> (source key, perm, shape): load_source_checkpoint's table
        self.layouts: dict[str, tuple] = {}
        self.renamed: dict[str, str] = {}        # converted key -> the source key it holds

    @property
    def active(self) -> bool:
        return bool(self.state)

    def top_names(self) -> set[str]:
        return set(self.children.get("", ()))

    def fits(self, origin, shape) -> bool:
        """Whether a value of `origin` and `shape` can sit at its source key."""
        if origin is None or origin.param not in self.state:
            return False
        if not self.source_layout:
            return True
        return origin.perm is None and list(shape) == list(self.state[origin.param]["shape"])

    def module_path(self, keys: dict[str, str], kind: str) -> str | None:
        """The module path a layer with parameters `keys` (its parameter ->
        source key) sits at: the module every key is that parameter of; of
        tied aliases, the one whose source module is this kind of layer."""
        paths = None
        for param, key in keys.items():
            options = {k[:-len(param) - 1] for k in self.tied_keys(key) if k.endswith("." + param)}
            paths = options if paths is None else paths & options
        if not paths:
            return None
        wanted = _KIND_CLASS.get(kind, kind)
        fitting = sorted(p for p in paths if wanted in self.modules.get(p, "").lower())
        return (fitting or sorted(paths))[0]

    def place(self, path: str) -> str | None:
        """Declare a leaf (layer, parameter or buffer) at `path` and return its
        attribute path (`model.layers[0].mlp`), or None where it cannot go there."""
        written = self.attribute(path)
        if written is None or self._taken(path):
            return None
        parts = path.split(".")
        for i in range(1, len(parts)):
            self._container(".".join(parts[:i]))
        self.declared[path] = "leaf"
        return written

    def held(self, key: str, written: str, origin, shape) -> None:
        """The converted state key `key` (written as `written`) holds source
        weight `origin`, of `shape` in the converted model."""
        self.expressions[key] = written
        self.layouts[key] = (origin.param, origin.perm, tuple(shape))

    def flat(self, key: str, origin, shape) -> None:
        """The converted state key `key`, x2's own name, holds `origin`: listed
        in report.json, and load_source_checkpoint fills it all the same."""
        if origin is not None and origin.param in self.state:
            self.renamed[key] = origin.param
            self.layouts[key] = (origin.param, origin.perm, tuple(shape))

    def aliases(self, state: dict) -> None:
        """Every other key of a tied tensor the model holds: the same parameter
        under the source's other names (torch's and Paddle's state_dict list
        a shared parameter under each name, as the source's does)."""
        for key, written in list(self.expressions.items()):
            for alias in self.tied_keys(key):
                if alias == key or alias in state:
                    continue
                target = self.place(alias)
                if target is None:
                    continue
                self.lines.append((target, f"self.{written}"))
                state[alias] = state[key]
                self.layouts[alias] = self.layouts[key]

    def report(self, state: dict) -> dict:
        """report.json "source_names": how many source keys the converted
        state_dict has, those the graph does not use, and weights x2 renamed."""
        return {"source_keys": len(self.state),
                "matched": sum(1 for key in self.state if key in state),
                "not_in_the_graph": sorted(key for key in self.state if key not in state
                                           and key not in self.renamed.values()),
                "renamed": dict(sorted(self.renamed.items()))}

    def attribute(self, path: str) -> str | None:
        """`path` as attribute access (`model.layers[0].q_proj`): a segment under
        a container whose children are all numbers is an index; any other must
        be a plain ASCII identifier the base class does not define."""
        parts = path.split(".")
        out = []
        for i, part in enumerate(parts):
            parent = ".".join(parts[:i])
            if i and part.isdigit() and self._is_list(parent):
                out.append(f"[{int(part)}]")
            elif part.isascii() and part.isidentifier() and not keyword.iskeyword(part) \
                    and part not in self.reserved:
                out.append(("." if i else "") + part)
            else:
                return None
        return "".join(out)

    def tied_keys(self, key: str) -> list[str]:
        """Every source key of the tensor `key` names (itself alone where untied)."""
        info = self.state.get(key)
        if info is None:
            return [key]
        return [k for k, v in self.state.items() if v["tied"] == info["tied"]]

    def _is_list(self, path: str) -> bool:
        children = self.children.get(path, ())
        return bool(children) and all(c.isdigit() for c in children)

    def _taken(self, path: str) -> bool:
        """Whether `path`, or a leaf above it, is declared (a list's item may
        still become a layer, once)."""
        parts = path.split(".")
        if any(self.declared.get(".".join(parts[:i])) == "leaf" for i in range(1, len(parts))):
            return True
        return self.declared.get(path) in ("leaf", "container")

    def _container(self, path: str) -> None:
        if path in self.declared:
            return
        self.declared[path] = "container"
        written = self.attribute(path)
        if self._is_list(path):
            size = max(int(c) for c in self.children[path]) + 1
            self.lines.append((written, f"{self.list_ctor}([{self.module_ctor}() "
                                        f"for _ in range({size})])"))
            for i in range(size):
                self.declared[f"{path}.{i}"] = "item"
        else:
            self.lines.append((written, f"{self.module_ctor}()"))
