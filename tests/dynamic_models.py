"""Models with dynamic dims, built in a subprocess: python dynamic_models.py KIND OUT.

gpt2_legacy / gpt2_dynamo: a tiny random-weight GPT-2 (logits) exported to
ONNX with a dynamic batch and sequence by torch.onnx's TorchScript exporter
(dynamic_axes) and by its dynamo exporter (dynamic_shapes), as every exported
language model is. yolo_onnx: a YOLOv8-style head whose grid comes from the
feature map's computed height and width (Shape, Range, Expand).
gpt2_with_past_legacy / gpt2_with_past_dynamo: the same GPT-2 with its cache
at the interface (past keys/values in, present ones out), as exported
decoders for generation are."""
import sys

EXAMPLE_SEQ = 13


def _gpt2(**config):
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.GPT2Config(**{**dict(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                               n_positions=64), **config})
    model = transformers.GPT2LMHeadModel(config).eval()

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              use_cache=False).logits

    # An example length no size of the net shares: a test finds it if baked in.
    ids = torch.randint(0, 100, (2, EXAMPLE_SEQ))
    return Logits(), (ids, torch.ones(2, EXAMPLE_SEQ, dtype=torch.long))


def gpt2_legacy(out: str) -> None:
    import torch
    model, args = _gpt2()
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(model, args, out, input_names=["input_ids", "attention_mask"],
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": axes, "attention_mask": axes, "logits": axes})


def gpt2_dynamo(out: str) -> None:
    import torch
    model, args = _gpt2()
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=64)
    dims = {0: batch, 1: seq}
    torch.onnx.export(model, args, out, input_names=["input_ids", "attention_mask"],
                      output_names=["logits"], opset_version=18, dynamo=True,
                      dynamic_shapes={"input_ids": dims, "attention_mask": dims})


# A decoder with its cache at the interface, named as optimum's ONNX exports
# name it: past keys/values in, present ones out (dim 2: the cached length).
PAST_LAYERS = 2
PAST_INPUTS = [f"past_key_values.{i}.{kv}" for i in range(PAST_LAYERS) for kv in ("key", "value")]
PRESENT_OUTPUTS = [f"present.{i}.{kv}" for i in range(PAST_LAYERS) for kv in ("key", "value")]


# GPT-2 small's width (768, 12 heads) at 4 layers: per-op costs of a real model.
WIDE = dict(n_layer=4, n_embd=768, n_head=12, vocab_size=8192, n_positions=1024)


def _gpt2_with_past(**config):
    """The tiny GPT-2 (or one of `config`) as one decoding step with its cache
    (x2 convert --with-cache's module): (step, example, past input names)."""
    return _with_past(_gpt2(**config)[0].model)


def _with_past(lm):
    from x2.frontends.torch.cache import input_names, step_with_example
    step, example = step_with_example(lm)
    return step, example, input_names(lm)[3:]


# A Llama at GPT-2 small's width (768, 12 heads) and 4 layers, vocabulary 8192:
# the architecture PaddleFormers ports by hand, for the generation benchmark.
LLAMA_WIDE = dict(hidden_size=768, intermediate_size=2048, num_hidden_layers=4,
                  num_attention_heads=12, num_key_value_heads=12, vocab_size=8192,
                  max_position_embeddings=1024)


def llama_wide_lm():
    """The wide Llama as transformers' causal LM (random weights)."""
    import torch
    import transformers
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**LLAMA_WIDE)).eval()


def qwen2_05b_lm():
    """A Qwen2-0.5B-shaped causal LM (tools/llm_memory.py's shape, random
    weights, 1.84 GiB): the generation benchmark's large size."""
    import importlib.util
    from pathlib import Path
    import torch
    import transformers
    spec = importlib.util.spec_from_file_location(
        "llm_memory", Path(__file__).resolve().parent.parent / "tools" / "llm_memory.py")
    llm_memory = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(llm_memory)
    torch.manual_seed(0)
    config = transformers.Qwen2Config(max_position_embeddings=32768, rope_theta=1e6,
                                      tie_word_embeddings=True, **llm_memory.SIZES["0.5b"])
    return transformers.Qwen2ForCausalLM(config).eval()


def gpt2_with_past_legacy(out: str, **config) -> None:
    with_past_legacy(out, _gpt2_with_past(**config))


def with_past_legacy(out: str, with_past) -> None:
    import torch
    model, example, past = with_past
    present = [n.replace("past_key_values", "present") for n in past]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
            "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"},
            **{n: {0: "batch", 2: "past"} for n in past},
            **{n: {0: "batch", 2: "total"} for n in present}}
    torch.onnx.export(model, example, out, dynamo=False, opset_version=17,
                      input_names=["input_ids", "attention_mask", "position_ids", *past],
                      output_names=["logits", *present], dynamic_axes=axes)


def gpt2_with_past_dynamo(out: str, **config) -> None:
    with_past_dynamo(out, _gpt2_with_past(**config))


def with_past_dynamo(out: str, with_past) -> None:
    import torch
    model, example, past_inputs = with_past
    batch, seq = torch.export.Dim("batch", max=64), torch.export.Dim("seq", max=64)
    past, total = torch.export.Dim("past", max=64), torch.export.Dim("total", max=128)
    cached = {0: batch, 2: past}
    program = torch.onnx.export(
        model, example, dynamo=True, opset_version=18,
        input_names=["input_ids", "attention_mask", "position_ids", *past_inputs],
        output_names=["logits", *[n.replace("past_key_values", "present")
                                  for n in past_inputs]],
        dynamic_shapes=({0: batch, 1: seq}, {0: batch, 1: total}, {0: batch, 1: seq},
                        (cached,) * len(past_inputs)))  # forward(..., *past): one tuple
    program.save(out)


def fully_convolutional_cnn():
    """A torch CNN that takes any batch and image size (factory for --from torch)."""
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3, stride=2, padding=1), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten())
    with torch.no_grad():  # BatchNorm statistics that respond to data
        net[1].running_mean.uniform_(-0.5, 0.5)
        net[1].running_var.uniform_(0.5, 1.5)
    return net.eval()


def gpt2_logits():
    """The tiny random-weight GPT-2 of the ONNX exports, as a torch module."""
    return _gpt2()[0]


def gpt2_lm():
    """The tiny GPT-2 as transformers' causal LM itself (x2 convert --with-cache)."""
    return _gpt2()[0].model


def gpt2_wide_lm():
    """The wide GPT-2 as transformers' causal LM (x2 convert --with-cache)."""
    return _gpt2(**WIDE)[0].model


def gpt2_wide_logits():
    """GPT-2 small's width (768, 12 heads) at 4 layers and an 8192-token
    vocabulary: per-op costs of a real model, for benchmarks (random weights)."""
    return _gpt2(**WIDE)[0]


def yolo_head():
    """A YOLOv8-style detection head on a feature map of any size: a 1x1 conv
    predicts box offsets and class scores per cell, decoded against a grid
    built from the map's own height and width (arange, meshgrid, expand)."""
    import torch
    torch.manual_seed(0)

    class Head(torch.nn.Module):
        def __init__(self, channels=8, classes=3, stride=8):
            super().__init__()
            self.predict = torch.nn.Conv2d(channels, 4 + classes, 1)
            self.stride = stride

        def forward(self, features):
            n, _, h, w = features.shape
            out = self.predict(features).flatten(2).transpose(1, 2)   # [n, h*w, 4+classes]
            ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
            grid = torch.stack([xs, ys], -1).reshape(1, h * w, 2).to(out.dtype)
            grid = grid.expand(n, h * w, 2)
            centers = (out[..., :2].sigmoid() * 2 - 0.5 + grid) * self.stride
            sizes = out[..., 2:4].exp() * self.stride
            return torch.cat([centers, sizes, out[..., 4:].sigmoid()], -1)

    return Head().eval()


def yolo_onnx(out: str) -> None:
    import torch
    axes = {0: "batch", 2: "height", 3: "width"}
    torch.onnx.export(yolo_head(), (torch.randn(2, 8, 12, 20),), out, input_names=["features"],
                      output_names=["boxes"], opset_version=17, dynamo=False,
                      dynamic_axes={"features": axes, "boxes": {0: "batch", 1: "cells"}})


def end_tokens():
    """The first and the last position of a sequence of any length (BERT's
    pooler reads x[:, 0], a decoder's last logits x[:, -1])."""
    import torch

    class EndTokens(torch.nn.Module):
        def forward(self, x):
            return x[:, 0] * 2 + x[:, -1]

    return EndTokens()


def frame_pairs():
    """Groups a signal of any even length into frames of two (a size computed
    by floor division, as audio front ends compute their output lengths)."""
    import torch

    class FramePairs(torch.nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0], x.shape[1] // 2, 2).sum(-1) * 0.5

    return FramePairs()


def interpolate_by_a_fraction():
    """Resizes an image of any size by 1.5: torch rounds the output size, which
    x2 does not yet compute at run time."""
    import torch

    class Resize(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.interpolate(x, scale_factor=1.5, mode="nearest")

    return Resize()


def tiny_bert():
    """A random-weight Hugging Face BERT returning its hidden states."""
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=37,
                                     max_position_embeddings=64)
    bert = transformers.BertModel(config).eval()

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    return Hidden().eval()


if __name__ == "__main__":
    {"gpt2_legacy": gpt2_legacy, "gpt2_dynamo": gpt2_dynamo,
     "gpt2_with_past_legacy": gpt2_with_past_legacy,
     "gpt2_with_past_dynamo": gpt2_with_past_dynamo,
     "gpt2_wide_with_past_legacy": lambda out: gpt2_with_past_legacy(out, **WIDE),
     "gpt2_wide_with_past_dynamo": lambda out: gpt2_with_past_dynamo(out, **WIDE),
     "llama_wide_with_past_legacy": lambda out: with_past_legacy(
         out, _with_past(llama_wide_lm())),
     "llama_wide_with_past_dynamo": lambda out: with_past_dynamo(
         out, _with_past(llama_wide_lm())),
     "qwen2_05b_with_past_legacy": lambda out: with_past_legacy(
         out, _with_past(qwen2_05b_lm())),
     "qwen2_05b_with_past_dynamo": lambda out: with_past_dynamo(
         out, _with_past(qwen2_05b_lm())),
     "yolo_onnx": yolo_onnx}[sys.argv[1]](sys.argv[2])


def deepseek_v3_lm():
    """A tiny random-weight DeepseekV3 causal LM (multi-head latent attention:
    its cache holds keys and values of different sizes; dense layers, as
    the routed experts only cost capture time) for x2 convert --with-cache."""
    import torch
    import transformers
    torch.manual_seed(0)
    config = transformers.DeepseekV3Config(
        vocab_size=64, hidden_size=32, intermediate_size=48, moe_intermediate_size=16,
        num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, q_lora_rank=16,
        kv_lora_rank=8, qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=6,
        n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1, first_k_dense_replace=2,
        n_group=1, topk_group=1, max_position_embeddings=64)
    return transformers.DeepseekV3ForCausalLM(config).eval()
