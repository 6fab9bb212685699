"""Conversion benchmark: wall time, peak RSS, nodes and Transposes left for
the built-in samples (Keras MobileNetV2, ResNet50, ...), TF -> Paddle.

    python tools/bench_convert.py [--models mobilenet_v2,resnet50] [--json bench.json]

Each conversion runs in a fresh process; peak RSS is the largest of that
process and its workers (the TF reader dominates). Samples are built once
into --work (default build/bench)."""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def measure_one(model: str, out: str) -> None:
    """Child mode: convert once and print a JSON line with time and RSS."""
    sys.path.insert(0, str(ROOT))
    from x2.convert import convert
    start = time.perf_counter()
    report = convert(model, out)
    wall = time.perf_counter() - start
    self_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"wall_s": round(wall, 2), "peak_rss_mb": round(max(self_kb, child_kb) / 1024),
                      "nodes": report["nodes_after_passes"],
                      "transposes_left": report["transposes_left"],
                      "timings_s": report["timings_s"]}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mobilenet_v2,resnet50")
    parser.add_argument("--work", default=str(ROOT / "build" / "bench"))
    parser.add_argument("--json")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        measure_one(*args.one)
        return 0
    from rich.console import Console
    from rich.table import Table
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = {}
    for name in args.models.split(","):
        saved = work / f"{name}_savedmodel"
        if not saved.exists():
            subprocess.run([sys.executable, "-m", "x2.samples", name, str(saved)], check=True,
                           cwd=ROOT)
        out = work / f"{name}_paddle"
        proc = subprocess.run([sys.executable, __file__, "--one", str(saved), str(out)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        rows[name] = json.loads(proc.stdout.strip().splitlines()[-1])
    table = Table(title="x2 convert --from tf --to paddle")
    for col in ("model", "wall s", "peak RSS MB", "IR nodes", "Transposes left"):
        table.add_column(col)
    for name, r in rows.items():
        table.add_row(name, f"{r['wall_s']:.2f}", str(r["peak_rss_mb"]), str(r["nodes"]),
                      str(r["transposes_left"]))
    Console().print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
