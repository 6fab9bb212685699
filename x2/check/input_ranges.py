"""Valid value ranges of integer inputs (token ids, masks, indices), so that
`x2 check` feeds ids a model can look up instead of arbitrary integers.

A range is [low, high) and comes from, in order: --input-range NAME:LOW,HIGH;
the table an input indexes (an embedding: a `gather` on axis 0 of a constant
with N rows gives [0, N)); the lengths of a recurrent layer's sequences
([1, steps]); a mask by its name ([0, 2)). numpy only."""
from __future__ import annotations

from ..errors import X2Error

# Ops an index passes through unchanged on its way to a lookup table.
_PASS_THROUGH = ("cast", "identity", "reshape", "unsqueeze", "squeeze", "flatten", "expand")


def parse_input_ranges(values) -> dict[str, list[int]]:
    """--input-range NAME:LOW,HIGH (repeatable; HIGH exclusive)."""
    ranges = {}
    for value in values or ():
        name, sep, bounds = value.rpartition(":")
        parts = bounds.split(",")
        try:
            low, high = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (None, None)
        except ValueError:
            low = high = None
        if not sep or not name or low is None or high <= low:
            raise X2Error(f"--input-range {value!r}: expected NAME:LOW,HIGH with integers "
                          f"LOW < HIGH (HIGH exclusive), e.g. input_ids:0,30522")
        ranges[name] = [low, high]
    return ranges


def parse_input_values(values) -> dict[str, int | float | list]:
    """--input-value NAME=VALUE (repeatable): a number, or numbers joined by commas."""
    fixed: dict[str, int | float | list] = {}
    for value in values or ():
        name, sep, text = value.partition("=")
        try:
            numbers = [float(v) if any(c in v for c in ".eE") or v.strip().lower() in (
                "nan", "inf", "-inf") else int(v) for v in text.split(",")]
        except ValueError:
            numbers = []
        if not sep or not name or not numbers:
            raise X2Error(f"--input-value {value!r}: expected NAME=NUMBER or NAME=N1,N2,..., "
                          f"e.g. sr=16000")
        fixed[name] = numbers[0] if len(numbers) == 1 else numbers
    return fixed


def infer_index_ranges(graph) -> dict[str, list[int]]:
    """Integer graph inputs that index the rows of a constant table."""
    ranges: dict[str, list[int]] = {}
    for name in graph.inputs:
        dtype = graph.dtype(name) or ""
        if not (dtype.startswith("int") or dtype.startswith("uint")):
            continue
        rows = _table_rows(graph, name, depth=0)
        steps = _sequence_steps(graph, name)
        if steps:
            ranges[name] = [1, steps + 1]
        elif rows:
            ranges[name] = [0, min(rows)]
        elif "mask" in name.lower():
            ranges[name] = [0, 2]
    return ranges


def infer_special_ids(graph) -> dict[str, list[int]]:
    """Integer inputs -> ids their lookup tables treat apart (an embedding's
    padding_idx): values convert's verify must feed."""
    special: dict[str, list[int]] = {}
    for name in graph.inputs:
        pads = sorted({node.attrs["padding_idx"] for node in _lookups(graph, name, 0)
                       if node.attrs.get("padding_idx") is not None})
        if pads:
            special[name] = pads
    return special


def _lookups(graph, value: str, depth: int) -> list:
    """The gathers whose indices are `value`, through ops that pass it on."""
    found: list = []
    if depth > 4:
        return found
    for node in graph.users(value):
        if node.op == "gather" and len(node.inputs) > 1 and node.inputs[1] == value:
            found.append(node)
        elif (node.op in _PASS_THROUGH and node.inputs and node.inputs[0] == value) or \
                (node.op == "where" and value in node.inputs[1:]):
            # where: Keras's take() wraps negative ids, where(ids < 0, ids + N, ids).
            for out in node.outputs:
                found += _lookups(graph, out, depth + 1)
    return found


def _sequence_steps(graph, value: str) -> int | None:
    """The time steps of the sequences `value` gives the lengths of (the
    `seq_lens` input of a recurrent op), when static: lengths are 1..steps."""
    for node in graph.users(value):
        if node.op in ("lstm", "gru", "rnn") and node.inputs[4:5] == (value,):
            shape = graph.shape(node.inputs[0])
            steps = shape[1 if node.attrs.get("batch_first") else 0] if shape else None
            if isinstance(steps, int) and steps > 0:
                return steps
    return None


def _table_rows(graph, value: str, depth: int) -> list[int]:
    rows: list[int] = []
    for node in _lookups(graph, value, depth):
        table = node.inputs[0]
        shape = graph.shape(table)
        if graph.is_constant(table) and shape and node.attrs.get("axis", 0) == 0 and shape[0]:
            rows.append(int(shape[0]))
    return rows
