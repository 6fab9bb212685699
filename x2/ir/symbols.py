"""Symbolic dims of a graph's interface.

A dim of a value's shape is an int, or None when the source leaves it
dynamic. For the graph's inputs and outputs, `GraphMeta.dims` names each
dynamic dim after the source (ONNX `dim_param`, a torch.export `Dim`, a name
given in `--input-shape`): the same symbol is the same size at run time. The
emitters write these names (ONNX `dim_param`s), and `x2 check` draws one size
per symbol, at several sizes (x2/check/shapes.py).

A dynamic dim the source does not name gets a positional symbol: "batch" for
axis 0, "dim{i}" for axis i. Positional symbols may join dims the source
kept apart; equal sizes are then always valid inputs, only less general.
"""
from __future__ import annotations

import re

BATCH = "batch"
_SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


def positional(axis: int) -> str:
    return BATCH if axis == 0 else f"dim{axis}"


def is_symbol(text: str) -> bool:
    """A name usable as a symbol: an ASCII identifier (it reaches generated
    code and file formats, so nothing else is accepted)."""
    return isinstance(text, str) and bool(_SYMBOL.match(text))


def value_dims(graph, value: str, unnamed: bool = True) -> list[str | None] | None:
    """The symbol of each axis of interface value `value` (None for a static
    axis); None when its rank is unknown. A dynamic axis the source did not
    name gets its positional symbol, or None when not `unnamed`."""
    info = graph.info.get(value)
    if info is None or info.shape is None:
        return None
    named = graph.meta.dims.get(value) or []
    if len(named) != len(info.shape):
        named = [None] * len(info.shape)
    return [None if d is not None else (named[i] or (positional(i) if unnamed else None))
            for i, d in enumerate(info.shape)]


def dims_problems(graph) -> list[str]:
    """Lint: a named input dim must be a dynamic one, of an input of that rank
    (an output's names are the source's hints; value_dims drops a stale one)."""
    problems = []
    for value, named in graph.meta.dims.items():
        info = graph.info.get(value)
        if value not in graph.inputs:
            continue
        if info is None or info.shape is None or len(info.shape) != len(named):
            problems.append(f"dims {named} of '{value}' do not match its shape "
                            f"{None if info is None else info.shape}")
        else:
            problems.extend(f"'{value}' axis {i} is static ({d}) but named '{s}'"
                            for i, (d, s) in enumerate(zip(info.shape, named))
                            if s is not None and d is not None)
            problems.extend(f"'{value}' axis {i} is named {s!r}, not an identifier"
                            for i, s in enumerate(named) if s is not None and not is_symbol(s))
    return problems
