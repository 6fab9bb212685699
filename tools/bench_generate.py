"""Per-token latency of converted decoders with their cache: one decoding
step (batch 1, one new token after --cached cached ones) of a GPT-2 or a
Llama from transformers (tests/dynamic_models.py; `wide`, `llama`: GPT-2
small's width at 4 layers), one thread, median of runs, all runners of a
model in one process, in turn (tools/zoo_models/latency.py).

The sources: transformers' eager step (the model with a DynamicCache built
from the tensors, as `x2 convert --with-cache` reads it) and the model
exported to ONNX with its cache by torch.onnx's two exporters, in
onnxruntime. The conversions: x2 --with-cache from the transformers model to
onnx (onnxruntime), torch (eager model.py), paddle (dygraph model.py and
Paddle Inference, default config but one thread), and x2 from the
TorchScript exporter's ONNX file to onnx. Ratios: the torch and paddle steps
against transformers' eager step (the Llama's paddle steps also against
PaddleFormers' own Llama, with --paddleformers), the onnx ones against the
export. --clock cpu times each step's CPU (a machine other work shares).

    python tools/bench_generate.py [--models tiny,wide,llama] [--cached 63] [--json OUT]
                                   [--md OUT] [--clock wall|cpu] [--paddleformers PATHS]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))

from bench_latency import _run  # noqa: E402
from latency import in_one_process, in_own_process  # noqa: E402
from x2.cli import FitTable, print_table  # noqa: E402

BUILDERS = ROOT / "tests" / "dynamic_models.py"
# name -> (the transformers LM's factory, the builders of its ONNX exports
# with the cache: TorchScript exporter, dynamo exporter)
MODELS = {"tiny": ("gpt2_lm", "gpt2_with_past_legacy", "gpt2_with_past_dynamo"),
          "wide": ("gpt2_wide_lm", "gpt2_wide_with_past_legacy", "gpt2_wide_with_past_dynamo"),
          "llama": ("llama_wide_lm", "llama_wide_with_past_legacy",
                    "llama_wide_with_past_dynamo"),
          "0.5b": ("qwen2_05b_lm", "qwen2_05b_with_past_legacy", "qwen2_05b_with_past_dynamo")}
# Models whose runners are measured each in a process of its own.
LARGE = {"0.5b"}
# Models PaddleFormers ports by hand (its Llama), measured with --paddleformers.
PADDLEFORMERS = {"llama"}
PF_STEP = "PaddleFormers' Llama (dygraph)"
EAGER, EXPORT = "transformers eager step", "torch.onnx export (TorchScript), onnxruntime"
EXPORT_DIMS = ["--dim", "past=5,7", "--dim", "seq=3,1", "--dim", "total=8,8"]
CLOCKS = {"wall": "wall-clock time",
          "cpu": "CPU time of the thread that runs the model (X2_LATENCY_CLOCK=cpu)"}
# runner -> (x2 --from, x2 --to, latency.py framework, the source it is measured against)
RUNNERS = {"x2 --with-cache -> torch (eager)": ("torch", "torch", "torch", EAGER),
           "x2 --with-cache -> paddle (dygraph)": ("torch", "paddle", "paddle", EAGER),
           "x2 --with-cache -> paddle (Paddle Inference)": ("torch", "paddle",
                                                            "paddle-inference", EAGER),
           "x2 --with-cache -> onnx (onnxruntime)": ("torch", "onnx", "onnx", EXPORT),
           "x2 from the export -> onnx (onnxruntime)": ("onnx", "onnx", "onnx", EXPORT)}


PF_PKGS = ROOT / "build" / "paddleformers-pkgs"
# PaddleFormers 1.2.0 on x2's paddle, with the dependencies its Llama imports at
# the versions it was written for (transformers < 5.4 and its hub and tokenizers),
# ahead of x2's own (PYTHONPATH) in the process that runs it only.
PF_REQUIREMENTS = ["paddleformers==1.2.0", "colorlog==6.12.0", "aistudio-sdk==0.3.9",
                   "omegaconf==2.4.0", "huggingface_hub==1.3.0", "transformers==5.3.0",
                   "tokenizers==0.22.2"]


def ensure_paddleformers() -> str:
    if not (PF_PKGS / "paddleformers").exists():
        import subprocess
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                        str(PF_PKGS), *PF_REQUIREMENTS], check=True)
    return str(PF_PKGS)


def step_inputs(source: Path, cached: int) -> tuple[list[np.ndarray], list[str]]:
    """One generation step's inputs and their names, in the export's order
    (x2 --with-cache's order too)."""
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


def measure(name: str, work: Path, cached: int) -> list[dict]:
    factory, legacy, dynamo = MODELS[name]
    spec = f"{BUILDERS}:{factory}"
    exports = {"legacy": work / f"{name}.onnx", "dynamo": work / f"{name}_dynamo.onnx"}
    _run([str(BUILDERS), legacy, str(exports["legacy"])], ROOT)
    _run([str(BUILDERS), dynamo, str(exports["dynamo"])], ROOT)
    arrays, _ = step_inputs(exports["legacy"], cached)
    inputs = work / f"{name}.npz"
    np.savez(inputs, *arrays)
    converted: dict[tuple, Path] = {}
    for source, target, _, _ in RUNNERS.values():
        if (source, target) not in converted:
            out = converted[source, target] = work / name / f"{source}-{target}"
            out.parent.mkdir(parents=True, exist_ok=True)
            model = spec if source == "torch" else str(exports["legacy"])
            _run(["-m", "x2", "convert", "--quiet", "--from", source, "--to", target,
                  "--model", model, "--out", str(out),
                  # (the TorchScript export of the Llama bakes its example's 32
                  # positions: verify at sizes within them)
                  *(["--with-cache"] if source == "torch" else EXPORT_DIMS)], ROOT)
    # Every runner in one process, one step each in turn: the memory traffic of
    # other work on the machine (these steps read every weight) hits them alike.
    entries = {EAGER: ("torch-step", spec), EXPORT: ("onnx", str(exports["legacy"])),
               "torch.onnx export (dynamo), onnxruntime": ("onnx", str(exports["dynamo"]))}
    for runner, (source, target, framework, _) in RUNNERS.items():
        out = converted[source, target]
        entries[runner] = (framework, str(out / "model.onnx" if target == "onnx" else out))
    if name in LARGE:   # (all of them in one process would hold every copy of the weights)
        times = {k: in_own_process(framework, model, inputs, [])
                 for k, (framework, model) in entries.items()}
    else:
        times = dict(zip(entries, in_one_process(
            [(framework, model, inputs, []) for framework, model in entries.values()])))
    sources = {k: times[k] for k in list(entries)[:3]}
    if name in PADDLEFORMERS and os.environ.get("X2_PADDLEFORMERS"):
        # (a process of its own: it imports the transformers it pins)
        sources[PF_STEP] = in_own_process("paddleformers-step", spec, inputs, [])
    rows = [{"model": name, "runner": f"source: {k}", "ms": v} for k, v in sources.items()]
    for runner, (_, target, _, against) in RUNNERS.items():
        for source_step in (against, PF_STEP) if target == "paddle" else (against,):
            if source_step in sources:
                rows.append({"model": name, "runner": runner, "ms": times[runner],
                             "against": source_step, "ratio": times[runner] / sources[source_step]})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def markdown(rows: list[dict], args) -> str:
    import platform
    import subprocess
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    lines = [
        "# Per-token latency of decoders with their cache (generated)", "",
        f"`python tools/bench_generate.py --models {args.models} --cached {args.cached} "
        f"--clock {args.clock}{' --paddleformers install' if args.paddleformers else ''} "
        f"--md docs/bench_generate.md`, at commit {commit}, on {platform.machine()} "
        f"({platform.processor() or 'CPU'}), one thread, {CLOCKS[args.clock]}. One decoding "
        f"step: batch 1, one new token after {args.cached} cached ones; median of up to 10 timed "
        "runs after 2 warm-ups, all runners of a model in one process, one step each in turn "
        "(PaddleFormers, and each runner of `0.5b`, in a process of its own). `tiny`: GPT-2 "
        "with 2 "
        "layers of width 32; `wide`: GPT-2 small's width (768, 12 heads) at 4 layers, "
        "vocabulary 8192; `llama`: a Llama of the same width (MLP 2048) and vocabulary; "
        "`0.5b`: a Qwen2-0.5B-shaped model (1.84 GiB); random weights.", "",
        "Ratio: the torch and Paddle steps against transformers' eager step (the model with a "
        "DynamicCache built from the tensors), the Paddle ones of `llama` also against "
        "PaddleFormers' hand-written Llama of the same config (dygraph, its own cache, which "
        "grows by one token per timed run), the ONNX ones against torch.onnx's TorchScript "
        "export of the same model in onnxruntime. Steps this small vary between runs on a "
        "shared machine: compare ratios within one run.", "",
        "| model | runner | ms per token | against | ratio |", "|---|---|---:|---|---:|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['runner']} | {r['ms']:.3f} | "
                     f"{r.get('against', '-')} | "
                     f"{format(r['ratio'], '.2f') if 'ratio' in r else '-'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--cached", type=int, default=63, help="tokens already in the cache")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--md", help="write the table as a markdown page here")
    parser.add_argument("--clock", choices=CLOCKS, default="wall")
    parser.add_argument("--paddleformers", metavar="PATHS|install",
                        help="where PaddleFormers imports from (os.pathsep-separated), or "
                             f"install: into {PF_PKGS.relative_to(ROOT)} on first use; "
                             "adds its Llama")
    args = parser.parse_args(argv)
    if args.paddleformers == "install":
        args.paddleformers = ensure_paddleformers()
    if args.clock == "cpu":
        os.environ["X2_LATENCY_CLOCK"] = "cpu"
    if args.paddleformers:
        os.environ["X2_PADDLEFORMERS"] = args.paddleformers
    rows = []
    with tempfile.TemporaryDirectory(prefix="x2-bench-generate-") as tmp:
        for name in args.models.split(","):
            rows += measure(name, Path(tmp), args.cached)
    table = FitTable(title=f"one decoding step with the cache (batch 1, {args.cached} cached "
                           "tokens), one thread, median ms")
    for column in ("model", "runner", "ms per token", "against", "ratio"):
        numeric = column in ("ms per token", "ratio")
        table.add_column(column, justify="right" if numeric else "left", numeric=numeric)
    for r in rows:
        table.add_row(r["model"], r["runner"], f"{r['ms']:.3f}", r.get("against", "-"),
                      f"{r['ratio']:.2f}" if "ratio" in r else "-")
    print_table(table)
    if args.md:
        Path(args.md).write_text(markdown(rows, args))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
