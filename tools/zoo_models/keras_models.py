"""Keras architectures for the zoo, built with random weights (seed 0) and
exported as SavedModels: `python tools/zoo/keras_models.py NAME OUT_DIR`.
Imports TensorFlow, so it is a process of its own.

keras.applications models are built with weights=None and logits heads.
Their BatchNorm statistics come from one training-mode batch of data
(x2.samples.calibrate_batchnorm), as a trained model's would: random
statistics give outputs that barely depend on the input, and parity against
such a reference proves nothing (x2 check refuses it)."""
from __future__ import annotations

import os
import sys

SEED = 0

# name -> (keras.applications class, input size, extra kwargs)
APPLICATIONS = {
    "keras_mobilenet": ("MobileNet", 96, dict(alpha=0.25)),
    "keras_mobilenet_v2": ("MobileNetV2", 96, dict(alpha=0.35)),
    "keras_mobilenet_v3_small": ("MobileNetV3Small", 96, dict(alpha=0.75)),
    "keras_resnet50": ("ResNet50", 64, {}),
    "keras_resnet50_v2": ("ResNet50V2", 64, {}),
    "keras_densenet121": ("DenseNet121", 64, {}),
    "keras_efficientnet_b0": ("EfficientNetB0", 64, {}),
    "keras_efficientnet_v2_b0": ("EfficientNetV2B0", 64, {}),
    "keras_nasnet_mobile": ("NASNetMobile", 96, {}),
    "keras_inception_v3": ("InceptionV3", 75, {}),
    "keras_xception": ("Xception", 71, {}),
    "keras_convnext_tiny": ("ConvNeXtTiny", 64, {}),
    "keras_mobilenet_v3_large": ("MobileNetV3Large", 96, dict(alpha=0.75)),
    "keras_vgg16": ("VGG16", 32, {}),
}

# Built for any image size by `--dynamic` ((None, None, 3) inputs), but for
# these: VGG's head flattens a map of a fixed size; Keras cannot build NASNet
# over unknown sizes (its cells crop by their inputs' static shapes).
FIXED_SIZE = ("keras_vgg16", "keras_nasnet_mobile")

SEQUENCE = ("keras_lstm", "keras_bigru", "keras_text_cnn", "keras_transformer",
            "keras_conv1d_audio")
RECURRENT = ("keras_lstm", "keras_bigru")
VOCAB, SEQ = 100, 12


def _keras():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    keras.utils.set_random_seed(SEED)
    return keras


def application(name: str, any_size: bool = False):
    """The application with a 10-class logits head; `any_size`: over (None,
    None, 3) inputs, with a global average pool and a Dense as its head (Keras
    builds its own top only for a fixed size)."""
    keras = _keras()
    cls, size, kwargs = APPLICATIONS[name]
    build = getattr(keras.applications, cls)
    if not any_size or name in FIXED_SIZE:
        return build(weights=None, input_shape=(size, size, 3), classes=10,
                     classifier_activation=None, **kwargs)
    base = build(weights=None, input_shape=(None, None, 3), include_top=False, **kwargs)
    pooled = keras.layers.GlobalAveragePooling2D()(base.output)
    return keras.Model(base.input, keras.layers.Dense(10, name="logits")(pooled), name=name)


def check_sizes(name: str) -> dict:
    """x2 check's image sizes for an application built for any size: its own,
    then two larger ones (most applications have a smallest), height and
    width apart and odd where its own is even (SAME pads differ there)."""
    if name not in APPLICATIONS or name in FIXED_SIZE:
        return {}
    size = APPLICATIONS[name][1]
    return {"dim1": [size, size + 9, size + 17], "dim2": [size, size + 7, size + 3]}


def sequence(name: str):
    keras = _keras()
    layers = keras.layers
    if name == "keras_conv1d_audio":
        inp = keras.Input((64, 1), name="audio")
        x = layers.Conv1D(8, 5, activation="relu")(inp)
        x = layers.MaxPooling1D(2)(x)
        x = layers.Conv1D(16, 3, padding="same", activation="relu")(x)
        x = layers.GlobalAveragePooling1D()(x)
        return keras.Model(inp, layers.Dense(4, name="logits")(x), name=name)
    tokens = keras.Input((SEQ,), dtype="int32", name="tokens")
    x = layers.Embedding(VOCAB, 16)(tokens)
    if name == "keras_lstm":
        x = layers.LSTM(16)(x)
    elif name == "keras_bigru":
        x = layers.Bidirectional(layers.GRU(8))(x)
    elif name == "keras_text_cnn":
        x = layers.Conv1D(16, 3, activation="relu")(x)
        x = layers.GlobalMaxPooling1D()(x)
    elif name == "keras_transformer":
        attn = layers.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
        x = layers.LayerNormalization()(x + attn)
        ffn = layers.Dense(16)(layers.Dense(32, activation="gelu")(x))
        x = layers.LayerNormalization()(x + ffn)
        x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(tokens, layers.Dense(3, name="logits")(x), name=name)


def build(name: str, any_size: bool = False):
    from x2.samples import calibrate_batchnorm
    if name not in APPLICATIONS:
        model = sequence(name)
        calibrate_batchnorm(model, SEED)
        return model
    model = application(name, any_size)
    calibrate_batchnorm(model, SEED, size=APPLICATIONS[name][1])
    return model


def export(name: str, out_dir: str, any_size: bool = False) -> None:
    build(name, any_size).export(out_dir, verbose=False)


def fp32_error(name: str, seeds=range(1, 6), batch: int = 3) -> float:
    """The model's own fp32 rounding error: max |fp32 - fp64| / max |fp64| of
    its logits, the same weights run by Keras in float64, the largest over
    `seeds` batches of `batch` images. Two correct fp32 implementations can
    differ by about twice this, whatever the converter."""
    import numpy as np
    model = build(name)
    keras = _keras()
    size = APPLICATIONS[name][1]
    xs = [np.random.default_rng(seed).standard_normal((batch, size, size, 3)).astype("float32")
          for seed in seeds]
    y32 = [model(x).numpy() for x in xs]
    keras.config.set_floatx("float64")
    keras.config.set_dtype_policy("float64")
    model64 = application(name)
    model64.set_weights([w.astype("float64") for w in model.get_weights()])
    errors = []
    for x, y in zip(xs, y32):
        y64 = model64(x.astype("float64")).numpy()
        errors.append(float(np.abs(y - y64).max() / np.abs(y64).max()))
    return max(errors)


NAMES = list(APPLICATIONS) + list(SEQUENCE)

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--fp32-error" and sys.argv[2] in APPLICATIONS:
        print(f"{sys.argv[2]}: fp32 vs fp64 max rel err {fp32_error(sys.argv[2]):.3g}")
    elif len(sys.argv) in (3, 4) and sys.argv[1] in NAMES and sys.argv[3:] in ([], ["--dynamic"]):
        export(sys.argv[1], sys.argv[2], any_size=sys.argv[3:] == ["--dynamic"])
    else:
        sys.exit(f"usage: python tools/zoo_models/keras_models.py {{{'|'.join(NAMES)}}} OUT_DIR "
                 f"[--dynamic]\n"
                 f"       python tools/zoo_models/keras_models.py --fp32-error APPLICATION")
