"""TensorFlow models the tests build for themselves (run as a script in its own
process: `python tests/tf_models.py NAME OUT_DIR`; it imports TensorFlow)."""
from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _tf():
    import tensorflow as tf
    tf.random.set_seed(0)
    return tf


def raw_ops(out):
    """A tf.Module using raw TF ops Keras 3 does not emit (FusedBatchNormV3,
    explicit NCHW-free SAME/VALID convs, pads, concat, reductions, activations)."""
    tf = _tf()
    import numpy as np
    rng = np.random.default_rng(1)

    def var(*shape, scale=0.3):
        return tf.constant(rng.normal(0, scale, shape).astype("float32"))

    class Zoo(tf.Module):
        def __init__(self):
            self.w1 = var(3, 3, 4, 8)
            self.dw = var(3, 3, 8, 2)
            self.gamma = tf.constant(rng.uniform(0.5, 1.5, 16).astype("float32"))
            self.beta = var(16, scale=0.1)
            self.mean = var(16, scale=0.1)
            self.var = tf.constant(rng.uniform(0.5, 1.5, 16).astype("float32"))
            self.w2 = var(16 * 2, 5)

        @tf.function(input_signature=[tf.TensorSpec([None, 12, 12, 4], tf.float32, name="x")])
        def __call__(self, x):
            y = tf.nn.conv2d(x, self.w1, strides=1, padding="SAME")
            y = tf.nn.relu6(y)
            y = tf.pad(y, [[0, 0], [1, 1], [1, 1], [0, 0]])
            y = tf.nn.depthwise_conv2d(y, self.dw, strides=[1, 2, 2, 1], padding="VALID")
            y, _, _ = tf.compat.v1.nn.fused_batch_norm(y, self.gamma, self.beta, self.mean,
                                                       self.var, epsilon=1e-3, is_training=False)
            y = tf.nn.elu(y) + tf.nn.selu(y) * 0.5 - tf.math.sigmoid(y) / 2.0
            y = tf.nn.avg_pool2d(y, 3, 2, "SAME")
            a = tf.reduce_mean(y, axis=[1, 2])
            b = tf.reduce_max(y, axis=[1, 2])
            z = tf.concat([a, b], axis=-1)
            z = tf.maximum(tf.tanh(z), -0.5)
            z = tf.matmul(z, self.w2)
            return {"logits": z, "probs": tf.nn.softmax(tf.nn.leaky_relu(z, 0.1))}

    tf.saved_model.save(Zoo(), out)


def unsupported(out):
    """Uses ops x2 does not map: two Cumsum nodes and one Atan."""
    tf = _tf()

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32, name="x")])
        def __call__(self, x):
            a = tf.math.cumsum(x, axis=1)
            b = tf.math.cumsum(a, axis=1, reverse=True)
            return {"y": tf.math.atan(b) + tf.nn.relu(x)}

    tf.saved_model.save(M(), out)


def two_inputs(out):
    """Two inputs feeding one output, for pruning errors."""
    tf = _tf()

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="left"),
                                      tf.TensorSpec([None, 4], tf.float32, name="right")])
        def __call__(self, left, right):
            hidden = tf.nn.relu(left, name="left_relu")
            return {"sum": tf.add(hidden, tf.sigmoid(right), name="joined")}

    tf.saved_model.save(M(), out)


def backbone_pair(out):
    """A classifier and its own backbone (same weights), for pruning: the
    classifier goes to OUT/full, the backbone alone to OUT/backbone."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from x2.samples import randomize_batchnorm
    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input((16, 16, 3), name="image")
    x = layers.Conv2D(8, 3, padding="same", activation="relu", name="stem")(inp)
    x = layers.BatchNormalization(name="stem_bn")(x)
    feat = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="features")(x)
    head = layers.GlobalAveragePooling2D()(feat)
    out_layer = layers.Dense(4, name="head")(head)
    full = keras.Model(inp, out_layer)
    randomize_batchnorm(full)
    full.export(os.path.join(out, "full"), verbose=False)
    keras.Model(inp, feat).export(os.path.join(out, "backbone"), verbose=False)


MODELS = {f.__name__: f for f in (raw_ops, unsupported, two_inputs, backbone_pair)}

if __name__ == "__main__":
    MODELS[sys.argv[1]](sys.argv[2])
