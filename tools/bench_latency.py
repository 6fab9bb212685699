"""Inference latency of converted models: this x2 against an earlier x2 (a git
revision) and against the source framework, on the same models and inputs.

Each model is converted by both x2 versions (fresh processes, `python -m x2
convert`), then every model, source and converted, is timed by
tools/zoo_models/latency.py (one thread, median of runs, a process each).
The table gives milliseconds and the ratios current/baseline (above 1: the
current x2's output is slower) and current/source, and the seconds of each
conversion (a whole `x2 convert` process) with their ratio:

    python tools/bench_latency.py --baseline 30da47d [--targets torch,paddle,onnx]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools" / "zoo_models"))

from rich.console import Console  # noqa: E402

from latency import in_own_process  # noqa: E402
from x2.cli import FitTable, print_table  # noqa: E402

# name -> (source framework, how to build it, extra convert arguments)
MODELS = {
    "keras_transformer": ("tf", ("tf_models", "finetune_transformer"), []),
    "torch_encoder": ("torch", f"{ROOT / 'tests' / 'torch_models.py'}:encoder",
                      ["--input-shape", "tokens:2,16", "--input-dtype", "int64"]),
    "hf_bert": ("torch", f"{ROOT / 'tools' / 'zoo_models' / 'hf.py'}:bert_classifier",
                ["--input-shape", "input_ids:2,16", "--input-dtype", "int64"]),
    "keras_cnn": ("tf", ("samples", "small_cnn"), []),
}


def _run(args: list[str], root: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "TF_CPP_MIN_LOG_LEVEL": "3"}
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=root, **kwargs)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return proc


def build(name: str, work: Path) -> str:
    source, spec, _ = MODELS[name]
    if source == "torch":
        return spec
    out = work / "models" / name
    if not out.exists():
        script, builder = spec
        command = ["-m", "x2.samples", builder] if script == "samples" else \
            [str(ROOT / "tests" / "tf_models.py"), builder]
        _run([*command, str(out)], ROOT)
    return str(out)


def convert(root: Path, name: str, model: str, target: str, out: Path) -> tuple[Path, float]:
    """The output folder and the seconds of the whole `x2 convert` process."""
    source, _, extra = MODELS[name]
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    _run(["-m", "x2", "convert", "--quiet", "--from", source, "--to", target, "--model", model,
          "--out", str(out), *extra], root)
    return out, time.perf_counter() - start


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def baseline_checkout(revision: str, work: Path) -> Path:
    where = work / f"baseline-{revision}"
    if not where.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where),
                        revision], check=True, capture_output=True)
    return where


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git revision of the earlier x2")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--targets", default="torch,paddle,onnx")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    from x2.contracts import Report
    from x2.check.parity import make_inputs
    console = Console()
    rows = []
    with tempfile.TemporaryDirectory(prefix="x2-bench-latency-") as tmp:
        work = Path(tmp)
        base = baseline_checkout(args.baseline, work)
        try:
            for name in args.models.split(","):
                model = build(name, work)
                source_ms = None
                for target in args.targets.split(","):
                    seconds = {}
                    outs = {}
                    outs["current"], seconds["current"] = convert(
                        ROOT, name, model, target, work / "current" / name / target)
                    try:
                        outs["baseline"], seconds["baseline"] = convert(
                            base, name, model, target, work / "baseline" / name / target)
                    except SystemExit as exc:   # the earlier x2 could not convert it
                        console.print(f"{name} -> {target}: baseline failed: "
                                      f"{str(exc).splitlines()[-1]}", highlight=False)
                    report = Report.load(outs["current"])
                    inputs = work / f"{name}.npz"
                    np.savez(inputs, *make_inputs({"inputs": report.inputs}, 0, 2))
                    names = (report.source.get("options", {}).get("forward_args")
                             or [i["name"] for i in report.inputs])
                    if source_ms is None:
                        kind = "torch-spec" if MODELS[name][0] == "torch" else "tf"
                        source_ms = in_own_process(kind, model, inputs, names)
                    ms = {which: in_own_process(
                              target, str(out / "model.onnx") if target == "onnx" else str(out),
                              inputs, names)
                          for which, out in outs.items()}
                    rows.append({"model": name, "target": target, "source_ms": source_ms,
                                 "baseline_ms": ms.get("baseline"), "current_ms": ms["current"],
                                 "baseline_convert_s": seconds.get("baseline"),
                                 "current_convert_s": seconds["current"]})
                    console.print(f"{name} -> {target}: {ms['current']:.3f} ms (baseline "
                                  f"{_ms(ms.get('baseline'))}, source {source_ms:.3f} ms)",
                                  highlight=False)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                           capture_output=True)
    table = FitTable(title=f"converted-model latency, one thread (baseline {args.baseline})")
    for column in ("model", "target", "source ms", "baseline ms", "current ms",
                   "current/baseline", "current/source", "baseline convert s",
                   "current convert s", "convert current/baseline"):
        numeric = column not in ("model", "target")
        table.add_column(column, justify="right" if numeric else "left", numeric=numeric)
    for r in rows:
        versus = f"{r['current_ms'] / r['baseline_ms']:.2f}" if r["baseline_ms"] else "n/a"
        convert_versus = (f"{r['current_convert_s'] / r['baseline_convert_s']:.2f}"
                          if r["baseline_convert_s"] else "n/a")
        table.add_row(r["model"], r["target"], f"{r['source_ms']:.3f}", _ms(r["baseline_ms"]),
                      f"{r['current_ms']:.3f}", versus, f"{r['current_ms'] / r['source_ms']:.2f}",
                      _s(r["baseline_convert_s"]), f"{r['current_convert_s']:.2f}",
                      convert_versus)
    print_table(table)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
