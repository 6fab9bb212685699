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
