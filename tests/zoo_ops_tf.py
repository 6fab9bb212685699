"""TensorFlow SavedModels for the ops issue 15's model zoo found unmapped:
`python tests/zoo_ops_tf.py NAME OUT_DIR` (imports TensorFlow; the tests
run it in a subprocess)."""
from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _save(fn, specs, out):
    import tensorflow as tf

    class M(tf.Module):
        @tf.function(input_signature=specs)
        def __call__(self, *args):
            return fn(*args)

    tf.saved_model.save(M(), out)


def ops(out):
    """BroadcastTo, Cumsum (plain, exclusive+reverse, int32), GatherNd (constant and
    computed indices), ScatterNd, nearest resize with half_pixel_centers,
    LogicalAnd/Or, |RFFT| (ComplexAbs of RFFT, with and without padding)."""
    import tensorflow as tf

    def fn(x):  # [2, 8, 8, 3]
        y0 = tf.broadcast_to(x[:, :1], [2, 8, 8, 3]) * x
        y1 = tf.math.cumsum(x, axis=1) + tf.math.cumsum(x, axis=2, exclusive=True, reverse=True) \
            + tf.cast(tf.math.cumsum(tf.cast(x > 0, tf.int32), axis=3, exclusive=True), tf.float32)
        picked = tf.argmax(x[:, :, 0, 0], axis=1, output_type=tf.int32)
        y2 = tf.gather_nd(x, tf.stack([tf.constant([1, 0]), picked], axis=1)) + \
            tf.gather_nd(x, [[0, 1], [1, 3]])
        y3 = tf.scatter_nd([[1], [3], [1]], tf.reshape(x[0, :3, 0, :], [3, 3]), [5, 3])
        y4 = tf.image.resize(x, [16, 24], method="nearest")
        mask = tf.logical_or(tf.logical_and(x > 0.0, x < 1.0), x < -1.0)
        y5 = tf.cast(mask, tf.float32) * x
        frames = x[:, :, :, 0]
        y6 = tf.abs(tf.signal.rfft(frames)) + tf.abs(tf.signal.rfft(frames, [10]))[:, :, :5]
        return y0, y1, y2, y3, y4, y5, y6

    _save(fn, [tf.TensorSpec([2, 8, 8, 3], tf.float32, name="x")], out)


def volume(out):
    """MaxPool3D / AvgPool3D (SAME, VALID) and Conv3D (SAME, strided) on NDHWC."""
    import numpy as np
    import tensorflow as tf
    kernel = tf.constant(np.random.default_rng(0).standard_normal((2, 3, 3, 3, 4))
                         .astype("float32"))

    def fn(v):  # [2, 4, 6, 5, 3]
        return (tf.nn.max_pool3d(v, 2, 2, "SAME"), tf.nn.avg_pool3d(v, [2, 3, 2], 1, "SAME"),
                tf.nn.avg_pool3d(v, 2, [1, 2, 2], "VALID"),
                tf.nn.conv3d(v, kernel, [1, 1, 2, 1, 1], "SAME"))

    _save(fn, [tf.TensorSpec([2, 4, 6, 5, 3], tf.float32, name="v")], out)


def window(out):
    """A Hann window and index arithmetic built by constant subgraphs (Range,
    FloorDiv, FloorMod, Cos on constants): folded before mapping."""
    import math

    import tensorflow as tf

    def fn(x):  # [2, 12]
        n = tf.range(12)
        hann = 0.5 - 0.5 * tf.cos(2 * math.pi * tf.cast(n, tf.float32) / 12.0)
        rows = tf.cast(tf.math.floordiv(n, 5) + tf.math.floormod(n, 5), tf.float32)
        return x * hann + rows

    _save(fn, [tf.TensorSpec([2, 12], tf.float32, name="x")], out)


def complex_out(out):
    """An RFFT whose complex result is the output: refused."""
    import tensorflow as tf

    def fn(x):
        return tf.signal.rfft(x)

    _save(fn, [tf.TensorSpec([2, 8], tf.float32, name="x")], out)


if __name__ == "__main__":
    globals()[sys.argv[1]](sys.argv[2])
