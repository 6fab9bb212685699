"""PyTorch test models with fixed seeds, loaded by x2 through module specs
(`tests/torch_models.py:resnet`). BatchNorm layers get random running stats
so that eval-mode outputs depend on them and parity means something."""
from __future__ import annotations

import torch
from torch import nn


def _randomize_bn(model: nn.Module) -> nn.Module:
    gen = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm, nn.InstanceNorm2d)) \
                and m.weight is not None:
            m.weight.data = torch.rand(m.weight.shape, generator=gen) + 0.5
            m.bias.data = torch.randn(m.bias.shape, generator=gen) * 0.1
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean = torch.randn(m.running_mean.shape, generator=gen) * 0.1
            m.running_var = torch.rand(m.running_var.shape, generator=gen) + 0.5
    return model.eval()


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False, groups=2)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNetish(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 5, 2, 2), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.layer1 = Block(16, 16, 1)
        self.layer2 = Block(16, 32, 2)
        self.dil = nn.Conv2d(32, 32, 3, padding=2, dilation=2)
        self.gn = nn.GroupNorm(4, 32)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        x = nn.functional.hardswish(self.gn(self.dil(x)))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(nn.functional.dropout(x, 0.2, self.training))


class Encoder(nn.Module):
    """Token embedding + learned positions + two encoder layers + mean pooling."""

    def __init__(self, vocab=50, dim=32, heads=4, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, 16, dim) * 0.1)
        layer = nn.TransformerEncoderLayer(dim, heads, 64, dropout=0.1, batch_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, :tokens.shape[1]]
        x = self.norm(self.encoder(x))
        return torch.log_softmax(self.head(x.mean(dim=1)), dim=-1)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 64), nn.SiLU(),
                                 nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 8))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1) * 10 + torch.sigmoid(self.net[0](x)).sum(-1,
                                                                                   keepdim=True)


def resnet():
    torch.manual_seed(0)
    return _randomize_bn(ResNetish())


def encoder():
    torch.manual_seed(0)
    return _randomize_bn(Encoder())


def mlp():
    torch.manual_seed(0)
    return MLP().eval()


def mlp_bf16():
    """mlp() with every weight in bfloat16, as a half-precision checkpoint holds it."""
    return mlp().to(torch.bfloat16)


class Norms(nn.Module):
    """GroupNorm and an affine InstanceNorm2d, each one layer with learned weights."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.inorm = nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        return self.inorm(torch.relu(self.gn(self.conv(x))))


def norms():
    torch.manual_seed(0)
    return _randomize_bn(Norms())


def dropout_mlp():
    """An MLP with nn.Dropout(0.1) between its layers (eval mode). Softsign has no
    mapper: the program is decomposed, which turns eval-mode dropout into a clone."""
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.Softsign(), nn.Dropout(0.1), nn.Linear(32, 4)).eval()


class Unsupported(nn.Module):
    """Two ops no mapper handles (cumprod twice, kthvalue once) for the error test."""

    def forward(self, x):
        return torch.cumprod(x, 1) + torch.cumprod(x, 0) + torch.kthvalue(x, 2, 1).values[:, None]


def unsupported():
    return Unsupported().eval()


class TokenEncoder(nn.Module):
    """Shaped like a Hugging Face model: every forward() argument defaults to
    None, token ids index an embedding of 50 rows, and the result is a dict."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.proj = nn.Linear(16, 16)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None,
                output_attentions=None):
        hidden = self.embed(input_ids)
        if token_type_ids is not None:
            hidden = hidden + token_type_ids.unsqueeze(-1).float()
        hidden = torch.tanh(self.proj(hidden)) * attention_mask.unsqueeze(-1).float()
        return {"last_hidden_state": hidden, "pooler_output": hidden.sum(1)}


def token_encoder():
    torch.manual_seed(0)
    return TokenEncoder().eval()


class Overflow(nn.Module):
    """Activations beyond fp16's range (65504) in the middle, back in range at the end."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        big = self.fc(x) * 3e5 + 1e5
        return torch.tanh(big * 1e-5 - 1.0)


def overflow():
    torch.manual_seed(0)
    return Overflow().eval()


class AlibiScores(nn.Module):
    """ALiBi-style attention scores: float32 activations meet int64 positions
    (a tensor, a 0-d tensor and Python scalars). torch keeps float32
    throughout, where numpy's rule would widen to float64; `rel / 3` is
    true division of ints."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.register_buffer("slopes", torch.tensor([0.5, 0.25]))

    def forward(self, x):
        positions = torch.arange(x.shape[1])
        rel = positions[None, :] - positions[:, None]                 # int64 [s, s]
        scores = self.proj(x) @ x.transpose(1, 2)                     # float32 [b, s, s]
        scores = scores + rel * self.slopes[0] - rel / 3
        scores = scores * torch.tensor(2, dtype=torch.int64) + (rel > 0) * 0.5
        return torch.softmax(scores - rel.abs(), dim=-1)


def alibi_scores():
    torch.manual_seed(0)
    return AlibiScores().eval()
