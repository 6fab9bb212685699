"""--with-cache: a transformers causal LM read as one decoding step with its
KV cache as tensors at the interface, named as optimum's ONNX exports name
them (x2/ir/cache.py): input_ids [batch, seq], attention_mask [batch,
total] over cached and new tokens, position_ids [batch, seq] and
past_key_values.N.key / .value [batch, heads, past, head_dim] in; logits
and present.N.key / .value out. The model's own cache object (a
transformers DynamicCache) is built from the tensors inside the step and
flattened back at its end, so the converted model is what `generate` loops
over. Runs in the torch worker (imports torch and transformers)."""
from __future__ import annotations

from ...errors import SelectionError

# The example step a decoder is captured at: 2 sequences of 3 new tokens
# after 5 cached, sizes no config is likely to share.
BATCH, NEW, CACHED = 2, 3, 5


def is_transformers_model(model) -> bool:
    """Whether `model` is a transformers PreTrainedModel (without importing
    transformers for a model that is not one)."""
    import sys
    transformers = sys.modules.get("transformers")
    return transformers is not None and isinstance(model, transformers.PreTrainedModel)


def drop_cache_outputs(model) -> None:
    """A transformers model built with use_cache=True (as from_pretrained
    gives it) returns its KV cache as a transformers Cache object, which
    torch.export cannot take as an output ("Found DynamicCache in output
    ... register a pytree"): it is read without. Every submodule's config
    says so (T5's decoder stack holds a copy of the model's). --with-cache
    passes use_cache itself and reads the cache as tensors."""
    if not is_transformers_model(model):
        return
    for module in model.modules():
        config = getattr(module, "config", None)
        if getattr(config, "use_cache", False):
            config.use_cache = False


def cache_note(model) -> str | None:
    """What a generative transformers model converted without --with-cache
    leaves out, and how to get it."""
    if not (is_transformers_model(model) and type(model).can_generate()):
        return None
    if getattr(model.config, "is_encoder_decoder", False):
        return ("converted the whole forward pass without its KV cache; for generation, "
                "--with-cache --part encoder and --with-cache --part decoder write the two "
                "models it runs")
    return ("converted without the KV cache outputs (use_cache); --with-cache writes one "
            "decoding step with the cache at its interface, for generation")


def _shape(model) -> tuple[int, int, int, int]:
    """(layers, key/value heads, head dim, vocabulary) from the model's config
    (the cached tensors' own shapes: _cached_shapes)."""
    config = getattr(model, "config", None)
    try:
        layers = config.num_hidden_layers
        heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or \
            config.hidden_size // config.num_attention_heads
        return int(layers), int(heads), int(head_dim), int(config.vocab_size)
    except (AttributeError, TypeError) as exc:
        raise SelectionError(f"--with-cache takes a transformers causal LM (a model with a "
                             f"config and past_key_values); {type(model).__name__} is not one "
                             f"({exc})") from None


def input_names(model) -> list[str]:
    layers = _shape(model)[0]
    return ["input_ids", "attention_mask", "position_ids",
            *[f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]]


def output_names(model) -> list[str]:
    layers = _shape(model)[0]
    return ["logits", *[f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]]


def input_dims(model) -> dict[str, list]:
    """The symbol of each dynamic dim (x2/ir/symbols.py), a number for the others."""
    dims = {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "total"],
            "position_ids": ["batch", "seq"]}
    for name, (heads, size) in zip(input_names(model)[3:], _cached_shapes(model)):
        dims[name] = ["batch", heads, "past", size]
    return dims


_CACHED: dict[int, list[tuple[int, int]]] = {}   # id(model) -> _cached_shapes(model)


def _cached_shapes(model) -> list[tuple[int, int]]:
    """(heads, size) of each cached tensor, layer by layer, key then value, as
    the model itself caches them after a forward of 2 tokens: the config's
    heads and head_dim do not say it for every model (multi-head latent
    attention, DeepSeek's, caches its compressed keys and values at sizes of
    their own, and one layer may differ from another)."""
    import torch
    if id(model) not in _CACHED:
        with torch.no_grad():
            out = model(input_ids=torch.zeros(1, 2, dtype=torch.long), use_cache=True)
        layers = out.past_key_values.layers
        if len(layers) != _shape(model)[0]:
            raise SelectionError(f"--with-cache: {type(model).__name__} caches "
                                 f"{len(layers)} layers, its config says "
                                 f"{_shape(model)[0]}")
        _CACHED[id(model)] = [(int(t.shape[1]), int(t.shape[3])) for layer in layers
                              for t in (layer.keys, layer.values)]
    return _CACHED[id(model)]


EXAMPLES = {"batch": BATCH, "seq": NEW, "past": CACHED, "total": CACHED + NEW}
# The sizes convert's verify and x2 check run the step at unless --dim says
# otherwise: dims that must agree (total = past + seq), recorded in
# report.json (source.dim_sizes). (new, cached): the example (3, 5), one
# step (1, 7), a prompt after a short cache (4, 2).
DIM_SIZES = {"seq": [NEW, 1, 4], "past": [CACHED, 7, 2], "total": [NEW + CACHED, 8, 6]}


# The attribute the step's module holds the source at (seq2seq_cache.py's
# steps too): the frontend names weights and scopes as from the source itself.
SOURCE_AT = "model"


def wrap(model):
    """The step as a module taking the interface's tensors in order."""
    import torch
    from transformers import DynamicCache
    layers = _shape(model)[0]

    class CachedStep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, position_ids, *past):
            # Full layers, not the config's sliding-window ones: those keep
            # only the window and count their length from what they hold,
            # so after the first crop the mask over `total` tokens would no
            # longer line up (transformers' generate counts every token).
            # The window is the attention mask's, from the config.
            cache = DynamicCache([(past[2 * i], past[2 * i + 1]) for i in range(layers)])
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             position_ids=position_ids, past_key_values=cache, use_cache=True)
            return (out.logits, *[t for layer in out.past_key_values.layers
                                  for t in (layer.keys, layer.values)])

    return CachedStep().eval()


def step_with_example(model):
    """(the step module, its example inputs: 2 sequences of 3 new tokens
    after 5 cached). Model builders that export a decoder with its cache to
    ONNX use it too (tests/, tools/zoo_models/cache_models.py)."""
    import torch
    vocab = _shape(model)[3]
    gen = torch.Generator().manual_seed(1)
    example = (torch.randint(0, vocab, (BATCH, NEW), generator=gen),
               torch.ones(BATCH, CACHED + NEW, dtype=torch.long),
               torch.arange(CACHED, CACHED + NEW).expand(BATCH, NEW),
               *[torch.randn(BATCH, heads, CACHED, size, generator=gen)
                 for heads, size in _cached_shapes(model)])
    return wrap(model), example


def export(model):
    """The torch.export program of the step, the batch and the new, cached
    and total lengths dynamic."""
    import torch
    step, example = step_with_example(model)
    # AUTO: torch.export takes the relations the model imposes (total = past
    # + seq, past within a sliding window) instead of failing on them; a dim
    # it had to fix would show as static in the converted model's inputs.
    auto = torch.export.Dim.AUTO
    # forward(input_ids, attention_mask, position_ids, *past): the cache is one argument
    dynamic = ({0: auto, 1: auto}, {0: auto, 1: auto}, {0: auto, 1: auto},
               tuple({0: auto, 2: auto} for _ in example[3:]))
    with torch.no_grad():
        return torch.export.export(step, example, dynamic_shapes=dynamic)


def transformers_generate(model, ids, mask, new_tokens: int):
    """The new tokens [batch, new_tokens] transformers' own `generate` picks
    greedily (do_sample=False, one beam) from left-padded prompts, with every
    logits processor the model's generation config may carry turned off
    (end-of-text stops, forced or suppressed tokens, repetition penalties): the
    plain greedy decoding x2 check --generate runs with the cached step."""
    import numpy as np
    import torch
    from transformers import GenerationConfig
    from .seq2seq_cache import start_token
    config = GenerationConfig(
        max_new_tokens=new_tokens, min_new_tokens=0, do_sample=False, num_beams=1,
        eos_token_id=None, pad_token_id=0, forced_bos_token_id=None, forced_eos_token_id=None,
        repetition_penalty=1.0, no_repeat_ngram_size=0, suppress_tokens=None,
        begin_suppress_tokens=None, bad_words_ids=None, use_cache=True,
        decoder_start_token_id=start_token(model) if model.config.is_encoder_decoder else None)
    # generate() fills every setting left None from the model's own
    # generation config (its eos_token_id among them): set aside while it runs
    own, model.generation_config = model.generation_config, GenerationConfig()
    try:
        with torch.no_grad():
            out = model.generate(input_ids=torch.from_numpy(ids),
                                 attention_mask=torch.from_numpy(mask), generation_config=config)
    finally:
        model.generation_config = own
    # a decoder returns the prompt then the new tokens; an encoder-decoder the
    # start token then the new tokens
    return np.asarray(out[:, -new_tokens:].numpy(), np.int64)
