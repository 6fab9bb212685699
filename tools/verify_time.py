"""What convert's verify against the source costs: `x2 convert` (the CLI, as
users run it) of the bench's Keras samples (x2/samples.py, built into WORK)
to onnx, paddle and torch; wall time, the verify's part of it (report.json
timings_s) and its ratio to the rest, as a markdown table, and the median.

    python tools/verify_time.py WORK

Quiet the machine first."""
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

work = Path(sys.argv[1]); work.mkdir(parents=True, exist_ok=True)
py = sys.executable
rows = []
for name in ("small_cnn", "residual_cnn", "mobilenet_v2", "resnet50", "efficientnet_b0"):
    saved = work / name
    if not saved.exists():
        subprocess.run([py, "-m", "x2.samples", name, str(saved)], check=True, capture_output=True)
    for target in ("onnx", "paddle", "torch"):
        out = work / f"{name}-{target}"
        subprocess.run(["rm", "-rf", str(out)])
        start = time.perf_counter()
        proc = subprocess.run([py, "-m", "x2", "convert", "--from", "tf", "--to", target,
                               "--model", str(saved), "--out", str(out), "--quiet"],
                              capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode:
            rows.append((name, target, "failed", proc.stderr[-200:])); continue
        report = json.loads((out / "report.json").read_text())
        v = report["timings_s"]["verify against the source"]
        rows.append((name, target, wall, v, v / (wall - v), report["target_details"]["verify"]["runners"]))
print("| model | target | wall s | verify s | verify / rest | runners |")
print("|---|---|---:|---:|---:|---|")
for r in rows:
    if r[2] == "failed":
        print(f"| {r[0]} | {r[1]} | failed: {r[3]} | | | |"); continue
    print(f"| {r[0]} | {r[1]} | {r[2]:.2f} | {r[3]:.2f} | {r[4]:.2f}x | {', '.join(r[5])} |")
ratios = [r[4] for r in rows if r[2] != "failed"]
print(f"\nmedian verify / rest: {statistics.median(ratios):.2f}x over {len(ratios)} conversions")
