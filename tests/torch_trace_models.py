"""Modules for tests/test_torch_trace.py: which ones x2 captures with
torch.jit.trace and which it must hand to torch.export. Imported only by
torch worker processes."""
import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)


def _randomize_bn(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    return model.eval()


def inplace_cnn():
    """Conv + BN + in-place ReLU: the in-place op writes a fresh result only."""
    return _randomize_bn(nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)))


class Block(nn.Module):
    """Attention with shapes computed in forward (b, s, d = x.shape) and unbind."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d), nn.SiLU())

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(b, s, 3, self.heads, d // self.heads) \
            .permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v)
        x = x + self.out(a.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.norm2(x))


def block():
    return Block().eval()


class TiedHeads(nn.Module):
    """A tied embedding/output weight and a dict result."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.proj = nn.Linear(16, 50, bias=False)
        self.proj.weight = self.embed.weight

    def forward(self, ids):
        hidden = torch.tanh(self.embed(ids))
        return {"logits": self.proj(hidden), "hidden": hidden}


def tied_heads():
    return TiedHeads().eval()


class ReadBeforeWrite(nn.Module):
    """A value read, then written in place: the trace's in-place op is not its
    functional twin, torch.export's functional graph says which read saw what."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        doubled = h * 2.0
        h.add_(1.0)
        return doubled + h


def read_before_write():
    return ReadBeforeWrite().eval()


class Branches(nn.Module):
    """A branch on a tensor's value: a trace would keep one path."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: self.fc(t), lambda t: -t, (x,))


def branches():
    return Branches().eval()
