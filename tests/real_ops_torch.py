"""Small PyTorch modules for the ops real models still missed (issue 31):
mixture-of-experts routing, in-place writes, sorting and counting,
rounding divisions, bilinear upsampling (tests/test_real_ops.py).
Every module is random-weight with a fixed seed."""
from __future__ import annotations

import torch
from torch import nn

F = nn.functional


class TopTwoExperts(nn.Module):
    """A top-2 mixture-of-experts layer written by hand: topk of the gate's
    logits, their softmax scattered into a dense [tokens, experts] table
    (scatter_add), each expert's output weighted by its column."""

    def __init__(self, width=8, experts=4):
        super().__init__()
        torch.manual_seed(0)
        self.gate = nn.Linear(width, experts)
        self.experts = nn.ModuleList(nn.Linear(width, width) for _ in range(experts))

    def forward(self, x):  # [tokens, width]
        weights, chosen = torch.topk(self.gate(x), 2, dim=-1)
        dense = torch.zeros(x.shape[0], len(self.experts)).scatter_add(
            1, chosen, weights.softmax(-1))
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            out = out + dense[:, e:e + 1] * expert(x)
        smallest, where = torch.topk(x, 3, dim=0, largest=False)
        return out, chosen, smallest, where


class Arithmetic(nn.Module):
    """repeat, log1p (tiny arguments included, where log(1 + x) loses them),
    floor division and remainder by one divisor (divmod, as index code
    writes it) of floats and of ints, trunc division, a computed divisor.
    Each dividend is divided by one divisor: Paddle Inference's default
    (oneDNN) config gives x / a and x / b one result (paddle 3.3)."""

    def forward(self, x):  # [2, 3, 4]
        ints = (x * 10).long()
        tiny = x * 1e-6
        y = x * 10
        return (x.repeat(2, 1, 3), x.repeat(1, 1, 2, 2), torch.log1p(x.abs()),
                torch.log1p(tiny) * 1e6,
                torch.div(y, 3, rounding_mode="floor"), torch.remainder(y, 3),
                torch.div(x * 7, -3, rounding_mode="trunc"), (x * 5) % -3,
                torch.div(ints, 3, rounding_mode="floor"), ints % 3,
                torch.div(ints + 1, -4, rounding_mode="trunc"),
                torch.div(ints - 1, ints.abs() + 1, rounding_mode="floor"), (ints * 3) // 7)


class ReadAgain(nn.Module):
    """Ops Paddle Inference (paddle 3.3, default config) lets overwrite their
    input in place, each on a value that later ops read again or that the
    model returns: float divisions, rounding, cumsum, log, reciprocal, sin,
    erf, silu, tril, and integer arithmetic, reshapes and where."""

    def forward(self, x):  # [2, 3, 4]
        a = x.abs() * 10 + 1
        t = (x * 10).long()
        floats = (a / x, a // 3, a % 3, torch.floor(a), torch.ceil(a), torch.cumsum(a, 1),
                  torch.log(a), torch.reciprocal(a), torch.square(a), torch.sin(a),
                  torch.erf(a), F.silu(a), torch.tril(a), a + 1)
        ints = (t + 1, t * 3, t - (x > 0).long(), -t, t.abs(), t // 3, t % 3,
                t.reshape(6, 4), t.unsqueeze(0), torch.where(t > 0, t, -1), t)
        return floats + ints


class Broadcasts(nn.Module):
    """torch.where on operands of three shapes, as masks and padding make
    them (a row condition with a scalar, a key mask with one batch's values),
    and attention under a key mask that leaves some queries no key."""

    def forward(self, x):  # [batch, 3, 4]
        row = x[:, :, :1] > 0
        keys = x[:, :1, :] > -0.5
        first = x[:1].abs()
        heads = x.unsqueeze(1)
        seen = (x[:, None, None, :, 0] > -0.5) & row.unsqueeze(1)
        attended = F.scaled_dot_product_attention(heads, heads, heads, attn_mask=seen)
        return torch.where(row, 1.0, -x), torch.where(keys, first, x), attended


class ConvLeaky(nn.Module):
    """LeakyReLU after a convolution and after a depthwise one (slopes 0.1
    and 0.2), and on a value no convolution made."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)

    def forward(self, x):  # [batch, 3, 8, 8]
        y = F.leaky_relu(self.conv(x), 0.1)
        return F.leaky_relu(self.depthwise(y), 0.2), F.leaky_relu(x * 2, 0.3)


class ChannelsLastHead(nn.Module):
    """A ViT's patch tokens (conv, channels last, the two image dims merged,
    a class token before them) and a ConvNeXt's head (layer norm over the
    channels, mean over the image dims, layer norm): Paddle Inference fused
    the transpose with the reshape after it and the concat refused the
    result; its oneDNN pool of an NHWC tensor put the dims in another order."""

    def __init__(self):
        super().__init__()
        self.patches = nn.Conv2d(3, 8, 2, stride=2)
        self.class_token = nn.Parameter(torch.randn(1, 1, 8))
        self.stage = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.LayerNorm(8)
        self.head_norm = nn.LayerNorm(8)

    def forward(self, x):  # [batch, 3, 8, 8]
        patches = self.patches(x).permute(0, 2, 3, 1).reshape(x.shape[0], -1, 8)
        tokens = torch.cat([self.class_token.expand(x.shape[0], -1, -1), patches], dim=1)
        features = self.norm(self.stage(x).permute(0, 2, 3, 1))
        return tokens, self.head_norm(features.mean((1, 2)))


class WholeWindowPools(nn.Module):
    """transformers' EfficientNet head, AvgPool2d with a kernel larger than
    the map and ceil_mode (a mean); a max pool likewise (a max); an average
    over the whole padded map that counts its padding (not a mean)."""

    def forward(self, x):  # [batch, 3, 2, 3]
        mean = F.avg_pool2d(x, 16, ceil_mode=True)
        top = F.max_pool2d(x, 5, ceil_mode=True)
        padded = F.avg_pool2d(x, (4, 5), padding=(1, 2), count_include_pad=True)
        return mean, top, padded


class TanhGeluMLP(nn.Module):
    """GPT-2's MLP: linear, GELU in its tanh form, linear."""

    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(8, 32), nn.Linear(32, 8)

    def forward(self, x):  # [batch, seq, 8]
        return self.down(F.gelu(self.up(x), approximate="tanh"))


class Upsample(nn.Module):
    """F.interpolate bilinear by a factor and to a size with align_corners,
    nearest by a factor (upsample_*2d.vec)."""

    def forward(self, x):  # [2, 3, 5, 6]
        return (F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
                F.interpolate(x, size=(7, 9), mode="bilinear", align_corners=True),
                F.interpolate(x, scale_factor=3, mode="nearest"),
                nn.Upsample(size=(10, 12), mode="bilinear")(x))


class Writes(nn.Module):
    """Assignments into a copy: slices (step 1 and 2), one index, a
    broadcast value, index tensors on leading and on inner dims, `+=` at
    repeated indices, a boolean mask."""

    def forward(self, x):  # [4, 6, 5]
        a = x.clone()
        a[:, 2:4] = x[:, :2] * 2
        a[:, ::2, 1] = -1.0
        b = x.clone()
        b[1] = x[0] + x[2]
        b[:, :, 3] = 0.5
        c = x.clone()
        c[torch.tensor([0, 3, -1])] = x[:3] * 3
        c[:, torch.tensor([1, 4])] = x[:, :2] * -2
        d = x.clone()
        d.index_put_((torch.tensor([0, 2, 0]), torch.tensor([1, 1, 1])), x[0, :3] * 5,
                     accumulate=True)
        e = x.clone()
        e[x > 0.5] = 0.0
        f = torch.zeros(4, 6, 5).scatter(2, (x.abs() * 10).long() % 5, x)
        return a, b, c, d, e, f


class Sorting(nn.Module):
    """sort descending and ascending (stable), histc over a fixed range and
    over the data's range (min = max = 0), empty_like filled."""

    def forward(self, x):  # [3, 7]
        down, down_at = torch.sort(x, dim=-1, descending=True)
        up, up_at = torch.sort(x, dim=0, stable=True)
        fixed = torch.histc(x, bins=5, min=-1.5, max=1.5)
        data = torch.histc(x * 3, bins=4)
        scratch = torch.empty_like(x).fill_(2.0) + x
        return down, down_at, up, up_at, fixed * x.sum(), data * x.mean(), scratch


def top_two_experts():
    return TopTwoExperts().eval()


def arithmetic():
    return Arithmetic().eval()


def read_again():
    return ReadAgain().eval()


def broadcasts():
    return Broadcasts().eval()


def conv_leaky():
    torch.manual_seed(0)
    return ConvLeaky().eval()


def channels_last_head():
    torch.manual_seed(0)
    return ChannelsLastHead().eval()


def whole_window_pools():
    return WholeWindowPools().eval()


def tanh_gelu_mlp():
    torch.manual_seed(0)
    return TanhGeluMLP().eval()


def upsample():
    return Upsample().eval()


def writes():
    return Writes().eval()


def sorting():
    return Sorting().eval()


class CausalLogits(nn.Module):
    """A transformers causal LM's logits (use_cache=False)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits


def mixtral(experts_implementation: str = "grouped_mm"):
    """Mixtral from a tiny config (4 experts, top 2), random weights; on CPU
    transformers routes tokens with sort, histc and its grouped matmul."""
    from transformers import MixtralConfig, MixtralForCausalLM
    torch.manual_seed(0)
    config = MixtralConfig(vocab_size=128, hidden_size=32, intermediate_size=48,
                           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                           num_local_experts=4, num_experts_per_tok=2,
                           max_position_embeddings=64)
    config._experts_implementation = experts_implementation
    return CausalLogits(MixtralForCausalLM(config).eval()).eval()


def mixtral_batched():
    return mixtral("batched_mm")


def qwen2_moe():
    """Qwen2-MoE (routed experts plus a gated shared expert), tiny config."""
    from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM
    torch.manual_seed(0)
    config = Qwen2MoeConfig(vocab_size=128, hidden_size=32, intermediate_size=48,
                            moe_intermediate_size=24, shared_expert_intermediate_size=40,
                            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                            num_experts=4, num_experts_per_tok=2, max_position_embeddings=64)
    return CausalLogits(Qwen2MoeForCausalLM(config).eval()).eval()


class DataDependentBranch(nn.Module):
    def forward(self, x):  # [2, 4]
        if x.sum() > 0:
            return x * 2
        return x - 1


class LastByLength(nn.Module):
    """Each sequence's last valid step, picked by its length (lengths - 1):
    a length of 0 is out of range, so capture needs lengths of at least 1."""

    def forward(self, x, lengths):  # [3, 5, 4], [3]
        last = (lengths - 1).view(-1, 1, 1).expand(-1, 1, x.shape[2])
        return torch.gather(x, 1, last).squeeze(1) * 2


class SampleRate(nn.Module):
    """forward(x, sr: int): a Python branch on an int argument (Silero VAD's
    signature), fixed at conversion with --input-value."""

    def forward(self, x, sr: int):  # [2, 8]
        if sr == 16000:
            return torch.tanh(x) * (sr / 8000)
        return x.sum(-1)


def data_dependent_branch():
    return DataDependentBranch().eval()


def last_by_length():
    return LastByLength().eval()


def sample_rate():
    return SampleRate().eval()


class PackedLSTM(nn.Module):
    """An LSTM over sequences of different lengths, packed (unsorted batch)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.rnn = nn.LSTM(4, 6, batch_first=True)

    def forward(self, x, lengths):  # [3, 5, 4], [3]
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                   enforce_sorted=False)
        out, _ = self.rnn(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=True,
                                                total_length=x.shape[1])[0]


def packed_lstm():
    return PackedLSTM().eval()


if __name__ == "__main__":   # python real_ops_torch.py packed_lstm_onnx OUT.onnx
    import sys
    torch.onnx.export(packed_lstm(), (torch.randn(3, 5, 4), torch.tensor([5, 2, 4])),
                      sys.argv[2], input_names=["x", "lengths"], output_names=["out"],
                      dynamo=False, opset_version=17)
