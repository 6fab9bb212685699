"""API-difference reference entries for PyTorch APIs (docs/api_diff/torch/).

Not a mapper module: metadata only (see x2/api_diff.py). `ops` are the ATen
targets (as captured by torch.export) that x2 maps for the API; an entry
without ops is reference only.
"""
from __future__ import annotations

from x2.api_diff import ApiTable, a

TABLE = ApiTable("torch")
api = TABLE.api

T = "torch.tensor(x)"
P = "paddle.to_tensor(x)"
INPUT = a("input", "x", "renamed")
OUT = a("out", "—", "unsupported", "Paddle returns a new tensor")
_OUT = "*out>-=None? # Paddle returns a new tensor"   # the same row, as a call-spec item


def aten(*names):
    return tuple(f"aten.{n}" for n in names)


def elementwise(name, ops, paddle, family="math", src=None, pd=None, notes=(), atol=1e-5, out=True):
    """`out=False`: the torch function has no out= (torch.relu)."""
    sig = f"{name}(input, *, out=None)" if out else f"{name}(input)"
    if src is None and pd is None:   # the call forms of the plain one-input call
        TABLE.call(name, family, aten(*ops), paddle, f"input>x=t; {_OUT}" if out else "input>x=t", notes=notes,
                   atol=atol, source_sig=sig, paddle_sig=f"{paddle}(x, name=None)")
        return
    api(name, family, aten(*ops), paddle, sig, f"{paddle}(x, name=None)",
        [INPUT, OUT] if out else [INPUT], src or f"out = {name}({T})", pd or f"out = {paddle}({P})", notes, atol=atol)


def module(name, family, ops, paddle, sig, pd_sig, rows, src, pd, notes=(), **kw):
    api(name, family, aten(*ops), paddle, sig, pd_sig, rows, src, pd, notes, **kw)


# ---------------------------------------------------------------- elementwise
elementwise("torch.abs", ["abs.default"], "paddle.abs")
elementwise("torch.neg", ["neg.default"], "paddle.neg")
elementwise("torch.exp", ["exp.default"], "paddle.exp")
elementwise("torch.log", ["log.default"], "paddle.log", src="out = torch.log(torch.tensor(np.abs(x) + 0.1))",
            pd="out = paddle.log(paddle.to_tensor(np.abs(x) + 0.1))")
elementwise("torch.sqrt", ["sqrt.default"], "paddle.sqrt", src="out = torch.sqrt(torch.tensor(np.abs(x)))",
            pd="out = paddle.sqrt(paddle.to_tensor(np.abs(x)))")
elementwise("torch.rsqrt", ["rsqrt.default"], "paddle.rsqrt", src="out = torch.rsqrt(torch.tensor(np.abs(x) + 0.1))",
            pd="out = paddle.rsqrt(paddle.to_tensor(np.abs(x) + 0.1))", atol=1e-4)
elementwise("torch.erf", ["erf.default"], "paddle.erf")
elementwise("torch.tanh", ["tanh.default"], "paddle.tanh")
elementwise("torch.sigmoid", ["sigmoid.default"], "paddle.nn.functional.sigmoid", family="activation")
elementwise("torch.relu", ["relu.default"], "paddle.nn.functional.relu", family="activation", out=False)
elementwise("torch.logical_not", ["logical_not.default"], "paddle.logical_not", family="comparison",
            src="out = torch.logical_not(torch.tensor(x) > 0)", pd="out = paddle.logical_not(paddle.to_tensor(x) > 0)")
# ---------------------------------------------------------------- trigonometry, rounding, sign, NaN/Inf tests
# x with a NaN, +inf, -inf and zeros in it (the same cells on both sides).
_SPECIAL = "v = x.copy()\nv[0, 0, :2] = np.nan\nv[1, 2, 1] = np.inf\nv[1, 2, 3] = -np.inf\nv[0, 1, :2] = 0.0\n"
elementwise("torch.sin", ["sin.default"], "paddle.sin", src=f"out = torch.sin({T} * 3)", pd=f"out = paddle.sin({P} * 3)")
elementwise("torch.cos", ["cos.default"], "paddle.cos", src=f"out = torch.cos({T} * 3)", pd=f"out = paddle.cos({P} * 3)")
elementwise("torch.floor", ["floor.default"], "paddle.floor", src=f"out = torch.floor({T} * 3)", pd=f"out = paddle.floor({P} * 3)",
            notes="Rounds toward -inf (-1.5 gives -2) and keeps the float dtype on both sides; for floor division use "
                  "torch.div(rounding_mode='floor') / paddle.floor_divide.")
elementwise("torch.ceil", ["ceil.default"], "paddle.ceil", src=f"out = torch.ceil({T} * 3)", pd=f"out = paddle.ceil({P} * 3)",
            notes="Rounds toward +inf (-1.5 gives -1) and keeps the float dtype on both sides.")
elementwise("torch.sign", ["sign.default"], "paddle.sign", src=_SPECIAL + "out = torch.sign(torch.tensor(v))",
            pd=_SPECIAL + "t = paddle.to_tensor(v)\ns = paddle.sign(t)\n"
                          "out = paddle.where(paddle.isnan(t), paddle.zeros_like(s), s)  # torch: sign(NaN) = 0",
            notes=("sign(NaN) differs: torch gives 0 (torch 2.13, CPU), Paddle gives NaN (as TF and numpy do); the Paddle "
                   "example masks NaN to match. +-inf gives +-1 and +-0 gives 0 on both sides.",
                   "x2 maps aten.sign to the IR `sign` (numpy.sign) and writes paddle.sign, so a converted model gives NaN "
                   "where torch gave 0 for NaN inputs."))
elementwise("torch.reciprocal", ["reciprocal.default"], "paddle.reciprocal",
            src="out = [torch.reciprocal(torch.tensor(np.abs(x) + 0.5)), torch.reciprocal(torch.tensor([1, 2, 4, 0]))]",
            pd="out = [paddle.reciprocal(paddle.to_tensor(np.abs(x) + 0.5)), paddle.reciprocal(paddle.to_tensor([1, 2, 4, 0]))]",
            notes=("Integer input gives float32 on both sides (torch promotes to the default dtype; Paddle 3 casts with a "
                   "warning); 1 / 0 is inf.",))
for name, pd, what in [("isnan", "isnan", "True for NaN only (+-inf is not NaN)"),
                       ("isinf", "isinf", "True for +inf and -inf (NaN is not inf)")]:
    module(f"torch.{name}", "comparison", [f"{name}.default"], f"paddle.{pd}", f"torch.{name}(input)",
           f"paddle.{pd}(x, name=None)", [INPUT], _SPECIAL + f"out = torch.{name}(torch.tensor(v))",
           _SPECIAL + f"out = paddle.{pd}(paddle.to_tensor(v))", f"Boolean output on both sides: {what}.")
for cls, op, pd in [("ReLU", "relu.default", "ReLU"), ("Sigmoid", "sigmoid.default", "Sigmoid"),
                    ("Tanh", "tanh.default", "Tanh"), ("SiLU", "silu.default", "Silu"),
                    ("Hardswish", "hardswish.default", "Hardswish")]:
    module(f"torch.nn.{cls}", "activation", [op], f"paddle.nn.{pd}", f"torch.nn.{cls}(inplace=False)" if cls in ("ReLU", "SiLU", "Hardswish") else f"torch.nn.{cls}()",
           f"paddle.nn.{pd}(name=None)", [a("inplace", "—", "unsupported", "Paddle layers are not in place")] if cls in ("ReLU", "SiLU", "Hardswish") else [],
           f"out = nn.{cls}()({T} * 4)", f"out = paddle.nn.{pd}()(paddle.to_tensor(x * 4))",
           "Hardswish decomposes to clamps in some exports; x2 maps both forms." if cls == "Hardswish" else ())
module("torch.nn.functional.silu", "activation", ["silu.default"], "paddle.nn.functional.silu",
       "torch.nn.functional.silu(input, inplace=False)", "paddle.nn.functional.silu(x, name=None)", [INPUT, a("inplace", "—", "unsupported")],
       f"out = F.silu({T})", f"out = F.silu({P})")
module("torch.nn.GELU", "activation", ["gelu.default"], "paddle.nn.GELU", "torch.nn.GELU(approximate='none')",
       "paddle.nn.GELU(approximate=False, name=None)",
       [a("approximate", "approximate", "semantics", "torch 'none'/'tanh' (string), Paddle False/True (bool)")],
       f"out = [nn.GELU()({T}), nn.GELU(approximate='tanh')({T})]",
       f"out = [paddle.nn.GELU()({P}), paddle.nn.GELU(approximate=True)({P})]")
module("torch.nn.functional.gelu", "activation", ["gelu.default"], "paddle.nn.functional.gelu",
       "torch.nn.functional.gelu(input, approximate='none')", "paddle.nn.functional.gelu(x, approximate=False, name=None)",
       [INPUT, a("approximate", "approximate", "semantics", "'tanh' is True")],
       f"out = F.gelu({T}, approximate='tanh')", f"out = F.gelu({P}, approximate=True)")
module("torch.nn.functional.scaled_dot_product_attention", "activation",
       ["scaled_dot_product_attention.default"], "paddle.nn.functional.scaled_dot_product_attention",
       "torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False)",
       "paddle.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, training=True, name=None)",
       [a("query", "query", "semantics", "torch [batch, heads, seq, dim], Paddle [batch, seq, heads, dim]"),
        a("scale", "—", "unsupported", "Paddle always scales by 1/sqrt(dim)"),
        a("enable_gqa", "—", "unsupported")],
       "out = F.scaled_dot_product_attention(t, u, t)",
       "out = paddle.matmul(F.softmax(paddle.matmul(t, u, transpose_y=True) / 8 ** 0.5, axis=-1), t)",
       "Paddle's function runs on GPU builds only (flash attention), so x2 writes the Paddle "
       "side out as matmul/softmax/matmul; the torch side is one F.scaled_dot_product_attention.",
       shape=(2, 2, 5, 8), atol=1e-5)
module("torch.nn.LeakyReLU", "activation", ["leaky_relu.default"], "paddle.nn.LeakyReLU",
       "torch.nn.LeakyReLU(negative_slope=0.01, inplace=False)", "paddle.nn.LeakyReLU(negative_slope=0.01, name=None)",
       [a("negative_slope", "negative_slope", "same", "0.01 on both (TF 0.2, Keras 0.3)"), a("inplace", "—", "unsupported")],
       f"out = nn.LeakyReLU(0.1)({T})", f"out = paddle.nn.LeakyReLU(0.1)({P})")
module("torch.nn.functional.leaky_relu", "activation", ["leaky_relu.default"], "paddle.nn.functional.leaky_relu",
       "torch.nn.functional.leaky_relu(input, negative_slope=0.01, inplace=False)", "paddle.nn.functional.leaky_relu(x, negative_slope=0.01, name=None)",
       [INPUT, a("negative_slope", "negative_slope"), a("inplace", "—", "unsupported")],
       f"out = F.leaky_relu({T})", f"out = F.leaky_relu({P})")
module("torch.nn.ReLU6", "activation", ["hardtanh.default"], "paddle.nn.ReLU6", "torch.nn.ReLU6(inplace=False)",
       "paddle.nn.ReLU6(name=None)", [a("inplace", "—", "unsupported")], f"out = nn.ReLU6()({T} * 4)",
       "out = paddle.nn.ReLU6()(paddle.to_tensor(x * 4))", "Exported as hardtanh(0, 6); x2 writes `clip`.")
module("torch.nn.Hardtanh", "activation", ["hardtanh.default"], "paddle.nn.Hardtanh",
       "torch.nn.Hardtanh(min_val=-1.0, max_val=1.0, inplace=False)", "paddle.nn.Hardtanh(min=-1.0, max=1.0, name=None)",
       [a("min_val", "min", "renamed"), a("max_val", "max", "renamed"), a("inplace", "—", "unsupported")],
       f"out = nn.Hardtanh()({T})", f"out = paddle.nn.Hardtanh()({P})")
module("torch.clamp", "math", ["clamp.default"], "paddle.clip", "torch.clamp(input, min=None, max=None, *, out=None)",
       "paddle.clip(x, min=None, max=None, name=None)", [INPUT, a("min", "min"), a("max", "max"), OUT],
       f"out = torch.clamp({T}, -0.5, 0.5)", f"out = paddle.clip({P}, -0.5, 0.5)")
module("torch.nn.Softmax", "activation", ["_softmax.default", "softmax.int"], "paddle.nn.Softmax",
       "torch.nn.Softmax(dim=None)", "paddle.nn.Softmax(axis=-1, name=None)",
       [a("dim", "axis", "default", "torch None picks an implicit dim (0 for 0/1/3-D input, else 1) with a warning; Paddle -1")],
       f"out = nn.Softmax(dim=1)({T})", f"out = paddle.nn.Softmax(axis=1)({P})", "Always pass the axis explicitly.")
module("torch.nn.functional.softmax", "activation", ["_softmax.default", "softmax.int"], "paddle.nn.functional.softmax",
       "torch.nn.functional.softmax(input, dim=None, _stacklevel=3, dtype=None)", "paddle.nn.functional.softmax(x, axis=-1, dtype=None, name=None)",
       [INPUT, a("dim", "axis", "default", "implicit dim in torch, -1 in Paddle"), a("dtype", "dtype")],
       f"out = F.softmax({T}, dim=-1)", f"out = F.softmax({P}, axis=-1)")
module("torch.nn.functional.log_softmax", "activation", ["_log_softmax.default", "log_softmax.int"], "paddle.nn.functional.log_softmax",
       "torch.nn.functional.log_softmax(input, dim=None, _stacklevel=3, dtype=None)", "paddle.nn.functional.log_softmax(x, axis=-1, dtype=None, name=None)",
       [INPUT, a("dim", "axis", "default", "implicit dim in torch, -1 in Paddle"), a("dtype", "dtype")],
       f"out = F.log_softmax({T}, dim=1)", f"out = F.log_softmax({P}, axis=1)")
module("torch.nn.LogSoftmax", "activation", ["_log_softmax.default"], "paddle.nn.LogSoftmax",
       "torch.nn.LogSoftmax(dim=None)", "paddle.nn.LogSoftmax(axis=-1, name=None)", [a("dim", "axis", "default")],
       f"out = nn.LogSoftmax(dim=-1)({T})", f"out = paddle.nn.LogSoftmax()({P})")

# ---------------------------------------------------------------- binary math
_Y = "y = rng.randn(3, 4).astype('float32')\n"
module("torch.add", "math", ["add.Tensor", "add.Scalar"], "paddle.add", "torch.add(input, other, *, alpha=1, out=None)",
       "paddle.add(x, y, name=None)", [INPUT, a("other", "y", "renamed"), a("alpha", "—", "unsupported", "multiply y first"), OUT],
       _Y + f"out = [torch.add({T}, torch.tensor(y), alpha=2), {T} + 1.5]",
       _Y + f"out = [paddle.add({P}, 2 * paddle.to_tensor(y)), {P} + 1.5]", "x2 folds alpha into a `mul`.")
module("torch.sub", "math", ["sub.Tensor", "sub.Scalar"], "paddle.subtract", "torch.sub(input, other, *, alpha=1, out=None)",
       "paddle.subtract(x, y, name=None)", [INPUT, a("other", "y", "renamed"), a("alpha", "—", "unsupported"), OUT],
       _Y + f"out = [torch.sub({T}, torch.tensor(y)), {T} - 1.5]",
       _Y + f"out = [paddle.subtract({P}, paddle.to_tensor(y)), {P} - 1.5]")
module("torch.rsub", "math", ["rsub.Tensor", "rsub.Scalar"], "paddle.subtract (swapped)", "torch.rsub(input, other, *, alpha=1)",
       "paddle.subtract(y, x)", [a("input, other", "y, x", "semantics", "computes other - alpha * input")],
       f"out = [torch.rsub({T}, 2.0), 1.0 - {T}]", f"out = [2.0 - {P}, 1.0 - {P}]")
module("torch.mul", "math", ["mul.Tensor", "mul.Scalar"], "paddle.multiply", "torch.mul(input, other, *, out=None)",
       "paddle.multiply(x, y, name=None)", [INPUT, a("other", "y", "renamed"), OUT],
       _Y + f"out = [torch.mul({T}, torch.tensor(y)), {T} * 3]", _Y + f"out = [paddle.multiply({P}, paddle.to_tensor(y)), {P} * 3]")
module("torch.div", "math", ["div.Tensor", "div.Scalar", "div.Tensor_mode", "div.Scalar_mode"], "paddle.divide", "torch.div(input, other, *, rounding_mode=None, out=None)",
       "paddle.divide(x, y, name=None)",
       [INPUT, a("other", "y", "renamed"), a("rounding_mode", "—", "semantics", "'floor' is paddle.floor_divide; 'trunc' has no direct op"), OUT],
       _Y + f"out = [torch.div({T}, torch.tensor(np.abs(y) + 0.5)), {T} / 2]",
       _Y + f"out = [paddle.divide({P}, paddle.to_tensor(np.abs(y) + 0.5)), {P} / 2]", "x2 maps true division.")
module("torch.pow", "math", ["pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar"], "paddle.pow",
       "torch.pow(input, exponent, *, out=None)", "paddle.pow(x, y, name=None)", [INPUT, a("exponent", "y", "renamed"), OUT],
       "b = torch.tensor(np.abs(x) + 0.5)\nout = [torch.pow(b, 2), torch.pow(b, b), torch.pow(2.0, b)]",
       "b = paddle.to_tensor(np.abs(x) + 0.5)\nout = [paddle.pow(b, 2.0), paddle.pow(b, b), paddle.pow(paddle.full_like(b, 2.0), b)]",
       "A Python-number base (pow.Scalar) needs a tensor base in Paddle.", atol=1e-4)
module("torch.maximum", "math", ["maximum.default"], "paddle.maximum", "torch.maximum(input, other, *, out=None)",
       "paddle.maximum(x, y, name=None)", [INPUT, a("other", "y", "renamed"), OUT],
       _Y + f"out = torch.maximum({T}, torch.tensor(y))", _Y + f"out = paddle.maximum({P}, paddle.to_tensor(y))")
module("torch.minimum", "math", ["minimum.default"], "paddle.minimum", "torch.minimum(input, other, *, out=None)",
       "paddle.minimum(x, y, name=None)", [INPUT, a("other", "y", "renamed"), OUT],
       _Y + f"out = torch.minimum({T}, torch.tensor(y))", _Y + f"out = paddle.minimum({P}, paddle.to_tensor(y))")
module("torch.eq", "comparison", ["eq.Tensor", "eq.Scalar"], "paddle.equal", "torch.eq(input, other, *, out=None)",
       "paddle.equal(x, y, name=None)", [INPUT, a("other", "y", "renamed", "a Python number needs a tensor in Paddle"), OUT],
       "r = torch.tensor(np.round(x))\nout = [torch.eq(r, r.flip(0)), r == 0]",
       "r = paddle.to_tensor(np.round(x))\nout = [paddle.equal(r, r.flip(0)), paddle.equal(r, paddle.zeros_like(r))]")
for name, pd, sym, alias in [("ge", "greater_equal", ">=", "greater_equal"), ("gt", "greater_than", ">", "greater"),
                             ("le", "less_equal", "<=", "less_equal"), ("lt", "less_than", "<", "less"),
                             ("ne", "not_equal", "!=", "not_equal")]:
    module(f"torch.{name}", "comparison", [f"{name}.Tensor", f"{name}.Scalar"], f"paddle.{pd}",
           f"torch.{name}(input, other, *, out=None)", f"paddle.{pd}(x, y, name=None)",
           [INPUT, a("other", "y", "renamed", "a Python number needs a tensor in Paddle's function (its operators take numbers)"), OUT],
           f"r = torch.tensor(np.round(x))\nout = [torch.{name}(r, r.flip(0)), r {sym} 0, torch.{name}(r, 0.5)]",
           f"r = paddle.to_tensor(np.round(x))\nout = [paddle.{pd}(r, r.flip(0)), r {sym} 0, paddle.{pd}(r, paddle.full_like(r, 0.5))]",
           (f"Boolean output, broadcasting on both sides. `a {sym} b` on tensors exports as aten.{name} (the Scalar "
            f"overload for a Python number). torch's alias is torch.{alias}"
            + ("; Paddle's name ends in _than." if alias != pd else "."),))
module("torch.remainder", "math", ["remainder.Tensor", "remainder.Scalar"], "paddle.remainder",
       "torch.remainder(input, other, *, out=None)", "paddle.remainder(x, y, name=None)",
       [INPUT, a("other", "y", "renamed", "a tensor or a Python number on both sides; `%` works on both"), OUT],
       """
       d = (np.where(rng.rand(3, 4) > 0.5, 1.0, -1.0) * (rng.rand(3, 4) + 0.5)).astype('float32')
       t = torch.tensor(x * 3)
       out = [torch.remainder(t, torch.tensor(d)), torch.remainder(t, 1.5), t % -1.5,
              torch.remainder(torch.tensor([-7, -3, 7, 3]), torch.tensor([2, -2, 2, -2]))]
       """,
       """
       d = (np.where(rng.rand(3, 4) > 0.5, 1.0, -1.0) * (rng.rand(3, 4) + 0.5)).astype('float32')
       t = paddle.to_tensor(x * 3)
       out = [paddle.remainder(t, paddle.to_tensor(d)), paddle.remainder(t, 1.5), t % -1.5,
              paddle.remainder(paddle.to_tensor([-7, -3, 7, 3]), paddle.to_tensor([2, -2, 2, -2]))]
       """,
       ("Floor modulo on both sides: the result takes the sign of the divisor, like Python's % and numpy.mod "
        "(remainder(-7, 2) = 1, remainder(7, -2) = -1). torch.fmod (truncated, sign of the dividend) is a different "
        "op; Paddle has no fmod: x - paddle.trunc(x / y) * y.",
        "TF's tf.math.floormod is the same convention; tf.math.truncatemod is fmod.",
        "x2 maps both overloads to the IR `mod` (numpy's convention). Its ONNX target refuses a floating-point "
        "remainder (ONNX Mod with fmod=0 takes integers only)."))
module("torch.where", "comparison", ["where.self"], "paddle.where", "torch.where(condition, input, other, *, out=None)",
       "paddle.where(condition, x=None, y=None, name=None)",
       [a("condition", "condition"), a("input", "x", "renamed"), a("other", "y", "renamed")],
       f"t = {T}\nout = torch.where(t > 0, t, -t)", f"t = {P}\nout = paddle.where(t > 0, t, -t)")

# ---------------------------------------------------------------- bitwise
_INTS = "i = {mod}((x * 10).astype('int32'))\n"  # negative values too: two's-complement bits on both sides
for name, sym in [("and", "&"), ("or", "|"), ("xor", "^")]:
    module(f"torch.bitwise_{name}", "bitwise", [f"bitwise_{name}.Tensor", f"bitwise_{name}.Scalar"]
           + ([f"__{name}__.Tensor"] if name != "xor" else []), f"paddle.bitwise_{name}",
           f"torch.bitwise_{name}(input, other, *, out=None)", f"paddle.bitwise_{name}(x, y, out=None, name=None)",
           [INPUT, a("other", "y", "semantics", "a Python int needs a tensor in Paddle: its function and its "
                                                f"`{sym}` operator both refuse numbers"), OUT],
           _INTS.format(mod="torch.tensor") + f"out = [torch.bitwise_{name}(i, i.flip(0)), i {sym} 6, (i > 0) {sym} (i < 5)]",
           _INTS.format(mod="paddle.to_tensor")
           + f"out = [paddle.bitwise_{name}(i, i.flip(0)), paddle.bitwise_{name}(i, paddle.full_like(i, 6)),\n"
             f"       paddle.bitwise_{name}(i > 0, i < 5)]",
           (f"`{sym}` on tensors exports as this op (the Scalar overload for a Python int). Integer and bool inputs "
            "only; on bool it is the logical operation.",))
module("torch.bitwise_not", "bitwise", ["bitwise_not.default"], "paddle.bitwise_not", "torch.bitwise_not(input, *, out=None)",
       "paddle.bitwise_not(x, out=None, name=None)", [INPUT, OUT],
       _INTS.format(mod="torch.tensor") + "out = [torch.bitwise_not(i), ~(i > 0)]",
       _INTS.format(mod="paddle.to_tensor") + "out = [paddle.bitwise_not(i), paddle.bitwise_not(i > 0)]",
       "`~t` exports as this op: -n - 1 on integers, logical not on bool (torch.logical_not exports as logical_not).")

# ---------------------------------------------------------------- linear
_LIN_NOTE = ("torch Linear weight is [out_features, in_features]; Paddle Linear weight is [in_features, out_features]: "
             "x2 transposes it once at conversion (Keras Dense kernels are already [in, out]).",)
module("torch.nn.Linear", "linear", ["linear.default", "addmm.default", "t.default"], "paddle.nn.Linear",
       "torch.nn.Linear(in_features, out_features, bias=True, device=None, dtype=None)",
       "paddle.nn.Linear(in_features, out_features, weight_attr=None, bias_attr=None, name=None)",
       [a("in_features", "in_features"), a("out_features", "out_features"), a("bias", "bias_attr", "semantics", "bias=False is bias_attr=False"),
        a("device / dtype", "—", "unsupported", "use paddle.set_device / set_default_dtype")],
       """
       layer = nn.Linear(4, 5)
       w, b = rng.randn(5, 4).astype('float32'), rng.randn(5).astype('float32')
       layer.weight.data = torch.tensor(w)
       layer.bias.data = torch.tensor(b)
       out = layer(torch.tensor(x))
       """,
       """
       layer = paddle.nn.Linear(4, 5)
       w, b = rng.randn(5, 4).astype('float32'), rng.randn(5).astype('float32')
       layer.weight.set_value(w.T)  # [out, in] -> [in, out]
       layer.bias.set_value(b)
       out = layer(paddle.to_tensor(x))
       """, _LIN_NOTE + ("Older exports decompose it to t + addmm; x2 maps both.",), atol=1e-4)
module("torch.nn.functional.linear", "linear", ["linear.default"], "paddle.nn.functional.linear",
       "torch.nn.functional.linear(input, weight, bias=None)", "paddle.nn.functional.linear(x, weight, bias=None, name=None)",
       [INPUT, a("weight", "weight", "semantics", "[out, in] vs [in, out]"), a("bias", "bias")],
       "w = rng.randn(5, 4).astype('float32')\nout = F.linear(torch.tensor(x), torch.tensor(w))",
       "w = rng.randn(5, 4).astype('float32')\nout = F.linear(paddle.to_tensor(x), paddle.to_tensor(w.T))", _LIN_NOTE, atol=1e-4)
module("torch.addmm", "linear", ["addmm.default"], "paddle.addmm", "torch.addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None)",
       "paddle.addmm(input, x, y, beta=1.0, alpha=1.0, name=None)",
       [a("input", "input"), a("mat1", "x", "renamed"), a("mat2", "y", "renamed"), a("beta / alpha", "beta / alpha")],
       "b = rng.randn(5).astype('float32'); w = rng.randn(4, 5).astype('float32')\nout = torch.addmm(torch.tensor(b), torch.tensor(x[0]), torch.tensor(w))",
       "b = rng.randn(5).astype('float32'); w = rng.randn(4, 5).astype('float32')\nout = paddle.matmul(paddle.to_tensor(x[0]), paddle.to_tensor(w)) + paddle.to_tensor(b)",
       "x2 writes matmul + add (a `dense` for constant weights).", atol=1e-4)
module("torch.mm", "linear", ["mm.default"], "paddle.mm", "torch.mm(input, mat2, *, out=None)", "paddle.mm(input, mat2, name=None)",
       [a("input", "input"), a("mat2", "mat2"), OUT], "w = rng.randn(4, 5).astype('float32')\nout = torch.mm(torch.tensor(x[0]), torch.tensor(w))",
       "w = rng.randn(4, 5).astype('float32')\nout = paddle.mm(paddle.to_tensor(x[0]), paddle.to_tensor(w))", atol=1e-4)
module("torch.bmm", "linear", ["bmm.default"], "paddle.bmm", "torch.bmm(input, mat2, *, out=None)", "paddle.bmm(x, y, name=None)",
       [INPUT, a("mat2", "y", "renamed"), OUT], "w = rng.randn(2, 4, 5).astype('float32')\nout = torch.bmm(torch.tensor(x), torch.tensor(w))",
       "w = rng.randn(2, 4, 5).astype('float32')\nout = paddle.bmm(paddle.to_tensor(x), paddle.to_tensor(w))", atol=1e-4)
module("torch.matmul", "linear", ["matmul.default", "bmm.default", "_unsafe_view.default"], "paddle.matmul",
       "torch.matmul(input, other, *, out=None)", "paddle.matmul(x, y, transpose_x=False, transpose_y=False, name=None)",
       [INPUT, a("other", "y", "renamed"), a("—", "transpose_x / transpose_y", "paddle-only"), OUT],
       "w = rng.randn(4, 5).astype('float32')\nout = torch.matmul(torch.tensor(x), torch.tensor(w))",
       "w = rng.randn(4, 5).astype('float32')\nout = paddle.matmul(paddle.to_tensor(x), paddle.to_tensor(w))",
       "Batched matmul may export as expand + bmm + _unsafe_view; x2 maps each.", atol=1e-4)

# ---------------------------------------------------------------- reductions
for name, ops, pd, kw, pkw in [
    ("sum", ["sum.dim_IntList", "sum.default"], "sum", "dim=1, keepdim=True", "axis=1, keepdim=True"),
    ("mean", ["mean.dim", "mean.default"], "mean", "dim=(1, 2)", "axis=[1, 2]"),
    ("amax", ["amax.default"], "amax", "dim=-1", "axis=-1"),
    ("amin", ["amin.default"], "amin", "dim=-1, keepdim=True", "axis=-1, keepdim=True"),
]:
    module(f"torch.{name}", "reduction", ops, f"paddle.{pd}",
           f"torch.{name}(input, dim=None, keepdim=False, *, dtype=None, out=None)", f"paddle.{pd}(x, axis=None, keepdim=False, name=None)",
           [INPUT, a("dim", "axis", "renamed"), a("keepdim", "keepdim", "same", "TF/numpy spell it keepdims"), OUT],
           f"out = [torch.{name}({T}, {kw}), torch.{name}({T})]", f"out = [paddle.{pd}({P}, {pkw}), paddle.{pd}({P})]")
module("torch.cumsum", "math", ["cumsum.default"], "paddle.cumsum", "torch.cumsum(input, dim, *, dtype=None, out=None)",
       "paddle.cumsum(x, axis=None, dtype=None, name=None)",
       [INPUT, a("dim", "axis", "default", "required in torch; Paddle's default None flattens the input first"),
        a("dtype", "dtype", "same", "x2 casts the input to it first, as torch does"), OUT],
       f"t = {T}\nout = [torch.cumsum(t, dim=1), torch.cumsum(t, -1), torch.cumsum((t > 0).int(), dim=2)]",
       f"t = {P}\nout = [paddle.cumsum(t, axis=1), paddle.cumsum(t, -1), paddle.cumsum((t > 0).astype('int32'), axis=2)]",
       ("Integer input sums to int64 on both sides unless dtype is given (int32 here). torch also sums bool (to "
        "int64); Paddle has no bool kernel: cast first.",
        "No exclusive / reverse arguments on either side (TF's cumsum has them)."))
module("torch.argmax", "reduction", ["argmax.default"], "paddle.argmax", "torch.argmax(input, dim=None, keepdim=False)",
       "paddle.argmax(x, axis=None, keepdim=False, dtype='int64', name=None)",
       [INPUT, a("dim", "axis", "renamed", "None flattens on both sides; x2 refuses dim=None"), a("keepdim", "keepdim"),
        a("—", "dtype", "paddle-only", "int64 on both sides by default")],
       "r = torch.tensor(np.round(x))\nout = [torch.argmax(r, dim=1), torch.argmax(r, dim=-1, keepdim=True), torch.argmax(r)]",
       "r = paddle.to_tensor(np.round(x))\nout = [paddle.argmax(r, axis=1), paddle.argmax(r, axis=-1, keepdim=True), paddle.argmax(r)]",
       "Ties (the rounded input has many) pick the first maximal index on both sides. TF's tf.math.argmax with "
       "axis=None uses axis 0 instead of flattening.")
module("torch.any", "reduction", ["any.dim", "any.dims"], "paddle.any", "torch.any(input, dim=None, keepdim=False, *, out=None)",
       "paddle.any(x, axis=None, keepdim=False, name=None)", [INPUT, a("dim", "axis", "renamed"), a("keepdim", "keepdim")],
       f"out = [torch.any({T} > 1, dim=1), torch.any({T} > 1, dim=(0, 2))]", f"out = [paddle.any({P} > 1, axis=1), paddle.any({P} > 1, axis=[0, 2])]")
module("torch.var", "reduction", ["var.correction", "var.dim"], "paddle.var",
       "torch.var(input, dim=None, *, correction=1, keepdim=False, out=None)", "paddle.var(x, axis=None, unbiased=True, keepdim=False, name=None)",
       [INPUT, a("dim", "axis", "renamed"), a("correction / unbiased", "unbiased", "semantics", "correction=1 is unbiased=True, 0 is False; other values unsupported"),
        a("keepdim", "keepdim")],
       f"out = [torch.var({T}, dim=-1), torch.var({T}, dim=1, correction=0)]", f"out = [paddle.var({P}, axis=-1), paddle.var({P}, axis=1, unbiased=False)]",
       "Unbiased by default on both sides (TF's reduce_variance is biased).")
module("torch.std", "reduction", ["var.correction", "sqrt.default"], "paddle.std",
       "torch.std(input, dim=None, *, correction=1, keepdim=False, out=None)", "paddle.std(x, axis=None, unbiased=True, keepdim=False, name=None)",
       [INPUT, a("dim", "axis", "renamed"), a("correction", "unbiased", "semantics"), a("keepdim", "keepdim")],
       f"out = torch.std({T}, dim=-1)", f"out = paddle.std({P}, axis=-1)", "Exported as var + sqrt.")

# ---------------------------------------------------------------- shape / array
module("torch.reshape", "array", ["reshape.default", "view.default"], "paddle.reshape", "torch.reshape(input, shape)",
       "paddle.reshape(x, shape, name=None)", [INPUT, a("shape", "shape", "same", "Paddle also reads 0 as 'copy this dim'")],
       f"out = torch.reshape({T}, (4, -1))", f"out = paddle.reshape({P}, [4, -1])")
module("torch.Tensor.view", "array", ["view.default"], "paddle.Tensor.reshape / paddle.view", "Tensor.view(*shape)",
       "paddle.reshape(x, shape)", [a("*shape", "shape", "semantics", "varargs vs a list")],
       f"out = {T}.view(2, 12)", f"out = {P}.reshape([2, 12])", "view(dtype) reinterpretation is not mapped.")
api("torch.Tensor.item", "array", ("aten._local_scalar_dense.default",), "paddle.Tensor.item",
    "Tensor.item()", "Tensor.item()", [],
    "t = torch.tensor(x).reshape(-1)\nn = (t[0] * 0 + 3).int().item()\nout = t[:n]",
    "t = paddle.to_tensor(x).reshape([-1])\nn = int((t[0] * 0 + 3).astype('int32').item())\n"
    "out = t[:n]",
    ("x2 reads .item() of a 0-d integer tensor (the counter a TorchScript loop's block "
     "takes as an int) as an int64 size; .item() of a float tensor is refused.",))
api("torch.Tensor.size", "array", ("aten.sym_size.int", "sym.add", "sym.sub", "sym.mul",
                                    "sym.floordiv", "sym.mod", "sym.neg", "sym.max", "sym.min"),
    "paddle.shape", "Tensor.size(dim=None)", "paddle.shape(input)",
    [a("dim", "index", "semantics", "paddle.Tensor.shape is a list: index it")],
    "t = torch.tensor(x)\nout = t.reshape(t.size(0) * t.size(1), -1)",
    "t = paddle.to_tensor(x)\nout = t.reshape([t.shape[0] * t.shape[1], -1])",
    ("A size read from a dim named in --input-shape, and Python arithmetic on such sizes, "
     "become int64 tensors in the converted graph (x2 writes paddle.shape(x)[i], which "
     "also holds in a paddle.jit.save'd model, where x.shape[i] is -1 for a dynamic dim).",))
module("torch.ops.aten._unsafe_view", "array", ["_unsafe_view.default"], "paddle.reshape", "aten._unsafe_view(self, size)",
       "paddle.reshape(x, shape)", [a("size", "shape", "renamed")], f"out = torch.ops.aten._unsafe_view({T}, [6, 4])",
       f"out = paddle.reshape({P}, [6, 4])", "Appears in exported graphs after matmul decompositions.")
module("torch.flatten", "array", ["flatten.using_ints", "view.default"], "paddle.flatten", "torch.flatten(input, start_dim=0, end_dim=-1)",
       "paddle.flatten(x, start_axis=0, stop_axis=-1, name=None)", [INPUT, a("start_dim", "start_axis", "renamed"), a("end_dim", "stop_axis", "renamed")],
       f"out = torch.flatten({T}, 1)", f"out = paddle.flatten({P}, 1)",
       "Both flatten in NCHW (C, H, W) order, so torch-to-Paddle needs no weight permutation (unlike Keras NHWC flatten).")
module("torch.nn.Flatten", "array", ["view.default", "flatten.using_ints"], "paddle.nn.Flatten", "torch.nn.Flatten(start_dim=1, end_dim=-1)",
       "paddle.nn.Flatten(start_axis=1, stop_axis=-1)", [a("start_dim", "start_axis", "renamed"), a("end_dim", "stop_axis", "renamed")],
       f"out = nn.Flatten()({T})", f"out = paddle.nn.Flatten()({P})", "Default start 1 in the layer, 0 in the function, on both sides.")
module("torch.permute", "array", ["permute.default"], "paddle.transpose", "torch.permute(input, dims)", "paddle.transpose(x, perm, name=None)",
       [INPUT, a("dims", "perm", "renamed")], f"out = torch.permute({T}, (2, 0, 1))", f"out = paddle.transpose({P}, [2, 0, 1])")
module("torch.transpose", "array", ["transpose.int"], "paddle.transpose (full perm)", "torch.transpose(input, dim0, dim1)",
       "paddle.transpose(x, perm, name=None)", [INPUT, a("dim0, dim1", "perm", "semantics", "torch swaps two dims; Paddle takes the full permutation")],
       f"out = torch.transpose({T}, 0, 2)", f"out = paddle.transpose({P}, [2, 1, 0])",
       "Paddle's transpose is torch.permute, not torch.transpose.")
module("torch.Tensor.t", "array", ["t.default"], "paddle.t", "Tensor.t()", "paddle.t(input, name=None)", [],
       f"out = {T}[0].t()", f"out = paddle.t({P}[0])")
module("torch.Tensor.T", "array", ["numpy_T.default"], "paddle.Tensor.T", "Tensor.T", "Tensor.T",
       [a("—", "—", "same", "reverses all dims on both sides")], f"out = {T}.T", f"out = {P}.T")
module("torch.Tensor.expand", "array", ["expand.default"], "paddle.expand", "Tensor.expand(*sizes)", "paddle.expand(x, shape, name=None)",
       [a("*sizes", "shape", "semantics", "varargs vs a list; -1 keeps a dim on both sides")],
       f"out = {T}[:, :1].expand(-1, 3, 4)", f"out = paddle.expand({P}[:, :1], [-1, 3, 4])")
module("torch.unsqueeze", "array", ["unsqueeze.default"], "paddle.unsqueeze", "torch.unsqueeze(input, dim)", "paddle.unsqueeze(x, axis, name=None)",
       [INPUT, a("dim", "axis", "renamed")], f"out = torch.unsqueeze({T}, 1)", f"out = paddle.unsqueeze({P}, 1)")
module("torch.squeeze", "array", ["squeeze.dim", "squeeze.dims", "squeeze.default"], "paddle.squeeze", "torch.squeeze(input, dim=None)",
       "paddle.squeeze(x, axis=None, name=None)", [INPUT, a("dim", "axis", "renamed", "a non-1 dim is left alone on both sides")],
       f"t = {T}.reshape(2, 1, 12, 1)\nout = [torch.squeeze(t, 1), torch.squeeze(t, (1, 3)), torch.squeeze(t)]",
       f"t = {P}.reshape([2, 1, 12, 1])\nout = [paddle.squeeze(t, 1), paddle.squeeze(t, [1, 3]), paddle.squeeze(t)]")
module("torch.cat", "array", ["cat.default"], "paddle.concat", "torch.cat(tensors, dim=0, *, out=None)", "paddle.concat(x, axis=0, name=None)",
       [a("tensors", "x", "renamed"), a("dim", "axis", "renamed")], f"t = {T}\nout = torch.cat([t, 2 * t], dim=2)",
       f"t = {P}\nout = paddle.concat([t, 2 * t], axis=2)")
module("torch.concat", "array", ["concat.default", "cat.default"], "paddle.concat", "torch.concat(tensors, dim=0, *, out=None)",
       "paddle.concat(x, axis=0, name=None)", [a("tensors", "x", "renamed"), a("dim", "axis", "renamed")],
       f"t = {T}\nout = torch.concat([t, t], dim=0)", f"t = {P}\nout = paddle.concat([t, t], axis=0)", "Alias of torch.cat.")
module("torch.stack", "array", ["stack.default"], "paddle.stack", "torch.stack(tensors, dim=0, *, out=None)", "paddle.stack(x, axis=0, name=None)",
       [a("tensors", "x", "renamed"), a("dim", "axis", "renamed")], f"t = {T}\nout = torch.stack([t, -t], 1)", f"t = {P}\nout = paddle.stack([t, -t], 1)")
module("torch.Tensor.__getitem__ (slice)", "array", ["slice.Tensor"], "paddle.Tensor.__getitem__ / paddle.slice", "x[a:b:s]",
       "x[a:b:s] / paddle.slice(x, axes, starts, ends)", [a("—", "—", "same", "Python slicing works the same way")],
       f"out = {T}[:, 1:, ::2]", f"out = {P}[:, 1:, ::2]")
module("torch.select", "array", ["select.int"], "indexing x[:, i]", "torch.select(input, dim, index)", "x[:, i] / paddle.index_select + squeeze",
       [INPUT, a("dim, index", "—", "semantics", "use integer indexing")], f"out = torch.select({T}, 1, 2)", f"out = {P}[:, 2]")
module("torch.split", "array", ["split.Tensor", "split_with_sizes.default"], "paddle.split", "torch.split(tensor, split_size_or_sections, dim=0)",
       "paddle.split(x, num_or_sections, axis=0, name=None)",
       [a("tensor", "x", "renamed"),
        a("split_size_or_sections", "num_or_sections", "semantics", "an int is the SIZE of each chunk in torch but the NUMBER of chunks in Paddle"),
        a("dim", "axis", "renamed")],
       f"t = {T}\nout = list(torch.split(t, 1, dim=2)) + list(torch.split(t, [1, 3], dim=2))",
       f"t = {P}\nout = paddle.split(t, 4, axis=2) + paddle.split(t, [1, 3], axis=2)",
       "torch.split(t, 1) splits into size-1 pieces: paddle.split(t, t.shape[axis]).")
module("torch.index_select", "array", ["index_select.default"], "paddle.index_select", "torch.index_select(input, dim, index, *, out=None)",
       "paddle.index_select(x, index, axis=0, name=None)", [INPUT, a("dim", "axis", "semantics", "argument order differs: (dim, index) vs (index, axis)"), a("index", "index")],
       f"out = torch.index_select({T}, 2, torch.tensor([3, 0]))", f"out = paddle.index_select({P}, paddle.to_tensor([3, 0]), axis=2)")
module("torch.Tensor.__getitem__ (tensor index)", "array", ["index.Tensor"], "paddle.gather / indexing", "x[idx], x[:, idx]",
       "paddle.gather(x, index, axis)", [a("—", "—", "semantics", "one indexed axis maps to gather")],
       f"out = {T}[:, torch.tensor([2, 0])]", f"out = paddle.gather({P}, paddle.to_tensor([2, 0]), axis=1)")
module("torch.gather", "array", ["gather.default"], "paddle.take_along_axis (not paddle.gather)",
       "torch.gather(input, dim, index, *, sparse_grad=False, out=None)",
       "paddle.take_along_axis(arr, indices, axis, broadcast=True)",
       [a("input", "arr", "renamed"), a("dim", "axis", "semantics", "argument order differs: (dim, index) vs (indices, axis)"),
        a("index", "indices", "renamed", "int64 on both sides"), a("sparse_grad", "—", "unsupported", "gradients only"),
        a("—", "broadcast", "paddle-only", "the default True broadcasts index and input against each other; torch never "
                                           "broadcasts and reads only the leading block of input where index is "
                                           "smaller outside dim: pass broadcast=False"), OUT],
       """
       t = torch.tensor(x)
       i, j = rng.randint(0, 4, (2, 3, 5)), rng.randint(0, 3, (1, 2, 4))
       out = [torch.gather(t, 2, torch.tensor(i)), torch.gather(t, 1, torch.tensor(j))]
       """,
       """
       t = paddle.to_tensor(x)
       i, j = rng.randint(0, 4, (2, 3, 5)), rng.randint(0, 3, (1, 2, 4))
       out = [paddle.take_along_axis(t, paddle.to_tensor(i), 2),
              paddle.take_along_axis(t, paddle.to_tensor(j), 1, broadcast=False)]  # j has batch 1, t batch 2
       """,
       ("paddle.gather is torch.index_select (one index vector along an axis), not torch.gather.",
        "The output has index's shape on both sides (with broadcast=False in Paddle).",
        "x2 maps it to the IR `gather_elements` (numpy.take_along_axis) and writes paddle.take_along_axis with the "
        "default broadcast=True: exact when index has the input's size in every dim but dim (the first output "
        "here). An index smaller outside dim is not cropped: a size-1 dim is broadcast (the second output converts "
        "without error to shape [2, 2, 4] where torch gives [1, 2, 4]), other sizes fail in Paddle."))
module("torch.nn.Embedding", "array", ["embedding.default"], "paddle.nn.Embedding",
       "torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False)",
       "paddle.nn.Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, sparse=False, weight_attr=None, scale_grad_by_freq=False, name=None)",
       [a("num_embeddings / embedding_dim", "num_embeddings / embedding_dim"), a("padding_idx", "padding_idx"),
        a("weight [num, dim]", "weight [num, dim]", "same", "same layout: copied as is")],
       "e = nn.Embedding(10, 4)\ne.weight.data = torch.tensor(rng.randn(10, 4).astype('float32'))\nout = e(torch.tensor([[1, 7], [3, 3]]))",
       "e = paddle.nn.Embedding(10, 4)\ne.weight.set_value(rng.randn(10, 4).astype('float32'))\nout = e(paddle.to_tensor([[1, 7], [3, 3]]))")
module("torch.nn.functional.pad", "array", ["constant_pad_nd.default"], "paddle.nn.functional.pad",
       "torch.nn.functional.pad(input, pad, mode='constant', value=None)",
       "paddle.nn.functional.pad(x, pad, mode='constant', value=0.0, data_format=None, pad_from_left_axis=True, name=None)",
       [INPUT,
        a("pad", "pad", "semantics", "torch: (begin, end) pairs from the LAST dim backwards, any even length up to "
                                     "2 * ndim. Paddle reads a shorter list the same way, but a full 2 * ndim list "
                                     "from the FIRST dim forwards unless pad_from_left_axis=False"),
        a("mode", "mode", "same", "'constant' / 'reflect' / 'replicate' / 'circular' on both; x2 maps constant only"),
        a("value", "value", "default", "torch None (0), Paddle 0.0"),
        a("—", "data_format / pad_from_left_axis", "paddle-only")],
       f"t = {T}\nout = [F.pad(t, (1, 2), value=1.5), F.pad(t, (1, 0, 2, 1)), F.pad(t, (1, 1, 0, 2, 1, 0)),\n"
       "       F.pad(t, (1, 1, 0, 2, 1, 0), value=-1.0)]",
       f"t = {P}\nout = [F.pad(t, [1, 2], value=1.5), F.pad(t, [1, 0, 2, 1]),\n"
       "       F.pad(t, [1, 0, 0, 2, 1, 1]),  # full length: first dim first\n"
       "       F.pad(t, [1, 1, 0, 2, 1, 0], value=-1.0, pad_from_left_axis=False)]  # or keep torch's order",
       ("F.pad exports as aten.pad and decomposes to constant_pad_nd in constant mode; the other modes decompose to "
        "reflection / replication pads x2 does not map yet.",
        "Negative pads crop on both sides; x2 refuses them."))
module("torch.Tensor.to", "array", ["to.dtype", "to.dtype_layout", "to.device", "_to_copy.default",
                                     "_assert_tensor_metadata.default"],
       "paddle.cast / Tensor.astype", "Tensor.to(dtype, non_blocking=False, copy=False)",
       "paddle.cast(x, dtype)", [a("dtype", "dtype"), a("device / non_blocking / copy", "—", "unsupported")],
       f"out = ({T} * 3).to(torch.int32)", "out = paddle.cast(paddle.to_tensor(x * 3), 'int32')",
       ("Float to int truncates toward zero on both sides.",
        "torch.export captures `.to(dtype=..., device=...)` as to.dtype_layout and `.to(device, dtype)` as to.device "
        "(a cast; the device is dropped), with an _assert_tensor_metadata check before it that x2 drops."))
for name, sig, ops, code, pd, note in [
    ("torch.clone", "torch.clone(input, *, memory_format=torch.preserve_format)", ["clone.default"], f"torch.clone({T})",
     f"paddle.clone({P})", "x2 drops the copy."),
    ("torch.Tensor.contiguous", "Tensor.contiguous(memory_format=torch.contiguous_format)", ["contiguous.default"],
     f"{T}.contiguous()", P, "Paddle tensors need no contiguous(); dropped."),
    ("torch.Tensor.detach", "Tensor.detach()", ["detach.default"], f"{T}.detach()", f"{P}.detach()", "Dropped in inference."),
    ("torch.ops.aten.alias", "torch.ops.aten.alias(self)", ["alias.default"], f"torch.ops.aten.alias({T})", P,
     "An alias of the input in exported graphs; dropped."),
    ("torch.tensor (constant in forward)", "torch.tensor(data, *, dtype=None, device=None, requires_grad=False)",
     ["lift_fresh_copy.default"], "torch.tensor([1.0, 2.0, 3.0, 4.0]) * torch.tensor(x)",
     "paddle.to_tensor([1.0, 2.0, 3.0, 4.0]) * paddle.to_tensor(x)", "A constant created in forward is exported as lift_fresh_copy; x2 keeps the constant."),
]:
    module(name, "identity", ops, "paddle.assign (or nothing)", sig, "paddle.assign(x) / x", [a("input", "x", "semantics", "no computation")],
           f"out = {code}", f"out = {pd}", note)
module("torch.nn.Dropout", "identity", ["dropout.default", "native_dropout.default", "clone.default"], "paddle.nn.Dropout",
       "torch.nn.Dropout(p=0.5, inplace=False)", "paddle.nn.Dropout(p=0.5, axis=None, mode='upscale_in_train', name=None)",
       [a("p", "p"), a("inplace", "—", "unsupported"), a("—", "mode", "paddle-only", "keep 'upscale_in_train': eval is identity like torch; 'downscale_in_infer' scales by 1-p in eval")],
       f"m = nn.Dropout(0.3)\nm.eval()\nout = m({T})", f"m = paddle.nn.Dropout(0.3)\nm.eval()\nout = m({P})",
       "Identity in eval mode on both sides; x2 converts eval-mode graphs only.")
for name, ops, code, pd, sig, psig in [
    ("torch.full", ["full.default"], "torch.full((2, 3), 1.5)", "paddle.full([2, 3], 1.5)", "torch.full(size, fill_value, *, dtype=None, ...)", "paddle.full(shape, fill_value, dtype=None, name=None)"),
    ("torch.full_like", ["full_like.default"], f"torch.full_like({T}, 2.0)", f"paddle.full_like({P}, 2.0)", "torch.full_like(input, fill_value, *, dtype=None, ...)", "paddle.full_like(x, fill_value, dtype=None, name=None)"),
    ("torch.zeros", ["zeros.default"], "torch.zeros(2, 3)", "paddle.zeros([2, 3])", "torch.zeros(*size, *, dtype=None, ...)", "paddle.zeros(shape, dtype=None, name=None)"),
    ("torch.ones", ["ones.default"], "torch.ones(2, 3)", "paddle.ones([2, 3])", "torch.ones(*size, *, dtype=None, ...)", "paddle.ones(shape, dtype=None, name=None)"),
    ("torch.Tensor.new_ones", ["new_ones.default"], f"{T}.new_ones((2, 3))", "paddle.ones([2, 3])", "Tensor.new_ones(size, *, dtype=None, ...)", "paddle.ones(shape, dtype=None, name=None)"),
    ("torch.Tensor.new_zeros", ["new_zeros.default"], f"{T}.new_zeros((2, 3))", "paddle.zeros([2, 3])", "Tensor.new_zeros(size, *, dtype=None, ...)", "paddle.zeros(shape, dtype=None, name=None)"),
    ("torch.zeros_like", ["zeros_like.default"], f"torch.zeros_like({T})", f"paddle.zeros_like({P})", "torch.zeros_like(input, *, dtype=None, ...)", "paddle.zeros_like(x, dtype=None, name=None)"),
    ("torch.ones_like", ["ones_like.default"], f"torch.ones_like({T})", f"paddle.ones_like({P})", "torch.ones_like(input, *, dtype=None, ...)", "paddle.ones_like(x, dtype=None, name=None)"),
    ("torch.scalar_tensor", ["scalar_tensor.default"], "torch.scalar_tensor(2.5)", "paddle.to_tensor(2.5)", "torch.scalar_tensor(s, *, dtype=None, ...)", "paddle.to_tensor(data, dtype=None)"),
    ("torch.arange", ["arange.default", "arange.start", "arange.start_step"], "[torch.arange(5), torch.arange(1, 5), torch.arange(0.0, 2.0, 0.5)]",
     "[paddle.arange(5), paddle.arange(1, 5), paddle.arange(0.0, 2.0, 0.5)]", "torch.arange(start=0, end, step=1, *, dtype=None, ...)", "paddle.arange(start=0, end=None, step=1, dtype=None, name=None)"),
]:
    module(name, "creation", ops, psig.split("(")[0], sig, psig,
           [a("size / *size", "shape", "semantics", "torch takes varargs or a tuple; Paddle a list") if "size" in sig else a("input", "x", "renamed"),
            a("dtype", "dtype", "same", "integer arange is int64 on both sides; float fills default to float32"),
            a("device / layout / requires_grad", "—", "unsupported")],
           f"out = {code}", f"out = {pd}", "x2 folds them to constants of the static shape.")

# ---------------------------------------------------------------- reference only (no x2 mapper)
module("torch.nn.LSTM", "recurrent", [], "paddle.nn.LSTM",
       "torch.nn.LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False, proj_size=0)",
       "paddle.nn.LSTM(input_size, hidden_size, num_layers=1, direction='forward', time_major=False, dropout=0.0, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, proj_size=0)",
       [a("input_size / hidden_size / num_layers / dropout", "same names"),
        a("batch_first", "time_major", "semantics", "torch default is time-major (batch_first=False); Paddle default batch-major (time_major=False)"),
        a("bidirectional", "direction", "semantics", "True is direction='bidirect'"),
        a("weight_ih_l0 [4H, in] / weight_hh_l0 / bias_ih_l0 / bias_hh_l0", "same names and layouts", "same", "gate order i, f, g, o on both: copy as is")],
       """
       lstm = nn.LSTM(3, 5, batch_first=True)
       sd = {k: torch.tensor(rng.randn(*v.shape).astype('float32') * 0.5) for k, v in sorted(lstm.state_dict().items())}
       lstm.load_state_dict(sd)
       seq, (h, c) = lstm(torch.tensor(x))
       out = [seq, h, c]
       """,
       """
       lstm = paddle.nn.LSTM(3, 5)
       shapes = {'weight_ih_l0': (20, 3), 'weight_hh_l0': (20, 5), 'bias_ih_l0': (20,), 'bias_hh_l0': (20,)}
       for k in sorted(shapes):
           getattr(lstm, k).set_value(rng.randn(*shapes[k]).astype('float32') * 0.5)
       seq, (h, c) = lstm(paddle.to_tensor(x))
       out = [seq, h, c]
       """, ("Reference only, not converted by x2 (no LSTM mapper).",
             "Keras LSTM kernels are [in, 4H] (transpose them) with one bias; TF1 LSTMCell orders gates i, c, f, o."),
       shape=(2, 4, 3), atol=1e-4)
module("torch.nn.functional.interpolate", "resize", ["upsample_bilinear2d.vec", "upsample_bilinear2d.default",
                                                     "upsample_nearest2d.vec", "upsample_nearest2d.default"], "paddle.nn.functional.interpolate",
       "torch.nn.functional.interpolate(input, size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None, antialias=False)",
       "paddle.nn.functional.interpolate(x, size=None, scale_factor=None, mode='nearest', align_corners=False, align_mode=0, data_format='NCHW', name=None)",
       [INPUT, a("size / scale_factor / mode", "size / scale_factor / mode"),
        a("align_corners", "align_corners", "same", "None means False in torch; False + align_mode=0 is half-pixel like torch"),
        a("recompute_scale_factor / antialias", "—", "unsupported")],
       f"out = [F.interpolate({T}, size=(5, 7), mode='bilinear'), F.interpolate({T}, size=(5, 7), mode='bilinear', align_corners=True)]",
       f"out = [F.interpolate({P}, size=[5, 7], mode='bilinear'), F.interpolate({P}, size=[5, 7], mode='bilinear', align_corners=True)]",
       "Reference only: x2 has no mapper for aten.upsample_* yet.", shape=(1, 2, 3, 4), atol=1e-4)

# ---------------------------------------------------------------- zoo-hf branch: ops the Hugging Face zoo needed
module("torch.as_strided", "array", ["as_strided.default"], "paddle.as_strided",
       "torch.as_strided(input, size, stride, storage_offset=None)",
       "paddle.as_strided(x, shape, stride, offset=0, name=None)",
       [INPUT, a("size", "shape", "renamed"), a("stride", "stride", "same", "in elements on both"),
        a("storage_offset", "offset", "semantics",
          "torch counts elements (None: the input's own offset), Paddle counts bytes: "
          "multiply by the element size (4 for float32)")],
       f"out = torch.as_strided({T}, (2, 3), (6, 2), 1)",
       f"out = paddle.as_strided({P}, [2, 3], [6, 2], 4)",
       ("x2 reads the input's memory in the layout torch.export recorded (dense strides in any "
        "dim order) and maps the windows that nest (each stride a multiple of the next, no "
        "overlap) to reshape, slice, transpose and expand; Swin's pooler gets one from "
        "decomposed adaptive_avg_pool1d. Overlapping windows (unfold-like) are refused.",),
       shape=(4, 6))
module("torch.linalg.vector_norm", "math", ["linalg_vector_norm.default"], "paddle.linalg.vector_norm",
       "torch.linalg.vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None)",
       "paddle.linalg.vector_norm(x, p=2.0, axis=None, keepdim=False, name=None)",
       [a("x", "x"), a("ord", "p", "renamed"), a("dim", "axis", "renamed"),
        a("keepdim", "keepdim"), a("dtype", "—", "unsupported", "cast the input first"), OUT],
       f"out = [torch.linalg.vector_norm({T}, dim=-1), torch.linalg.vector_norm({T}, float('inf'), dim=(0, 2)), "
       f"torch.linalg.vector_norm({T}, 3, dim=1, keepdim=True)]",
       f"out = [paddle.linalg.vector_norm({P}, axis=-1), paddle.linalg.vector_norm({P}, float('inf'), axis=[0, 2]), "
       f"paddle.linalg.vector_norm({P}, 3, axis=1, keepdim=True)]",
       ("torch.norm, Tensor.norm and F.normalize reach x2 as this op. x2 spells it with "
        "reductions: sqrt(sum(x*x)) for 2, sum/max/min of abs for 1/inf/-inf, a count of "
        "non-zeros for 0, pow(sum(pow(abs(x), p)), 1/p) otherwise. The weight norm of "
        "wav2vec2's positional conv reads only parameters, so it is folded at conversion.",),
       atol=1e-4)

# Call forms for the pages above whose example was written by hand (x2.api_diff.ApiTable.add_forms).
_INPLACE = "inplace>-=False?"
TABLE.add_forms({
    "torch.log": "input>x=abs(t) + 0.1", "torch.sqrt": "input>x=abs(t)", "torch.rsqrt": "input>x=abs(t) + 0.1",
    "torch.logical_not": "input>x=t > 0",
    "torch.sin": "input>x=t * 3", "torch.cos": "input>x=t * 3", "torch.floor": "input>x=t * 3", "torch.ceil": "input>x=t * 3",
    "torch.clamp": "input>x=t; min=-0.5; max=0.5?",
    "torch.sum": ("input>x=t; dim>axis=1; keepdim=True?", {"pd_pos": 2}),
    "torch.mean": "input>x=t; dim>axis=(1, 2); keepdim=True?",
    "torch.amax": "input>x=t; dim>axis=-1?; keepdim=True?", "torch.amin": "input>x=t; dim>axis=-1?; keepdim=True?",
    "torch.any": "input>x=t > 1; dim>axis=1?; keepdim=True?",
    "torch.std": ("input>x=t; dim>axis=-1?; *keepdim=True?", {"pd_pos": 2}),
    "torch.reshape": "input>x=t; shape=(4, -1)",
    "torch.flatten": "input>x=t; start_dim>start_axis=1?; end_dim>stop_axis=-1?",
    "torch.permute": "input>x=t; dims>perm=(2, 0, 1)",
    "torch.nn.functional.silu": f"input>x=t; {_INPLACE}",
    "torch.nn.functional.gelu": "input>x=t; *approximate='tanh' | True?",
    "torch.nn.functional.leaky_relu": f"input>x=t; negative_slope=0.1?; {_INPLACE}",
    "torch.nn.functional.softmax": "input>x=t; dim>axis=1",
    "torch.nn.functional.log_softmax": "input>x=t; dim>axis=1",
    **{f"torch.nn.{cls}": (_INPLACE, {"then": "(t * 4)", "src_fn": f"nn.{cls}"})
       for cls in ("ReLU", "SiLU", "Hardswish", "ReLU6")},
    "torch.nn.GELU": ("approximate='tanh' | True?", {"then": "(t)", "src_fn": "nn.GELU"}),
    "torch.nn.LeakyReLU": (f"negative_slope=0.1?; {_INPLACE}", {"then": "(t)", "src_fn": "nn.LeakyReLU"}),
    "torch.nn.Hardtanh": (f"min_val>min=-0.5?; max_val>max=0.5?; {_INPLACE}", {"then": "(t)", "src_fn": "nn.Hardtanh"}),
    "torch.nn.Softmax": ("dim>axis=1", {"then": "(t)", "src_fn": "nn.Softmax"}),
    "torch.nn.LogSoftmax": ("dim>axis=1", {"then": "(t)", "src_fn": "nn.LogSoftmax"}),
    "torch.nn.Flatten": ("start_dim>start_axis=1?; end_dim>stop_axis=-1?", {"then": "(t)", "src_fn": "nn.Flatten"}),
})
del _INPLACE
