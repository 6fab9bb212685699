"""The deployment benchmark's models at their published sizes, random weights
(seed 0), batch 1 (tools/bench_deploy.py). Each command imports one
framework, so each is a process of its own:

    python tools/zoo_models/bench_models.py keras NAME OUT_DIR       # a SavedModel
    python tools/zoo_models/bench_models.py paddle-native NAME OUT   # paddle.vision, OUT/inference/
    python tools/zoo_models/bench_models.py torch-onnx NAME OUT.onnx  # torch.onnx.export
    python tools/zoo_models/bench_models.py inputs NAME OUT.npz       # the timed inputs

The torch models are module specs for x2 --from torch
(`tools/zoo_models/bench_models.py:bert_base`): transformers configs whose
defaults are the published architectures (ViTConfig(): ViT-B/16 at 224,
BertConfig(): BERT-base, GPT2Config(): GPT-2 small, ResNetConfig(): ResNet-50).
"""
from __future__ import annotations

import os
import sys

SEED = 0
IMAGE, SEQ = 224, 128

# name -> keras.applications class
KERAS = {"resnet50": "ResNet50", "mobilenet_v2": "MobileNetV2",
         "efficientnet_b0": "EfficientNetB0"}
# name -> (transformers config class, model class, config kwargs, input kind)
TORCH = {"resnet50_torch": ("ResNetConfig", "ResNetForImageClassification", {}, "image"),
         "vit_b16": ("ViTConfig", "ViTForImageClassification", {}, "image"),
         "bert_base": ("BertConfig", "BertModel", {}, "text"),
         "gpt2_small": ("GPT2Config", "GPT2LMHeadModel", {"use_cache": False}, "text")}
# the same architecture in paddle.vision.models, written by Paddle's authors
PADDLE_NATIVE = {"resnet50": "resnet50", "resnet50_torch": "resnet50",
                 "mobilenet_v2": "mobilenet_v2"}
# input kind -> (name, shape, dtype) of each input
INPUTS = {"image": [("pixel_values", [1, 3, IMAGE, IMAGE], "float32")],
          "image_nhwc": [("image", [1, IMAGE, IMAGE, 3], "float32")],
          "text": [("input_ids", [1, SEQ], "int64"), ("attention_mask", [1, SEQ], "int64")]}


def inputs_of(name: str) -> list[tuple[str, list[int], str]]:
    return INPUTS["image_nhwc" if name in KERAS else TORCH[name][3]]


def arrays(name: str) -> list:
    import numpy as np
    rng = np.random.default_rng(SEED + 1)
    out = []
    for arg, shape, dtype in inputs_of(name):
        if arg == "attention_mask":
            out.append(np.ones(shape, np.int64))
        elif dtype == "int64":
            out.append(rng.integers(0, 1000, shape).astype(np.int64))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32))
    return out


def keras_application(name: str, out_dir: str) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras

    from x2.samples import calibrate_batchnorm
    keras.utils.set_random_seed(SEED)
    model = getattr(keras.applications, KERAS[name])(
        weights=None, input_shape=(IMAGE, IMAGE, 3), classifier_activation=None)
    calibrate_batchnorm(model, SEED, batch=2)
    model.export(out_dir, verbose=False)


def build(name: str):
    import torch
    import transformers
    config_cls, model_cls, kwargs, _kind = TORCH[name]
    torch.manual_seed(SEED)
    return getattr(transformers, model_cls)(getattr(transformers, config_cls)(**kwargs)).eval()


def torch_onnx(name: str, out: str) -> None:
    """The model as torch.onnx exports it (the TorchScript exporter, which
    optimum and most deployment guides still use)."""
    import torch

    class ByName(torch.nn.Module):
        """The model called with its inputs by name, returning its outputs as a tuple."""

        def __init__(self, model, names):
            super().__init__()
            self.model, self.names = model, names

        def forward(self, *tensors):
            return self.model(**dict(zip(self.names, tensors))).to_tuple()

    names = [arg for arg, _, _ in inputs_of(name)]
    tensors = tuple(torch.from_numpy(a) for a in arrays(name))
    torch.onnx.export(ByName(build(name), names), tensors, out, input_names=names,
                      opset_version=17, dynamo=False)


def paddle_native(name: str, out: str) -> None:
    import paddle
    paddle.seed(SEED)
    model = getattr(paddle.vision.models, PADDLE_NATIVE[name])(pretrained=False)
    model.eval()
    spec = [paddle.static.InputSpec([1, 3, IMAGE, IMAGE], "float32", "image")]
    paddle.jit.save(paddle.jit.to_static(model, input_spec=spec, full_graph=True),
                    os.path.join(out, "inference", "model"))


def _factory(name):
    def factory():
        return build(name)
    factory.__name__ = name
    return factory


for _name in TORCH:
    globals()[_name] = _factory(_name)

if __name__ == "__main__":
    command, name, out = sys.argv[1:4]
    if command == "keras":
        keras_application(name, out)
    elif command == "paddle-native":
        paddle_native(name, out)
    elif command == "torch-onnx":
        torch_onnx(name, out)
    elif command == "inputs":
        import numpy as np
        np.savez(out, *arrays(name))
    else:
        sys.exit(f"unknown command {command}")
