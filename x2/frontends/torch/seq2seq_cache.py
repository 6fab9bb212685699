"""--with-cache --part encoder|decoder: a transformers encoder-decoder
(T5, BART, ...) read as the two models generation runs, their caches as
tensors named as optimum's ONNX exports name them (x2/ir/cache.py):

- `encoder`: the encoder and the first decoding step. input_ids and
  attention_mask [batch, source] in; the logits of the decoder's start
  token, then for every layer N `present.N.decoder.key/value` (the
  self-attention cache, one step long) and `present.N.encoder.key/value`
  (the cross-attention keys and values of the source, computed once).
- `decoder`: each later step. input_ids [batch, seq], encoder_attention_mask
  [batch, source] and every layer's `past_key_values.N.decoder.key/value`
  [batch, heads, past, dim] and `past_key_values.N.encoder.key/value`
  [batch, heads, source, dim] in; the logits and `present.N.decoder.key/value`
  out (the cross-attention cache does not change).

Splitting after the first step means neither model ever sees an empty cache
(Paddle Inference's oneDNN kernels crash on zero-length tensors). The
model's own EncoderDecoderCache is built from the tensors inside each step
and flattened back at its end. Runs in the torch worker."""
from __future__ import annotations

from ...errors import SelectionError

PARTS = ("encoder", "decoder")
# The example a part is captured at: 2 sources of 7 tokens, 3 new target
# tokens after 5 cached; sizes no config is likely to share.
BATCH, SOURCE, NEW, CACHED = 2, 7, 3, 5
EXAMPLES = {"batch": BATCH, "source": SOURCE, "seq": NEW, "past": CACHED}
# The decoder's sizes for convert's verify and x2 check (cache.DIM_SIZES),
# the source at three lengths besides.
DECODER_DIM_SIZES = {"seq": [NEW, 1, 4], "past": [CACHED, 7, 2], "source": [SOURCE, 3, 9]}


def is_encoder_decoder(model) -> bool:
    return bool(getattr(getattr(model, "config", None), "is_encoder_decoder", False))


def start_token(model) -> int | None:
    """The token the decoder starts from, where transformers' generate finds it."""
    for where in (model.config, getattr(model, "generation_config", None)):
        token = getattr(where, "decoder_start_token_id", None)
        if token is not None:
            return int(token)
    return None


def _config(model):
    config = model.config
    start = start_token(model)
    hidden = getattr(config, "d_model", None) or getattr(config, "hidden_size", None)
    if start is None or hidden is None or not hasattr(model, "get_encoder"):
        raise SelectionError(f"--with-cache: {type(model).__name__} is an encoder-decoder "
                             "without a decoder_start_token_id, d_model or encoder x2 can "
                             "find; give a transformers ...ForConditionalGeneration model")
    return config, start, int(hidden)


def _flatten(cache, cross: bool) -> list:
    """Each layer's self-attention key and value, then (cross) its
    cross-attention key and value."""
    layers = zip(cache.self_attention_cache.layers, cache.cross_attention_cache.layers)
    return [t for own, other in layers
            for t in (own.keys, own.values, *((other.keys, other.values) if cross else ()))]


def wrap(model, part: str):
    """The part as a module taking the interface's tensors in order."""
    import torch
    from transformers import DynamicCache, EncoderDecoderCache
    config, start, hidden = _config(model)

    class EncoderStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            first = torch.full((input_ids.shape[0], 1), start, dtype=input_ids.dtype)
            cache = EncoderDecoderCache(DynamicCache(config=config), DynamicCache(config=config))
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             decoder_input_ids=first, past_key_values=cache, use_cache=True)
            return (out.logits, *_flatten(out.past_key_values, cross=True))

    class DecoderStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, encoder_attention_mask, *past):
            pairs = [past[i:i + 2] for i in range(0, len(past), 2)]
            cache = EncoderDecoderCache(DynamicCache(pairs[0::2], config=config),
                                        DynamicCache(pairs[1::2], config=config))
            # The cross-attention cache is full, so the model never reads the
            # encoder's states: zeros of the right size stand in for them.
            states = torch.zeros(input_ids.shape[0], encoder_attention_mask.shape[1], hidden)
            out = self.model(encoder_outputs=(states,), attention_mask=encoder_attention_mask,
                             decoder_input_ids=input_ids, past_key_values=cache, use_cache=True)
            return (out.logits, *_flatten(out.past_key_values, cross=False))

    if part not in PARTS:
        raise SelectionError(f"--with-cache on an encoder-decoder ({type(model).__name__}) "
                             "converts one of its two models: give --part encoder (the "
                             "encoder and the first decoding step) or --part decoder (each "
                             "later step)")
    return (EncoderStep() if part == "encoder" else DecoderStep()).eval()


def _layer_shape(model) -> tuple[int, int, int, int]:
    """(layers, self-attention heads, head dim, cross-attention heads) read
    from the cache the encoder step returns."""
    import torch
    with torch.no_grad():
        outputs = wrap(model, "encoder")(torch.zeros(1, 2, dtype=torch.long),
                                         torch.ones(1, 2, dtype=torch.long))
    own, cross = outputs[1], outputs[3]
    return (len(outputs) - 1) // 4, int(own.shape[1]), int(own.shape[3]), int(cross.shape[1])


def _cache_names(prefix: str, layers: int, cross: bool) -> list[str]:
    parts = ("decoder", "encoder") if cross else ("decoder",)
    return [f"{prefix}.{i}.{p}.{kv}" for i in range(layers) for p in parts
            for kv in ("key", "value")]


def interface(model, part: str) -> tuple[list[str], list[str], dict[str, list]]:
    """(input names, output names, each input's dims: a symbol where it
    varies, a number where not) of the part."""
    layers, heads, head_dim, cross_heads = _layer_shape(model)
    if part == "encoder":
        inputs = ["input_ids", "attention_mask"]
        outputs = ["logits", *_cache_names("present", layers, cross=True)]
        return inputs, outputs, {n: ["batch", "source"] for n in inputs}
    past = _cache_names("past_key_values", layers, cross=True)
    dims = {"input_ids": ["batch", "seq"], "encoder_attention_mask": ["batch", "source"]}
    for name in past:
        own = ".decoder." in name
        dims[name] = ["batch", heads if own else cross_heads, "past" if own else "source",
                      head_dim]
    return (["input_ids", "encoder_attention_mask", *past],
            ["logits", *_cache_names("present", layers, cross=False)], dims)


def export(model, part: str):
    """(the torch.export program of the part, every symbol of its interface
    dynamic; the interface, as `interface` gives it)."""
    import torch
    step = wrap(model, part)
    names, outputs, dims = interface(model, part)
    gen = torch.Generator().manual_seed(1)
    vocab = int(model.config.vocab_size)
    example = []
    for name in names:
        shape = [EXAMPLES[d] if isinstance(d, str) else d for d in dims[name]]
        example.append(torch.randint(0, vocab, shape, generator=gen) if name == "input_ids"
                       else torch.ones(shape, dtype=torch.long) if name.endswith("mask")
                       else torch.randn(shape, generator=gen))
    auto = torch.export.Dim.AUTO
    dynamic = [{i: auto for i, d in enumerate(dims[n]) if isinstance(d, str)} for n in names]
    shapes = tuple(dynamic) if part == "encoder" else (*dynamic[:2], tuple(dynamic[2:]))
    with torch.no_grad():
        program = torch.export.export(step, tuple(example), dynamic_shapes=shapes)
    return program, (names, outputs, dims)
