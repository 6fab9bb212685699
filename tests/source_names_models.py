"""A small Llama-style decoder from transformers (2 layers, grouped-query
attention, embedding and head tied) with random weights drawn from `seed`
(`llama_4_layers`: the same with 4 layers):
the source of tests/test_source_names.py. Imports torch and transformers, so
it runs only in a torch process."""
import torch
import transformers


def llama(seed: int = 0, layers: int = 2):
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=64, max_position_embeddings=32, hidden_size=16, num_hidden_layers=layers,
        num_attention_heads=2, num_key_value_heads=1, intermediate_size=32, use_cache=False,
        tie_word_embeddings=True)
    return transformers.LlamaForCausalLM(config).eval()


def llama_4_layers():
    """The same decoder with 4 layers: model.py's length does not grow with them."""
    return llama(0, layers=4)
