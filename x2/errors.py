"""Errors a user can act on. Anything else escaping a step is a bug in x2."""
from __future__ import annotations

from .text import printable, quoted


class X2Error(Exception):
    """An error with a message meant for the user (no traceback shown)."""

    kind = "error"
    # The message is one line: a line break in it comes from a model's name or
    # path and is shown escaped. Errors that are lists say False.
    one_line = True

    def __init__(self, message: str, *, details: dict | None = None):
        super().__init__(message)
        self.message = message
        self.details = details or {}

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, "details": self.details}


class ModelLoadError(X2Error):
    kind = "model-load"


class UnsupportedOpsError(X2Error):
    """Every unsupported op of a model at once, with its count and an example node."""

    kind = "unsupported-ops"
    one_line = False

    def __init__(self, framework: str, unsupported: dict[str, list[str]]):
        self.unsupported = unsupported
        total = sum(len(v) for v in unsupported.values())
        lines = [f"{len(unsupported)} {framework} op type(s) are not supported "
                 f"({total} node(s) in the graph):"]
        for op, names in sorted(unsupported.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"  {printable(op).replace(chr(10), '?'):<28} x{len(names):<4} "
                         f"e.g. node {quoted(names[0])}")
        lines.append("Nothing was written. Prune the graph around them with --inputs/--outputs, "
                     "or open an issue with this list.")
        super().__init__("\n".join(lines), details={"unsupported": {
            op: {"count": len(n), "example": n[0]} for op, n in unsupported.items()}})


class SelectionError(X2Error):
    """A name given to --inputs/--outputs that does not fit the model."""

    kind = "selection"


class ConversionError(X2Error):
    kind = "conversion"


class SourceRunError(X2Error):
    """The source framework refused to run its own model on the inputs given."""

    kind = "source-run"


class HostCannotRun(X2Error):
    """A runner has no kernels on this machine for what the model is written
    in (a half-precision model on a CPU build): nothing is wrong with it."""

    kind = "host"


class StepCrashed(X2Error):
    kind = "crash"


class InternalError(X2Error):
    """A bug in x2 (or an unexpected framework error): reported with what was
    being read or written, never as a bare traceback."""

    kind = "internal"
