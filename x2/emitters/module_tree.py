"""model.py as a tree of classes, one per source module class (issue 47,
item 2): a torch source's modules, those of an ONNX file torch exported,
or a Keras model's layers that hold layers (the scopes its nodes record,
x2/ir/scopes.py) become classes named after theirs (`LlamaDecoderLayer`,
keras_hub's `TransformerEncoder`), each forward holding the nodes its module
computed and calling its children; values the parent computes are
arguments, as in the source.

A scope becomes a class only where that is the same computation:

- its nodes are convex in the dataflow (no value leaves the scope and comes
  back into it), so one call can compute them all;
- it is the source's module at its path (the class the source has there),
  called once, and its path is a Python attribute path holding named (not
  numbered) children;
- on Paddle, no op in it overwrites a value read outside it (Paddle
  Inference's in-place pass: paddle_inplace.py).

Any other scope stays inline in its parent, and report.json's
target_details "module_tree" says which and why. Instances whose classes
come out as the same text (weights aside) share one class; runs of them in
a list called one after another, output to input, become a loop (what each
call takes or gives of its own, a decoder layer's KV cache, zipped with
the layers and collected in lists).

torch.nn's own layers and containers (Linear, Sequential, ModuleList) are no
classes: x2 writes a layer as one call, and a container's children are
called from the module that holds it."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir import scopes
from ..text import escape_text
from .codegen import Assign, Expr, For, Namer, RESERVED, _render_statements
from .host_sizes import HostSize
from .lifetimes import reuse_names

MODULE_CALL = "module_call"
_TORCH_CONTAINER = "torch.nn.modules.container."
COMMENT_CHARS = 160


class LocalNamer(Namer):
    """Names inside one class: FX's counters (`mul_13`) left off, and the
    class's own module path (TorchScript's ONNX value names,
    `/model/layers.0/input_layernorm/Pow_output_0`), so that two layers of the
    same structure read alike (`mul`, `mul_2`, ...)."""

    def __init__(self, reserved=(), scopes=None, path: str = ""):
        super().__init__(reserved, scopes)
        self.path = path
        # the list indices on its path (model.layers.3): a model input or
        # output of that layer alone (optimum's past_key_values.3.key) is
        # named without it, so that every layer's class reads alike
        self.indices = {part for part in path.split(".") if part.isdigit()}

    def base(self, text: str) -> str:
        text = self.unindexed(text) or text
        parts = _below(re.split(r"[/:]", text), self.path)
        text = "/".join(_uncounted(p) for p in parts)
        return re.sub(r"(_\d+)+$", "", super().base(text)) or "v"


    def unindexed(self, text: str) -> str | None:
        """A dotted value name (a model input's) without its layer's index,
        or None where it names none."""
        parts = text.split(".")
        kept = [part for part in parts if part not in self.indices]
        return "_".join(kept) if "/" not in text and kept and len(kept) < len(parts) else None


def _below(parts: list[str], path: str) -> list[str]:
    """A value name's parts after those naming the module at `path`."""
    prefix = ""
    for i, part in enumerate(parts):
        if not part:
            continue
        prefix = f"{prefix}.{part}" if prefix else part
        if prefix == path:
            return parts[i + 1:] or parts
        if not path.startswith(prefix + "."):
            break
    return parts


def _uncounted(part: str) -> str:
    """A name part without the counters FX, TorchScript's ONNX export and
    x2's passes add (`mul_8_nchw`, `Constant_35_output_0`: `mul`, `Constant`)."""
    bare = _COUNTED.sub("", part)
    return bare or part


_COUNTED = re.compile(r"(_+\d+|_output|_nchw)+$")


@dataclass(eq=False)
class Instance:
    """One call of one source module (the root: the whole model)."""
    key: tuple
    scope: scopes.Scope | None
    parent: "Instance | None"
    children: list = field(default_factory=list)
    own: list = field(default_factory=list)         # nodes whose innermost scope it is
    members: set = field(default_factory=set)       # every node under it
    extracted: bool = True
    why: str = ""
    attr: str = ""                                  # attribute path from the root
    # the written forward: filled by Plan.emit
    inputs: list = field(default_factory=list)      # IR values read from outside
    outputs: list = field(default_factory=list)     # IR values read outside
    kids: list = field(default_factory=list)        # extracted children (after inlining)
    body: list = field(default_factory=list)
    args: list = field(default_factory=list)        # forward's argument names
    arg_values: list = field(default_factory=list)  # (IR value | None, written path | None)
    results: list = field(default_factory=list)
    namer: Namer | None = None
    attr_namer: Namer | None = None
    free: dict = field(default_factory=dict)        # written path -> argument name
    cls: str = ""
    text: str = ""
    host: dict = field(default_factory=dict)        # its sizes written as Python numbers

    @property
    def path(self) -> str:
        return self.scope.path if self.scope else ""

    def state_key(self, local: str) -> str:
        return f"{self.path}.{local}" if self.path else local

    def written(self, local: str) -> str:
        return f"{self.attr}.{local}" if self.attr else local


class ModuleCall:
    """An extracted child's call, standing among a parent's nodes (reads its
    inputs, computes its outputs) where statements are written."""

    op = MODULE_CALL

    def __init__(self, inst: Instance):
        self.inst = inst
        self.inputs = tuple(inst.inputs)
        self.outputs = tuple(inst.outputs)
        self.name = inst.path
        self.attrs: dict = {}
        self.source: dict = {}


@dataclass
class CallStep(Assign):
    """`targets = self.child(args)`: a loop may take it in (fold_loops)."""
    inst: Instance | None = None
    arg_texts: list = field(default_factory=list)
    values: list = field(default_factory=list)      # the IR value of each target


class Plan:
    """Which scopes become classes, and the writing of their forwards."""

    def __init__(self, e, root: Instance, instances: list[Instance]):
        self.e = e
        self.root = root
        self.instances = instances     # every non-root instance, in first-node order
        self.owners: dict[str, Instance] = {}
        self.by_attr: list[Instance] = []

    # -- analysis ------------------------------------------------------

    def extracted(self) -> list[Instance]:
        return [i for i in self.instances if i.extracted]

    def nearest(self, inst: Instance) -> Instance:
        """`inst` or its nearest extracted ancestor."""
        while not inst.extracted:
            inst = inst.parent
        return inst

    def report(self) -> dict:
        classes: dict[str, dict] = {}
        for inst in self.extracted():
            entry = classes.setdefault(inst.cls, {"source": inst.scope.cls, "instances": []})
            entry["instances"].append(inst.scope.key)
        return {"classes": classes,
                "inlined": [{"scope": i.scope.key, "class": i.scope.name, "why": i.why}
                            for i in self.instances if not i.extracted]}

    # -- writing -------------------------------------------------------

    def emit_root(self) -> list:
        e = self.e
        root = self.root
        root.namer, root.attr_namer = e.namer, e.layer_namer
        root.inputs, root.outputs = list(e.graph.inputs), list(e.graph.outputs)
        e.frame = root
        return self._statements(root)

    def _statements(self, inst: Instance) -> list:
        items = self._items(inst)
        return self.e.statements(items)

    def _items(self, inst: Instance) -> list:
        """inst's own nodes and its extracted children's calls, in an order
        that computes every value before it is read: depth first, each value's
        readers as soon as they can run, the earliest in the graph first. The
        order depends on the class's own dataflow only, not on where the
        graph computes what it reads from outside: an ONNX exporter computes
        a parent's mask where layer 0 first reads it, and layer 0 must still
        read like layer 1."""
        graph_pos = self.e.tree_positions
        entries = [(graph_pos[n], n) for n in inst.own]
        entries += [(min(graph_pos[n] for n in kid.members), ModuleCall(kid))
                    for kid in inst.kids]
        made: dict[str, int] = {}
        for index, (_, item) in enumerate(entries):
            for value in item.outputs:
                made[value] = index
        needs = [set() for _ in entries]
        users: list[list[int]] = [[] for _ in entries]
        for index, (_, item) in enumerate(entries):
            for value in item.inputs:
                src = made.get(value)
                if src is not None and src != index and src not in needs[index]:
                    needs[index].add(src)
                    users[src].append(index)
        waiting = [len(n) for n in needs]
        stack = sorted((i for i in range(len(entries)) if not waiting[i]),
                       key=lambda k: -entries[k][0])
        order = []
        while stack:
            i = stack.pop()
            order.append(entries[i][1])
            for j in sorted(users[i], key=lambda k: -entries[k][0]):
                waiting[j] -= 1
                if not waiting[j]:
                    stack.append(j)
        if len(order) != len(entries):
            raise AssertionError("internal: the scopes' calls form a cycle")
        return order

    def _reads(self, inst: Instance, items: list) -> list:
        """The values `inst`'s forward reads, by first read in `items` (its
        statements' order), a child's call reading as that child's forward."""
        reads = []
        for item in items:
            reads += self._reads(item.inst, self._items(item.inst)) \
                if isinstance(item, ModuleCall) else item.inputs
        return reads

    def _made(self, inst: Instance, items: list) -> list:
        """The values `inst`'s forward computes, in `items`' order (a child's
        call computing them as that child's forward)."""
        made = []
        for item in items:
            made += self._made(item.inst, self._items(item.inst)) \
                if isinstance(item, ModuleCall) else item.outputs
        return made

    def call(self, node: ModuleCall) -> list:
        """The statement that calls `node`'s child, its forward written first."""
        e = self.e
        child = node.inst
        parent = e.frame
        outer_namer, outer_host = e.namer, e.host
        child.namer = LocalNamer(reserved={"layer"}, scopes=e.namer.scopes, path=child.path)
        child.attr_namer = LocalNamer(
            reserved=set(e.layer_attributes) | set(e.tree.children.get(child.path, ())))
        host: dict = {}
        values = []   # (IR value, host: bool)
        items = self._items(child)
        # arguments and results in the order the forward reads and computes
        # them, not the graph's: two layers alike read alike
        child.inputs = _in_order(self._reads(child, items), child.inputs)
        child.outputs = _in_order(self._made(child, items), child.outputs)
        data = _data_input(e.graph, child.inputs, outer_host)
        if data is not None:   # (first: siblings that read their inputs in another order agree)
            child.inputs = [data] + [v for v in child.inputs if v != data]
        for value in child.inputs:
            size = outer_host.get(value)
            if size is not None and not _named(size):
                host[value] = size
                continue
            # the data's argument is `x`; others are named as the caller names
            # them (a mask, a size), which siblings share
            # (a model input of this layer alone: its own name, without the index)
            hint = (value if child.namer.unindexed(value) else outer_namer(value)) \
                if value in e.graph.inputs else \
                size.text() if size is not None and size.is_name() else \
                "sizes" if size is not None else "x" if value == data else outer_namer(value)
            name = child.namer(value, hint)
            if size is not None:
                host[value] = _rebound(size, name)
            values.append((value, size is not None))
            child.args.append(name)
        e.namer, e.host, e.frame = child.namer, host, child
        try:
            e.tree.container(child.path)
            child.body = e.statements(items)
            child.results = []
            returned = []
            for value in child.outputs:
                if value in host and not _named(host[value]):
                    continue
                returned.append(value)
                child.results.append(host[value].text() if value in host
                                     else str(e.value(value)))
        finally:
            e.namer, e.host, e.frame = outer_namer, outer_host, parent
        child_host = host
        child.host = host
        args = [outer_host[v].text() if is_host else str(e.value(v)) for v, is_host in values]
        for written, name in child.free.items():
            child.args.append(name)
            args.append(str(e.ref(written)))
        child.arg_values = [v for v, _ in values] + [None] * len(child.free)
        for value in child.outputs:
            if value in child_host and not _named(child_host[value]):
                e.host[value] = child_host[value]
        hint = "hidden" if _list_item(e.tree, child.path) else \
            re.sub(r"\W", "_", child.path.rpartition(".")[2])
        targets = []
        for value in returned:
            name = e.namer(value, None if value in e.graph.outputs else hint)
            if value in child_host:
                e.host[value] = _rebound(child_host[value], name)
            targets.append(name)
        callee = str(e.ref(child.attr))
        return [CallStep(targets, Expr(f"{callee}({', '.join(args)})"), inst=child,
                         arg_texts=args, values=returned)]

    def ref(self, inst: Instance, written: str) -> Expr:
        """`self.<written>` as `inst`'s forward reads it: under its own path,
        its own attribute; elsewhere an argument its caller passes."""
        if not inst.attr:
            return Expr(f"self.{written}")
        if written.startswith(inst.attr + "."):
            return Expr(f"self.{written[len(inst.attr) + 1:]}")
        if written not in inst.free:
            leaf = re.split(r"[.\[\]]", written.rstrip("]"))[-1] or "ref"
            inst.free[written] = inst.namer(f"\0ref:{written}", leaf)
        return Expr(inst.free[written])

    def owner(self, value: str | None) -> Instance:
        """The instance whose class holds x2's own constant `value` (read by
        several: the nearest one holding them all, which passes it down)."""
        frame = self.e.frame
        if value is None or self.e.namer.scope:
            return frame
        return self.owners.get(value, frame)

    def root_comment(self) -> str:
        source = self.e.graph.meta.source_class
        note = escape_text(f"{source} (the root module of the source)" if source else "")
        return note if len(note) <= COMMENT_CHARS else note[:COMMENT_CHARS] + "..."

    # -- finishing -----------------------------------------------------

    def finish(self) -> None:
        """Classes for every extracted instance (children first, so that a
        parent's text names its children's classes), loops folded, and each
        declaration line moved into the class that holds it."""
        e = self.e
        lines = list(e.code.submodules)
        buffers = list(e.code.buffers)
        extracted = sorted(self.extracted(), key=lambda i: -len(i.attr))
        owned: dict[int, list] = {id(i): [] for i in [self.root, *extracted]}
        owned_buffers: dict[int, list] = {id(i): [] for i in [self.root, *extracted]}
        aliases = []
        for written, expr in lines:
            if written in e.tree.alias_lines:  # a tied weight: another name of one built earlier
                aliases.append((written, expr))
                continue
            inst = self._holder(written, extracted)
            owned[id(inst)].append((_relative(written, inst), expr))
        for written, expr in buffers:
            inst = self._holder(written, extracted)
            owned_buffers[id(inst)].append((_relative(written, inst), expr))
        taken: dict[str, str] = {}    # class name -> its text
        texts: dict[str, str] = {}    # (text) -> class name
        classes = []
        for inst in self._post_order():
            inst.body = fold_loops(e, inst.body, inst)
            inst.body, inst.results, _ = reuse_names(inst.body, inst.results, inst.args,
                                                     _size_names(inst.host), inner=True)
            init = _init_lines(owned[id(inst)], owned_buffers[id(inst)], e.code.buffer_call)
            forward = _forward_lines(inst.args, inst.body, inst.results)
            text = "\n".join(init + forward)
            # a class x2 named after a path (scopes.DERIVED) is shared by every
            # module of the same code, whatever its name
            key = text if inst.scope.derived else f"{inst.scope.name}\0{text}"
            if key not in texts:
                texts[key] = _class_name(inst.scope.name, taken)
                taken[texts[key]] = text
                classes.append((texts[key], inst, init, forward))
            inst.cls = texts[key]
            e.tree.classes[inst.path] = inst.cls
        e.code.classes = [_render_class(name, self._comment(inst, name), init, forward,
                                        e.code.base_class)
                          for name, inst, init, forward in classes]
        e.code.submodules = owned[id(self.root)] + aliases
        e.code.buffers = owned_buffers[id(self.root)]
        # (a loop's last call may compute a graph output: returns read its name)
        self.root.results = list(e.code.returns)
        e.code.body = fold_loops(e, e.code.body, self.root)
        e.code.returns = self.root.results
        e.code.body, e.code.returns, renames = reuse_names(e.code.body, e.code.returns,
                                                           e.code.forward_args,
                                                           _size_names(e.host))
        # a name that holds several values in turn names none of them for
        # x2 check --bisect (which records each variable's last value)
        names = e.namer.names
        for key, name in list(names.items()):
            if name in renames.values() or name in renames:
                del names[key]

    def _comment(self, first: Instance, name: str) -> str:
        paths = [i.scope.key for i in self.extracted() if i.cls == name]
        more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
        what = "named after its path (the source names no class)" if first.scope.derived \
            else first.scope.cls
        note = escape_text(f"{what} at {paths[0]}{more}")
        return note if len(note) <= COMMENT_CHARS else note[:COMMENT_CHARS] + "..."

    def _post_order(self) -> list[Instance]:
        out = []

        def visit(inst):
            for kid in inst.kids:
                visit(kid)
            if inst is not self.root:
                out.append(inst)
        visit(self.root)
        return out

    def _holder(self, written: str, extracted: list[Instance]) -> Instance:
        for inst in extracted:   # deepest first
            if written.startswith(inst.attr + "."):
                return inst
        return self.root


def _in_order(order: list, values: list) -> list:
    """`values` in their first place in `order` (those not in it last)."""
    wanted, seen, out = set(values), set(), []
    for value in order:
        if value in wanted and value not in seen:
            seen.add(value)
            out.append(value)
    return out + [v for v in values if v not in seen]


def _data_input(graph, inputs: list, host: dict) -> str | None:
    """The input a class's forward calls `x`: its first argument, or where
    that is a tensor but no float one (a boolean mask read first, as
    keras_hub's blocks do), the first float tensor (the hidden states, which
    the loop's earlier layer computes: siblings name it alike). A first
    argument that is a size or a model input keeps its own name."""
    def is_float(value) -> bool:
        info = graph.info.get(value)
        return info is not None and str(info.dtype).startswith(("float", "bfloat"))
    first = next((v for v in inputs if host.get(v) is None or _named(host[v])), None)
    if first is None or host.get(first) is not None or first in graph.inputs or \
            is_float(first):
        return first
    return next((v for v in inputs if v not in graph.inputs and host.get(v) is None
                 and is_float(v)), first)


def _size_names(host: dict) -> set[str]:
    return {size.scalar for size in host.values() if size.is_name()}


def _named(size: HostSize) -> bool:
    """Whether a size's text reads a name (else it is all numbers)."""
    if size.items is not None:
        return any(not isinstance(i, int) for i in size.items)
    return not isinstance(size.scalar, int)


def _rebound(size: HostSize, name: str) -> HostSize:
    """`size` as a forward holds it under `name` (an argument or a result)."""
    if size.items is None:
        return HostSize(scalar=name)
    return HostSize(items=[i if isinstance(i, int) else f"{name}[{k}]"
                           for k, i in enumerate(size.items)])


def _list_item(tree, path: str) -> bool:
    parent, _, last = path.rpartition(".")
    return last.isdigit() and tree._is_list(parent)


def _relative(written: str, inst: Instance) -> str:
    return written[len(inst.attr) + 1:] if inst.attr else written


def _class_name(source: str, taken: dict) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", source.encode("ascii", "ignore").decode()) or "Block"
    if base[0].isdigit():
        base = f"M_{base}"
    name, i = base, 1
    while name in taken or name in RESERVED or name == "Model":
        i += 1
        name = f"{base}_{i}"
    return name


def _init_lines(lines: list, buffers: list, buffer_call: str) -> list[str]:
    out = []
    for name, expr in lines:
        out.append(f"self.{name} = {expr}")
    for name, expr in buffers:
        owner, _, leaf = name.rpartition(".")
        register = buffer_call.replace("self.", f"self.{owner}.") if owner else buffer_call
        out.append(f"{register}({leaf!r}, {expr})")
    return out


def _forward_lines(args: list[str], body: list, results: list[str]) -> list[str]:
    lines = [f"def forward(self{''.join(', ' + a for a in args)}):"]
    _render_statements(lines, body, "    ")
    lines.append("    return " + ", ".join(results) if results else "    return None")
    return lines


def _render_class(name: str, comment: str, init: list[str], forward: list[str],
                  base: str) -> str:
    lines = [f"class {name}({base}):", f"    # {comment}", "    def __init__(self):",
             "        super().__init__()"]
    lines += ["        " + line for line in init]
    lines += [""] + ["    " + line for line in forward]
    return "\n".join(lines)


def fold_loops(e, body: list, inst: Instance) -> list:
    """Runs of calls of one class on consecutive items of a list, each taking
    the one before's results where it took the first one's inputs, and the
    same other arguments, as `for layer in self.layers:`. Arguments of each
    call's own (a layer's cache) are zipped with the layers, and results
    the next call does not take are collected in lists."""
    out = []
    i = 0
    while i < len(body):
        run = _run(e, body, i)
        if len(run) < 2:
            out.append(body[i])
            i += 1
            continue
        steps, loop, renames = _loop(e, run, inst)
        # `hidden = embed_tokens` after `embed_tokens = ...`, which nothing
        # else reads: that statement names its result `hidden`
        first = steps[0] if steps else None
        made = _made_at(out, str(first.expr)) if len(steps) == 1 and \
            "," not in first.targets[0] else None
        if made is not None:
            old = out[made].targets[0]
            later = [_text_of(s) for s in out[made + 1:] + loop + body[i + len(run):]] + \
                list(inst.results)
            if not any(old in _NAME.findall(t) for t in later):
                out[made].targets = list(first.targets)
                steps = []
        # `hidden_3 = hidden` (a name nothing after the loop reads: the
        # previous loop's result): the loop carries `hidden` itself
        carried = _carried_name(first, loop + body[i + len(run):], inst) \
            if len(steps) == 1 else None
        if carried is not None:
            steps, loop = [], _renamed(loop, {first.targets[0]: carried})
        out.extend(steps + loop)
        i += len(run)
        names = inst.namer.names if inst.namer is not None else {}
        if carried is not None:
            renames = {k: carried if v == first.targets[0] else v for k, v in renames.items()}
            for key, name in list(names.items()):   # (one name for two values names neither)
                if name == carried:
                    del names[key]
        for step in run[:-1]:   # (earlier calls' results are no variable of their own)
            for value in step.inst.outputs:
                names.pop(value, None)
        for key, name in list(names.items()):
            if name in renames:
                if renames[name].isidentifier():
                    names[key] = renames[name]
                else:   # an item of a list: no variable of its own (x2 check --bisect)
                    del names[key]
        body = body[:i] + _renamed(body[i:], renames)
        inst.results = [_rename_text(r, renames) for r in inst.results]
    return out


_NAME = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)(?![\w'\"])")


def _made_at(out: list, name: str) -> int | None:
    """Where among `out`'s statements the one computing `name` alone (no
    call of a child's) stands, or None."""
    for k in range(len(out) - 1, -1, -1):
        step = out[k]
        if isinstance(step, Assign) and step.targets == [name]:
            return None if isinstance(step, CallStep) else k
        if not isinstance(step, Assign):
            return None
    return None


def _carried_name(start, rest: list, inst: Instance) -> str | None:
    """The name a loop's one start assignment (`hidden_3 = hidden`) copies,
    where neither the loop's other arguments nor anything after the loop
    (`rest`) read it: the loop may carry it instead."""
    if not isinstance(start, Assign) or isinstance(start, CallStep) or \
            len(start.targets) != 1 or "," in start.targets[0]:
        return None
    name = str(start.expr)
    if not _NAME.fullmatch(name) or name in RESERVED:
        return None
    later = [_text_of(s) for s in rest] + list(inst.results)
    return None if any(name in _NAME.findall(t) for t in later) else name


def _text_of(step) -> str:
    lines: list[str] = []
    _render_statements(lines, [step], "")
    return "\n".join(lines)


def _rename_text(text: str, renames: dict) -> str:
    return _NAME.sub(lambda m: renames.get(m.group(1), m.group(1)), str(text))


def _renamed(steps: list, renames: dict) -> list:
    """`steps` reading the names in `renames` as their new names."""
    import copy
    out = []
    for step in steps:
        step = copy.copy(step)
        for name in ("cond", "expr", "iterable"):
            if hasattr(step, name):
                setattr(step, name, Expr(_rename_text(getattr(step, name), renames)))
        if hasattr(step, "targets"):
            step.targets = [_rename_text(t, renames) for t in step.targets]
        if hasattr(step, "arg_texts"):
            step.arg_texts = [_rename_text(t, renames) for t in step.arg_texts]
        if hasattr(step, "results"):
            step.results = [Expr(_rename_text(r, renames)) for r in step.results]
        for name in ("then", "orelse", "body"):
            if isinstance(getattr(step, name, None), list):
                setattr(step, name, _renamed(getattr(step, name), renames))
        out.append(step)
    return out


def _run(e, body: list, start: int) -> list:
    first = body[start]
    if not isinstance(first, CallStep) or first.inst is None or not first.targets:
        return []
    parent, _, index = first.inst.path.rpartition(".")
    if not index.isdigit() or not _list_item(e.tree, first.inst.path):
        return []
    run = [first]
    carried: dict[int, int] | None = None   # argument -> the result before it takes
    own: set[int] | None = None             # arguments each call takes its own of
    for step in body[start + 1:]:
        prev = run[-1]
        if not isinstance(step, CallStep) or step.inst is None or \
                step.inst.cls != first.inst.cls or \
                step.inst.path != f"{parent}.{int(prev.inst.path.rpartition('.')[2]) + 1}" or \
                len(step.arg_texts) != len(prev.arg_texts) or \
                len(step.targets) != len(prev.targets):
            break
        earlier = {t for s in run for t in s.targets}
        mapping, differ = {}, set()
        ok = True
        for k, (now, before) in enumerate(zip(step.arg_texts, prev.arg_texts)):
            if now in prev.targets:
                mapping[k] = prev.targets.index(now)
            elif now != before:
                # a value of this call's own (its layer's cache), there before the run
                ok = _NAME.fullmatch(now) is not None and now not in earlier
                differ.add(k)
            if not ok:
                break
        if not ok or not mapping or len(set(mapping.values())) != len(mapping) or \
                (carried is not None and (mapping != carried or differ != own)):
            break
        # what the earlier call gives the next is read by that call alone
        readers = set(step.inst.members)
        passed = [prev.values[t] for t in mapping.values()]
        if any(v in e.graph.outputs or any(u not in readers for u in e.graph.users(v))
               for v in passed):
            break
        carried, own = mapping, differ
        run.append(step)
    return run if carried is not None else []


def _loop(e, run: list, inst: Instance) -> tuple[list, list, dict]:
    """(the carried names' start assignment, if any; the loop, after the
    lists it collects results in; {a call's result name: what reads it
    after the loop})."""
    first, last = run[0], run[-1]
    carried = {k: first.targets.index(text) for k, text in enumerate(run[1].arg_texts)
               if text in first.targets}
    own = [k for k, (now, before) in enumerate(zip(run[1].arg_texts, first.arg_texts))
           if k not in carried and now != before]
    collected = [t for t in range(len(first.targets)) if t not in carried.values()]
    names = first.targets
    starts = [(names[t], first.arg_texts[k])
              for k, t in sorted(carried.items(), key=lambda x: x[1])]
    starts = [(n, s) for n, s in starts if n != s]
    steps = [Assign([", ".join(n for n, _ in starts)],
                    Expr(", ".join(s for _, s in starts)))] if starts else []
    # each call's own arguments and results, named as the layer's forward names them
    namer = inst.namer or e.namer
    items = {k: namer(f"\0loop:{first.inst.path}:arg:{k}", first.inst.args[k]) for k in own}
    results = {t: namer(f"\0loop:{first.inst.path}:result:{t}", first.inst.results[t])
               for t in collected}
    lists = {t: namer(f"\0loop:{first.inst.path}:list:{t}", f"{first.inst.results[t]}s")
             for t in collected}
    args = [names[carried[k]] if k in carried else items.get(k, text)
            for k, text in enumerate(first.arg_texts)]
    parent, _, index = first.inst.path.rpartition(".")
    lo, hi = int(index), int(last.inst.path.rpartition(".")[2]) + 1
    size = max(e.tree.items.get(parent, {}).keys(), default=-1) + 1
    container = "self." + _relative(e.tree.attribute(parent), inst)
    if lo or hi != size:
        container += f"[{lo}:{hi}]"
    if own:
        zipped = [f"[{', '.join(step.arg_texts[k] for step in run)}]" for k in own]
        header = ", ".join(["layer", *items.values()])
        container = f"zip({', '.join([container, *zipped])})"
    else:
        header = "layer"
    targets = [results.get(t, name) for t, name in enumerate(names)]
    body = [Assign([", ".join(targets)], Expr(f"layer({', '.join(args)})"))]
    body += [Assign([], Expr(f"{lists[t]}.append({results[t]})")) for t in collected]
    loop = [Assign([name], Expr("[]")) for name in lists.values()]
    loop.append(For(header, Expr(container), body))
    # the loop's carried results keep the first call's names; the others are
    # items of their lists
    renames = {last.targets[t]: names[t] for t in carried.values()}
    renames.update({step.targets[t]: f"{lists[t]}[{j}]"
                    for j, step in enumerate(run) for t in collected})
    return steps, loop, renames


def plan(e) -> Plan | None:
    """The classes to write for `e.graph`, or None where it has no module
    scopes (an ONNX file torch did not export, a TF graph not traced from a
    Keras model, a torch source without its modules)."""
    graph = e.graph
    modules = graph.meta.source_modules
    # (a Keras model's weights keep x2's names: it has modules, no state_dict)
    if not modules or not (e.tree.active or graph.meta.source_framework == "tensorflow"):
        return None
    has_children = {p.rpartition(".")[0] for p in modules}

    def candidate(s: scopes.Scope) -> bool:
        if s.path not in modules and s.path.split(".")[0] not in modules:
            return False   # no module of the source (torch.export's own scopes)
        if s.cls.startswith(_TORCH_CONTAINER):
            return False
        return not (s.cls.startswith("torch.nn.") and s.path not in has_children)

    root = Instance((), None, None)
    innermost: dict = {}
    found: dict[tuple, Instance] = {}
    order: list[Instance] = []
    for node in graph.nodes:
        inst, key = root, ()
        for s in scopes.of(node):
            if not candidate(s):
                continue
            key = key + (s.key,)
            if key not in found:
                found[key] = Instance(key, s, inst)
                inst.children.append(found[key])
                order.append(found[key])
            inst = found[key]
        inst.own.append(node)
        innermost[node] = inst
        while inst is not None:
            inst.members.add(node)
            inst = inst.parent
    if not order:
        return None
    positions = {node: i for i, node in enumerate(graph.nodes)}
    e.tree_positions = positions
    calls: dict[str, int] = {}
    for inst in order:
        calls[inst.path] = calls.get(inst.path, 0) + 1
    state_prefixes = {k.rsplit(".", i)[0] for k in graph.meta.source_state
                      for i in range(1, k.count(".") + 1)}
    for inst in order:
        inst.why = _why_inline(e, inst, modules, calls, state_prefixes, positions)
        inst.extracted = not inst.why
        if inst.extracted:
            inst.attr = e.tree.attribute(inst.path)
    _paddle_overwrites(e, order)
    if not any(i.extracted for i in order):
        return None
    p = Plan(e, root, order)
    # nodes of inlined scopes go to the nearest class; children to theirs
    for inst in order:
        if not inst.extracted:
            target = p.nearest(inst.parent)
            target.own.extend(inst.own)
            inst.own = []
    for inst in [root, *order]:
        if inst.extracted and inst.parent is not None:
            p.nearest(inst.parent).kids.append(inst)
    for inst in [root, *order]:
        if inst.extracted:
            inst.own.sort(key=positions.get)
            inst.kids.sort(key=lambda k: min(positions[n] for n in k.members))
    for inst in order:
        if inst.extracted:
            _interface(graph, inst, positions)
    p.owners = _constant_owners(graph, p, innermost)
    e.namer.taken.add("layer")   # the loops' variable
    return p


def _why_inline(e, inst: Instance, modules: dict, calls: dict, state_prefixes: set,
                positions: dict) -> str:
    path, name = inst.path, inst.scope.name
    if modules.get(path) != name:
        return "not the source's module at its path"
    if calls.get(path, 0) > 1:
        return f"the source calls it {calls[path]} times"
    if e.tree.attribute(path) is None:
        return "its path is no Python attribute path"
    if e.tree._is_list(path):
        return "its children are numbered (a list)"
    if not inst.children and len(inst.members) == 1 and path not in state_prefixes:
        return "one op and no weights: written as that op"
    if inst.scope.derived and not inst.children:
        # an ONNX file from TorchScript names no class: a module of one op, or
        # one with no modules under it that holds a layer, is taken for the
        # torch.nn layer x2 writes it as (an nn.Linear's MatMul, an nn.LSTM)
        if len(inst.members) == 1:
            return "one op: written as that op"
        if any(node.op in _LEAF_LAYER_OPS for node in inst.members):
            return "no modules under it and a layer in it: taken for that torch.nn layer"
    if not _convex(e.graph, inst.members, positions):
        return "a value leaves it and comes back (its nodes are no one call)"
    if _is_a_layer(e.graph, inst, path):
        return ("it is itself a layer x2 writes as one call (a subclass of nn.Embedding, "
                "transformers' Conv1D, ...)")
    return ""


# IR ops written as one known layer (nn.Embedding, nn.Conv2d, ...) that sits
# at the path of the source module holding its weight (source_paths.py).
# (an embedding is a gather of its table; a dense one of transformers'
# Conv1D, written as model.py's Conv1D or Paddle's Linear)
_LAYER_OPS = {"gather", "embedding", "conv2d", "conv_transpose2d", "batch_norm", "layer_norm",
              "dense"}
# ... and those a torch.nn layer of several ONNX nodes becomes (TorchScript's
# nn.LSTM: a Transpose, the LSTM, a Squeeze)
_LEAF_LAYER_OPS = _LAYER_OPS | {"group_norm", "lstm", "gru", "rnn"}


def _is_a_layer(graph, inst: Instance, path: str) -> bool:
    """Whether one of the scope's ops reads a weight of the scope's own module
    as a known layer: that layer takes the module's path (BART's scaled word
    embedding is an nn.Embedding), so a class of its own could not sit there."""
    state = graph.meta.source_state

    def root(key: str) -> str:   # tied weights: the first key holding the tensor
        return (state.get(key) or {}).get("tied") or key
    own = {root(key) for key in state
           if key.startswith(path + ".") and "." not in key[len(path) + 1:]}
    for node in inst.members:
        if node.op not in _LAYER_OPS:
            continue
        for value in node.inputs:
            origin = graph.origin.get(value)
            if origin is None or not origin.param or root(origin.param) not in own:
                continue
            # a dense layer sits at the module's path where it is the module's
            # `weight` (Conv1D's); MultiheadAttention's in_proj_weight is a
            # Linear of its own in the module's class
            if node.op != "dense" or root(origin.param) == root(f"{path}.weight"):
                return True
    return False


def _convex(graph, members: set, positions: dict) -> bool:
    """Whether no path leaves `members` and comes back into them."""
    spots = sorted(positions[n] for n in members)
    lo, hi = spots[0], spots[-1]
    reached: set[str] = set()      # values computed outside from values of members
    inside: set[str] = set()
    for node in graph.nodes[lo:hi + 1]:
        if node in members:
            if any(v in reached for v in node.inputs):
                return False
            inside.update(node.outputs)
        elif any(v in inside or v in reached for v in node.inputs):
            reached.update(node.outputs)
    return True


def _paddle_overwrites(e, order: list[Instance]) -> None:
    """Paddle: a class whose op Paddle Inference would run in place over a
    value computed or read outside it stays inline (its caller's copy of
    the value would be written over); copies within one forward are made
    as in a flat one (paddle_inplace.py)."""
    check = getattr(e, "overwrites", None)
    if check is None:
        return
    graph = e.graph
    for inst in order:
        if not inst.extracted:
            continue
        for node in inst.members:
            value = check(node)
            if value is None:
                continue
            producer = graph.producer(value)
            others = [u for u in graph.users(value) if u is not node]
            if (value in graph.outputs or others) and (
                    producer not in inst.members or any(u not in inst.members for u in others)
                    or value in graph.outputs):
                inst.extracted = False
                inst.why = ("Paddle Inference would overwrite in place a value read "
                            "outside it")
                break


def _interface(graph, inst: Instance, positions: dict) -> None:
    """The values `inst` reads from outside (by first read) and those read
    outside it (by where they are computed)."""
    made = {v for n in inst.members for v in n.outputs}
    seen = set()
    reads = []
    for node in sorted(inst.members, key=positions.get):
        for value in node.inputs:
            if value and value not in made and value not in seen and \
                    value not in graph.constants:
                seen.add(value)
                reads.append(value)
    inst.inputs = reads
    outs = []
    for node in sorted(inst.members, key=positions.get):
        for value in node.outputs:
            if value in graph.outputs or any(u not in inst.members for u in graph.users(value)):
                outs.append(value)
    inst.outputs = outs


def _constant_owners(graph, p: Plan, innermost: dict) -> dict:
    """Each constant read by several classes: the nearest class holding them
    all (its forward passes it down)."""
    readers: dict[str, set] = {}
    for node in graph.nodes:
        for value in node.inputs:
            if value in graph.constants:
                readers.setdefault(value, set()).add(p.nearest(innermost[node]))
    owners = {}
    for value, insts in readers.items():
        if len(insts) > 1:
            owners[value] = _common(p, list(insts))
    return owners


def _common(p: Plan, insts: list[Instance]) -> Instance:
    def chain(inst):
        out = []
        while inst is not None:
            out.append(inst)
            inst = p.nearest(inst.parent) if inst.parent is not None else None
        return out[::-1]
    chains = [chain(i) for i in insts]
    common = p.root
    for level in zip(*chains):
        if all(x is level[0] for x in level):
            common = level[0]
        else:
            break
    return common
