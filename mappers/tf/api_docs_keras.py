"""More API-difference entries (tf, keras): metadata only, filled into mappers/tf/api_docs.py's TABLE."""
from __future__ import annotations

from mappers.tf.api_docs import TABLE

call = TABLE.call
api = TABLE.api
from x2.api_diff import a as A

# ---------------------------------------------------------------- keras.ops (NumPy-style names; x1/x2 -> x/y)
for name, pd, spec, fam, ops, cat, dtype, note in [
        ("relu", "nn.functional.relu", "x=t", "activation", ("Relu",), "", True, ""),
        ("relu6", "nn.functional.relu6", "x=t * 4", "activation", ("Relu6",), "", True, ""),
        ("sigmoid", "nn.functional.sigmoid", "x=t", "activation", ("Sigmoid",), "", True, ""),
        ("tanh", "tanh", "x=t", "activation", ("Tanh",), "", True, ""),
        ("silu", "nn.functional.silu", "x=t", "activation", ("Silu", "Swish"), "", True, ""),
        ("elu", "nn.functional.elu", "x=t; alpha=0.5?", "activation", ("Elu",), "", True, "x2 maps alpha = 1 (TF's Elu op)"),
        ("selu", "nn.functional.selu", "x=t", "activation", ("Selu",), "", True, ""),
        ("softplus", "nn.functional.softplus", "x=t", "activation", ("Softplus",), "", True, ""),
        ("softsign", "nn.functional.softsign", "x=t", "activation", (), "", True, ""),
        ("leaky_relu", "nn.functional.leaky_relu", "x=t; negative_slope=0.1?!0.2", "activation", ("LeakyRelu",), "", True,
         "Keras ops default 0.2, Paddle 0.01"),
        ("hard_sigmoid", "nn.functional.hardsigmoid", "x=t * 4", "activation", (), "", True,
         "Keras 3: relu6(x + 3) / 6, Paddle's slope 1/6, offset 0.5: the same"),
        ("softmax", "nn.functional.softmax", "x=t; axis=1?", "activation", ("Softmax",), "", True, ""),
        ("log_softmax", "nn.functional.log_softmax", "x=t; axis=1?", "activation", ("LogSoftmax",), "", True, ""),
        ("add", "add", "x1>x=t; x2>y=u", "math", ("AddV2",), "", True, ""),
        ("subtract", "subtract", "x1>x=t; x2>y=u", "math", ("Sub",), "", True, ""),
        ("multiply", "multiply", "x1>x=t; x2>y=u", "math", ("Mul",), "", True, ""),
        ("divide", "divide", "x1>x=t; x2>y=abs(u) + 0.5", "math", ("RealDiv",), "", True, ""),
        ("maximum", "maximum", "x1>x=t; x2>y=u", "math", ("Maximum",), "", True, ""),
        ("minimum", "minimum", "x1>x=t; x2>y=u", "math", ("Minimum",), "", True, ""),
        ("power", "pow", "x1>x=abs(t) + 0.5; x2>y=u", "math", ("Pow",), "", True, ""),
        ("matmul", "matmul", "x1>x=t; x2>y=tf.transpose(u, [0, 2, 1]) | u.transpose([0, 2, 1])", "math",
         ("BatchMatMulV2",), "", True, ""),
        ("abs", "abs", "x=t", "math", ("Abs",), "", True, ""),
        ("exp", "exp", "x=t", "math", ("Exp",), "", True, ""),
        ("log", "log", "x=abs(t) + 0.1", "math", ("Log",), "", True, ""),
        ("sqrt", "sqrt", "x=abs(t)", "math", ("Sqrt",), "", True, ""),
        ("square", "square", "x=t", "math", ("Square",), "", True, ""),
        ("erf", "erf", "x=t", "math", ("Erf",), "", True, ""),
        ("floor", "floor", "x=t * 3", "math", ("Floor",), "", True, ""),
        ("ceil", "ceil", "x=t * 3", "math", ("Ceil",), "", True, ""),
        ("sign", "sign", "x=t", "math", ("Sign",), "", True, ""),
        ("sin", "sin", "x=t", "math", ("Sin",), "", True, ""),
        ("cos", "cos", "x=t", "math", ("Cos",), "", True, ""),
        ("clip", "clip", "x=t; x_min>min=-0.5; x_max>max=0.5", "math", ("Maximum", "Minimum"), "", True,
         "Keras lowers clip to Minimum(Maximum(...)); x2 maps those ops"),
        ("mean", "mean", "x=t; axis=1?; keepdims>keepdim=True?", "reduction", ("Mean",), "", True, ""),
        ("sum", "sum", "x=t; axis=1?; keepdims>keepdim=True?", "reduction", ("Sum",), "", True, ""),
        ("max", "max", "x=t; axis=1?; keepdims>keepdim=True?", "reduction", ("Max",), "", True, ""),
        ("min", "min", "x=t; axis=1?; keepdims>keepdim=True?", "reduction", ("Min",), "", True, ""),
        ("prod", "prod", "x=t; axis=1?; keepdims>keepdim=True?", "reduction", ("Prod",), "", True, ""),
        ("var", "var", "x=t; axis=1?; keepdims>keepdim=True?; -<unbiased=False", "reduction", (), "defaults", True,
         "Keras computes the population variance; Paddle's unbiased=True by default"),
        ("std", "std", "x=t; axis=1?; keepdims>keepdim=True?; -<unbiased=False", "reduction", (), "defaults", True,
         "population std in Keras; pass unbiased=False"),
        ("logsumexp", "logsumexp", "x=t; axis=1?; keepdims>keepdim=True?", "reduction", (), "", True, ""),
        ("cumsum", "cumsum", "x=t; axis=1?", "reduction", ("Cumsum",), "", True, "without axis both flatten"),
        ("argmax", "argmax", "x=t; axis=1?", "reduction", ("ArgMax",), "return-types", False,
         "Keras (TF backend) returns int32, Paddle int64"),
        ("argsort", "argsort", "x=t; axis=1?!-1", "sort", (), "return-types", False, "Keras int32, Paddle int64"),
        ("sort", "sort", "x=t; axis=1?!-1", "sort", (), "", True, ""),
        ("reshape", "reshape", "x=t; newshape>shape=(4, 6)", "array", ("Reshape",), "", True, ""),
        ("transpose", "transpose", "x=t; axes>perm=(2, 0, 1)?!(2, 1, 0)", "array", ("Transpose",), "defaults", True,
         "Keras reverses the axes when axes is None; Paddle requires perm"),
        ("concatenate", "concat", "xs>x=[t, u]; axis=1?!0", "array", ("ConcatV2",), "", True, "both default to axis 0"),
        ("stack", "stack", "x=[t, u]; axis=1?", "array", ("Pack",), "", True, ""),
        ("squeeze", "squeeze", "x=t[:, :1]; axis=1?", "array", ("Squeeze",), "", True, ""),
        ("expand_dims", "unsqueeze", "x=t; axis=1", "array", ("ExpandDims",), "", True, ""),
        ("where", "where", "condition=t > 0; x1>x=t; x2>y=u", "array", ("SelectV2",), "", True, ""),
        ("tile", "tile", "x=t; repeats>repeat_times=(1, 2, 1)", "array", ("Tile",), "", True, ""),
        ("repeat", "repeat_interleave", "x=t; repeats=2; axis=1?", "array", (), "", True, ""),
        ("flip", "flip", "x=t; axis=1?![0, 1, 2]", "array", ("ReverseV2",), "defaults", True,
         "Keras flips every axis when axis is None; Paddle requires axis"),
        ("roll", "roll", "x=t; shift>shifts=1; axis=2?", "array", (), "", True, ""),
        ("tril", "tril", "x=t; k>diagonal=1?", "array", (), "", True, ""),
        ("triu", "triu", "x=t; k>diagonal=-1?", "array", (), "", True, ""),
        ("moveaxis", "moveaxis", "x=t; source=0; destination=2", "array", ("Transpose",), "", True, ""),
        ("one_hot", "nn.functional.one_hot", "x=tf.constant([0, 2, 1]) | paddle.to_tensor([0, 2, 1]); num_classes=4",
         "array", (), "", True, "float32 on both sides"),
        ("zeros_like", "zeros_like", "x=t", "creation", ("ZerosLike",), "", True, ""),
        ("ones_like", "ones_like", "x=t", "creation", ("OnesLike",), "", True, ""),
        ("full_like", "full_like", "x=t; fill_value=2.0", "creation", (), "", True, ""),
        ("outer", "outer", "x1>x=t[0, 0]; x2>y=u[0, 0]", "math", (), "", True, ""),
        ("einsum", "einsum", "", "math", ("Einsum",), "", True, "")]:
    if name == "einsum":
        continue
    call(f"keras.ops.{name}", fam, ops, f"paddle.{pd}", spec, notes=(note,) if note else (), category=cat,
         check_dtype=dtype, atol=1e-4, pd_pos=2 if name in ("var", "std") else None)
api("keras.ops.einsum", "math", "Einsum", "paddle.einsum", "keras.ops.einsum(subscripts, *operands)",
    "paddle.einsum(equation, *operands)", [A("subscripts", "equation", "renamed")],
    "out = [keras.ops.einsum('bij,bkj->bik', t, u), keras.ops.einsum('bij->bj', t)]",
    "out = [paddle.einsum('bij,bkj->bik', t, u), paddle.einsum('bij->bj', t)]",
    "Operands are variadic and positional on both sides.", atol=1e-4)

# ---------------------------------------------------------------- keras.layers: built, then applied to t (N, L, C) or an NHWC reshape
_IMG = "tf.reshape(t, (1, 2, 4, 3))"
_PIMG = "t.reshape([1, 2, 4, 3])"
call("keras.layers.Identity", "array", ("Identity",), "paddle.nn.Identity", "", then="(t)", src_fn="keras.layers.Identity",
     pd_fn="paddle.nn.Identity")
call("keras.layers.PReLU", "activation", (), "paddle.nn.PReLU", "-<init=0.0", then="(t)", src_fn="keras.layers.PReLU",
     pd_fn="paddle.nn.PReLU", category="defaults",
     notes=("Keras initialises alpha to zeros (one per element of the input shape, shareable with shared_axes); "
            "Paddle to 0.25 (one value, or one per channel with num_parameters): pass init=0.0 to match a fresh layer.",))
api("keras.layers.UpSampling1D", "array", (), "paddle.repeat_interleave", "keras.layers.UpSampling1D(size=2)",
    "paddle.repeat_interleave(x, repeats, axis=None, name=None)", [A("size", "repeats", "renamed"),
    A("—", "axis", "paddle-only", "1: the steps axis of (N, L, C)")],
    "out = [keras.layers.UpSampling1D()(t), keras.layers.UpSampling1D(size=3)(t)]",
    "out = [paddle.repeat_interleave(t, 2, axis=1), paddle.repeat_interleave(t, 3, axis=1)]",
    "Repeats every step along the length axis.", category="composite")
api("keras.layers.RepeatVector", "array", (), "paddle.tile", "keras.layers.RepeatVector(n)", "paddle.tile(x, repeat_times)",
    [A("n", "repeat_times", "semantics", "[1, n, 1] after unsqueeze(1)")], "out = keras.layers.RepeatVector(2)(t[0])",
    "out = t[0].unsqueeze(1).tile([1, 2, 1])", "(N, F) -> (N, n, F)", category="composite")
for name, pd_code, note in [
        ("GlobalAveragePooling1D", "t.mean(axis=1)", "mean over the steps axis (1 in NLC); keepdims=True keeps it"),
        ("GlobalMaxPooling1D", "t.max(axis=1)", "max over the steps axis (1 in NLC)"),
        ("Cropping1D", "t[:, 1:-1]", "crop (1, 1) steps: slicing"),
        ("ZeroPadding1D", "F.pad(t, [1, 1], data_format='NLC')", "pad (1, 1) steps with zeros")]:
    src_arg = "(1, 1)" if name in ("Cropping1D", "ZeroPadding1D") else ""
    api(f"keras.layers.{name}", "pooling" if "Pool" in name else "array", (), pd_code.split("(")[0],
        f"keras.layers.{name}({'cropping' if 'Crop' in name else 'padding' if 'Pad' in name else 'data_format, keepdims'}=...)",
        pd_code, [], f"out = keras.layers.{name}({src_arg})(t)", f"out = {pd_code}", note, category="composite")
for name, pool in (("MaxPooling1D", "MaxPool1D"), ("AveragePooling1D", "AvgPool1D")):
    call(f"keras.layers.{name}", "pooling", (), f"paddle.nn.{pool} (NCL)", "pool_size>kernel_size=2; strides>stride=1?!2", then="(t)",
         src_fn=f"keras.layers.{name}", pd_pre=f"def {pool}(kernel_size, stride=None):\n"
         f"    return lambda x: paddle.nn.{pool}(kernel_size, stride).__call__(x.transpose([0, 2, 1])).transpose([0, 2, 1])\n",
         pd_fn=pool, category="usage",
         notes="Keras pools channels-last (N, L, C); Paddle's 1-D pools are (N, C, L) only: transpose around them. "
               "strides defaults to pool_size on both sides.")
api("keras.layers.Cropping2D", "array", (), "slicing", "keras.layers.Cropping2D(cropping=((0, 0), (0, 0)), data_format=None)",
    "x[:, top:H - bottom, left:W - right]", [A("cropping", "—", "semantics", "((top, bottom), (left, right)) -> a slice")],
    f"out = keras.layers.Cropping2D(((1, 0), (1, 1)))({_IMG})", f"out = {_PIMG}[:, 1:, 1:-1]", "NHWC on both sides here",
    category="composite")
api("keras.layers.CenterCrop", "image", (), "slicing", "keras.layers.CenterCrop(height, width)", "x[:, top:top + h, left:left + w]",
    [A("height / width", "—", "semantics", "a centred slice")],
    f"out = keras.layers.CenterCrop(2, 2)({_IMG})", f"out = {_PIMG}[:, :, 1:3]", "NHWC; the crop is centred", category="composite")
api("keras.layers.Rescaling", "math", (), "x * scale + offset", "keras.layers.Rescaling(scale, offset=0.0)", "x * scale + offset",
    [A("scale / offset", "—", "semantics", "plain arithmetic in Paddle")],
    "out = [keras.layers.Rescaling(1 / 255.0, offset=-1.0)(t), keras.layers.Rescaling(2.0)(t)]",
    "out = [t * (1 / 255.0) + -1.0, t * 2.0]", category="composite")
api("keras.layers.UnitNormalization", "normalization", (), "paddle.nn.functional.normalize", "keras.layers.UnitNormalization(axis=-1)",
    "paddle.nn.functional.normalize(x, p=2, axis=1, epsilon=1e-12, name=None)", [A("axis", "axis", "default", "Keras -1, Paddle 1")],
    "out = keras.layers.UnitNormalization()(t)", "out = F.normalize(t, axis=-1)", category="defaults", atol=1e-5)
api("keras.layers.Average", "merge", (), "paddle.add_n(xs) / n", "keras.layers.Average()", "paddle.add_n(inputs) / len(inputs)",
    [A("inputs (list)", "inputs", "same")], "out = keras.layers.Average()([t, u, t * 2])", "out = paddle.add_n([t, u, t * 2]) / 3",
    category="composite")
api("keras.layers.Dot", "merge", (), "paddle.sum(x * y, axis)", "keras.layers.Dot(axes, normalize=False)", "(x * y).sum(axis)",
    [A("axes", "axis", "semantics", "per-sample axes (batch excluded)"), A("normalize", "—", "unsupported", "normalize first")],
    "out = [keras.layers.Dot(axes=1)([t[0], u[0]]), keras.layers.Dot(axes=(2, 2))([t, u])]",
    "out = [(t[0] * u[0]).sum(axis=1, keepdim=True), paddle.bmm(t, u.transpose([0, 2, 1]))]",
    "Dot of 2-D inputs keeps a size-1 axis; of 3-D inputs it is a batched matmul.", category="composite", atol=1e-4)
api("keras.layers.Resizing", "image", ("ResizeBilinear",), "paddle.nn.functional.interpolate",
    "keras.layers.Resizing(height, width, interpolation='bilinear', crop_to_aspect_ratio=False)",
    "paddle.nn.functional.interpolate(x, size, mode='nearest', align_corners=False, align_mode=0, data_format='NCHW')",
    [A("height / width", "size", "renamed"), A("interpolation", "mode", "default", "Keras 'bilinear', Paddle 'nearest'"),
     A("—", "data_format", "paddle-only", "'NHWC' for Keras' layout")],
    f"out = keras.layers.Resizing(4, 6)({_IMG})", f"out = F.interpolate({_PIMG}, size=[4, 6], mode='bilinear', data_format='NHWC')",
    "Half-pixel centres on both sides (align_corners=False, align_mode=0).", category="defaults", atol=1e-5)
api("keras.layers.Embedding", "array", (), "paddle.nn.Embedding", "keras.layers.Embedding(input_dim, output_dim, embeddings_initializer=...)",
    "paddle.nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, sparse=False, weight_attr=None)",
    [A("input_dim", "num_embeddings", "renamed"), A("output_dim", "embedding_dim", "renamed"),
     A("embeddings_initializer", "weight_attr", "semantics", "an initializer vs a ParamAttr (or set_value)")],
    "w = rng.randn(5, 4).astype('float32')\nids = np.array([[0, 4], [2, 1]])\n"
    "out = keras.layers.Embedding(5, 4, embeddings_initializer=keras.initializers.Constant(w))(ids)",
    "w = rng.randn(5, 4).astype('float32')\nids = np.array([[0, 4], [2, 1]])\n"
    "m = paddle.nn.Embedding(5, 4)\nm.weight.set_value(w)\nout = m(paddle.to_tensor(ids))",
    "The same [input_dim, output_dim] weight layout.", category="arg-names")
api("keras.layers.Conv1D", "conv", (), "paddle.nn.Conv1D", "keras.layers.Conv1D(filters, kernel_size, strides=1, padding='valid', ...)",
    "paddle.nn.Conv1D(in_channels, out_channels, kernel_size, stride=1, padding=0, ..., data_format='NCL')",
    [A("filters", "out_channels", "renamed"), A("—", "in_channels", "paddle-only", "required in Paddle"),
     A("padding", "padding", "semantics", "'valid'/'same' vs int or 'VALID'/'SAME'"),
     A("kernel (k, in, out)", "weight (out, in, k)", "semantics", "transpose [2, 1, 0]")],
    "k = rng.randn(2, 4, 5).astype('float32')\nb = rng.randn(5).astype('float32')\n"
    "out = keras.layers.Conv1D(5, 2, kernel_initializer=keras.initializers.Constant(k), "
    "bias_initializer=keras.initializers.Constant(b))(t)",
    "k = rng.randn(2, 4, 5).astype('float32')\nb = rng.randn(5).astype('float32')\n"
    "m = paddle.nn.Conv1D(4, 5, 2, data_format='NLC')\nm.weight.set_value(k.transpose(2, 1, 0))\nm.bias.set_value(b)\nout = m(t)",
    "Keras is channels-last (N, L, C): Paddle's data_format='NLC' takes it as is.", category="usage", atol=1e-4)
api("keras.layers.GaussianNoise", "regularization", (), "identity at inference", "keras.layers.GaussianNoise(stddev, seed=None)",
    "x (no layer)", [A("stddev", "—", "unsupported", "training-time only")],
    "out = keras.layers.GaussianNoise(0.5)(t)", "out = t", "Adds noise only with training=True; Paddle has no layer for it.",
    category="missing")
api("keras.layers.SpatialDropout2D", "regularization", (), "paddle.nn.Dropout2D", "keras.layers.SpatialDropout2D(rate, data_format=None)",
    "paddle.nn.Dropout2D(p=0.5, data_format='NCHW', name=None)",
    [A("rate", "p", "renamed"), A("data_format", "data_format", "semantics", "'channels_last' is 'NHWC'")],
    f"out = keras.layers.SpatialDropout2D(0.5)({_IMG})",
    f"m = paddle.nn.Dropout2D(0.5, data_format='NHWC')\nm.eval()\nout = m({_PIMG})",
    "Keras layers called directly run in inference mode (identity); Paddle layers need .eval().", category="usage")
