"""More API-difference entries (torch, ops): metadata only, filled into mappers/torch/api_docs.py's TABLE."""
from __future__ import annotations

from mappers.torch.api_docs import TABLE

call = TABLE.call
api = TABLE.api
from mappers.torch.api_docs import OUT, aten
from x2.api_diff import a as A

# ---------------------------------------------------------------- torch.* unary math (one input; `out=` has no Paddle counterpart)
_POS = "t.abs() + 1.5"     # inputs > 1 (acosh), in (0, 1) (atanh via tanh), positive (logs)
for name, pd, arg, ops, cat, note in [
        ("tan", "tan", "t", ("tan.default",), "", ""), ("asin", "asin", "t.tanh()", ("asin.default",), "", ""),
        ("acos", "acos", "t.tanh()", ("acos.default",), "", ""), ("atan", "atan", "t", ("atan.default",), "", ""),
        ("sinh", "sinh", "t", ("sinh.default",), "", ""), ("cosh", "cosh", "t", ("cosh.default",), "", ""),
        ("asinh", "asinh", "t", ("asinh.default",), "", ""), ("acosh", "acosh", _POS, ("acosh.default",), "", ""),
        ("atanh", "atanh", "t.tanh() * 0.9", ("atanh.default",), "", ""), ("expm1", "expm1", "t", (), "", ""),
        ("log1p", "log1p", "t.abs()", ("log1p.default",), "", ""), ("log2", "log2", _POS, (), "", ""),
        ("log10", "log10", _POS, (), "", ""), ("square", "square", "t", (), "", ""),
        ("frac", "frac", "t * 3", (), "", ""),
        ("erfinv", "erfinv", "t.tanh() * 0.9", (), "", ""), ("lgamma", "lgamma", _POS, (), "", ""),
        ("digamma", "digamma", _POS, (), "", ""), ("deg2rad", "deg2rad", "t * 90", (), "", ""),
        ("rad2deg", "rad2deg", "t", (), "", ""), ("isfinite", "isfinite", "t / t.abs().floor()", (), "",
                                                   "dividing by floor(|t|) puts +-inf where |t| < 1: boolean result on both sides"),
        ("sgn", "sgn", "t", (), "", "real input: the same as sign"),
        ("round", "round", "t * 3", (), "behaviour",
         "Half-way cases differ: torch rounds half to even (round(2.5) = 2), Paddle half away from zero "
         "(paddle.round(2.5) = 3); the example avoids exact halves."),
        ("negative", "neg", "t", ("neg.default",), "", "alias of torch.neg"),
        ("absolute", "abs", "t", ("abs.default",), "", "alias of torch.abs")]:
    call(f"torch.{name}", "math", aten(*ops), f"paddle.{pd}", f"input>x={arg}", rows=[OUT],
         notes=(note,) if note else (), category=cat, atol=1e-4)
for name in ("trunc", "fix"):
    call(f"torch.{name}", "math", (), "paddle.trunc", "input=t * 3", rows=[OUT],
         notes=("torch.fix is an alias of torch.trunc",) if name == "fix" else ())
del _POS

# ---------------------------------------------------------------- torch.* binary (input, other) -> paddle (x, y)
for name, pd, spec, ops, note in [
        ("atan2", "atan2", "input>x=t; other>y=u", (), ""),
        ("fmax", "fmax", "input>x=t; other>y=u", (), "NaN-ignoring maximum on both sides"),
        ("fmin", "fmin", "input>x=t; other>y=u", (), "NaN-ignoring minimum on both sides"),
        ("true_divide", "divide", "input>x=t; other>y=u.abs() + 0.5", ("div.Tensor",), "alias of torch.div"),
        ("multiply", "multiply", "input>x=t; other>y=u", ("mul.Tensor",), "alias of torch.mul"),
        ("logical_and", "logical_and", "input>x=t > 0; other>y=u > 0", (), ""),
        ("logical_or", "logical_or", "input>x=t > 0; other>y=u > 0", (), ""),
        ("logical_xor", "logical_xor", "input>x=t > 0; other>y=u > 0", (), ""),
        ("lerp", "lerp", "input>x=t; end>y=u; weight=0.3", (), "weight: a number or a tensor on both sides"),
        ("isclose", "isclose", "input>x=t; other>y=t + u * 1e-6; rtol=1e-05?; atol=1e-08?; equal_nan=False?", (), ""),
        ("dist", "dist", "input>x=t; other>y=u; p=3?", (), ""),
        ("cdist", "cdist", "x1>x=t; x2>y=u; p=1.0?", (), "batched pairwise distances; compute_mode has no Paddle counterpart"),
        ("tensordot", "tensordot", "a>x=t; b>y=u.permute(1, 2, 0) | u.transpose([1, 2, 0]); dims>axes=2?", (), ""),
        ("masked_fill", "masked_fill", "input>x=t; mask=t > 0.5; value=-1.0", (), ""),
        ("floor_divide", "floor_divide", "input>x=t * 4; other>y=u.abs() + 0.5", (), "floor (not truncating) division on both sides")]:
    call(f"torch.{name}", "math", aten(*ops), f"paddle.{pd}", spec, rows=[OUT], notes=(note,) if note else (), atol=1e-4)
api("torch.einsum", "math", (), "paddle.einsum", "torch.einsum(equation, *operands)",
    "paddle.einsum(equation, *operands)", [], "out = [torch.einsum('bij,bkj->bik', t, u), torch.einsum('bij->bj', t)]",
    "out = [paddle.einsum('bij,bkj->bik', t, u), paddle.einsum('bij->bj', t)]",
    "Operands are variadic and positional on both sides (so there is no keyword call form).",
    category="same", atol=1e-4)
call("torch.outer", "math", (), "paddle.outer", "input>x=t.flatten(); vec2>y=u[0, 0]", rows=[OUT])
call("torch.dot", "math", (), "paddle.dot", "input>x=t.flatten(); tensor>y=u.flatten()", rows=[OUT], atol=1e-4)
call("torch.kron", "math", (), "paddle.kron", "input>x=t[0]; other>y=u[1, :2, :2]", rows=[OUT], atol=1e-4)
call("torch.cross", "math", (), "paddle.cross", "input>x=t[:, :, :3]; other>y=u[:, :, :3]; dim>axis=-1?!1", rows=[OUT],
     notes="torch.cross without dim uses the first axis of size 3 (deprecated, with a warning; axis 1 here) while "
           "Paddle's default differs for such inputs: always pass the axis.", atol=1e-5, category="defaults")
call("torch.addcmul", "math", (), "x + value * t1 * t2", "input=t; tensor1=u; tensor2=t; *value=0.5?",
     pd_pre="addcmul = lambda input, tensor1, tensor2, value=1.0: input + value * tensor1 * tensor2",
     pd_fn="addcmul", category="composite", notes="Paddle has no addcmul: write input + value * tensor1 * tensor2.")

# ---------------------------------------------------------------- reductions: dim -> axis
for name, pd, spec, ops, cat, note in [
        ("prod", "prod", "input>x=t; dim>axis=1; keepdim=True?", (), "", ""),
        ("argmin", "argmin", "input>x=t; dim>axis=1; keepdim=True?", (), "", "int64 indices on both sides"),
        ("logsumexp", "logsumexp", "input>x=t; dim>axis=1; keepdim=True?", (), "", ""),
        ("nansum", "nansum", "input>x=t; dim>axis=2; keepdim=True?", (), "",
         "Paddle's third parameter is dtype: pass keepdim by keyword"),
        ("all", "all", "input>x=t > -1; dim>axis=1; keepdim=True?", (), "", ""),
        ("count_nonzero", "count_nonzero", "input>x=t.floor(); dim>axis=1", (), "", "int64 counts on both sides"),
        ("cumprod", "cumprod", "input>x=t; dim=1", (), "", ""),
        ("diff", "diff", "input>x=t; n=1?; dim>axis=1?!-1", (), "", "both default to the last axis"),
        ("norm", "norm", "input>x=t; p=2?; dim>axis=1?; keepdim=True?", (), "",
         "torch.norm is deprecated for torch.linalg.norm; without dim both compute the norm of all elements"),
        ("argsort", "argsort", "input>x=t; dim>axis=1?; descending=True?", (), "", "int64 indices"),
        ("topk", "topk", "input>x=t; k=2; dim>axis=1?; largest=False?; sorted=True?", ("topk.default",), "",
         "(values, indices) on both sides"),
        ("kthvalue", "kthvalue", "input>x=t; k=2; dim>axis=1?; keepdim=True?", (), "", "(values, indices) on both sides"),
        ("cummax", "cummax", "input>x=t; dim>axis=1", (), "", "(values, indices) on both sides"),
        ("cummin", "cummin", "input>x=t; dim>axis=1", (), "", "(values, indices) on both sides")]:
    call(f"torch.{name}", "reduction", aten(*ops), f"paddle.{pd}", spec, rows=[OUT], notes=(note,) if note else (),
         category=cat, atol=1e-4, pd_pos=2 if name == "nansum" else None)
_MAX = "def {0}(x, axis, keepdim=False):\n    return paddle.{0}(x, axis, keepdim), paddle.arg{0}(x, axis, keepdim)\n"
for name in ("max", "min"):
    call(f"torch.{name}", "reduction", (), f"paddle.{name} + paddle.arg{name}",
         "input>x=t; dim>axis=1; keepdim=True?", pd_pre=_MAX.format(name), pd_fn=name, category="return-types",
         notes=(f"With dim, torch.{name} returns (values, indices); paddle.{name} returns the values only: take the "
                f"indices from paddle.arg{name}. Without dim both return the overall {name}."))
call("torch.sort", "reduction", aten("sort.default", "sort.stable"), "paddle.sort + paddle.argsort", "input>x=t; dim>axis=-1?; descending=True?",
     pd_pre="def sort(x, axis=-1, descending=False):\n    return paddle.sort(x, axis, descending), "
            "paddle.argsort(x, axis, descending)\n", pd_fn="sort", category="return-types",
     notes="torch.sort returns (values, indices); paddle.sort returns values only, paddle.argsort the indices.")
del _MAX

# ---------------------------------------------------------------- shape and indexing
for name, pd, spec, ops, cat, note in [
        ("flip", "flip", "input>x=t; dims>axis=[0, 2]", ("flip.default",), "", ""),
        ("roll", "roll", "input>x=t; shifts=1; dims>axis=2?", (), "", "without dims both flatten, roll, restore"),
        ("tril", "tril", "input>x=t; diagonal=1?", (), "", ""),
        ("triu", "triu", "input>x=t; diagonal=-1?", (), "", ""),
        ("chunk", "chunk", "input>x=t; chunks=2; dim>axis=2?!0", (), "", "both split the first axis by default"),
        ("unbind", "unbind", "input=t; dim>axis=1?", ("unbind.int",), "", ""),
        ("repeat_interleave", "repeat_interleave", "input>x=t; repeats=2; dim>axis=1?", (), "",
         "without dim both flatten first"),
        ("tile", "tile", "input>x=t; dims>repeat_times=(1, 2, 1)", (), "", ""),
        ("broadcast_to", "broadcast_to", "input>x=t[:, :1]; size>shape=(2, 3, 4)", (), "", ""),
        ("take_along_dim", "take_along_axis", "input>arr=t; indices=t.argsort(dim=1) | t.argsort(axis=1); dim>axis=1", (), "", ""),
        ("movedim", "moveaxis", "input>x=t; source=0; destination=2", (), "", ""),
        ("unflatten", "unflatten", "input>x=t; dim>axis=2; sizes>shape=(2, 2)", (), "", ""),
        ("diagonal", "diagonal", "input>x=t; offset=0?; dim1>axis1=1?; dim2>axis2=2?", (), "", ""),
        ("diag", "diag", "input>x=t[0, 0]; diagonal>offset=1?", (), "", ""),
        ("trace", "trace", "input>x=t[0]", (), "", "2-D input; Paddle also takes offset/axis1/axis2"),
        ("masked_select", "masked_select", "input>x=t; mask=t > 0", (), "", "1-D result, data-dependent size"),
        ("nonzero", "nonzero", "input>x=t > 0.5", (), "", "int64 (N, ndim) indices on both sides"),
        ("hstack", "hstack", "tensors>x=(t, u)", (), "", ""),
        ("vstack", "vstack", "tensors>x=(t, u)", (), "", ""),
        ("numel", "numel", "input>x=t", (), "return-types", "torch returns a Python int, Paddle a 0-D int64 tensor"),
        ("clip", "clip", "input>x=t; min=-0.5; max=0.5?", ("clamp.default",), "", "alias of torch.clamp")]:
    call(f"torch.{name}", "array", aten(*ops), f"paddle.{pd}", spec, rows=[OUT], notes=(note,) if note else (),
         category=cat)
call("torch.narrow", "array", (), "paddle.slice", "input=t; dim>axis=2; start=1; length=2",
     pd_pre="narrow = lambda input, axis, start, length: paddle.slice(input, [axis], [start], [start + length])\n",
     pd_fn="narrow", category="composite", notes="paddle.slice takes axes/starts/ends lists; end = start + length.")
api("torch.meshgrid", "array", (), "paddle.meshgrid", "torch.meshgrid(*tensors, indexing=None)",
    "paddle.meshgrid(*args, **kwargs)", [A("indexing", "—", "unsupported", "Paddle is always 'ij'")],
    "out = [torch.meshgrid(t[0, 0], t[0, :, 0], indexing='ij'), torch.meshgrid(t[0, 0], t[0, :, 0], indexing='xy')]",
    "g = paddle.meshgrid(t[0, :, 0], t[0, 0])\nout = [paddle.meshgrid(t[0, 0], t[0, :, 0]), [g[1], g[0]]]",
    "Paddle always uses 'ij' indexing (torch's default, with a warning when omitted); for 'xy' swap the two "
    "inputs and the two outputs.")
call("torch.eye", "creation", (), "paddle.eye", "n>num_rows=3; m>num_columns=4?", rows=[OUT],
     notes="float32 (the default dtype) on both sides")
call("torch.linspace", "creation", (), "paddle.linspace", "start=-1.0; end>stop=1.0; steps>num=5", rows=[OUT])
call("torch.scatter", "array", aten("scatter.src", "scatter.value"), "paddle.put_along_axis", "input>arr=t; dim>axis=1; index>indices=t.argsort(dim=1) | t.argsort(axis=1); src>values=u",
     pd_pos=1, category="usage",
     notes="Argument order differs (torch input, dim, index, src; Paddle arr, indices, values, axis); "
           "torch's reduce= is Paddle's reduce= ('add', 'mul', ...).")
call("torch.softmax", "activation", aten("_softmax.default"), "paddle.nn.functional.softmax", "input>x=t; dim>axis=1")

# ---------------------------------------------------------------- torch.Tensor methods (t.<method>) -> paddle.Tensor methods
for name, pd, spec, ops, cat, note in [
        ("add", "add", "other>y=u; *alpha>-=1?", ("add.Tensor",), "", "alpha has no Paddle counterpart: scale y first"),
        ("sub", "subtract", "other>y=u; *alpha>-=1?", ("sub.Tensor",), "", ""),
        ("mul", "multiply", "other>y=u", ("mul.Tensor",), "", ""),
        ("div", "divide", "other>y=abs(u) + 0.5", ("div.Tensor",), "", ""),
        ("pow", "pow", "exponent>y=2.0", ("pow.Tensor_Scalar",), "", ""),
        ("matmul", "matmul", "other>y=u.transpose(1, 2) | u.transpose([0, 2, 1])", ("matmul.default",), "", ""),
        ("sum", "sum", "dim>axis=1?; keepdim=True?", ("sum.dim_IntList",), "", "Paddle's second parameter is dtype"),
        ("mean", "mean", "dim>axis=1?; keepdim=True?", ("mean.dim",), "", ""),
        ("argmax", "argmax", "dim>axis=1?; keepdim=True?", ("argmax.default",), "", ""),
        ("amax", "amax", "dim>axis=1?; keepdim=True?", ("amax.default",), "", ""),
        ("prod", "prod", "dim>axis=1?; keepdim=True?", (), "", ""),
        ("exp", "exp", "", ("exp.default",), "", ""),
        ("abs", "abs", "", ("abs.default",), "", ""),
        ("sqrt", "sqrt", "", (), "", ""), ("sigmoid", "sigmoid", "", ("sigmoid.default",), "", ""),
        ("tanh", "tanh", "", ("tanh.default",), "", ""), ("neg", "neg", "", ("neg.default",), "", ""),
        ("floor", "floor", "", ("floor.default",), "", ""), ("round", "round", "*decimals=0?", (), "", ""),
        ("clamp", "clip", "min=-0.5; max=0.5?", ("clamp.default",), "", ""),
        ("flatten", "flatten", "start_dim>start_axis=1?; end_dim>stop_axis=-1?", ("flatten.using_ints",), "", ""),
        ("unsqueeze", "unsqueeze", "dim>axis=1", ("unsqueeze.default",), "", ""),
        ("squeeze", "squeeze", "dim>axis=0?", ("squeeze.dim",), "", ""),
        ("chunk", "chunk", "chunks=2; dim>axis=2?!0", (), "", ""),
        ("flip", "flip", "dims>axis=[2]", ("flip.default",), "", ""),
        ("roll", "roll", "shifts=1; dims>axis=2?", (), "", ""),
        ("cumsum", "cumsum", "dim>axis=1", ("cumsum.default",), "", ""),
        ("masked_fill", "masked_fill", "mask=t > 0; value=0.0", (), "", ""),
        ("tril", "tril", "diagonal=0?", (), "", ""),
        ("expand_as", "expand_as", "other>y=u", ("expand.default",), "", ""),
        ("type_as", "astype", "other>dtype=torch.zeros(1, dtype=torch.float64) | 'float64'",
         ("_to_copy.default",), "arg-types", "Paddle takes a dtype: t.astype(other.dtype)"),
        ("float", "astype", "*memory_format>-=torch.preserve_format?; -<dtype='float32'", ("_to_copy.default",), "usage", "t.float() is t.astype('float32')"),
        ("long", "astype", "*memory_format>-=torch.preserve_format?; -<dtype='int64'", ("_to_copy.default",), "usage", "t.long() is t.astype('int64')"),
        ("int", "astype", "*memory_format>-=torch.preserve_format?; -<dtype='int32'", ("_to_copy.default",), "usage", "t.int() is t.astype('int32')"),
        ("double", "astype", "*memory_format>-=torch.preserve_format?; -<dtype='float64'", ("_to_copy.default",), "usage", "t.double() is t.astype('float64')"),
        ("bool", "astype", "*memory_format>-=torch.preserve_format?; -<dtype='bool'", ("_to_copy.default",), "usage", "t.bool() is t.astype('bool')"),
        ("eq", "equal", "other>y=t", ("eq.Tensor",), "", ""), ("gt", "greater_than", "other>y=u", ("gt.Tensor",), "", ""),
        ("index_select", "index_select", "dim>axis=2; index=torch.tensor([3, 0]) | paddle.to_tensor([3, 0])",
         ("index_select.default",), "usage", "argument order differs: torch (dim, index), Paddle (index, axis)"),
        ("gather", "take_along_axis", "dim>axis=1; index>indices=t.argsort(dim=1) | t.argsort(axis=1)", ("gather.default",),
         "usage", "argument order differs: torch (dim, index), Paddle (indices, axis)"),
        ("norm", "norm", "p=2?; dim>axis=1?; keepdim=False?", ("linalg_vector_norm.default",), "", "")]:
    pd_pos = 0 if name in ("index_select", "gather") else (1 if name == "sum" else None)
    call(f"torch.Tensor.{name}", "tensor", aten(*ops), f"paddle.Tensor.{pd}", spec, src_fn=f"t.{name}", pd_fn=f"t.{pd}",
         category=cat, notes=(note,) if note else (), atol=1e-4, pd_pos=pd_pos)
api("torch.Tensor.softmax", "tensor", aten("_softmax.default"), "paddle.nn.functional.softmax",
    "torch.Tensor.softmax(dim, dtype=None)", "paddle.nn.functional.softmax(x, axis=-1, dtype=None, name=None)",
    [A("dim", "axis", "renamed")], "out = [t.softmax(1), t.softmax(dim=-1)]", "out = [F.softmax(t, 1), F.softmax(t, axis=-1)]",
    "paddle.Tensor has no softmax method: call the function.", category="api-name")

# ---------------------------------------------------------------- control flow
api("torch.cond", "control", ("cond",), "paddle.static.nn.cond",
    "torch.cond(pred, true_fn, false_fn, operands=())",
    "paddle.static.nn.cond(pred, true_fn=None, false_fn=None, name=None, return_names=None)",
    [A("pred", "pred"), A("true_fn", "true_fn", "semantics", "torch passes the operands, Paddle none"),
     A("false_fn", "false_fn", "semantics", "torch passes the operands, Paddle none"),
     A("operands", "—", "unsupported", "Paddle's branches read Python closures")],
    "t = torch.tensor(x)\nout = torch.cond(t.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, (t,))",
    "t = paddle.to_tensor(x)\nout = paddle.static.nn.cond(t.sum() > 0, lambda: t * 2.0, lambda: t - 1.0)",
    ("x2 writes a Python `if` on the predicate tensor, which `paddle.jit.to_static` turns "
     "into this cond in the inference model.",), category="arg-types")
api("torch._higher_order_ops.while_loop", "control", ("while_loop",), "paddle.static.nn.while_loop",
    "torch._higher_order_ops.while_loop(cond_fn, body_fn, carried_inputs, additional_inputs=())",
    "paddle.static.nn.while_loop(cond, body, loop_vars, is_test=False, name=None)",
    [A("cond_fn", "cond", "renamed"), A("body_fn", "body", "renamed"),
     A("carried_inputs", "loop_vars", "renamed", "torch a tuple, Paddle a list"),
     A("additional_inputs", "—", "unsupported", "Paddle's functions read Python closures")],
    "from torch._higher_order_ops.while_loop import while_loop\n"
    "_, out = while_loop(lambda i, v: v.abs().sum() < 100.0, lambda i, v: (i + 1, v * 2.0),\n"
    "                    (torch.zeros((), dtype=torch.int64), torch.tensor(x)))",
    "i0 = paddle.zeros([], dtype='int64')\n"
    "_, out = paddle.static.nn.while_loop(lambda i, v: v.abs().sum() < 100.0,\n"
    "                                     lambda i, v: [i + 1, v * 2.0], [i0, paddle.to_tensor(x)])",
    ("x2 writes a Python `while` over tensors, which `paddle.jit.to_static` turns into this "
     "while_loop.",), category="arg-types")
api("torch._higher_order_ops.scan", "control", ("scan",), "a Python loop + paddle.stack",
    "torch._higher_order_ops.scan(combine_fn, init, xs, *, dim=0, reverse=False)",
    "(no scan in Paddle: a Python loop over the slices, then paddle.stack)",
    [A("combine_fn", "—", "unsupported", "the loop body"), A("init", "—", "unsupported",
                                                             "the carry before the loop"),
     A("xs", "—", "unsupported", "sliced on dim"), A("dim", "—", "unsupported",
                                                     "the axis sliced and stacked on"),
     A("reverse", "—", "unsupported", "last slice first")],
    "from torch._higher_order_ops.scan import scan\n"
    "last, ys = scan(lambda c, v: (c + v, c * v), torch.zeros(3, 4), torch.tensor(x))\n"
    "out = [last, ys]",
    "t = paddle.to_tensor(x)\nc, ys = paddle.zeros([3, 4]), []\n"
    "for v in t:\n    c, y = c + v, c * v\n    ys.append(y)\nout = [c, paddle.stack(ys)]",
    ("x2 writes a Python `while` over the slices of dim 0 that collects the outputs in a list "
     "and stacks them (torch.export leaves a movedim and flips around scan for `dim` and "
     "`reverse`), which `paddle.jit.to_static` turns into a while_loop over a tensor array.",),
    category="missing")
TABLE.add_forms({
    "torch.cond": "pred=t.sum() > 0; true_fn=lambda v: v * 2.0 | lambda: t * 2.0; "
                  "false_fn=lambda v: v - 1.0 | lambda: t - 1.0; operands>-=(t,)",
    "torch._higher_order_ops.scan": (
        "combine_fn=lambda c, v: (c + v, c * v); init=torch.zeros(3, 4) | paddle.zeros([3, 4]); "
        "xs=t",
        {"post": "list({})", "src_fn": "scan",
         "pre": "from torch._higher_order_ops.scan import scan",
         "pd_fn": "scan", "pd_pre": "def scan(combine_fn, init, xs):\n    c, ys = init, []\n"
                                    "    for v in xs:\n        c, y = combine_fn(c, v)\n"
                                    "        ys.append(y)\n    return c, paddle.stack(ys)\n"}),
    "torch._higher_order_ops.while_loop": (
        "cond_fn>cond=lambda i, v: v.abs().sum() < 100.0; "
        "body_fn>body=lambda i, v: (i + 1, v * 2.0) | lambda i, v: [i + 1, v * 2.0]; "
        "carried_inputs>loop_vars=(torch.zeros((), dtype=torch.int64), t) | "
        "[paddle.zeros([], dtype='int64'), t]",
        {"post": "{}[1]", "src_fn": "while_loop", "pd_pre": "",
         "pre": "from torch._higher_order_ops.while_loop import while_loop"}),
})
TABLE.add_forms({
    "torch.nn.functional.scaled_dot_product_attention": (
        "query=t; key=u; value=t",
        {"pd_fn": "_pd", "pd_pre": "def _pd(query, key, value):\n"
                                   "    scores = paddle.matmul(query, key, transpose_y=True) / 8 ** 0.5\n"
                                   "    return paddle.matmul(F.softmax(scores, axis=-1), value)"}),
})
