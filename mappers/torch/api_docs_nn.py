"""More API-difference entries (torch, nn): metadata only, filled into mappers/torch/api_docs.py's TABLE."""
from __future__ import annotations

from mappers.torch.api_docs import TABLE

call = TABLE.call
api = TABLE.api
from mappers.torch.api_docs import aten
from x2.api_diff import a

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
        ("hardsigmoid", "hardsigmoid", f"input>x=t * 4; {INPLACE}", (),
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
call("torch.nn.functional.one_hot", "shape", (), "paddle.nn.functional.one_hot",
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
    call(f"torch.nn.functional.{name}", "pool" if "pool" in name else "nn", (), f"paddle.nn.functional.{name}", spec,
         notes=(note,) if note else (), atol=1e-4)
call("torch.nn.functional.avg_pool1d", "pool", (), "paddle.nn.functional.avg_pool1d",
     "input>x=t; kernel_size=2; stride=1?; padding=1?; ceil_mode=False?; count_include_pad>exclusive=True | False?!False",
     pd_pos=4, category="defaults",
     notes=("torch counts the zero padding in the average by default; Paddle excludes it (exclusive=True).",
            "Paddle's order is (x, kernel_size, stride, padding, exclusive, ceil_mode)."))
call("torch.nn.functional.avg_pool2d", "pool", aten("avg_pool2d.default"), "paddle.nn.functional.avg_pool2d",
     f"input>x={T4}; kernel_size=2; stride=1?; padding=1?; ceil_mode=False?; count_include_pad>exclusive=True | False?!False",
     notes="torch counts the zero padding in the average by default (count_include_pad=True); Paddle excludes it "
           "(exclusive=True): pass exclusive=False to match.", category="defaults")
call("torch.nn.functional.unfold", "nn", (), "paddle.nn.functional.unfold",
     f"input>x={T4}; kernel_size>kernel_sizes=2; dilation>dilations=1?; padding>paddings=0?; stride>strides=1?",
     pd_pos=2, notes="Paddle's order is (x, kernel_sizes, strides, paddings, dilations): pass the rest by keyword.")
call("torch.nn.functional.group_norm", "norm", aten("native_group_norm.default"), "paddle.nn.functional.group_norm",
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
        ("InstanceNorm2d", "InstanceNorm2D", "num_features=2; eps>epsilon=1e-5?", T4_CALL, (),
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
    call(f"torch.nn.{cls}", "nn" if "Loss" not in cls else "loss", aten(*ops), f"paddle.nn.{pd}", spec, then=src_then,
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
