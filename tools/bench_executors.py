"""Wall time of one `x2 convert-many` batch with the local and the Ray executor.

    python tools/bench_executors.py [-j 2] [--check] [--work build/bench_executors]

The batch: the ten small ONNX models of tests/onnx_models.py `batch_set`
(one fails by itself) to onnx and torch. Each executor converts them into
its own folder; the script prints both wall times (the Ray one includes
starting and stopping a local Ray instance with -j CPUs) and whether the two
summaries agree apart from timings."""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(executor: str, models: list[Path], out: Path, jobs: int, check: bool) -> float:
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "x2", "convert-many", "--from", "onnx", "--to", "onnx",
               "--to", "torch", "--out-dir", str(out), "-j", str(jobs), "--executor", executor,
               *(["--check"] if check else []), *map(str, models)]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{executor}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    return seconds


def comparable(out: Path) -> list[dict]:
    rows = json.loads((out / "summary.json").read_text())
    for row in rows:
        row.pop("seconds")
        row["out"] = str(Path(row["out"]).relative_to(out))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--check", action="store_true", help="convert-many --check")
    parser.add_argument("--work", default=str(ROOT / "build" / "bench_executors"))
    args = parser.parse_args()
    work = Path(args.work)
    sys.path.insert(0, str(ROOT / "tests"))
    from onnx_models import batch_set
    models = batch_set(work / "models")
    times = {e: run(e, models, work / e, args.jobs, args.check) for e in ("local", "ray")}
    same = comparable(work / "local") == comparable(work / "ray")
    pairs = len(json.loads((work / "local" / "summary.json").read_text()))
    print(f"{pairs} pairs, -j {args.jobs}{', --check' if args.check else ''}: "
          f"local {times['local']:.1f} s, ray {times['ray']:.1f} s; summaries "
          f"{'agree' if same else 'DIFFER'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
