"""A small structured model of the Python module an emitter writes.

Emitters describe the generated code as data (submodules, buffers, one
assignment per IR node) and `render_module` prints it; op emitters only build
expressions with `call` (or `EmitContext.api`), never whole lines of text.

Every string that comes from a model or a path is hostile: it reaches the
code only through `escape_text` (comments, docstrings, string literals) or
`Namer` (identifiers), so it can never end a line, a comment or a literal.
"""
from __future__ import annotations

import builtins
import importlib.util
import keyword
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
from dataclasses import dataclass, field

from ..ir.provenance import Origin
from ..text import escape_text
from . import host_sizes
from .generation_code import generate_method
from .keras_checkpoint import is_keras
from .source_paths import SourceTree
from .spelling import POSITIONAL, spelling


@dataclass(frozen=True)
class Expr:
    text: str

    def __str__(self) -> str:
        return self.text


def string_literal(text: str) -> str:
    return f"'{escape_text(text)}'"


def literal(value) -> str:
    """Python source for an attribute value. Only plain data is accepted:
    anything else is an x2 bug, never text pasted into the code."""
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if value != value or abs(value) == float("inf"):
            return f"float('{value}')"
        # Attributes read from fp32 models print as 0.0010000000474974513;
        # write the shortest text that gives the same float32 (0.001).
        short = str(np.float32(value))
        return short if float(np.float32(short)) == float(np.float32(value)) and \
            np.float32(value) == value else repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(literal(v) for v in value)
        return f"[{inner}]"
    raise TypeError(f"no Python literal for a {type(value).__name__} attribute value")


def call(fn: str, *args, **kwargs) -> Expr:
    parts = [literal(a) for a in args]
    parts += [f"{k}={literal(v)}" for k, v in kwargs.items()]
    return Expr(f"{fn}({', '.join(parts)})")


def binop(a, op: str, b) -> Expr:
    return Expr(f"{literal(a)} {op} {literal(b)}")


# dtype names the emitters may spell as `torch.X` / `paddle.X`.
DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
                    "int64", "uint8", "uint16", "uint32", "uint64", "bool", "complex64",
                    "complex128"})


def dtype_name(dtype) -> str:
    name = str(dtype)
    if name not in DTYPES:
        raise TypeError(f"unknown dtype {escape_text(name)!r}")
    return name


def dtype_ref(module: str, dtype) -> Expr:
    return Expr(f"{module}.{dtype_name(dtype)}")


@dataclass
class Assign:
    targets: list[str]
    expr: Expr
    comment: str = ""   # provenance; escaped and cut when rendered


@dataclass
class If:
    """if cond: then / else: orelse (a control-flow node's branches)."""
    cond: Expr
    then: list
    orelse: list
    comment: str = ""


@dataclass
class While:
    cond: Expr
    body: list
    comment: str = ""


@dataclass
class For:
    """for var in iterable: body (a loop over a list of layers, module_tree.py)."""
    var: str
    iterable: Expr
    body: list
    comment: str = ""


@dataclass
class Def:
    """def name(args): body; return results (a branch or loop function that
    torch.cond / while_loop call)."""
    name: str
    args: list[str]
    body: list
    results: list[Expr]
    comment: str = ""


@dataclass
class ModuleCode:
    docstring: list[str]                    # lines; each is escaped when rendered
    header: list[str]                       # import lines and guards
    base_class: str
    # classes model.py defines before Model (x2's own source text: recurrent_classes.py)
    helpers: list[str] = field(default_factory=list)
    submodules: list[tuple[str, Expr]] = field(default_factory=list)   # self.name = expr
    buffers: list[tuple[str, Expr]] = field(default_factory=list)      # registered buffers
    buffer_call: str = "self.register_buffer"
    forward_args: list[str] = field(default_factory=list)
    prologue: list[Assign] = field(default_factory=list)   # before the first IR node
    body: list[Assign] = field(default_factory=list)       # one per IR node
    returns: list[str] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)      # after forward, as written
    # forward runs inside `with <context>:` (x2 convert --precision mixed: autocast)
    forward_context: Expr | None = None
    # classes model.py defines before Model from the source's modules (module_tree.py)
    classes: list[str] = field(default_factory=list)
    class_comment: str = ""   # Model's own: the source's root module


COMMENT_CHARS = 160  # a provenance comment longer than this is cut (names can be huge)


def render_module(code: ModuleCode) -> str:
    doc = "\n".join(escape_text(line) for line in code.docstring)
    lines = [f'"""{doc}\n"""', *code.header, "", ""]
    for helper in code.helpers:
        lines += [helper.rstrip("\n"), "", ""]
    for text in code.classes:
        lines += [text.rstrip("\n"), "", ""]
    lines += [f"class Model({code.base_class}):"]
    if code.class_comment:
        lines.append(f"    # {code.class_comment}")
    lines += ["    def __init__(self):",
              "        super().__init__()"]
    for name, expr in code.submodules:
        lines.append(f"        self.{name} = {expr}")
    for name, expr in code.buffers:
        # a buffer at a source path registers on its container: self.bn.register_buffer(...)
        owner, _, leaf = name.rpartition(".")
        register = code.buffer_call.replace("self.", f"self.{owner}.") if owner \
            else code.buffer_call
        lines.append(f"        {register}({leaf!r}, {expr})")
    lines += ["", f"    def forward(self, {', '.join(code.forward_args)}):"]
    indent = " " * 8
    if code.forward_context is not None:
        lines.append(f"{indent}with {code.forward_context}:")
        indent += " " * 4
    _render_statements(lines, code.prologue + code.body, indent)
    ret = code.returns[0] if len(code.returns) == 1 else ", ".join(code.returns)
    lines.append(f"{indent}return {ret}")
    for method in code.methods:
        lines += ["", method]
    lines += ["", "", *code.footer]
    return "\n".join(lines).rstrip() + "\n"


def _render_statements(lines: list[str], statements: list, indent: str) -> None:
    for step in statements:
        note = escape_text(step.comment)
        if len(note) > COMMENT_CHARS:
            note = note[:COMMENT_CHARS] + "..."
        suffix = f"  # {note}" if note else ""
        inner = indent + " " * 4
        if isinstance(step, If):
            lines.append(f"{indent}if {step.cond}:{suffix}")
            _render_statements(lines, step.then or [Assign([], Expr("pass"))], inner)
            if step.orelse:
                lines.append(f"{indent}else:")
                _render_statements(lines, step.orelse, inner)
        elif isinstance(step, While):
            lines.append(f"{indent}while {step.cond}:{suffix}")
            _render_statements(lines, step.body or [Assign([], Expr("pass"))], inner)
        elif isinstance(step, For):
            lines.append(f"{indent}for {step.var} in {step.iterable}:{suffix}")
            _render_statements(lines, step.body or [Assign([], Expr("pass"))], inner)
        elif isinstance(step, Def):
            lines.append(f"{indent}def {step.name}({', '.join(step.args)}):{suffix}")
            results = ", ".join(str(r) for r in step.results)
            _render_statements(lines, step.body + [Assign([], Expr(f"return {results}"))], inner)
        elif step.targets:
            lines.append(f"{indent}{', '.join(step.targets)} = {step.expr}{suffix}")
        else:
            lines.append(f"{indent}{step.expr}{suffix}")


# Names the generated module itself uses: a value must never shadow them.
MODULE_NAMES = frozenset({"self", "paddle", "torch", "nn", "F", "np", "os", "sys", "json", "Model",
                          "load_model", "_read_inference_weights", "CHANNELS_LAST",
                          "GRUResetBefore", "Conv1D", "LinearNoBias", "pad_same",
                          "resize_taps", "padding_row_without_gradient",
                          "load_source_checkpoint"})
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | \
    frozenset(dir(builtins)) | MODULE_NAMES


class Namer:
    """Readable, unique Python identifiers from graph value names. Identifiers
    are ASCII, so Unicode normalisation (which Python applies to identifiers)
    cannot merge two of them, and never shadow a builtin or module alias."""

    def __init__(self, reserved=(), scopes: dict[str, str] | None = None):
        self.taken = set(RESERVED) | set(reserved)
        self.names: dict[str, str] = {}
        self.scopes = scopes or {}   # a source scope -> what names show of it (scope_names)
        # Values of a subgraph are named in its own scope: its value names may
        # repeat the outer graph's (top-level values keep their plain keys).
        self.scope = ""

    def key(self, value: str) -> str:
        return f"{self.scope}\0{value}" if self.scope else value

    def __call__(self, value: str, hint: str | None = None) -> str:
        key = self.key(value)
        if key in self.names:
            return self.names[key]
        base = self.base(hint or value)
        name, i = base, 1
        while name in self.taken:
            i += 1
            name = f"{base}_{i}"
        self.taken.add(name)
        self.names[key] = name
        return name

    def base(self, text: str) -> str:
        """The identifier a value named `text` takes before de-duplication."""
        return _identifier(text, self.scopes)

    def bind(self, value: str, text: str) -> None:
        """`value` (of the current scope) is written as `text` (an outer variable)."""
        self.names[self.key(value)] = text


# `self.conv1(`, `self.model.layers[0].mlp.up_proj(`: the layer's own name is the
# last; `self.stem[1](` (a numbered child): `stem_1`.
_LAYER_CALL = re.compile(r"self\.(?:[A-Za-z0-9_\[\]]+\.)*([A-Za-z_][A-Za-z0-9_]*)"
                         r"(?:\[(\d+)\])?\(")


# The scope of a whole Keras model ("functional_1/..."): it says nothing of the layer.
_MODEL_SCOPE = re.compile(r"^(functional|sequential|model)(_\d+)?$")


def scope_names(values) -> dict[str, str]:
    """How names show the source's scopes: Keras traces layer `norm1` under the
    scope `norm1_1`; the suffix goes where the shorter name is no scope of
    its own and no other scope shortens to it. Model scopes show as nothing."""
    scopes = {part for value in values for part in value.split("/")[:-1]}
    shortened: dict[str, list[str]] = {}
    for scope in scopes:
        found = re.match(r"^(.+)_\d+$", scope)
        if found and found.group(1) not in scopes:
            shortened.setdefault(found.group(1), []).append(scope)
    names = {scope: "" for scope in scopes if _MODEL_SCOPE.match(scope)}
    names.update({full[0]: short for short, full in shortened.items()
                  if len(full) == 1 and full[0] not in names})
    return names


def _identifier(text: str, scopes: dict[str, str] | None = None) -> str:
    scopes = scopes or {}
    parts = [scopes.get(p, p) for p in re.split(r"[/:]", text)
             if p and not p.endswith("PartitionedCall")]
    parts = [p for p in parts if p]
    tail = parts[-2:] if len(parts) >= 2 else parts
    squeezed = [re.sub(r"[^a-z0-9]", "", p.lower()) for p in tail]
    if len(tail) == 2 and squeezed[1].startswith(squeezed[0]):
        tail = tail[1:]  # "MaxPool2d/max_pool2d" says it once: "max_pool2d"
    # Drop the numeric suffix fresh_name adds ("relu__12" -> "relu").
    # ... and the layout pass's "_nchw" (x2/passes/layout.py): provenance, not a name.
    name = "_".join(re.sub(r"_nchw$", "", re.sub(r"__\d+$", "", p)) for p in tail) or "v"
    name = unicodedata.normalize("NFKC", name).lower()
    name = re.sub(r"[^a-z0-9]+", "_", name).strip("_") or "v"
    return f"v_{name}" if name[0].isdigit() else name


class EmitContext:
    """What every Python-code emitter shares: names for values, constants as
    literals or registered buffers, weighted layers as submodules, and the
    state dict they fill. A subclass names its column of spelling.SPELLING and
    says what its framework does differently (paddle_ops.py, torch_ops.py)."""

    framework = ""      # a column of spelling.SPELLING
    negative_slice_steps = True   # x[a:b:-1] works (torch: no)
    # `if`/`loop` as torch.cond / while_loop calls, which torch.export captures
    # (x2 convert --exportable); otherwise Python if/while, as a person writes.
    export_control_flow = False
    # The target's strict load takes the source's own arrays: a weight x2 laid
    # out anew keeps a name of its own (torch); else load_source_checkpoint
    # applies the layout (Paddle).
    source_layout_only = True

    def __init__(self, graph, layer_attributes=()):
        """`layer_attributes`: what the framework's base class defines
        (forward, eval, ...), which a submodule name must not replace."""
        self.graph = graph
        self.namer = Namer(scopes=scope_names(graph.info))
        self.layer_attributes = tuple(layer_attributes)
        self.layer_namer = Namer(layer_attributes)
        # a torch source's modules as classes (module_tree.py): the plan, and
        # the instance whose forward is being written (None: one flat forward)
        self.plan = None
        self.frame = None
        self.provenance = True   # a comment per statement naming its source node
        self.code = ModuleCode(docstring=[], header=[],
                               base_class=spelling(self.framework, "Module")[0])
        self.state: dict[str, np.ndarray] = {}
        self.buffers: dict[str, str] = {}
        self._layers: dict[tuple, str] = {}  # one submodule per set of weights
        # layers at source paths: (kind, constructor, the source tensors they hold) -> path
        self._source_layers: dict[tuple, str] = {}
        self.ops = None  # the OpRegistry generate_module writes with
        # trainable parameter (state_dict key) -> its source weight (Origin.to_json):
        # what `x2 check --grad` compares it with (report.json "parameters")
        self.parameters: dict[str, dict] = {}
        # sizes written as Python numbers (host_sizes.py): planned values, and
        # those written so far with their expressions
        self.host_values: set[str] = set()
        self.host: dict = {}
        self.memo: dict = {}  # what an op writer derives once per graph, by its key
        # torch sources: weights at the source's state_dict keys (source_paths.py)
        self.tree = SourceTree(graph.meta.source_state, graph.meta.source_modules,
                               layer_attributes, spelling(self.framework, "Module")[0],
                               spelling(self.framework, "ModuleList")[0],
                               self.source_layout_only
                               and not is_keras(graph.meta.source_state),
                               self.code.submodules)
        self.layer_namer.taken |= self.tree.top_names()  # x2's own names stay off them

    def dtype(self, name) -> Expr | str:
        """How the framework's code names a dtype."""
        raise NotImplementedError

    def scalar_tensor(self, value, dtype: str) -> Expr:
        raise NotImplementedError

    def output_copy(self, x: Expr) -> Expr:
        """A graph output that is another value: the framework's way to return it
        as a tensor of its own."""
        return x

    def buffer_init(self, array: np.ndarray) -> Expr:
        # Only the shape and dtype matter: load_model fills buffers from the state dict.
        return self.api("zeros", list(array.shape), dtype=self.dtype(array.dtype))

    def api(self, key: str, *args, **kwargs) -> Expr:
        """A call of the framework's function for `key`, keywords spelled its way."""
        name, renames = spelling(self.framework, key)
        positional, keywords = list(args), {}
        for argument, value in kwargs.items():
            spelled = renames.get(argument, argument)
            if spelled == POSITIONAL:
                positional.append(value)
            else:
                keywords[spelled] = value
        return call(name, *positional, **keywords)

    def has_api(self, key: str) -> bool:
        return spelling(self.framework, key) is not None

    def is_const(self, value: str) -> bool:
        return value in self.graph.constants

    def const(self, value: str) -> np.ndarray:
        return self.graph.constants[value]

    # The largest integer a Python literal may carry in the generated code
    # (beyond it, a typed scalar tensor; see PaddleContext).
    int_literal_limit = float("inf")

    def is_scalar(self, value: str) -> bool:
        return self.is_const(value) and self.const(value).ndim == 0

    def value(self, value: str, tensor: bool = False) -> Expr:
        """The expression for a value: a local variable, a literal, a trainable
        parameter (a weight the source learns) or a buffer (any other constant)."""
        if value in self.host and not self.namer.scope:  # the top-level graph's
            size = Expr(self.host[value].text())
            return self.scalar_tensor(size, "int64") if tensor and self.host[value].items is None \
                else size
        if value in self.graph.constants:
            array = self.const(value)
            if self.is_trainable(value):
                return self.ref(self._parameter(value, array))
            if array.ndim == 0 and (array.dtype.kind in "fiub" or array.dtype.name == "bfloat16"):
                # Scalars stay in the code: frameworks disagree on saving 0-d tensors.
                if not tensor and not (array.dtype.kind in "iu" and
                                       abs(int(array.item())) > self.int_literal_limit):
                    return Expr(literal(array.item()))
                return self.scalar_tensor(array.item(), str(array.dtype))
            return self.ref(self._buffer(value, array))
        return Expr(self.namer(value))

    def ref(self, written: str) -> Expr:
        """`self.<written>`, an attribute path from the model's root, as the
        forward being written reads it (module_tree.py: a class's own
        attribute, or an argument where it lives elsewhere)."""
        if self.frame is None:
            return Expr(f"self.{written}")
        return self.plan.ref(self.frame, written)

    def own_place(self, key: str, hint: str, value: str | None = None) -> tuple[str, str]:
        """(state key, attribute path) of x2's own parameter, buffer or layer
        (not at a source path): flat in Model, or in the class that holds
        what reads it (module_tree.py)."""
        if self.frame is None:
            name = self.layer_namer(key, hint)
            return name, name
        owner = self.plan.owner(value)
        for prefix in (owner.path + ".", owner.path.replace(".", "_") + "_"):
            if owner.path and hint.startswith(prefix) and len(hint) > len(prefix):
                hint = hint[len(prefix):]   # named within its class (`in_proj`)
                break
        if owner.path and key.startswith(("layer:", "param:")) and "/" in hint.strip("/"):
            # a Keras layer's path (`transformer_layer_0/feedforward_output_dense`)
            # or its variable's (`.../feedforward_output_dense/bias`): named in
            # its class by the layer (and the variable) alone
            keep = 1 if key.startswith("layer:") else 2
            hint = "_".join(hint.strip("/").split("/")[-keep:])
        local = owner.attr_namer(key, hint)
        return owner.state_key(local), owner.written(local)

    def size_list(self, value: str) -> Expr | None:
        """A computed shape as a Python list (`[batch, seq, 4]`) where it is
        written so, else None (a tensor)."""
        size = None if self.namer.scope else self.host.get(value)
        return None if size is None or size.items is None else Expr(size.text())

    def table(self, name: str, array: np.ndarray) -> Expr:
        """A constant the emitter computes itself (an index table), as a buffer
        named after `name`."""
        return self.ref(self._buffer(name, array))

    def is_trainable(self, value: str) -> bool:
        """A float constant that holds a weight the source learns (its Origin)."""
        origin = self.graph.origin.get(value)
        return bool(origin is not None and origin.trainable and value in self.graph.constants
                    and self.const(value).dtype.kind == "f")

    def own_buffer(self, array: np.ndarray) -> Expr:
        """The registration of a constant x2 computed (no source weight)."""
        return self.buffer_init(array)

    def parameter_init(self, array: np.ndarray) -> Expr:
        """A trainable parameter of the array's shape and dtype (load_model fills it)."""
        raise NotImplementedError

    def _parameter(self, value: str, array: np.ndarray) -> str:
        origin = self.graph.origin[value]
        # One parameter per source weight in one layout (an unrolled loop reads it often).
        key = ("param", origin.param or origin.tensor, origin.perm)
        if key not in self.buffers:
            name, written = self._source_place(origin, array)
            if name is None:
                hint = (origin.param or value).replace(".", "_")
                name, written = self.own_place(f"param:{value}", hint, value)
                self.tree.flat(name, origin, array.shape)
            self.buffers[key] = written
            self.state[name] = array
            self.parameters[name] = origin.to_json()
            self.code.submodules.append((written, self.parameter_init(array)))
        return self.buffers[key]

    def _source_place(self, origin, array: np.ndarray) -> tuple[str | None, str | None]:
        """(state key, attribute path) of a weight at its source key, or
        (None, None) where it cannot sit there."""
        if not self.tree.fits(origin, array.shape):
            return None, None
        written = self.tree.place(origin.param)
        if written is None:
            return None, None
        self.tree.held(origin.param, written, origin, array.shape)
        return origin.param, written

    def _buffer(self, value: str, array: np.ndarray) -> str:
        key = self.namer.key(value)
        if key not in self.buffers:
            origin = self.graph.origin.get(value)
            name, written = self._source_place(origin, array) if self.tree.active \
                else (None, None)
            if name is None:
                name, written = self.own_place(key, "c_" + value, value)
                self.tree.flat(name, origin, array.shape)
            self.buffers[key] = written
            self.state[name] = array
            own = name not in self.tree.expressions and name not in self.tree.renamed \
                and name not in self.tree.recipes
            self.code.buffers.append((written, self.own_buffer(array) if own
                                      else self.buffer_init(array)))
        return self.buffers[key]

    def layer(self, node, kind: str, ctor: Expr, params: dict, name_from: str | None = None
              ) -> str:
        """Declare a submodule; `params` maps its parameter names to IR constants
        (or to arrays already rearranged for the framework, from `name_from`).
        Nodes that use the same weights the same way share one submodule (a
        layer applied at every step of an unrolled loop, a tied layer)."""
        key = _layer_key(kind, ctor, params, name_from)
        if key is not None:
            key = (self.namer.scope, *key)
        if key is not None and key in self._layers:
            return self._layers[key]
        hint = node.source.get("name", node.name)
        parts = [p for p in hint.split("/") if p and not p.endswith("PartitionedCall")
                 and not p.startswith("functional")]
        base = parts[-2] if len(parts) >= 2 else (parts[-1] if parts else kind)
        weight = name_from or next(iter(params.values()), None)
        origin = self.graph.origin.get(weight) if isinstance(weight, str) else None
        if origin is not None and origin.param.endswith((".weight", "_weight")):
            # A source parameter ("layer1.conv1.weight", "attn.in_proj_weight") names the layer.
            base = origin.param[:-len(".weight")]
        elif origin is not None and origin.trainable and "/" in origin.param:
            # A TF variable ("stem_bn/gamma") names the layer after its Keras layer.
            base = origin.param.rpartition("/")[0]
        arrays = {param: self.const(value) if isinstance(value, str) else np.asarray(value)
                  for param, value in params.items()}
        # the source tensor each parameter holds: learned weights and the
        # source's buffers (BatchNorm's running statistics)
        sources = {param: self._weight_origin(params[param],
                                              name_from if param == "weight" else None, array,
                                              learned=False)
                   for param, array in arrays.items()}
        # a layer at its source path that the source calls again (through
        # another copy of its weight in the IR) is the one layer
        same = (kind, str(ctor), tuple((p, None if o is None else (o.param, o.perm))
                                       for p, o in sources.items()))
        if same in self._source_layers:
            if key is not None:
                self._layers[key] = self._source_layers[same]
            return self._source_layers[same]
        path, written = self._layer_place(kind, params, arrays, sources, name_from)
        placed = path is not None
        if placed:
            self._source_layers[same] = written
        if not placed:
            path, written = self.own_place(f"layer:{self.namer.key(node.name)}", base)
        half = {str(a.dtype) for a in arrays.values()} & {"float16", "bfloat16"}
        if half:  # x2 convert --precision: the layer holds its weights in half precision
            ctor = call(f"{ctor}.to", dtype=self.dtype(half.pop()))
        if placed:
            self.tree.put(path, written, ctor, layer=True)
        else:
            self.code.submodules.append((written, ctor))
        for param, array in arrays.items():
            self.state[f"{path}.{param}"] = array
            derived = self._derived_origin(params[param], name_from if param == "weight"
                                           else None, array)
            if derived is not None:   # computed from Keras weights (x2/ir/recipes.py)
                self.tree.flat(f"{path}.{param}", derived, array.shape)
            if sources[param] is not None:
                if sources[param].trainable:
                    self.parameters[f"{path}.{param}"] = sources[param].to_json()
                if not placed:
                    self.tree.flat(f"{path}.{param}", sources[param], array.shape)
        if key is not None:
            self._layers[key] = written
        return written

    def _layer_place(self, kind: str, params: dict, arrays: dict, sources: dict,
                     name_from: str | None) -> tuple[str | None, str | None]:
        """(state key prefix, attribute path) of a layer at its source module's
        path, or (None, None): every parameter must be that module's, in a
        layout the target loads, or state the layer keeps of its own
        (SourceTree.own_state: BatchNorm's num_batches_tracked)."""
        if not self.tree.active or not arrays:
            return None, None
        # x2's own arrays: neither an IR value nor laid out from one
        own = [p for p in arrays if sources[p] is None and not isinstance(params[p], str)
               and not (p == "weight" and name_from)]
        known = [p for p in arrays if p not in own]
        if not known or not all(self.tree.fits(sources[p], arrays[p].shape) for p in known):
            return None, None
        path = self.tree.module_path({p: sources[p].param for p in known}, kind)
        if path is None or not all(self.tree.own_state(f"{path}.{p}", arrays[p].shape)
                                   for p in own):
            return None, None
        written = self.tree.place(path)
        if written is None:
            return None, None
        for param, array in arrays.items():
            self.tree.held(f"{path}.{param}", f"{written}.{param}",
                           sources[param], array.shape)
        return path, written

    def in_out_linear(self, w: str, bias: str | None) -> Expr | None:
        """The constructor of a layer that holds a dense weight `w` as the IR
        does, [in, out], where the target's Linear would hold it otherwise and
        the source's own module keeps it so at its state_dict key
        (transformers' Conv1D); None: the target's Linear."""
        return None

    def footer_lines(self) -> list[str]:
        """What model.py defines after load_model (Paddle: load_source_checkpoint)."""
        return []

    def finish_forward(self, body: list, returns: list[str]) -> list:
        """forward's top-level statements as the target wants them written."""
        return body

    def linear(self, size_in: int, size_out: int, bias) -> Expr:
        """The layer of a dense op with (or without) a bias."""
        return self.api("Linear", size_in, size_out, **self.bias_flag(bias))

    def helper(self, text: str) -> None:
        """Define class `text` (x2's own source) in model.py, once."""
        if text not in self.code.helpers:
            self.code.helpers.append(text)

    def statements(self, nodes) -> list:
        """The code of `nodes` (of the current graph), one or more statements each."""
        out = []
        for node in nodes:
            if node.op == "module_call":
                out.extend(self.plan.call(node))
                continue
            if node.outputs and node.outputs[0] in self.host_values and not self.namer.scope:
                out.extend(self._host_size(node))
                continue
            written = self.ops[node.op](self, node)
            src = node.source
            comment = f"{src.get('op')} {src.get('name')}" \
                if src.get("name") and self.provenance else ""
            if isinstance(written, Expr):
                hint = self._layer_called(written, node)
                written = [Assign([self.namer(o, hint) for o in node.outputs], written)]
            if written and not written[0].comment:
                written[0].comment = comment  # once per node, on its first statement
            out.extend(written)
        return out

    def _host_size(self, node) -> list:
        """The statement of a size written as Python (host_sizes.py): a 0-D
        size gets a name (`seq = input_ids.shape[1]`); a list is written
        where it is used."""
        out = node.outputs[0]
        x = str(self.value(node.inputs[0])) if node.op == "shape" else ""
        size = host_sizes.size_of(self.graph, node, self.host, x)
        self.host[out] = size
        if size.items is not None or isinstance(size.scalar, int):
            return []
        if size.is_name():
            self.namer.bind(out, size.scalar)  # a cast of a named size is that size
            return []
        name = self.namer(out, host_sizes.symbol_hint(self.graph, node))
        self.host[out] = host_sizes.HostSize(scalar=name)
        src = node.source
        return [Assign([name], Expr(size.text()),
                       f"{src.get('op')} {src.get('name')}"
                       if src.get("name") and self.provenance else "")]

    def _layer_called(self, written: Expr, node) -> str | None:
        """The submodule a node's one output comes from (`self.conv1(x)`), which
        names the value as a person would (`conv1 = self.conv1(x)`); graph
        outputs keep their interface names."""
        found = _LAYER_CALL.match(str(written))
        if found is None or len(node.outputs) != 1 or node.outputs[0] in self.graph.outputs:
            return None
        return found.group(1) + (f"_{found.group(2)}" if found.group(2) else "")

    def block(self, graph, inputs: list[str], scope: str) -> tuple[list, list[Expr]]:
        """The statements of subgraph `graph` with its inputs written as the
        expressions `inputs`, and the expressions of its outputs; its values are
        named in `scope`."""
        outer_graph, outer_scope = self.graph, self.namer.scope
        self.graph, self.namer.scope = graph, scope
        try:
            for value, text in zip(graph.inputs, inputs):
                self.namer.bind(value, str(text))
            body = self.statements(graph.nodes)
            results = [self.value(v, tensor=True) for v in graph.outputs]
        finally:
            self.graph, self.namer.scope = outer_graph, outer_scope
        return body, results

    def _weight_origin(self, value, name_from: str | None, array: np.ndarray,
                       learned: bool = True):
        """The learned source weight a layer parameter holds, if it is one: an IR
        constant's origin, or that of `name_from` for an array laid out anew
        (nn.Linear's [out, in] is the IR's [in, out] transposed). `learned`
        False: any source tensor it holds (a buffer too, which has a name)."""
        name = value if isinstance(value, str) else name_from
        origin = self.graph.origin.get(name) if name else None
        if origin is None or (not origin.trainable if learned else not origin.param):
            return None
        if isinstance(value, str):
            return origin
        const = self.const(name)
        # (a square weight has the same shape either way: compare the values)
        if array.ndim == 2 and array.shape == const.shape[::-1] and np.array_equal(array, const.T):
            return origin.permuted([1, 0])
        return origin if array.shape == const.shape and np.array_equal(array, const) else None

    def _derived_origin(self, value, name_from: str | None, array: np.ndarray):
        """The origin with a recipe of what a layer parameter holds (an IR
        constant's, or that of `name_from` transposed for nn.Linear), else None."""
        name = value if isinstance(value, str) else name_from
        origin = self.graph.origin.get(name) if name else None
        if origin is None or origin.recipe is None:
            return None
        if isinstance(value, str):
            return origin
        const = self.const(name)
        if array.ndim == 2 and array.shape == const.shape[::-1] and np.array_equal(array, const.T):
            return Origin(name, recipe=["t", [1, 0], list(const.shape), origin.recipe])
        return origin if array.shape == const.shape and np.array_equal(array, const) else None

    def constant_pad(self, x: Expr, pads: list[int], value, shape, dtype) -> Expr:
        """`x` (of `shape` and `dtype`) padded with `value`: pads [begin_0, ..., end_0, ...]."""
        return self.api("pad", x, self.constant_pads(pads), value=value)

    def softmax_rows(self, node, y: Expr) -> Expr:
        """`y`, the framework's softmax of a `softmax`/`log_softmax` node, made to
        give what the IR gives for a row that is all -inf (NaN) where it does not."""
        return y

    def unsupported(self, node, why: str):
        from ..errors import ConversionError
        return ConversionError(f"the {self.framework} emitter cannot write {node.op} node "
                               f"'{node.name}': {why}")


def _layer_key(kind: str, ctor: Expr, params: dict, name_from: str | None):
    """What makes two layers the same: constructor and the IR constants their
    parameters come from; None when a parameter's source is not known."""
    named = []
    for param, value in params.items():
        if isinstance(value, str):
            named.append((param, value))
        elif param == "weight" and name_from:
            named.append((param, "from:" + name_from))
        else:
            return None
    return (kind, str(ctor), tuple(named))


def generate_module(e: EmitContext, ops, docstring: list[str], header: list[str],
                    footer: list[str], prologue=None, forward_context=None, planner=None
                    ) -> tuple[str, dict[str, np.ndarray]]:
    """Fill `e.code` from its graph with the per-op functions in `ops` (an
    OpRegistry); return (module text, state dict as numpy arrays). Every op
    without code is listed at once; the text is compiled before it is
    returned. `prologue(e)`, when given, returns the statements that start
    forward (after its arguments are named). An op function returns the
    expression of its outputs, or the statements that compute them when one
    expression cannot (a recurrent layer returning a nested tuple).
    `planner(e)` (module_tree.plan) plans the source's modules as classes;
    without it, one forward with a provenance comment per statement."""
    from ..errors import ConversionError

    from ..ir.control_flow import walk_graphs
    graph = e.graph
    for each in walk_graphs(graph):
        ops.check(each)
    e.ops = ops
    e.code.docstring = docstring
    e.code.header = header
    e.code.forward_args = [e.namer(v) for v in graph.inputs]
    e.code.prologue = prologue(e) if prologue else []
    e.code.forward_context = forward_context(e) if forward_context else None
    e.host_values = host_sizes.plan(graph)
    e.plan = planner(e) if planner else None
    if e.plan is not None:
        e.provenance = False   # one comment per class instead (module_tree.py)
        e.code.body = e.plan.emit_root()
        e.code.class_comment = e.plan.root_comment()
    else:
        e.code.body = e.statements(graph.nodes)
    e.code.returns = [str(e.value(v)) for v in graph.outputs]
    if e.plan is None:
        e.code.body = e.finish_forward(e.code.body, e.code.returns)
    e.code.methods = [m for m in [generate_method(graph, e.framework)] if m]
    e.tree.aliases(e.state)
    if e.plan is not None:
        e.plan.finish()
    e.code.footer = footer + e.footer_lines()
    text = render_module(e.code)
    try:
        compile(text, "model.py", "exec")
    except SyntaxError as exc:
        raise ConversionError(f"internal: the generated {e.framework} model.py does not "
                              f"compile (line {exc.lineno}: {exc.msg}); nothing was written"
                              ) from exc
    return text, e.state


def subscript(x, rank: int, axes: list[int], starts: list, ends: list,
              steps: list[int]) -> Expr:
    """x[a:b:c, ...] for a `slice` node, with trailing full dims left out; a
    bound is an int or an Expr computed at run time."""
    parts = [":"] * rank
    huge = 1 << 62  # ONNX/TF write "to the end" as INT64_MAX
    for axis, b, e, s in zip(axes, starts, ends, steps):
        begin = "" if (isinstance(b, int) and b == 0 and s > 0) else str(b)
        end = "" if isinstance(e, int) and abs(e) >= huge else str(e)
        parts[axis] = f"{begin}:{end}" + (f":{s}" if s != 1 else "")
    while len(parts) > 1 and parts[-1] == ":":
        parts.pop()
    return Expr(f"{literal(x)}[{', '.join(parts)}]")


def strided_index(x, rank: int, attrs: dict) -> Expr:
    """x[...] for a TF-style `strided_slice` node."""
    from ..ir.ops import strided_slice_index
    parts = []
    for item in strided_slice_index(rank, attrs):
        if item is None:
            parts.append("None")
        elif isinstance(item, slice):
            text = ("" if item.start is None else str(item.start)) + ":" + \
                ("" if item.stop is None else str(item.stop))
            parts.append(text + (f":{item.step}" if item.step not in (None, 1) else ""))
        else:
            parts.append(str(item))
    return Expr(f"{literal(x)}[{', '.join(parts) or '...'}]")


def take(x, axis: int, index) -> Expr:
    """numpy.take(x, index, axis) as indexing: x[:, :, index]."""
    return Expr(f"{literal(x)}[{', '.join([':'] * axis + [literal(index)])}]")


def import_generated(path: Path):
    """Import a generated model.py under a unique module name."""
    name = f"x2_generated_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
