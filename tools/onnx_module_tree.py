"""The module tree x2 recovers from ONNX files exported from torch (issue 47):
a tiny transformers Llama (tests/source_names_models.py) and a tiny BERT,
random weights, exported by torch.onnx's dynamo and TorchScript exporters,
each converted to torch and Paddle as a tree and `--flat`.

    python tools/onnx_module_tree.py [--out DIR]

prints, per file and target: model.py's lines (tree and flat), x2's verify
against onnxruntime, the source keys the weights kept, the classes written
(with their instances) and the modules inlined, with why (report.json
`target_details`). The TorchScript exporter traces a wrapper that calls the
model with keywords (its positional export fails on BERT and adds an input
on Llama), so its paths are under `source.`."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_EXPORT = r'''
import sys, warnings
from pathlib import Path
import torch, transformers
warnings.filterwarnings("ignore")
sys.path[:0] = [sys.argv[2], sys.argv[2] + "/tests"]
from source_names_models import llama
out = Path(sys.argv[1])
torch.manual_seed(0)
bert = transformers.BertModel(transformers.BertConfig(
    vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
    intermediate_size=32, max_position_embeddings=32)).eval()
ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(0))
mask = torch.ones_like(ids)


class Keywords(torch.nn.Module):
    def __init__(self, source):
        super().__init__()
        self.source = source

    def forward(self, input_ids, attention_mask):
        return self.source(input_ids=input_ids, attention_mask=attention_mask)[0]


for name, model in {"llama": llama(0), "bert": bert}.items():
    for exporter in ("dynamo", "torchscript"):
        folder = out / f"{name}_{exporter}"
        folder.mkdir(parents=True)
        if exporter == "dynamo":
            torch.onnx.export(model, (), str(folder / "model.onnx"), dynamo=True,
                              kwargs={"input_ids": ids, "attention_mask": mask},
                              input_names=["input_ids", "attention_mask"], external_data=False)
        else:
            torch.onnx.export(Keywords(model).eval(), (ids, mask), str(folder / "model.onnx"),
                              input_names=["input_ids", "attention_mask"], dynamo=False)
'''


def convert(model: Path, out: Path, target: str, flat: bool) -> dict:
    args = [sys.executable, "-m", "x2", "convert", "--from", "onnx", "--to", target,
            "--model", str(model), "--out", str(out), "--input-range", "input_ids:0,64"]
    proc = subprocess.run(args + (["--flat"] if flat else []), capture_output=True, text=True,
                          cwd=ROOT)
    if proc.returncode:
        return {"failed": proc.stderr.strip().splitlines()[-1:]}
    details = json.loads((out / "report.json").read_text())["target_details"]
    verify = details["verify"]
    names = details.get("source_names") or {}
    tree = details.get("module_tree") or {}
    inlined: dict[str, list] = {}
    for item in tree.get("inlined", []):
        inlined.setdefault(item["why"], []).append(item["scope"])
    return {"lines": len((out / "model.py").read_text().splitlines()),
            "verified": verify["verified"],
            "max_rel": max(max(e.values()) for e in verify["max_rel"].values()),
            "keys": f"{names.get('matched')}/{names.get('source_keys')}",
            "classes": {k: len(c["instances"]) for k, c in tree.get("classes", {}).items()},
            "inlined": {why: len(scopes) for why, scopes in inlined.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="folder for the ONNX files and conversions "
                                      "(default: a temporary one)")
    args = parser.parse_args()
    work = Path(args.out or tempfile.mkdtemp(prefix="x2_onnx_tree_"))
    subprocess.run([sys.executable, "-c", _EXPORT, str(work / "onnx"), str(ROOT)], check=True,
                   capture_output=True, cwd=ROOT)
    results = {}
    for model in sorted((work / "onnx").glob("*/model.onnx")):
        name = model.parent.name
        for target in ("torch", "paddle"):
            tree = convert(model, work / f"{name}_{target}", target, flat=False)
            flat = convert(model, work / f"{name}_{target}_flat", target, flat=True)
            results[f"{name} -> {target}"] = {**tree, "flat_lines": flat.get("lines")}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
