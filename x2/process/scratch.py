"""Scratch folders that a later run can clean up after a killed one.

Every temporary folder x2 makes carries the PID of the process that made it
(`PREFIX<pid>-<random>`). A run that was killed (SIGKILL, power loss) cannot
remove its folders; the next run that looks in the same place removes those
whose process is gone. A folder of a live process is never touched."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

# Scratch folders outside an output's parent live here, not loose in TMPDIR.
ROOT_NAME = "x2-scratch"


def scratch_root() -> Path:
    root = Path(tempfile.gettempdir()) / f"{ROOT_NAME}-{os.getuid()}"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def make_dir(prefix: str, parent: Path | None = None) -> Path:
    """A new private folder `parent/PREFIX<pid>-<random>`; stale folders of the
    same prefix left there by dead processes are removed first."""
    parent = parent or scratch_root()
    sweep(prefix, parent)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=parent))


def sweep(prefix: str, parent: Path) -> list[Path]:
    """Remove `parent/PREFIX<pid>-*` folders whose process no longer exists."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)-")
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = pattern.match(entry.name)
        if match and entry.is_dir() and not entry.is_symlink() \
                and not _alive(int(match.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
