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
            y = tf.slice(y, [0, 0, 1, 0], [-1, 5, -1, -1])  # TF Slice: size -1 runs to the end
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
    """Uses ops x2 does not map: two Cumprod nodes and one Atan."""
    tf = _tf()

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32, name="x")])
        def __call__(self, x):
            a = tf.math.cumprod(x, axis=1)
            b = tf.math.cumprod(a, axis=1, reverse=True)
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


def keyword_inputs(out):
    """Two inputs declared out of name order (token_ids, then padding_mask),
    as keras_hub backbones take them."""
    tf = _tf()

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="token_ids"),
                                      tf.TensorSpec([None, 4], tf.float32, name="padding_mask")])
        def __call__(self, token_ids, padding_mask):
            return {"masked": tf.multiply(token_ids, padding_mask, name="masked")}

    tf.saved_model.save(M(), out)


def backbone_pair(out):
    """A classifier and its own backbone (same weights), for pruning: the
    classifier goes to OUT/full, the backbone alone to OUT/backbone."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from x2.samples import calibrate_batchnorm
    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input((16, 16, 3), name="image")
    x = layers.Conv2D(8, 3, padding="same", activation="relu", name="stem")(inp)
    x = layers.BatchNormalization(name="stem_bn")(x)
    feat = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="features")(x)
    head = layers.GlobalAveragePooling2D()(feat)
    out_layer = layers.Dense(4, name="head")(head)
    full = keras.Model(inp, out_layer)
    calibrate_batchnorm(full)
    full.export(os.path.join(out, "full"), verbose=False)
    keras.Model(inp, feat).export(os.path.join(out, "backbone"), verbose=False)


def _slim_graph(tf, np):
    """A TF-Slim-like v1 graph: variables, conv/bias/relu/pool, a backbone scope, a head."""
    rng = np.random.default_rng(2)
    v1 = tf.compat.v1
    x = v1.placeholder(tf.float32, [None, 16, 16, 3], name="input")
    labels = v1.placeholder(tf.int64, [None], name="labels")  # training-only input

    def var(name, shape, scale=0.3):
        return v1.get_variable(name, initializer=rng.normal(0, scale, shape).astype("float32"))

    with v1.variable_scope("backbone"):
        y = tf.nn.conv2d(x, var("conv1/weights", [3, 3, 3, 8]), 1, "SAME")
        y = tf.nn.relu(tf.nn.bias_add(y, var("conv1/biases", [8], 0.1)))
        y = tf.nn.max_pool2d(y, 2, 2, "VALID")
        y = tf.nn.conv2d(y, var("conv2/weights", [3, 3, 8, 8]), 1, "SAME")
        feat = tf.nn.relu(tf.nn.bias_add(y, var("conv2/biases", [8], 0.1)), name="features")
    with v1.variable_scope("head"):
        pooled = tf.reduce_mean(feat, axis=[1, 2])
        logits = tf.add(tf.matmul(pooled, var("fc/weights", [8, 5])), var("fc/biases", [5]),
                        name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    return x, feat, logits


def tf1_forms(out):
    """One TF1 graph saved as: ckpt/model.ckpt (+ .meta), ckpt_nometa/model.ckpt,
    frozen.pb (inference graph only) and saved_v1/ (SavedModelBuilder, tags serve)."""
    tf = _tf()
    import numpy as np
    v1 = tf.compat.v1
    os.makedirs(out, exist_ok=True)
    with tf.Graph().as_default() as graph, v1.Session() as sess:
        x, feat, logits = _slim_graph(tf, np)
        sess.run(v1.global_variables_initializer())
        saver = v1.train.Saver()
        saver.save(sess, os.path.join(out, "ckpt", "model.ckpt"))
        saver.save(sess, os.path.join(out, "ckpt_nometa", "model.ckpt"), write_meta_graph=False)
        frozen = v1.graph_util.convert_variables_to_constants(
            sess, graph.as_graph_def(), ["head/logits"])
        with open(os.path.join(out, "frozen.pb"), "wb") as fh:
            fh.write(frozen.SerializeToString())
        builder = v1.saved_model.Builder(os.path.join(out, "saved_v1"))
        sig = v1.saved_model.signature_def_utils.predict_signature_def(
            inputs={"images": x}, outputs={"logits": logits, "features": feat})
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             signature_def_map={"serving_default": sig})
        builder.save()


def keras_zoo():
    """Keras layers that need the wider op set (also the --model-def factory)."""
    import keras
    keras.utils.set_random_seed(3)
    L = keras.layers
    inp = keras.Input((12, 12, 3), name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu", name="stem")(inp)
    x = L.SeparableConv2D(8, 3, padding="same", name="sep")(x)
    x = L.Conv2DTranspose(6, 3, strides=2, padding="same", name="up_conv")(x)      # 24x24
    x = L.UpSampling2D(interpolation="bilinear", name="up_bilinear")(x)         # 48x48
    x = L.Conv2D(8, 3, strides=4, padding="same", name="down")(x)              # 12x12
    n = L.UpSampling2D(name="up_nearest")(x)
    n = L.MaxPooling2D(2)(n)
    x = L.Concatenate()([x, L.Multiply()([x, n])])
    x = L.LayerNormalization(name="ln")(x)
    x = L.Reshape((144, 16))(x)
    x = L.Conv1D(12, 3, padding="same", activation="tanh", name="conv1d")(x)
    x = L.Cropping1D((2, 90), name="crop")(x)
    out = L.Dense(4, name="logits")(L.Flatten()(x))
    return keras.Model(inp, out, name="keras_zoo")


def keras_forms(out):
    """keras_zoo saved as model.keras, model.h5 and a TF2 checkpoint ckpt/ck-1."""
    tf = _tf()
    model = keras_zoo()
    os.makedirs(out, exist_ok=True)
    model.save(os.path.join(out, "model.keras"))
    model.save(os.path.join(out, "model.h5"))
    tf.train.Checkpoint(model=model).write(os.path.join(out, "ckpt", "ck"))


def keras_blocks_model():
    """A functional CNN holding two functional sub-models of one builder
    (block_0, block_1: conv, batch norm, depthwise conv (multiplier 2) and
    batch norm, conv, residual), two subclassed
    layers of one class (Mixer: two 1x1 convs and a residual), a Sequential
    it calls twice (one set of weights) and a Dense head
    (x2/frontends/tf/keras_scopes.py). Also a --model-def factory."""
    tf = _tf()
    keras, L = tf.keras, tf.keras.layers
    keras.utils.set_random_seed(0)

    class Mixer(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.expand = L.Conv2D(12, 1, activation="relu", name="expand")
            self.project = L.Conv2D(6, 1, name="project")

        def build(self, shape):   # as keras_hub's blocks: variables under the block's path
            self.expand.build(shape)
            self.project.build(shape[:-1] + (12,))

        def call(self, x):
            return x + self.project(self.expand(x))

    def block(name):
        x = keras.Input((8, 8, 6))
        y = L.Conv2D(6, 3, padding="same", activation="relu", name="conv1")(x)
        y = L.BatchNormalization(name="bn")(y)
        # (a BatchNorm right after a convolution: x2 folds it into the weights)
        y = L.DepthwiseConv2D(3, padding="same", depth_multiplier=2, name="dw")(y)
        y = L.BatchNormalization(name="dw_bn")(y)
        y = L.Conv2D(6, 3, padding="same", name="conv2")(y)
        return keras.Model(x, L.Activation("relu")(L.Add()([x, y])), name=name)

    inp = keras.Input((8, 8, 3), name="image")
    x = L.Conv2D(6, 3, padding="same", name="stem")(inp)
    for i in range(2):
        x = block(f"block_{i}")(x)
    for i in range(2):
        x = Mixer(name=f"mixer_{i}")(x)
    refine = keras.Sequential([L.Conv2D(6, 1, name="mix"), L.ReLU(name="act")], name="refine")
    x = refine(refine(x))
    logits = L.Dense(5, name="head")(L.GlobalAveragePooling2D(name="pool")(x))
    return keras.Model(inp, logits, name="blocks")


def keras_blocks(out):
    """OUT/ckpt/ck: keras_blocks_model's weights (a TF2 checkpoint, read with
    --model-def tests/tf_models.py:keras_blocks_model; its subclassed layers
    need no registration that way); OUT/saved: the model exported as a
    SavedModel. OUT/new_weights: other weights for it (BatchNorm variances
    positive) saved by `model.save_weights` as new.weights.h5, a random NHWC
    batch of 8 x 8 images (x.npy) and the model's outputs on it with those
    weights (want.npy). OUT/plain.keras: a flat functional CNN."""
    tf = _tf()
    import numpy as np
    keras, L = tf.keras, tf.keras.layers
    model = keras_blocks_model()
    os.makedirs(out, exist_ok=True)
    tf.train.Checkpoint(model=model).write(os.path.join(out, "ckpt", "ck"))
    model.export(os.path.join(out, "saved"), verbose=False)
    rng = np.random.default_rng(7)
    for v in model.weights:
        values = rng.normal(0, 0.4, tuple(v.shape)).astype("float32")
        v.assign(np.abs(values) + 0.5 if v.path.endswith("variance") else values)
    new = os.path.join(out, "new_weights")
    os.makedirs(new)
    x = rng.normal(size=(2, 8, 8, 3)).astype("float32")
    np.save(os.path.join(new, "x.npy"), x)
    np.save(os.path.join(new, "want.npy"), np.asarray(model(x, training=False)))
    model.save_weights(os.path.join(new, "new.weights.h5"))
    inp = keras.Input((8, 8, 3), name="image")
    x = L.Conv2D(4, 3, name="conv")(inp)
    flat = keras.Model(inp, L.Dense(3, name="head")(L.Flatten()(L.ReLU()(x))), name="plain")
    flat.save(os.path.join(out, "plain.keras"))


def two_signatures(out):
    """A SavedModel with two signatures using array/math ops (Split, Tile, Gather, ...)."""
    tf = _tf()
    import numpy as np
    rng = np.random.default_rng(4)

    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable(rng.normal(0, 0.5, (6, 6)).astype("float32"))

        @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32, name="x")])
        def mix(self, x):
            a, b, c = tf.split(x, [2, 1, 3], axis=1)
            t = tf.tile(b, [1, 2])
            g = tf.gather(x, [5, 0, 3], axis=1)
            u = tf.unstack(tf.reshape(x, [-1, 2, 3]), axis=1)
            s = tf.stack([a, t], axis=1)
            y = tf.concat([g * tf.sqrt(tf.square(c) + 1.0), u[0] - u[1],
                           tf.reduce_sum(s, axis=1), tf.transpose(s, [0, 2, 1])[:, :, 0]], 1)
            y = tf.where(y > 0.1, tf.exp(-tf.abs(y)), tf.math.softplus(y))
            y = tf.maximum(tf.minimum(y, 2.0), -2.0) + tf.pow(tf.abs(y) + 1.0, 0.5)
            z = tf.einsum("bi,ij->bj", x, self.w)
            return {"mixed": y, "proj": tf.math.log(tf.abs(z) + 1.0)}

        @tf.function(input_signature=[tf.TensorSpec([None, 4, 4, 8], tf.float32, name="image")])
        def shuffle(self, image):
            d = tf.nn.space_to_depth(image, 2)
            e = tf.nn.depth_to_space(d * 2.0, 2)
            idx = tf.argmax(tf.reduce_mean(d, axis=[1, 2]), axis=-1)
            return {"pixels": e + tf.cast(image > 0, tf.float32), "top": tf.cast(idx, tf.float32)
                    + tf.reduce_prod(tf.ones_like(image[:, 0, 0, :2]) * 1.5, axis=1)}

    m = M()
    tf.saved_model.save(m, out, signatures={"serving_default": m.mix, "shuffle": m.shuffle})


def malicious_keras(out):
    """A Keras model whose Lambda writes OUT/pwned when executed; saved as .keras and .h5.
    The marker written while building is removed again."""
    _tf()
    import keras
    marker = os.path.join(out, "pwned")
    os.makedirs(out, exist_ok=True)
    evil = eval(f"lambda x: x + 0.0 * float(open({marker!r}, 'w').write('ran') or 0)")
    inp = keras.Input((4,), name="x")
    y = keras.layers.Dense(3)(keras.layers.Lambda(evil, name="evil")(inp))
    model = keras.Model(inp, y)
    model.save(os.path.join(out, "evil.keras"))
    model.save(os.path.join(out, "evil.h5"))
    if os.path.exists(marker):
        os.remove(marker)


def dense3d_model():
    """Keras Dense on a (batch, seq, features) input (Tensordot's runtime shape chain)."""
    import keras
    keras.utils.set_random_seed(5)
    L = keras.layers
    inp = keras.Input((6, 8), name="tokens")
    x = L.Dense(12, activation="gelu", name="proj")(inp)
    x = L.Dense(4, activation="hard_sigmoid", name="out")(x)
    return keras.Model(inp, x, name="dense3d")


def tf_extras(out):
    """OUT/dense3d.keras (dense3d_model) and OUT/saved, a SavedModel running that Keras
    model, LRN, TopKV2 and einsum forms ('bhqd,bhkd->bhqk', 'abc,cd->abd')."""
    tf = _tf()
    import numpy as np
    rng = np.random.default_rng(6)
    model = dense3d_model()
    os.makedirs(out, exist_ok=True)
    model.save(os.path.join(out, "dense3d.keras"))

    class M(tf.Module):
        def __init__(self):
            self.model = model
            self.w = tf.constant(rng.normal(0, 0.5, (3, 3, 3, 8)).astype("float32"))
            self.p = tf.constant(rng.normal(0, 0.5, (4, 5)).astype("float32"))

        @tf.function(input_signature=[tf.TensorSpec([None, 6, 8], tf.float32, name="tokens"),
                                      tf.TensorSpec([None, 6, 6, 3], tf.float32, name="image")])
        def __call__(self, tokens, image):
            seq = self.model(tokens)                                        # (b, 6, 4)
            heads = tf.reshape(tokens, [-1, 6, 2, 4])                       # (b, 6, 2, 4)
            heads = tf.transpose(heads, [0, 2, 1, 3])                       # (b, 2, 6, 4)
            att = tf.einsum("bhqd,bhkd->bhqk", heads, heads)                # (b, 2, 6, 6)
            proj = tf.einsum("abc,cd->abd", seq, self.p)                    # (b, 6, 5)
            values, indices = tf.math.top_k(proj, k=3)
            y = tf.nn.conv2d(image, self.w, 1, "SAME")
            y = tf.nn.local_response_normalization(y, depth_radius=2, bias=1.5, alpha=0.3,
                                                   beta=0.75)
            return {"top_values": values, "top_indices": tf.cast(indices, tf.float32),
                    "lrn": y, "att": tf.reduce_mean(att, axis=1), "seq": seq}

    tf.saved_model.save(M(), os.path.join(out, "saved"))


def control_flow(out):
    """A tf.cond inside the signature on a value known only at run time."""
    tf = _tf()

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def __call__(self, x):
            y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
            return {"y": tf.nn.relu(y)}

    tf.saved_model.save(M(), out)


def attention(out):
    """Transformer pieces as users export them: Keras MultiHeadAttention
    (EinsumDense projections, score/value einsums), Embedding, LayerNorm
    -> OUT/keras; and a tf.Module with more einsum forms -> OUT/einsums."""
    import keras
    from keras import layers
    tf = _tf()
    keras.utils.set_random_seed(0)
    tokens = keras.Input((10,), dtype="int32", name="tokens")
    x = layers.Embedding(50, 16)(tokens)
    x = layers.MultiHeadAttention(num_heads=2, key_dim=8)(x, x) + x
    x = layers.LayerNormalization()(x)
    x = layers.GlobalAveragePooling1D()(x)
    keras.Model(tokens, layers.Dense(3)(x)).export(os.path.join(out, "keras"), verbose=False)

    class M(tf.Module):
        def __init__(self):
            self.w = tf.Variable(tf.random.normal([6, 2, 3]))
            self.v = tf.Variable(tf.random.normal([2, 3, 4]))

        @tf.function(input_signature=[tf.TensorSpec([None, 5, 6], tf.float32, name="x")])
        def __call__(self, x):
            q = tf.einsum("abc,cde->abde", x, self.w)          # projection, grouped free dims
            scores = tf.einsum("aecd,abcd->acbe", q, q)        # attention scores
            mixed = tf.einsum("acbe,aecd->abcd", scores, q)    # attention values
            back = tf.einsum("abcd,cde->abe", mixed, self.v)   # output projection
            dots = tf.einsum("ij,ij->i", x[:, 0, :], x[:, 1, :])  # row-wise dot products
            outer = tf.einsum("bi,bj->bij", x[:, 0, :], x[:, 2, :])
            summed = tf.einsum("abc,cd->ad", x, self.w[:, 0, :])  # b summed out first
            return {"back": back, "dots": dots, "outer": outer, "summed": summed}

    tf.saved_model.save(M(), os.path.join(out, "einsums"))


def hostile_names(out):
    """OUT/hostile: a SavedModel whose function node names carry Python code:
    every node of the library functions is renamed (references updated) to
    `n<i>` + a line break + `__import__("os").system("touch OUT/pwned")`.
    TensorFlow itself refuses such names; the direct reader must read them
    as data. OUT/clean: the same model unchanged (TensorFlow runs it)."""
    tf = _tf()
    import numpy as np
    from tensorflow.core.protobuf import saved_model_pb2

    class M(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(0)
            self.w = tf.Variable(rng.standard_normal((6, 4)).astype("float32"))
            self.b = tf.Variable(rng.standard_normal(4).astype("float32"))

        @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32, name="x")])
        def __call__(self, x):
            return {"y": tf.nn.relu(tf.matmul(x, self.w) + self.b) - tf.sigmoid(x[:, :4])}

    module = M()
    tf.saved_model.save(module, os.path.join(out, "clean"))
    tf.saved_model.save(module, os.path.join(out, "hostile"))
    path = os.path.join(out, "hostile", "saved_model.pb")
    model = saved_model_pb2.SavedModel()
    with open(path, "rb") as fh:
        model.ParseFromString(fh.read())
    marker = os.path.join(os.path.abspath(out), "pwned")
    for function in model.meta_graphs[0].graph_def.library.function:
        renamed = {}
        for i, node in enumerate(function.node_def):
            renamed[node.name] = (f'n{i}\n        __import__("os").system("touch {marker}")'
                                  f'\r\n        #\x00"""')
            node.name = renamed[node.name]

        def fix(ref):
            head, sep, rest = ref.partition(":")
            control = head.startswith("^")
            head = head.lstrip("^")
            return ("^" if control else "") + renamed.get(head, head) + sep + rest

        for node in function.node_def:
            node.input[:] = [fix(r) for r in node.input]
        for key in list(function.ret):
            function.ret[key] = fix(function.ret[key])
        for key in list(function.control_ret):
            function.control_ret[key] = renamed.get(function.control_ret[key],
                                                    function.control_ret[key])
    with open(path, "wb") as fh:
        fh.write(model.SerializeToString())


def finetune_cnn(out):
    """A small Keras CNN with BatchNorm (random init, random BatchNorm
    statistics, a shallow net so the output still depends on the image), for
    --for training; OUT/trainable.json holds its trainable parameter count."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import json
    import keras
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from x2.samples import randomize_batchnorm
    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input((12, 12, 3), name="image")
    x = layers.Conv2D(8, 3, padding="same", name="conv1")(inp)
    x = layers.ReLU()(layers.BatchNormalization(name="bn1")(x))
    x = layers.Conv2D(8, 3, strides=2, padding="same", use_bias=False, name="conv2")(x)
    x = layers.ReLU()(layers.BatchNormalization(name="bn2")(x))
    x = layers.GlobalAveragePooling2D()(x)
    model = keras.Model(inp, layers.Dense(4, name="head")(x))
    randomize_batchnorm(model)
    model.export(out, verbose=False)
    count = int(sum(v.numpy().size for v in model.trainable_variables))
    with open(os.path.join(out, "trainable.json"), "w") as fh:
        json.dump({"trainable": count}, fh)


def finetune_groupnorm(out):
    """A Keras CNN with GroupNormalization (random gamma and beta), for --for
    training; OUT/trainable.json holds its trainable parameter count."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import json
    import keras
    import numpy as np
    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input((8, 8, 3), name="image")
    x = layers.Conv2D(8, 3, padding="same", name="conv1")(inp)
    norm = layers.GroupNormalization(groups=2, name="gn")
    x = layers.ReLU()(norm(x))
    model = keras.Model(inp, layers.Conv2D(4, 1, name="head")(x))
    rng = np.random.default_rng(0)
    norm.gamma.assign(rng.uniform(0.5, 1.5, 8).astype("float32"))
    norm.beta.assign(rng.normal(0, 0.1, 8).astype("float32"))
    model.export(out, verbose=False)
    count = int(sum(v.numpy().size for v in model.trainable_variables))
    with open(os.path.join(out, "trainable.json"), "w") as fh:
        json.dump({"trainable": count}, fh)


def keras_dropout(out):
    """Keras Dropout layers in files, for --for training: mlp.keras (Dense,
    Dropout(0.25), Dense on (N, 8)) and cnn.h5 (Conv2D, Dropout(0.25),
    SpatialDropout2D(0.5), pooling, Dense on (N, 6, 6, 3))."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    keras.utils.set_random_seed(0)
    layers = keras.layers
    os.makedirs(out, exist_ok=True)
    inp = keras.Input((8,), name="x")
    x = layers.Dense(16, activation="relu", name="fc1")(inp)
    x = layers.Dense(4, name="fc2")(layers.Dropout(0.25, name="drop")(x))
    keras.Model(inp, x).save(os.path.join(out, "mlp.keras"))
    inp = keras.Input((6, 6, 3), name="image")
    x = layers.Conv2D(8, 3, activation="relu", name="conv")(inp)
    x = layers.SpatialDropout2D(0.5, name="channels")(layers.Dropout(0.25, name="drop")(x))
    x = layers.Dense(3, name="head")(layers.GlobalAveragePooling2D()(x))
    keras.Model(inp, x).save(os.path.join(out, "cnn.h5"))


def finetune_transformer(out):
    """A Keras transformer block as people write one (random init): token and
    position embeddings, MultiHeadAttention with a residual, LayerNorm, a
    GELU feed-forward, a swish projection and a dense head, for --for
    training; OUT/trainable.json holds its trainable parameter count."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import json
    import keras
    keras.utils.set_random_seed(0)
    layers = keras.layers
    tokens = keras.Input((8,), dtype="int32", name="tokens")
    x = layers.Embedding(40, 16, name="embed")(tokens)
    x = layers.LayerNormalization(name="norm1")(
        x + layers.MultiHeadAttention(num_heads=2, key_dim=8, name="attn")(x, x))
    hidden = layers.Dense(32, activation="gelu", name="ffn_up")(x)
    x = layers.LayerNormalization(name="norm2")(x + layers.Dense(16, name="ffn_down")(hidden))
    x = layers.Dense(16, activation="swish", name="proj")(layers.GlobalAveragePooling1D()(x))
    model = keras.Model(tokens, layers.Dense(4, name="head")(x))
    model.export(out, verbose=False)
    count = int(sum(v.numpy().size for v in model.trainable_variables))
    with open(os.path.join(out, "trainable.json"), "w") as fh:
        json.dump({"trainable": count}, fh)


def mobilenet_bn_pair(out):
    """A small MobileNetV2 twice: OUT/random_bn with random BatchNorm
    statistics (its logits barely depend on the image: a vacuous reference)
    and OUT/calibrated_bn with statistics from a batch of data."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from x2.samples import calibrate_batchnorm, randomize_batchnorm
    for name, set_statistics in (("random_bn", randomize_batchnorm),
                                 ("calibrated_bn", calibrate_batchnorm)):
        keras.utils.set_random_seed(0)
        model = keras.applications.MobileNetV2(weights=None, alpha=0.35,
                                               input_shape=(64, 64, 3), classes=10,
                                               classifier_activation=None)
        set_statistics(model)
        model.export(os.path.join(out, name), verbose=False)


# Keras recurrent layers (TF While loops over TensorLists) the direct reader
# unrolls: name -> (input kind, layer factory); "tokens" is Embedding input.
RNN_SEQ = 7


def _rnn_layers(L):
    return {
        "lstm": ("float", lambda: L.LSTM(6)),
        "lstm_seq": ("float", lambda: L.LSTM(5, return_sequences=True)),
        "gru": ("tokens", lambda: L.GRU(6)),
        "gru_reset_before": ("float", lambda: L.GRU(6, reset_after=False)),
        "simple_rnn": ("float", lambda: L.SimpleRNN(6, return_sequences=True)),
        "gru_backwards": ("float", lambda: L.GRU(5, go_backwards=True, return_sequences=True)),
        "bilstm": ("tokens", lambda: L.Bidirectional(L.LSTM(4, return_sequences=True))),
        "bigru_sum": ("float", lambda: L.Bidirectional(L.GRU(4), merge_mode="sum")),
        "lstm_state": ("float", lambda: L.LSTM(4, return_state=True)),
        "lstm_masked": ("masked", lambda: L.LSTM(4)),
    }


def keras_rnn(name: str):
    import keras
    keras.utils.set_random_seed(7)
    L = keras.layers
    kind, layer = _rnn_layers(L)[name]
    if kind in ("tokens", "masked"):  # token 0 is padding when masked
        inp = keras.Input((RNN_SEQ,), dtype="int32", name="tokens")
        x = L.Embedding(20, 5, embeddings_initializer=keras.initializers.RandomNormal(stddev=1.0),
                        mask_zero=kind == "masked")(inp)
    else:
        inp = keras.Input((RNN_SEQ, 3), name="x")
        x = inp
    y = layer()(x)
    if isinstance(y, (list, tuple)):  # return_state: output, h, c (output is h: one tensor)
        return keras.Model(inp, [L.Dense(3, name="head")(y[0]), *y], name=name)
    return keras.Model(inp, L.Dense(3, name="head")(y), name=name)


def keras_rnns(out):
    """Every Keras RNN variant of _rnn_layers as OUT/<name> (a SavedModel)."""
    _tf()
    import keras
    for name in _rnn_layers(keras.layers):
        keras_rnn(name).export(os.path.join(out, name), verbose=False)
    # A masked LSTM (not an nn.LSTM) over a dynamic sequence length: not unrollable.
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(20, 5, mask_zero=True)(tokens)
    keras.Model(tokens, keras.layers.LSTM(4)(x)).export(os.path.join(out, "dynamic_masked"),
                                                        verbose=False)


def tf_loops(out):
    """Functional control flow outside Keras, as three SavedModels:
    OUT/static: a tf.while_loop of 5 steps writing a TensorArray and a tf.cond
      on a static dim (both unrollable);
    OUT/long: a tf.while_loop of 5000 steps (more than x2 unrolls);
    OUT/dynamic: a tf.while_loop whose trip count is an input value;
    OUT/runtime: a tf.while_loop that runs until a value computed from the
      input (through a variable) passes an input limit, then a tf.cond on the
      result's sign."""
    tf = _tf()

    def halve(y, steps, name):
        return tf.while_loop(lambda i, y: i < steps, lambda i, y: (i + 1, y * 0.5 + 1.0),
                             (tf.constant(0), y), name=name)[1]

    class Static(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def __call__(self, x):
            steps = tf.TensorArray(tf.float32, size=5)
            state = x
            for i in tf.range(5):  # autograph: a While over a TensorArray (TensorList)
                state = tf.tanh(state * 1.5 + tf.cast(i, tf.float32) * 0.1)
                steps = steps.write(i, state)
            seq = tf.transpose(steps.stack(), [1, 0, 2])
            y = tf.cond(tf.shape(x)[1] > 2, lambda: x * 2.0, lambda: x - 1.0)
            return {"seq": seq, "y": y + halve(x, 3, "halve")}

    class Long(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x")])
        def __call__(self, x):
            return {"y": halve(x, 5000, "long")}

    class Dynamic(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.int32, name="steps")])
        def __call__(self, x, steps):
            return {"y": halve(x, steps, "halve")}

    class Runtime(tf.Module):
        def __init__(self):
            import numpy as np
            self.w = tf.Variable(np.random.default_rng(0).standard_normal((3, 3))
                                 .astype("float32") * 0.5)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.float32, name="limit")])
        def __call__(self, x, limit):
            def cond(i, h):
                return tf.reduce_sum(tf.abs(h)) < limit

            def body(i, h):
                return i + 1, tf.tanh(tf.matmul(h, self.w) + x) * 1.5

            steps, h = tf.while_loop(cond, body, (tf.constant(0), x))
            y = tf.cond(tf.reduce_mean(h) > 0, lambda: h * 2.0 + tf.cast(steps, tf.float32),
                        lambda: tf.nn.relu(-h) - 1.0)
            return {"y": y, "steps": steps}

    for name, module in (("static", Static()), ("long", Long()), ("dynamic", Dynamic()),
                         ("runtime", Runtime())):
        tf.saved_model.save(module, os.path.join(out, name))

def tf_switch_case(out):
    """OUT: a SavedModel with a tf.switch_case on an input index (three branches,
    one reading a variable), plus one on an index known from a static dim."""
    tf = _tf()

    class SwitchCase(tf.Module):
        def __init__(self):
            import numpy as np
            self.w = tf.Variable(np.random.default_rng(1).standard_normal((3, 3))
                                 .astype("float32") * 0.5)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                      tf.TensorSpec([], tf.int32, name="index")])
        def __call__(self, x, index):
            y = tf.switch_case(index, [lambda: tf.matmul(x, self.w) + 1.0,
                                       lambda: tf.tanh(x) * 2.0,
                                       lambda: x * x - 1.0])
            # tf.shape(x)[1] - 2 is 1 when the model is read: the relu branch only.
            z = tf.switch_case(tf.shape(x)[1] - 2, [lambda: x * 3.0, lambda: tf.nn.relu(x)])
            return {"y": y + z}

    tf.saved_model.save(SwitchCase(), out)


def keras_text_rnn(out):
    """Issue 16's Keras sequence models: OUT/text (SavedModel) and OUT/text.keras,
    Embedding -> Bidirectional(LSTM) -> GRU -> Dense; OUT/stacked, two LSTMs with
    return_sequences; OUT/text_dynamic and OUT/stacked_dynamic, the same over a
    dynamic sequence length, and OUT/backwards_dynamic, OUT/reset_before_dynamic,
    GRUs with go_backwards and with reset_after=False over one."""
    _tf()
    import keras
    keras.utils.set_random_seed(3)
    L = keras.layers
    os.makedirs(out)

    def text_model(length):
        tokens = keras.Input((length,), dtype="int32", name="tokens")
        x = L.Embedding(30, 8, embeddings_initializer=keras.initializers.RandomNormal(
            stddev=1.0))(tokens)
        x = L.Bidirectional(L.LSTM(6, return_sequences=True))(x)
        return keras.Model(tokens, L.Dense(3, name="logits")(L.GRU(5)(x)))

    def stacked_model(length):
        inp = keras.Input((length, 4), name="x")
        y = L.LSTM(5, return_sequences=True)(L.LSTM(7, return_sequences=True)(inp))
        return keras.Model(inp, L.Dense(2)(y))

    def gru_model(**kwargs):
        inp = keras.Input((None, 4), name="x")
        return keras.Model(inp, L.Dense(2)(L.GRU(5, return_sequences=True, **kwargs)(inp)))

    text = text_model(9)
    text.export(os.path.join(out, "text"), verbose=False)
    text.save(os.path.join(out, "text.keras"))
    stacked_model(6).export(os.path.join(out, "stacked"), verbose=False)
    text_model(None).export(os.path.join(out, "text_dynamic"), verbose=False)
    stacked_model(None).export(os.path.join(out, "stacked_dynamic"), verbose=False)
    gru_model(go_backwards=True).export(os.path.join(out, "backwards_dynamic"), verbose=False)
    gru_model(reset_after=False).export(os.path.join(out, "reset_before_dynamic"),
                                        verbose=False)

    class LookAlikeCell(L.Layer):
        """An LSTM cell's weights and gates, but h = o * c (no tanh): not an LSTM."""
        state_size = [4, 4]

        def build(self, shape):
            self.kernel = self.add_weight(shape=(shape[-1], 16), initializer="glorot_uniform")
            self.recurrent_kernel = self.add_weight(shape=(4, 16), initializer="orthogonal")
            self.bias = self.add_weight(shape=(16,), initializer="random_normal")

        def call(self, x, states):
            h, c = states
            z = keras.ops.matmul(x, self.kernel) + keras.ops.matmul(h, self.recurrent_kernel)
            i, f, g, o = keras.ops.split(z + self.bias, 4, axis=-1)
            c = keras.ops.sigmoid(f) * c + keras.ops.sigmoid(i) * keras.ops.tanh(g)
            h = keras.ops.sigmoid(o) * c
            return h, [h, c]

    inp = keras.Input((6, 3), name="x")
    keras.Model(inp, L.RNN(LookAlikeCell())(inp)).export(os.path.join(out, "lookalike"),
                                                         verbose=False)


class _V1LSTMCell:
    """tf.compat.v1's LSTMCell math (Keras 3 removed the class; dynamic_rnn
    takes any object with these members): gates i, j, f, o, forget bias 1."""

    def __init__(self, tf, units: int, features: int):
        import numpy as np
        v1 = tf.compat.v1
        rng = np.random.default_rng(1)
        self.tf, self.units = tf, units
        self.kernel = v1.get_variable("kernel", initializer=(rng.standard_normal(
            (features + units, 4 * units)) * 0.5).astype("float32"))
        self.bias = v1.get_variable("bias", initializer=(rng.standard_normal(4 * units) * 0.1)
                                    .astype("float32"))

    output_size = property(lambda self: self.units)
    state_size = property(lambda self: (self.units, self.units))

    def zero_state(self, batch, dtype):
        zeros = self.tf.zeros([batch, self.units], dtype)
        return (zeros, zeros)

    def __call__(self, x, state, scope=None):
        tf = self.tf
        c, h = state
        i, j, f, o = tf.split(tf.matmul(tf.concat([x, h], 1), self.kernel) + self.bias, 4, axis=1)
        c = tf.sigmoid(f + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, (c, h)


def tf_v1_control(out):
    """TF1 dataflow control flow (Switch/Merge/Enter/Exit, TensorArrayV3), as
    tf.compat.v1 graph mode writes it:
    OUT/runtime.pb (frozen), OUT/ckpt/model.ckpt (+ .meta), OUT/saved_v1: a
      tf.while_loop run until a value computed from x (through a variable)
      passes the input limit, then a tf.cond on the result's sign;
    OUT/rnn.pb: dynamic_rnn over an LSTM cell, unknown batch and time dims;
    OUT/nested.pb: a tf.cond on the state inside a while loop of `steps` steps;
    OUT/growing.pb: a loop whose state gains a row per step (and reads its size);
    OUT/strided_write.pb: a loop writing a TensorArray at 2 * its counter;
    OUT/exit_without_enter.pb: an Exit node with no loop around it (malformed)."""
    tf = _tf()
    import numpy as np
    v1 = tf.compat.v1
    v1.disable_control_flow_v2()
    os.makedirs(out, exist_ok=True)

    def save(graph, sess, name, outputs):
        frozen = v1.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), outputs)
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(frozen.SerializeToString())

    with tf.Graph().as_default() as graph, v1.Session() as sess:
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        limit = v1.placeholder(tf.float32, [], name="limit")
        w = v1.get_variable("w", initializer=(np.random.default_rng(0).standard_normal((3, 3))
                                              * 0.5).astype("float32"))
        steps, h = tf.while_loop(lambda i, h: tf.reduce_sum(tf.abs(h)) < limit,
                                 lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + x) * 1.5),
                                 (tf.constant(0), x))
        y = tf.cond(tf.reduce_mean(h) > 0, lambda: h * 2.0 + tf.cast(steps, tf.float32),
                    lambda: tf.nn.relu(-h) - 1.0)
        y, steps = tf.identity(y, name="y"), tf.identity(steps, name="steps")
        sess.run(v1.global_variables_initializer())
        save(graph, sess, "runtime.pb", ["y", "steps"])
        v1.train.Saver().save(sess, os.path.join(out, "ckpt", "model.ckpt"))
        builder = v1.saved_model.Builder(os.path.join(out, "saved_v1"))
        sig = v1.saved_model.signature_def_utils.predict_signature_def(
            inputs={"x": x, "limit": limit}, outputs={"y": y, "steps": steps})
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             signature_def_map={"serving_default": sig})
        builder.save()

    with tf.Graph().as_default() as graph, v1.Session() as sess:
        x = v1.placeholder(tf.float32, [None, None, 3], name="x")
        seq, (c, _h) = v1.nn.dynamic_rnn(_V1LSTMCell(tf, 4, 3), x, dtype=tf.float32)
        tf.identity(seq, name="y"), tf.identity(c, name="c")
        sess.run(v1.global_variables_initializer())
        save(graph, sess, "rnn.pb", ["y", "c"])

    with tf.Graph().as_default() as graph, v1.Session() as sess:
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        n = v1.placeholder(tf.int32, [], name="steps")
        w = v1.get_variable("w", initializer=(np.random.default_rng(2).standard_normal((3, 3))
                                              * 0.7).astype("float32"))

        def body(i, h):
            h = tf.cond(tf.reduce_sum(h) > 1.0, lambda: h * 0.5 - 0.2,
                        lambda: tf.tanh(tf.matmul(h, w)) + 1.0)
            return i + 1, h
        _, h = tf.while_loop(lambda i, h: i < n, body, (tf.constant(0), x))
        tf.identity(h, name="y")
        sess.run(v1.global_variables_initializer())
        save(graph, sess, "nested.pb", ["y"])

    with tf.Graph().as_default() as graph, v1.Session() as sess:
        x = v1.placeholder(tf.float32, [2, 3], name="x")
        n = v1.placeholder(tf.int32, [], name="steps")

        def grow(i, h):
            row = h[:1] * 0.5 + tf.cast(tf.shape(h)[0], tf.float32)
            return i + 1, tf.concat([h, row], 0)
        _, h = tf.while_loop(lambda i, h: i < n, grow, (tf.constant(0), x),
                             shape_invariants=(tf.TensorShape([]), tf.TensorShape([None, 3])))
        tf.identity(tf.reduce_sum(h, 0), name="y")
        save(graph, sess, "growing.pb", ["y"])

    with tf.Graph().as_default() as graph, v1.Session() as sess:
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        ta = tf.TensorArray(tf.float32, size=10)
        _, ta = tf.while_loop(lambda i, ta: i < 5, lambda i, ta: (i + 1, ta.write(i * 2, x)),
                              (tf.constant(0), ta))
        tf.identity(ta.stack(), name="y")
        save(graph, sess, "strided_write.pb", ["y"])

    with tf.Graph().as_default() as graph:
        x = v1.placeholder(tf.float32, [None, 3], name="x")
        graph_def = graph.as_graph_def()
        lost = graph_def.node.add(name="lost/Exit", op="Exit", input=["x"])
        lost.attr["T"].type = tf.float32.as_datatype_enum
        y = graph_def.node.add(name="y", op="Identity", input=["lost/Exit"])
        y.attr["T"].type = tf.float32.as_datatype_enum
        with open(os.path.join(out, "exit_without_enter.pb"), "wb") as fh:
            fh.write(graph_def.SerializeToString())


def padded_stems(out):
    """ResNet's stem (ZeroPadding2D before a MaxPool of ReLU output: the pad is
    the pool's padding) beside a pad x2 cannot fold (before a MaxPool of values
    that may be negative): Paddle Inference's oneDNN pad kernel crashed on the
    explicit 8-value form x2 once wrote for both."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    keras.utils.set_random_seed(0)
    layers = keras.layers
    inp = keras.Input((16, 16, 3), name="image")
    x = layers.ReLU()(layers.Conv2D(8, 3, strides=2, padding="same", name="conv1")(inp))
    folded = layers.MaxPooling2D(3, 2)(layers.ZeroPadding2D(1)(x))
    y = layers.Conv2D(8, 1, name="conv2")(x)
    kept = layers.MaxPooling2D(3, 2)(layers.ZeroPadding2D(((1, 2), (0, 1)))(y))
    pooled = [layers.GlobalAveragePooling2D()(t) for t in (folded, kept)]
    keras.Model(inp, layers.Dense(4, name="head")(layers.Concatenate()(pooled))).export(
        out, verbose=False)


def fully_convolutional(out):
    """A Keras net over images of any size (None, None, 3): SAME convolutions
    of stride 1 and a global pool; BatchNorm statistics that respond to data."""
    tf = _tf()
    import numpy as np
    keras, layers = tf.keras, tf.keras.layers
    inp = keras.Input((None, None, 3), name="image")
    y = layers.Conv2D(8, 3, padding="same")(inp)
    norm = layers.BatchNormalization()
    y = layers.ReLU()(norm(y))
    y = layers.Conv2D(6, 5, padding="same")(y)
    y = layers.Conv2D(4, 1, strides=2, padding="same")(y)
    y = layers.MaxPooling2D(3, strides=1, padding="same")(y)
    model = keras.Model(inp, layers.Dense(3)(layers.GlobalAveragePooling2D()(y)))
    rng = np.random.default_rng(0)
    norm.moving_mean.assign(rng.uniform(-0.5, 0.5, 8).astype("float32"))
    norm.moving_variance.assign(rng.uniform(0.5, 1.5, 8).astype("float32"))
    model.export(out, verbose=False)


def any_size_images(out):
    """Keras models over images of any size ((None, None, 3) inputs), each in
    OUT/NAME: `mobilenet_v2`, a small MobileNetV2 (alpha 0.35, no top: its
    feature map), whose stride-2 SAME convolutions pad by amounts that depend
    on the size, with BatchNorm statistics from a batch of data; and
    `preprocessing`, Rescaling, Normalization, then a bilinear Resizing to
    20 x 24 read by a stride-2 SAME convolution, and stride-2 SAME depthwise
    convolution, max and average pooling over the image at its own size."""
    tf = _tf()
    keras, layers = tf.keras, tf.keras.layers
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from x2.samples import calibrate_batchnorm
    keras.utils.set_random_seed(0)
    model = keras.applications.MobileNetV2(weights=None, alpha=0.35, include_top=False,
                                           input_shape=(None, None, 3))
    calibrate_batchnorm(model)
    model.export(os.path.join(out, "mobilenet_v2"), verbose=False)
    image = keras.Input((None, None, 3), name="image")
    x = layers.Rescaling(1 / 127.5, offset=-1)(image)
    x = layers.Normalization(mean=[0.1, -0.2, 0.3], variance=[0.5, 1.5, 2.0])(x)
    features = layers.Conv2D(4, 3, strides=2, padding="same")(layers.Resizing(20, 24)(x))
    windows = layers.DepthwiseConv2D(3, strides=2, padding="same", depth_multiplier=2)(x)
    windows = layers.MaxPooling2D(3, strides=2, padding="same")(windows)
    windows = layers.AveragePooling2D(3, strides=2, padding="same")(windows)
    keras.Model(image, [features, windows]).export(
        os.path.join(out, "preprocessing"), verbose=False)


def token_attention(out):
    """A Keras text model over token rows of any length (None,): embedding,
    self-attention with a padding mask (MultiHeadAttention's einsums over the
    unknown batch and length), a residual LayerNorm and a per-token Dense."""
    tf = _tf()
    keras, layers = tf.keras, tf.keras.layers
    tf.keras.utils.set_random_seed(0)
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    mask = keras.Input((None,), dtype="int32", name="attention_mask")
    x = layers.Embedding(50, 16)(tokens)
    keep = layers.Lambda(lambda m: tf.cast(m[:, None, :], "bool"))(mask)
    attended = layers.MultiHeadAttention(num_heads=2, key_dim=8)(x, x, attention_mask=keep)
    x = layers.LayerNormalization()(x + attended)
    model = keras.Model([tokens, mask], layers.Dense(5)(x))
    model.export(out, verbose=False)


def class_token(out):
    """A ViT-style class token tiled over a batch of any size (Tile by
    multiples computed from the input's shape), then joined to the tokens."""
    tf = _tf()

    class ClassToken(tf.Module):
        def __init__(self):
            super().__init__()
            self.token = tf.Variable(tf.random.stateless_normal((1, 1, 4), seed=(0, 1)))

        @tf.function(input_signature=[tf.TensorSpec((None, 3, 4), tf.float32, name="tokens")])
        def __call__(self, tokens):
            tiled = tf.tile(self.token, tf.stack([tf.shape(tokens)[0], 1, 1]))
            return {"joined": tf.concat([tiled, tokens], axis=1) * 2.0}

    module = ClassToken()
    tf.saved_model.save(module, out, signatures=module.__call__)


def spectrogram(out):
    """A log-magnitude STFT over audio of any length (tf.signal.stft in a
    tf.Module: frames cut to a whole number of hops at run time, FloorDiv,
    StridedSlice to a computed end, a Hann window, |RFFT|), then a dense
    projection of the frequency bins."""
    tf = _tf()

    class Spectrogram(tf.Module):
        def __init__(self):
            super().__init__()
            self.mel = tf.Variable(tf.random.stateless_uniform((129, 8), seed=(0, 2)))

        @tf.function(input_signature=[tf.TensorSpec((None, None), tf.float32, name="audio")])
        def __call__(self, audio):
            stft = tf.signal.stft(audio, frame_length=200, frame_step=80, fft_length=256)
            return {"features": tf.math.log(tf.abs(stft) @ self.mel + 1.0)}

    module = Spectrogram()
    tf.saved_model.save(module, out, signatures=module.__call__)


MODELS = {f.__name__: f for f in (spectrogram, keyword_inputs, fully_convolutional, any_size_images, token_attention, class_token, padded_stems, tf_v1_control, raw_ops, mobilenet_bn_pair, finetune_cnn, finetune_groupnorm,
                                  keras_dropout,
                                  finetune_transformer, unsupported, two_inputs,
                                  backbone_pair, tf1_forms, keras_forms, two_signatures, malicious_keras,
                                  tf_extras, control_flow, attention, hostile_names,
                                  keras_rnns, tf_loops, tf_switch_case, keras_text_rnn,
                                  keras_blocks)}

if __name__ == "__main__":
    MODELS[sys.argv[1]](sys.argv[2])
