"""Hugging Face models as users have them: folders written by
`save_pretrained` (config.json and safetensors weights), converted with
`x2 convert --from torch --model DIR` and no other flag.
`python tools/zoo_models/hf_folder_models.py NAME OUT_DIR`.

Small configs of tools/zoo_models/hf.py, random weights (seed 0), saved as
from_pretrained would give them back: `use_cache` left at the config's
default (True for the decoder and the encoder-decoder). One is sharded
(`max_shard_size`), one stored in bfloat16. Imports torch and
transformers: a process of its own."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hf  # noqa: E402

# name -> (config class, model class, config kwargs, save_pretrained kwargs, dtype)
MODELS = {
    # a decoder, sharded in ~20 KB pieces (seven shards and an index)
    "folder_llama": ("LlamaConfig", "LlamaForCausalLM", dict(
        hf.TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, intermediate_size=64), {"max_shard_size": "20KB"}, None),
    # an encoder taking token_type_ids, stored in bfloat16
    "folder_bert": ("BertConfig", "BertModel", dict(
        hf.TEXT, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64), {}, "bfloat16"),
    "folder_vit": ("ViTConfig", "ViTForImageClassification", dict(
        image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, num_labels=10), {}, None),
    # an encoder-decoder: the whole forward (input_ids, attention_mask, decoder_input_ids)
    "folder_t5": ("T5Config", "T5ForConditionalGeneration", dict(
        vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
        decoder_start_token_id=0), {}, None),
    # speech: a waveform through a Conv1d front end
    "folder_wav2vec2": ("Wav2Vec2Config", "Wav2Vec2Model",
                        hf.MODELS["wav2vec2"][2], {}, None),
}
NAMES = list(MODELS)


def build(name: str, out: str) -> None:
    import torch
    import transformers
    config_cls, model_cls, kwargs, save_kwargs, dtype = MODELS[name]
    torch.manual_seed(hf.SEED)
    config = getattr(transformers, config_cls)(**kwargs)
    model = getattr(transformers, model_cls)(config).eval()
    if dtype is not None:
        model = model.to(getattr(torch, dtype))
    model.save_pretrained(out, **save_kwargs)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: python tools/zoo_models/hf_folder_models.py {{{'|'.join(NAMES)}}} "
                 f"OUT_DIR")
    build(sys.argv[1], sys.argv[2])
