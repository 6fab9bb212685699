"""API-difference reference entries for TensorFlow / Keras APIs (docs/api_diff/tf/).

Not a mapper module: metadata only (see x2/api_diff.py). `ops` are the TF op
types x2 maps for the API; an entry without ops is reference only.
"""
from __future__ import annotations

from x2.api_diff import ApiTable, a

TABLE = ApiTable("tf")
api = TABLE.api

X = a("x", "x")
NAME = a("name", "name")
P = "paddle.to_tensor(x)"


def elementwise(name, ops, paddle, family="math", pd=None, src=None, notes=(), shape=(2, 3, 4),
                atol=1e-5, sig_x="x"):
    """A one-input elementwise API with the same argument on both sides."""
    api(name, family, ops, paddle, f"{name}({sig_x}, name=None)", f"{paddle}(x, name=None)",
        [a(sig_x, "x", "same" if sig_x == "x" else "renamed"), NAME],
        src or f"out = {name}(x)", pd or f"out = {paddle}({P})", notes, shape=shape, atol=atol)


def binary(name, ops, paddle, sig="x, y", notes=(), src=None, pd=None, args=None):
    api(name, "math", ops, paddle, f"{name}({sig}, name=None)", f"{paddle}(x, y, name=None)",
        args or [X, a("y", "y"), NAME],
        src or f"y = rng.randn(3, 4).astype('float32')\nout = {name}(x, y)",
        pd or f"y = rng.randn(3, 4).astype('float32')\nout = {paddle}({P}, paddle.to_tensor(y))",
        notes or ("Broadcasting follows numpy rules on both sides.",))


# ---------------------------------------------------------------- elementwise math
elementwise("tf.math.abs", "Abs", "paddle.abs")
elementwise("tf.math.negative", "Neg", "paddle.neg")
elementwise("tf.math.exp", "Exp", "paddle.exp")
elementwise("tf.math.log", "Log", "paddle.log", src="out = tf.math.log(np.abs(x) + 0.1)",
            pd="out = paddle.log(paddle.to_tensor(np.abs(x) + 0.1))")
elementwise("tf.math.sqrt", "Sqrt", "paddle.sqrt", src="out = tf.math.sqrt(np.abs(x))",
            pd="out = paddle.sqrt(paddle.to_tensor(np.abs(x)))")
elementwise("tf.math.rsqrt", "Rsqrt", "paddle.rsqrt", src="out = tf.math.rsqrt(np.abs(x) + 0.1)",
            pd="out = paddle.rsqrt(paddle.to_tensor(np.abs(x) + 0.1))", atol=1e-4)
elementwise("tf.math.square", "Square", "paddle.square")
elementwise("tf.math.reciprocal", "Reciprocal", "paddle.reciprocal",
            src="out = tf.math.reciprocal(np.abs(x) + 0.5)",
            pd="out = paddle.reciprocal(paddle.to_tensor(np.abs(x) + 0.5))")
elementwise("tf.raw_ops.Inv", "Inv", "paddle.reciprocal", src="out = tf.raw_ops.Inv(x=np.abs(x) + 0.5)",
            pd="out = paddle.reciprocal(paddle.to_tensor(np.abs(x) + 0.5))",
            notes="Legacy op name of Reciprocal found in old TF1 graphs.")
elementwise("tf.math.erf", "Erf", "paddle.erf")
elementwise("tf.math.erfc", "Erfc", "1 - paddle.erf", pd="out = 1 - paddle.erf(paddle.to_tensor(x))",
            notes="Paddle has no erfc; x2 writes `1 - erf(x)` (loses precision for large x).")
elementwise("tf.math.tanh", "Tanh", "paddle.tanh")
elementwise("tf.math.sigmoid", "Sigmoid", "paddle.nn.functional.sigmoid", family="activation")
elementwise("tf.math.softplus", "Softplus", "paddle.nn.functional.softplus", family="activation",
            sig_x="features",
            notes="Paddle's softplus has `beta=1, threshold=20` (linear above x*beta > 20); TF has no threshold "
                  "argument but also returns x for large inputs.")
elementwise("tf.nn.relu", "Relu", "paddle.nn.functional.relu", family="activation", sig_x="features")
elementwise("tf.nn.elu", "Elu", "paddle.nn.functional.elu", family="activation", sig_x="features",
            notes="TF's elu has no alpha (fixed 1.0); Paddle's `alpha=1.0` default matches.")
elementwise("tf.nn.selu", "Selu", "paddle.nn.functional.selu", family="activation", sig_x="features",
            notes="Same fixed scale 1.0507... and alpha 1.6732...; Paddle exposes them as arguments.")
elementwise("tf.nn.silu", ("Swish", "Silu"), "paddle.nn.functional.silu", family="activation",
            sig_x="features", src="out = tf.nn.silu(x)",
            notes="`tf.nn.swish` is the same function. TF's `beta` argument (x*sigmoid(beta*x)) has no "
                  "Paddle counterpart; x2 maps only beta=1.")

api("tf.nn.relu6", "activation", "Relu6", "paddle.nn.functional.relu6", "tf.nn.relu6(features, name=None)",
    "paddle.nn.functional.relu6(x, name=None)", [a("features", "x", "renamed"), NAME],
    "out = tf.nn.relu6(x * 4)", "out = F.relu6(paddle.to_tensor(x * 4))",
    "x2 writes it as `clip(x, 0, 6)`.")
api("tf.nn.leaky_relu", "activation", "LeakyRelu", "paddle.nn.functional.leaky_relu",
    "tf.nn.leaky_relu(features, alpha=0.2, name=None)",
    "paddle.nn.functional.leaky_relu(x, negative_slope=0.01, name=None)",
    [a("features", "x", "renamed"), a("alpha", "negative_slope", "default", "TF 0.2, Paddle 0.01: always pass it"), NAME],
    "out = tf.nn.leaky_relu(x)", "out = F.leaky_relu(paddle.to_tensor(x), negative_slope=0.2)",
    "Default slopes differ three ways: tf.nn 0.2, Keras LeakyReLU 0.3, Paddle/torch 0.01.")
api("tf.nn.gelu", "activation", "Gelu", "paddle.nn.functional.gelu",
    "tf.nn.gelu(features, approximate=False, name=None)",
    "paddle.nn.functional.gelu(x, approximate=False, name=None)",
    [a("features", "x", "renamed"), a("approximate", "approximate", "same", "bool on both sides (torch uses 'none'/'tanh')"), NAME],
    "out = tf.nn.gelu(x)", "out = F.gelu(paddle.to_tensor(x))")
api("keras.ops.gelu", "activation", "Gelu", "paddle.nn.functional.gelu",
    "keras.ops.gelu(x, approximate=True)", "paddle.nn.functional.gelu(x, approximate=False, name=None)",
    [X, a("approximate", "approximate", "default", "Keras ops default True (tanh form), Paddle False")],
    "out = keras.ops.gelu(x)", "out = F.gelu(paddle.to_tensor(x), approximate=True)",
    "`keras.activations.gelu` defaults to approximate=False but `keras.ops.gelu` to True.", atol=1e-5)
api("tf.nn.softmax", "activation", "Softmax", "paddle.nn.functional.softmax",
    "tf.nn.softmax(logits, axis=None, name=None)", "paddle.nn.functional.softmax(x, axis=-1, dtype=None, name=None)",
    [a("logits", "x", "renamed"), a("axis", "axis", "same", "None means -1 in TF; Paddle default -1"),
     a("—", "dtype", "paddle-only", "cast before computing"), NAME],
    "out = tf.nn.softmax(x)", "out = F.softmax(paddle.to_tensor(x))",
    "torch's softmax has no default axis (dim must be given); TF and Paddle use the last axis. "
    "x2 keeps the axis, remapped when the layout changes from NHWC to NCHW.")
api("tf.nn.log_softmax", "activation", "LogSoftmax", "paddle.nn.functional.log_softmax",
    "tf.nn.log_softmax(logits, axis=None, name=None)",
    "paddle.nn.functional.log_softmax(x, axis=-1, dtype=None, name=None)",
    [a("logits", "x", "renamed"), a("axis", "axis", "same", "None means -1"), NAME],
    "out = tf.nn.log_softmax(x)", "out = F.log_softmax(paddle.to_tensor(x))")

for cls, ops, pd, src_args, pd_args, src_sig, pd_sig, rows, note in [
    ("ReLU", "Relu", "ReLU", "", "", "keras.layers.ReLU(max_value=None, negative_slope=0.0, threshold=0.0)",
     "paddle.nn.ReLU(name=None)",
     [a("max_value", "—", "unsupported", "use paddle.nn.ReLU6 for 6, else paddle.clip"),
      a("negative_slope", "—", "unsupported", "use paddle.nn.LeakyReLU"),
      a("threshold", "—", "unsupported", "")], "Only the default ReLU is plain paddle.nn.ReLU."),
    ("ELU", "Elu", "ELU", "", "", "keras.layers.ELU(alpha=1.0)", "paddle.nn.ELU(alpha=1.0, name=None)",
     [a("alpha", "alpha")], "x2 maps the TF Elu op (alpha=1 only)."),
    ("LeakyReLU", "LeakyRelu", "LeakyReLU", "", "negative_slope=0.3",
     "keras.layers.LeakyReLU(negative_slope=0.3)", "paddle.nn.LeakyReLU(negative_slope=0.01, name=None)",
     [a("negative_slope", "negative_slope", "default", "Keras 0.3, Paddle 0.01 (Keras 2 called it alpha)")],
     "Pass the slope explicitly in Paddle."),
    ("Softmax", "Softmax", "Softmax", "", "", "keras.layers.Softmax(axis=-1)", "paddle.nn.Softmax(axis=-1, name=None)",
     [a("axis", "axis")], "Keras' call also takes a mask; Paddle's does not."),
]:
    api(f"keras.layers.{cls}", "activation", ops, f"paddle.nn.{pd}", src_sig, pd_sig, rows,
        f"out = keras.layers.{cls}({src_args})(x)", f"out = paddle.nn.{pd}({pd_args})({P})", note)

api("keras.layers.Activation", "activation", ("Relu", "Sigmoid", "Tanh"), "paddle.nn.functional.<name>",
    "keras.layers.Activation(activation)", "paddle.nn.<Name>() / paddle.nn.functional.<name>(x)",
    [a("activation", "—", "semantics", "a string or callable; pick the Paddle layer of that name")],
    "out = [keras.layers.Activation(n)(x) for n in ('relu', 'sigmoid', 'tanh')]",
    "t = paddle.to_tensor(x)\nout = [F.relu(t), F.sigmoid(t), paddle.tanh(t)]")
api("keras.activations.swish", "activation", ("Swish", "Silu", "Sigmoid", "Mul"), "paddle.nn.functional.silu",
    "keras.activations.silu(x) (alias swish)", "paddle.nn.functional.silu(x, name=None)", [X],
    "out = keras.activations.swish(x)", "out = F.silu(paddle.to_tensor(x))",
    "Depending on the TF version the graph holds a fused Swish/Silu op or Sigmoid + Mul; x2 maps all.")

# ---------------------------------------------------------------- binary math
binary("tf.math.add", ("AddV2", "Add"), "paddle.add", notes=("`x + y` on tensors is the same op. Old graphs use Add, new ones AddV2.",))
binary("tf.math.subtract", "Sub", "paddle.subtract")
binary("tf.math.multiply", "Mul", "paddle.multiply")
binary("tf.math.truediv", "RealDiv", "paddle.divide", notes=("`tf.math.divide` and `x / y` give the same op for floats.",))
binary("tf.compat.v1.div", "Div", "paddle.divide",
       notes=("TF1 `div` on floats is true division (op Div); on integers it floors, like paddle.floor_divide.",))
binary("tf.math.maximum", "Maximum", "paddle.maximum")
binary("tf.math.minimum", "Minimum", "paddle.minimum")
binary("tf.math.pow", "Pow", "paddle.pow",
       src="y = rng.randn(3, 4).astype('float32')\nout = tf.math.pow(np.abs(x) + 0.5, y)",
       pd="y = rng.randn(3, 4).astype('float32')\nout = paddle.pow(paddle.to_tensor(np.abs(x) + 0.5), paddle.to_tensor(y))")
binary("tf.math.squared_difference", "SquaredDifference", "paddle.square(paddle.subtract(x, y))",
       pd="y = rng.randn(3, 4).astype('float32')\nout = paddle.square(paddle.subtract(paddle.to_tensor(x), paddle.to_tensor(y)))",
       notes=("Paddle has no fused op; x2 writes `(a - b) * (a - b)`.",))
api("tf.clip_by_value", "math", ("Maximum", "Minimum"), "paddle.clip",
    "tf.clip_by_value(t, clip_value_min, clip_value_max, name=None)", "paddle.clip(x, min=None, max=None, name=None)",
    [a("t", "x", "renamed"), a("clip_value_min", "min", "renamed"), a("clip_value_max", "max", "renamed"), NAME],
    "out = tf.clip_by_value(x, -0.5, 0.5)", f"out = paddle.clip({P}, -0.5, 0.5)",
    "TF lowers it to Minimum + Maximum, which x2 converts one by one.")
for cls, ops, pd in [("Add", "AddV2", "paddle.add"), ("Subtract", "Sub", "paddle.subtract"),
                     ("Multiply", "Mul", "paddle.multiply"), ("Maximum", "Maximum", "paddle.maximum"),
                     ("Minimum", "Minimum", "paddle.minimum")]:
    api(f"keras.layers.{cls}", "merge", ops, pd, f"keras.layers.{cls}()([a, b, ...])", f"{pd}(x, y, name=None)",
        [a("inputs (list)", "x, y", "semantics", "Keras takes a list of tensors; Paddle two tensors (chain them for more)")],
        f"y = rng.randn(2, 3, 4).astype('float32')\nout = keras.layers.{cls}()([x, y])",
        f"y = rng.randn(2, 3, 4).astype('float32')\nout = {pd}({P}, paddle.to_tensor(y))")

# ---------------------------------------------------------------- matmul / dense
api("tf.linalg.matmul", "linear", ("MatMul", "BatchMatMulV2"), "paddle.matmul",
    "tf.linalg.matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None)",
    "paddle.matmul(x, y, transpose_x=False, transpose_y=False, name=None)",
    [a("a", "x", "renamed"), a("b", "y", "renamed"), a("transpose_a", "transpose_x", "renamed"),
     a("transpose_b", "transpose_y", "renamed"), a("adjoint_a / adjoint_b", "—", "semantics", "same as transpose for real inputs"),
     a("a_is_sparse / b_is_sparse / output_type", "—", "unsupported")],
    "w = rng.randn(5, 4).astype('float32')\nout = tf.linalg.matmul(x, w, transpose_b=True)",
    "w = rng.randn(5, 4).astype('float32')\nout = paddle.matmul(paddle.to_tensor(x), paddle.to_tensor(w), transpose_y=True)",
    "Rank-2 inputs give op MatMul, batched ones BatchMatMulV2; x2 writes transposes explicitly.", atol=1e-4)
api("tf.raw_ops.BatchMatMulV3", "linear", ("BatchMatMulV3", "BatchMatMul"), "paddle.matmul",
    "tf.raw_ops.BatchMatMulV3(x, y, Tout, adj_x=False, adj_y=False, grad_x=False, grad_y=False, name=None)",
    "paddle.matmul(x, y, transpose_x=False, transpose_y=False, name=None)",
    [X, a("y", "y"), a("adj_x", "transpose_x", "renamed"), a("adj_y", "transpose_y", "renamed"),
     a("Tout", "—", "unsupported", "cast the result")],
    "y = rng.randn(2, 5, 4).astype('float32')\nout = tf.raw_ops.BatchMatMulV3(x=x, y=y, Tout=tf.float32, adj_y=True)",
    "y = rng.randn(2, 5, 4).astype('float32')\nout = paddle.matmul(paddle.to_tensor(x), paddle.to_tensor(y), transpose_y=True)",
    "BatchMatMul (V1) in old graphs has the same attributes.", atol=1e-4)
api("keras.layers.Dense", "linear", ("MatMul", "BiasAdd"), "paddle.nn.Linear",
    "keras.layers.Dense(units, activation=None, use_bias=True, kernel_initializer='glorot_uniform', bias_initializer='zeros', ...)",
    "paddle.nn.Linear(in_features, out_features, weight_attr=None, bias_attr=None, name=None)",
    [a("units", "out_features", "renamed"), a("—", "in_features", "paddle-only", "Keras infers it when built"),
     a("activation", "—", "unsupported", "apply the activation after the layer"),
     a("use_bias", "bias_attr", "semantics", "use_bias=False is bias_attr=False"),
     a("kernel_initializer / bias_initializer", "weight_attr / bias_attr", "semantics", "ParamAttr(initializer=...)")],
    """
    layer = keras.layers.Dense(5)
    layer.build((None, 4))
    w, b = rng.randn(4, 5).astype('float32'), rng.randn(5).astype('float32')
    layer.set_weights([w, b])
    out = layer(x)
    """,
    """
    layer = paddle.nn.Linear(4, 5)
    w, b = rng.randn(4, 5).astype('float32'), rng.randn(5).astype('float32')
    layer.weight.set_value(w)  # same [in, out] layout as the Keras kernel
    layer.bias.set_value(b)
    out = layer(paddle.to_tensor(x))
    """,
    ("Keras kernel and Paddle weight are both [in_features, out_features]: copied as is "
     "(torch's nn.Linear weight is [out, in] and must be transposed).",), atol=1e-4)
api("tf.nn.bias_add", "linear", ("BiasAdd", "BiasAddV1"), "paddle.add",
    "tf.nn.bias_add(value, bias, data_format=None, name=None)", "paddle.add(x, y, name=None)",
    [a("value", "x", "renamed"), a("bias", "y", "renamed"),
     a("data_format", "—", "semantics", "NHWC adds along the last axis; for NCHW reshape the bias to [C, 1, 1]")],
    "b = rng.randn(4).astype('float32')\nout = tf.nn.bias_add(x, b)",
    "b = rng.randn(4).astype('float32')\nout = paddle.add(paddle.to_tensor(x), paddle.to_tensor(b))",
    "After x2's NHWC to NCHW conversion the bias is added as [C, 1, 1]. BiasAddV1 is the TF1 op name.")

# ---------------------------------------------------------------- reductions
for name, op, pd in [("reduce_sum", "Sum", "sum"), ("reduce_mean", "Mean", "mean"), ("reduce_max", "Max", "max"),
                     ("reduce_min", "Min", "min"), ("reduce_prod", "Prod", "prod")]:
    api(f"tf.math.{name}", "reduction", op, f"paddle.{pd}",
        f"tf.math.{name}(input_tensor, axis=None, keepdims=False, name=None)",
        f"paddle.{pd}(x, axis=None, keepdim=False, name=None)",
        [a("input_tensor", "x", "renamed"), a("axis", "axis", "same", "None reduces all axes on both sides"),
         a("keepdims", "keepdim", "renamed", "TF/numpy keepdims, Paddle/torch keepdim")],
        f"out = tf.math.{name}(x, axis=1, keepdims=True)", f"out = paddle.{pd}({P}, axis=1, keepdim=True)",
        "x2 maps constant axes only.", atol=1e-5)
api("tf.math.reduce_variance", "reduction", ("Mean", "SquaredDifference"), "paddle.var",
    "tf.math.reduce_variance(input_tensor, axis=None, keepdims=False, name=None)",
    "paddle.var(x, axis=None, unbiased=True, keepdim=False, name=None)",
    [a("input_tensor", "x", "renamed"), a("axis", "axis"), a("keepdims", "keepdim", "renamed"),
     a("—", "unbiased", "default", "TF is the population variance: pass unbiased=False")],
    "out = tf.math.reduce_variance(x, axis=-1)", f"out = paddle.var({P}, axis=-1, unbiased=False)",
    "Lowered to Mean + SquaredDifference + Mean in the graph.")
api("tf.nn.moments", "reduction", ("Mean", "SquaredDifference"), "paddle.mean, paddle.var",
    "tf.nn.moments(x, axes, shift=None, keepdims=False, name=None)",
    "paddle.mean(x, axis, keepdim) and paddle.var(x, axis, unbiased=False, keepdim)",
    [X, a("axes", "axis", "renamed"), a("shift", "—", "unsupported", "unused in TF2"), a("keepdims", "keepdim", "renamed")],
    "out = tf.nn.moments(x, axes=[0, 1])",
    f"t = {P}\nout = (paddle.mean(t, axis=[0, 1]), paddle.var(t, axis=[0, 1], unbiased=False))",
    "Returns (mean, variance); the variance is biased.")
api("keras.layers.GlobalAveragePooling2D", "pooling", "Mean", "paddle.nn.AdaptiveAvgPool2D",
    "keras.layers.GlobalAveragePooling2D(data_format=None, keepdims=False)",
    "paddle.nn.AdaptiveAvgPool2D(output_size=1, data_format='NCHW') (+ flatten)",
    [a("data_format", "data_format", "default", "Keras channels_last, Paddle NCHW"),
     a("keepdims", "—", "semantics", "Paddle keeps [N, C, 1, 1]; flatten for Keras' [N, C]")],
    "out = keras.layers.GlobalAveragePooling2D()(x)",
    "out = paddle.flatten(paddle.nn.AdaptiveAvgPool2D(1)(paddle.to_tensor(x).transpose([0, 3, 1, 2])), 1)",
    "x2 converts the Mean over H, W to `reduce_mean` over axes [2, 3] in NCHW.", shape=(2, 5, 5, 3))
api("keras.layers.GlobalMaxPooling2D", "pooling", "Max", "paddle.nn.AdaptiveMaxPool2D",
    "keras.layers.GlobalMaxPooling2D(data_format=None, keepdims=False)",
    "paddle.nn.AdaptiveMaxPool2D(output_size=1) (+ flatten)",
    [a("data_format", "—", "semantics", "Keras channels_last; Paddle's adaptive max pool is NCHW only"),
     a("keepdims", "—", "semantics", "flatten for Keras' [N, C]")],
    "out = keras.layers.GlobalMaxPooling2D()(x)",
    "out = paddle.flatten(paddle.nn.AdaptiveMaxPool2D(1)(paddle.to_tensor(x).transpose([0, 3, 1, 2])), 1)",
    shape=(2, 5, 5, 3))
