"""Deployment benchmark at published sizes (`make bench`): how fast x2's
outputs run where users serve them, against the source framework and
against the other converters' outputs on the same model, in one run.

    python tools/bench_deploy.py [--models resnet50,...] [--rounds 3] [--md docs/bench_deploy.md]

Models (tools/zoo_models/bench_models.py, random weights, batch 1): Keras
ResNet50, MobileNetV2 and EfficientNetB0 at 224 (SavedModels), and from
transformers ResNet-50 and ViT-B/16 at 224, BERT-base and GPT-2 small at
sequence 128. Each runs in a process of its own, one thread, the same
inputs (tools/zoo_models/latency.py):

- source: the SavedModel's serving signature, or the torch module in eager mode;
- x2 -> paddle through Paddle Inference with its default config (oneDNN on),
  x2 -> torch in eager mode, x2 -> onnx in onnxruntime;
- anchors: tf2onnx's (or torch.onnx's) output in onnxruntime, X2Paddle's
  conversion of that ONNX file through Paddle Inference, and the same
  architecture from paddle.vision.models through Paddle Inference.

Every runner is timed once per round, the rounds interleaved so that drift in
the machine's speed hits them alike; runners of one framework (the ONNX
files, the Paddle Inference programs, the torch modules) share a process
and run in turn, one call each, so the ratios the tightest limits take (x2
against tf2onnx, torch.onnx and paddle.vision) compare runs made side by
side. A figure is the median over rounds of each process's median, a ratio
the median over rounds of that round's ratio. tf2onnx lives in
build/tf2onnx-venv and X2Paddle in build/x2paddle-pkgs (installed on first
use), apart from x2's packages. A converter that fails leaves its row with
the reason.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "zoo_models"))

import bench_models  # noqa: E402
from latency import in_one_process, in_own_process  # noqa: E402
from bench_convert import ensure_tf2onnx  # noqa: E402

from x2.cli import FitTable, print_table  # noqa: E402

MODELS = [*bench_models.KERAS, *bench_models.TORCH]
BUILD = ROOT / "tools" / "zoo_models" / "bench_models.py"
SOURCE, X2_PADDLE, X2_TORCH, X2_ONNX = ("source", "x2 -> paddle (Paddle Inference)",
                                        "x2 -> torch (eager)", "x2 -> onnx (onnxruntime)")
ANCHOR_ONNX, X2PADDLE, NATIVE = ("anchor -> onnx (onnxruntime)",
                                 "X2Paddle -> paddle (Paddle Inference)",
                                 "paddle.vision native (Paddle Inference)")
# runner -> the runner its ratio is taken against, and the most the issue allows
TARGETS = {X2_PADDLE: [(SOURCE, 1.0), (NATIVE, 1.05), (X2PADDLE, None)],
           X2_TORCH: [(SOURCE, 1.05)],
           X2_ONNX: [(ANCHOR_ONNX, 1.02), (SOURCE, None)]}


X2PADDLE_PKGS = ROOT / "build" / "x2paddle-pkgs"


def _run(command: list[str], timeout: int = 1800, path: list[Path] = ()) -> \
        subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, [*path, ROOT])),
           "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines()
                 if ln.strip() and not ln.startswith("(run with --debug")] or ["no message"]
        raise RuntimeError(lines[-1][-300:])
    return proc


def ensure_tools() -> Path:
    """tf2onnx's interpreter (bench_convert's venv); tf2onnx and X2Paddle are
    installed on first use."""
    python = ensure_tf2onnx(ROOT / "build" / "tf2onnx-venv")
    if not (X2PADDLE_PKGS / "x2paddle").exists():
        # X2Paddle runs on x2's paddle, with the onnx it was written for
        # (it imports onnx.mapping, which onnx 1.23 removed) ahead of x2's.
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        str(X2PADDLE_PKGS), "x2paddle==1.6.0", "onnx==1.16.2"], check=True)
    return python


def convert_all(name: str, work: Path, tf2onnx: Path) -> dict:
    """Every runner's model: {runner: (latency.py framework, model) or the failure}."""
    keras = name in bench_models.KERAS
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    models, seconds = {}, {}

    def attempt(runner: str, make) -> None:
        start = time.perf_counter()
        try:
            models[runner] = make()
            seconds[runner] = time.perf_counter() - start
        except Exception as exc:  # the reason is the row
            models[runner] = f"failed: {exc}"
        print(f"  {name}: {runner}: " + (f"{seconds[runner]:.1f} s" if runner in seconds
                                          else models[runner]), file=sys.stderr, flush=True)

    if keras:
        source = folder / "savedmodel"
        if not source.exists():
            _run([sys.executable, str(BUILD), "keras", name, str(source)])
        model, args = str(source), ["--from", "tf"]
        models[SOURCE] = ("tf", model)
    else:
        model = f"{BUILD}:{name}"
        shapes = [a for arg, shape, dtype in bench_models.inputs_of(name)
                  for a in ("--input-shape", f"{arg}:{','.join(map(str, shape))}",
                            "--input-dtype", f"{arg}:{dtype}")]
        args = ["--from", "torch", *shapes]
        models[SOURCE] = ("torch-spec", model)
    for runner, target, framework in ((X2_PADDLE, "paddle", "paddle-inference"),
                                      (X2_TORCH, "torch", "torch"), (X2_ONNX, "onnx", "onnx")):
        out = folder / f"x2-{target}"

        def make(out=out, target=target, framework=framework):
            _run(["rm", "-rf", str(out)])
            _run([sys.executable, "-m", "x2", "convert", "--quiet", *args, "--to", target,
                  "--model", model, "--out", str(out)])
            return framework, str(out / "model.onnx") if target == "onnx" else str(out)
        attempt(runner, make)
    anchor = folder / "anchor.onnx"

    def make_anchor():
        if keras:
            _run([str(tf2onnx), "-m", "tf2onnx.convert", "--saved-model", model, "--output",
                  str(anchor), "--opset", "17"])
        else:
            _run([sys.executable, str(BUILD), "torch-onnx", name, str(anchor)])
        return "onnx", str(anchor)
    attempt(ANCHOR_ONNX, make_anchor)

    def make_x2paddle():
        if not isinstance(models[ANCHOR_ONNX], tuple):
            raise RuntimeError("no anchor ONNX file to convert")
        out = folder / "x2paddle"
        _run(["rm", "-rf", str(out)])
        _run([sys.executable, "-c", "import sys; from x2paddle.convert import main; "
              "sys.argv = ['x2paddle', *sys.argv[1:]]; main()", "--framework", "onnx",
              "--model", str(anchor), "--save_dir", str(out), "--disable_feedback", "True"],
             timeout=3600,
             path=[X2PADDLE_PKGS])
        return "paddle-inference", str(out)
    attempt(X2PADDLE, make_x2paddle)
    if name in bench_models.PADDLE_NATIVE:
        def make_native():
            out = folder / "paddle-native"
            _run(["rm", "-rf", str(out)])
            _run([sys.executable, str(BUILD), "paddle-native", name, str(out)])
            return "paddle-inference", str(out)
        attempt(NATIVE, make_native)
    return {"models": models, "convert_s": seconds}


def write_inputs(name: str, folder: Path) -> dict[str, Path]:
    """The timed inputs, and the NCHW image paddle.vision's model takes where
    the source's is NHWC."""
    arrays = bench_models.arrays(name)
    paths = {"": folder / "inputs.npz"}
    np.savez(paths[""], *arrays)
    if name in bench_models.KERAS:
        paths[NATIVE] = folder / "inputs_nchw.npz"
        np.savez(paths[NATIVE], np.ascontiguousarray(arrays[0].transpose(0, 3, 1, 2)))
    return paths


# Runners whose models load in one framework share a process and run in turn
# (latency.py --together): the tight limits compare these pairs.
PROCESS_OF = {"onnx": "onnxruntime", "paddle-inference": "paddle", "torch": "torch",
              "torch-spec": "torch", "tf": "tf"}


def time_all(name: str, built: dict, work: Path, rounds: int, runs: int) -> dict:
    """{runner: its ms in each round, or the failure}."""
    inputs = write_inputs(name, work / name)
    # the source is called with its inputs by name, the converted models in order
    names = [arg for arg, _, _ in bench_models.inputs_of(name)]
    runnable = {r: m for r, m in built["models"].items() if isinstance(m, tuple)}
    times: dict[str, list[float]] = {r: [] for r in runnable}
    failed = {r: m for r, m in built["models"].items() if not isinstance(m, tuple)}

    def entry(runner):
        framework, model = runnable[runner]
        return (framework, model, inputs.get(runner, inputs[""]),
                names if runner == SOURCE else [])
    for round_ in range(rounds):
        groups: dict[str, list[str]] = {}
        for runner, (framework, _) in runnable.items():
            if runner not in failed:
                groups.setdefault(PROCESS_OF[framework], []).append(runner)
        for group in groups.values():
            # a process's first model tends to run slower: each goes first in turn
            group = group[round_ % len(group):] + group[:round_ % len(group)]
            try:
                if len(group) > 1:
                    for runner, ms in zip(group, in_one_process(
                            [entry(r) for r in group], runs=runs)):
                        times[runner].append(ms)
                    continue
            except Exception:  # one of them fails: run each alone for its reason
                pass
            for runner in group:
                try:
                    times[runner].append(in_own_process(*entry(runner), runs=runs))
                except Exception as exc:  # the reason is the row
                    failed[runner] = f"failed to run: {exc}"
        print(f"  {name}: round {round_ + 1}: " + ", ".join(
            f"{r} {t[-1]:.1f}" for r, t in times.items() if t and r not in failed),
            file=sys.stderr, flush=True)
    return {r: failed.get(r) or times[r] for r in built["models"]}


def rows_of(name: str, rounds: dict, convert_s: dict) -> list[dict]:
    """A row per runner: the median of its rounds, and each ratio as the
    median of the rounds' ratios, so that a round the host slowed for both
    runners of a pair counts once, not in each runner's median apart."""
    rows = []
    for runner, value in rounds.items():
        row = {"model": name, "runner": runner, "convert_s": convert_s.get(runner)}
        if isinstance(value, str):
            row["failed"] = value
        else:
            row["ms"], row["rounds_ms"] = statistics.median(value), value
            for against, limit in TARGETS.get(runner, []):
                if isinstance(rounds.get(against), list):
                    ratio = statistics.median(a / b for a, b in zip(value, rounds[against]))
                    row.setdefault("ratios", []).append(
                        {"against": against, "ratio": ratio, "limit": limit})
        rows.append(row)
    return rows


def _ratio_text(ratio: dict) -> str:
    text = f"{ratio['ratio']:.2f} vs {ratio['against'].split(' (')[0]}"
    if ratio["limit"] is not None:
        text += " ok" if ratio["ratio"] <= ratio["limit"] else f" (> {ratio['limit']:.2f})"
    return text


def _rounds_text(row: dict) -> str:
    return " / ".join(f"{ms:.1f}" for ms in row.get("rounds_ms", []))


def table(rows: list[dict], title: str) -> FitTable:
    out = FitTable(title=title)
    for column in ("model", "runner", "ms", "rounds ms", "ratios (issue's limit)", "convert s"):
        numeric = column in ("ms", "convert s")
        out.add_column(column, justify="right" if numeric else "left", numeric=numeric)
    for r in rows:
        out.add_row(r["model"], r["runner"], f"{r['ms']:.2f}" if "ms" in r else r["failed"],
                    _rounds_text(r), "; ".join(_ratio_text(x) for x in r.get("ratios", [])),
                    f"{r['convert_s']:.1f}" if r.get("convert_s") else "")
    return out


def markdown(rows: list[dict], args, commit: str) -> str:
    import platform
    lines = [
        "# Deployment latency at published sizes (generated)", "",
        f"`python tools/bench_deploy.py --models {args.models} --rounds {args.rounds} "
        f"--runs {args.runs} --md docs/bench_deploy.md` (`make bench`), at commit {commit}, on "
        f"{platform.machine()} with {os.cpu_count()} cores, one thread per runner. Batch 1, "
        "random weights; each figure is the median over rounds of a process's median of "
        f"{args.runs} timed runs, and each ratio the median over rounds of that round's ratio; "
        "runners of one framework share that process and run in turn, one call each. Paddle runners use Paddle Inference with its default CPU "
        "config (oneDNN on) but one thread. Anchors: tf2onnx (Keras sources) or torch.onnx "
        "(TorchScript exporter, opset 17; transformers sources) in onnxruntime, X2Paddle 1.6.0 "
        "on that ONNX file, paddle.vision.models where the architecture exists. A limit is "
        "the issue's (x2 -> paddle at most 1.0x the source and 1.05x native Paddle; x2 -> onnx "
        "at most 1.02x the anchor's ONNX; x2 -> torch at most 1.05x the source).", "",
        "| model | runner | ms | rounds ms | ratios (issue's limit) | convert s |",
        "|---|---|---:|---|---|---:|"]
    for r in rows:
        value = f"{r['ms']:.2f}" if "ms" in r else r["failed"].replace("|", "\\|")
        lines.append(f"| {r['model']} | {r['runner']} | {value} | {_rounds_text(r)} | "
                     f"{'; '.join(_ratio_text(x) for x in r.get('ratios', []))} | "
                     f"{format(r['convert_s'], '.1f') if r.get('convert_s') else ''} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--rounds", type=int, default=3, help="timings of each runner, interleaved")
    parser.add_argument("--runs", type=int, default=10, help="timed runs in each process")
    parser.add_argument("--work", default=str(ROOT / "build" / "bench-deploy"))
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--md", help="write the table as a markdown page here")
    args = parser.parse_args(argv)
    work = Path(args.work)
    tf2onnx = ensure_tools()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    rows = []
    for name in args.models.split(","):
        print(f"{name}: converting", file=sys.stderr, flush=True)
        built = convert_all(name, work, tf2onnx)
        rows += rows_of(name, time_all(name, built, work, args.rounds, args.runs),
                        built["convert_s"])
    print_table(table(rows, f"batch 1, one thread, median ms over {args.rounds} rounds "
                            f"(commit {commit})"))
    if args.md:
        Path(args.md).write_text(markdown(rows, args, commit))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
