"""The vocabulary of op schemas: what an IR op takes, holds and gives.

An `OpDef` (x2/ir/ops.py has one per op) states its inputs, outputs and
attributes with types and defaults. `Graph.add_node` applies the defaults,
`Graph.lint` checks nodes against the schema, and docs/IR.md's op table and
the emitter-coverage test are generated from it, so the contract between
mappers, passes and emitters is code rather than prose.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16",
          "int32", "int64", "bool", "uint16", "uint32", "uint64")


def numpy_dtype(name: str):
    """numpy's dtype for an IR dtype name; bfloat16 comes from ml_dtypes
    (importing it registers the name with numpy)."""
    import numpy as np
    if name == "bfloat16":
        import ml_dtypes  # noqa: F401
    return np.dtype(name)

# What each layout kind means to the layout pass (x2/passes/layout.py).
LAYOUT_KINDS = {
    "elementwise": "works in any layout; constants are permuted to match",
    "reduce": "reduces `axes`; the pass permutes the axes (and the output when "
              "`keepdims=False`)",
    "axis": "acts along `axis`; the pass permutes it",
    "pad": "the pass permutes `pads`",
    "slice": "the pass permutes `axes`",
    None: "Transposes stop here",
}

TARGETS = ("paddle", "onnx", "torch")


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_float(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_list_of(check):
    return lambda v: isinstance(v, (list, tuple)) and all(check(x) for x in v)


# Attribute types: JSON values (graph.json holds them as they are).
_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "int": _is_int,
    "float": _is_float,
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "dtype": lambda v: v in DTYPES,
    "ints": _is_list_of(_is_int),
    # A subgraph (x2.ir.Graph) of a control-flow op; checked by duck type,
    # because graph.py imports this module.
    "graph": lambda v: hasattr(v, "nodes") and hasattr(v, "outputs") and hasattr(v, "inputs"),
}


@dataclass(frozen=True)
class Attr:
    type: str
    default: Any = REQUIRED     # None: may be absent (the kernel treats None as "not set")
    choices: tuple = ()         # the allowed values of a "str" attribute
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def problem(self, value) -> str | None:
        """Why `value` does not fit, or None."""
        if value is None and self.default is None:
            return None
        if not _TYPE_CHECKS[self.type](value):
            return f"is {value!r}, not of type {self.type}"
        if self.choices and value not in self.choices:
            return f"is {value!r}, not one of {', '.join(self.choices)}"
        return None


@dataclass(frozen=True)
class Input:
    name: str
    optional: bool = False   # may be left out at the end, or given as "" before another
    variadic: bool = False   # one or more values (zero or more when also optional)


def parse_inputs(spec: str) -> tuple[Input, ...]:
    """"x w b?" -> x, w and an optional b; "x..." -> one or more x; "x*" ->
    zero or more x."""
    return tuple(Input(word.rstrip("?.*"), word.endswith(("?", "*")),
                       word.endswith(("...", "*"))) for word in spec.split())


@dataclass(frozen=True)
class OpDef:
    name: str
    inputs: tuple[Input, ...]
    attrs: dict[str, Attr]
    outputs: int | None            # None: one or more (split)
    layout: str | None
    kernel: Callable | None        # (inputs: list[np.ndarray], attrs) -> list[np.ndarray]
    doc: str
    # target -> why its emitter has no code for this op (the coverage test reads it)
    unsupported: dict[str, str] = field(default_factory=dict)

    @property
    def min_inputs(self) -> int:
        return sum(1 for i in self.inputs if not i.optional)

    @property
    def max_inputs(self) -> int | None:
        return None if any(i.variadic for i in self.inputs) else len(self.inputs)

    def input_spec(self, position: int) -> Input | None:
        if position < len(self.inputs):
            return self.inputs[position]
        last = self.inputs[-1] if self.inputs else None
        return last if last is not None and last.variadic else None

    def with_defaults(self, attrs: dict) -> dict:
        """`attrs` plus the default of every attribute left out (in place)."""
        for name, attr in self.attrs.items():
            if name not in attrs and not attr.required:
                attrs[name] = attr.default
        return attrs

    def problems(self) -> list[str]:
        """What is inconsistent in this definition (the schema test asserts none)."""
        out = []
        if not self.doc or "\n" in self.doc:
            out.append("needs a one-line doc")
        if self.layout not in LAYOUT_KINDS:
            out.append(f"unknown layout kind {self.layout!r}")
        names = [i.name for i in self.inputs]
        if len(set(names)) != len(names):
            out.append("input names repeat")
        if any(i.variadic for i in self.inputs[:-1]):
            out.append("only the last input may be variadic")
        if any(a.optional and not b.optional for a, b in zip(self.inputs, self.inputs[1:])):
            out.append("a required input follows an optional one")
        if self.outputs is not None and self.outputs < 1:
            out.append("needs at least one output")
        for name, attr in self.attrs.items():
            if attr.type not in _TYPE_CHECKS:
                out.append(f"attribute {name}: unknown type {attr.type!r}")
            elif attr.default is not REQUIRED and attr.problem(attr.default):
                out.append(f"attribute {name}: default {attr.problem(attr.default)}")
            if attr.choices and attr.type != "str":
                out.append(f"attribute {name}: choices need type str")
            if isinstance(attr.default, (list, dict)):
                out.append(f"attribute {name}: a mutable default would be shared by nodes")
        for target in self.unsupported:
            if target not in TARGETS or not self.unsupported[target]:
                out.append(f"unsupported[{target!r}] needs a known target and a reason")
        return out
