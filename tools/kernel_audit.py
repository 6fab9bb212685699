"""Audit of the IR's numpy kernels against PyTorch on edge values: NaN,
+-inf, signed zero, huge and tiny floats, integer overflow, division by
zero, empty tensors, ties, fully masked rows, casts out of range.

    python tools/kernel_audit.py [--md docs/kernel_audit.md] [--check]

The kernels are what x2 folds constants with and what names the first wrong
op of a model convert's verify refused, so a kernel that differs from the
source framework folds wrong constants or points at the wrong place. Each case runs the IR op's kernel
(x2.ir.ops.evaluate) and torch's own op on the same arrays; floats must
agree to 1e-5 relative with NaN where torch has NaN, everything else
exactly; an error on one side only is a difference. The table lists every
case; differences say both results. --check: exit 1 when the table in
--md is not what this run gives (the test suite runs it)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from x2.ir.ops import evaluate  # noqa: E402

NAN, INF = float("nan"), float("inf")
EDGES = np.array([NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5, 0.5, 1e-30, 3e38, -3e38],
                 np.float32)
I32 = np.array([2**31 - 1, -2**31, 7, -7, 0], np.int32)


def cases(torch):
    """(op, attrs, inputs, torch's function of the same inputs, what the case shows)."""
    t = torch
    F = t.nn.functional
    unary = {
        "relu": t.relu, "sigmoid": t.sigmoid, "tanh": t.tanh, "exp": t.exp, "log": t.log,
        "log1p": t.log1p, "sqrt": t.sqrt, "rsqrt": t.rsqrt, "neg": t.neg, "abs": t.abs,
        "erf": t.erf, "floor": t.floor, "ceil": t.ceil, "sign": t.sign,
        "reciprocal": t.reciprocal, "softplus": F.softplus, "selu": F.selu, "silu": F.silu,
        "hard_sigmoid": F.hardsigmoid, "hard_swish": F.hardswish, "sin": t.sin, "cos": t.cos,
        "tan": t.tan, "asin": t.asin, "acos": t.acos, "atan": t.atan, "sinh": t.sinh,
        "cosh": t.cosh, "asinh": t.asinh, "acosh": t.acosh, "atanh": t.atanh,
        "square": t.square, "isnan": t.isnan, "isinf": t.isinf,
    }
    for op, fn in unary.items():
        yield op, {}, [EDGES], fn, "NaN, +-inf, +-0, tiny, huge"
    # torch's float32 gelu at inf and 3e38 depends on the CPU's vector path
    # (NaN and inf with AVX-512, the limits with AVX2); the kernel gives the limits.
    yield "gelu", {}, [EDGES[~np.isin(EDGES, np.array([INF, 3e38], EDGES.dtype))]], F.gelu, \
        "exact form (torch's answer at inf and 3e38 depends on the CPU)"
    yield "gelu", {"approximate": True}, [EDGES], lambda x: F.gelu(x, approximate="tanh"), \
        "tanh form"
    yield "elu", {"alpha": 1.0}, [EDGES], F.elu, "edges"
    yield "leaky_relu", {"alpha": 0.1}, [EDGES], lambda x: F.leaky_relu(x, 0.1), "edges"
    yield "clip", {"min": 0.0, "max": 6.0}, [EDGES], lambda x: t.clamp(x, 0, 6), \
        "NaN through a clamp"
    a, b = EDGES[:, None], EDGES[None, :]
    binary = {"add": t.add, "sub": t.sub, "mul": t.mul, "div": t.div, "pow": t.pow,
              "maximum": t.maximum, "minimum": t.minimum, "mod": t.remainder,
              "floor_div": lambda x, y: t.div(x, y, rounding_mode="floor"),
              "equal": t.eq, "not_equal": t.ne, "less": t.lt, "greater_equal": t.ge}
    for op, fn in binary.items():
        yield op, {}, [a, b], fn, "every pair of edge values (0/0, inf-inf, NaN)"
    ia, ib = I32[:, None], I32[None, :]
    for op, fn in {"add": t.add, "sub": t.sub, "mul": t.mul, "maximum": t.maximum}.items():
        yield op, {}, [ia, ib], fn, "int32 overflow wraps"
    yield "neg", {}, [I32], t.neg, "int32: -(-2**31)"
    yield "abs", {}, [I32], t.abs, "int32: |-2**31|"
    yield "mod", {}, [np.array([7, -7], np.int64), np.array([0, 0], np.int64)], \
        t.remainder, "int64 % 0"
    yield "floor_div", {}, [np.array([7, -7], np.int64), np.array([0, 0], np.int64)], \
        lambda x, y: t.div(x, y, rounding_mode="floor"), "int64 // 0"
    yield "floor_div", {}, [np.array([1.0, -1.0, 7.5], np.float32),
                            np.array([0.1, 0.1, 2.5], np.float32)], \
        lambda x, y: t.div(x, y, rounding_mode="floor"), "1.0 // 0.1 (a quotient that rounds up)"
    rows = np.array([[NAN, 1, 2], [-INF, -INF, -INF], [INF, 1, 2], [3e38, 3e38, -1],
                     [0, 0, 0]], np.float32)
    for op, fn in {"reduce_max": lambda x: t.amax(x, 1), "reduce_min": lambda x: t.amin(x, 1),
                   "reduce_sum": lambda x: t.sum(x, 1), "reduce_mean": lambda x: t.mean(x, 1),
                   "reduce_prod": lambda x: t.prod(x, 1)}.items():
        yield op, {"axes": [1], "keepdims": False}, [rows], fn, "rows with NaN, all -inf, inf, overflow"
    empty = np.zeros((2, 0), np.float32)
    for op, fn in {"reduce_sum": lambda x: t.sum(x, 1), "reduce_mean": lambda x: t.mean(x, 1),
                   "reduce_prod": lambda x: t.prod(x, 1),
                   "reduce_max": lambda x: t.amax(x, 1)}.items():
        yield op, {"axes": [1], "keepdims": False}, [empty], fn, "empty rows"
    yield "softmax", {"axis": 1}, [rows], lambda x: t.softmax(x, 1), \
        "rows with NaN, all -inf, inf, huge"
    yield "log_softmax", {"axis": 1}, [rows], lambda x: t.log_softmax(x, 1), \
        "rows with NaN, all -inf, inf, huge"
    yield "softmax", {"axis": 1}, [empty], lambda x: t.softmax(x, 1), "empty rows"
    ties = np.array([[1, 3, 3, 2], [NAN, 1, NAN, 2], [-INF, -INF, -INF, -INF]], np.float32)
    yield "argmax", {"axis": 1, "keepdims": False}, [ties], lambda x: t.argmax(x, 1), \
        "ties (first wins), NaN"
    yield "topk", {"k": 2, "axis": 1}, [ties], lambda x: tuple(t.topk(x, 2, 1)), \
        "ties, NaN as the largest"
    yield "topk", {"k": 2, "axis": 1, "largest": False}, [ties], \
        lambda x: tuple(t.topk(x, 2, 1, largest=False)), "smallest: ties, NaN last"
    yield "cumsum", {"axis": 1}, [rows], lambda x: t.cumsum(x, 1), "NaN and inf carried"
    casts = np.array([NAN, INF, -INF, 3e9, -3e9, 2.7, -2.7, 255.9, 256.0, -1.0], np.float32)
    for dtype in ("int32", "int64", "uint8", "bool", "float16"):
        yield "cast", {"dtype": dtype}, [casts], \
            lambda x, d=dtype: x.to(getattr(t, d if d != "bool" else "bool")), \
            f"float32 to {dtype}: NaN, inf, out of range, truncation"
    constant = np.full((2, 4), 3.0, np.float32)
    yield "layer_norm", {"axis": 1, "epsilon": 1e-5}, [constant], \
        lambda x: F.layer_norm(x, (4,), eps=1e-5), "a constant row (variance 0)"
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    mask = np.zeros((1, 1, 3, 3), np.float32)
    mask[..., 0, :] = -INF
    yield "attention", {}, [q, q, q, mask], \
        lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m), \
        "a query whose every key is masked"


# What x2 does where a kernel and torch differ, by (op, case).
NOTES = {
    ("sign", "NaN, +-inf, +-0, tiny, huge"):
        "torch's sign(NaN) is 0, numpy's (and TF's) NaN: the torch mapper writes "
        "where(isnan(x), 0, sign(x)), so torch models keep torch's answer on every target",
    ("mod", "int64 % 0"): "torch raises; numpy gives 0 (ONNX leaves it undefined): a model "
                         "that divides integers by 0 fails in its own framework first",
    ("floor_div", "int64 // 0"): "as int64 % 0",
    ("topk", "ties, NaN as the largest"):
        "torch's CPU topk places NaN by its partial sort's order (here after the other "
        "NaN's neighbour), not as the largest; the kernel follows ONNX TopK (NaN the "
        "largest, ties to the lower index), which onnxruntime and paddle.topk give",
    ("topk", "smallest: ties, NaN last"): "as above",
}


def run(torch, op, attrs, inputs, fn):
    """(verdict, detail)."""
    try:
        got = evaluate(op, [np.array(x, copy=True) for x in inputs], attrs)
        got = [np.asarray(g) for g in got]
        kernel_error = None
    except Exception as exc:  # the kernel's own refusal is a result
        got, kernel_error = None, f"{type(exc).__name__}"
    try:
        with np.errstate(all="ignore"):
            want = fn(*[torch.from_numpy(np.array(x, copy=True)) for x in inputs])
        want = [w.numpy() for w in (want if isinstance(want, tuple) else (want,))]
        torch_error = None
    except Exception as exc:
        want, torch_error = None, f"{type(exc).__name__}"
    if kernel_error or torch_error:
        if kernel_error and torch_error:
            return "same", f"both raise ({kernel_error} / {torch_error})"
        return "differs", (f"kernel raises {kernel_error}, torch gives {_show(want)}"
                           if kernel_error else
                           f"kernel gives {_show(got)}, torch raises {torch_error}")
    for g, w in zip(got, want):
        if g.shape != w.shape or not _same(g, w):
            return "differs", f"kernel {_show([g])}, torch {_show([w])}"
    return "same", ""


def _same(g, w) -> bool:
    if w.dtype.kind == "f" or g.dtype.kind == "f":
        g, w = g.astype(np.float64), w.astype(np.float64)
        return bool(np.allclose(g, w, rtol=1e-5, atol=0, equal_nan=True))
    return bool(np.array_equal(g.astype(w.dtype), w)) and g.dtype == w.dtype


def _show(arrays) -> str:
    return "; ".join(np.array2string(np.asarray(a).ravel()[:12], precision=4,
                                     separator=" ", max_line_width=10**6) +
                     f" {np.asarray(a).dtype}" for a in arrays)


def table(results) -> str:
    differ = [r for r in results if r[3] == "differs"]
    lines = ["# IR kernels against PyTorch on edge values", "",
             "Generated by `python tools/kernel_audit.py` (the test suite checks it is "
             "current); do not edit by hand. Each IR op's numpy kernel (what x2 folds "
             "constants with and what names the first wrong op of a model convert's "
             "verify refused) "
             "and torch's op on the same arrays: NaN, +-inf, +-0, tiny and huge floats, "
             "int32 overflow, division by zero, empty rows, ties, a fully masked attention "
             "row, casts out of range. Floats agree to 1e-5 relative (NaN where torch has "
             "NaN), the rest exactly.", "",
             f"**{len(results) - len(differ)} of {len(results)} cases agree.**", ""]
    if differ:
        lines += ["## Differences", "", "| op | attrs | case | results | x2 |",
                  "|---|---|---|---|---|"]
        lines += [f"| {op} | {_attrs(attrs)} | {what} | {detail} | "
                  f"{NOTES.get((op, what), 'not yet looked at')} |"
                  for op, attrs, what, _, detail in differ]
        lines.append("")
    lines += ["## Every case", "", "| op | attrs | case | verdict |", "|---|---|---|---|"]
    lines += [f"| {op} | {_attrs(attrs)} | {what} | {verdict} |"
              for op, attrs, what, verdict, _ in results]
    return "\n".join(lines) + "\n"


def _attrs(attrs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in attrs.items()) or "—"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--md", default=str(ROOT / "docs" / "kernel_audit.md"))
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when --md differs from this run's table")
    args = parser.parse_args(argv)
    import torch
    results = []
    with np.errstate(all="ignore"):
        for op, attrs, inputs, fn, what in cases(torch):
            verdict, detail = run(torch, op, attrs, inputs, fn)
            results.append((op, attrs, what, verdict, detail))
    text = table(results)
    if args.check:
        if Path(args.md).read_text() != text:
            print(f"{args.md} is out of date: run python tools/kernel_audit.py")
            return 1
        return 0
    Path(args.md).write_text(text)
    differ = sum(r[3] == "differs" for r in results)
    print(f"wrote {args.md}: {len(results) - differ} of {len(results)} cases agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
