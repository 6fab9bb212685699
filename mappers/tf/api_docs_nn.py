"""API-difference entries for TensorFlow / Keras layers: conv, pooling, normalization, recurrent,
resize, transposed conv and space/depth (metadata only, filled into mappers/tf/api_docs.py's TABLE)."""
from __future__ import annotations

from mappers.tf.api_docs import P, TABLE, X
from x2.api_diff import a

api = TABLE.api

# ---------------------------------------------------------------- conv
_CONV_NOTES = ("TF filters are HWIO [kh, kw, in, out]; Paddle weights are OIHW [out, in, kh, kw]: x2 transposes "
               "them once at conversion (w.transpose(3, 2, 0, 1)).",
               "padding='SAME' pads asymmetrically (extra on the bottom/right) for even totals; Paddle accepts "
               "'SAME' too, and x2 writes explicit [top, bottom, left, right] pads.",
               "TF is NHWC by default, Paddle NCHW; x2 converts the layout and cancels the transposes it can.")
api("tf.nn.conv2d", "conv", "Conv2D", "paddle.nn.functional.conv2d",
    "tf.nn.conv2d(input, filters, strides, padding, data_format='NHWC', dilations=None, name=None)",
    "paddle.nn.functional.conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format='NCHW', name=None)",
    [a("input", "x", "renamed"), a("filters", "weight", "semantics", "HWIO vs OIHW"),
     a("strides", "stride", "semantics", "TF int or [1, sh, sw, 1]; Paddle int or [sh, sw]"),
     a("padding", "padding", "semantics", "'SAME'/'VALID' or explicit [[0,0],[t,b],[l,r],[0,0]]; Paddle also int/list pads"),
     a("data_format", "data_format", "default", "NHWC vs NCHW"), a("dilations", "dilation", "renamed"),
     a("—", "groups", "paddle-only", "TF infers groups from in_channels / filter in"), a("—", "bias", "paddle-only")],
    """
    w = rng.randn(3, 3, 3, 4).astype('float32')
    out = tf.nn.conv2d(x, w, strides=2, padding='SAME')
    """,
    """
    w = rng.randn(3, 3, 3, 4).astype('float32')
    t = paddle.to_tensor(x).transpose([0, 3, 1, 2])
    y = F.conv2d(t, paddle.to_tensor(w.transpose(3, 2, 0, 1)), stride=2, padding=[0, 1, 0, 1])
    out = y.transpose([0, 2, 3, 1])
    """, _CONV_NOTES + ("With input 6 and stride 2, SAME pads 1 in total: 0 on top, 1 at the bottom "
                        "(`padding='SAME'` in Paddle gives the same).",), shape=(1, 6, 6, 3), atol=1e-4)
api("keras.layers.Conv2D", "conv", ("Conv2D", "BiasAdd"), "paddle.nn.Conv2D",
    "keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', data_format=None, dilation_rate=(1, 1), groups=1, activation=None, use_bias=True, ...)",
    "paddle.nn.Conv2D(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, padding_mode='zeros', weight_attr=None, bias_attr=None, data_format='NCHW')",
    [a("filters", "out_channels", "renamed"), a("—", "in_channels", "paddle-only", "Keras infers it"),
     a("kernel_size", "kernel_size"), a("strides", "stride", "renamed"),
     a("padding", "padding", "semantics", "Keras 'valid'/'same' (lower case); Paddle int/list or 'SAME'/'VALID'"),
     a("data_format", "data_format", "default", "channels_last vs NCHW"), a("dilation_rate", "dilation", "renamed"),
     a("groups", "groups"), a("activation", "—", "unsupported", "apply it after the layer"),
     a("use_bias", "bias_attr", "semantics", "use_bias=False is bias_attr=False")],
    """
    layer = keras.layers.Conv2D(4, 3, padding='same')
    layer.build(x.shape)
    w, b = rng.randn(3, 3, 3, 4).astype('float32'), rng.randn(4).astype('float32')
    layer.set_weights([w, b])
    out = layer(x)
    """,
    """
    layer = paddle.nn.Conv2D(3, 4, 3, padding='SAME')
    w, b = rng.randn(3, 3, 3, 4).astype('float32'), rng.randn(4).astype('float32')
    layer.weight.set_value(w.transpose(3, 2, 0, 1))  # HWIO -> OIHW
    layer.bias.set_value(b)
    out = layer(paddle.to_tensor(x).transpose([0, 3, 1, 2])).transpose([0, 2, 3, 1])
    """, _CONV_NOTES, shape=(1, 5, 5, 3), atol=1e-4)
api("tf.nn.depthwise_conv2d", "conv", "DepthwiseConv2dNative", "paddle.nn.functional.conv2d (groups=C)",
    "tf.nn.depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None, name=None)",
    "paddle.nn.functional.conv2d(x, weight, stride=1, padding=0, dilation=1, groups=1, data_format='NCHW')",
    [a("input", "x", "renamed"), a("filter", "weight", "semantics", "[kh, kw, C, M] vs [C*M, 1, kh, kw]"),
     a("strides", "stride", "semantics", "[1, s, s, 1] vs s"), a("padding", "padding", "semantics", "as conv2d"),
     a("—", "groups", "semantics", "set groups=C")],
    """
    w = rng.randn(3, 3, 3, 2).astype('float32')
    out = tf.nn.depthwise_conv2d(x, w, strides=[1, 1, 1, 1], padding='VALID')
    """,
    """
    w = rng.randn(3, 3, 3, 2).astype('float32')
    pw = w.transpose(2, 3, 0, 1).reshape(6, 1, 3, 3)  # HWCM -> (C*M)1HW
    y = F.conv2d(paddle.to_tensor(x).transpose([0, 3, 1, 2]), paddle.to_tensor(pw), groups=3)
    out = y.transpose([0, 2, 3, 1])
    """, ("Output channel c*M + m comes from input channel c and multiplier m on both sides.",),
    shape=(1, 5, 5, 3), atol=1e-4)
api("keras.layers.DepthwiseConv2D", "conv", ("DepthwiseConv2dNative", "BiasAdd"), "paddle.nn.Conv2D (groups=C)",
    "keras.layers.DepthwiseConv2D(kernel_size, strides=(1, 1), padding='valid', depth_multiplier=1, data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True, ...)",
    "paddle.nn.Conv2D(in_channels=C, out_channels=C*M, kernel_size, groups=C, ...)",
    [a("depth_multiplier", "out_channels", "semantics", "out_channels = C * depth_multiplier"),
     a("kernel_size / strides / padding / dilation_rate", "kernel_size / stride / padding / dilation", "renamed"),
     a("use_bias", "bias_attr", "semantics")],
    """
    layer = keras.layers.DepthwiseConv2D(3, padding='same', use_bias=False)
    layer.build(x.shape)
    w = rng.randn(3, 3, 3, 1).astype('float32')
    layer.set_weights([w])
    out = layer(x)
    """,
    """
    layer = paddle.nn.Conv2D(3, 3, 3, padding=1, groups=3, bias_attr=False)
    w = rng.randn(3, 3, 3, 1).astype('float32')
    layer.weight.set_value(w.transpose(2, 3, 0, 1).reshape(3, 1, 3, 3))
    out = layer(paddle.to_tensor(x).transpose([0, 3, 1, 2])).transpose([0, 2, 3, 1])
    """, shape=(1, 5, 5, 3), atol=1e-4)

api("tf.nn.conv3d", "conv", "Conv3D", "paddle.nn.functional.conv3d",
    "tf.nn.conv3d(input, filters, strides, padding, data_format='NDHWC', dilations=None, name=None)",
    "paddle.nn.functional.conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format='NCDHW', name=None)",
    [a("input", "x", "renamed"), a("filters", "weight", "semantics", "DHWIO [kd, kh, kw, in, out] vs OIDHW [out, in, kd, kh, kw]"),
     a("strides", "stride", "semantics", "TF a list of 5, [1, sd, sh, sw, 1]; Paddle int or [sd, sh, sw]"),
     a("padding", "padding", "semantics", "'SAME'/'VALID' (SAME pads the extra cell at the end); Paddle also int/list pads"),
     a("data_format", "data_format", "default", "NDHWC vs NCDHW; x2 converts NDHWC only"),
     a("dilations", "dilation", "semantics", "[1, dd, dh, dw, 1] vs [dd, dh, dw]"),
     a("—", "groups", "paddle-only", "TF infers groups from in_channels / filter in"), a("—", "bias", "paddle-only")],
    """
    w = rng.randn(2, 3, 3, 2, 4).astype('float32')
    out = tf.nn.conv3d(x, w, strides=[1, 1, 2, 2, 1], padding='SAME')
    """,
    """
    w = rng.randn(2, 3, 3, 2, 4).astype('float32')
    t = paddle.to_tensor(x).transpose([0, 4, 1, 2, 3])  # NDHWC -> NCDHW
    y = F.conv3d(t, paddle.to_tensor(w.transpose(4, 3, 0, 1, 2)), stride=[1, 2, 2], padding='SAME')  # DHWIO -> OIDHW
    out = y.transpose([0, 2, 3, 4, 1])
    """, ("x2 transposes the input to NCDHW and the filter once to OIDHW, and computes the 3-D convolution as a sum "
          "of per-depth-tap 2-D convolutions (the IR has no conv3d), then transposes back.",
          "SAME with an even kernel (depth 2 here) pads 0 in front and 1 behind; Paddle's 'SAME' does the same."),
    shape=(1, 3, 5, 5, 2), atol=1e-4)

# ---------------------------------------------------------------- pooling
api("tf.nn.max_pool2d", "pooling", "MaxPool", "paddle.nn.functional.max_pool2d",
    "tf.nn.max_pool2d(input, ksize, strides, padding, data_format='NHWC', name=None)",
    "paddle.nn.functional.max_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, return_mask=False, data_format='NCHW', name=None)",
    [a("input", "x", "renamed"), a("ksize", "kernel_size", "renamed"), a("strides", "stride", "semantics", "required in TF; Paddle defaults to kernel_size"),
     a("padding", "padding", "semantics", "SAME/VALID vs explicit pads ('SAME' string accepted)"), a("data_format", "data_format", "default")],
    "out = tf.nn.max_pool2d(x, 3, 2, 'SAME')",
    "out = F.max_pool2d(paddle.to_tensor(x), 3, 2, padding='SAME', data_format='NHWC')",
    "x2 writes SAME as explicit pads (padded cells never win the max).", shape=(1, 6, 6, 2))
api("tf.nn.avg_pool2d", "pooling", "AvgPool", "paddle.nn.functional.avg_pool2d",
    "tf.nn.avg_pool2d(input, ksize, strides, padding, data_format='NHWC', name=None)",
    "paddle.nn.functional.avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None, data_format='NCHW', name=None)",
    [a("input", "x", "renamed"), a("ksize", "kernel_size", "renamed"), a("strides", "stride", "renamed"),
     a("padding", "padding", "semantics"),
     a("—", "exclusive", "paddle-only", "True (default) excludes padding from the average: TF semantics (torch's count_include_pad=True is exclusive=False)"),
     a("data_format", "data_format", "default")],
    "out = tf.nn.avg_pool2d(x, 3, 2, 'SAME')",
    "out = F.avg_pool2d(paddle.to_tensor(x), 3, 2, padding='SAME', data_format='NHWC')",
    "TF SAME average pooling divides by the number of real inputs; x2 keeps that.", shape=(1, 6, 6, 2))
api("keras.layers.MaxPooling2D", "pooling", "MaxPool", "paddle.nn.MaxPool2D",
    "keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding='valid', data_format=None)",
    "paddle.nn.MaxPool2D(kernel_size, stride=None, padding=0, ceil_mode=False, return_mask=False, data_format='NCHW')",
    [a("pool_size", "kernel_size", "default", "Keras 2, required in Paddle"), a("strides", "stride", "renamed", "None = pool size on both sides"),
     a("padding", "padding", "semantics"), a("data_format", "data_format", "default")],
    "out = keras.layers.MaxPooling2D()(x)", "out = paddle.nn.MaxPool2D(2, data_format='NHWC')(paddle.to_tensor(x))",
    shape=(1, 4, 4, 2))
api("keras.layers.AveragePooling2D", "pooling", "AvgPool", "paddle.nn.AvgPool2D",
    "keras.layers.AveragePooling2D(pool_size, strides=None, padding='valid', data_format=None)",
    "paddle.nn.AvgPool2D(kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None, data_format='NCHW')",
    [a("pool_size", "kernel_size", "default"), a("strides", "stride", "renamed"), a("padding", "padding", "semantics"),
     a("—", "exclusive", "paddle-only", "keep True for Keras semantics"), a("data_format", "data_format", "default")],
    "out = keras.layers.AveragePooling2D(3, 2, padding='same')(x)",
    "out = paddle.nn.AvgPool2D(3, 2, padding='SAME', data_format='NHWC')(paddle.to_tensor(x))", shape=(1, 6, 6, 2))

api("tf.nn.max_pool3d", "pooling", "MaxPool3D", "paddle.nn.functional.max_pool3d",
    "tf.nn.max_pool3d(input, ksize, strides, padding, data_format='NDHWC', name=None)",
    "paddle.nn.functional.max_pool3d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format='NCDHW', name=None)",
    [a("input", "x", "renamed"), a("ksize", "kernel_size", "semantics", "int, 3 or 5 values (1 for batch and channels) vs int or 3 values"),
     a("strides", "stride", "semantics", "required in TF (int, 3 or 5 values); Paddle defaults to kernel_size"),
     a("padding", "padding", "semantics", "SAME/VALID vs explicit pads ('SAME'/'VALID' strings accepted)"),
     a("data_format", "data_format", "default", "NDHWC vs NCDHW; x2 converts NDHWC only")],
    "out = [tf.nn.max_pool3d(x, 3, 2, 'SAME'), tf.nn.max_pool3d(x, 2, 1, 'VALID')]",
    f"t = {P}\nout = [F.max_pool3d(t, 3, 2, padding='SAME', data_format='NDHWC'), F.max_pool3d(t, 2, 1, data_format='NDHWC')]",
    "x2 transposes to NCDHW and takes the maximum over strided slices (padding never wins), then transposes back.",
    shape=(1, 4, 5, 5, 2))
api("tf.nn.avg_pool3d", "pooling", "AvgPool3D", "paddle.nn.functional.avg_pool3d",
    "tf.nn.avg_pool3d(input, ksize, strides, padding, data_format='NDHWC', name=None)",
    "paddle.nn.functional.avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None, data_format='NCDHW', name=None)",
    [a("input", "x", "renamed"), a("ksize", "kernel_size", "semantics", "int, 3 or 5 values vs int or 3 values"),
     a("strides", "stride", "semantics", "required in TF; Paddle defaults to kernel_size"),
     a("padding", "padding", "semantics", "SAME/VALID vs explicit pads ('SAME'/'VALID' strings accepted)"),
     a("—", "exclusive", "paddle-only", "keep True (default): TF's SAME averages over the real inputs only"),
     a("data_format", "data_format", "default", "NDHWC vs NCDHW; x2 converts NDHWC only")],
    "out = [tf.nn.avg_pool3d(x, 3, 2, 'SAME'), tf.nn.avg_pool3d(x, [2, 3, 2], 1, 'VALID')]",
    f"t = {P}\nout = [F.avg_pool3d(t, 3, 2, padding='SAME', data_format='NDHWC'), F.avg_pool3d(t, [2, 3, 2], 1, data_format='NDHWC')]",
    "x2 transposes to NCDHW and sums strided slices, dividing each window by its count of real inputs.",
    shape=(1, 4, 5, 5, 2))

# ---------------------------------------------------------------- normalization
_BN_ARGS = [a("momentum", "momentum", "default", "same meaning (moving = m*moving + (1-m)*batch); Keras 0.99, Paddle 0.9; torch's momentum is 1 - this"),
            a("epsilon", "epsilon", "default", "Keras/TF 1e-3, Paddle 1e-5: pass it explicitly")]
api("keras.layers.BatchNormalization", "normalization", ("FusedBatchNormV3", "Rsqrt", "Mul", "Sub", "AddV2"),
    "paddle.nn.BatchNorm2D",
    "keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001, center=True, scale=True, ...)",
    "paddle.nn.BatchNorm2D(num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format='NCHW', use_global_stats=None, name=None)",
    [a("axis", "data_format", "semantics", "axis=-1 is NHWC; Paddle takes data_format"), *_BN_ARGS,
     a("center / scale", "bias_attr / weight_attr", "semantics", "False is bias_attr=False / weight_attr=False"),
     a("—", "num_features", "paddle-only")],
    """
    layer = keras.layers.BatchNormalization()
    layer.build(x.shape)
    g, b, m, v = rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5
    layer.set_weights([g, b, m, v])
    out = layer(x, training=False)
    """,
    """
    layer = paddle.nn.BatchNorm2D(3, epsilon=1e-3, data_format='NHWC')
    g, b, m, v = rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5
    for p, val in zip([layer.weight, layer.bias, layer._mean, layer._variance], [g, b, m, v]):
        p.set_value(val.astype('float32'))
    layer.eval()
    out = layer(paddle.to_tensor(x))
    """, ("Keras 3 lowers inference BN to Rsqrt/Mul/Sub/AddV2; older Keras and TF1 graphs use FusedBatchNormV3. "
          "x2 maps both and folds them into one `batch_norm`.",), shape=(2, 4, 4, 3), atol=1e-4)
api("tf.compat.v1.nn.fused_batch_norm", "normalization", ("FusedBatchNormV3", "FusedBatchNormV2", "FusedBatchNorm"),
    "paddle.nn.functional.batch_norm",
    "tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format='NHWC', is_training=True, name=None, exponential_avg_factor=1.0)",
    "paddle.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum=0.9, epsilon=1e-05, data_format='NCHW', use_global_stats=None, name=None)",
    [X, a("scale", "weight", "renamed"), a("offset", "bias", "renamed"), a("mean", "running_mean", "renamed"),
     a("variance", "running_var", "renamed"), a("epsilon", "epsilon", "default", "1e-3 vs 1e-5"),
     a("is_training", "training", "default", "TF True, Paddle False; x2 refuses training-mode graphs"),
     a("exponential_avg_factor", "momentum", "semantics", "factor = 1 - momentum")],
    """
    g, b, m, v = [a.astype('float32') for a in (rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5)]
    out = tf.compat.v1.nn.fused_batch_norm(x, g, b, m, v, is_training=False)[0]
    """,
    """
    g, b, m, v = [paddle.to_tensor(a.astype('float32')) for a in (rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5)]
    out = F.batch_norm(paddle.to_tensor(x), m, v, g, b, epsilon=1e-3, data_format='NHWC')
    """, ("Graphs from older TF carry FusedBatchNorm / FusedBatchNormV2, same attributes.",), shape=(2, 4, 4, 3), atol=1e-4)
api("tf.nn.batch_normalization", "normalization", ("Rsqrt", "Mul", "Sub", "AddV2"), "paddle.nn.functional.batch_norm",
    "tf.nn.batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None)",
    "paddle.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum=0.9, epsilon=1e-05, data_format='NCHW')",
    [X, a("mean / variance", "running_mean / running_var", "renamed"), a("offset / scale", "bias / weight", "semantics", "argument order differs"),
     a("variance_epsilon", "epsilon", "semantics", "required in TF, 1e-5 default in Paddle")],
    """
    m, v, b, g = [a.astype('float32') for a in (rng.randn(3), rng.rand(3) + 0.5, rng.randn(3), rng.randn(3))]
    out = tf.nn.batch_normalization(x, m, v, b, g, 1e-3)
    """,
    """
    m, v, b, g = [paddle.to_tensor(a.astype('float32')) for a in (rng.randn(3), rng.rand(3) + 0.5, rng.randn(3), rng.randn(3))]
    out = F.batch_norm(paddle.to_tensor(x), m, v, g, b, epsilon=1e-3, data_format='NHWC')
    """, ("Lowered to elementwise ops; x2 maps each.",), shape=(2, 4, 4, 3), atol=1e-4)
api("keras.layers.LayerNormalization", "normalization", ("Mean", "SquaredDifference", "Rsqrt", "Mul", "Sub", "AddV2"),
    "paddle.nn.LayerNorm",
    "keras.layers.LayerNormalization(axis=-1, epsilon=0.001, center=True, scale=True, rms_scaling=False, ...)",
    "paddle.nn.LayerNorm(normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None, name=None)",
    [a("axis", "normalized_shape", "semantics", "Keras names axes; Paddle the trailing shape"),
     a("epsilon", "epsilon", "default", "Keras 1e-3, Paddle 1e-5"), a("center / scale", "bias_attr / weight_attr", "semantics"),
     a("rms_scaling", "—", "unsupported", "paddle.incubate has rms_norm")],
    """
    layer = keras.layers.LayerNormalization()
    layer.build(x.shape)
    g, b = rng.randn(4).astype('float32'), rng.randn(4).astype('float32')
    layer.set_weights([g, b])
    out = layer(x)
    """,
    """
    layer = paddle.nn.LayerNorm(4, epsilon=1e-3)
    g, b = rng.randn(4).astype('float32'), rng.randn(4).astype('float32')
    layer.weight.set_value(g)
    layer.bias.set_value(b)
    out = layer(paddle.to_tensor(x))
    """, ("Lowered to moments and elementwise ops in TF graphs; x2 maps each (no fused layer_norm from TF).",), atol=1e-4)

# ---------------------------------------------------------------- recurrent / resize
api("keras.layers.LSTM", "recurrent", ("x2.KerasRecurrent",), "paddle.nn.LSTM",
    "keras.layers.LSTM(units, activation='tanh', recurrent_activation='sigmoid', use_bias=True, return_sequences=False, return_state=False, go_backwards=False, ...)",
    "paddle.nn.LSTM(input_size, hidden_size, num_layers=1, direction='forward', time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, proj_size=0)",
    [a("units", "hidden_size", "renamed"), a("—", "input_size", "paddle-only"),
     a("kernel [in, 4H]", "weight_ih_l0 [4H, in]", "semantics", "transpose; gate order i, f, c, o on both sides"),
     a("recurrent_kernel [H, 4H]", "weight_hh_l0 [4H, H]", "semantics", "transpose"),
     a("bias [4H]", "bias_ih_l0 + bias_hh_l0", "semantics", "Paddle has two biases: put Keras' in one, zeros in the other"),
     a("return_sequences", "—", "semantics", "Paddle always returns (outputs, (h, c)); Keras default returns the last h"),
     a("activation / recurrent_activation", "—", "unsupported", "Paddle fixes tanh / sigmoid")],
    """
    layer = keras.layers.LSTM(5)
    layer.build((None, 4, 3))
    k, r, b = rng.randn(3, 20) * 0.5, rng.randn(5, 20) * 0.5, rng.randn(20) * 0.5
    layer.set_weights([k.astype('float32'), r.astype('float32'), b.astype('float32')])
    out = layer(x)
    """,
    """
    lstm = paddle.nn.LSTM(3, 5)
    k, r, b = rng.randn(3, 20) * 0.5, rng.randn(5, 20) * 0.5, rng.randn(20) * 0.5
    lstm.weight_ih_l0.set_value(k.T.astype('float32'))
    lstm.weight_hh_l0.set_value(r.T.astype('float32'))
    lstm.bias_ih_l0.set_value(b.astype('float32'))
    lstm.bias_hh_l0.set_value(np.zeros(20, 'float32'))
    out = lstm(paddle.to_tensor(x))[1][0][0]
    """, ("x2 recognises the layer's While loop in a SavedModel or .keras file (and GRU, SimpleRNN, "
          "Bidirectional) and writes one paddle.nn.LSTM with the weights re-laid-out; a masked layer "
          "(mask_zero) is unrolled instead, with --unroll-loops.",
          "TF1's tf.compat.v1.nn.rnn_cell.LSTMCell orders the gates i, j(c), f, o instead and adds forget_bias=1.0 at run time."),
    shape=(2, 4, 3), atol=1e-4)
api("tf.image.resize", "resize", ("ResizeBilinear", "ResizeNearestNeighbor"), "paddle.nn.functional.interpolate",
    "tf.image.resize(images, size, method='bilinear', preserve_aspect_ratio=False, antialias=False, name=None)",
    "paddle.nn.functional.interpolate(x, size=None, scale_factor=None, mode='nearest', align_corners=False, align_mode=0, data_format='NCHW', name=None)",
    [a("images", "x", "renamed"), a("size", "size"), a("method", "mode", "default", "TF 'bilinear', Paddle 'nearest'"),
     a("—", "align_corners", "semantics", "TF2 resize is half-pixel: align_corners=False with align_mode=0"),
     a("antialias / preserve_aspect_ratio", "—", "unsupported")],
    "out = tf.image.resize(x, [7, 5])",
    "out = F.interpolate(paddle.to_tensor(x), size=[7, 5], mode='bilinear', align_corners=False, data_format='NHWC')",
    ("x2 maps bilinear (half_pixel_centers, align_corners, legacy) and legacy nearest resizes.",
     "tf.compat.v1.image.resize_bilinear(align_corners=True) is Paddle align_corners=True; "
     "its default (False, half_pixel_centers=False) is Paddle align_mode=1."), shape=(1, 4, 3, 2), atol=1e-4)
api("tf.compat.v1.image.resize_bilinear", "resize", "ResizeBilinear", "paddle.nn.functional.interpolate",
    "tf.compat.v1.image.resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False)",
    "paddle.nn.functional.interpolate(x, size, mode='bilinear', align_corners=False, align_mode=0, data_format='NCHW')",
    [a("align_corners", "align_corners"), a("half_pixel_centers", "align_mode", "semantics", "False (TF1 default) is align_mode=1; True is align_mode=0")],
    "out = tf.compat.v1.image.resize_bilinear(x, [7, 5], align_corners=True)",
    "out = F.interpolate(paddle.to_tensor(x), size=[7, 5], mode='bilinear', align_corners=True, data_format='NHWC')",
    "x2 keeps align_corners / half_pixel_centers as the resize mode.", shape=(1, 4, 3, 2), atol=1e-4)
api("keras.layers.UpSampling2D", "resize", "ResizeNearestNeighbor", "paddle.nn.Upsample",
    "keras.layers.UpSampling2D(size=(2, 2), data_format=None, interpolation='nearest')",
    "paddle.nn.Upsample(size=None, scale_factor=None, mode='nearest', align_corners=False, align_mode=0, data_format='NCHW', name=None)",
    [a("size", "scale_factor", "renamed", "Keras size is the integer factor; Paddle size is the output size"),
     a("interpolation", "mode", "renamed"), a("data_format", "data_format", "default")],
    "out = keras.layers.UpSampling2D()(x)", "out = paddle.nn.Upsample(scale_factor=2, data_format='NHWC')(paddle.to_tensor(x))",
    shape=(1, 3, 3, 2))

# ---------------------------------------------------------------- transposed conv, space/depth
api("tf.nn.conv2d_transpose", "conv", "Conv2DBackpropInput", "paddle.nn.functional.conv2d_transpose",
    "tf.nn.conv2d_transpose(input, filters, output_shape, strides, padding='SAME', data_format='NHWC', dilations=None, name=None)",
    "paddle.nn.functional.conv2d_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, output_size=None, data_format='NCHW', name=None)",
    [a("input", "x", "renamed"), a("filters", "weight", "semantics", "[kh, kw, out, in] (HWOI) vs [in, out, kh, kw] (IOHW)"),
     a("output_shape", "output_size", "semantics", "TF: full NHWC shape, required; Paddle: spatial size, optional"),
     a("strides", "stride", "semantics"), a("padding", "padding", "semantics", "SAME/VALID vs explicit; x2 crops for SAME")],
    """
    w = rng.randn(3, 3, 4, 2).astype('float32')
    out = tf.nn.conv2d_transpose(x, w, [1, 11, 11, 4], strides=2, padding='VALID')
    """,
    """
    w = rng.randn(3, 3, 4, 2).astype('float32')
    y = F.conv2d_transpose(paddle.to_tensor(x).transpose([0, 3, 1, 2]), paddle.to_tensor(w.transpose(3, 2, 0, 1)), stride=2)
    out = y.transpose([0, 2, 3, 1])
    """, ("keras.layers.Conv2DTranspose lowers to the same op; its kernel is also [kh, kw, out, in].",),
    shape=(1, 5, 5, 2), atol=1e-4)
api("keras.layers.Conv2DTranspose", "conv", ("Conv2DBackpropInput", "BiasAdd"), "paddle.nn.Conv2DTranspose",
    "keras.layers.Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding='valid', output_padding=None, data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True, ...)",
    "paddle.nn.Conv2DTranspose(in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, dilation=1, weight_attr=None, bias_attr=None, data_format='NCHW')",
    [a("filters", "out_channels", "renamed"), a("—", "in_channels", "paddle-only"), a("strides", "stride", "renamed"),
     a("padding", "padding", "semantics"), a("use_bias", "bias_attr", "semantics")],
    """
    layer = keras.layers.Conv2DTranspose(4, 3, strides=2)
    layer.build(x.shape)
    w, b = rng.randn(3, 3, 4, 2).astype('float32'), rng.randn(4).astype('float32')
    layer.set_weights([w, b])
    out = layer(x)
    """,
    """
    layer = paddle.nn.Conv2DTranspose(2, 4, 3, stride=2)
    w, b = rng.randn(3, 3, 4, 2).astype('float32'), rng.randn(4).astype('float32')
    layer.weight.set_value(w.transpose(3, 2, 0, 1))  # HWOI -> IOHW
    layer.bias.set_value(b)
    out = layer(paddle.to_tensor(x).transpose([0, 3, 1, 2])).transpose([0, 2, 3, 1])
    """, shape=(1, 4, 4, 2), atol=1e-4)
api("tf.nn.depth_to_space", "array", "DepthToSpace", "reshape + transpose (not paddle.nn.functional.pixel_shuffle)",
    "tf.nn.depth_to_space(input, block_size, data_format='NHWC', name=None)",
    "paddle.nn.functional.pixel_shuffle(x, upscale_factor, data_format='NCHW', name=None)",
    [a("input", "x", "renamed"), a("block_size", "upscale_factor", "renamed"),
     a("—", "—", "semantics", "TF reads depth as (block_y, block_x, C) (DCR); pixel_shuffle as (C, block_y, block_x) (CRD)")],
    "out = tf.nn.depth_to_space(x, 2)",
    "t = paddle.to_tensor(x).reshape([1, 2, 2, 2, 2, 2])  # N, H, W, by, bx, C\nout = t.transpose([0, 1, 3, 2, 4, 5]).reshape([1, 4, 4, 2])",
    "x2 writes reshape + transpose + reshape in TF's DCR order; pixel_shuffle would mix the channels.", shape=(1, 2, 2, 8))
api("tf.nn.space_to_depth", "array", "SpaceToDepth", "reshape + transpose (not paddle.nn.functional.pixel_unshuffle)",
    "tf.nn.space_to_depth(input, block_size, data_format='NHWC', name=None)",
    "paddle.nn.functional.pixel_unshuffle(x, downscale_factor, data_format='NCHW', name=None)",
    [a("input", "x", "renamed"), a("block_size", "downscale_factor", "renamed"),
     a("—", "—", "semantics", "output depth order (block_y, block_x, C) in TF, (C, block_y, block_x) in pixel_unshuffle")],
    "out = tf.nn.space_to_depth(x, 2)",
    "t = paddle.to_tensor(x).reshape([1, 2, 2, 2, 2, 2])  # N, H/2, by, W/2, bx, C\nout = t.transpose([0, 1, 3, 2, 4, 5]).reshape([1, 2, 2, 8])",
    shape=(1, 4, 4, 2))

# Categories the argument table alone does not tell (x2.api_diff.derived_category gives the rest).
TABLE.recategorize({
    **{api: "usage" for api in (
        # weight layout / data layout / a layer configured differently
        "keras.layers.Dense", "tf.nn.bias_add", "keras.layers.GlobalAveragePooling2D", "keras.layers.GlobalMaxPooling2D",
        "keras.layers.Flatten", "keras.layers.Reshape", "keras.layers.Permute", "tf.nn.conv2d", "keras.layers.Conv2D",
        "tf.nn.conv3d", "tf.nn.conv2d_transpose", "keras.layers.Conv2DTranspose", "keras.layers.BatchNormalization",
        "keras.layers.LayerNormalization", "keras.layers.LSTM", "tf.nn.local_response_normalization",
        # no-ops: nothing to call in Paddle
        "tf.identity", "tf.stop_gradient", "tf.ensure_shape", "tf.debugging.check_numerics", "tf.raw_ops.Snapshot",
        "tf.raw_ops.PreventGradient", "tf.compat.v1.placeholder_with_default", "keras.layers.Dropout", "tf.identity_n")},
    "tf.shape": "return-types",
    "tf.math.argmax": "defaults",
})
