"""A tiny Llama-style decoder in plain torch (RMSNorm, attention with a causal
mask its model builds once, a gated MLP, layers in an nn.ModuleList), exported
to ONNX by torch.onnx's dynamo and TorchScript exporters: the sources of
tests/test_onnx_scopes.py. `python tests/onnx_scopes_models.py OUT` writes
OUT/{dynamo,torchscript}_{2,4}/model.onnx (the exporter, the number of
layers) and OUT/state_{2,4}.npz (the module's state_dict; seed 0). Imports
torch, so it runs only in a torch process."""
import sys
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

HIDDEN, HEADS, VOCAB, SEQ = 16, 2, 32, 6


class RMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(HIDDEN))

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, x, mask):
        b, s, _ = x.shape
        q, k, v = (p(x).view(b, s, HEADS, -1).transpose(1, 2)
                   for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(2, 3) / (HIDDEN // HEADS) ** 0.5 + mask
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, HIDDEN)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, 2 * HIDDEN, bias=False)
        self.up_proj = nn.Linear(HIDDEN, 2 * HIDDEN, bias=False)
        self.down_proj = nn.Linear(2 * HIDDEN, HIDDEN, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm()
        self.self_attn = Attention()
        self.post_attention_layernorm = RMSNorm()
        self.mlp = MLP()

    def forward(self, x, mask):
        x = x + self.self_attn(self.input_layernorm(x), mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Decoder(nn.Module):
    def __init__(self, layers: int):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([DecoderLayer() for _ in range(layers)])
        self.norm = RMSNorm()

    def forward(self, ids):
        s = ids.shape[1]
        mask = torch.full((s, s), -1e9).triu(1)
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class DecoderForCausalLM(nn.Module):
    def __init__(self, layers: int):
        super().__init__()
        self.model = Decoder(layers)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids):
        return self.lm_head(self.model(ids))


def decoder(layers: int, seed: int = 0) -> DecoderForCausalLM:
    torch.manual_seed(seed)
    return DecoderForCausalLM(layers).eval()


def export(out: Path) -> None:
    out.mkdir(parents=True)
    ids = torch.randint(0, VOCAB, (2, SEQ), generator=torch.Generator().manual_seed(0))
    for layers in (2, 4):
        model = decoder(layers)
        np.savez(out / f"state_{layers}.npz",
                 **{k: v.numpy() for k, v in model.state_dict().items()})
        for exporter in ("dynamo", "torchscript"):
            folder = out / f"{exporter}_{layers}"
            folder.mkdir()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(model, (ids,), str(folder / "model.onnx"),
                                  input_names=["ids"], output_names=["logits"],
                                  dynamo=exporter == "dynamo", external_data=False)


if __name__ == "__main__":
    export(Path(sys.argv[1]))
