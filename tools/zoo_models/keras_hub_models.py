"""keras_hub backbones for the zoo, built from small configs with random
weights (seed 0) and exported as SavedModels:
`python tools/zoo_models/keras_hub_models.py NAME OUT_DIR`. Imports
TensorFlow, so it is a process of its own. Backbones output hidden states
(no task head): they vary with the input, unlike softmax outputs."""
from __future__ import annotations

import os
import sys

SEED = 0
VOCAB, SEQ = 100, 12
TEXT = dict(vocabulary_size=VOCAB, num_layers=2, num_heads=2, hidden_dim=32,
            intermediate_dim=64)

# name -> (keras_hub.models class, config)
BACKBONES = {
    "keras_hub_bert": ("BertBackbone", dict(TEXT, max_sequence_length=SEQ)),
    "keras_hub_distilbert": ("DistilBertBackbone", dict(TEXT, max_sequence_length=SEQ)),
    "keras_hub_gpt2": ("GPT2Backbone", dict(TEXT, max_sequence_length=SEQ)),
    "keras_hub_llama": ("LlamaBackbone", dict(TEXT, num_query_heads=2, num_key_value_heads=1)),
    "keras_hub_vit": ("ViTBackbone", dict(image_shape=(32, 32, 3), patch_size=8, num_layers=2,
                                          num_heads=2, hidden_dim=32, mlp_dim=64)),
    "keras_hub_resnet": ("ResNetBackbone", dict(
        input_conv_filters=[64], input_conv_kernel_sizes=[3], stackwise_num_filters=[64, 32],
        stackwise_num_blocks=[1, 1], stackwise_num_strides=[1, 2], block_type="basic_block",
        image_shape=(32, 32, 3))),
}
NAMES = list(BACKBONES)


def input_shapes(name: str) -> dict[str, list[int]]:
    """What the zoo converts with: the ResNet needs none (only its batch is
    dynamic and nothing computes from it)."""
    if name == "keras_hub_resnet":
        return {}
    if name == "keras_hub_vit":
        return {"images": [2, 32, 32, 3]}
    names = ["token_ids", "padding_mask"] + (["segment_ids"] if name == "keras_hub_bert" else [])
    return {input_name: [2, SEQ] for input_name in names}


def check_sizes(name: str) -> dict[str, list[int]]:
    """x2 check --dim for the dynamic zoo: token lengths within the position
    table (SEQ), where the default larger size would run past it."""
    if "token_ids" not in input_shapes(name):
        return {}
    return {"dim1": [SEQ, 1, SEQ - 3]}


def build(name: str):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    import keras_hub
    from x2.samples import calibrate_batchnorm
    keras.utils.set_random_seed(SEED)
    cls, config = BACKBONES[name]
    model = getattr(keras_hub.models, cls)(**config)
    calibrate_batchnorm(model, SEED)
    return model


def export(name: str, out_dir: str) -> None:
    build(name).export(out_dir, verbose=False)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in NAMES:
        sys.exit(f"usage: python tools/zoo_models/keras_hub_models.py {{{'|'.join(NAMES)}}} "
                 f"OUT_DIR")
    export(sys.argv[1], sys.argv[2])
