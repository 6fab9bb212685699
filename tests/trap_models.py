"""Seeded torch models built to catch a mapping that differs from the source
only on particular values (tests/test_verify.py): each must convert right on
every target or be refused with a reason, never be written wrong."""
from __future__ import annotations

import torch
from torch import nn

VOCAB, PAD = 50, 3


class PaddedEmbedding(nn.Module):
    """A decoder-style stack over an embedding whose padding_idx row was
    trained (the pad id set to a real token after pre-training): torch's
    padding_idx only stops that row's gradient, its forward returns the row."""

    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, 16, padding_idx=PAD)
        self.proj = nn.Linear(16, 16)
        self.lm_head = nn.Linear(16, VOCAB)

    def forward(self, input_ids, attention_mask):
        hidden = self.embed_tokens(input_ids) * attention_mask.unsqueeze(-1).to(torch.float32)
        return self.lm_head(torch.tanh(self.proj(hidden)))


def padded_embedding():
    torch.manual_seed(0)
    model = PaddedEmbedding().eval()
    with torch.no_grad():  # a trained pad row: nothing like zeros
        model.embed_tokens.weight[PAD] = torch.randn(16) * 3
    return model


class EdgeValues(nn.Module):
    """Values a kernel may treat differently from torch: NaN and inf made from
    ordinary inputs, a fully masked softmax row, floor division and modulo of
    negatives, int * float promotion, ties in argmax, negative indices, a sum
    over an empty slice."""

    def forward(self, x):
        # +inf where x > 1, NaN where x < -1 (log of a negative), else finite.
        edges = torch.where(x > 1.0, torch.full_like(x, float("inf")), torch.log(x + 1.0))
        # Row 0 of the scores fully masked: torch's softmax gives NaN there.
        scores = x.masked_fill(torch.arange(x.shape[0]).unsqueeze(1) == 0, float("-inf"))
        masked = torch.softmax(scores, dim=-1)
        ints = torch.floor(x * 7).to(torch.int64)
        floor_div = torch.div(ints, 3, rounding_mode="floor")
        modulo = torch.remainder(ints, 4)
        promoted = ints * 0.5
        # Ties: floored values repeat, argmax must pick torch's first maximum.
        ties = torch.argmax(torch.floor(x * 0.5), dim=-1)
        last = x[:, -1] - x[:, -2]
        # An empty slice reduced: the sum of nothing is 0 (added to a row sum,
        # so that the output still depends on the input).
        empty_sum = x.sum(dim=-1) + x[:, :0].sum(dim=-1)
        return edges, masked, floor_div, modulo, promoted, ties, last, empty_sum


def edge_values():
    return EdgeValues().eval()


class TopkTies(nn.Module):
    """Top-k over tied values (routing scores rounded to a grid): which of the
    tied indices comes first is torch's own choice, which no target repeats."""

    def forward(self, x):
        return torch.topk(torch.floor(x), 2, dim=-1)


class BigIndexMath(nn.Module):
    """Index arithmetic that overflows int32 but not int64 (a hash of token
    ids, as n-gram and hashing embeddings compute it)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.table = nn.Embedding(97, 8)

    def forward(self, input_ids):
        hashed = (input_ids * 2_654_435_761 + 40_503) % 97
        return self.table(hashed), hashed
