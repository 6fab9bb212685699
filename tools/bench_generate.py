"""Per-token latency of converted decoders with their cache: one decoding
step (batch 1, one new token after --cached cached ones) of a GPT-2 exported
to ONNX with its cache (tests/dynamic_models.py), run by onnxruntime as
exported (the source) and by x2's conversions: onnxruntime, torch eager
model.py, Paddle model.py (dygraph) and Paddle Inference (default config).
One thread, median of runs, a process each (tools/zoo_models/latency.py);
ratios against the source's step.

    python tools/bench_generate.py [--models tiny,wide] [--cached 63] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_latency import _run, latency  # noqa: E402
from x2.cli import FitTable, print_table  # noqa: E402

# name -> the tests/dynamic_models.py builder of the ONNX export with its cache
MODELS = {"tiny": "gpt2_with_past_legacy", "wide": "gpt2_wide_with_past_legacy"}
# runner -> (x2 target to convert to, latency.py framework)
RUNNERS = {"x2 -> onnx (onnxruntime)": ("onnx", "onnx"),
           "x2 -> torch (eager)": ("torch", "torch"),
           "x2 -> paddle (dygraph)": ("paddle", "paddle"),
           "x2 -> paddle (Paddle Inference)": ("paddle", "paddle-inference")}


def step_inputs(source: Path, cached: int) -> tuple[list[np.ndarray], list[str]]:
    """One generation step's inputs and their names, in the export's order."""
    import onnx
    model = onnx.load(str(source), load_external_data=False)
    rng = np.random.default_rng(0)
    arrays, names = [], []
    for value in model.graph.input:
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        name = value.name
        if name == "input_ids":
            arrays.append(rng.integers(0, 100, (1, 1)).astype(np.int64))
        elif name == "attention_mask":
            arrays.append(np.ones((1, cached + 1), np.int64))
        elif name == "position_ids":
            arrays.append(np.array([[cached]], np.int64))
        else:  # past_key_values.N.key/value [batch, heads, cached, dim]
            arrays.append(rng.standard_normal((1, dims[1], cached, dims[3])).astype(np.float32))
        names.append(name)
    return arrays, names


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--cached", type=int, default=63, help="tokens already in the cache")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="x2-bench-generate-") as tmp:
        work = Path(tmp)
        for name in args.models.split(","):
            source = work / f"{name}.onnx"
            _run([str(ROOT / "tests" / "dynamic_models.py"), MODELS[name], str(source)], ROOT)
            arrays, _ = step_inputs(source, args.cached)
            inputs = work / f"{name}.npz"
            np.savez(inputs, *arrays)
            # Every runner takes the inputs by position, in the export's order.
            source_ms = latency("onnx", str(source), inputs, [])
            rows.append({"model": name, "runner": "source: onnxruntime", "ms": source_ms})
            converted = {}
            for runner, (target, framework) in RUNNERS.items():
                if target not in converted:
                    converted[target] = work / name / target
                    converted[target].parent.mkdir(parents=True, exist_ok=True)
                    _run(["-m", "x2", "convert", "--quiet", "--from", "onnx", "--to", target,
                          "--model", str(source), "--out", str(converted[target])], ROOT)
                where = converted[target] / "model.onnx" if target == "onnx" else converted[target]
                ms = latency(framework, str(where), inputs, [])
                rows.append({"model": name, "runner": runner, "ms": ms,
                             "vs_source": ms / source_ms})
                print(json.dumps(rows[-1]), flush=True)
    table = FitTable(title=f"one decoding step with the cache (batch 1, {args.cached} cached "
                           "tokens), one thread, median ms")
    for column in ("model", "runner", "ms per token", "vs source"):
        numeric = column not in ("model", "runner")
        table.add_column(column, justify="right" if numeric else "left", numeric=numeric)
    for r in rows:
        table.add_row(r["model"], r["runner"], f"{r['ms']:.3f}",
                      f"{r['vs_source']:.2f}" if "vs_source" in r else "1.00")
    print_table(table)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
