"""The shapes `x2 check` runs a converted model at.

A converted model keeps the dims its source left dynamic, each under a
symbol (x2/ir/symbols.py; report.json inputs' "dims"). Parity at one shape
proves nothing about the others, so every symbol is checked at three sizes:
its example size, 1, and a larger odd size (odd sizes catch a split or
reshape that assumed even lengths). Dims that share a symbol get one size.
"""
from __future__ import annotations

from ..errors import X2Error
from ..ir.symbols import BATCH, is_symbol

# A symbol with no example size from the source (an ONNX dim_param, a TF
# None dim): the batch takes x2 check's --batch, any other dim this.
DEFAULT_SIZE = 16


def symbols(spec: dict) -> list[str]:
    """The symbols of the inputs in `spec`, in order of first appearance."""
    seen: dict[str, None] = {}
    for item in spec["inputs"]:
        for symbol in _dims(item):
            if symbol:
                seen[symbol] = None
    return list(seen)


def _dims(item: dict) -> list:
    """An input's symbol per axis: report.json "dims", or for reports written
    before symbols (and declared unknown ranks) the batch for each None dim."""
    shape = item.get("shape")
    if shape is None:
        return [BATCH]
    return item.get("dims") or [BATCH if d is None else None for d in shape]


def known_dims(names: list[str], given: dict[str, list[int]] | None) -> dict[str, list[int]]:
    """`given` (--dim NAME=S1,S2,...), refused when it names a dim the
    converted model does not have."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise X2Error(f"--dim {unknown[0]}: the converted model has no dynamic dim of that "
                      f"name; its dims are {', '.join(names) or 'none'}")
    return given


def larger(size: int) -> int:
    """A larger odd size than `size`: half as large again, made odd."""
    bigger = size + max(1, size // 2)
    return bigger if bigger % 2 else bigger + 1


def size_sets(spec: dict, examples: dict[str, int], batch: int,
              given: dict[str, list[int]] | None = None) -> list[dict[str, int]]:
    """One {symbol: size} per shape to check; the first is the example.
    `given` (--dim NAME=S1,S2,...) replaces a symbol's sizes; a symbol given
    fewer sizes than the others keeps its last one."""
    names = symbols(spec)
    if not names:
        return [{}]
    given = known_dims(names, given)
    sizes = {}
    for name in names:
        # --batch sets the batch's example size; others come from the source.
        example = batch if name == BATCH else examples.get(name) or DEFAULT_SIZE
        sizes[name] = given.get(name) or list(dict.fromkeys([example, 1, larger(example)]))
    count = max(len(s) for s in sizes.values())
    return [{name: s[min(i, len(s) - 1)] for name, s in sizes.items()} for i in range(count)]


def input_shape(item: dict, sizes: dict[str, int]) -> list[int]:
    """The shape of input `item` at the symbol sizes `sizes`."""
    shape = item.get("shape")
    dims = _dims(item)
    if shape is None:
        return [sizes[BATCH]]
    return [sizes[symbol] if d is None else d for d, symbol in zip(shape, dims)]


def parse_dim_sizes(values) -> dict[str, list[int]]:
    """--dim NAME=S1,S2,...: the sizes to check a dynamic dim at."""
    out = {}
    for value in values or ():
        name, eq, sizes = value.partition("=")
        try:
            parsed = [int(s) for s in sizes.split(",")]
        except ValueError:
            parsed = []
        if not eq or not is_symbol(name) or not parsed or min(parsed) < 1:
            raise X2Error(f"--dim {value!r}: expected NAME=S1,S2,... with sizes >= 1, "
                          f"e.g. seq=1,16,33")
        out[name] = parsed
    return out
