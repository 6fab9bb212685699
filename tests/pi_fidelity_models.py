"""Small torch models of the kinds Paddle Inference ran wrong (issue 46), as
factories for `x2 convert --from torch --model tests/pi_fidelity_models.py:NAME`.

Each is a few layers with seeded random weights, written the way the
transformers / audio / vision code it stands for writes it, with its
batch and sequence (or frame) dims dynamic:

- alibi: BLOOM's ALiBi bias, slopes [heads, 1] times positions counted from
  the attention mask, reshaped to [batch * heads, 1, seq].
- frames_linear: a speech encoder's Linears on a 2-D [frames, 128] input.
- window_attention: Swin's window attention, windows reshaped into the batch.
- pooled_sequence: Funnel's pooling between blocks (the class token kept, the
  rest of the sequence average-pooled to half its length).
- moe_routing: top-2 expert routing, tokens sorted by expert (argsort), taken
  with index_select and put back in order.
- sliding_window: causal attention over a local window (Mistral-style) with
  a padding mask.
"""
from __future__ import annotations

import math

VOCAB, WIDTH, HEADS = 50, 32, 4


def _attention(q, k, v, bias):
    """softmax(q k^T / sqrt(d) + bias) v over [batch, heads, seq, head_dim]."""
    import torch
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1]) + bias
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def _heads(x, heads):
    batch, seq, width = x.shape
    return x.view(batch, seq, heads, width // heads).transpose(1, 2)


def _merge(x):
    batch, heads, seq, dim = x.shape
    return x.transpose(1, 2).reshape(batch, seq, heads * dim)


def _seed():
    import torch
    torch.manual_seed(0)
    return torch


def alibi():
    torch = _seed()

    class Alibi(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(VOCAB, WIDTH)
            self.qkv = torch.nn.Linear(WIDTH, 3 * WIDTH)
            self.out = torch.nn.Linear(WIDTH, WIDTH)
            slopes = torch.tensor([2.0 ** (-8 * (i + 1) / HEADS) for i in range(HEADS)])
            self.register_buffer("slopes", slopes)

        def forward(self, input_ids, attention_mask):
            batch, seq = input_ids.shape
            x = self.embed(input_ids)
            # BLOOM: positions from the mask, times one slope per head
            positions = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
            bias = self.slopes[..., None] * positions.to(x.dtype)       # [batch, heads, seq]
            bias = bias.reshape(batch * HEADS, 1, seq).view(batch, HEADS, 1, seq)
            padding = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -1e4
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            y = _attention(_heads(q, HEADS), _heads(k, HEADS), _heads(v, HEADS),
                           bias + padding)
            return self.out(_merge(y))

    return Alibi().eval()


def frames_linear():
    torch = _seed()
    return torch.nn.Sequential(
        torch.nn.Linear(128, 64), torch.nn.GELU(), torch.nn.LayerNorm(64),
        torch.nn.Linear(64, 32)).eval()


def window_attention():
    torch = _seed()
    window = 4

    class WindowAttention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.patches = torch.nn.Conv2d(3, WIDTH, 2, stride=2)
            self.qkv = torch.nn.Linear(WIDTH, 3 * WIDTH)
            self.out = torch.nn.Linear(WIDTH, WIDTH)

        def forward(self, pixels):
            x = self.patches(pixels).permute(0, 2, 3, 1)                   # [b, h, w, c]
            batch, height, width, channels = x.shape
            x = x.view(batch, height // window, window, width // window, window, channels)
            windows = x.permute(0, 1, 3, 2, 4, 5).reshape(-1, window * window, channels)
            q, k, v = self.qkv(windows).chunk(3, dim=-1)
            y = _merge(_attention(_heads(q, HEADS), _heads(k, HEADS), _heads(v, HEADS), 0.0))
            y = self.out(y).view(batch, height // window, width // window, window, window,
                                 channels)
            return y.permute(0, 1, 3, 2, 4, 5).reshape(batch, height, width, channels)

    return WindowAttention().eval()


def _block(torch):
    """A pre-norm transformer block taking an additive attention bias."""
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.LayerNorm(WIDTH)
            self.qkv = torch.nn.Linear(WIDTH, 3 * WIDTH)
            self.out = torch.nn.Linear(WIDTH, WIDTH)

        def forward(self, x, bias):
            q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
            y = _attention(_heads(q, HEADS), _heads(k, HEADS), _heads(v, HEADS), bias)
            return x + self.out(_merge(y))
    return Block()


def pooled_sequence():
    torch = _seed()

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(VOCAB, WIDTH)
            self.first = _block(torch)
            self.second = _block(torch)

        @staticmethod
        def pool(x):
            """Funnel: keep the class token, average the rest in pairs (an odd
            last token dropped: x2 converts ceil_mode only at static sizes)."""
            rest = torch.nn.functional.avg_pool1d(x[:, 1:].transpose(1, 2), 2, 2).transpose(1, 2)
            return torch.cat([x[:, :1], rest], dim=1)

        def forward(self, input_ids, attention_mask):
            mask = attention_mask.to(torch.float32)
            x = self.first(self.embed(input_ids), (1.0 - mask[:, None, None, :]) * -1e4)
            x = self.pool(x)
            pooled_mask = self.pool(mask[:, :, None])[:, :, 0]
            return self.second(x, (1.0 - pooled_mask[:, None, None, :]) * -1e4)

    return Pooled().eval()


def moe_routing():
    torch = _seed()
    experts, top, hidden = 4, 2, 16

    class Routing(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.router = torch.nn.Linear(WIDTH, experts, bias=False)
            self.up = torch.nn.Parameter(torch.randn(experts, WIDTH, hidden) * 0.2)
            self.down = torch.nn.Parameter(torch.randn(experts, hidden, WIDTH) * 0.2)

        def forward(self, x):
            batch, seq, width = x.shape
            tokens = x.reshape(-1, width)
            weights, chosen = torch.topk(torch.softmax(self.router(tokens), -1), top, dim=-1)
            flat = chosen.reshape(-1)
            order = torch.argsort(flat, stable=True)
            expert = torch.index_select(flat, 0, order)
            taken = torch.index_select(tokens, 0, torch.div(order, top, rounding_mode="floor"))
            h = torch.nn.functional.gelu(torch.bmm(taken[:, None], self.up[expert]))
            y = torch.bmm(h, self.down[expert])[:, 0]
            y = torch.index_select(y, 0, torch.argsort(order))        # back in token order
            y = (y.view(-1, top, width) * weights[..., None]).sum(1)
            return y.view(batch, seq, width)

    return Routing().eval()


def sliding_window():
    torch = _seed()
    window = 3

    class SlidingWindow(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(VOCAB, WIDTH)
            self.blocks = torch.nn.ModuleList([_block(torch), _block(torch)])

        def forward(self, input_ids, attention_mask):
            seq = input_ids.shape[1]
            i = torch.arange(seq)[:, None]
            j = torch.arange(seq)[None, :]
            local = (j <= i) & (i - j < window)
            allowed = local[None, None] & attention_mask[:, None, None, :].bool()
            bias = torch.zeros(allowed.shape, dtype=torch.float32).masked_fill(
                ~allowed, torch.finfo(torch.float32).min)
            x = self.embed(input_ids)
            for block in self.blocks:
                x = block(x, bias)
            return x

    return SlidingWindow().eval()
