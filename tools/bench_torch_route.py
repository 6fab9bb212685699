"""Wall time of `x2 convert --from torch --to onnx` against torch.onnx.export
(the legacy TorchScript exporter, dynamo=False) on the same modules.

Both run as fresh processes, so each pays its own imports; x2's time includes
its check (the written ONNX model is run against x2's reference). The table
names x2's capture (torch.jit.trace, or torch.export where a trace cannot be
trusted: x2/frontends/torch/trace.py):

    python tools/bench_torch_route.py [--repeat 2]
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

ROOT = Path(__file__).resolve().parent.parent

MODULES = '''
import sys
import torch
torch.manual_seed(0)
ZOO = "@ZOO@"

def mlp():
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                               torch.nn.Linear(128, 64), torch.nn.SiLU()).eval()

class Block(torch.nn.Module):
    """A pre-norm transformer block written with F.scaled_dot_product_attention
    (nn.TransformerEncoderLayer does not export with the legacy exporter of
    torch 2.13: its MultiheadAttention passes is_causal as a tensor)."""
    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv, self.out = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(),
                                       torch.nn.Linear(2 * d, d))

    def forward(self, src):
        b, s, d = src.shape
        q, k, v = self.qkv(self.norm1(src)).reshape(b, s, 3, self.heads, d // self.heads) \
            .permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        src = src + self.out(a.transpose(1, 2).reshape(b, s, d))
        return src + self.mlp(self.norm2(src))

def encoder_layer():
    return Block().eval()

def encoder():
    return torch.nn.Sequential(*[Block() for _ in range(4)]).eval()

SHAPES = {"mlp": (8, 64), "encoder_layer": (2, 16, 64), "encoder": (2, 16, 64)}

def hf_bert():
    """A Hugging Face BERT classifier (tools/zoo_models/hf.py): its mask code
    branches on the mask's values, so x2 captures it with torch.export."""
    sys.path.insert(0, ZOO)
    import hf
    return hf.build("bert_classifier")
'''

LEGACY = '''
import sys, torch
sys.path.insert(0, sys.argv[1])
import bench_modules as m
model = getattr(m, sys.argv[2])()
# Not under no_grad: there an eval-mode encoder takes its fused fast path
# (aten::_transformer_encoder_layer_fwd), which the legacy exporter cannot export.
if sys.argv[2] == "hf_bert":
    example = (torch.randint(0, 128, (2, 16)),)
else:
    example = (torch.randn(*m.SHAPES[sys.argv[2]]),)
torch.onnx.export(model, example, sys.argv[3], dynamo=False, opset_version=17)
'''


# x2's input arguments per module (the legacy exporter takes positional examples).
INPUTS = {"mlp": ["--input-shape", "input:8,64"],
          "encoder_layer": ["--input-shape", "src:2,16,64"],
          "encoder": ["--input-shape", "input:2,16,64"],
          "hf_bert": ["--input-shape", "input_ids:2,16", "--input-dtype", "int64"]}


def _timed(cmd: list[str], env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])}... failed:\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per tool (the best counts)")
    opts = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "bench_modules.py").write_text(
            MODULES.replace("@ZOO@", str(ROOT / "tools" / "zoo_models")))
        rows = []
        for name, inputs in INPUTS.items():
            x2_cmd = [sys.executable, "-m", "x2", "convert", "--from", "torch", "--to", "onnx",
                      "--model", f"{tmp}/bench_modules.py:{name}", *inputs]
            legacy_cmd = [sys.executable, "-c", LEGACY, tmp, name, f"{tmp}/{name}.onnx"]
            x2_s = min(_timed(x2_cmd + ["--out", f"{tmp}/{name}_x2_{i}"], env)
                       for i in range(opts.repeat))
            report = json.loads(Path(f"{tmp}/{name}_x2_0/report.json").read_text())
            legacy_s = min(_timed(legacy_cmd, env) for _ in range(opts.repeat))
            rows.append((name, report["source"].get("capture", ""), x2_s, legacy_s))
    sys.path.insert(0, str(ROOT))
    from x2.cli import FitTable, print_table
    table = FitTable(title="x2 convert --from torch --to onnx against torch.onnx.export "
                           f"(best of {opts.repeat})")
    for column in ("module", "x2 capture", "x2 convert (s)", "torch.onnx.export (s)", "ratio"):
        numeric = column.endswith(("(s)", "ratio"))
        table.add_column(column, justify="right" if numeric else "left", numeric=numeric)
    for name, capture, x2_s, legacy_s in rows:
        table.add_row(name, capture, f"{x2_s:.2f}", f"{legacy_s:.2f}", f"{x2_s / legacy_s:.2f}")
    print_table(table)


if __name__ == "__main__":
    main()
