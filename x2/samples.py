"""Built-in sample models with random weights at a fixed seed, for the demo,
the tests and the benchmarks (weights cannot be downloaded here).

Run as `python -m x2.samples NAME OUT_DIR`: it imports TensorFlow, so it is a
process of its own. BatchNorm layers get random scales and offsets and
moving statistics taken from one batch of data (as training would leave
them), and classifiers end in logits, so that outputs change with the input
and parity means something. (Random moving statistics make a deep net's
output all but independent of its input: `x2 check` refuses such a
reference.)"""
from __future__ import annotations

import os
import sys

SEED = 0


def _keras():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    keras.utils.set_random_seed(SEED)
    return keras


def randomize_batchnorm(model, seed: int = SEED) -> None:
    """Random BatchNorm statistics: only for showing a vacuous reference
    (use calibrate_batchnorm for models whose parity should mean something)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    for layer in _batchnorms(model):
        _set(layer, gamma=rng.uniform(0.5, 1.5, layer.moving_mean.shape),
             beta=rng.normal(0, 0.1, layer.moving_mean.shape),
             moving_mean=rng.normal(0, 0.1, layer.moving_mean.shape),
             moving_variance=rng.uniform(0.5, 1.5, layer.moving_mean.shape))


def _set(layer, **values) -> None:
    """Assign BatchNorm variables by name; a layer built with scale=False or
    center=False has no gamma or beta."""
    for name, value in values.items():
        variable = getattr(layer, name, None)
        if variable is not None:
            variable.assign(value.astype("float32"))


def _batchnorms(model) -> list:
    return [layer for layer in model._flatten_layers()
            if type(layer).__name__ == "BatchNormalization"]


def calibrate_batchnorm(model, seed: int = SEED, batch: int = 4, size: int = 64) -> None:
    """Random scales and offsets; moving statistics of one batch of standard
    normal data (momentum 0, one training-mode call), as training leaves them.
    Dims the model leaves unknown (an image of any size) are `size` in that batch."""
    import numpy as np
    norms = _batchnorms(model)
    if not norms:
        return
    rng = np.random.default_rng(seed)
    for layer in norms:
        _set(layer, gamma=rng.uniform(0.5, 1.5, layer.moving_mean.shape),
             beta=rng.normal(0, 0.1, layer.moving_mean.shape))
    data = [rng.standard_normal([batch, *(d or size for d in t.shape[1:])]).astype("float32") for t in model.inputs]
    saved = [layer.momentum for layer in norms]
    for layer in norms:
        layer.momentum = 0.0
    model(data if len(data) > 1 else data[0], training=True)
    for layer, momentum in zip(norms, saved):
        layer.momentum = momentum


def small_cnn():
    """Conv, depthwise conv, BN, max/avg pooling, flatten -> dense, softmax."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((32, 32, 3), name="image")
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inp)
    x = layers.BatchNormalization()(x)
    x = layers.DepthwiseConv2D(3, strides=2, padding="same", activation="relu6")(x)
    x = layers.Conv2D(24, 1)(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("swish")(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.AveragePooling2D(2, padding="same")(x)
    x = layers.Conv2D(8, 3, padding="valid", activation="tanh")(x)
    x = layers.Flatten()(x)
    x = layers.Dense(32, activation="gelu")(x)
    x = layers.Dropout(0.5)(x)
    out = layers.Dense(10, activation="softmax", name="probs")(x)
    return keras.Model(inp, out, name="small_cnn")


def mlp():
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((64,), name="features")
    x = layers.Dense(128, activation="relu")(inp)
    x = layers.Dense(128, activation="elu")(x)
    x = layers.Dense(64, activation="sigmoid")(x)
    out = layers.Dense(5)(x)
    return keras.Model(inp, out, name="mlp")


def residual_cnn():
    """Residual adds and a concat on an NHWC graph, flatten -> dense head."""
    keras = _keras()
    layers = keras.layers
    inp = keras.Input((24, 24, 8), name="pixels")
    a = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
    a = layers.BatchNormalization()(a)
    x = layers.Add()([inp, a])
    b = layers.Conv2D(8, 1, activation="relu")(x)
    x = layers.Concatenate()([x, b])
    x = layers.ZeroPadding2D(((1, 0), (0, 1)))(x)
    x = layers.Conv2D(4, 3, strides=2)(x)
    x = layers.Flatten()(x)
    out = layers.Dense(6)(x)
    return keras.Model(inp, out, name="residual_cnn")


def mobilenet_v2():
    keras = _keras()
    return keras.applications.MobileNetV2(weights=None, classifier_activation=None)


def resnet50():
    keras = _keras()
    return keras.applications.ResNet50(weights=None, classifier_activation=None)


def efficientnet_b0():
    """Squeeze-excite blocks, swish, Rescaling+Normalization at the input."""
    keras = _keras()
    return keras.applications.EfficientNetB0(weights=None, classifier_activation=None,
                                             input_shape=(96, 96, 3))


SAMPLES = {"small_cnn": small_cnn, "mlp": mlp, "residual_cnn": residual_cnn,
           "mobilenet_v2": mobilenet_v2, "resnet50": resnet50,
           "efficientnet_b0": efficientnet_b0}


def export(name: str, out_dir: str) -> None:
    model = SAMPLES[name]()
    calibrate_batchnorm(model)
    model.export(out_dir, verbose=False)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in SAMPLES:
        sys.exit(f"usage: python -m x2.samples {{{'|'.join(SAMPLES)}}} OUT_DIR")
    export(sys.argv[1], sys.argv[2])
