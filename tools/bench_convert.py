"""Side-by-side conversion benchmark: x2 `--to onnx` against tf2onnx on the
same SavedModels, in one run.

    python tools/bench_convert.py [--models mobilenet_v2,resnet50,efficientnet_b0,small_cnn,residual_cnn]
                                  [--json build/bench/bench.json] [--threads 1] [--runs 30]

For each model: conversion wall time and peak RSS (each conversion in a fresh
process; RSS is the largest of it and its workers), the part of it that
convert's verify against TensorFlow took and its ratio to the rest, ONNX node count,
Transposes left, and onnxruntime latency of each output model (median of
--runs, same thread count, same input; the outputs of one model run
round-robin in one process). x2 runs three times: with the default
interface (NHWC in, like tf2onnx), with --io-layout nchw, and with
--tf-reader tensorflow (what a SavedModel the direct reader leaves to
TensorFlow costs). Quiet the machine first: a second job on the 2 cores
inflates every figure.

tf2onnx lives in its own virtual environment (--tf2onnx-venv, created on
first use with pip: tf2onnx, tensorflow==2.21.0, onnxruntime), so it never
shares packages with x2. Samples are built once into --work."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Runs one command and reports its wall time and the peak RSS of its process tree.
TIMED = r"""
import json, resource, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
print(json.dumps({"rc": proc.returncode, "wall_s": wall, "peak_rss": rss,
                  "stderr": proc.stderr[-2000:]}))
"""

# Facts about ONNX files and their onnxruntime latency. The models of one
# source run round-robin in one process, so drift in the machine's speed
# (the other core's load, frequency) hits them all alike.
PROBE = r"""
import json, statistics, sys, time
import numpy as np, onnx, onnxruntime as ort
threads, runs, paths = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
rng = np.random.default_rng(0)
facts, sessions = [], []
for path in paths:
    try:
        ops = [n.op_type for n in onnx.load(path, load_external_data=False).graph.node]
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        facts.append({"rc": 1, "stderr": "output does not run in onnxruntime: " + str(exc)[-300:]})
        sessions.append(None)
        continue
    feed = {}
    for i in session.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        feed[i.name] = rng.standard_normal(shape).astype(np.float32)
    for _ in range(3):
        session.run(None, feed)
    facts.append({"nodes": len(ops), "transposes": ops.count("Transpose"), "times": []})
    sessions.append((session, feed))
pairs = list(zip(facts, sessions))
for r in range(runs):
    # rotate who goes first: the first model of a round runs measurably slower
    for fact, entry in pairs[r % len(pairs):] + pairs[:r % len(pairs)]:
        if entry is not None:
            t = time.perf_counter(); entry[0].run(None, entry[1])
            fact["times"].append(time.perf_counter() - t)
for fact in facts:
    if "times" in fact:
        fact["latency_ms"] = statistics.median(fact.pop("times")) * 1000
print(json.dumps(facts))
"""


def timed(cmd: list[str], env=None) -> dict:
    proc = subprocess.run([sys.executable, "-c", TIMED, *cmd], capture_output=True, text=True,
                          env=env)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def probe(paths: list[Path], threads: int, runs: int) -> list[dict]:
    """Node counts and interleaved latency; a model onnxruntime refuses counts as failed."""
    proc = subprocess.run([sys.executable, "-c", PROBE, str(threads), str(runs),
                           *map(str, paths)], capture_output=True, text=True)
    if proc.returncode != 0:
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "probe failed"
        return [{"rc": 1, "stderr": "probe failed: " + last[-300:]} for _ in paths]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ensure_tf2onnx(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} for tf2onnx (one time) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "tf2onnx",
                        "tensorflow==2.21.0", "onnxruntime"], check=True)
    return python


def bench_model(name: str, work: Path, tf2onnx_python: Path, threads: int, runs: int) -> dict:
    saved = work / f"{name}_savedmodel"
    if not saved.exists():
        subprocess.run([sys.executable, "-m", "x2.samples", name, str(saved)], check=True,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    rows, outputs = {}, {}
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    x2 = [sys.executable, "-m", "x2", "convert", "--from", "tf", "--to", "onnx", "--model",
          str(saved), "--quiet"]
    for label, extra in (("x2", []), ("x2 --io-layout nchw", ["--io-layout", "nchw"]),
                         ("x2 --tf-reader tensorflow", ["--tf-reader", "tensorflow"])):
        out = work / f"{name}_{label.replace(' ', '_').replace('-', '')}"
        subprocess.run(["rm", "-rf", str(out)])
        run = timed(x2 + ["--out", str(out), *extra], env={**env, "PYTHONPATH": str(ROOT)})
        if run["rc"] == 0:
            report = json.loads((out / "report.json").read_text())
            run["reader"] = report["source"].get("reader", {}).get("name", "tensorflow")
            # convert's verify against TensorFlow is part of the wall time
            run["verify_s"] = report["timings_s"].get("verify against the source", 0.0)
            outputs[label] = out / "model.onnx"
        rows[label] = run
    out = work / f"{name}_tf2onnx.onnx"
    run = timed([str(tf2onnx_python), "-m", "tf2onnx.convert", "--saved-model", str(saved),
                 "--output", str(out), "--opset", "17"], env=env)
    rows["tf2onnx"] = {**run, "reader": "tensorflow"}
    if run["rc"] == 0:
        outputs["tf2onnx"] = out
    for label, facts in zip(outputs, probe(list(outputs.values()), threads, runs)):
        rows[label].update(facts)
        rows[label]["rc"] = rows[label].get("rc") or facts.get("rc", 0)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models",
                        default="mobilenet_v2,resnet50,efficientnet_b0,small_cnn,residual_cnn")
    parser.add_argument("--work", default=str(ROOT / "build" / "bench"))
    parser.add_argument("--tf2onnx-venv", default=str(ROOT / "build" / "tf2onnx-venv"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()
    from rich.console import Console
    from rich.table import Table

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    tf2onnx_python = ensure_tf2onnx(Path(args.tf2onnx_venv))
    results = {}
    for name in args.models.split(","):
        print(f"benchmarking {name} ...", file=sys.stderr)
        results[name] = bench_model(name, work, tf2onnx_python, args.threads, args.runs)

    table = Table(title=f"TF SavedModel -> ONNX (onnxruntime: {args.threads} thread(s), "
                        f"median of {args.runs})")
    for col in ("model", "converter", "read by", "wall s", "verify s", "verify / rest",
                "peak RSS MB", "nodes", "Transposes", "ORT ms", "wall vs tf2onnx",
                "RSS vs tf2onnx", "ORT vs tf2onnx"):
        table.add_column(col)
    for name, rows in results.items():
        base = rows["tf2onnx"]
        for label, r in rows.items():
            if r["rc"] != 0:
                reason = (r.get("stderr") or "").strip().splitlines()[-1:] or ["failed"]
                table.add_row(name, label, "", "failed: " + reason[0][-70:], *[""] * 9)
                continue
            verify = r.get("verify_s")
            ratio = (lambda k: f"{r[k] / base[k]:.2f}x" if base["rc"] == 0 else "-")  # noqa: E731
            table.add_row(name, label, r.get("reader", ""), f"{r['wall_s']:.2f}",
                          "" if verify is None else f"{verify:.2f}",
                          "" if verify is None else f"{verify / (r['wall_s'] - verify):.2f}x",
                          f"{r['peak_rss'] / 2**20:.0f}", str(r["nodes"]), str(r["transposes"]),
                          f"{r['latency_ms']:.2f}", ratio("wall_s"), ratio("peak_rss"),
                          ratio("latency_ms"))
    Console(width=240).print(table)
    ratios = sorted(r["verify_s"] / (r["wall_s"] - r["verify_s"]) for rows in results.values()
                    for label, r in rows.items() if label == "x2" and r["rc"] == 0)
    if ratios:
        print(f"convert's verify against TensorFlow / the rest of the conversion (x2 rows): "
              f"median {ratios[len(ratios) // 2]:.2f}x over {len(ratios)} models")
    path = Path(args.json) if args.json else work / "bench.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
