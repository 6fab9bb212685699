"""The zoo's Hugging Face decoders exported to ONNX with their cache, as
decoders are exported for generation: `python tools/zoo_models/cache_models.py
NAME OUT.onnx` (NAME: cache_<decoder>, the decoders of tools/zoo_models/hf.py).

The model takes new tokens, the attention mask over cached and new tokens,
position ids and every layer's cached keys and values; it returns the logits
and the cache after the new tokens, named as optimum names them
(`past_key_values.N.key` in, `present.N.key` out; x2/ir/cache.py). Exported by
torch.onnx's TorchScript exporter with dynamic batch, new, cached and total
lengths. Imports torch: a process of its own."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hf  # noqa: E402

DECODERS = ("gpt2", "llama", "mistral", "qwen2", "gpt_neox", "opt", "phi")
NAMES = [f"cache_{d}" for d in DECODERS]
# x2 check sizes: (new, cached) = (3, 5), one step (1, 7), a prompt after a short cache (4, 2)
CHECK_SIZES = {"seq": [3, 1, 4], "past": [5, 7, 2], "total": [8, 8, 6]}
# an encoder-decoder's decoder also at three source lengths
SEQ2SEQ_CHECK_SIZES = {"seq": [3, 1, 4], "past": [5, 7, 2], "source": [7, 3, 9]}


def build(name: str, out: str) -> None:
    import torch
    from x2.frontends.torch.cache import input_names, step_with_example
    lm = hf.build(name.removeprefix("cache_"))
    module, example = step_with_example(lm)
    past = input_names(lm)[3:]
    present = [n.replace("past_key_values", "present") for n in past]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
            "position_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"},
            **{n: {0: "batch", 2: "past"} for n in past},
            **{n: {0: "batch", 2: "total"} for n in present}}
    torch.onnx.export(module, example, out, dynamo=False, opset_version=17,
                      input_names=["input_ids", "attention_mask", "position_ids", *past],
                      output_names=["logits", *present], dynamic_axes=axes)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in NAMES:
        sys.exit(f"usage: python tools/zoo_models/cache_models.py {{{'|'.join(NAMES)}}} OUT.onnx")
    build(sys.argv[1], sys.argv[2])
