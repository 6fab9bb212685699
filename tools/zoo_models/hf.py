"""Hugging Face `transformers` architectures with small configs and random
weights (seed 0), as module specs for `x2 convert --from torch`
(`tools/zoo/hf.py:bert`). Nothing is downloaded: a model is its config.

Each factory returns the model in eval mode. EfficientNet draws its
BatchNorm scales (gamma) from N(0, initializer_range): at the default 0.02
each block shrinks the signal ~50x and the logits no longer depend on the
input (they change by ~1e-34), so its entry draws them at 0.3. BatchNorm statistics are taken
from one batch of random data (as a trained model's would be from data), so
that eval-mode outputs depend on the input and parity means something.
Imports torch and transformers, so it runs only in a torch worker."""
from __future__ import annotations

SEED = 0
TEXT = dict(vocab_size=128, max_position_embeddings=64)
BATCH, SEQ = 2, 16
IMAGE = 64

# name -> (config class, model class, config kwargs, input kind)
MODELS = {
    # text encoders
    "bert": ("BertConfig", "BertModel", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64), "text"),
    "distilbert": ("DistilBertConfig", "DistilBertModel", dict(
        TEXT, dim=32, n_layers=2, n_heads=2, hidden_dim=64), "text"),
    "roberta": ("RobertaConfig", "RobertaModel", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, pad_token_id=1), "text"),
    "albert": ("AlbertConfig", "AlbertModel", dict(
        TEXT, embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64), "text"),
    "electra": ("ElectraConfig", "ElectraModel", dict(
        TEXT, embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64), "text"),
    "deberta_v2": ("DebertaV2Config", "DebertaV2Model", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64), "text"),
    "bert_classifier": ("BertConfig", "BertForSequenceClassification", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, num_labels=5), "text"),
    # decoder-only LMs: causal masks, rotary embeddings, grouped-query attention
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", dict(
        vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=2, bos_token_id=0,
        eos_token_id=0, use_cache=False),
        "text"),
    "llama": ("LlamaConfig", "LlamaForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, use_cache=False), "text"),
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, sliding_window=8, use_cache=False),
        "text"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64, use_cache=False), "text"),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, rotary_pct=0.5, use_cache=False), "text"),
    "opt": ("OPTConfig", "OPTForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, ffn_dim=64,
        word_embed_proj_dim=32, use_cache=False), "text"),
    "phi": ("PhiConfig", "PhiForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, use_cache=False), "text"),
    # a mixture of experts: top-2 routing over 4 experts (sort, histc, grouped matmul)
    "mixtral": ("MixtralConfig", "MixtralForCausalLM", dict(
        TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=48, num_local_experts=4,
        num_experts_per_tok=2, use_cache=False), "text"),
    # encoder-decoder
    "t5": ("T5Config", "T5Model", dict(
        vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
        use_cache=False), "seq2seq"),
    "bart": ("BartConfig", "BartModel", dict(
        TEXT, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, use_cache=False),
        "seq2seq"),
    # vision: CNNs, vision transformers, hybrids
    "resnet": ("ResNetConfig", "ResNetForImageClassification", dict(
        embedding_size=16, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1],
        layer_type="bottleneck", num_labels=10), "image"),
    "convnext": ("ConvNextConfig", "ConvNextForImageClassification", dict(
        hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], num_labels=10), "image"),
    "regnet": ("RegNetConfig", "RegNetForImageClassification", dict(
        embedding_size=16, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1],
        groups_width=8, num_labels=10), "image"),
    "efficientnet": ("EfficientNetConfig", "EfficientNetForImageClassification", dict(
        image_size=IMAGE, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320,
        num_labels=10, initializer_range=0.3),
        "image"),
    "mobilenet_v2": ("MobileNetV2Config", "MobileNetV2ForImageClassification", dict(
        image_size=IMAGE, depth_multiplier=0.35, num_labels=10), "image"),
    "vit": ("ViTConfig", "ViTForImageClassification", dict(
        image_size=IMAGE, patch_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=10), "image"),
    "deit": ("DeiTConfig", "DeiTForImageClassification", dict(
        image_size=IMAGE, patch_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=10), "image"),
    "swin": ("SwinConfig", "SwinForImageClassification", dict(
        image_size=IMAGE, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2],
        window_size=4, num_labels=10), "image"),
    "mobilevit": ("MobileViTConfig", "MobileViTForImageClassification", dict(
        image_size=IMAGE, hidden_sizes=[16, 24, 32], neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
        num_attention_heads=2, num_labels=10), "image"),
    "dinov2": ("Dinov2Config", "Dinov2Model", dict(
        image_size=IMAGE, patch_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, mlp_ratio=2), "image"),
    # speech encoders with Conv1d front ends
    "wav2vec2": ("Wav2Vec2Config", "Wav2Vec2Model", dict(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
        do_stable_layer_norm=True, feat_extract_norm="layer"), "audio"),
    "hubert": ("HubertConfig", "HubertModel", dict(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        conv_dim=(16, 16, 16), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2), "audio"),
    "whisper_encoder": ("WhisperConfig", "WhisperModel", dict(
        vocab_size=128, num_mel_bins=16, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
        decoder_ffn_dim=64, max_source_positions=16, max_target_positions=32,
        pad_token_id=0, bos_token_id=0, eos_token_id=0, decoder_start_token_id=0,
        use_cache=False), "mel"),
}

# Encoder-decoders with their language-model heads, for generation (x2
# convert --with-cache --part encoder|decoder): the configs of t5 and bart
# (T5's decoder starts from its pad token, as the published configs say).
# At their default initial scales both repeat one token whatever the prompt
# (a random net's collapse); 10x T5's and BART's 0.2 give tokens that vary
# with the prompt and the step.
GENERATORS = {
    "t5_lm": ("T5ForConditionalGeneration", "t5",
              {"decoder_start_token_id": 0, "initializer_factor": 10.0}),
    "bart_lm": ("BartForConditionalGeneration", "bart", {"init_std": 0.2}),
}

# input kind -> (forward argument, shape, dtype) of each input
INPUTS = {
    "text": [("input_ids", [BATCH, SEQ], "int64"), ("attention_mask", [BATCH, SEQ], "int64")],
    "seq2seq": [("input_ids", [BATCH, SEQ], "int64"), ("attention_mask", [BATCH, SEQ], "int64"),
                ("decoder_input_ids", [BATCH, 8], "int64")],
    "image": [("pixel_values", [BATCH, 3, IMAGE, IMAGE], "float32")],
    "audio": [("input_values", [BATCH, 1600], "float32")],
    "mel": [("input_features", [BATCH, 16, 32], "float32")],
}


# The dims a model's users vary, by input: named (`make zoo` --dynamic) at
# the example size; the rest stay fixed.
DYNAMIC_DIMS = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                "decoder_input_ids": {0: "batch", 1: "target"},
                "pixel_values": {0: "batch"}, "input_values": {0: "batch", 1: "samples"},
                "input_features": {0: "batch"}}


# Sizes x2 check runs a dim at where its default (example, 1, larger) cannot
# work: a waveform shorter than the conv front end's receptive field (400).
CHECK_SIZES = {"samples": [1600, 400, 2401]}


def dynamic_dims(arg: str, shape: list[int]) -> list:
    """`shape` with the dims users vary named, as --input-shape takes them ("seq=16")."""
    names = DYNAMIC_DIMS.get(arg, {})
    return [f"{names[i]}={d}" if i in names else d for i, d in enumerate(shape)]


def inputs_of(name: str) -> list[tuple[str, list[int], str]]:
    return INPUTS[MODELS[name][3]]


def example(name: str):
    """Seeded example inputs (ids within the vocabulary, masks 1)."""
    import torch
    gen = torch.Generator().manual_seed(SEED + 1)
    values = {}
    for arg, shape, dtype in inputs_of(name):
        if arg.endswith("mask"):
            values[arg] = torch.ones(shape, dtype=torch.int64)
        elif dtype == "int64":
            values[arg] = torch.randint(0, 128, shape, generator=gen)
        else:
            values[arg] = torch.randn(shape, generator=gen)
    return values


def calibrate_batchnorm(model, inputs: dict) -> None:
    """BatchNorm running statistics from one training-mode batch (cumulative
    average from a reset), then back to eval mode."""
    import torch
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(**inputs)
    model.eval()


def build(name: str):
    import torch
    import transformers
    if name in GENERATORS:
        model_cls, like, extra = GENERATORS[name]
        config_cls, _, kwargs, _kind = MODELS[like]
        torch.manual_seed(SEED)
        config = getattr(transformers, config_cls)(**{**kwargs, **extra, "use_cache": True})
        return getattr(transformers, model_cls)(config).eval()
    config_cls, model_cls, kwargs, _kind = MODELS[name]
    torch.manual_seed(SEED)
    config = getattr(transformers, config_cls)(**kwargs)
    model = getattr(transformers, model_cls)(config)
    if name == "whisper_encoder":
        model = model.get_encoder()
    model.eval()
    calibrate_batchnorm(model, example(name))
    return model


def _factory(name):
    def factory():
        return build(name)
    factory.__name__ = name
    return factory


for _name in [*MODELS, *GENERATORS]:
    globals()[_name] = _factory(_name)
