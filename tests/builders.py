"""Warm builder processes: the test models' scripts (tests/*_models.py,
`-m x2.samples`, the zoo's builders) run in a process kept per script for
the whole pytest worker, so that each build no longer pays TensorFlow's
import (6 s here) or torch's (3 s). A script still never shares a process
with another script, so TensorFlow and paddle stay apart as before.

Each build runs the script as `python SCRIPT ARGS...` would (runpy, as
`__main__`, sys.argv set), after Keras' session is cleared so that layer
names restart as in a fresh process. A builder that dies is started again
for the next build; its failure is reported with the tail of its log."""
from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# Runs in the builder process: requests (JSON lines) on stdin, replies on the
# stdout it had at start; whatever a build prints goes to stderr (a log file).
_SERVER = r'''
import json, os, runpy, sys, traceback
reply = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr
for line in sys.stdin:
    request = json.loads(line)
    if "tensorflow" in sys.modules:
        sys.modules["tensorflow"].keras.backend.clear_session()
    sys.argv = request["argv"]
    error = None
    try:
        if request["module"]:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
            runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = f"exit status {exc.code}"
    except BaseException:
        error = traceback.format_exc()
    sys.stderr.flush()
    reply.write(json.dumps({"error": error}) + "\n")
    reply.flush()
'''


class _Builder:
    def __init__(self, env: dict, cwd: Path):
        self.log = tempfile.NamedTemporaryFile("w+b", prefix="x2-builder-", suffix=".log",
                                               delete=False)
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env,
                                     cwd=cwd, text=True)

    def build(self, argv: list[str], module: str | None) -> str | None:
        """None, or what went wrong (with the end of the build's log)."""
        start = os.path.getsize(self.log.name)
        try:
            self.proc.stdin.write(json.dumps({"argv": argv, "module": module}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if line:
            error = json.loads(line)["error"]
        else:
            error = f"the builder process died (status {self.proc.wait()})"
        if error is None:
            return None
        with open(self.log.name, "rb") as log:
            log.seek(start)
            return f"{error}\n{log.read().decode(errors='replace')[-3000:]}"

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        os.unlink(self.log.name)


_BUILDERS: dict[str, _Builder] = {}


def build(args: list[str], env: dict, cwd: Path) -> str | None:
    """Run `python ARGS` in the warm builder of its script: None, or the
    failure. ARGS is a script and its arguments, or `-m MODULE ...`."""
    module = args[1] if args[0] == "-m" else None
    argv = [module, *args[2:]] if module else [str(Path(cwd) / args[0]), *args[1:]]
    key = module or argv[0]
    builder = _BUILDERS.get(key)
    if builder is None or builder.proc.poll() is not None:
        builder = _BUILDERS[key] = _Builder(env, cwd)
    error = builder.build(argv, module)
    if error is not None and builder.proc.poll() is not None:
        builder.close()
        del _BUILDERS[key]
    return error


@atexit.register
def _close_all() -> None:
    for builder in _BUILDERS.values():
        builder.close()
    _BUILDERS.clear()
