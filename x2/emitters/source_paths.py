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

# A Paddle layer's own name for what torch's layer calls otherwise (BatchNorm2D
# holds running_mean as `_mean`, InstanceNorm2D its weight as `scale`): the
# layer sits at the source module that holds the torch name.
_SOURCE_LEAF = {"_mean": "running_mean", "_variance": "running_var", "scale": "weight"}

# State a layer keeps of its own, which its forward does not read (BatchNorm's
# count of training batches): the layer may sit at the source's path though
# x2 writes it anew, since the source's value is as good as x2's.
_LAYER_OWN = {"num_batches_tracked"}


def _weights(recipe) -> set[str]:
    """The source keys a recipe (x2/ir/recipes.py) reads."""
    if recipe[0] == "w":
        return {recipe[1]}
    return set().union(*(_weights(part) for part in recipe[1:] if isinstance(part, list)
                         and part and isinstance(part[0], str)))


class _ListExpr:
    """A container of numbered children (`nn.ModuleList([...])`), written when
    model.py is rendered: by then it knows the layers it holds, built in the
    one expression, in the source's order; a child that is no layer (a
    container, a parameter, a layer x2 did not write) holds an empty module
    there, which a later line fills or replaces."""

    def __init__(self, tree: "SourceTree", path: str):
        self.tree, self.path = tree, path

    def __str__(self) -> str:
        items = self.tree.items[self.path]
        empty = f"{self.tree.module_ctor}()"
        size = max(items) + 1
        held = [str(items.get(i, empty)) for i in range(size)]
        if all(item == held[0] for item in held):
            return f"{self.tree.list_ctor}([{held[0]} for _ in range({size})])"
        rows = "".join(f"            {item},\n" for item in held)
        return f"{self.tree.list_ctor}([\n{rows}        ])"


class _Ctor:
    """A container's constructor, written when model.py is rendered: the
    class module_tree.py wrote for the module at its path, else an empty
    module."""

    def __init__(self, tree: "SourceTree", path: str):
        self.tree, self.path = tree, path

    def __str__(self) -> str:
        return f"{self.tree.classes.get(self.path, self.tree.module_ctor)}()"


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
        self.declared: dict[str, str] = {}      # path -> "container" | "leaf"
        # a list container's path -> {index: its child's constructor}
        self.items: dict[str, dict[int, str]] = {}
        self.expressions: dict[str, str] = {}   # declared key -> its attribute path
        # where `self.PATH = CTOR` lines go (ModuleCode.submodules): a container
        # before what it holds, aliases after what they alias
        self.lines = lines
        # converted key -> (source key, perm, shape): load_source_checkpoint's table
        self.layouts: dict[str, tuple] = {}
        self.renamed: dict[str, str] = {}        # converted key -> the source key it holds
        # converted key -> (recipe, shape): what x2 computed from Keras weights
        # (x2/ir/recipes.py), which load_source_checkpoint computes again
        self.recipes: dict[str, tuple] = {}
        self.classes: dict[str, str] = {}        # module path -> its class (module_tree.py)
        self.alias_lines: set[str] = set()       # attribute paths that alias another

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

    def own_state(self, key: str, shape) -> bool:
        """Whether a layer's own state x2 writes (not from the source's graph)
        may sit at the source key `key`: state the layer keeps for itself
        (_LAYER_OWN), which the source holds too where the target loads the
        source's keys strictly."""
        if key.rpartition(".")[2] not in _LAYER_OWN:
            return False
        if not self.source_layout:
            return True
        return key in self.state and list(shape) == list(self.state[key]["shape"])

    def module_path(self, keys: dict[str, str], kind: str) -> str | None:
        """The module path a layer with parameters `keys` (its parameter ->
        source key) sits at: the module every key is that parameter of; of
        tied aliases, the one whose source module is this kind of layer."""
        paths = None
        for param, key in keys.items():
            leaf = param if self.source_layout else _SOURCE_LEAF.get(param, param)
            options = {k[:-len(leaf) - 1] for k in self.tied_keys(key) if k.endswith("." + leaf)}
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
        self._hold(path)
        return written

    def put(self, path: str, written: str, expr, layer: bool) -> None:
        """`self.<written> = <expr>` for what `place` declared at `path`: a
        layer that is a numbered child goes into its list's own expression."""
        parent, _, last = path.rpartition(".")
        if layer and parent in self.items and last.isdigit():
            self.items[parent][int(last)] = str(expr)
        else:
            self.lines.append((written, expr))

    def held(self, key: str, written: str, origin, shape) -> None:
        """The converted state key `key` (written as `written`) holds source
        weight `origin` (None: the layer's own state, _LAYER_OWN), of `shape`
        in the converted model."""
        self.expressions[key] = written
        if origin is None:
            return
        self.layouts[key] = (origin.param, origin.perm, tuple(shape))
        if key not in self.state:  # the target's own name for it, at the source's path
            self.renamed[key] = origin.param

    def flat(self, key: str, origin, shape) -> None:
        """The converted state key `key`, x2's own name, holds `origin`: listed
        in report.json, and load_source_checkpoint fills it all the same."""
        if origin is not None and origin.param in self.state:
            self.renamed[key] = origin.param
            self.layouts[key] = (origin.param, origin.perm, tuple(shape))
        elif origin is not None and origin.recipe is not None:
            self.recipes[key] = (origin.recipe, tuple(shape))

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
                self.alias_lines.add(target)
                state[alias] = state[key]
                self.layouts[alias] = self.layouts[key]

    def report(self, state: dict) -> dict:
        """report.json "source_names": how many source keys the converted
        state_dict has, those the graph does not use, and weights x2 renamed."""
        read = set().union(*(_weights(recipe) for recipe, _shape in self.recipes.values()))
        out = {"source_keys": len(self.state),
               "matched": sum(1 for key in self.state if key in state),
               "not_in_the_graph": sorted(key for key in self.state if key not in state
                                          and key not in self.renamed.values()
                                          and key not in read),
               "renamed": dict(sorted(self.renamed.items()))}
        if any("keras" in info for info in self.state.values()):
            # a Keras source (x2/frontends/tf/keras_weights.py): each parameter's
            # Keras weight, Keras 3's `variable.path`, its place in a
            # save_weights file and the axes x2 permuted it by
            out["keras"] = {key: {"keras": self.state[source]["keras"],
                                  "path": self.state[source]["path"],
                                  "h5": self.state[source]["h5"],
                                  "perm": None if perm is None else list(perm)}
                            for key, (source, perm, _shape) in sorted(self.layouts.items())}
            # what x2 computed from Keras weights (x2/ir/recipes.py): the weights each reads
            out["derived"] = {key: sorted({self.state[w]["keras"] for w in _weights(recipe)})
                              for key, (recipe, _shape) in sorted(self.recipes.items())}
        return out

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
        """Whether `path`, or a leaf above it, is declared."""
        parts = path.split(".")
        if any(self.declared.get(".".join(parts[:i])) == "leaf" for i in range(1, len(parts))):
            return True
        return path in self.declared

    def _hold(self, path: str) -> None:
        """A numbered child of a list is declared: the list holds an empty
        module there until `put` gives it its layer."""
        parent, _, last = path.rpartition(".")
        if parent in self.items and last.isdigit():
            self.items[parent].setdefault(int(last), _Ctor(self, path))

    def container(self, path: str) -> None:
        """Declare the module at `path` (and those above it) a container: a
        class of module_tree.py's there."""
        parts = path.split(".")
        for i in range(1, len(parts) + 1):
            self._container(".".join(parts[:i]))

    def _container(self, path: str) -> None:
        if path in self.declared:
            return
        self.declared[path] = "container"
        if self._is_list(path):
            self.items[path] = {}
            self.lines.append((self.attribute(path), _ListExpr(self, path)))
        elif not self._in_list(path):
            self.lines.append((self.attribute(path), _Ctor(self, path)))
        self._hold(path)

    def _in_list(self, path: str) -> bool:
        parent, _, last = path.rpartition(".")
        return parent in self.items and last.isdigit()
