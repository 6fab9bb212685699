"""Peak memory of one forward of x2's torch output, flat (`--flat`) against
the module tree (issue 47: the tree writes no `del` lines; a class's
locals go when its forward returns).

    python tools/forward_memory.py [--layers 8] [--hidden 256] [--seq 256] [--batch 2]

converts a transformers Llama with random weights (tests/source_names_models.py's
config at the given sizes) both ways, then runs each output's forward in a
fresh process under torch's profiler and reports the peak of the bytes the
forward holds beyond its inputs and weights (the running sum of its CPU
allocations and frees), and model.py's line count."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_SOURCE = '''
import torch, transformers

def llama():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=256, max_position_embeddings={seq}, hidden_size={hidden},
        num_hidden_layers={layers}, num_attention_heads=8, num_key_value_heads=4,
        intermediate_size={intermediate}, use_cache=False, tie_word_embeddings=True)
    return transformers.LlamaForCausalLM(config).eval()
'''

_MEASURE = r'''
import json, sys
import torch
sys.path.insert(0, sys.argv[1])
from x2.emitters.codegen import import_generated
from pathlib import Path
model = import_generated(Path(sys.argv[2]) / "model.py").load_model()
ids = torch.randint(0, 256, (int(sys.argv[3]), int(sys.argv[4])))
with torch.no_grad():
    model(ids)   # warm
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                profile_memory=True) as prof:
        model(ids)
held = peak = 0
events = sorted((e for e in prof.profiler.kineto_results.events()
                 if e.name() == "[memory]"), key=lambda e: e.start_ns())
for event in events:
    held += event.nbytes()
    peak = max(peak, held)
print(json.dumps({"peak_bytes": peak}))
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--seq", type=int, default=256)
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="x2_forward_memory_"))
    source = work / "source.py"
    source.write_text(_SOURCE.format(seq=args.seq, hidden=args.hidden, layers=args.layers,
                                     intermediate=args.hidden * 3))
    found = {}
    for kind, extra in (("flat", ["--flat"]), ("tree", [])):
        out = work / kind
        subprocess.run([sys.executable, "-m", "x2", "convert", "--from", "torch", "--to", "torch",
                        "--model", f"{source}:llama", "--out", str(out), "--input-shape",
                        f"input_ids:{args.batch},{args.seq}", "--input-dtype", "int64",
                        "--no-verify", "--quiet", *extra], check=True, cwd=ROOT)
        proc = subprocess.run([sys.executable, "-c", _MEASURE, str(ROOT), str(out),
                               str(args.batch), str(args.seq)], check=True, cwd=ROOT,
                              capture_output=True, text=True)
        found[kind] = {**json.loads(proc.stdout.strip().splitlines()[-1]),
                       "model_py_lines": len((out / "model.py").read_text().splitlines())}
    found["tree_over_flat"] = round(found["tree"]["peak_bytes"] / found["flat"]["peak_bytes"], 4)
    print(json.dumps({"config": vars(args), **found}, indent=1))


if __name__ == "__main__":
    main()
