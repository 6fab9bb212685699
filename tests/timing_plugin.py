"""Where the suite's time goes, by kind of work (tools/test_times.py makes the
table in tests/README.md from what this writes). Off unless
X2_TEST_TIMING=DIR; then each pytest process (each xdist worker) writes
DIR/kinds-<worker>.json: seconds spent in

- model building: the builder scripts (tests/*_models.py, x2.samples, the
  zoo's builders), in their warm builder processes (tests/builders.py) or
  as subprocesses;
- conversion: x2.convert.convert in this process (its framework workers
  included: with warm workers a framework starts once per family);
- checking: x2.check.parity.check in this process, likewise;
- CLI subprocesses: `python -m x2 ...` (a fresh worker per framework step,
  so mostly framework start-up);
- framework start-up: warm worker processes started (their count; the time
  each takes to import its framework is inside the conversion or check
  that first used it).
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

SPENT: dict[str, float] = {}
COUNTS: dict[str, int] = {}
_DEPTH = [0]


@contextmanager
def _counting(kind: str):
    # Nested work (a check that builds a model) counts once, for the outer kind.
    if _DEPTH[0]:
        yield
        return
    _DEPTH[0] += 1
    start = time.perf_counter()
    try:
        yield
    finally:
        _DEPTH[0] -= 1
        SPENT[kind] = SPENT.get(kind, 0.0) + time.perf_counter() - start
        COUNTS[kind] = COUNTS.get(kind, 0) + 1


def _kind_of_command(argv) -> str | None:
    text = " ".join(str(a) for a in argv) if isinstance(argv, (list, tuple)) else str(argv)
    if "_models.py" in text or "x2.samples" in text or "zoo_models" in text:
        return "model building"
    if " -m x2 " in f" {text} " or text.rstrip().endswith("-m x2"):
        return "CLI subprocesses"
    return None


def _wrap(owner, name: str, kind_of):
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        kind = kind_of(args, kwargs)
        if kind is None:
            return original(*args, **kwargs)
        with _counting(kind):
            return original(*args, **kwargs)
    setattr(owner, name, wrapped)


CONVERSIONS: dict[str, int] = {}


def _conversion(args, kwargs) -> str:
    """Count each distinct conversion (model, target, options): one done more
    than once is a candidate for a shared fixture."""
    model = str(args[0]) if args else str(kwargs.get("model"))
    options = {k: v for k, v in kwargs.items() if k not in ("progress",)}
    key = json.dumps([Path(model).name, sorted((k, repr(v)) for k, v in options.items())])
    CONVERSIONS[key] = CONVERSIONS.get(key, 0) + 1
    return "conversion"


def install() -> None:
    """Wrap what the kinds count; before the test modules import them."""
    import builders
    import x2.check.parity
    import x2.convert
    from x2.process import isolation
    _wrap(builders, "build", lambda a, k: "model building")
    _wrap(x2.convert, "convert", _conversion)
    _wrap(x2.check.parity, "check", lambda a, k: "checking")
    _wrap(subprocess, "run", lambda a, k: _kind_of_command(a[0] if a else k.get("args")))
    server_init = isolation._Server.__init__

    def counted_server(self, family):
        COUNTS["framework start-up"] = COUNTS.get("framework start-up", 0) + 1
        server_init(self, family)
    isolation._Server.__init__ = counted_server


def write(directory: str, session_seconds: float) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    out = Path(directory) / f"kinds-{worker}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"worker": worker, "session_s": session_seconds,
                               "spent_s": SPENT, "counts": COUNTS,
                               "repeated_conversions": {k: n for k, n in CONVERSIONS.items()
                                                        if n > 1}}, indent=1))
