"""A small structured model of the Python module an emitter writes.

Emitters describe the generated code as data (submodules, buffers, one
assignment per IR node) and `render_module` prints it; op emitters only build
expressions with `call`, never whole lines of text.
"""
from __future__ import annotations

import keyword
import re

import numpy as np
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Expr:
    text: str

    def __str__(self) -> str:
        return self.text


def literal(value) -> str:
    if isinstance(value, Expr):
        return value.text
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
    return repr(value)


def call(fn: str, *args, **kwargs) -> Expr:
    parts = [literal(a) for a in args]
    parts += [f"{k}={literal(v)}" for k, v in kwargs.items()]
    return Expr(f"{fn}({', '.join(parts)})")


def binop(a, op: str, b) -> Expr:
    return Expr(f"{literal(a)} {op} {literal(b)}")


@dataclass
class ModuleCode:
    docstring: str
    header: list[str]                       # import lines and guards
    base_class: str
    submodules: list[tuple[str, Expr]] = field(default_factory=list)   # self.name = expr
    buffers: list[tuple[str, Expr]] = field(default_factory=list)      # registered buffers
    buffer_call: str = "self.register_buffer"
    forward_args: list[str] = field(default_factory=list)
    body: list[tuple[list[str], Expr, str]] = field(default_factory=list)  # targets, expr, comment
    returns: list[str] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)


def render_module(code: ModuleCode) -> str:
    lines = [f'"""{code.docstring}"""', *code.header, "", "",
             f"class Model({code.base_class}):",
             "    def __init__(self):",
             "        super().__init__()"]
    for name, expr in code.submodules:
        lines.append(f"        self.{name} = {expr}")
    for name, expr in code.buffers:
        lines.append(f"        {code.buffer_call}({name!r}, {expr})")
    lines += ["", f"    def forward(self, {', '.join(code.forward_args)}):"]
    for targets, expr, comment in code.body:
        suffix = f"  # {comment}" if comment else ""
        lines.append(f"        {', '.join(targets)} = {expr}{suffix}")
    ret = code.returns[0] if len(code.returns) == 1 else ", ".join(code.returns)
    lines.append(f"        return {ret}")
    lines += ["", "", *code.footer]
    return "\n".join(lines).rstrip() + "\n"


class Namer:
    """Readable, unique Python identifiers from graph value names."""

    def __init__(self, reserved: set[str] | None = None):
        self.taken = set(reserved or ()) | set(keyword.kwlist) | {"self", "paddle", "torch",
                                                                   "nn", "F", "np", "os", "sys"}
        self.names: dict[str, str] = {}

    def __call__(self, value: str, hint: str | None = None) -> str:
        if value in self.names:
            return self.names[value]
        base = _identifier(hint or value)
        name, i = base, 1
        while name in self.taken:
            i += 1
            name = f"{base}_{i}"
        self.taken.add(name)
        self.names[value] = name
        return name


def _identifier(text: str) -> str:
    parts = [p for p in re.split(r"[/:]", text) if p and not p.endswith("PartitionedCall")]
    tail = parts[-2:] if len(parts) >= 2 else parts
    # Drop the numeric suffix fresh_name adds ("relu__12" -> "relu").
    name = "_".join(re.sub(r"__\d+$", "", p) for p in tail) or "v"
    name = re.sub(r"\W+", "_", name).strip("_").lower() or "v"
    return f"v_{name}" if name[0].isdigit() else name
