"""`x2 convert-many`: convert many models to one or more targets, each
result optionally checked, on this machine or on a Ray cluster
(x2/process/executors.py).

Each (model, target) pair is one task: an `x2 convert` child process and,
with a check, an `x2 check` one, so one failure (or a framework crash) never
stops the others and no framework is imported by the driver or the task's
own process. Outputs go to OUT_DIR/<name>/ (several targets:
OUT_DIR/<name>/<target>/), names unique, so no two tasks write one output;
`x2 convert` stages each output beside it and renames it into place.

Each finished pair is appended to OUT_DIR/.x2-journal.jsonl as it arrives;
OUT_DIR/summary.json (pairs in input order, whatever order they finished in)
is written at the end. With `resume`, a pair that the journal lists as done
and whose output still holds a valid, complete report is not run again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..contracts import Report
from ..errors import X2Error
from .executors import Task
from .isolation import die_with_parent

# What counts as one model when a directory is given.
MODEL_SUFFIXES = (".onnx", ".pb", ".pt2", ".keras", ".h5", ".meta")
JOURNAL = ".x2-journal.jsonl"
SUMMARY = "summary.json"
# A task's memory estimate: two worker processes with a framework imported
# (frontend and emitter run at once), plus a few copies of the weights
# (source framework, IR, emitted model, parity inputs/outputs).
BASE_MEMORY = 2 << 30
WEIGHT_COPIES = 4


def expand_models(items: list[str]) -> list[Path]:
    """Paths as given; a directory that is not itself a SavedModel contributes
    each model inside it; @FILE reads one path per line."""
    models: list[Path] = []
    for item in items:
        if item.startswith("@"):
            listed = Path(item[1:])
            if not listed.is_file():
                raise X2Error(f"{item}: list file {listed} does not exist")
            models += [Path(line.strip()) for line in listed.read_text().splitlines()
                       if line.strip() and not line.startswith("#")]
            continue
        path = Path(item)
        if path.is_dir() and not (path / "saved_model.pb").exists():
            models += sorted(p for p in path.iterdir()
                             if (p / "saved_model.pb").exists() or p.suffix in MODEL_SUFFIXES)
        else:
            models.append(path)
    if not models:
        raise X2Error("convert-many: no models found in " + ", ".join(items))
    return models


def unique_names(models: list[Path]) -> list[str]:
    """One output name per model: its file name without suffix, never hidden
    (x2's staging folders and the journal are), never summary.json, unique
    even on a case-insensitive filesystem (a_2, a_3, ... for repeats)."""
    names, used = [], {SUMMARY}
    for model in models:
        base = (model.stem if model.suffix else model.name).lstrip(".") or "model"
        name, n = base, 1
        while name.casefold() in used:
            n += 1
            name = f"{base}_{n}"
        used.add(name.casefold())
        names.append(name)
    return names


@dataclass
class Job:
    """One (model, target) pair: what its task runs."""
    source: str
    model: str
    target: str
    out: str
    convert_args: list[str]
    check_args: list[str] | None = None   # None: no check


def plan(models: list[Path], targets: list[str], out_dir: Path, source: str,
         convert_args: list[str], check_args: list[str] | None) -> list[Job]:
    jobs = []
    for model, name in zip(models, unique_names(models)):
        for target in targets:
            out = out_dir / name / target if len(targets) > 1 else out_dir / name
            jobs.append(Job(source, str(model), target, str(out), convert_args, check_args))
    return jobs


def _size(path: Path) -> int:
    """Bytes of a model file or folder; 0 for a spec that is not a path
    (file.py:factory)."""
    try:
        if path.is_dir():
            return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
        return path.stat().st_size
    except OSError:
        return 0


def task_for(job: Job, gpu: bool) -> Task:
    return Task(key=job.out, arg=job, cpus=1,
                memory=BASE_MEMORY + WEIGHT_COPIES * _size(Path(job.model)),
                gpus=1 if gpu and job.check_args is not None else 0)


def _x2(*args: str) -> subprocess.CompletedProcess:
    # die_with_parent: a task whose process is killed leaves no child writing on.
    return subprocess.run([sys.executable, "-m", "x2", *args], capture_output=True, text=True,
                          preexec_fn=die_with_parent)


def _error_line(stderr: str) -> str:
    """The child's error message as one line (a multi-line one, like the table
    of unsupported ops, joined with "; ")."""
    lines = [" ".join(ln.split()) for ln in stderr.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        if "error:" in line:
            rest = [ln for ln in lines[i + 1:] if not ln.startswith("(run with --debug")]
            text = line.split("error:", 1)[1].strip()
            for more in rest:
                text += (" " if text.endswith(":") else "; ") + more
            return text
    return lines[-1] if lines else "failed"


def run_pair(job: Job) -> dict:
    """Convert (and check) one pair; its row for the summary. A model's own
    error is a row with status "failed", never an exception."""
    start = time.perf_counter()
    row = {"model": job.model, "target": job.target, "out": job.out}
    proc = _x2("convert", "--from", job.source, "--to", job.target, "--model", job.model,
               "--out", job.out, "--quiet", *job.convert_args)
    if proc.returncode == 0:
        report = Report.load(job.out)
        row.update(status="ok", transposes_left=report.transposes_left,
                   ops_mapped=report.ops_mapped)
        if job.check_args is not None:
            row.update(_check(job))
    else:
        row.update(status="failed", exit_code=proc.returncode, error=_error_line(proc.stderr))
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def _check(job: Job) -> dict:
    with tempfile.TemporaryDirectory(prefix="x2-many-check-") as tmp:
        path = Path(tmp) / "parity.json"
        proc = _x2("check", "--from", job.source, "--to", job.target, "--model", job.model,
                   "--converted", job.out, "--json", str(path), *job.check_args)
        if proc.returncode not in (0, 1) or not path.is_file():
            return {"check": "error", "check_error": _error_line(proc.stderr)}
        result = json.loads(path.read_text())
    outputs = result["outputs"]
    row = {"check": "pass" if result["passed"] else "fail",
           "max_rel": max((o["max_rel"] for o in outputs), default=0.0)}
    if not result["passed"]:
        worst = max(outputs, key=lambda o: o["max_rel"] - o.get("rtol", result["rtol"]))
        row["check_error"] = result.get("input_independent") or (
            f"output '{worst['name']}' ({worst['runner']}) max rel err {worst['max_rel']:.3e}")
    return row


def failed_row(job: Job, message: str) -> dict:
    """The row of a pair whose task returned nothing (see x2/process/executors.py)."""
    return {"model": job.model, "target": job.target, "out": job.out, "status": "failed",
            "error": message, "seconds": None}


def _done_before(job: Job, row: dict | None) -> bool:
    """Whether a resumed run may keep this pair: the journal says it finished
    (with its check, when one is asked for) and its output is complete."""
    if not row or row.get("status") != "ok" or (job.check_args is not None
                                                  and "check" not in row):
        return False
    try:
        report = Report.load(job.out)
    except X2Error:
        return False
    return (report.target == job.target and report.source.get("model") == job.model
            and all((Path(job.out) / f).is_file() for f in report.files))


def _read_journal(path: Path) -> dict[str, dict]:
    rows = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return rows
    for line in lines:
        try:  # the last line of a killed run may be cut short
            row = json.loads(line)
            rows[row["out"]] = row
        except (ValueError, KeyError, TypeError):
            continue
    return rows


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def convert_many(jobs: list[Job], out_dir: Path, executor, *, resume: bool = False,
                 gpu: bool = False, on_done=None) -> list[dict]:
    """Run every job on `executor`; rows in the order of `jobs`. on_done(row,
    kept) is called as each pair finishes (kept: done before, resumed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    journal = out_dir / JOURNAL
    before = _read_journal(journal) if resume else {}
    rows: list[dict | None] = [None] * len(jobs)
    todo = []
    for i, job in enumerate(jobs):
        if _done_before(job, before.get(job.out)):
            rows[i] = before[job.out]
        else:
            todo.append(i)
            Path(job.out).parent.mkdir(parents=True, exist_ok=True)
    # The journal restarts with what is kept: a pair run again is listed once.
    _write_atomic(journal, "".join(json.dumps(r) + "\n" for r in rows if r is not None))
    for row in rows:
        if row is not None and on_done:
            on_done(row, True)
    results = executor.run(run_pair, [task_for(jobs[i], gpu) for i in todo], failed_row)
    try:
        with journal.open("a") as fh:
            for k, row in results:
                rows[todo[k]] = row
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                if on_done:
                    on_done(row, False)
    finally:  # interrupted: stop the executor's tasks now, not when collected
        results.close()
    _write_atomic(out_dir / SUMMARY, json.dumps(rows, indent=2))
    return rows
