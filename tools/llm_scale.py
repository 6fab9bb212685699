"""The scale table of issue 48: Hugging Face folders of Qwen2-0.5B's,
Qwen2-1.5B's and Qwen2.5-3B's shapes (random weights, seed 0, fp32, built
by tools/llm_memory.py) converted with `x2 convert --from torch --to T
--model DIR` (verify on, the default) for each target, and generated from
with `x2 check --generate 8` (a `--with-cache` conversion, whose own time
is given too); `--to onnx` against `torch.onnx.export` (dynamo=True) of
the same folder as a user would run it. Each step is one process tree,
sampled for its peak RSS and PSS (llm_memory.run_sampled).

    python tools/llm_scale.py [--work build/llm_scale] [--sizes 0.5b,1.5b,3b]
                              [--targets paddle,onnx,torch] [--export-sizes 0.5b]
                              [--no-generate] [--compare] [--force] [--md docs/llm_scale.md]

Results go to WORK/results.json, one entry per step, and a step already
there is not run again (--force runs it again): the table can be measured
in pieces. Before each step the memory it needs (the weights times the
ratio measured at 0.5B, plus a margin) is checked against MemAvailable: a
step that would not fit is recorded as skipped, with the reason, rather
than left to the OOM killer (the machine is shared). --compare runs the
0.5B `--to onnx` and torch.onnx.export once more, back to back. --md writes
the table from every result recorded, with the commands and the commit."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import llm_memory as lm  # noqa: E402

# What a user runs: the folder as transformers loads it, without the cache
# (as x2 writes it by default), input_ids and attention_mask over a dynamic
# batch and sequence, the dynamo exporter (torch's default).
EXPORT = """
import sys, torch, transformers
model = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], use_cache=False).eval()
ids = torch.ones(2, 8, dtype=torch.int64)
batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
with torch.no_grad():
    torch.onnx.export(model, (), sys.argv[2], kwargs={"input_ids": ids, "attention_mask": ids},
                      input_names=["input_ids", "attention_mask"], output_names=["logits"],
                      dynamic_shapes={"input_ids": {0: batch, 1: seq},
                                      "attention_mask": {0: batch, 1: seq}}, dynamo=True)
"""
SIZES = ("0.5b", "1.5b", "3b")
NEW_TOKENS = 8
# Peak / weights of each kind of step, as measured at 0.5B (a little above),
# and what the rest of the machine keeps (other work shares it).
NEEDS = {"convert": 1.45, "export": 1.5, "with-cache": 1.45, "generate": 1.5,
         # x2 check --generate's paddle runners: 5.4x at 0.5B (one of them holds
         # several copies of the weights)
         "generate paddle": 5.6}
MARGIN = 1.5 * 2**30


def available() -> int:
    with open("/proc/meminfo") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["MemAvailable"].split()[0]) * 1024


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f}"


def sampled(cmd: list[str], interval: float) -> dict:
    """lm.run_sampled with the machine's load average before and after."""
    before = load()
    row = lm.run_sampled(cmd, interval)
    row["load"] = f"{before}-{load()}"
    return row


def convert_step(folder: Path, target: str, out: Path, interval: float,
                 extra: list[str] = ()) -> dict:
    """x2 convert (verify on unless `extra` says otherwise): the row with
    report.json's time per step and per verify runner."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    row = sampled([sys.executable, "-m", "x2", "convert", "--from", "torch", "--to", target,
                   "--model", str(folder), "--out", str(out), "--quiet", *extra], interval)
    if row["rc"] == 0:
        report = json.loads((out / "report.json").read_text())
        verify = report["target_details"]["verify"]
        row.update(verified=verify.get("verified", False), timings=report["timings_s"],
                   verify_steps=verify.get("seconds_by_step", {}),
                   runners=verify.get("runners", []))
    return row


def export_step(folder: Path, out: Path, interval: float) -> dict:
    subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    return sampled([sys.executable, "-c", EXPORT, str(folder), str(out / "model.onnx")],
                   interval)


def generate_step(folder: Path, target: str, out: Path, interval: float) -> dict:
    """x2 check --generate on a --with-cache conversion (written unverified:
    the generation is its check)."""
    converted = convert_step(folder, target, out, interval, ["--with-cache", "--no-verify"])
    if converted["rc"]:
        return {"rc": converted["rc"], "output": converted["output"], "convert": converted}
    result = out.with_name(out.name + ".generate.json")
    row = sampled([sys.executable, "-m", "x2", "check", "--from", "torch", "--to", target,
                   "--model", str(folder), "--converted", str(out),
                   "--generate", str(NEW_TOKENS), "--json", str(result)], interval)
    row["convert"] = {k: v for k, v in converted.items() if k != "output"}
    if result.is_file():
        generation = json.loads(result.read_text())
        row["runners"] = {r["runner"]: r["tokens_equal"] for r in generation["runners"]}
        row["tokens_equal"] = all(row["runners"].values()) and bool(row["runners"])
        native = generation.get("source_generate")
        if native:
            row["runners"][native["runner"]] = native["tokens_equal"]
    return row


def run(results: dict, key: str, need: float, fn, force: bool, save) -> None:
    """Run one step into results[key] unless it is there; skipped, with the
    reason, when MemAvailable is short of `need` bytes."""
    if key in results and not force:
        return
    have = available()
    if have < need:
        results[key] = {"skipped": f"needs about {_gib(need)} GiB ({_gib(need - MARGIN)} "
                                   f"peak + {_gib(MARGIN)} margin), "
                                   f"{_gib(have)} GiB available"}
        print(f"{key}: skipped ({results[key]['skipped']})", flush=True)
    else:
        print(f"{key}: running ({_gib(have)} GiB available, load {load()})", flush=True)
        started = time.strftime("%H:%M:%S")
        row = fn()
        row["started"] = started
        row["output"] = row.get("output", "")[-1500:] if row.get("rc") else ""
        results[key] = row
        print(f"{key}: rc {row.get('rc')}, {row.get('seconds')} s, peak RSS "
              f"{_gib(row.get('peak_rss', 0))} GiB", flush=True)
    save()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(ROOT / "build" / "llm_scale"))
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--targets", default="paddle,onnx,torch")
    parser.add_argument("--export-sizes", default="0.5b",
                        help="sizes at which torch.onnx.export runs too")
    parser.add_argument("--no-generate", action="store_true")
    parser.add_argument("--compare", action="store_true",
                        help="only the 0.5B --to onnx and torch.onnx.export, back to back")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--md", help="write the table here (markdown)")
    parser.add_argument("--interval", type=float, default=0.1)
    args = parser.parse_args()
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    path = work / "results.json"
    results = json.loads(path.read_text()) if path.is_file() else {}

    def save():
        path.write_text(json.dumps(results, indent=1))

    sizes = ["0.5b"] if args.compare else args.sizes.split(",")
    for size in sizes:
        folder = work / f"qwen2-{size}"
        if not (folder / "config.json").is_file():
            # building holds the model in memory once, then writes it
            need = _parameters(lm.SIZES[size]) * 4 + MARGIN
            if available() < need:
                results[f"{size}/build"] = {"skipped": f"building the folder needs about "
                                            f"{_gib(need)} GiB, {_gib(available())} available"}
                save()
                continue
            lm.build_folder(folder, size)
        weights = lm.weight_bytes(folder)
        results[f"{size}/weights"] = weights
        need = {kind: ratio * weights + MARGIN for kind, ratio in NEEDS.items()}
        out = work / "out"
        if args.compare:
            stamp = time.strftime("%H:%M")
            run(results, f"compare/{stamp}/x2", need["convert"],
                lambda: convert_step(folder, "onnx", out, args.interval), True, save)
            run(results, f"compare/{stamp}/export", need["export"],
                lambda: export_step(folder, out, args.interval), True, save)
            continue
        for target in args.targets.split(","):
            run(results, f"{size}/{target}/convert", need["convert"],
                lambda: convert_step(folder, target, out, args.interval), args.force, save)
            if not args.no_generate:
                run(results, f"{size}/{target}/generate",
                    need.get(f"generate {target}", need["generate"]),
                    lambda: generate_step(folder, target, out, args.interval), args.force,
                    save)
            subprocess.run(["rm", "-rf", str(out)], check=True)
        if size in args.export_sizes.split(","):
            run(results, f"{size}/export", need["export"],
                lambda: export_step(folder, out, args.interval), args.force, save)
        subprocess.run(["rm", "-rf", str(out)], check=True)
    command = " ".join(["python tools/llm_scale.py", *sys.argv[1:]])
    results["commands"] = [c for c in results.get("commands", []) if c != command] + [command]
    save()
    if args.md:
        Path(args.md).write_text(markdown(results))
    return 0


def _parameters(shape: dict) -> int:
    """A Qwen2 model's parameter count (tied embedding; q, k, v with biases)."""
    h, i, kv = shape["hidden_size"], shape["intermediate_size"], shape["num_key_value_heads"]
    kv_width = kv * h // shape["num_attention_heads"]
    layer = h * h + h + 2 * (h * kv_width + kv_width) + h * h + 3 * h * i + 2 * h
    return shape["vocab_size"] * h + shape["num_hidden_layers"] * layer + h


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True).stdout.strip()


def _split(row: dict) -> str:
    """x2's time by step: read (capture), passes, save IR, write, verify by runner."""
    t = row.get("timings", {})
    short = {"read torch model": "read", "optimize IR": "passes", "save IR": "save IR"}
    parts = [f"{short.get(k, k.replace(' model', ''))} {v:.0f}" for k, v in t.items()
             if k != "verify against the source"]
    steps = row.get("verify_steps", {})
    if steps:
        parts.append("verify (" + ", ".join(f"{k} {v:.0f}" for k, v in steps.items()) + ")")
    return "; ".join(parts)


def _cell(row: dict | None, weights: int, what: str) -> str:
    if row is None:
        return "not run"
    if "skipped" in row:
        return "skipped"
    if row.get("rc"):
        return "failed"
    return {"s": f"{row['seconds']:.0f}",
            "ratio": f"{row['peak_rss'] / weights:.2f} / {row['peak_pss'] / weights:.2f}"}[what]


def markdown(results: dict) -> str:
    commands = "; ".join(f"`{c}`" for c in results.get("commands", []))
    lines = [
        "# Converting LLM-sized Hugging Face folders: time and memory by size",
        "",
        f"Generated by {commands} (in that order, the results kept in WORK/results.json) "
        f"at x2 commit {_commit()} "
        f"({time.strftime('%Y-%m-%d')}), on the project's machine: 2 cores, 24 GiB, no "
        f"swap, shared with other work (the load average before and after each step is "
        f"in the last column; 2.0 is both cores busy).",
        "",
        "Folders of Qwen2-0.5B's, Qwen2-1.5B's and Qwen2.5-3B's shapes (tied embedding, "
        "vocabulary 151936), random weights, float32, written by `save_pretrained` "
        "(tools/llm_memory.py). **convert**: `x2 convert --from torch --to T --model DIR` "
        "with nothing else (verify on: the source and every runner of the target, one "
        "at a time, batch 1); peak memory is the whole process tree's (CLI and "
        "workers), RSS / PSS over the weights' bytes. **generate**: `x2 check "
        f"--generate {NEW_TOKENS}` (3 left-padded prompts, greedy) on a `--with-cache "
        "--no-verify` conversion; tokens equal: on every runner of the target and "
        "transformers' own generate().",
        ""]
    header = ("| size | weights GiB | target | convert s | peak / weights (RSS / PSS) | "
              "verified | x2's time by step (s) | --with-cache convert s | generate s | "
              "generate peak / weights | tokens equal | load |")
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    skipped: list[str] = []
    for size in SIZES:
        weights = results.get(f"{size}/weights")
        if not weights:
            continue
        for target in ("paddle", "onnx", "torch"):
            conv = results.get(f"{size}/{target}/convert")
            gen = results.get(f"{size}/{target}/generate")
            if conv is None and gen is None:
                continue
            for key, row in ((f"{size}/{target}/convert", conv), (f"{size}/{target}/generate",
                                                                   gen)):
                if row and "skipped" in row:
                    skipped.append(f"{key}: {row['skipped']}")
                elif row and row.get("rc"):
                    last = (row.get("output") or "").strip().splitlines()[-1:] or [""]
                    skipped.append(f"{key}: failed: {last[0][:300]}")
            verified = "-" if not conv or "rc" not in conv or conv["rc"] else (
                "yes (" + ", ".join(conv.get("runners", [])) + ")" if conv.get("verified")
                else "no")
            gen_ok = gen is not None and "skipped" not in gen and not gen.get("rc")
            equal = ("yes" if gen.get("tokens_equal") else "NO: " + ", ".join(
                k for k, v in gen.get("runners", {}).items() if not v)) if gen_ok else "-"
            loads = " ".join(r["load"] for r in (conv, gen) if r and "load" in r)
            lines.append(
                f"| {size} | {weights / 2**30:.2f} | {target} | {_cell(conv, weights, 's')} | "
                f"{_cell(conv, weights, 'ratio')} | {verified} | "
                f"{_split(conv) if conv and not conv.get('rc') and 'skipped' not in conv else '-'}"
                f" | {_cell(gen.get('convert') if gen_ok else gen, weights, 's')} | "
                f"{_cell(gen, weights, 's')} | {_cell(gen, weights, 'ratio')} | {equal} | "
                f"{loads} |")
    lines += ["", "## --to onnx against torch.onnx.export", "",
              "`torch.onnx.export(model, (), kwargs={input_ids, attention_mask}, "
              "dynamic_shapes={batch, seq}, dynamo=True)` of "
              "`AutoModelForCausalLM.from_pretrained(DIR, use_cache=False)`, as a script "
              "(tools/llm_scale.py EXPORT), its whole run timed like x2's (Python start, "
              "imports, loading, export, writing). x2's time includes its verify; "
              "torch.onnx.export verifies nothing.", "",
              "| size | when | x2 --to onnx s | x2 peak / weights | torch.onnx.export s | "
              "export peak / weights | x2 / export time | load |", "|---|---|---|---|---|---|---|---|"]
    pairs = [(size, "table", results.get(f"{size}/onnx/convert"), results.get(f"{size}/export"))
             for size in SIZES if results.get(f"{size}/export")]
    pairs += [("0.5b", f"back to back at {key.split('/')[1]}", results[key],
               results.get(key[:-3] + "/export"))
              for key in sorted(results) if key.startswith("compare/") and key.endswith("/x2")]
    for size, when, x2, export in pairs:
        weights = results[f"{size}/weights"]
        ok = all(r and "seconds" in r and not r.get("rc") for r in (x2, export))
        ratio = f"{x2['seconds'] / export['seconds']:.2f}" if ok else "-"
        loads = " ".join(r["load"] for r in (x2, export) if r and "load" in r)
        lines.append(f"| {size} | {when} | {_cell(x2, weights, 's')} | "
                     f"{_cell(x2, weights, 'ratio')} | {_cell(export, weights, 's')} | "
                     f"{_cell(export, weights, 'ratio')} | {ratio} | {loads} |")
    for size in SIZES:
        row = results.get(f"{size}/export")
        if row and "skipped" in row:
            skipped.append(f"{size}/export: {row['skipped']}")
    if skipped:
        lines += ["", "## Steps not measured", ""] + [f"- {s}" for s in skipped]
    lines += ["", LIMITS]
    return "\n".join(lines) + "\n"


LIMITS = """## What limits the scale

- **Memory.** Every step's peak is about 1.3-1.45x the weights (the whole
  process tree): the source model as transformers loads it (its weights
  memory-mapped from the safetensors file), and one runner of the written model at a
  time beside what the file cache keeps. On this 24 GiB machine, shared with
  other work, a float32 model of about 3B parameters (12.4 GB) is the largest
  whose conversion fits beside ~4 GiB of other work; a bf16 checkpoint converts
  in bf16 (half the bytes), so about twice the parameters fit.
- **Time.** The capture (torch.export of the model: time grows with the number
  of layers, not the weights), writing the weights once per file x2 writes
  them (the source IR, the IR after the passes, the output: three times the
  weights through the disk's write-back), and verify, which loads the
  source and each runner of the written model again (onnxruntime's session
  initialisation, Paddle's three runners) on one short input.
- **Disk.** The folder, the IR in the job folder and the output: about four
  times the weights while a conversion runs.
"""


if __name__ == "__main__":
    sys.exit(main())
