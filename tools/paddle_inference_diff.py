"""Differential test of x2's Paddle emissions: model.py (dygraph) against
Paddle Inference with its default config (oneDNN and the PIR passes on).

Each case is a tiny torch module doing one pattern x2 meets in real models
(reshape chains, index_select/gather/scatter, masks, broadcasts of computed
shapes, sort/argsort/top-k + gather, concat/split of computed sizes,
interpolate, pad, a Linear on a 2-D input, attention). It is converted with
x2 (`--to paddle`, no verify) once per shape class:

- static: every dim fixed, one conversion per size (1, 2 and 5);
- dynamic: the dims named (`batch`, `seq`), one conversion run at 1, 2 and 5;

and for the dtypes it takes (float32, int64). A worker process per
conversion (with a timeout: a crash or a hang is that case's failure, with
its message) runs the written model.py and the written inference/ through
Paddle Inference on the same seeded inputs. Where they differ or Paddle
Inference fails, the worker deletes each PIR pass the predictor ran, one at a
time (`config.delete_pass`), and names those whose deletion makes it right.

    python tools/paddle_inference_diff.py [--cases A,B] [--md docs/paddle_inference.md]
        [--json build/paddle_inference.json] [--timeout 120]

Prints one line per result and writes the table (case x shape class x
result, passes at fault).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZES = (1, 2, 5)
# The example size a dynamic dim is captured at: torch.export specializes 0 and 1.
EXAMPLE = 3
RTOL, ATOL = 1e-5, 1e-6


@dataclass
class Case:
    """One pattern: `build(torch, dtype)` returns the module; `inputs` are
    (name, shape, kind): a shape names its dynamic dims ("batch", "seq"),
    kind is "x" (the case's dtype), "ids" (int64 in [0, 8)), "mask" (int64
    0/1, a right-padded row) or "float"."""
    name: str
    pattern: str
    inputs: list
    build: object
    dtypes: tuple = ("float32",)
    note: str = ""
    tags: set = field(default_factory=set)


CASES: dict[str, Case] = {}


def case(pattern: str, inputs: list, dtypes=("float32",), note: str = ""):
    def register(fn):
        CASES[fn.__name__] = Case(fn.__name__, pattern, inputs, fn, tuple(dtypes), note)
        return fn
    return register


def _module(torch, forward, **params):
    """A torch module whose forward is `forward` (its arguments name the
    inputs), with `params` as seeded random parameters of the given shapes."""
    def __init__(self):
        torch.nn.Module.__init__(self)
        torch.manual_seed(0)
        for name, shape in params.items():
            setattr(self, name, torch.nn.Parameter(torch.randn(*shape)))
    pattern = type("Pattern", (torch.nn.Module,), {"__init__": __init__, "forward": forward})
    return pattern().eval()


BOTH = ("float32", "int64")
X_BS8 = [("x", ("batch", "seq", 8), "x")]
X_BS = [("x", ("batch", "seq"), "x")]

# -- reshape chains -----------------------------------------------------------------


@case("reshape chain: merge batch and seq, split the features", X_BS8, BOTH)
def reshape_merge_split(torch, dtype):
    def forward(self, x):
        b, s, _ = x.shape
        y = x.reshape(b * s, 8).reshape(b, s, 2, 4).transpose(1, 2)
        return y.reshape(b, 2, s * 4)
    return _module(torch, forward)


@case("reshape chain: windows into the batch and back (Swin)",
      [("x", ("batch", 4, 4, 8), "x")], BOTH)
def reshape_windows(torch, dtype):
    def forward(self, x):
        b, h, w, c = x.shape
        y = x.view(b, h // 2, 2, w // 2, 2, c).permute(0, 1, 3, 2, 4, 5).reshape(-1, 4, c)
        y = y * 2
        y = y.view(b, h // 2, w // 2, 2, 2, c).permute(0, 1, 3, 2, 4, 5)
        return y.reshape(b, h, w, c)
    return _module(torch, forward)


@case("reshape chain: flatten to one dim, then rows of computed length", X_BS8, BOTH)
def reshape_flatten_rows(torch, dtype):
    def forward(self, x):
        return x.reshape(-1).reshape(x.shape[0], -1) * 2
    return _module(torch, forward)


# -- index / gather / scatter ------------------------------------------------------


@case("index_select rows by a computed argsort", X_BS8, BOTH)
def index_select_argsort(torch, dtype):
    def forward(self, x):
        flat = x.reshape(-1, 8)
        order = torch.argsort(flat[:, 0].float(), stable=True)
        return torch.index_select(flat, 0, order)
    return _module(torch, forward)


@case("gather along the last dim by top-k indices", X_BS8, BOTH)
def topk_gather(torch, dtype):
    def forward(self, x):
        values, index = torch.topk(x.float() + torch.arange(8) * 1e-3, 3, dim=-1)
        return torch.gather(x, -1, index), values
    return _module(torch, forward)


@case("sort values, then unsort with the argsort of the order", X_BS8, BOTH)
def sort_unsort(torch, dtype):
    def forward(self, x):
        flat = x.reshape(-1)
        order = torch.argsort(flat, stable=True)
        ranked = flat[order] * 2
        return ranked[torch.argsort(order)].reshape(x.shape)
    return _module(torch, forward)


@case("scatter computed rows into zeros", X_BS8, BOTH)
def scatter_rows(torch, dtype):
    def forward(self, x):
        index = torch.argsort(x[..., :1].float(), dim=1, stable=True).expand(x.shape)
        return torch.zeros_like(x).scatter(1, index, x)
    return _module(torch, forward)


@case("embedding lookup of token ids", [("ids", ("batch", "seq"), "ids")])
def embedding(torch, dtype):
    def forward(self, ids):
        return torch.nn.functional.embedding(ids, self.table)
    return _module(torch, forward, table=(8, 6))


# -- masks ---------------------------------------------------------------------------


@case("masked_fill from a comparison", X_BS8, BOTH)
def masked_fill(torch, dtype):
    def forward(self, x):
        return x.masked_fill(x > 0, 0) + 1
    return _module(torch, forward)


@case("causal and padding mask from arange and the attention mask",
      [("mask", ("batch", "seq"), "mask")])
def causal_padding_mask(torch, dtype):
    def forward(self, mask):
        s = mask.shape[1]
        causal = torch.arange(s)[None, :] <= torch.arange(s)[:, None]
        allowed = causal[None] & mask[:, None, :].bool()
        return torch.zeros(allowed.shape).masked_fill(~allowed, torch.finfo(torch.float32).min)
    return _module(torch, forward)


@case("positions from the attention mask (cumsum)", [("mask", ("batch", "seq"), "mask")])
def mask_positions(torch, dtype):
    def forward(self, mask):
        return (mask.cumsum(-1) - 1) * mask
    return _module(torch, forward)


# -- broadcasts of computed shapes ------------------------------------------------------


@case("ALiBi: slopes [heads, 1] times positions [batch, 1, seq]",
      [("mask", ("batch", "seq"), "mask")])
def alibi_broadcast(torch, dtype):
    def forward(self, mask):
        b, s = mask.shape
        positions = ((mask.cumsum(-1) - 1) * mask)[:, None, :]
        bias = self.slopes[..., None] * positions.float()
        return bias.reshape(b * 4, 1, s)
    return _module(torch, forward, slopes=(4,))


@case("expand to a computed square", X_BS)
def expand_square(torch, dtype):
    def forward(self, x):
        return x[:, None, :].expand(x.shape[0], x.shape[1], x.shape[1]) * 1.5
    return _module(torch, forward)


# -- concat / split ---------------------------------------------------------------------


@case("class token concatenated before a sequence", X_BS8)
def concat_class_token(torch, dtype):
    def forward(self, x):
        return torch.cat([self.token.expand(x.shape[0], 1, 8), x], dim=1) * 2
    return _module(torch, forward, token=(1, 1, 8))


@case("split a sequence at a computed size", X_BS8, BOTH)
def split_computed(torch, dtype):
    def forward(self, x):
        half = x.shape[1] // 2
        first, second = torch.split(x, [half, x.shape[1] - half], dim=1)
        return first.sum(1), second * 2
    return _module(torch, forward)


@case("sequence pooled in pairs between blocks, class token kept", X_BS8)
def pool_sequence(torch, dtype):
    def forward(self, x):
        rest = torch.nn.functional.avg_pool1d(x[:, 1:].transpose(1, 2), 2, 2).transpose(1, 2)
        return torch.cat([x[:, :1], rest], dim=1)
    return _module(torch, forward)


# -- dense, attention ---------------------------------------------------------------------


@case("Linear on a 2-D [frames, 16] input", [("x", ("seq", 16), "x")])
def linear_2d(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.linear(torch.nn.functional.gelu(
            torch.nn.functional.linear(x, self.w1)), self.w2)
    return _module(torch, forward, w1=(12, 16), w2=(6, 12))


@case("Linear on a transposed 2-D [16, frames] input", [("x", (16, "seq"), "x")])
def linear_2d_transposed(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.linear(x.t(), self.w1) * 2
    return _module(torch, forward, w1=(12, 16))


@case("Linear after a conv1d over frames, batch squeezed away (speech front end)",
      [("x", ("seq", 16), "x")])
def conv1d_then_linear_2d(torch, dtype):
    def forward(self, x):
        y = torch.nn.functional.conv1d(x.t()[None], self.conv, padding=1)[0].t()
        return torch.nn.functional.linear(torch.nn.functional.gelu(y), self.w1)
    return _module(torch, forward, conv=(12, 16, 3), w1=(6, 12))


@case("mixture-of-experts routing: sort expert ids, index_select tokens, unsort",
      [("x", ("seq", 8), "x")])
def moe_sort_index_select(torch, dtype):
    def forward(self, x):
        _, chosen = torch.topk(torch.softmax(x @ self.router, -1), 2, dim=-1)
        experts, order = torch.sort(chosen.reshape(-1), stable=True)
        taken = torch.index_select(x, 0, order // 2)
        y = torch.bmm(taken[:, None], self.up[experts])[:, 0]
        return torch.index_select(y, 0, torch.argsort(order)).view(-1, 2, 8).sum(1)
    return _module(torch, forward, router=(8, 4), up=(4, 8, 8))


@case("attention with a finite-min (finfo.min) padding and causal mask",
      [("x", ("batch", "seq", 8), "x"), ("mask", ("batch", "seq"), "mask")])
def attention_finite_mask(torch, dtype):
    def forward(self, x, mask):
        s = x.shape[1]
        local = torch.arange(s)[None, :] <= torch.arange(s)[:, None]
        allowed = local[None] & mask[:, None, :].bool()
        bias = torch.zeros(allowed.shape).masked_fill(~allowed, torch.finfo(torch.float32).min)
        scores = torch.matmul(x, x.transpose(1, 2)) / 8 ** 0.5 + bias
        return torch.matmul(torch.softmax(scores, -1), x)
    return _module(torch, forward)


# -- interpolate, pad --------------------------------------------------------------------


@case("interpolate: bilinear 2x on a fixed image", [("x", ("batch", 3, 5, 5), "x")])
def interpolate_bilinear(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")
    return _module(torch, forward)


@case("pad: constant on the last two dims", [("x", ("batch", 3, 5, 5), "x")], BOTH)
def pad_constant(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.pad(x, (1, 2, 0, 1)) * 2
    return _module(torch, forward)


@case("pad: constant on a sequence's last axis (framed audio to its FFT length)",
      [("x", ("batch", "seq", 6), "x")], BOTH)
def pad_last_axis(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.pad(x, (0, 3)) * 2
    return _module(torch, forward)


@case("pad: constant on a 2-D [batch, seq] tensor's last axis (a waveform to a multiple)",
      [("x", ("batch", "seq"), "x")], BOTH)
def pad_waveform(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.pad(x, (2, 3)) * 2
    return _module(torch, forward)


@case("pad: constant on a sequence's middle axis (tokens padded at the front)",
      [("x", ("batch", "seq", 4), "x")])
def pad_sequence_axis(torch, dtype):
    def forward(self, x):
        return torch.nn.functional.pad(x, (0, 0, 2, 1)) * 2
    return _module(torch, forward)


@case("gather: a 2-D index past the first axis of a sliced, reshaped tensor (frames)",
      [("x", ("batch", 24), "x")])
def gather_frames(torch, dtype):
    def forward(self, x):
        hops = x[:, :20].reshape(x.shape[0], 5, 4)
        index = torch.arange(3)[:, None] + torch.arange(2)[None, :]
        return hops[:, index] * 2
    return _module(torch, forward)


def __getattr__(name: str):
    """`case__NAME__DTYPE`: the factory x2's torch frontend calls."""
    match = re.fullmatch(r"case__(\w+?)__(float32|int64)", name)
    if not match or match[1] not in CASES:
        raise AttributeError(name)

    def factory():
        import torch
        return CASES[match[1]].build(torch, match[2])
    return factory


# ---------------------------------------------------------------------- conversion


def input_shapes(c: Case, shape_class: str, size: int) -> dict:
    """--input-shape for a case: named dims at EXAMPLE (dynamic) or `size` (static)."""
    def dim(d):
        if isinstance(d, int):
            return d
        return f"{d}={EXAMPLE}" if shape_class == "dynamic" else size
    return {name: [dim(d) for d in shape] for name, shape, _ in c.inputs}


def convert_case(c: Case, dtype: str, shape_class: str, size: int, out: Path) -> None:
    from x2.convert import convert
    spec = f"{Path(__file__).resolve()}:case__{c.name}__{dtype}"
    dtypes = {name: "int64" if kind in ("ids", "mask") or dtype == "int64" else "float32"
              for name, _, kind in c.inputs}
    convert(spec, str(out), source="torch", target="paddle",
            input_shapes=input_shapes(c, shape_class, size),
            options={"input_dtypes": dtypes}, emit_options={"verify": False})


def make_inputs(c: Case, dtype: str, size: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for _, shape, kind in c.inputs:
        dims = [d if isinstance(d, int) else size for d in shape]
        if kind == "mask":
            mask = np.ones(dims, np.int64)
            if dims[-1] > 1:
                mask[-1, dims[-1] // 2 + 1:] = 0  # the last row right-padded
            arrays.append(mask)
        elif kind == "ids" or (kind == "x" and dtype == "int64"):
            arrays.append(rng.integers(-4 if kind == "x" else 0, 8, dims).astype(np.int64))
        else:
            arrays.append(rng.standard_normal(dims).astype(np.float32))
    return arrays


# ---------------------------------------------------------------------- worker side


PASS_LINE = re.compile(r"Running PIR pass \[(\w+)\]")


def _predictor(folder: Path, deleted=()):
    from paddle import inference
    config = inference.Config(str(folder / "model.json"), str(folder / "model.pdiparams"))
    for name in deleted:
        config.delete_pass(name)
    return inference.create_predictor(config)


def _predict(folder: Path, inputs, deleted=()):
    predictor = _predictor(folder, deleted)
    for name, x in zip(predictor.get_input_names(), inputs):
        handle = predictor.get_input_handle(name)
        handle.reshape(list(x.shape))
        handle.copy_from_cpu(np.ascontiguousarray(x))
    predictor.run()
    return [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]


def _dygraph(out: Path, inputs):
    import paddle
    from x2.emitters.codegen import import_generated
    model = import_generated(out / "model.py").load_model()
    with paddle.no_grad():
        result = model(*[paddle.to_tensor(x) for x in inputs])
    return [r.numpy() for r in (result if isinstance(result, (list, tuple)) else [result])]


def differs(expected, got) -> str | None:
    """Why `got` is not `expected` (None when it is, within RTOL/ATOL)."""
    if len(expected) != len(got):
        return f"{len(got)} outputs, model.py gives {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if e.shape != g.shape:
            return f"output {i} shape {list(g.shape)}, model.py {list(e.shape)}"
        e64, g64 = e.astype(np.float64), g.astype(np.float64)
        both_nan = np.isnan(e64) & np.isnan(g64)
        error = np.where(both_nan, 0, np.abs(e64 - g64))
        scale = float(np.max(np.abs(np.nan_to_num(e64)))) if e.size else 0.0
        worst = float(np.nanmax(np.where(np.isnan(error), np.inf, error))) if e.size else 0.0
        if worst > ATOL + RTOL * scale:
            return f"output {i} off by {worst:.3g} (values up to {scale:.3g})"
    return None


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if "Error" in ln or "error" in ln] or lines or [""]
    return f"{type(exc).__name__}: {useful[0][:300]}"


def worker(out: Path, inputs_path: Path, passes: list[str]) -> dict:
    """Run model.py and Paddle Inference on each input set; on a difference
    search the passes. Returns {"result", "why", "passes_at_fault"}."""
    with np.load(inputs_path, allow_pickle=False) as data:
        sets = json.loads(str(data["sets"]))
        inputs = [[data[f"{s}_{i}"] for i in range(n)] for s, n in sets]
    folder = out / "inference"
    problems = {}
    for (label, _), arrays in zip(sets, inputs):
        expected = _dygraph(out, arrays)
        try:
            why = differs(expected, _predict(folder, arrays))
        except Exception as exc:  # Paddle Inference refused it: the case's result
            why = "refused: " + _first_line(exc)
        if why:
            problems[label] = (why, arrays, expected)
    if not problems:
        return {"result": "ok"}
    label, (why, arrays, expected) = next(iter(problems.items()))
    at_fault = []
    for name in passes:
        try:
            if differs(expected, _predict(folder, arrays, deleted=[name])) is None:
                at_fault.append(name)
        except Exception:
            continue
    return {"result": "wrong" if not why.startswith("refused") else "refused",
            "why": "; ".join(f"size {k}: {v[0]}" for k, v in problems.items()),
            "passes_at_fault": at_fault}


# ---------------------------------------------------------------------- driver


def pir_passes(out: Path, timeout: float) -> list[str]:
    """The PIR passes Paddle Inference's default config runs, from its log."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "import paddle_inference_diff as d; d._predictor(Path(sys.argv[2]))")
    proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent),
                           str(out / "inference")], capture_output=True, text=True,
                          timeout=timeout, env={**_env(), "GLOG_minloglevel": "0"})
    return list(dict.fromkeys(PASS_LINE.findall(proc.stderr)))


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "GLOG_minloglevel": "2",
            "FLAGS_print_ir": "0"}


def run_worker(out: Path, inputs_path: Path, passes: list[str], timeout: float) -> dict:
    """The worker in its own process: a crash or a hang is the case's failure."""
    code = ("import json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "import paddle_inference_diff as d; "
            "print('RESULT' + json.dumps(d.worker(Path(sys.argv[2]), Path(sys.argv[3]), "
            "json.loads(sys.argv[4]))))")
    try:
        proc = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(out),
                               str(inputs_path), json.dumps(passes)], capture_output=True,
                              text=True, timeout=timeout, env=_env())
    except subprocess.TimeoutExpired:
        return {"result": "hang", "why": f"no answer within {timeout:g} s", "passes_at_fault": []}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[len("RESULT"):])
    tail = (proc.stderr.strip().splitlines() or ["no message"])[-1][:300]
    return {"result": "crash", "why": f"worker exited {proc.returncode}: {tail}",
            "passes_at_fault": []}


def run_case(c: Case, dtype: str, shape_class: str, work: Path, passes: list[str] | None,
             timeout: float) -> dict:
    """Convert (once, or once per size when static) and compare at SIZES."""
    row = {"case": c.name, "pattern": c.pattern, "dtype": dtype, "shapes": shape_class}
    started = time.perf_counter()
    results = []
    for sizes in ([SIZES] if shape_class == "dynamic" else [(s,) for s in SIZES]):
        out = work / f"{c.name}-{dtype}-{shape_class}-{sizes[0]}"
        shutil.rmtree(out, ignore_errors=True)
        try:
            convert_case(c, dtype, shape_class, sizes[0], out)
        except Exception as exc:
            results.append({"result": "not converted", "why": _first_line(exc),
                            "passes_at_fault": []})
            continue
        inputs_path = work / f"{out.name}.npz"
        arrays = {}
        sets = []
        for size in sizes:
            xs = make_inputs(c, dtype, size, seed=size)
            sets.append((str(size), len(xs)))
            arrays.update({f"{size}_{i}": x for i, x in enumerate(xs)})
        np.savez(inputs_path, sets=json.dumps(sets), **arrays)
        if passes is None:
            passes = pir_passes(out, timeout)
        results.append(run_worker(out, inputs_path, passes, timeout))
    bad = [r for r in results if r["result"] != "ok"]
    row.update(bad[0] if bad else results[0])
    if len(bad) > 1:
        row["why"] = "; ".join(r["why"] for r in bad)
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row, passes


def markdown(rows: list[dict], passes: list[str]) -> str:
    failed = [r for r in rows if r["result"] != "ok"]
    lines = [
        "# Paddle Inference against model.py",
        "",
        "Generated by `python tools/paddle_inference_diff.py --md docs/paddle_inference.md`"
        " (paddle " + _paddle_version() + ", CPU). Each row: one pattern x2 writes, converted "
        "from a tiny torch module, its `model.py` (dygraph) against its `inference/` "
        "through Paddle Inference's default config (oneDNN and the PIR passes on), at "
        f"sizes {', '.join(map(str, SIZES))} of each named dim; *static*: the dims fixed at "
        "conversion (one conversion per size), *dynamic*: named (`batch`, `seq`), one "
        f"conversion. Pass when `max|inference - model.py| <= {ATOL:g} + {RTOL:g} * "
        "max|model.py|`. Where one differs, each PIR pass the predictor runs is deleted "
        "in turn (`config.delete_pass`); *passes at fault* are those whose deletion "
        "alone makes it right.",
        "",
        f"{len(rows)} results, {len(failed)} failing on the default config.",
        "",
        "| pattern | case | dtype | shapes | result | passes at fault |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        result = r["result"] if r["result"] == "ok" else f"**{r['result']}**: {r['why']}"
        lines.append(f"| {r['pattern']} | `{r['case']}` | {r['dtype']} | {r['shapes']} | "
                     f"{result.replace('|', '/')} | "
                     f"{', '.join(f'`{p}`' for p in r.get('passes_at_fault', [])) or ''} |")
    lines += ["", "## Found and fixed in x2's emission", "",
              "| pattern | on the default config | pass at fault | what x2 writes now |",
              "|---|---|---|---|"]
    lines += [f"| {a} | {b} | `{c}` | {d} |" for a, b, c, d in FIXED]
    lines += ["", f"PIR passes of the default CPU config ({len(passes)}): "
              + ", ".join(f"`{p}`" for p in passes), ""]
    return "\n".join(lines)


# What this tool found before x2 wrote around it (x2/emitters/paddle_ops.py):
# (pattern, what Paddle Inference did, the pass whose deletion fixed it, the emission now).
FIXED = [
    ("integer multiply, then unsqueeze (`alibi_broadcast`: ALiBi positions from the mask)",
     "refused: `Broadcast dimension mismatch ... X = [4, 1] and Y = [2, 2]` (the fused "
     "oneDNN multiply's integer kernel drops the unsqueeze)",
     "operator_unsqueeze_onednn_fuse_pass", "`paddle.reshape(x, shape=[0, 1, -1])`"),
    ("transpose, then a reshape that splits dims, on int64 (`reshape_windows`)",
     "refused: `Ctx should have corresponding OpInfo pd_op.fused_transpose` (no int64 "
     "kernel)", "operator_reshape_onednn_fuse_pass",
     "`paddle.reshape(paddle.flatten(x), shape=...)`"),
    ("transpose, reshape, transpose, reshape (Swin windows into the batch and back)",
     "refused: `input tensor's dimension is 4, axis's size is 6`",
     "operator_reshape_onednn_fuse_pass", "`paddle.reshape(paddle.flatten(x), shape=...)`"),
    ("squeeze, then transpose, then concat (Funnel: a sequence pooled between blocks)",
     "refused: `The type tensor<-1x-1x32xf32> of outputs[0][1] must be equal to type "
     "tensor<-1x1x32x-1xf32>`", "squeeze_transpose_onednn_fuse_pass",
     "the squeeze as `paddle.reshape(x, shape=[0, 0, -1])`"),
    ("constant pad at dynamic sizes in F.pad's all-dims form (`pad_last_axis`, "
     "`pad_waveform`, `pad_sequence_axis`: framed audio, a waveform, tokens padded in "
     "front)", "float32: glibc heap corruption (`free(): invalid pointer`), a segfault, or "
     "a hang until the timeout", "onednn_placement_pass",
     "a 3-D last axis in the NCL form; within the last two axes of a 2-D or 3-D tensor, "
     "an image's pad: `F.pad(x[None], [l, r, t, b])[0]`"),
    ("indexing past the first axis by a 2-D index, on a slice then reshaped "
     "(`gather_frames`: tf.signal.frame)", "model.py itself (dygraph) wrong: a wrong "
     "shape or `index out of range`; Paddle 3.3 indexes a strided view wrongly",
     "(none: dygraph)", "`x.contiguous()[:, index]`"),
]


def _paddle_version() -> str:
    proc = subprocess.run([sys.executable, "-c", "import paddle; print(paddle.__version__)"],
                          capture_output=True, text=True, env=_env())
    return proc.stdout.strip() or "?"


def run(names: list[str], timeout: float, work: Path, report=print,
        classes=("static", "dynamic"), dtypes=("float32", "int64")) -> tuple[list, list]:
    """Every case in `names` at each of its dtypes (among `dtypes`) and shape
    class: (rows, the PIR passes of the default config)."""
    from x2.process.isolation import reuse_workers
    rows, passes = [], None
    with reuse_workers():
        for name in names:
            c = CASES[name]
            for dtype in (d for d in c.dtypes if d in dtypes):
                for shape_class in classes:
                    row, passes = run_case(c, dtype, shape_class, work, passes, timeout)
                    report(f"{row['case']:<24} {dtype:<8} {shape_class:<8} {row['result']}"
                           f" {row.get('why', '')} {row.get('passes_at_fault', '')}"
                           f" ({row['seconds']} s)")
                    rows.append(row)
    return rows, passes or []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--md", help="write the markdown table here")
    parser.add_argument("--json", help="write the rows as JSON here")
    parser.add_argument("--timeout", type=float, default=180.0,
                        help="seconds each worker may take (default 180)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--render", metavar="JSON",
                        help="write --md from the rows an earlier --json run saved")
    args = parser.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        Path(args.md).write_text(markdown(saved["rows"], saved["passes"]))
        return 0
    if args.list:
        for c in CASES.values():
            print(f"{c.name:<24} {c.pattern}")
        return 0
    names = args.cases.split(",") if args.cases else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case {unknown[0]}; --list shows them")
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory(prefix="x2-pi-diff-") as tmp:
        rows, passes = run(names, args.timeout, Path(tmp))
    if args.md:
        Path(args.md).write_text(markdown(rows, passes))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"passes": passes, "rows": rows}, indent=1))
    return 1 if any(r["result"] != "ok" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
