"""`x2 convert-many`: convert many models in parallel processes.

Each model is converted by its own `x2 convert` process, so one failure (or a
framework crash) never stops the others; the summary says what happened to
each. Outputs go to OUT_DIR/<model name>/, the summary to OUT_DIR/summary.json."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .contracts import Report
from .errors import X2Error

# What counts as one model when a directory is given.
MODEL_SUFFIXES = (".onnx", ".pb", ".pt2", ".keras", ".h5", ".meta")


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


def _unique_names(models: list[Path]) -> list[str]:
    names, seen = [], {}
    for model in models:
        base = model.stem if model.suffix else model.name
        seen[base] = seen.get(base, 0) + 1
        names.append(base if seen[base] == 1 else f"{base}_{seen[base]}")
    return names


def convert_many(models: list[Path], out_dir: Path, convert_args: list[str], jobs: int,
                 on_done=None) -> list[dict]:
    out_dir.mkdir(parents=True, exist_ok=True)

    def one(model: Path, name: str) -> dict:
        out = out_dir / name
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "x2", "convert", "--model", str(model),
                               "--out", str(out), "--quiet", *convert_args],
                              capture_output=True, text=True)
        row = {"model": str(model), "out": str(out), "seconds": round(time.perf_counter() -
                                                                         start, 2)}
        if proc.returncode == 0:
            report = Report.load(out)
            row.update(status="ok", transposes_left=report.transposes_left,
                       ops_mapped=report.ops_mapped)
        else:
            lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
            message = next((ln.split("error:", 1)[1].strip() for ln in lines
                            if "error:" in ln), lines[-1] if lines else "failed")
            row.update(status="failed", exit_code=proc.returncode, error=message)
        if on_done:
            on_done(row)
        return row

    names = _unique_names(models)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        rows = list(pool.map(one, models, names))
    (out_dir / "summary.json").write_text(json.dumps(rows, indent=2))
    return rows
