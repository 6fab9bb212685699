"""What a worker is doing inside a framework's native code, for the parent to
name when that code kills the process (a crash leaves no result to read):
"step 'paddle.emit' crashed (SIGSEGV) while running the saved program through
Paddle Inference" tells a user which runtime to blame and what to turn off."""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

_NOTE: list[Path] = []   # the running task's note, beside its result file


def note_beside(result_path: str | Path) -> None:
    """The running task notes its phases beside its result file."""
    _NOTE[:] = [Path(result_path).with_name("phase.txt")]


@contextmanager
def phase(what: str):
    """Note `what` for as long as it runs."""
    note = _NOTE[0] if _NOTE else None
    if note is not None:
        note.write_text(what)
    try:
        yield
    finally:
        if note is not None:
            note.unlink(missing_ok=True)


def last_phase(result_path: Path) -> str | None:
    """What a task that died was doing, if it said."""
    try:
        return Path(result_path).with_name("phase.txt").read_text() or None
    except OSError:
        return None
