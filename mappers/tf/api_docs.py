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
    """A one-input elementwise API with the same argument on both sides (in its call forms unless
    the example needs its own input)."""
    if src is None and pd is None:
        TABLE.call(name, family, ops, paddle, f"{sig_x}>x=t; *name=None?", notes=notes, shape=shape, atol=atol,
                   source_sig=f"{name}({sig_x}, name=None)", paddle_sig=f"{paddle}(x, name=None)")
        return
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

# ---------------------------------------------------------------- trigonometry, rounding, sign, NaN/Inf tests
# x with a NaN, +inf, -inf and zeros in it (the same cells on both sides).
_SPECIAL = "v = x.copy()\nv[0, 0, :2] = np.nan\nv[1, 2, 1] = np.inf\nv[1, 2, 3] = -np.inf\nv[0, 1, :2] = 0.0\n"
elementwise("tf.math.sin", "Sin", "paddle.sin", src="out = tf.math.sin(x * 3)", pd="out = paddle.sin(paddle.to_tensor(x * 3))")
elementwise("tf.math.cos", "Cos", "paddle.cos", src="out = tf.math.cos(x * 3)", pd="out = paddle.cos(paddle.to_tensor(x * 3))")
elementwise("tf.math.floor", "Floor", "paddle.floor", src="out = tf.math.floor(x * 3)",
            pd="out = paddle.floor(paddle.to_tensor(x * 3))",
            notes="Rounds toward -inf (-1.5 gives -2) and keeps the float dtype on both sides; cast for an integer.")
elementwise("tf.math.ceil", "Ceil", "paddle.ceil", src="out = tf.math.ceil(x * 3)",
            pd="out = paddle.ceil(paddle.to_tensor(x * 3))",
            notes="Rounds toward +inf (-1.5 gives -1) and keeps the float dtype on both sides.")
elementwise("tf.math.sign", "Sign", "paddle.sign", src=_SPECIAL + "out = tf.math.sign(v)",
            pd=_SPECIAL + "out = paddle.sign(paddle.to_tensor(v))",
            notes=("-1, 0 or 1 with the input's dtype; sign(NaN) is NaN in TF and Paddle alike (torch.sign gives 0), "
                   "sign(+-inf) is +-1.",
                   "For complex input TF returns x / |x|; x2 has no complex tensors."))
elementwise("tf.math.is_nan", "IsNan", "paddle.isnan", family="comparison", src=_SPECIAL + "out = tf.math.is_nan(v)",
            pd=_SPECIAL + "out = paddle.isnan(paddle.to_tensor(v))",
            notes="Boolean output on both sides; +-inf is not NaN.")
elementwise("tf.math.is_inf", "IsInf", "paddle.isinf", family="comparison", src=_SPECIAL + "out = tf.math.is_inf(v)",
            pd=_SPECIAL + "out = paddle.isinf(paddle.to_tensor(v))",
            notes="Boolean output, True for +inf and -inf on both sides; NaN is not inf.")

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

# ---------------------------------------------------------------- shape / array
api("tf.reshape", "array", "Reshape", "paddle.reshape", "tf.reshape(tensor, shape, name=None)",
    "paddle.reshape(x, shape, name=None)", [a("tensor", "x", "renamed"), a("shape", "shape", "same", "-1 infers; Paddle also reads 0 as 'copy this dim'")],
    "out = tf.reshape(x, [4, -1])", f"out = paddle.reshape({P}, [4, -1])",
    "Reshapes of NHWC tensors are where layout conversion matters: see keras.layers.Flatten.")
api("keras.layers.Flatten", "array", "Reshape", "paddle.flatten",
    "keras.layers.Flatten(data_format=None)", "paddle.flatten(x, start_axis=0, stop_axis=-1, name=None) / paddle.nn.Flatten(start_axis=1, stop_axis=-1)",
    [a("data_format", "—", "semantics", "Keras flattens in (H, W, C) order; Paddle flattens its NCHW tensor in (C, H, W) order")],
    "out = keras.layers.Flatten()(x)",
    "t = paddle.to_tensor(x).transpose([0, 3, 1, 2])  # the NCHW tensor a converted model holds\n"
    "out = paddle.flatten(t.transpose([0, 2, 3, 1]), 1)  # back to NHWC order first",
    ("Flatten order differs: an NHWC model flattens H, W, C; the same tensor in NCHW flattens C, H, W. "
     "x2 either transposes back to NHWC before the Reshape (as here) or, when a Dense follows, permutes the "
     "rows of the Dense weight once at conversion time so no Transpose is left.",), shape=(2, 3, 3, 4))
api("keras.layers.Reshape", "array", "Reshape", "paddle.reshape", "keras.layers.Reshape(target_shape)",
    "paddle.reshape(x, shape) / paddle.nn.Unflatten", [a("target_shape", "shape", "semantics", "Keras excludes the batch dim; Paddle includes it")],
    "out = keras.layers.Reshape((4, 3))(x)", f"out = paddle.reshape({P}, [-1, 4, 3])")
api("tf.squeeze", "array", "Squeeze", "paddle.squeeze", "tf.squeeze(input, axis=None, name=None)",
    "paddle.squeeze(x, axis=None, name=None)", [a("input", "x", "renamed"), a("axis", "axis", "same", "TF errors on a non-1 axis; Paddle ignores it")],
    "out = tf.squeeze(x, axis=1)", f"out = paddle.squeeze({P}, axis=1)", shape=(2, 1, 3))
api("tf.expand_dims", "array", "ExpandDims", "paddle.unsqueeze", "tf.expand_dims(input, axis, name=None)",
    "paddle.unsqueeze(x, axis, name=None)", [a("input", "x", "renamed"), a("axis", "axis")],
    "out = tf.expand_dims(x, 1)", f"out = paddle.unsqueeze({P}, 1)")
api("tf.concat", "array", "ConcatV2", "paddle.concat", "tf.concat(values, axis, name='concat')",
    "paddle.concat(x, axis=0, name=None)", [a("values", "x", "renamed"), a("axis", "axis", "default", "required in TF, 0 in Paddle")],
    "out = tf.concat([x, 2 * x], axis=-1)", f"t = {P}\nout = paddle.concat([t, 2 * t], axis=-1)",
    "x2 remaps the axis when it converts NHWC to NCHW (axis -1 becomes 1).")
api("keras.layers.Concatenate", "merge", "ConcatV2", "paddle.concat", "keras.layers.Concatenate(axis=-1)",
    "paddle.concat(x, axis=0, name=None)", [a("axis", "axis", "default", "Keras -1 (channels of NHWC), Paddle 0")],
    "out = keras.layers.Concatenate()([x, 2 * x])", f"t = {P}\nout = paddle.concat([t, 2 * t], axis=-1)")
api("tf.stack", "array", "Pack", "paddle.stack", "tf.stack(values, axis=0, name='stack')",
    "paddle.stack(x, axis=0, name=None)", [a("values", "x", "renamed"), a("axis", "axis")],
    "out = tf.stack([x, 2 * x], axis=1)", f"t = {P}\nout = paddle.stack([t, 2 * t], axis=1)")
api("tf.pad", "array", ("Pad", "PadV2", "MirrorPad"), "paddle.nn.functional.pad",
    "tf.pad(tensor, paddings, mode='CONSTANT', constant_values=0, name=None)",
    "paddle.nn.functional.pad(x, pad, mode='constant', value=0.0, data_format='NCHW', pad_from_left_axis=True, name=None)",
    [a("tensor", "x", "renamed"),
     a("paddings", "pad", "semantics", "TF: [[before, after]] per dim; Paddle: flat list, all dims first to last when 2*ndim long"),
     a("mode", "mode", "semantics", "CONSTANT/REFLECT/SYMMETRIC vs 'constant'/'reflect'/'replicate'/'circular' (no symmetric)"),
     a("constant_values", "value", "renamed")],
    "out = [tf.pad(x, [[0, 0], [1, 2], [2, 1]], constant_values=1.5), tf.pad(x, [[0, 0], [1, 1], [2, 2]], mode='REFLECT')]",
    "t = paddle.to_tensor(x)\nout = [F.pad(t, [0, 0, 1, 2, 2, 1], value=1.5),\n"
    "       F.pad(t.unsqueeze(0), [2, 2, 1, 1], mode='reflect', data_format='NCHW').squeeze(0)]",
    ("A constant pad with a non-zero value is the PadV2 op; REFLECT is MirrorPad. Paddle's reflect/replicate "
     "pads only spatial dims and lists them last dim first; x2 writes the full per-dim list. "
     "SYMMETRIC has no Paddle mode.",))
api("keras.layers.ZeroPadding2D", "array", "Pad", "paddle.nn.Pad2D",
    "keras.layers.ZeroPadding2D(padding=(1, 1), data_format=None)",
    "paddle.nn.Pad2D(padding, mode='constant', value=0.0, data_format='NCHW', name=None)",
    [a("padding", "padding", "semantics", "Keras ((top, bottom), (left, right)); Paddle [left, right, top, bottom]"),
     a("data_format", "data_format", "default", "channels_last vs NCHW")],
    "out = keras.layers.ZeroPadding2D(((1, 2), (0, 1)))(x)",
    "out = paddle.nn.Pad2D([0, 1, 1, 2], data_format='NHWC')(paddle.to_tensor(x))", shape=(1, 3, 3, 2))
api("tf.transpose", "array", "Transpose", "paddle.transpose", "tf.transpose(a, perm=None, conjugate=False, name='transpose')",
    "paddle.transpose(x, perm, name=None)", [a("a", "x", "renamed"), a("perm", "perm", "default", "TF None reverses the axes; required in Paddle")],
    "out = tf.transpose(x, [2, 0, 1])", f"out = paddle.transpose({P}, [2, 0, 1])",
    "x2 folds transposes of constants and cancels NHWC/NCHW pairs in its layout pass.")
api("keras.layers.Permute", "array", "Transpose", "paddle.transpose", "keras.layers.Permute(dims)",
    "paddle.transpose(x, perm, name=None)", [a("dims", "perm", "semantics", "Keras dims are 1-based and exclude batch: prepend 0")],
    "out = keras.layers.Permute((2, 1))(x)", f"out = paddle.transpose({P}, [0, 2, 1])")
api("tf.cast", "array", "Cast", "paddle.cast", "tf.cast(x, dtype, name=None)", "paddle.cast(x, dtype)",
    [X, a("dtype", "dtype", "same", "float to int truncates toward zero on both sides")],
    "out = tf.cast(x * 3, tf.int32)", "out = paddle.cast(paddle.to_tensor(x * 3), 'int32')")
api("tf.shape", "array", "Shape", "paddle.shape", "tf.shape(input, out_type=tf.int32, name=None)",
    "paddle.shape(input)", [a("input", "input"), a("out_type", "—", "semantics", "Paddle returns int64 in 3.x; cast if needed")],
    "out = tf.shape(x)", f"out = paddle.shape({P}).astype('int32')",
    "x2 folds a Shape into a constant when the dims are static.")
api("tf.strided_slice", "array", "StridedSlice", "paddle.strided_slice / indexing",
    "tf.strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None)",
    "paddle.strided_slice(x, axes, starts, ends, strides, name=None)",
    [a("input_", "x", "renamed"), a("begin / end / strides", "starts / ends / strides", "renamed", "Paddle also needs the axes list"),
     a("*_mask", "—", "semantics", "no masks in Paddle: use Python indexing (x[..., None, 1:3]) instead")],
    "out = x[:, 1:3, ::2]", f"out = {P}[:, 1:3, ::2]", "Python indexing of a TF tensor is a StridedSlice op.")
api("tf.slice", "array", "Slice", "paddle.slice / indexing",
    "tf.slice(input_, begin, size, name=None)", "paddle.slice(input, axes, starts, ends)",
    [a("input_", "input", "renamed"), a("begin", "starts", "renamed", "Paddle also needs the axes list"),
     a("size", "ends", "semantics", "TF gives sizes (-1: to the end), Paddle end indices: ends = begin + size")],
    "out = tf.slice(x, [0, 1, 1], [-1, 2, 2])", f"out = paddle.slice({P}, axes=[1, 2], starts=[1, 1], ends=[3, 3])",
    "x2 maps tf.slice to its IR `slice` with ends = begin + size.")
api("tf.zeros_like", "array", "ZerosLike", "paddle.zeros_like", "tf.zeros_like(input, dtype=None, name=None)",
    "paddle.zeros_like(x, dtype=None, name=None)", [a("input", "x", "renamed"), a("dtype", "dtype")],
    "out = tf.zeros_like(x)", f"out = paddle.zeros_like({P})", "x2 writes a constant of the static shape.")
api("tf.ones_like", "array", "OnesLike", "paddle.ones_like", "tf.ones_like(input, dtype=None, name=None)",
    "paddle.ones_like(x, dtype=None, name=None)", [a("input", "x", "renamed"), a("dtype", "dtype")],
    "out = tf.ones_like(x)", f"out = paddle.ones_like({P})")
for name, ops, code, note in [
    ("tf.identity", "Identity", "tf.identity(x)", "Removed by x2's cleanup pass."),
    ("tf.stop_gradient", "StopGradient", "tf.stop_gradient(x)", "Paddle: `x.detach()`; inference graphs need nothing."),
    ("tf.ensure_shape", "EnsureShape", "tf.ensure_shape(x, [2, 3, 4])", "A runtime shape assertion; dropped."),
    ("tf.debugging.check_numerics", "CheckNumerics", "tf.debugging.check_numerics(x, 'bad')", "A runtime NaN/Inf assertion; dropped."),
    ("tf.raw_ops.Snapshot", "Snapshot", "tf.raw_ops.Snapshot(input=x)", "A copy; dropped."),
    ("tf.raw_ops.PreventGradient", "PreventGradient", "tf.raw_ops.PreventGradient(input=x)", "Gradient guard; dropped."),
    ("tf.compat.v1.placeholder_with_default", "PlaceholderWithDefault",
     "tf.compat.v1.placeholder_with_default(x, shape=[2, 3, 4])", "Its default becomes the value; x2 treats it as identity of that default."),
    ("keras.layers.Dropout", "Identity", "keras.layers.Dropout(0.5)(x, training=False)",
     "Inference dropout is identity in Keras, torch and Paddle's default mode='upscale_in_train'. "
     "Paddle's mode='downscale_in_infer' would instead multiply by (1 - p) in eval: do not use it for converted models. "
     "A .keras/.h5 file converted --for training keeps each Dropout (no noise_shape) as paddle.nn.Dropout(p=rate); "
     "SpatialDropout, GaussianDropout and AlphaDropout stay identities (report.json source.dropout_left_out)."),
]:
    api(name, "identity", ops, "paddle.assign (or nothing)", f"{name}(...)", "paddle.assign(x) / x",
        [a("input", "x", "semantics", "no computation")], f"out = {code}", f"out = paddle.assign({P})", note)
api("tf.identity_n", "identity", "IdentityN", "paddle.assign (per tensor)", "tf.identity_n(input, name=None)",
    "[paddle.assign(t) for t in inputs]", [a("input (list)", "x", "semantics", "one tensor at a time")],
    "out = tf.identity_n([x, 2 * x])", f"t = {P}\nout = [paddle.assign(t), paddle.assign(2 * t)]")

# ---------------------------------------------------------------- gather / split / tile / where / fill
api("tf.gather", "array", ("GatherV2", "Gather"), "paddle.gather",
    "tf.gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None)",
    "paddle.gather(x, index, axis=None, name=None)",
    [a("params", "x", "renamed"), a("indices", "index", "renamed", "Paddle wants a 1-D index; use paddle.take / indexing for N-D"),
     a("axis", "axis", "same", "None is 0 on both sides"), a("batch_dims", "—", "unsupported", "x2 maps batch_dims=0")],
    "out = tf.gather(x, [2, 0], axis=1)", f"out = paddle.gather({P}, paddle.to_tensor([2, 0]), axis=1)")
api("tf.tile", "array", "Tile", "paddle.tile", "tf.tile(input, multiples, name=None)", "paddle.tile(x, repeat_times, name=None)",
    [a("input", "x", "renamed"), a("multiples", "repeat_times", "renamed")],
    "out = tf.tile(x, [1, 2, 1])", f"out = paddle.tile({P}, [1, 2, 1])")
api("tf.reverse", "array", "ReverseV2", "paddle.flip", "tf.reverse(tensor, axis, name=None)",
    "paddle.flip(x, axis, name=None)",
    [a("tensor", "x", "renamed"), a("axis", "axis", "same", "a list of axes on both sides")],
    "out = tf.reverse(x, [0, 2])", f"out = paddle.flip({P}, [0, 2])",
    ("Keras `go_backwards` RNNs reverse the time axis with it.",))
api("tf.split", "array", ("Split", "SplitV"), "paddle.split", "tf.split(value, num_or_size_splits, axis=0, num=None, name='split')",
    "paddle.split(x, num_or_sections, axis=0, name=None)",
    [a("value", "x", "renamed"), a("num_or_size_splits", "num_or_sections", "renamed", "an int is Split, a list SplitV; -1 infers one size on both sides")],
    "out = tf.split(x, [1, -1], axis=2) + tf.split(x, 2, axis=2)",
    f"t = {P}\nout = paddle.split(t, [1, -1], axis=2) + paddle.split(t, 2, axis=2)")
api("tf.unstack", "array", "Unpack", "paddle.unbind", "tf.unstack(value, num=None, axis=0, name='unstack')",
    "paddle.unbind(input, axis=0)", [a("value", "input", "renamed"), a("num", "—", "unsupported", "inferred"), a("axis", "axis")],
    "out = tf.unstack(x, axis=1)", f"out = paddle.unbind({P}, axis=1)")
api("tf.where", "array", ("SelectV2", "Select"), "paddle.where", "tf.where(condition, x=None, y=None, name=None)",
    "paddle.where(condition, x=None, y=None, name=None)",
    [a("condition", "condition"), a("x / y", "x / y", "same", "with x, y omitted both return indices (TF [n, rank], Paddle a tuple per dim)")],
    "out = tf.where(x > 0, x, -x)", f"t = {P}\nout = paddle.where(t > 0, t, -t)",
    "tf.compat.v1.where (op Select) broadcasts a 1-D condition along the first axis only.")
api("tf.fill", "array", "Fill", "paddle.full", "tf.fill(dims, value, name=None)", "paddle.full(shape, fill_value, dtype=None, name=None)",
    [a("dims", "shape", "renamed"), a("value", "fill_value", "renamed", "Paddle's dtype defaults to float32, TF's follows the value")],
    "out = tf.fill([2, 3], 1.5)", "out = paddle.full([2, 3], 1.5)")
api("tf.math.argmax", "reduction", "ArgMax", "paddle.argmax", "tf.math.argmax(input, axis=None, output_type=tf.int64, name=None)",
    "paddle.argmax(x, axis=None, keepdim=False, dtype='int64', name=None)",
    [a("input", "x", "renamed"), a("axis", "axis", "semantics", "TF None means axis 0; Paddle None flattens"),
     a("output_type", "dtype", "renamed"), a("—", "keepdim", "paddle-only")],
    "out = tf.math.argmax(x, axis=1)", f"out = paddle.argmax({P}, axis=1)")
api("tf.math.cumsum", "math", "Cumsum", "paddle.cumsum",
    "tf.math.cumsum(x, axis=0, exclusive=False, reverse=False, name=None)",
    "paddle.cumsum(x, axis=None, dtype=None, name=None)",
    [X, a("axis", "axis", "default", "TF 0; Paddle None flattens the input first"),
     a("exclusive", "—", "unsupported", "shift by one: pad a 0 in front along the axis and drop the last sum"),
     a("reverse", "—", "unsupported", "paddle.flip along the axis before and after"),
     a("—", "dtype", "paddle-only", "Paddle sums integers to int64 unless dtype is given; TF keeps int32")],
    "out = [tf.math.cumsum(x, axis=1), tf.math.cumsum(x, axis=2, exclusive=True, reverse=True),\n"
    "       tf.math.cumsum(tf.cast(x > 0, tf.int32), axis=-1)]",
    """
    t = paddle.to_tensor(x)
    r = paddle.cumsum(paddle.flip(t, [2]), axis=2)                 # reverse: flip, sum, flip back
    excl = paddle.flip(F.pad(r[:, :, :-1], [1, 0], value=0.0), [2])  # exclusive: 0 first, last sum dropped
    out = [paddle.cumsum(t, axis=1), excl, paddle.cumsum(paddle.cast(t > 0, 'int32'), axis=-1, dtype='int32')]
    """,
    ("x2 keeps axis, exclusive and reverse; the Paddle code it writes flips and pads as above (padding rather "
     "than subtracting x, which would round floats).",
     "Integer input: TF keeps int32, Paddle (like torch) returns int64 unless dtype='int32'; x2 keeps TF's dtype."))
api("tf.broadcast_to", "array", "BroadcastTo", "paddle.broadcast_to", "tf.broadcast_to(input, shape, name=None)",
    "paddle.broadcast_to(x, shape, name=None)",
    [a("input", "x", "renamed"),
     a("shape", "shape", "same", "numpy broadcasting rules on both; Paddle (alias paddle.expand) also reads -1 as 'keep this dim', TF does not")],
    "out = [tf.broadcast_to(x[:, :1], [2, 3, 4]), tf.broadcast_to(x[0, 0], [5, 4])]",
    f"t = {P}\nout = [paddle.broadcast_to(t[:, :1], [2, 3, 4]), paddle.broadcast_to(t[0, 0], [5, 4])]",
    "x2 writes `expand` to the constant shape; a shape computed at run time is accepted only when TF knows every "
    "output dim but the batch.")
api("tf.gather_nd", "array", "GatherNd", "paddle.gather_nd",
    "tf.gather_nd(params, indices, batch_dims=0, name=None, bad_indices_policy='')",
    "paddle.gather_nd(x, index, name=None)",
    [a("params", "x", "renamed"),
     a("indices", "index", "renamed", "[..., K] tuples into the first K dims of x on both sides"),
     a("batch_dims", "—", "unsupported", "no Paddle argument: prepend the batch position to every index tuple"),
     a("bad_indices_policy", "—", "unsupported", "x2 refuses a non-default policy")],
    "out = [tf.gather_nd(x, [[0, 1], [1, 2]]), tf.gather_nd(x, [[[1, 0, 3]], [[0, 2, 1]]])]",
    f"t = {P}\nout = [paddle.gather_nd(t, paddle.to_tensor([[0, 1], [1, 2]])),\n"
    "       paddle.gather_nd(t, paddle.to_tensor([[[1, 0, 3]], [[0, 2, 1]]]))]",
    ("Output shape is indices.shape[:-1] + params.shape[K:] on both sides.",
     "x2 reshapes params to rows over its first K dims and `gather`s the row-major positions of the index "
     "tuples; params and indices need static shapes."))
api("tf.scatter_nd", "array", "ScatterNd", "paddle.scatter_nd", "tf.scatter_nd(indices, updates, shape, name=None)",
    "paddle.scatter_nd(index, updates, shape, name=None)",
    [a("indices", "index", "renamed", "[..., K] tuples into the first K dims of the output"), a("updates", "updates"),
     a("shape", "shape", "same", "x2 needs it constant")],
    "u = rng.randn(3, 4).astype('float32')\n"
    "out = [tf.scatter_nd([[1], [3], [1]], u, [5, 4]), tf.scatter_nd([[0, 2], [1, 1]], x[0, :2], [2, 3, 4])]",
    "u = rng.randn(3, 4).astype('float32')\n"
    "out = [paddle.scatter_nd(paddle.to_tensor([[1], [3], [1]]), paddle.to_tensor(u), [5, 4]),\n"
    "       paddle.scatter_nd(paddle.to_tensor([[0, 2], [1, 1]]), paddle.to_tensor(x[0, :2]), [2, 3, 4])]",
    ("Zeros with the updates added at the index tuples: duplicate indices (row 1 here) add up on both sides. "
     "paddle.scatter (not _nd) instead overwrites unless overwrite=False.",
     "x2 converts float updates only: a one-hot matrix of the row-major positions, transposed, `matmul` the updates."))
api("tf.einsum", "linear", "Einsum", "paddle.einsum / paddle.matmul", "tf.einsum(equation, *inputs, **kwargs)",
    "paddle.einsum(equation, *operands)", [a("equation", "equation"), a("*inputs", "*operands", "renamed")],
    "w = rng.randn(4, 5).astype('float32')\nout = tf.einsum('bij,jk->bik', x, w)",
    "w = rng.randn(4, 5).astype('float32')\nout = paddle.einsum('bij,jk->bik', paddle.to_tensor(x), paddle.to_tensor(w))",
    "x2 maps only matrix-product equations (to matmul).", atol=1e-4)
for name, op, pd in [("equal", "Equal", "equal"), ("not_equal", "NotEqual", "not_equal"), ("greater", "Greater", "greater_than"),
                     ("greater_equal", "GreaterEqual", "greater_equal"), ("less", "Less", "less_than"),
                     ("less_equal", "LessEqual", "less_equal")]:
    api(f"tf.math.{name}", "comparison", op, f"paddle.{pd}", f"tf.math.{name}(x, y, name=None)", f"paddle.{pd}(x, y, name=None)",
        [X, a("y", "y")], f"out = tf.math.{name}(np.round(x), 0.0)",
        f"out = paddle.{pd}(paddle.to_tensor(np.round(x)), paddle.to_tensor(np.float32(0)))", "Boolean output on both sides.")
api("tf.math.logical_not", "comparison", "LogicalNot", "paddle.logical_not", "tf.math.logical_not(x, name=None)",
    "paddle.logical_not(x, out=None, name=None)", [X], "out = tf.math.logical_not(x > 0)", f"out = paddle.logical_not({P} > 0)")
for name, op, sym in [("logical_and", "LogicalAnd", "&"), ("logical_or", "LogicalOr", "|")]:
    api(f"tf.math.{name}", "comparison", op, f"paddle.{name}", f"tf.math.{name}(x, y, name=None)",
        f"paddle.{name}(x, y, name=None)",
        [a("x", "x", "semantics", "TF takes bool tensors only; Paddle also takes numbers (non-zero is True)"), a("y", "y")],
        f"t = tf.constant(x)\ny = rng.randn(3, 4).astype('float32')\nout = [tf.math.{name}(t > 0, y > 0), (t > 0) {sym} (t < 1)]",
        f"t = paddle.to_tensor(x)\ny = rng.randn(3, 4).astype('float32')\n"
        f"out = [paddle.{name}(t > 0, paddle.to_tensor(y > 0)), paddle.{name}(t > 0, t < 1)]",
        (f"Boolean output, numpy broadcasting on both sides. `{sym}` on TF bool tensors is the same op.",
         f"x2 writes `bitwise_{name[8:]}` of the bool tensors (the IR's logical form; Paddle's bitwise ops are "
         "logical on bool)."))
api("tf.math.top_k", "reduction", "TopKV2", "paddle.topk", "tf.math.top_k(input, k=1, sorted=True, index_type=tf.int32, name=None)",
    "paddle.topk(x, k, axis=None, largest=True, sorted=True, name=None)",
    [a("input", "x", "renamed"), a("k", "k", "same", "x2 needs a constant k"),
     a("sorted", "sorted", "same", "x2 always sorts (TF's sorted=False order is unspecified)"),
     a("index_type", "—", "unsupported", "Paddle indices are always int64; x2 casts to TF's int32"),
     a("—", "axis", "paddle-only", "TF always uses the last axis"), a("—", "largest", "paddle-only")],
    "out = list(tf.math.top_k(x, k=2))",
    f"values, indices = paddle.topk({P}, k=2)\nout = [values, indices.astype('int32')]  # TF's index dtype",
    "Returns (values, indices) on both sides; TF indices int32, Paddle int64 (cast them, as x2 does).",
    category="return-types")
api("tf.nn.local_response_normalization", "normalization", "LRN", "paddle.nn.functional.local_response_norm",
    "tf.nn.local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None)",
    "paddle.nn.functional.local_response_norm(x, size, alpha=0.0001, beta=0.75, k=1.0, data_format='NCHW', name=None)",
    [a("input", "x", "renamed", "TF is NHWC: pass data_format='NHWC'"),
     a("depth_radius", "size", "semantics", "size = 2 * depth_radius + 1"),
     a("bias", "k", "renamed"), a("alpha", "alpha", "semantics", "Paddle divides alpha by size; pass alpha * size"),
     a("beta", "beta", "default", "TF 0.5, Paddle 0.75")],
    "out = tf.nn.local_response_normalization(x, depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)",
    f"out = F.local_response_norm({P}, size=5, alpha=0.3 * 5, beta=0.75, k=1.5, data_format='NHWC')",
    "x2 decomposes it: x / (bias + alpha * size * avg_pool(x^2 over channels)) ** beta.",
    shape=(2, 3, 4, 6), atol=1e-5)

# ---------------------------------------------------------------- spectral
api("tf.signal.rfft", "signal", ("RFFT", "ComplexAbs"), "paddle.abs(paddle.fft.rfft(x))",
    "tf.signal.rfft(input_tensor, fft_length=None, name=None)  # then tf.math.abs (op ComplexAbs)",
    "paddle.fft.rfft(x, n=None, axis=-1, norm='backward', name=None)",
    [a("input_tensor", "x", "renamed"),
     a("fft_length", "n", "semantics", "TF a 1-element list [n], Paddle an int; both crop or zero-pad the last axis to n"),
     a("—", "axis", "paddle-only", "TF always transforms the last axis"),
     a("—", "norm", "paddle-only", "keep 'backward' (no scaling): TF's convention")],
    "out = [tf.abs(tf.signal.rfft(x)), tf.abs(tf.signal.rfft(x, fft_length=[6])), tf.abs(tf.signal.rfft(x, fft_length=[3]))]",
    f"t = {P}\nout = [paddle.abs(paddle.fft.rfft(t)), paddle.abs(paddle.fft.rfft(t, n=6)), paddle.abs(paddle.fft.rfft(t, n=3))]",
    ("x2 has no complex tensors: it converts an RFFT only when every reader takes its magnitude (ComplexAbs, i.e. "
     "tf.abs / tf.math.abs of the complex result, as in a magnitude spectrogram) and refuses an RFFT read by anything "
     "else or returned by the graph, and a ComplexAbs of anything but an RFFT.",
     "The converted model computes |rfft(x)| = sqrt((x @ cos)^2 + (x @ sin)^2) with constant DFT tables (float64 "
     "angles) instead of calling paddle.fft; n // 2 + 1 bins on both sides."), atol=1e-4)

# Call forms for the pages above whose example was written by hand (x2.api_diff.ApiTable.add_forms).
_N = "*name=None?"
_CMP = "x=tf.round(t) | paddle.round(t); y=tf.round(u) | paddle.round(u); " + _N
TABLE.add_forms({
    "tf.math.log": f"x=abs(t) + 0.1; {_N}", "tf.math.sqrt": f"x=abs(t); {_N}",
    "tf.math.rsqrt": f"x=abs(t) + 0.1; {_N}", "tf.math.reciprocal": f"x=abs(t) + 0.5; {_N}",
    "tf.math.sin": f"x=t * 3; {_N}", "tf.math.cos": f"x=t * 3; {_N}", "tf.math.floor": f"x=t * 3; {_N}",
    "tf.math.ceil": f"x=t * 3; {_N}",
    "tf.nn.silu": "features>x=t", "tf.nn.relu6": f"features>x=t * 4; {_N}",
    "tf.nn.leaky_relu": f"features>x=t; alpha>negative_slope=0.1?!0.2; {_N}",
    "tf.nn.gelu": f"features>x=t; approximate=True?; {_N}",
    "keras.ops.gelu": "x=t; approximate=False?!True",
    "tf.nn.softmax": f"logits>x=t; axis=1?; {_N}", "tf.nn.log_softmax": f"logits>x=t; axis=1?; {_N}",
    "tf.clip_by_value": f"t>x=t; clip_value_min>min=-0.5; clip_value_max>max=0.5; {_N}",
    "tf.math.reduce_sum": (f"input_tensor>x=t; axis=1?; keepdims>keepdim=True?; {_N}", {"pd_pos": 2}),
    "tf.math.reduce_mean": f"input_tensor>x=t; axis=1?; keepdims>keepdim=True?; {_N}",
    "tf.math.reduce_max": f"input_tensor>x=t; axis=1?; keepdims>keepdim=True?; {_N}",
    "tf.math.reduce_min": f"input_tensor>x=t; axis=1?; keepdims>keepdim=True?; {_N}",
    "tf.math.reduce_prod": f"input_tensor>x=t; axis=1?; keepdims>keepdim=True?; {_N}",
    "tf.reshape": f"tensor>x=t; shape=[4, -1]; {_N}",
    "tf.squeeze": f"input>x=t; axis=1?; {_N}",
    "tf.expand_dims": f"input>x=t; axis=1; {_N}",
    "tf.concat": f"values>x=[t, 2 * t]; axis=-1; {_N}",
    "tf.stack": f"values>x=[t, 2 * t]; axis=1?; {_N}",
    "tf.transpose": f"a>x=t; perm=[2, 0, 1]; {_N}",
    "tf.cast": "x=t * 3; dtype=tf.int32 | 'int32'; *name>-=None?",
    "tf.zeros_like": f"input>x=t; dtype=None?; {_N}", "tf.ones_like": f"input>x=t; dtype=None?; {_N}",
    "tf.gather": f"params>x=t; indices>index=[2, 0] | paddle.to_tensor([2, 0]); *axis=1; {_N}",
    "tf.tile": f"input>x=t; multiples>repeat_times=[1, 2, 1]; {_N}",
    "tf.reverse": f"tensor>x=t; axis=[0, 2]; {_N}",
    "tf.unstack": "value>input=t; *axis=1; *name>-=None?",
    "tf.where": f"condition=t > 0; x=t; y=-t; {_N}",
    "tf.fill": f"dims>shape=[2, 3]; value>fill_value=1.5; {_N}",
    "tf.math.argmax": f"input>x=t; axis=1?!0; {_N}",
    "tf.broadcast_to": f"input>x=t[:, :1]; shape=[2, 3, 4]; {_N}",
    "tf.math.equal": _CMP, "tf.math.not_equal": _CMP, "tf.math.greater": _CMP, "tf.math.greater_equal": _CMP,
    "tf.math.less": _CMP, "tf.math.less_equal": _CMP,
    "tf.math.logical_not": f"x=t > 0; {_N}",
})
del _N, _CMP
