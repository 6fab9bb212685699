"""Call forms for the TensorFlow / Keras API-difference pages whose example was written by
hand (x2.api_diff.ApiTable.add_forms), and the reason for each page that has one form only
(ApiTable.single_form). Metadata only; imported last (x2.api_diff.MODULES).

Keras layers with weights are built and filled by `_k(layer, shape)` (`_K`), the Paddle
layer by `_pk(layer, (name, source shape, transpose), ...)` (`_PK`): the same numbers in the
Keras layout, transposed into Paddle's, so every constructor form is compared. Where Paddle
spells the API as several calls, `pd_pre` defines that composite as one function with the
Paddle parameter names, called in each form.
"""
from __future__ import annotations

import math

from mappers.tf.api_docs import TABLE
import mappers.tf.api_docs_keras  # noqa: F401  (add_forms names their entries)
import mappers.tf.api_docs_nn  # noqa: F401  (add_forms names their entries)
import mappers.tf.api_docs_ops  # noqa: F401  (add_forms names their entries)

_VALS = "(0.5 * np.cos(np.arange(int(np.prod(shape))) + k) + 1.0).reshape(shape).astype('float32')"
_K = f"""
def _k(m, shape):
    m.build(shape)
    m.set_weights([{_VALS} for k, shape in enumerate(w.shape for w in m.get_weights())])
    return m
"""
_PK = f"""
def _pk(m, *params):
    for k, (n, shape, perm) in enumerate(params):
        v = {_VALS}
        getattr(m, n).set_value(v * 0 if perm == 'zero' else v.transpose(perm) if perm else v)
    m.eval()
    return m
"""


def _keras(spec, cls, pd_fn, params="", call="(t)", pd_call=None, **opts):
    """A Keras layer's constructor forms, built and filled by `_k` (Paddle: `_pk` with `params`)."""
    return spec, {"src_fn": f"keras.layers.{cls}", "pd_fn": pd_fn, "pre": _K, "pd_pre": _PK,
                  "post": "_k({}, t.shape)" + call, "pd_post": f"_pk({{}}{params})" + (pd_call or call), **opts}


def _layer(spec, cls, pd_fn, call="(t)", pd_call=None, **opts):
    """A Keras layer without weights: each constructor form applied to `call`. A Paddle side
    written as `(lambda params: lambda v: ...)` (no such layer) becomes `_pd`, defined first."""
    if pd_fn.startswith("(lambda"):
        opts["pd_pre"], pd_fn = f"_pd = {pd_fn[1:-1]}", "_pd"
    return spec, {"src_fn": f"keras.layers.{cls}", "pd_fn": pd_fn, "then": call, "pd_then": pd_call or call, **opts}


def _fn(spec, pd_code, **opts):
    """Paddle spells it as a composite: `pd_code` defines `_pd` with the Paddle parameter names."""
    return spec, {"pd_pre": pd_code, "pd_fn": "_pd", **opts}


_BN = "g, b, m, v = [{}(np.cos(np.arange(3) + k).astype('float32') + k // 3) for k in range(4)]\n"


def _conv(shape, perm, pd_fn, reshape=None):
    """A TF filter of `shape` (`w`) and the same numbers transposed by `perm` for Paddle."""
    vals = f"np.cos(np.arange({math.prod(shape)})).reshape({shape}).astype('float32')"
    pd_vals = f"{vals}.transpose({perm})" + (f".reshape({reshape})" if reshape else "")
    return {"pre": f"w = tf.constant({vals})", "pd_pre": f"w = paddle.to_tensor({pd_vals})", "pd_fn": pd_fn, "pd_pos": 2}


_N = "name>-=None?"
_XY = f"x=t; y=u; {_N}"
_NHWC = "tf.reshape(t, (1, 2, 4, 3)) | t.reshape([1, 2, 4, 3])"
TABLE.add_forms({
    "tf.raw_ops.Inv": (f"*x=abs(t) + 0.5; *{_N}", {"pd_fn": "paddle.reciprocal"}),
    "tf.math.erfc": _fn(f"x=t; {_N}", "def _pd(x):\n    return 1 - paddle.erf(x)"),
    "keras.layers.ReLU": _layer("max_value>-=None?; negative_slope>-=0.0?; threshold>-=0.0?", "ReLU", "paddle.nn.ReLU"),
    "keras.layers.ELU": _layer("alpha=0.5?!1.0", "ELU", "paddle.nn.ELU"),
    "keras.layers.LeakyReLU": _layer("negative_slope=0.2?!0.3", "LeakyReLU", "paddle.nn.LeakyReLU"),
    "keras.layers.Softmax": _layer("axis=1?", "Softmax", "paddle.nn.Softmax"),
    "keras.layers.Activation": _fn("activation='tanh'", "def _pd(activation):\n    return getattr(paddle, activation)",
                                   src_fn="keras.layers.Activation", then="(t)"),
    "keras.activations.swish": "x=t",
    "tf.math.sign": f"x=t; {_N}", "tf.math.is_nan": f"x=tf.math.log(t) | t.log(); {_N}",
    "tf.math.is_inf": f"x=1 / tf.maximum(t, 0.0) | 1 / t.clip(0); {_N}",
    "tf.math.add": _XY, "tf.math.subtract": _XY, "tf.math.multiply": _XY, "tf.math.maximum": _XY,
    "tf.math.minimum": _XY, "tf.math.truediv": f"x=t; y=abs(u) + 0.5; {_N}",
    "tf.compat.v1.div": f"x=t; y=abs(u) + 0.5; {_N}", "tf.math.pow": f"x=abs(t) + 0.5; y=u; {_N}",
    "tf.math.squared_difference": _fn(_XY, "def _pd(x, y):\n    return paddle.square(paddle.subtract(x, y))"),
    "tf.linalg.matmul": "a>x=t; b>y=u; transpose_a>transpose_x=False?; transpose_b>transpose_y=True",
    "tf.raw_ops.BatchMatMulV3": ("*x=t; *y=u; *Tout>-=tf.float32; *adj_x>transpose_x=False?; *adj_y>transpose_y=True",
                                 {"pd_fn": "paddle.matmul"}),
    "tf.nn.bias_add": f"value>x=t; bias>y=u[0, 0]; data_format>-=None?; {_N}",
    "tf.math.reduce_variance": (f"input_tensor>x=t; axis=-1?; keepdims>keepdim=False?; -<unbiased=False; {_N}",
                                {"pd_pos": 2}),
    "tf.nn.moments": _fn(f"x=t; axes>axis=[0, 1]; shift>-=None?; keepdims>keepdim=False?; {_N}",
                         "def _pd(x, axis, keepdim=False):\n"
                         "    return paddle.mean(x, axis, keepdim), paddle.var(x, axis, False, keepdim)"),
    "keras.layers.GlobalAveragePooling2D": _fn("data_format>-=None?; keepdims>keepdim=False?",
                                               "def _pd(keepdim=False):\n"
                                               "    return lambda v: paddle.mean(v, axis=[1, 2], keepdim=keepdim)",
                                               src_fn="keras.layers.GlobalAveragePooling2D", then="(t)"),
    "keras.layers.GlobalMaxPooling2D": _fn("data_format>-=None?; keepdims>keepdim=False?",
                                           "def _pd(keepdim=False):\n"
                                           "    return lambda v: paddle.max(v, axis=[1, 2], keepdim=keepdim)",
                                           src_fn="keras.layers.GlobalMaxPooling2D", then="(t)"),
    "keras.layers.Flatten": _layer("data_format>-=None?; -<start_axis=1", "Flatten", "paddle.nn.Flatten"),
    "keras.layers.Reshape": _layer("target_shape>shape=(4, 3) | [-1, 4, 3]", "Reshape",
                                   "(lambda shape: lambda v: paddle.reshape(v, shape))"),
    "keras.layers.Concatenate": _layer("axis=1?!-1", "Concatenate", "(lambda axis=-1: lambda vs: paddle.concat(vs, axis))",
                                       call="([t, u])"),
    "tf.pad": (f"tensor>x=t; paddings>pad=[[0, 0], [1, 2], [2, 1]] | [0, 0, 1, 2, 2, 1]; mode='CONSTANT' | 'constant'?; "
               f"constant_values>value=1.5?; {_N}", {"pd_fn": "F.pad"}),
    "keras.layers.ZeroPadding2D": _layer("padding=((1, 2), (0, 1)) | [0, 1, 1, 2]; data_format='channels_last' | 'NHWC'?!'NHWC'",
                                         "ZeroPadding2D", "paddle.nn.Pad2D", pd_pos=1),
    "keras.layers.Permute": _layer("dims>perm=(2, 1) | [0, 2, 1]", "Permute",
                                   "(lambda perm: lambda v: paddle.transpose(v, perm))"),
    "tf.shape": _fn(f"input>x=t; out_type>dtype=tf.int32 | 'int32'?!'int32'; {_N}",
                    "def _pd(x, dtype='int64'):\n    return paddle.shape(x).astype(dtype)"),
    "tf.strided_slice": _fn(f"input_>x=t; begin>starts=[0, 1, 0]; end>ends=[2, 3, 4]; strides=[1, 1, 2]?![1, 1, 1]; {_N}",
                            "def _pd(x, starts, ends, strides=(1, 1, 1)):\n"
                            "    return paddle.strided_slice(x, [0, 1, 2], starts, ends, strides)"),
    "tf.slice": _fn(f"input_>x=t; begin>starts=[0, 1, 1]; size>ends=[-1, 2, 2] | [2, 3, 3]; {_N}",
                    "def _pd(x, starts, ends):\n    return paddle.slice(x, [0, 1, 2], starts, ends)"),
    "tf.identity": (f"input>x=t; {_N}", {"pd_fn": "paddle.assign"}),
    "tf.stop_gradient": (f"input>x=t; {_N}", {"pd_fn": "paddle.assign"}),
    "tf.ensure_shape": (f"x=t; shape>-=[2, 3, 4]; {_N}", {"pd_fn": "paddle.assign"}),
    "tf.debugging.check_numerics": (f"tensor>x=t; message>-='bad'; {_N}", {"pd_fn": "paddle.assign"}),
    "tf.raw_ops.Snapshot": (f"*input>x=t; *{_N}", {"pd_fn": "paddle.assign"}),
    "tf.raw_ops.PreventGradient": (f"*input>x=t; *message>-=''?; *{_N}", {"pd_fn": "paddle.assign"}),
    "tf.compat.v1.placeholder_with_default": (f"input>x=t; shape>-=[2, 3, 4]; {_N}", {"pd_fn": "paddle.assign"}),
    "keras.layers.Dropout": _layer("rate>-=0.5; noise_shape>-=None?; seed>-=None?", "Dropout", "paddle.nn.Identity"),
    "tf.identity_n": _fn(f"input>x=[t, u]; {_N}", "def _pd(x):\n    return [paddle.assign(v) for v in x]"),
    "tf.split": (f"value>x=t; num_or_size_splits>num_or_sections=[1, -1]; axis=2?; num>-=None?; {_N}",
                 {"pd_fn": "paddle.split"}),
    "tf.math.cumsum": _fn(f"x=t; axis=1?!0; exclusive=True?; reverse=True?; {_N}",
                          "def _pd(x, axis=0, exclusive=False, reverse=False):\n"
                          "    r = paddle.cumsum(x.flip(axis) if reverse else x, axis=axis)\n"
                          "    if exclusive:\n        r = r - (x.flip(axis) if reverse else x)\n"
                          "    return r.flip(axis) if reverse else r"),
    "tf.gather_nd": (f"params>x=t; indices>index=[[0, 1], [1, 2]] | paddle.to_tensor([[0, 1], [1, 2]]); "
                     f"batch_dims>-=0?; {_N}", {"pd_fn": "paddle.gather_nd"}),
    "tf.scatter_nd": (f"indices>index=[[1], [0]] | paddle.to_tensor([[1], [0]]); updates=t; "
                      f"shape=[3, 3, 4]; {_N}", {"pd_fn": "paddle.scatter_nd"}),
    "tf.math.logical_and": f"x=t > 0; y=u > 0; {_N}", "tf.math.logical_or": f"x=t > 0; y=u > 0; {_N}",
    "tf.math.top_k": _fn(f"input>x=t; k=2?!1; sorted=True?; {_N}",
                         "def _pd(x, k=1, sorted=True):\n    v, i = paddle.topk(x, k, sorted=sorted)\n"
                         "    return v, i.astype('int32')"),
    "tf.nn.local_response_normalization": _fn(
        f"input>x=t; depth_radius>size=2 | 5?!11; bias>k=1.5?!1.0; alpha=0.3 | 1.5?!11.0; beta=0.75?!0.5; {_N}",
        "def _pd(x, size, k, alpha, beta):\n"
        "    return F.local_response_norm(x, size, alpha, beta, k, data_format='NHWC')"),
    "tf.signal.rfft": _fn(f"input_tensor>x=t; fft_length>n=[6] | 6?; {_N}",
                          "def _pd(x, n=None):\n    return paddle.fft.rfft(x, n)", post="tf.abs({})",
                          pd_post="paddle.abs({})"),
    "tf.nn.max_pool2d": (f"input>x=t; ksize>kernel_size=3; strides>stride=2; padding='SAME'; "
                         f"data_format='NHWC'?!'NHWC'; {_N}", {"pd_fn": "F.max_pool2d", "pd_pos": 4}),
    "tf.nn.avg_pool2d": (f"input>x=t; ksize>kernel_size=3; strides>stride=2; padding='SAME'; "
                         f"data_format='NHWC'?!'NHWC'; {_N}", {"pd_fn": "F.avg_pool2d", "pd_pos": 4}),
    "tf.nn.max_pool3d": (f"input>x=t; ksize>kernel_size=3; strides>stride=2; padding='SAME'; "
                         f"data_format='NDHWC'?!'NDHWC'; {_N}", {"pd_fn": "F.max_pool3d", "pd_pos": 4}),
    "tf.nn.avg_pool3d": (f"input>x=t; ksize>kernel_size=3; strides>stride=2; padding='SAME'; "
                         f"data_format='NDHWC'?!'NDHWC'; {_N}", {"pd_fn": "F.avg_pool3d", "pd_pos": 4}),
    "keras.layers.MaxPooling2D": _layer("pool_size>kernel_size=2?!2; strides>stride=None?; padding='valid' | 0?; "
                                        "data_format='channels_last' | 'NHWC'?!'NHWC'", "MaxPooling2D", "paddle.nn.MaxPool2D", pd_pos=3),
    "keras.layers.AveragePooling2D": _layer("pool_size>kernel_size=3; strides>stride=2?; padding='same' | 'SAME'?; "
                                            "data_format='channels_last' | 'NHWC'?!'NHWC'", "AveragePooling2D", "paddle.nn.AvgPool2D", pd_pos=3),
    "tf.compat.v1.nn.fused_batch_norm": (
        "x=t; scale=g; offset=b; mean=m; variance=v; epsilon=0.001?!0.001; data_format='NHWC'?!'NHWC'; is_training>-=False", {
            "pre": _BN.format("tf.constant"), "pd_fn": "_pd", "post": "{}[0]", "pd_post": "{}",
            "pd_pre": _BN.format("paddle.to_tensor") + "def _pd(x, scale, offset, mean, variance, epsilon, data_format):\n"
            "    return F.batch_norm(x, mean, variance, scale, offset, epsilon=epsilon, data_format=data_format)"}),
    "tf.nn.batch_normalization": (f"x=t; mean=m; variance=v; offset=b; scale=g; variance_epsilon>epsilon=1e-3; {_N}", {
        "pre": _BN.format("tf.constant"), "pd_fn": "_pd",
        "pd_pre": _BN.format("paddle.to_tensor") + "def _pd(x, mean, variance, offset, scale, epsilon):\n"
        "    return F.batch_norm(x, mean, variance, scale, offset, epsilon=epsilon, data_format='NHWC')"}),
    "tf.image.resize": ("images>x=t; size=[7, 5]; method>mode='bilinear'?!'bilinear'; preserve_aspect_ratio>-=False?; "
                        "antialias>-=False?; -<data_format='NHWC'", {"pd_fn": "F.interpolate", "pd_pos": 2}),
    "tf.compat.v1.image.resize_bilinear": (f"images>x=t; size=[7, 5]; align_corners=True; {_N}; "
                                           "half_pixel_centers>-=False?; -<mode='bilinear'; -<data_format='NHWC'",
                                           {"pd_fn": "F.interpolate", "pd_pos": 2}),
    "keras.layers.UpSampling2D": _layer("size>scale_factor=2?!2; data_format='channels_last' | 'NHWC'?!'NHWC'; "
                                        "interpolation>mode='nearest'?", "UpSampling2D", "paddle.nn.Upsample", pd_pos=0),
    "tf.signal.fft": ("input>x=tf.complex(t, u) | paddle.complex(t, u); name>-=None?", {
        "pd_fn": "paddle.fft.fft", "post": "tf.math.real({})", "pd_post": "paddle.real({})"}),
    "tf.signal.ifft": ("input>x=tf.complex(t, u) | paddle.complex(t, u); name>-=None?", {
        "pd_fn": "paddle.fft.ifft", "post": "tf.math.imag({})", "pd_post": "paddle.imag({})"}),
    "tf.signal.irfft": (f"input_tensor>x=tf.complex(t, u) | paddle.complex(t, u); fft_length>n=[6] | 6?; {_N}",
                        {"pd_fn": "paddle.fft.irfft"}),
    "tf.signal.rfft2d": (f"input_tensor>x=t; fft_length>s=[3, 4] | [3, 4]?; {_N}",
                         {"pd_fn": "paddle.fft.rfft2", "post": "tf.math.real({})", "pd_post": "paddle.real({})"}),
    "tf.signal.frame": _fn(f"signal>x=tf.reshape(t, (2, 12)) | t.reshape([2, 12]); frame_length=4; frame_step>hop_length=2; "
                           f"pad_end>-=False?; pad_value>-=0?; axis>-=-1?; {_N}",
                           "def _pd(x, frame_length, hop_length):\n"
                           "    return paddle.signal.frame(x, frame_length, hop_length).transpose([0, 2, 1])"),
    "keras.layers.UpSampling1D": _layer("size>repeats=3?!2", "UpSampling1D",
                                        "(lambda repeats=2: lambda v: paddle.repeat_interleave(v, repeats, axis=1))"),
    "keras.layers.RepeatVector": _layer("n>repeat_times=3", "RepeatVector",
                                        "(lambda repeat_times: lambda v: v.unsqueeze(1).tile([1, repeat_times, 1]))",
                                        call="(t[0])"),
    "keras.layers.GlobalAveragePooling1D": _layer("data_format>-='channels_last'?; keepdims>keepdim=True?", "GlobalAveragePooling1D",
                                                  "(lambda keepdim=False: lambda v: v.mean(axis=1, keepdim=keepdim))"),
    "keras.layers.GlobalMaxPooling1D": _layer("data_format>-='channels_last'?; keepdims>keepdim=True?", "GlobalMaxPooling1D",
                                              "(lambda keepdim=False: lambda v: v.max(axis=1, keepdim=keepdim))"),
    "keras.layers.Cropping1D": _layer("cropping=(1, 0)?!(1, 1)", "Cropping1D",
                                      "(lambda cropping=(1, 1): lambda v: v[:, cropping[0]:v.shape[1] - cropping[1]])"),
    "keras.layers.ZeroPadding1D": _layer("padding=(2, 1) | [2, 1]?![1, 1]; -<data_format='NLC'", "ZeroPadding1D",
                                         "paddle.nn.Pad1D"),
    "keras.layers.Cropping2D": _layer("cropping=((1, 0), (1, 1))?!((0, 0), (0, 0)); data_format>-=None?", "Cropping2D",
                                      "(lambda cropping: lambda v: v[:, cropping[0][0]:v.shape[1] - cropping[0][1], "
                                      "cropping[1][0]:v.shape[2] - cropping[1][1]])", call=f"({_NHWC.split(' | ')[0]})",
                                      pd_call=f"({_NHWC.split(' | ')[1]})"),
    "keras.layers.CenterCrop": _layer("height=2; width=2", "CenterCrop",
                                      "(lambda height, width: lambda v: v[:, (v.shape[1] - height) // 2:][:, :height, "
                                      "(v.shape[2] - width) // 2:][:, :, :width])",
                                      call=f"({_NHWC.split(' | ')[0]})", pd_call=f"({_NHWC.split(' | ')[1]})"),
    "keras.layers.Rescaling": _layer("scale=1 / 255.0; offset=-1.0?!0.0", "Rescaling",
                                     "(lambda scale, offset=0.0: lambda v: v * scale + offset)"),
    "keras.layers.UnitNormalization": _layer("axis=1?!-1", "UnitNormalization",
                                             "(lambda axis=-1: lambda v: F.normalize(v, axis=axis))"),
    "keras.layers.Dot": _layer("axes=(2, 2) | 2; normalize=False?", "Dot",
                               "(lambda axes, normalize=False: lambda vs: paddle.bmm(vs[0], vs[1].transpose([0, 2, 1])))",
                               call="([t, u])"),
    "keras.layers.Resizing": _layer("height=4; width=6; interpolation>mode='bilinear'?!'bilinear'; "
                                    "crop_to_aspect_ratio>-=False?", "Resizing",
                                    "(lambda height, width, mode='bilinear': lambda v: F.interpolate(v, size=[height, width], "
                                    "mode=mode, data_format='NHWC'))",
                                    call=f"({_NHWC.split(' | ')[0]})", pd_call=f"({_NHWC.split(' | ')[1]})"),
    "keras.layers.GaussianNoise": _layer("stddev>-=0.5; seed>-=None?", "GaussianNoise", "paddle.nn.Identity"),
    "keras.layers.SpatialDropout2D": _fn("rate>p=0.5; data_format='channels_last' | 'NHWC'?!'NHWC'",
                                         "def _pd(p, data_format='NCHW'):\n    m = paddle.nn.Dropout2D(p, data_format)\n"
                                         "    m.eval()\n    return m", src_fn="keras.layers.SpatialDropout2D",
                                         then=f"({_NHWC.split(' | ')[0]})", pd_then=f"({_NHWC.split(' | ')[1]})"),
    "keras.layers.PReLU": _layer("alpha_initializer>init='zeros' | 0.0?!0.0; shared_axes>-=None?", "PReLU", "paddle.nn.PReLU",
                                 pd_pos=0),
    # functional convolutions: the same HWIO numbers, transposed to Paddle's OIHW
    "tf.nn.conv2d": (f"input>x=t; filters>weight=w; strides>stride=2; padding='SAME'; data_format='NHWC'?!'NHWC'; "
                     f"dilations>dilation=None | 1?; {_N}", _conv((3, 3, 3, 4), (3, 2, 0, 1), "F.conv2d")),
    "tf.nn.depthwise_conv2d": (f"input>x=t; filter>weight=w; strides>stride=[1, 1, 1, 1] | 1; padding='VALID'; "
                               f"data_format='NHWC'?!'NHWC'; dilations>dilation=None | 1?; {_N}; -<groups=3",
                               _conv((3, 3, 3, 2), (2, 3, 0, 1), "F.conv2d", reshape=(6, 1, 3, 3))),
    "tf.nn.conv3d": (f"input>x=t; filters>weight=w; strides>stride=[1, 1, 2, 2, 1] | [1, 2, 2]; padding='SAME'; "
                     f"data_format='NDHWC'?!'NDHWC'; dilations>dilation=None | 1?; {_N}",
                     _conv((2, 3, 3, 2, 4), (4, 3, 0, 1, 2), "F.conv3d")),
    "tf.nn.conv2d_transpose": (f"input>x=t; filters>weight=w; output_shape>output_size=[1, 11, 11, 4] | [11, 11]; "
                               f"strides>stride=2; padding='VALID'; data_format='NHWC'?!'NHWC'; {_N}",
                               _conv((3, 3, 4, 2), (3, 2, 0, 1), "F.conv2d_transpose")),
    "tf.nn.depth_to_space": _fn(f"input>x=t; block_size=2; data_format>-='NHWC'?; {_N}",
                                "def _pd(x, block_size):\n    n, h, w, c = x.shape\n    b = block_size\n"
                                "    y = x.reshape([n, h, w, b, b, c // (b * b)]).transpose([0, 1, 3, 2, 4, 5])\n"
                                "    return y.reshape([n, h * b, w * b, c // (b * b)])"),
    "tf.nn.space_to_depth": _fn(f"input>x=t; block_size=2; data_format>-='NHWC'?; {_N}",
                                "def _pd(x, block_size):\n    n, h, w, c = x.shape\n    b = block_size\n"
                                "    y = x.reshape([n, h // b, b, w // b, b, c]).transpose([0, 1, 3, 2, 4, 5])\n"
                                "    return y.reshape([n, h // b, w // b, b * b * c])"),
    # layers with weights (_k / _pk)
    "keras.layers.Dense": _keras("units>out_features=5; activation>-=None?; use_bias>bias_attr=True | None?; -<in_features=4",
                                 "Dense", "paddle.nn.Linear", ", ('weight', (4, 5), None), ('bias', (5,), None)", pd_pos=0),
    "keras.layers.LayerNormalization": _keras("axis>-=-1?; epsilon=0.001?!0.001; -<normalized_shape=4", "LayerNormalization",
                                              "paddle.nn.LayerNorm", ", ('weight', (4,), None), ('bias', (4,), None)", pd_pos=0),
    "keras.layers.BatchNormalization": _keras(
        "axis>-=-1?; momentum=0.99?; epsilon=0.001?!0.001; -<num_features=3; -<data_format='NHWC'", "BatchNormalization",
        "paddle.nn.BatchNorm2D", ", ('weight', (3,), None), ('bias', (3,), None), ('_mean', (3,), None), "
        "('_variance', (3,), None)", call="(t, training=False)", pd_call="(t)", pd_pos=0),
    "keras.layers.Conv2D": _keras("filters>out_channels=4; kernel_size=3; strides>stride=1?; padding='same' | 'SAME'?; "
                                  "-<in_channels=3; -<data_format='NHWC'", "Conv2D", "paddle.nn.Conv2D",
                                  ", ('weight', (3, 3, 3, 4), (3, 2, 0, 1)), ('bias', (4,), None)", pd_pos=0),
    "keras.layers.Conv2DTranspose": _keras("filters>out_channels=4; kernel_size=3; strides>stride=2; padding='valid' | 0?; "
                                           "-<in_channels=2; -<data_format='NHWC'", "Conv2DTranspose", "paddle.nn.Conv2DTranspose",
                                           ", ('weight', (3, 3, 4, 2), (3, 2, 0, 1)), ('bias', (4,), None)", pd_pos=0),
    "keras.layers.DepthwiseConv2D": _keras("kernel_size=3; strides>stride=1?; padding='same' | 1?; *use_bias>bias_attr=False; "
                                           "-<in_channels=3; -<out_channels=3; -<groups=3; -<data_format='NHWC'",
                                           "DepthwiseConv2D", "paddle.nn.Conv2D", ", ('weight', (3, 3, 3, 1), (2, 3, 0, 1))",
                                           pd_pos=0),
    "keras.layers.Conv1D": _keras("filters>out_channels=5; kernel_size=2; strides>stride=1?; padding='valid' | 0?; "
                                  "-<in_channels=4; -<data_format='NLC'", "Conv1D", "paddle.nn.Conv1D",
                                  ", ('weight', (2, 4, 5), (2, 1, 0)), ('bias', (5,), None)", pd_pos=0),
    "keras.layers.Embedding": _keras("input_dim>num_embeddings=5; output_dim>embedding_dim=4", "Embedding", "paddle.nn.Embedding",
                                     ", ('weight', (5, 4), None)", call="(np.array([[0, 4], [2, 1]]))",
                                     pd_call="(paddle.to_tensor([[0, 4], [2, 1]]))"),
    "keras.layers.LSTM": _keras("units>hidden_size=5; activation>-='tanh'?; recurrent_activation>-='sigmoid'?; "
                                "use_bias>-=True?; -<input_size=3", "LSTM", "paddle.nn.LSTM",
                                ", ('weight_ih_l0', (3, 20), (1, 0)), ('weight_hh_l0', (5, 20), (1, 0)), "
                                "('bias_ih_l0', (20,), None), ('bias_hh_l0', (20,), 'zero')", pd_call="(t)[1][0][0]", pd_pos=0),
})

# One call form only: the reason is checked against the signature by tests/test_api_diff.py.
TABLE.single_form({
    **{api: "no-arguments" for api in (
        "keras.layers.Add", "keras.layers.Subtract", "keras.layers.Multiply", "keras.layers.Maximum",
        "keras.layers.Minimum", "keras.layers.Average", "keras.layers.Identity")},
    **{api: "variadic" for api in ("tf.einsum", "keras.ops.einsum", "tf.meshgrid")},
})
