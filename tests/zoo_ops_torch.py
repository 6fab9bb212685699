"""Small PyTorch models for the ops issue 15's model zoo found unmapped
(tests/test_zoo_ops.py): comparisons, bitwise ops, gather, cumsum, pooling in
ceil_mode and with dilation, adaptive pooling with uneven bins."""
from __future__ import annotations

import torch
from torch import nn

F = nn.functional


class Masks(nn.Module):
    """Comparisons (Tensor and Scalar overloads), bitwise ops on masks,
    gather and cumsum, as attention-mask and position-id code uses them."""

    def forward(self, x):  # [2, 4, 8]
        a = (x > 0.1) & (x < 0.9)
        b = (x >= x.mean(-1, keepdim=True)) | (x <= -0.5)
        c = (x != 0.3) ^ (x == x.amax(-1, keepdim=True))
        d = ~(x > 0)
        e = (x.ge(0.2) & x.le(x.mean(0, keepdim=True))) | x.gt(x.mean(1, keepdim=True) + 1) | x.lt(-1.0) | x.ne(x) | x.eq(0.5)
        mask = a.float() + 2 * b.float() + 4 * c.float() + 8 * d.float() + 16 * e.float()
        picked = torch.gather(x, 1, x.argmax(1, keepdim=True).expand(-1, -1, 8))
        positions = torch.cumsum(a.long(), dim=-1)
        # An index smaller than x in the other dims reads only x's leading part.
        corner = torch.gather(x, 2, (x[:1, :3, :5].abs() * 10).long() % 8)
        return mask * x, picked * 3 + torch.cumsum(x, dim=1), positions, corner


class Pools(nn.Module):
    def forward(self, x):  # [2, 3, 13, 11]
        return (F.max_pool2d(x, 3, 2, ceil_mode=True),
                F.max_pool2d(x, 3, 1, padding=1, dilation=2),
                F.avg_pool2d(x, 3, 2, ceil_mode=True),
                F.adaptive_avg_pool2d(x, (3, 5)),
                F.max_pool3d(x.unsqueeze(1), 2, 2, ceil_mode=True),
                F.avg_pool3d(x.unsqueeze(1), (2, 3, 2), (1, 2, 2), padding=(1, 1, 0)),
                F.max_pool1d(x[:, 0], 3, 2, ceil_mode=True), F.avg_pool1d(x[:, 1], 3, 2, padding=1),
                # windows wider than the input (HF EfficientNet's pooler): ceil_mode's
                # end padding must stay smaller than the kernel for ONNX Runtime
                F.avg_pool2d(x, 20, ceil_mode=True), F.max_pool2d(x, 16, ceil_mode=True))


def masks():
    return Masks().eval()


def pools():
    return Pools().eval()


class Window(nn.Module):
    """A Kaiser window from arange, sqrt and the Bessel function i0 (i0 has no
    mapper: the constant-only subgraph is folded with torch)."""

    def forward(self, x):  # [2, 8]
        n = torch.arange(8, dtype=torch.float32)
        beta = 4.0
        ratio = 2 * n / 7 - 1
        return x * torch.i0(beta * torch.sqrt(1 - ratio * ratio)) / torch.i0(torch.tensor(beta))


class WindowOfInput(Window):
    """i0 of the constant window folds; i0 of the input has no mapper."""

    def forward(self, x):
        return super().forward(x) + torch.i0(x)


def window():
    return Window().eval()


def window_of_input():
    return WindowOfInput().eval()


class Convs(nn.Module):
    """Conv1d, ConvTranspose1d/2d (output_padding), Conv3d (strided, padded, grouped)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.c1 = nn.Conv1d(3, 4, 3, stride=2, padding=1)
        self.t1 = nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1)
        self.t2 = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
        self.c3 = nn.Conv3d(2, 4, (2, 3, 3), stride=(1, 2, 1), padding=(1, 1, 0), groups=2)

    def forward(self, a, x, v):  # [2, 3, 16], [2, 3, 6, 6], [2, 2, 5, 8, 7]
        return self.t1(torch.relu(self.c1(a))), self.t2(x), self.c3(v)


def convs():
    return Convs().eval()


class AdvancedIndex(nn.Module):
    """x[i, j] with several index tensors: adjacent (the broadcast index shape
    stays in place), separated by a slice (it goes first), negative indices,
    and a constant pair as attention-mask code builds (mask[batch, kv]); and
    F.pad with a constant (EfficientNet's "same" padding)."""

    def forward(self, x):  # [2, 5, 6]
        rows = (x[:, :, 0] > 0).long().cumsum(-1) % 5          # [2, 5], data dependent
        batch = torch.arange(2).unsqueeze(-1)                   # [2, 1]
        picked = x[batch, rows]                                 # [2, 5, 6]
        corners = x[torch.tensor([0, -1]), :, torch.tensor([-1, 2])]   # [2, 5]
        pairs = x[:, torch.tensor([[0, 4], [1, 3]]), torch.tensor([5, -2])]  # [2, 2, 2]
        padded = F.pad(x, (1, 2, 0, 3), value=-0.5)             # constant_pad_nd
        return picked * 2, corners, pairs, padded


def advanced_index():
    return AdvancedIndex().eval()


class AttentionView(nn.Module):
    """GPT-2's attention output: scaled_dot_product_attention, transpose,
    reshape, a `.contiguous()` that torch.export drops (a no-op at capture)
    and a `view`, which fails once SDPA is decomposed to another layout
    (pytorch/pytorch#136543) unless x2 reads it as a reshape."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.proj = nn.Linear(16, 16)

    def forward(self, x):  # [2, 8, 16]
        q = k = v = x.view(2, 8, 2, 8).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k * 0.5, v, is_causal=True)
        o = o.transpose(1, 2).reshape(2, 8, -1).contiguous()
        return self.proj(o.view(-1, o.size(-1))).view(2, 8, 16)


def attention_view():
    return AttentionView().eval()


class Strided(nn.Module):
    """as_strided read as reshape/slice/transpose/expand: an offset window
    whose last row ends past the input (the tail is padded, never read),
    every other element, a transposed read, a broadcast (stride 0), a read of
    a permuted (dense, non-contiguous) tensor, and the restride of 1x1 dims
    that decomposed adaptive_avg_pool1d makes (Swin's pooler)."""

    def forward(self, x):  # [3, 4, 6]
        y = x * 2
        return (y.as_strided([3, 2, 5], [24, 6, 1], 7),
                y.as_strided([6, 6], [12, 2]),
                y.as_strided([5, 4], [1, 6], 2),
                y.as_strided([2, 3, 6], [24, 0, 1]),
                y.permute(2, 0, 1).as_strided([4, 9], [1, 4]),
                F.adaptive_avg_pool1d(x.transpose(1, 2), 1))


class OverlappingWindows(nn.Module):
    """as_strided to overlapping windows (unfold-like): not a reshape."""

    def forward(self, x):  # [2, 8]
        return x.as_strided([2, 3, 4], [8, 2, 1]) * 2


def strided():
    return Strided().eval()


def overlapping_windows():
    return OverlappingWindows().eval()


class Norms(nn.Module):
    """linalg_vector_norm of activations for each order x2 spells differently:
    2 (F.normalize, Tensor.norm), 1, inf, -inf, 0, 3 and 0.5; over one dim,
    several dims, keepdim, and every dim."""

    def forward(self, x):  # [2, 3, 8]
        vn = torch.linalg.vector_norm
        return (F.normalize(x, dim=-1), x.norm(dim=1, keepdim=True),
                vn(x, 1, dim=(0, 2)), vn(x, float("inf"), dim=-1), vn(x, float("-inf"), dim=1),
                vn(torch.relu(x), 0, dim=-1), vn(x, 3, dim=-1, keepdim=True), vn(x, 0.5, dim=0),
                vn(x))


def norms():
    return Norms().eval()
