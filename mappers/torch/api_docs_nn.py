"""API-difference entries for torch.nn layers and torch.nn.functional (metadata only, filled into
mappers/torch/api_docs.py's TABLE)."""
from __future__ import annotations

from mappers.torch.api_docs import INPUT, P, T, TABLE, aten, module
from x2.api_diff import a

call = TABLE.call
api = TABLE.api

# ---------------------------------------------------------------- conv / pool / norm
module("torch.nn.Conv2d", "conv", ["convolution.default"], "paddle.nn.Conv2D",
       "torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, dtype=None)",
       "paddle.nn.Conv2D(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, padding_mode='zeros', weight_attr=None, bias_attr=None, data_format='NCHW')",
       [a("in_channels / out_channels / kernel_size / stride / dilation / groups", "same names"),
        a("padding", "padding", "same", "int/tuple or 'same'/'valid' on both sides (Paddle also 'SAME' and [t, b, l, r])"),
        a("bias", "bias_attr", "semantics", "bias=False is bias_attr=False"), a("padding_mode", "padding_mode"),
        a("—", "data_format", "paddle-only", "NCHW default on both sides")],
       """
       conv = nn.Conv2d(3, 4, 3, padding=1, stride=2)
       conv.weight.data = torch.tensor(rng.randn(4, 3, 3, 3).astype('float32'))
       conv.bias.data = torch.tensor(rng.randn(4).astype('float32'))
       out = conv(torch.tensor(x))
       """,
       """
       conv = paddle.nn.Conv2D(3, 4, 3, padding=1, stride=2)
       conv.weight.set_value(rng.randn(4, 3, 3, 3).astype('float32'))  # OIHW on both sides
       conv.bias.set_value(rng.randn(4).astype('float32'))
       out = conv(paddle.to_tensor(x))
       """, ("Weights are OIHW on both sides: copied as is (TF's HWIO needs a transpose).",),
       shape=(1, 3, 6, 6), atol=1e-4)
module("torch.nn.functional.conv2d", "conv", ["convolution.default"], "paddle.nn.functional.conv2d",
       "torch.nn.functional.conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
       "paddle.nn.functional.conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format='NCHW', name=None)",
       [INPUT, a("weight", "weight", "same", "OIHW"), a("bias / stride / padding / dilation / groups", "same names")],
       "w = rng.randn(6, 1, 3, 3).astype('float32')\nout = F.conv2d(torch.tensor(x), torch.tensor(w), groups=3, padding='same')",
       "w = rng.randn(6, 1, 3, 3).astype('float32')\nout = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), groups=3, padding='same')",
       "Depthwise convs are groups=C on both sides.", shape=(1, 3, 5, 5), atol=1e-4)
_BN = """
       {mod}
       g, b, m, v = [a.astype('float32') for a in (rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5)]
       {set}
       bn.eval()
       out = bn({inp})
       """
module("torch.nn.BatchNorm2d", "normalization", ["_native_batch_norm_legit_no_training.default"], "paddle.nn.BatchNorm2D",
       "torch.nn.BatchNorm2d(num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None)",
       "paddle.nn.BatchNorm2D(num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format='NCHW', use_global_stats=None, name=None)",
       [a("num_features", "num_features"), a("eps", "epsilon", "renamed", "1e-5 on both (TF/Keras 1e-3)"),
        a("momentum", "momentum", "semantics", "torch running = (1-m)*running + m*batch; Paddle running = m*running + (1-m)*batch: paddle momentum = 1 - torch momentum (0.1 -> 0.9)"),
        a("affine", "weight_attr / bias_attr", "semantics", "affine=False is weight_attr=False, bias_attr=False"),
        a("track_running_stats", "use_global_stats", "semantics", "roughly inverse; eval uses running stats on both sides by default")],
       _BN.format(mod="bn = nn.BatchNorm2d(3, momentum=0.1)",
                  set="for p, val in zip([bn.weight, bn.bias, bn.running_mean, bn.running_var], [g, b, m, v]):\n           p.data = torch.tensor(val)",
                  inp="torch.tensor(x)"),
       _BN.format(mod="bn = paddle.nn.BatchNorm2D(3, momentum=0.9)",
                  set="for p, val in zip([bn.weight, bn.bias, bn._mean, bn._variance], [g, b, m, v]):\n           p.set_value(val)",
                  inp="paddle.to_tensor(x)"),
       ("Only the running statistics update differs (training); inference numbers match with the same eps.",),
       shape=(2, 3, 4, 4), atol=1e-4)
module("torch.nn.functional.batch_norm", "normalization", ["_native_batch_norm_legit_no_training.default"], "paddle.nn.functional.batch_norm",
       "torch.nn.functional.batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05)",
       "paddle.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training=False, momentum=0.9, epsilon=1e-05, data_format='NCHW', use_global_stats=None, name=None)",
       [INPUT, a("running_mean / running_var", "running_mean / running_var"), a("weight / bias", "weight / bias", "semantics", "required in Paddle"),
        a("momentum", "momentum", "semantics", "1 - torch momentum"), a("eps", "epsilon", "renamed")],
       "g, b, m, v = [torch.tensor(a.astype('float32')) for a in (rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5)]\nout = F.batch_norm(torch.tensor(x), m, v, g, b)",
       "g, b, m, v = [paddle.to_tensor(a.astype('float32')) for a in (rng.randn(3), rng.randn(3), rng.randn(3), rng.rand(3) + 0.5)]\nout = F.batch_norm(paddle.to_tensor(x), m, v, g, b)",
       shape=(2, 3, 4, 4), atol=1e-4)
module("torch.nn.LayerNorm", "normalization", ["native_layer_norm.default", "layer_norm.default"], "paddle.nn.LayerNorm",
       "torch.nn.LayerNorm(normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None)",
       "paddle.nn.LayerNorm(normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None, name=None)",
       [a("normalized_shape", "normalized_shape"), a("eps", "epsilon", "renamed", "1e-5 on both (Keras 1e-3)"),
        a("elementwise_affine / bias", "weight_attr / bias_attr", "semantics", "False is weight_attr=False / bias_attr=False")],
       "ln = nn.LayerNorm(4)\nln.weight.data = torch.tensor(rng.randn(4).astype('float32'))\nln.bias.data = torch.tensor(rng.randn(4).astype('float32'))\nout = ln(torch.tensor(x))",
       "ln = paddle.nn.LayerNorm(4)\nln.weight.set_value(rng.randn(4).astype('float32'))\nln.bias.set_value(rng.randn(4).astype('float32'))\nout = ln(paddle.to_tensor(x))", atol=1e-4)
module("torch.nn.functional.layer_norm", "normalization", ["native_layer_norm.default", "layer_norm.default"], "paddle.nn.functional.layer_norm",
       "torch.nn.functional.layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05)",
       "paddle.nn.functional.layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-05, name=None)",
       [INPUT, a("normalized_shape", "normalized_shape"), a("weight / bias", "weight / bias"), a("eps", "epsilon", "renamed")],
       f"out = F.layer_norm({T}, [3, 4])", f"out = F.layer_norm({P}, [3, 4])", atol=1e-4)
module("torch.nn.GroupNorm", "normalization", ["group_norm.default", "native_group_norm.default"], "paddle.nn.GroupNorm",
       "torch.nn.GroupNorm(num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None)",
       "paddle.nn.GroupNorm(num_groups, num_channels, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format='NCHW', name=None)",
       [a("num_groups / num_channels", "num_groups / num_channels"), a("eps", "epsilon", "renamed"), a("affine", "weight_attr / bias_attr", "semantics")],
       "gn = nn.GroupNorm(2, 4)\ngn.weight.data = torch.tensor(rng.randn(4).astype('float32'))\ngn.bias.data = torch.tensor(rng.randn(4).astype('float32'))\nout = gn(torch.tensor(x))",
       "gn = paddle.nn.GroupNorm(2, 4)\ngn.weight.set_value(rng.randn(4).astype('float32'))\ngn.bias.set_value(rng.randn(4).astype('float32'))\nout = gn(paddle.to_tensor(x))",
       shape=(2, 4, 3, 3), atol=1e-4)
module("torch.nn.MaxPool2d", "pooling", ["max_pool2d_with_indices.default", "max_pool2d.default"], "paddle.nn.MaxPool2D",
       "torch.nn.MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)",
       "paddle.nn.MaxPool2D(kernel_size, stride=None, padding=0, ceil_mode=False, return_mask=False, data_format='NCHW', name=None)",
       [a("kernel_size / stride / padding", "same names", "same", "stride None = kernel_size on both"), a("dilation", "—", "unsupported"),
        a("return_indices", "return_mask", "renamed"), a("ceil_mode", "ceil_mode", "same", "x2 refuses ceil_mode=True")],
       f"out = nn.MaxPool2d(3, 2, padding=1)({T})", f"out = paddle.nn.MaxPool2D(3, 2, padding=1)({P})", shape=(1, 2, 6, 6))
module("torch.nn.functional.max_pool2d", "pooling", ["max_pool2d.default", "max_pool2d_with_indices.default"], "paddle.nn.functional.max_pool2d",
       "torch.nn.functional.max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)",
       "paddle.nn.functional.max_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, return_mask=False, data_format='NCHW', name=None)",
       [INPUT, a("dilation", "—", "unsupported"), a("return_indices", "return_mask", "renamed")],
       f"out = F.max_pool2d({T}, 2)", f"out = F.max_pool2d({P}, 2)", shape=(1, 2, 6, 6))
module("torch.nn.AvgPool2d", "pooling", ["avg_pool2d.default"], "paddle.nn.AvgPool2D",
       "torch.nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)",
       "paddle.nn.AvgPool2D(kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None, data_format='NCHW', name=None)",
       [a("kernel_size / stride / padding", "same names"),
        a("count_include_pad", "exclusive", "default", "inverse meaning AND opposite defaults: torch includes padding (True), Paddle excludes it (exclusive=True)"),
        a("divisor_override", "divisor_override", "same", "x2 refuses it"), a("ceil_mode", "ceil_mode")],
       f"out = nn.AvgPool2d(3, 2, padding=1)({T})", f"out = paddle.nn.AvgPool2D(3, 2, padding=1, exclusive=False)({P})",
       "With padding, pass exclusive=False to get torch's numbers.", shape=(1, 2, 6, 6))
module("torch.nn.AdaptiveAvgPool2d", "pooling", ["adaptive_avg_pool2d.default", "_adaptive_avg_pool2d.default", "mean.dim"],
       "paddle.nn.AdaptiveAvgPool2D", "torch.nn.AdaptiveAvgPool2d(output_size)",
       "paddle.nn.AdaptiveAvgPool2D(output_size, data_format='NCHW', name=None)", [a("output_size", "output_size")],
       f"out = [nn.AdaptiveAvgPool2d(1)({T}), nn.AdaptiveAvgPool2d((3, 2))({T})]",
       f"out = [paddle.nn.AdaptiveAvgPool2D(1)({P}), paddle.nn.AdaptiveAvgPool2D([3, 2])({P})]",
       "x2 maps output 1x1 (a mean) and sizes that divide the input (a plain avg pool).", shape=(1, 2, 6, 4))

_MAXPOOL3D_ARGS = [a("kernel_size / stride / padding", "same names", "same", "stride None = kernel_size on both"),
                   a("dilation", "—", "unsupported", "no Paddle argument; x2 converts dilated windows (a maximum over strided slices)"),
                   a("return_indices", "return_mask", "renamed", "x2 needs the indices unused"),
                   a("ceil_mode", "ceil_mode", "same", "positions differ (torch: padding, dilation, ceil_mode, "
                                                       "return_indices; Paddle: padding, return_mask, ceil_mode): "
                                                       "pass it by keyword")]
module("torch.nn.functional.max_pool3d", "pooling", ["max_pool3d_with_indices.default", "max_pool3d.default"],
       "paddle.nn.functional.max_pool3d",
       "torch.nn.functional.max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False)",
       "paddle.nn.functional.max_pool3d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format='NCDHW', name=None)",
       [INPUT] + _MAXPOOL3D_ARGS,
       f"t = {T}\nout = [F.max_pool3d(t, 2), F.max_pool3d(t, 3, stride=2, padding=1, ceil_mode=True)]",
       f"t = {P}\nout = [F.max_pool3d(t, 2), F.max_pool3d(t, 3, stride=2, padding=1, ceil_mode=True)]",
       ("NCDHW on both sides. Exported as max_pool3d_with_indices (the indices unused) or max_pool3d; x2 takes the "
        "maximum over strided slices (padding never wins), ceil_mode as extra end padding.",), shape=(1, 2, 4, 6, 5))
module("torch.nn.MaxPool3d", "pooling", ["max_pool3d_with_indices.default", "max_pool3d.default"], "paddle.nn.MaxPool3D",
       "torch.nn.MaxPool3d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)",
       "paddle.nn.MaxPool3D(kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format='NCDHW', name=None)",
       _MAXPOOL3D_ARGS, f"out = nn.MaxPool3d(3, 2, padding=1)({T})", f"out = paddle.nn.MaxPool3D(3, 2, padding=1)({P})",
       shape=(1, 2, 4, 6, 5))
_AVGPOOL3D_ARGS = [a("kernel_size / stride / padding / ceil_mode", "same names"),
                   a("count_include_pad", "exclusive", "default", "inverse meaning AND opposite defaults, in the same "
                                                                  "position: torch includes padding (True), Paddle "
                                                                  "excludes it (exclusive=True); pass exclusive=False"),
                   a("divisor_override", "divisor_override", "same", "x2 refuses it")]
module("torch.nn.functional.avg_pool3d", "pooling", ["avg_pool3d.default"], "paddle.nn.functional.avg_pool3d",
       "torch.nn.functional.avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)",
       "paddle.nn.functional.avg_pool3d(x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None, data_format='NCDHW', name=None)",
       [INPUT] + _AVGPOOL3D_ARGS,
       f"t = {T}\nout = [F.avg_pool3d(t, 3, 2, padding=1), F.avg_pool3d(t, 3, 2, padding=1, count_include_pad=False), F.avg_pool3d(t, 2)]",
       f"t = {P}\nout = [F.avg_pool3d(t, 3, 2, padding=1, exclusive=False), F.avg_pool3d(t, 3, 2, padding=1), F.avg_pool3d(t, 2)]",
       ("With padding the defaults give different numbers at the borders; without padding they agree.",
        "x2 sums strided slices and keeps count_include_pad."), shape=(1, 2, 4, 6, 5))
module("torch.nn.AvgPool3d", "pooling", ["avg_pool3d.default"], "paddle.nn.AvgPool3D",
       "torch.nn.AvgPool3d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)",
       "paddle.nn.AvgPool3D(kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None, data_format='NCDHW', name=None)",
       _AVGPOOL3D_ARGS, f"out = nn.AvgPool3d(3, 2, padding=1)({T})",
       f"out = paddle.nn.AvgPool3D(3, 2, padding=1, exclusive=False)({P})",
       "With padding, pass exclusive=False to get torch's numbers.", shape=(1, 2, 4, 6, 5))


T4 = "t.reshape(1, 2, 3, 4) | t.reshape([1, 2, 3, 4])"       # an NCHW input made from x
T4_CALL = "(t.reshape(1, 2, 3, 4)) | (t.reshape([1, 2, 3, 4]))"  # apply a layer to it
INPLACE = "inplace>-=False? # Paddle layers and functions are not in place"

# ---------------------------------------------------------------- torch.nn.functional activations
for name, pd, spec, ops, note in [
        ("relu", "relu", f"input>x=t; {INPLACE}", ("relu.default",), ""),
        ("relu6", "relu6", f"input>x=t * 4; {INPLACE}", ("hardtanh.default",), "exported as hardtanh(0, 6)"),
        ("elu", "elu", f"input>x=t; alpha=0.5?; {INPLACE}", (), ""),
        ("selu", "selu", f"input>x=t; {INPLACE}", (), "Paddle exposes scale and alpha (same fixed defaults)"),
        ("celu", "celu", f"input>x=t; alpha=0.5?; {INPLACE}", (), ""),
        ("softplus", "softplus", "input>x=t; beta=2.0?; threshold=10.0?", (), ""),
        ("softsign", "softsign", "input>x=t", (), ""),
        ("hardsigmoid", "hardsigmoid", f"input>x=t * 4; {INPLACE}", ("hardsigmoid.default",),
         "Paddle's slope=0.1666667, offset=0.5 defaults equal torch's x/6 + 1/2"),
        ("hardswish", "hardswish", f"input>x=t * 4; {INPLACE}", ("hardswish.default",), ""),
        ("mish", "mish", f"input>x=t; {INPLACE}", (), ""),
        ("tanhshrink", "tanhshrink", "input>x=t", (), ""),
        ("hardshrink", "hardshrink", "input>x=t; lambd>threshold=0.3?", (), ""),
        ("softshrink", "softshrink", "input>x=t; lambd>threshold=0.3?", (), ""),
        ("logsigmoid", "log_sigmoid", "input>x=t", (), ""),
        ("glu", "glu", "input>x=t; dim>axis=2?!-1", (), "both halve the last axis by default"),
        ("sigmoid", "sigmoid", "input>x=t", ("sigmoid.default",), "deprecated alias of torch.sigmoid"),
        ("tanh", "tanh", "input>x=t", ("tanh.default",), "deprecated alias of torch.tanh"),
        ("hardtanh", "hardtanh", f"input>x=t * 2; min_val>min=-0.5?; max_val>max=0.5?; {INPLACE}", ("hardtanh.default",), ""),
        ("threshold", "thresholded_relu", f"input>x=t; threshold=0.2; value=-1.0; {INPLACE}", (),
         "y = x where x > threshold, else value, on both sides"),
        ("normalize", "normalize", "input>x=t; p=2.0?; dim>axis=1?; eps>epsilon=1e-12?", (), "")]:
    call(f"torch.nn.functional.{name}", "activation", aten(*ops), f"paddle.nn.functional.{pd}", spec,
         notes=(note,) if note else (), atol=1e-5)
call("torch.nn.functional.softmin", "activation", (), "paddle.nn.functional.softmax(-x)", "input=t; dim=1",
     pd_pre="softmin = lambda input, dim: F.softmax(-input, axis=dim)\n", pd_fn="softmin", category="composite",
     notes="Paddle has no softmin: softmax of the negated input.")
call("torch.nn.functional.dropout", "regularization", aten("dropout.default", "native_dropout.default"),
     "paddle.nn.functional.dropout", f"input>x=t; p=0.5?; training=False; {INPLACE}", pd_pos=2,
     notes=("The functional forms default to training=True on both sides: pass training=False for inference; "
            "both scale by 1/(1-p) while training (Paddle's default mode='upscale_in_train').",
            "Paddle's third parameter is axis: pass training by keyword."))
call("torch.nn.functional.dropout2d", "regularization", (), "paddle.nn.functional.dropout2d",
     f"input>x={T4}; p=0.5?; training=False; {INPLACE}",
     notes="training defaults to True on both sides: pass training=False for inference.")
call("torch.nn.functional.one_hot", "array", (), "paddle.nn.functional.one_hot",
     "input>x=torch.tensor([0, 2, 1, 3]) | paddle.to_tensor([0, 2, 1, 3]); num_classes=4?!4",
     category="return-types", check_dtype=False,
     notes=("torch returns int64, Paddle float32: cast if the dtype matters.",
            "torch's num_classes=-1 infers max + 1; Paddle requires num_classes."))

# ---------------------------------------------------------------- functional pooling, conv, shuffles
for name, spec, note in [
        ("max_pool1d", "input>x=t; kernel_size=2; stride=1?; padding=1?", ""),
        ("adaptive_avg_pool1d", "input>x=t; output_size=2", ""),
        ("adaptive_max_pool1d", "input>x=t; output_size=2", ""),
        ("adaptive_avg_pool2d", f"input>x={T4}; output_size=(2, 2)", ""),
        ("adaptive_max_pool2d", f"input>x={T4}; output_size=(2, 2)", ""),
        ("pixel_shuffle", "input>x=t.reshape(1, 4, 3, 2) | t.reshape([1, 4, 3, 2]); upscale_factor=2", ""),
        ("pixel_unshuffle", "input>x=t.reshape(1, 2, 2, 6) | t.reshape([1, 2, 2, 6]); downscale_factor=2", ""),
        ("conv1d", "input>x=t; weight=u[:, :, :2]; bias=u[0, 0, :2]?; stride=1?; padding=1?", ""),
        ("embedding", "input>x=torch.tensor([[0, 2], [1, 0]]) | paddle.to_tensor([[0, 2], [1, 0]]); weight=t[0]", ""),
        ("cosine_similarity", "x1=t; x2=u; dim>axis=2?!1; eps=1e-8?", "both default to axis 1"),
        ("pairwise_distance", "x1>x=t; x2>y=u; p=2.0?; eps>epsilon=1e-6?; keepdim=False?", ""),
        ("instance_norm", f"input>x={T4}", "no running stats, no affine: per-instance normalization on both sides"),
        ("local_response_norm", f"input>x={T4}; size=2; alpha=1e-4?; beta=0.75?; k=1.0?", "")]:
    call(f"torch.nn.functional.{name}", "pooling" if "pool" in name else "layers", (), f"paddle.nn.functional.{name}", spec,
         notes=(note,) if note else (), atol=1e-4)
call("torch.nn.functional.avg_pool1d", "pooling", (), "paddle.nn.functional.avg_pool1d",
     "input>x=t; kernel_size=2; stride=1?; padding=1?; ceil_mode=False?; count_include_pad>exclusive=True | False?!False",
     pd_pos=4, category="defaults",
     notes=("torch counts the zero padding in the average by default; Paddle excludes it (exclusive=True).",
            "Paddle's order is (x, kernel_size, stride, padding, exclusive, ceil_mode)."))
call("torch.nn.functional.avg_pool2d", "pooling", aten("avg_pool2d.default"), "paddle.nn.functional.avg_pool2d",
     f"input>x={T4}; kernel_size=2; stride=1?; padding=1?; ceil_mode=False?; count_include_pad>exclusive=True | False?!False",
     notes="torch counts the zero padding in the average by default (count_include_pad=True); Paddle excludes it "
           "(exclusive=True): pass exclusive=False to match.", category="defaults")
call("torch.nn.functional.unfold", "layers", (), "paddle.nn.functional.unfold",
     f"input>x={T4}; kernel_size>kernel_sizes=2; dilation>dilations=1?; padding>paddings=0?; stride>strides=1?",
     pd_pos=2, notes="Paddle's order is (x, kernel_sizes, strides, paddings, dilations): pass the rest by keyword.")
call("torch.nn.functional.group_norm", "normalization", aten("group_norm.default", "native_group_norm.default"), "paddle.nn.functional.group_norm",
     "input>x=t.reshape(2, 3, 2, 2) | t.reshape([2, 3, 2, 2]); num_groups=3; weight=u[0, :, 0]?; bias=u[1, :, 0]?; eps>epsilon=1e-5?",
     pd_pos=2, notes="Paddle's order is (x, num_groups, epsilon, weight, bias, data_format): pass the rest by keyword.")

# ---------------------------------------------------------------- losses: target -> label
_PROB = "u.sigmoid() | F.sigmoid(u)"
for name, spec, note in [
        ("mse_loss", "input=t; target>label=u; *reduction='sum'?", ""),
        ("l1_loss", "input=t; target>label=u; *reduction='sum'?", ""),
        ("smooth_l1_loss", "input=t; target>label=u; *reduction='mean'?; *beta>delta=1.0?",
         "equal for beta = delta = 1 only: torch divides the quadratic part by beta, Paddle's delta is Huber's"),
        ("binary_cross_entropy", f"input=t.sigmoid() | F.sigmoid(t); target>label={_PROB}; weight=None?; *reduction='sum'?", ""),
        ("binary_cross_entropy_with_logits", f"input>logit=t; target>label={_PROB}; weight=None?; *reduction='sum'?", ""),
        ("cross_entropy", "input=t[0]; target>label=torch.tensor([1, 0, 3]) | paddle.to_tensor([1, 0, 3]); weight=None?",
         "class axis: torch uses dim 1, Paddle axis -1 (the same for 2-D logits; transpose N-D ones)"),
        ("nll_loss", "input=t[0]; target>label=torch.tensor([1, 0, 3]) | paddle.to_tensor([1, 0, 3]); weight=None?", ""),
        ("kl_div", f"input=t.log_softmax(-1) | F.log_softmax(t, -1); target>label={_PROB}; *reduction='sum'?", "")]:
    call(f"torch.nn.functional.{name}", "loss", (), f"paddle.nn.functional.{name}", spec, atol=1e-4,
         notes=((note,) if note else ()) + ("Positional parameters after torch's target/weight are the deprecated "
                                             "size_average / reduce: pass reduction by keyword.",))
del _PROB

# ---------------------------------------------------------------- torch.nn layers without weights: built, then applied to t
for cls, pd, spec, then, ops, note in [
        ("ELU", "ELU", "alpha=0.5?; inplace>-=False?", "(t)", (), ""),
        ("SELU", "SELU", "inplace>-=False?", "(t)", (), ""),
        ("CELU", "CELU", "alpha=0.5?; inplace>-=False?", "(t)", (), ""),
        ("Softplus", "Softplus", "beta=2.0?; threshold=10.0?", "(t)", (), ""),
        ("Softsign", "Softsign", "", "(t)", (), ""),
        ("Hardsigmoid", "Hardsigmoid", "inplace>-=False?", "(t * 4)", (), ""),
        ("Mish", "Mish", "inplace>-=False?", "(t)", (), ""),
        ("GLU", "GLU", "dim>axis=2?", "(t)", (), "both halve the last axis by default"),
        ("Tanhshrink", "Tanhshrink", "", "(t)", (), ""),
        ("Softshrink", "Softshrink", "lambd>threshold=0.3?", "(t)", (), ""),
        ("Hardshrink", "Hardshrink", "lambd>threshold=0.3?", "(t)", (), ""),
        ("LogSigmoid", "LogSigmoid", "", "(t)", (), ""),
        ("Identity", "Identity", "", "(t)", ("alias.default",), "extra constructor arguments are ignored on both sides"),
        ("Unflatten", "Unflatten", "dim>axis=2; unflattened_size>shape=(2, 2)", "(t)", (), ""),
        ("PixelShuffle", "PixelShuffle", "upscale_factor=2", "(t.reshape(1, 4, 3, 2)) | (t.reshape([1, 4, 3, 2]))", (), ""),
        ("PixelUnshuffle", "PixelUnshuffle", "downscale_factor=2", "(t.reshape(1, 2, 2, 6)) | (t.reshape([1, 2, 2, 6]))", (), ""),
        ("ChannelShuffle", "ChannelShuffle", "groups=2", T4_CALL, (), ""),
        ("ZeroPad2d", "ZeroPad2D", "padding=(1, 0, 2, 1) | [1, 0, 2, 1]", T4_CALL, ("constant_pad_nd.default",),
         "(left, right, top, bottom) on both sides; Paddle wants a list or an int"),
        ("ConstantPad2d", "Pad2D", "padding=(1, 0, 2, 1) | [1, 0, 2, 1]; value=0.5; -<mode='constant'", T4_CALL,
         ("constant_pad_nd.default",), "Paddle has one Pad2D class with mode='constant' | 'reflect' | 'replicate' | 'circular'"),
        ("ReflectionPad2d", "Pad2D", "padding=(1, 0, 2, 1) | [1, 0, 2, 1]; -<mode='reflect'", T4_CALL, (),
         "Paddle's Pad2D with mode='reflect'"),
        ("ReplicationPad2d", "Pad2D", "padding=(1, 0, 2, 1) | [1, 0, 2, 1]; -<mode='replicate'", T4_CALL, (),
         "Paddle's Pad2D with mode='replicate'"),
        ("ConstantPad1d", "Pad1D", "padding=(2, 1) | [2, 1]; value=0.5; -<mode='constant'", "(t)", (), ""),
        ("MaxPool1d", "MaxPool1D", "kernel_size=2; stride=1?; padding=1?", "(t)", (), ""),
        ("AdaptiveAvgPool1d", "AdaptiveAvgPool1D", "output_size=2", "(t)", (), ""),
        ("AdaptiveMaxPool1d", "AdaptiveMaxPool1D", "output_size=2", "(t)", (), ""),
        ("AdaptiveMaxPool2d", "AdaptiveMaxPool2D", "output_size=(2, 2)", T4_CALL, (), ""),
        ("UpsamplingNearest2d", "UpsamplingNearest2D", "size=None?; scale_factor=2", T4_CALL, (),
         "give size or scale_factor"),
        ("Upsample", "Upsample", "size=None?; scale_factor=2; mode='bilinear'?; align_corners=False?",
         T4_CALL, (), "torch mode defaults to 'nearest' like Paddle; align_corners=False on both"),
        ("InstanceNorm2d", "InstanceNorm2D", "num_features=2; eps>epsilon=1e-5?", T4_CALL, ("instance_norm.default",),
         "torch has affine=False, track_running_stats=False by default; Paddle has a weight (1) and bias (0): "
         "the same result until trained"),
        ("CosineSimilarity", "CosineSimilarity", "dim>axis=2?!1; eps=1e-8?", "(t, u)", (), ""),
        ("PairwiseDistance", "PairwiseDistance", "p=2.0?; eps>epsilon=1e-6?; keepdim=False?", "(t, u)", (), ""),
        ("MSELoss", "MSELoss", "*reduction='sum'?", "(t, u)", (), ""),
        ("L1Loss", "L1Loss", "*reduction='sum'?", "(t, u)", (), ""),
        ("SmoothL1Loss", "SmoothL1Loss", "*reduction='sum'?; *beta>delta=1.0?", "(t, u)", (), "beta = delta = 1 only"),
        ("BCEWithLogitsLoss", "BCEWithLogitsLoss", "weight=None?; *reduction='sum'?", "(t, u.sigmoid()) | (t, F.sigmoid(u))", (), ""),
        ("CrossEntropyLoss", "CrossEntropyLoss", "weight=None?; *reduction='sum'?",
         "(t[0], torch.tensor([1, 0, 3])) | (t[0], paddle.to_tensor([1, 0, 3]))", (), ""),
        ]:
    src_then, _, pd_then = then.partition(" | ")
    call(f"torch.nn.{cls}", "layers" if "Loss" not in cls else "loss", aten(*ops), f"paddle.nn.{pd}", spec, then=src_then,
         pd_then=pd_then or src_then, src_fn=f"nn.{cls}", pd_fn=f"paddle.nn.{pd}", notes=(note,) if note else (),
         atol=1e-4, pd_pos=1 if pd in ("Pad1D", "Pad2D") else None)
call("torch.nn.PReLU", "activation", (), "paddle.nn.PReLU", "num_parameters=2?; init=0.1?", then="(t.reshape(1, 2, 3, 4))",
     pd_then="(t.reshape([1, 2, 3, 4]))", src_fn="nn.PReLU",
     notes="One slope per channel (axis 1) when num_parameters > 1; both initialise it to init (0.25).")
api("torch.nn.Dropout2d", "regularization", (), "paddle.nn.Dropout2D", "torch.nn.Dropout2d(p=0.5, inplace=False)",
    "paddle.nn.Dropout2D(p=0.5, data_format='NCHW', name=None)",
    [a("p", "p"), a("inplace", "—", "unsupported"), a("—", "data_format", "paddle-only")],
    "m = nn.Dropout2d(0.5)\nm.eval()\nout = [m(t.reshape(1, 2, 3, 4)), nn.Dropout2d(p=1.0)(t.reshape(1, 2, 3, 4))]",
    "m = paddle.nn.Dropout2D(0.5)\nm.eval()\nout = [m(t.reshape([1, 2, 3, 4])), paddle.nn.Dropout2D(p=1.0)(t.reshape([1, 2, 3, 4]))]",
    "Identity after .eval() on both sides; p=1.0 zeroes every channel while training.")

# Categories the argument table alone does not tell (x2.api_diff.derived_category gives the rest).
TABLE.recategorize({
    **{api: "usage" for api in (
        # weight layout / a parameter's meaning / argument order
        "torch.nn.functional.linear", "torch.nn.Linear", "torch.nn.BatchNorm2d", "torch.nn.functional.batch_norm",
        "torch.nn.LSTM", "torch.split", "torch.index_select",
        # no-ops: nothing to call in Paddle
        "torch.clone", "torch.Tensor.contiguous", "torch.Tensor.detach", "torch.ops.aten.alias")},
    "torch.sign": "behaviour",
})
