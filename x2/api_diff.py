"""API-difference metadata: what a TensorFlow / PyTorch API is in Paddle.

Entries are declared next to the mappers (`mappers/tf/api_docs.py`,
`mappers/torch/api_docs.py`) with the `api()` helper and rendered into
`docs/api_diff/` by `tools/gen_api_diff.py`. Each entry names the op types /
ATen targets the API lowers to (checked against the registries: every
registered op must be covered by some entry, and every named op must have a
mapper), the argument differences (hand-written), notes, and a runnable
example on both sides that the tests execute and compare
(tests/test_api_diff.py).

Examples are code strings run with `np`, `x` (a fixed float32 input of
`shape`, seeded) and `rng` (np.random.RandomState(1), fresh per side) in
scope, plus the framework module(s); each must bind `out` (a tensor, array or
a tuple/list of them). This module imports no framework.
"""
from __future__ import annotations

from dataclasses import dataclass, field

KINDS = {
    "same": "same",
    "renamed": "renamed",
    "default": "different default",
    "semantics": "different semantics",
    "unsupported": "unsupported",
    "paddle-only": "Paddle only",
}


@dataclass(frozen=True)
class Arg:
    source: str   # source argument name ("—" when Paddle-only)
    paddle: str   # Paddle argument name ("—" when it has none)
    kind: str     # a key of KINDS
    note: str = ""


@dataclass(frozen=True)
class ApiDiff:
    api: str                  # "tf.nn.conv2d", "torch.nn.Conv2d"
    framework: str            # "tf" or "torch"
    family: str               # "conv", "activation", ...
    ops: tuple[str, ...]      # op types / ATen targets x2 maps; () = reference only
    paddle: str               # Paddle equivalent ("paddle.nn.functional.conv2d")
    source_sig: str
    paddle_sig: str
    args: tuple[Arg, ...]
    source_code: str          # example, binds `out`
    paddle_code: str          # example, binds `out`
    notes: tuple[str, ...] = ()
    shape: tuple[int, ...] = (2, 3, 4)
    atol: float = 1e-5
    rtol: float = 1e-5
    converted: bool = True    # False: reference only, x2 has no mapper for it

    @property
    def slug(self) -> str:
        import re
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.api).strip("_")


def a(source: str, paddle: str, kind: str = "same", note: str = "") -> Arg:
    """One argument-table row."""
    if kind not in KINDS:
        raise ValueError(f"unknown argument kind {kind!r}")
    return Arg(source, paddle, kind, note)


@dataclass
class ApiTable:
    """The entries of one framework, filled with `table.api(...)`."""
    framework: str
    entries: list[ApiDiff] = field(default_factory=list)

    def api(self, api: str, family: str, ops, paddle: str, source_sig: str, paddle_sig: str,
            args, source_code: str, paddle_code: str, notes=(), **kw) -> ApiDiff:
        if isinstance(ops, str):
            ops = (ops,)
        if isinstance(notes, str):
            notes = (notes,)
        entry = ApiDiff(api, self.framework, family, tuple(ops), paddle, source_sig, paddle_sig,
                        tuple(args), _dedent(source_code), _dedent(paddle_code), tuple(notes),
                        converted=bool(ops), **kw)
        if any(e.api == api for e in self.entries):
            raise ValueError(f"duplicate API entry {api}")
        self.entries.append(entry)
        return entry


def _dedent(code: str) -> str:
    import textwrap
    return textwrap.dedent(code).strip() + "\n"


def tables() -> dict[str, ApiTable]:
    from mappers.tf.api_docs import TABLE as tf_table
    from mappers.torch.api_docs import TABLE as torch_table
    return {"tf": tf_table, "torch": torch_table}


def all_entries() -> list[ApiDiff]:
    return [e for t in tables().values() for e in t.entries]


def uncovered_ops(registry, entries) -> list[str]:
    """Registered op types / ATen targets that no entry names (every mapper needs docs)."""
    named = {op for e in entries for op in e.ops}
    return sorted(op for op in registry.supported() if op not in named)


def unknown_ops(registry, entries) -> list[tuple[str, str]]:
    """(api, op) pairs naming an op no mapper of the registry handles."""
    known = registry.supported()
    return sorted((e.api, op) for e in entries for op in e.ops if op not in known)


# --- example execution (run by tools/run_api_examples.py, one process per side) ---

def example_input(entry: ApiDiff):
    import numpy as np
    return np.random.RandomState(0).randn(*entry.shape).astype(np.float32)


def to_numpy(value):
    import numpy as np
    if isinstance(value, (tuple, list)):
        return [to_numpy(v) for v in value]
    if hasattr(value, "detach"):          # torch
        value = value.detach().cpu()
    if hasattr(value, "numpy"):           # tf, torch, paddle
        value = value.numpy()
    return np.asarray(value)


def run_example(entry: ApiDiff, side: str, modules: dict):
    """Run one side ('source' or 'paddle') of an entry's example; returns a list of arrays."""
    import numpy as np
    scope = {"np": np, "x": example_input(entry), "rng": np.random.RandomState(1), **modules}
    exec(compile(entry.source_code if side == "source" else entry.paddle_code,
                 f"<{entry.api} {side} example>", "exec"), scope)
    out = to_numpy(scope["out"])
    return out if isinstance(out, list) else [out]
