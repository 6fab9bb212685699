"""Tensors let go once forward has read them for the last time: a `del` of
each after the statement that last reads it, as torch.fx's generated code
does (`x = None`). A forward that keeps every intermediate until it returns
holds all of them at once, so each new one lands in fresh memory; torch's
eager ResNet-50 took 1.5x as long that way (docs/bench_deploy.md). Only the
names forward itself assigns are released, never its arguments or what it
returns."""
from __future__ import annotations

import copy
import re

from .codegen import Assign, Def, Expr, _render_statements

# an identifier, not an attribute (`.name`) and not a keyword argument (`name=`)
_NAME = re.compile(r"(?<![\w.'\"])([A-Za-z_]\w*)(?!\w|\s*=[^=])")


def _text(step) -> str:
    if isinstance(step, Assign):
        return str(step.expr)
    lines: list[str] = []
    _render_statements(lines, [_uncommented(step)], "")
    return "\n".join(lines)


def _uncommented(step):
    """`step` without its provenance comments (source names would read as uses)."""
    step = copy.copy(step)
    step.comment = ""
    for field in ("then", "orelse", "body"):
        if isinstance(getattr(step, field, None), list):
            setattr(step, field, [_uncommented(s) for s in getattr(step, field)])
    return step


def _assigned(step) -> set[str]:
    """The names `step` binds for certain: a branch or loop body may not run,
    so what it assigns is left alone."""
    if not isinstance(step, Assign):
        return set()
    return {t.strip() for target in step.targets for t in target.split(",")
            if t.strip().isidentifier()}


def release_dead(body: list, returns: list[str]) -> list:
    """`body` with `del` statements after the last read of each name it
    assigns, but those in the `returns` expressions."""
    keep = {name for text in returns for name in _NAME.findall(text)}
    last_read: dict[str, int] = {}
    for i, step in enumerate(body):
        names = _NAME.findall(_text(step))
        if isinstance(step, Def):  # a closure reads them whenever it is called
            keep.update(names)
        for name in names:
            last_read[name] = i
    # a name goes after its first assignment and its last read, whichever is later
    released_after: dict[int, list[str]] = {}
    seen: set[str] = set()
    for i, step in enumerate(body):
        for name in _assigned(step) - seen - keep:
            released_after.setdefault(max(i, last_read.get(name, -1)), []).append(name)
        seen |= _assigned(step)
    out = []
    for i, step in enumerate(body):
        out.append(step)
        if i in released_after:
            out.append(Assign([], Expr(f"del {', '.join(sorted(released_after[i]))}")))
    return out


def reuse_names(body: list, returns: list[str], arguments: list[str], sizes=(),
                inner: bool = False) -> tuple[list, list[str], dict[str, str]]:
    """`body` as a person writes it, `x = self.conv(x)`: a statement whose
    single result is computed from a name read there for the last time
    takes that name, so the tensor it held goes when the name is rebound,
    with no `del`. Returns (body, returns, {old name: the name it took}).
    Only names assigned once at the top level are given or taken; a name a
    closure reads (Def) keeps its own, and so do `sizes`. `inner`: the
    forward of a class the model calls, whose arguments and results are
    names of its own (`x = x + attn`, `return x`); the model's own forward
    keeps its inputs' and outputs' names, which are its interface's."""
    counts: dict[str, int] = {}
    for step in body:
        for name in _assigned_all(step):
            counts[name] = counts.get(name, 0) + 1
    keep = set()
    last_read: dict[str, int] = {}
    for i, step in enumerate(body):
        names = _NAME.findall(_text(step))
        if isinstance(step, Def):
            keep.update(names)
        for name in names:
            last_read[name] = i
    end = len(body)
    for text in returns:
        for name in _NAME.findall(text):
            last_read[name] = end
    # (the model's arguments are not taken: they name its interface)
    # (sizes written as Python numbers name no tensor, and keep their names)
    once = {n for n, c in counts.items() if c == 1} - set(arguments) - set(sizes)
    if inner:
        once |= set(arguments) - set(counts) - set(sizes)
    # what forward returns keeps its name (a graph output's is the interface's)
    # (a class's single result may take a name: `return x`; several keep theirs)
    returned = set() if inner and len(returns) == 1 else \
        {name for text in returns for name in _NAME.findall(text)}
    renames: dict[str, str] = {}
    live_until = dict(last_read)
    out = []
    for i, step in enumerate(body):
        step = _rename_step(step, renames) if renames else step
        out.append(step)
        if not isinstance(step, Assign) or len(step.targets) != 1 or \
                not step.targets[0].isidentifier():
            continue
        target = step.targets[0]
        if target not in once or target in keep or target in returned:
            continue
        for name in _NAME.findall(str(step.expr)):
            if name == target or name not in once or name in keep or \
                    live_until.get(name, -1) != i or name in renames:
                continue
            renames[target] = name
            step.targets = [name]
            live_until[name] = live_until.get(target, i)
            break
    returns = [_NAME.sub(lambda m: renames.get(m.group(1), m.group(1)), r) for r in returns]
    return out, returns, renames


def _assigned_all(step) -> set[str]:
    """Every name `step` binds, in branches and loops too."""
    names = set()
    if hasattr(step, "targets"):
        names |= {t.strip() for target in step.targets for t in target.split(",")
                  if t.strip().isidentifier()}
    for field in ("then", "orelse", "body"):
        for inner in getattr(step, field, None) or []:
            names |= _assigned_all(inner)
    if isinstance(step, Def):
        names.add(step.name)
    var = getattr(step, "var", None)
    if var:
        names.add(var)
    return names


def _rename_step(step, renames: dict):
    """`step` reading each name in `renames` as the name it took."""
    swap = lambda text: _NAME.sub(lambda m: renames.get(m.group(1), m.group(1)), str(text))
    step = copy.copy(step)
    for name in ("cond", "expr", "iterable"):
        if hasattr(step, name):
            setattr(step, name, Expr(swap(getattr(step, name))))
    if hasattr(step, "targets"):
        step.targets = [swap(t) for t in step.targets]
    if hasattr(step, "arg_texts"):
        step.arg_texts = [swap(t) for t in step.arg_texts]
    if hasattr(step, "results") and isinstance(step, Def):
        step.results = [Expr(swap(r)) for r in step.results]
    if isinstance(step, Def):
        step.args = [swap(a) for a in step.args]
    for name in ("then", "orelse", "body"):
        if isinstance(getattr(step, name, None), list):
            setattr(step, name, [_rename_step(s, renames) for s in getattr(step, name)])
    return step
