"""What keeping dims dynamic costs: each model converted twice by this x2,
with every dim fixed at the example shape (static) and with its batch and
length/size dims named (dynamic), then both timed at the example shape.

Conversion is timed as a whole `python -m x2 convert` process (median of
--repeats); latency by tools/zoo_models/latency.py (one thread, median of
runs, a process each), the same inputs for both: onnxruntime, torch eager,
and for paddle both model.py in dygraph and the saved program through Paddle
Inference (how Paddle models are served). Ratios above 1: the dynamic
conversion is slower.

    python tools/bench_dynamic.py [--models gpt2,bert] [--targets onnx,paddle,torch]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_latency import _run  # noqa: E402
from latency import in_own_process  # noqa: E402
from x2.cli import FitTable, print_table  # noqa: E402

DYNAMIC_MODELS = ROOT / "tests" / "dynamic_models.py"
TOKENS = ["--input-dtype", "int64"]
# name -> (source, model spec or tests/tf_models.py builder, static args, dynamic args)
MODELS = {
    "gpt2": ("torch", f"{DYNAMIC_MODELS}:gpt2_logits",
             ["--input-shape", "input_ids:2,13", "--input-shape", "attention_mask:2,13", *TOKENS],
             ["--input-shape", "input_ids:batch,seq=13",
              "--input-shape", "attention_mask:batch,seq=13", *TOKENS]),
    "gpt2_wide": ("torch", f"{DYNAMIC_MODELS}:gpt2_wide_logits",
                  ["--input-shape", "input_ids:2,128", "--input-shape", "attention_mask:2,128",
                   *TOKENS],
                  ["--input-shape", "input_ids:batch,seq=128",
                   "--input-shape", "attention_mask:batch,seq=128", *TOKENS]),
    "bert": ("torch", f"{DYNAMIC_MODELS}:tiny_bert",
             ["--input-shape", "input_ids:2,13", "--input-shape", "attention_mask:2,13", *TOKENS],
             ["--input-shape", "input_ids:batch,seq=13",
              "--input-shape", "attention_mask:batch,seq=13", *TOKENS]),
    "yolo_head": ("torch", f"{DYNAMIC_MODELS}:yolo_head",
                  ["--input-shape", "features:2,8,12,20"],
                  ["--input-shape", "features:n=2,8,h=12,w=20"]),
    "keras_tokens": ("tf", "token_attention",
                     ["--input-shape", "tokens:2,16", "--input-shape", "attention_mask:2,16"],
                     []),
    "keras_fully_conv": ("tf", "fully_convolutional", ["--input-shape", "image:2,16,16,3"], []),
}


def build(name: str, work: Path) -> str:
    source, spec = MODELS[name][:2]
    if source == "torch":
        return spec
    out = work / "models" / name
    if not out.exists():
        _run([str(ROOT / "tests" / "tf_models.py"), spec, str(out)], ROOT)
    return str(out)


def convert(name: str, model: str, target: str, out: Path, dynamic: bool,
            repeats: int) -> float:
    """Median seconds of a whole `x2 convert` process; `out` holds the last."""
    source, _, static_args, dynamic_args = MODELS[name]
    times = []
    out.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        _run(["-m", "x2", "convert", "--quiet", "--from", source, "--to", target,
              "--model", model, "--out", str(out), *(dynamic_args if dynamic else static_args)],
             ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--targets", default="onnx,paddle,torch")
    parser.add_argument("--repeats", type=int, default=1, help="conversions timed per form")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    from x2.check.parity import make_inputs
    from x2.contracts import Report
    rows = []
    with tempfile.TemporaryDirectory(prefix="x2-bench-dynamic-") as tmp:
        work = Path(tmp)
        for name in args.models.split(","):
            model = build(name, work)
            for target in args.targets.split(","):
                row = {"model": name, "target": target}
                outs = {}
                for form in ("static", "dynamic"):
                    outs[form] = work / form / name / target
                    row[f"{form}_convert_s"] = convert(name, model, target, outs[form],
                                                       form == "dynamic", args.repeats)
                report = Report.load(outs["static"])
                inputs = work / f"{name}.npz"
                np.savez(inputs, *make_inputs({"inputs": report.inputs}, 0, 2))
                names = (report.source.get("options", {}).get("forward_args")
                         or [i["name"] for i in report.inputs])
                runners = [target] + (["paddle-inference"] if target == "paddle" else [])
                for runner in runners:
                    timed = {**row, "target": target if runner == target else runner}
                    for form, out in outs.items():
                        timed[f"{form}_ms"] = in_own_process(
                            runner, str(out / "model.onnx") if target == "onnx" else str(out),
                            inputs, names)
                    rows.append(timed)
                    print(json.dumps(timed), flush=True)
    table = FitTable(title="dynamic vs static conversion, at the example shape (one thread)")
    for column in ("model", "target", "static convert s", "dynamic convert s", "convert ratio",
                   "static ms", "dynamic ms", "latency ratio"):
        numeric = column not in ("model", "target")
        table.add_column(column, justify="right" if numeric else "left", numeric=numeric)
    for r in rows:
        table.add_row(r["model"], r["target"], f"{r['static_convert_s']:.2f}",
                      f"{r['dynamic_convert_s']:.2f}",
                      f"{r['dynamic_convert_s'] / r['static_convert_s']:.2f}",
                      f"{r['static_ms']:.3f}", f"{r['dynamic_ms']:.3f}",
                      f"{r['dynamic_ms'] / r['static_ms']:.2f}")
    print_table(table)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
