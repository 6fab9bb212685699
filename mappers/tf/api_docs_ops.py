"""More API-difference entries (tf, ops): metadata only, filled into mappers/tf/api_docs.py's TABLE."""
from __future__ import annotations

from mappers.tf.api_docs import TABLE
from x2.api_diff import a as A

call = TABLE.call
api = TABLE.api

NAME = "*name=None? # only labels the op (passed by keyword here)"
_POS = "abs(t) + 1.5"   # > 1 (acosh) and positive (logs)

# ---------------------------------------------------------------- tf.math unary (x, name) -> paddle (x)
for name, pd, arg, ops, cat, note in [
        ("acos", "acos", "tf.tanh(t) | paddle.tanh(t)", (), "", ""),
        ("asin", "asin", "tf.tanh(t) | paddle.tanh(t)", (), "", ""),
        ("atan", "atan", "t", (), "", ""), ("sinh", "sinh", "t", (), "", ""), ("cosh", "cosh", "t", (), "", ""),
        ("tan", "tan", "t", (), "", ""), ("asinh", "asinh", "t", (), "", ""),
        ("acosh", "acosh", _POS, (), "", ""),
        ("atanh", "atanh", "tf.tanh(t) * 0.9 | paddle.tanh(t) * 0.9", (), "", ""),
        ("log1p", "log1p", "tf.abs(t) | t.abs()", (), "", ""), ("expm1", "expm1", "t", (), "", ""),
        ("lgamma", "lgamma", _POS, (), "", ""), ("digamma", "digamma", _POS, (), "", ""),
        ("erfinv", "erfinv", "tf.tanh(t) * 0.9 | paddle.tanh(t) * 0.9", (), "", ""),
        ("is_finite", "isfinite", "t / tf.floor(tf.abs(t)) | t / t.abs().floor()", (), "", "boolean on both sides"),
        ("round", "round", "t * 3", (), "behaviour",
         "Half-way cases differ: TF rounds half to even (banker's rounding), Paddle half away from zero; "
         "the example avoids exact halves."),
        
        ("log_sigmoid", "nn.functional.log_sigmoid", "t", (), "", ""),
        ]:
    call(f"tf.math.{name}", "math", ops, f"paddle.{pd}", f"x={arg}; {NAME}", notes=(note,) if note else (),
         category=cat, atol=1e-4)
for name, src, ops in [("sigmoid", "sigmoid", ("Sigmoid",)), ("tanh", "tanh", ("Tanh",)), ("swish", "silu", ("Swish", "Silu")),
                       ("softsign", "softsign", ()), ("softplus", "softplus", ("Softplus",))]:
    pd = "tanh" if name == "tanh" else f"nn.functional.{src}"
    call(f"tf.nn.{name}", "activation", ops, f"paddle.{pd}", f"{'x' if name in ('sigmoid', 'tanh') else 'features'}>x=t" + ("" if name == "swish" else f"; {NAME}"),
         notes=f"tf.nn.{name} is the same function as tf.math.{name}" if name in ("sigmoid", "tanh", "softplus") else ())

# ---------------------------------------------------------------- binary
for name, pd, spec, ops, note in [
        ("floordiv", "floor_divide", "x=t * 4; y=abs(u) + 0.5", ("FloorDiv",), "floor division of floats on both sides"),
        ("floormod", "remainder", "x=t * 4; y=u", ("FloorMod",), "floor modulo: the sign of the divisor, like Python's %"),
        ("divide", "divide", "x=t; y=abs(u) + 0.5", ("RealDiv",), "true division"),
        ("logical_xor", "logical_xor", "x=t > 0; y=u > 0", (), ""),
        ("atan2", "atan2", "y>x=t; x>y=u", (), "TF names the numerator y (atan2(y, x)); Paddle names it x"),
        ]:
    call(f"tf.math.{name}", "math", ops, f"paddle.{pd}", f"{spec}; {NAME}", notes=(note,) if note else (), atol=1e-4)
call("tf.math.divide_no_nan", "math", (), "paddle.where(y == 0, 0, x / y)", "x=t; y=tf.floor(u) | u.floor(); " + NAME,
     pd_pre="def divide_no_nan(x, y, name=None):\n    return paddle.where(y == 0, paddle.zeros_like(x), x / y)\n",
     pd_fn="divide_no_nan", category="composite", notes="0 where the divisor is 0 (even 0/0); Paddle needs a where.")
call("tf.math.xlogy", "math", (), "paddle.where(x == 0, 0, x * paddle.log(y))", "x=t; y=abs(u) + 0.1; " + NAME,
     pd_pre="def xlogy(x, y, name=None):\n    return paddle.where(x == 0, paddle.zeros_like(x), x * paddle.log(y))\n",
     pd_fn="xlogy", category="missing", notes="Paddle 3.3 has no xlogy: x * log(y), 0 where x == 0.", atol=1e-4)
call("tf.math.add_n", "math", (), "paddle.add_n", "inputs=[t, u, t]; " + NAME)

# ---------------------------------------------------------------- reductions: input_tensor -> x, keepdims -> keepdim
for name, pd, spec, cat, note in [
        ("reduce_all", "all", "input_tensor>x=t > -1; axis=1?; keepdims>keepdim=True?", "", ""),
        ("reduce_any", "any", "input_tensor>x=t > 1; axis=1?; keepdims>keepdim=True?", "", ""),
        ("reduce_logsumexp", "logsumexp", "input_tensor>x=t; axis=1?; keepdims>keepdim=True?", "", ""),
        ("reduce_std", "std", "input_tensor>x=t; axis=1?; keepdims>keepdim=True?; -<unbiased=False", "defaults",
         "TF's std is the population std; Paddle's unbiased=True by default: pass unbiased=False"),
        ("argmin", "argmin", "input>x=t; axis=1?!0", "defaults", "TF reduces axis 0 by default (int64 result); "
         "Paddle flattens when axis is None"),
        ("count_nonzero", "count_nonzero", "input>x=tf.floor(t) | t.floor(); axis=1?; keepdims>keepdim=True?", "",
         "int64 counts on both sides"),
        ("cumprod", "cumprod", "x=t; axis>dim=1?!0", "defaults", "TF cumprod defaults to axis 0; Paddle flattens "
         "when dim is None"),
        ("cumulative_logsumexp", "logcumsumexp", "x=t; axis=1?!0", "defaults", "TF defaults to axis 0; Paddle flattens")]:
    call(f"tf.math.{name}", "reduction", (), f"paddle.{pd}", f"{spec}; {NAME}", notes=(note,) if note else (),
         category=cat, atol=1e-4, pd_pos=2 if name == "reduce_std" else None)
call("tf.math.reduce_euclidean_norm", "reduction", (), "paddle.linalg.norm",
     "input_tensor>x=t; axis=1?; keepdims>keepdim=True?; " + NAME, pd_fn="paddle.linalg.norm", pd_pos=1,
     notes="The 2-norm over axis; Paddle's second parameter is p: pass axis by keyword.", atol=1e-4)

# ---------------------------------------------------------------- creation, sorting, shape
for name, pd, spec, fam, cat, dtype, note in [
        ("range", "arange", "start=0.0; limit>end=5.0; delta>step=0.5?; dtype=None?", "creation", "", True,
         "float arguments give float32 on both sides; integer ones give TF int32, Paddle int64"),
        ("zeros", "zeros", "shape=(2, 3); dtype=tf.float32 | 'float32'?", "creation", "", True, ""),
        ("ones", "ones", "shape=(2, 3); dtype=tf.float32 | 'float32'?", "creation", "", True, ""),
        ("eye", "eye", "num_rows=3; num_columns=4?", "creation", "", True, ""),
        ("linspace", "linspace", "start=-1.0; stop=1.0; num=5", "creation", "", True, ""),
        ("one_hot", "nn.functional.one_hot", "indices>x=tf.constant([0, 2, 1]) | paddle.to_tensor([0, 2, 1]); depth>num_classes=4",
         "array", "", True, "float32 on both sides; TF's on_value/off_value/axis have no Paddle counterpart"),
        ("sort", "sort", "values>x=t; axis=1?; direction>descending='DESCENDING' | True?", "sort", "", True, ""),
        ("argsort", "argsort", "values>x=t; axis=1?; direction>descending='DESCENDING' | True?", "sort",
         "return-types", False, "TF returns int32 indices, Paddle int64"),
        ("roll", "roll", "input>x=t; shift>shifts=1; axis=2", "array", "", True, ""),
        ("repeat", "repeat_interleave", "input>x=t; repeats=2; axis=1?", "array", "", True,
         "without axis both flatten first"),
        ("tensordot", "tensordot", "a>x=t; b>y=tf.transpose(u, [1, 2, 0]) | u.transpose([1, 2, 0]); axes=2", "math", "", True, ""),
        ("boolean_mask", "masked_select", "tensor>x=t; mask=t > 0", "array", "", True,
         "for a mask of the tensor's full shape; TF's axis= (partial masks) has no direct counterpart"),
        ("searchsorted", "searchsorted", "sorted_sequence=tf.sort(t) | paddle.sort(t); values=u; side>right='right' | True?",
         "sort", "return-types", False, "TF int32 result, Paddle int64; side='right' is right=True"),
        ("size", "numel", "input>x=t", "array", "return-types", False, "TF int32, Paddle int64 0-D tensor"),
        ("norm", "linalg.norm", "tensor>x=t; ord>p=2?; axis=1?", "math", "", True, "")]:
    call(f"tf.{name}", fam, ("Range",) if name == "range" else (), f"paddle.{pd}", f"{spec}; {NAME}",
         notes=(note,) if note else (), category=cat, check_dtype=dtype, atol=1e-4)
api("tf.meshgrid", "array", (), "paddle.meshgrid", "tf.meshgrid(*args, indexing='xy', name=None)",
    "paddle.meshgrid(*args, **kwargs)", [A("indexing", "—", "default", "TF defaults to 'xy', Paddle is always 'ij'")],
    "a, b = t[0, 0], t[0, :, 0]\nout = [tf.meshgrid(a, b), tf.meshgrid(a, b, indexing='ij')]",
    "a, b = t[0, 0], t[0, :, 0]\ng = paddle.meshgrid(b, a)\nout = [[g[1], g[0]], paddle.meshgrid(a, b)]",
    "TF's default 'xy' indexing is Paddle's 'ij' with the two inputs and outputs swapped.", category="defaults")
call("tf.linalg.trace", "linalg", (), "paddle.trace", "x=t; -<axis1=-2; -<axis2=-1; " + NAME, category="defaults",
     notes="TF traces the last two axes of a batch; Paddle's defaults are axis1=0, axis2=1.")
call("tf.linalg.diag_part", "linalg", (), "paddle.diagonal", "input>x=t; -<axis1=-2; -<axis2=-1; " + NAME,
     category="defaults", notes="TF takes the diagonal of the last two axes; Paddle's defaults are axis1=0, axis2=1.")
call("tf.linalg.matrix_transpose", "linalg", (), "paddle.transpose(x, perm)", "a>x=t; " + NAME,
     pd_pre="matrix_transpose = lambda x, name=None: x.transpose([0, 2, 1])\n", pd_fn="matrix_transpose", category="composite",
     notes="Paddle has no batch matrix transpose by name: transpose with the last two axes swapped.")
for name, pd in (("det", "det"), ("inv", "inv")):
    call(f"tf.linalg.{name}", "linalg", (), f"paddle.linalg.{pd}", "input>x=m; " + NAME,
         pre="m = t[:, :3, :3] + 3 * tf.eye(3)\n", pd_pre="m = t[:, :3, :3] + 3 * paddle.eye(3)\n", atol=1e-4)
call("tf.linalg.l2_normalize", "linalg", (), "paddle.nn.functional.normalize", "x=t; axis=1; epsilon=1e-12?; " + NAME, pd_pos=1,
     notes=("TF divides by sqrt(max(sum(x^2), epsilon)), Paddle by max(norm, epsilon): the same unless the norm is tiny.",
            "TF's axis=None normalizes over the whole tensor; Paddle's axis is one int (default 1): pass it."),
     category="defaults")
call("tf.clip_by_norm", "math", (), "x * clip_norm / max(norm, clip_norm)", "t=t; clip_norm=1.0; axes=[2]?; " + NAME,
     pd_pre="def clip_by_norm(t, clip_norm, axes=None, name=None):\n"
            "    n = paddle.linalg.norm(t, p=2, axis=axes, keepdim=True)\n"
            "    return t * clip_norm / paddle.maximum(n, paddle.full_like(n, clip_norm))\n",
     pd_fn="clip_by_norm", category="composite", notes="Paddle has paddle.nn.ClipGradByNorm for gradients only.")

# ---------------------------------------------------------------- tf.image (NHWC images; Paddle ops take any axis)
IMG = "image>x=tf.reshape(t, (1, 2, 4, 3)) | t.reshape([1, 2, 4, 3])"    # one 2x4 RGB image, NHWC
for name, pd, spec, pre, pd_pre, cat, note in [
        ("flip_left_right", "flip", f"{IMG}; -<axis=2", "", "", "composite", "flip the width axis (2 in NHWC)"),
        ("flip_up_down", "flip", f"{IMG}; -<axis=1", "", "", "composite", "flip the height axis (1 in NHWC)"),
        ("rot90", "rot90", f"{IMG}; k=1?; -<axes=[1, 2]", "", "", "composite",
         "counter-clockwise on both sides; Paddle needs the H, W axes of an NHWC batch"),
        ("transpose", "transpose", f"{IMG}; -<perm=[0, 2, 1, 3]", "", "", "composite", "swap H and W"),
        ("adjust_brightness", "add", f"{IMG}; delta>y=0.25 | paddle.to_tensor(0.25)", "", "", "arg-types",
         "adds delta; paddle.add needs a tensor (or write x + delta)"),
        ("rgb_to_grayscale", "rgb_to_grayscale",
         "images>x=tf.reshape(t, (1, 2, 4, 3)) | t.reshape([1, 2, 4, 3])", "",
         "def rgb_to_grayscale(x):\n    w = paddle.to_tensor([0.2989, 0.5870, 0.1140])\n"
         "    return (x * w).sum(axis=-1, keepdim=True)\n", "composite",
         "ITU-R 601 weights 0.2989, 0.5870, 0.1140 (TF's); keeps a size-1 channel axis"),
        ("crop_to_bounding_box", "crop_to_bounding_box",
         f"{IMG}; offset_height=0; offset_width=1; target_height=2; target_width=2", "",
         "def crop_to_bounding_box(x, offset_height, offset_width, target_height, target_width):\n"
         "    return x[:, offset_height:offset_height + target_height, offset_width:offset_width + target_width]\n",
         "composite", "slicing in Paddle"),
        ("pad_to_bounding_box", "pad_to_bounding_box",
         f"{IMG}; offset_height=1; offset_width=0; target_height=4; target_width=5", "",
         "def pad_to_bounding_box(x, offset_height, offset_width, target_height, target_width):\n"
         "    h, w = x.shape[1], x.shape[2]\n"
         "    pads = [offset_width, target_width - w - offset_width, offset_height, target_height - h - offset_height]\n"
         "    return paddle.nn.functional.pad(x, pads, data_format='NHWC')\n", "composite",
         "zero padding with F.pad([left, right, top, bottom], data_format='NHWC')"),
        ("per_image_standardization", "per_image_standardization", f"{IMG}", "",
         "def per_image_standardization(x):\n    m = x.mean(axis=[1, 2, 3], keepdim=True)\n"
         "    n = x[0].numel().astype('float32')\n"
         "    s = paddle.maximum(x.std(axis=[1, 2, 3], keepdim=True, unbiased=False), 1.0 / n.sqrt())\n"
         "    return (x - m) / s\n", "composite", "(x - mean) / max(std, 1 / sqrt(N)) per image"),
        ("grayscale_to_rgb", "grayscale_to_rgb", "images>x=tf.reshape(t, (1, 4, 6, 1)) | t.reshape([1, 4, 6, 1])", "",
         "grayscale_to_rgb = lambda x: paddle.concat([x, x, x], axis=-1)\n", "composite", "repeat the channel 3 times")]:
    pd_fn = f"paddle.{pd}" if not pd_pre else pd
    call(f"tf.image.{name}", "image", (), f"paddle.{pd}" if not pd_pre else f"{pd} (composite)", spec, pre=pre,
         pd_pre=pd_pre, pd_fn=pd_fn, category=cat, notes=(note,) if note else (), atol=1e-4)
del IMG

# ---------------------------------------------------------------- tf.signal (complex results compared as real and imag parts)
api("tf.signal.fft", "signal", (), "paddle.fft.fft", "tf.signal.fft(input, name=None)",
    "paddle.fft.fft(x, n=None, axis=-1, norm='backward', name=None)",
    [A("input", "x", "renamed", "complex64 on both sides"), A("—", "n / axis / norm", "paddle-only")],
    "r = tf.signal.fft(tf.complex(t, u))\nout = [tf.math.real(r), tf.math.imag(r)]",
    "r = paddle.fft.fft(paddle.complex(t, u))\nout = [paddle.real(r), paddle.imag(r)]",
    "Over the last axis on both sides; TF has no n/axis/norm (pad or transpose first).", atol=1e-4)
api("tf.signal.ifft", "signal", (), "paddle.fft.ifft", "tf.signal.ifft(input, name=None)",
    "paddle.fft.ifft(x, n=None, axis=-1, norm='backward', name=None)",
    [A("input", "x", "renamed"), A("—", "n / axis / norm", "paddle-only")],
    "r = tf.signal.ifft(tf.complex(t, u))\nout = [tf.math.real(r), tf.math.imag(r)]",
    "r = paddle.fft.ifft(paddle.complex(t, u))\nout = [paddle.real(r), paddle.imag(r)]",
    "1/n scaling on the inverse on both sides.", atol=1e-4)
api("tf.signal.irfft", "signal", (), "paddle.fft.irfft", "tf.signal.irfft(input_tensor, fft_length=None, name=None)",
    "paddle.fft.irfft(x, n=None, axis=-1, norm='backward', name=None)",
    [A("input_tensor", "x", "renamed"), A("fft_length", "n", "semantics", "TF a 1-element list [n], Paddle an int")],
    "c = tf.complex(t, u)\nout = [tf.signal.irfft(c), tf.signal.irfft(c, fft_length=[6])]",
    "c = paddle.complex(t, u)\nout = [paddle.fft.irfft(c), paddle.fft.irfft(c, n=6)]",
    "Without a length both give 2 * (n - 1) real samples.", atol=1e-4)
api("tf.signal.rfft2d", "signal", (), "paddle.fft.rfft2", "tf.signal.rfft2d(input_tensor, fft_length=None, name=None)",
    "paddle.fft.rfft2(x, s=None, axes=(-2, -1), norm='backward', name=None)",
    [A("input_tensor", "x", "renamed"), A("fft_length", "s", "renamed")],
    "r = tf.signal.rfft2d(t)\nout = [tf.math.real(r), tf.math.imag(r)]",
    "r = paddle.fft.rfft2(t)\nout = [paddle.real(r), paddle.imag(r)]", "Over the last two axes on both sides.", atol=1e-4)
api("tf.signal.frame", "signal", (), "paddle.signal.frame", "tf.signal.frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None)",
    "paddle.signal.frame(x, frame_length, hop_length, axis=-1, name=None)",
    [A("signal", "x", "renamed"), A("frame_length", "frame_length"), A("frame_step", "hop_length", "renamed"),
     A("pad_end / pad_value", "—", "unsupported", "pad first"),
     A("axis", "axis", "semantics", "TF output [..., frames, frame_length]; Paddle axis=-1 gives [..., frame_length, frames]")],
    "s = tf.reshape(t, (2, 12))\nout = tf.signal.frame(s, 4, 2)",
    "s = t.reshape([2, 12])\nout = paddle.signal.frame(s, 4, 2).transpose([0, 2, 1])",
    "The frames axis comes last in Paddle (axis=-1): transpose the last two axes.", category="usage")
for name, coef in (("hann_window", 0.5), ("hamming_window", 0.54)):
    call(f"tf.signal.{name}", "signal", (), "0.5 - 0.5 * cos(2 pi n / N)" if coef == 0.5 else "0.54 - 0.46 * cos(2 pi n / N)",
         "window_length=8; periodic=True?", pd_pre=f"def {name}(window_length, periodic=True):\n"
         "    n = paddle.arange(window_length, dtype='float32')\n"
         "    N = window_length if periodic else window_length - 1\n"
         f"    return {coef} - {1 - coef:.2f} * paddle.cos(2 * np.pi * n / N)\n", pd_fn=name, category="missing",
         notes="Paddle's window functions live in paddle.audio.functional.get_window (float64 by default); "
               "the formula is one line.", atol=1e-5)

# ---------------------------------------------------------------- control flow
api("tf.cond", "control", ("If", "StatelessIf"), "paddle.static.nn.cond",
    "tf.cond(pred, true_fn=None, false_fn=None, name=None)",
    "paddle.static.nn.cond(pred, true_fn=None, false_fn=None, name=None, return_names=None)",
    [A("pred", "pred"), A("true_fn", "true_fn"), A("false_fn", "false_fn"), A("name", "name")],
    "out = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)",
    "t = paddle.to_tensor(x)\nout = paddle.static.nn.cond(t.sum() > 0, lambda: t * 2.0, lambda: t - 1.0)",
    ("x2 writes a Python `if` on the predicate tensor; `paddle.jit.to_static` turns it into "
     "this cond in the inference model. Both branches must give tensors of the same dtype.",),
    category="api-name")
api("tf.switch_case", "control", ("Case", "StatelessCase"), "paddle.static.nn.switch_case",
    "tf.switch_case(branch_index, branch_fns, default=None, name='switch_case')",
    "paddle.static.nn.switch_case(branch_index, branch_fns, default=None, name=None)",
    [A("branch_index", "branch_index"), A("branch_fns", "branch_fns"), A("default", "default"),
     A("name", "name")],
    "out = tf.switch_case(tf.constant(1), [lambda: x * 2.0, lambda: x - 1.0, lambda: -x])",
    "t = paddle.to_tensor(x)\n"
    "out = paddle.static.nn.switch_case(paddle.to_tensor(1), [lambda: t * 2.0, lambda: t - 1.0,\n"
    "                                                         lambda: -t])",
    ("x2 writes nested Python `if`s on `index == k`, the last branch the default: both run the "
     "last branch for an index out of range (Paddle: the branch of the largest index when "
     "`default` is None). A branch index known when the model is read inlines its branch.",),
    category="api-name")
api("tf.while_loop", "control", ("While", "StatelessWhile"), "paddle.static.nn.while_loop",
    "tf.while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, "
    "back_prop=True, swap_memory=False, maximum_iterations=None, name=None)",
    "paddle.static.nn.while_loop(cond, body, loop_vars, is_test=False, name=None)",
    [A("cond", "cond"), A("body", "body"), A("loop_vars", "loop_vars", "semantics",
                                              "TF a tuple or nest, Paddle a list"),
     A("maximum_iterations", "—", "unsupported", "no counterpart: put a counter in the condition"),
     A("name", "name")],
    "_, out = tf.while_loop(lambda i, v: tf.reduce_sum(tf.abs(v)) < 100.0,\n"
    "                       lambda i, v: (i + 1, v * 2.0), (tf.constant(0), x))",
    "i0 = paddle.zeros([], dtype='int32')\n"
    "_, out = paddle.static.nn.while_loop(lambda i, v: v.abs().sum() < 100.0,\n"
    "                                     lambda i, v: [i + 1, v * 2.0], [i0, paddle.to_tensor(x)])",
    ("x2 writes a Python `while` over tensors (the loop state, the step counter and the "
     "condition are tensors), which `paddle.jit.to_static` turns into this while_loop.",),
    category="source-more")
TABLE.add_forms({
    "tf.switch_case": "branch_index=tf.constant(1) | paddle.to_tensor(1); "
                      "branch_fns=[lambda: t * 2.0, lambda: t - 1.0, lambda: -t]",
    "tf.cond": "pred=tf.reduce_sum(t) > 0 | t.sum() > 0; true_fn=lambda: t * 2.0; "
               "false_fn=lambda: t - 1.0",
    "tf.while_loop": ("cond=lambda i, v: tf.reduce_sum(tf.abs(v)) < 100.0 | "
                      "lambda i, v: v.abs().sum() < 100.0; "
                      "body=lambda i, v: (i + 1, v * 2.0) | lambda i, v: [i + 1, v * 2.0]; "
                      "loop_vars=(tf.constant(0), t) | [paddle.zeros([], dtype='int32'), t]",
                      {"post": "{}[1]"}),
})
