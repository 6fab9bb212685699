"""Peak memory of converting a Hugging Face LLM folder: a Qwen2-0.5B-sized
model (494M parameters, random weights from a fixed seed, written with
save_pretrained as safetensors) converted with `x2 convert --from torch
--to T --model DIR` for each target, verify on (convert's default).

    python tools/llm_memory.py [--work build/llm_memory] [--size 0.5b|small|tiny]
                               [--dtype fp32|bf16] [--targets paddle,onnx,torch]
                               [--no-verify]

The folder is built once per size and dtype under --work and reused
(--dtype bf16: saved in bfloat16, as most LLM checkpoints are, which x2
converts in bfloat16 where the target computes it on a CPU). The peak is
sampled every --interval seconds over the whole process tree of the
conversion (the CLI and every worker it starts): RSS summed over the
processes, and PSS (a page shared by several processes counted once, split
between them), the closer figure of what the tree holds. Prints a table
(target, weight bytes, peak RSS, RSS / weights, peak PSS, seconds, verified
from report.json) and the same as JSON."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Qwen2-0.5B's shape (its config.json), with its tied embedding.
SIZES = {
    "0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                 num_attention_heads=14, num_key_value_heads=2, vocab_size=151936),
    # Qwen2-1.5B's and Qwen2.5-3B's (tools/llm_scale.py: the scale table)
    "1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                 num_attention_heads=12, num_key_value_heads=2, vocab_size=151936),
    "3b": dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=36,
               num_attention_heads=16, num_key_value_heads=2, vocab_size=151936),
    # ~0.7 GB of weights (over verify's 512 MiB LARGE_WEIGHTS): the same copies, sooner.
    "small": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=16,
                  num_attention_heads=12, num_key_value_heads=4, vocab_size=32000),
    "tiny": dict(hidden_size=128, intermediate_size=512, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, vocab_size=4096),
}
SEED = 0

BUILD = """
import sys, torch, transformers
torch.manual_seed({seed})
config = transformers.Qwen2Config(max_position_embeddings=32768, rope_theta=1e6,
                                  tie_word_embeddings=True, **{shape})
model = transformers.Qwen2ForCausalLM(config).eval().to(torch.{dtype})
model.save_pretrained(sys.argv[1], safe_serialization=True)
"""


# --dtype -> the torch dtype the folder is saved in
DTYPES = {"fp32": "float32", "bf16": "bfloat16"}


def build_folder(folder: Path, size: str, dtype: str = "fp32") -> None:
    """save_pretrained of a random Qwen2 model, in a child process (torch
    stays out of this one, whose memory is not measured but shares the machine)."""
    if (folder / "config.json").is_file():
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = folder.with_name(folder.name + ".partial")
    subprocess.run(["rm", "-rf", str(partial)], check=True)
    subprocess.run([sys.executable, "-c", BUILD.format(seed=SEED, shape=SIZES[size],
                                                             dtype=DTYPES[dtype]),
                    str(partial)], check=True, cwd=ROOT)
    os.rename(partial, folder)


def weight_bytes(folder: Path) -> int:
    """The bytes of every tensor in the folder's safetensors files (their headers)."""
    total = 0
    for file in sorted(folder.glob("*.safetensors")):
        with open(file, "rb") as f:
            header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        total += sum(e["data_offsets"][1] - e["data_offsets"][0]
                     for k, e in header.items() if k != "__metadata__")
    return total


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _tree(root: int) -> list[int]:
    tree, todo, found = _children(), [root], []
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(tree.get(pid, []))
    return found


def _memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in bytes; (0, 0) once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except (OSError, ValueError):
        return 0, 0
    kib = lambda key: int(fields.get(key, "0 kB").split()[0]) * 1024  # noqa: E731
    return kib("Rss"), kib("Pss")


def _role(pid: int) -> str:
    """What a process of the tree is: the CLI, or the framework of a worker."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().decode(errors="replace").split("\0")
    except OSError:
        return "?"
    if "--serve" in args:
        return f"{args[args.index('--serve') + 1]} worker"
    if "x2.process.worker" in args:
        return f"{args[args.index('x2.process.worker') + 1]} step"
    return "cli" if "convert" in args else " ".join(args)[:40]


def run_sampled(cmd: list[str], interval: float, timeline: Path | None = None) -> dict:
    """Run `cmd`; its exit code, seconds, the peak RSS / PSS summed over its
    process tree and each process's RSS at that peak (`timeline`: every sample,
    as JSON lines)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    peak_rss = peak_pss = 0
    processes = 0
    at_peak: dict[str, int] = {}
    log = open(timeline, "w") if timeline else None
    while proc.poll() is None:
        pids = _tree(proc.pid)
        memory = {p: _memory(p) for p in pids}
        rss, pss = (sum(m[i] for m in memory.values()) for i in (0, 1))
        if rss > peak_rss:
            at_peak = {f"{_role(p)} {p}": m[0] for p, m in memory.items() if m[0]}
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        processes = max(processes, len(pids))
        if log:
            log.write(json.dumps({"t": round(time.perf_counter() - start, 2), "rss": {
                f"{_role(p)} {p}": m[0] >> 20 for p, m in memory.items() if m[0]}}) + "\n")
        time.sleep(interval)
    if log:
        log.close()
    output = proc.stdout.read()
    return {"rc": proc.returncode, "seconds": round(time.perf_counter() - start, 1),
            "peak_rss": peak_rss, "peak_pss": peak_pss, "processes": processes,
            "rss_at_peak": at_peak, "output": output[-3000:]}


def convert(folder: Path, target: str, out: Path, verify: bool, interval: float,
            timeline: Path | None) -> dict:
    subprocess.run(["rm", "-rf", str(out)], check=True)
    cmd = [sys.executable, "-m", "x2", "convert", "--from", "torch", "--to", target,
           "--model", str(folder), "--out", str(out), "--quiet"]
    row = run_sampled(cmd + ([] if verify else ["--no-verify"]), interval, timeline)
    row["verified"] = None
    if row["rc"] == 0:
        report = json.loads((out / "report.json").read_text())
        row["verified"] = report["target_details"]["verify"].get("verified")
        row["precision"] = report["target_details"]["precision"]["precision"]
        row["output_bytes"] = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(ROOT / "build" / "llm_memory"))
    parser.add_argument("--size", choices=SIZES, default="0.5b")
    parser.add_argument("--dtype", choices=DTYPES, default="fp32",
                        help="the dtype the folder is saved in")
    parser.add_argument("--targets", default="paddle,onnx,torch")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--interval", type=float, default=0.05,
                        help="seconds between memory samples")
    parser.add_argument("--timeline", action="store_true",
                        help="write each target's samples (MiB per process) to "
                             "WORK/timeline_SIZE_TARGET.jsonl")
    args = parser.parse_args()
    work = Path(args.work).resolve()
    name = args.size if args.dtype == "fp32" else f"{args.size}-{args.dtype}"
    folder = work / f"qwen2-{name}"
    build_folder(folder, args.size, args.dtype)
    weights = weight_bytes(folder)
    rows = {}
    for target in args.targets.split(","):
        rows[target] = convert(folder, target, work / f"out_{name}_{target}",
                               not args.no_verify, args.interval,
                               work / f"timeline_{name}_{target}.jsonl"
                               if args.timeline else None)
        rows[target]["rss_ratio"] = round(rows[target]["peak_rss"] / weights, 2)
        rows[target]["pss_ratio"] = round(rows[target]["peak_pss"] / weights, 2)
    from x2.cli import FitTable, print_table
    gib = lambda n: f"{n / 2**30:.2f}"  # noqa: E731
    table = FitTable(title=f"Qwen2 {args.size} ({args.dtype}): {gib(weights)} GiB of "
                           f"weights, verify {'off' if args.no_verify else 'on'}")
    for col in ("target", "precision", "weights GiB", "peak RSS GiB", "RSS / weights",
                "peak PSS GiB", "PSS / weights", "output GiB", "seconds", "verified"):
        table.add_column(col, numeric=col not in ("target", "precision", "verified"))
    for target, r in rows.items():
        verified = ("FAILED: " + r["output"].strip().splitlines()[-1][:200] if r["rc"]
                    else str(r["verified"]).lower())
        table.add_row(target, r.get("precision", "-"), gib(weights), gib(r["peak_rss"]),
                      f"{r['rss_ratio']:.2f}", gib(r["peak_pss"]), f"{r['pss_ratio']:.2f}",
                      gib(r.get("output_bytes", 0)), str(r["seconds"]), verified)
    print_table(table)
    print(json.dumps({"size": args.size, "dtype": args.dtype, "weights": weights,
                      "targets": {t: {k: v for k, v in r.items() if k != "output"}
                                  for t, r in rows.items()}}, indent=2))
    return 0 if all(r["rc"] == 0 for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
