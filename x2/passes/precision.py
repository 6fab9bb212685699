"""Reduced precision (`x2 convert --precision fp16|bf16`): one IR pass that
gives every float node a compute dtype, turns the weights its half-precision
nodes read into that dtype, and inserts `cast` nodes only where a value
crosses between float32 and half precision. Every emitter then writes the
graph it is given, so ONNX, Paddle and PyTorch share one decision.

A node stays in float32 when its op is on the keep list (numerically
sensitive: softmax, norm statistics, exp/log/pow, long reductions), when a
value it reads or writes would overflow fp16 (seen in its constants, or in a
run of the IR's numpy kernels on example inputs), or when the target cannot
compute it in that dtype (the ONNX emitter says so for bf16, per opset).

Casts are minimised as they are made: a value is cast to a dtype once,
however many nodes read it, and casting the output of a cast back to the
dtype it came from reads the original instead (no pair that cancels).
numpy only; no framework."""
from __future__ import annotations

import numpy as np

from ..errors import X2Error
from ..ir import Graph, TensorInfo
from ..ir.ops import OPS, evaluate
from ..ir.schema import numpy_dtype
from ..ir.serialize import release_pages
from .cleanup import remove_identities

# --precision -> the half dtype inside the model. "mixed" writes fp16 compute
# (Paddle/PyTorch keep fp32 weights and autocast instead; see the emitters).
HALF = {"fp16": "float16", "bf16": "bfloat16", "mixed": "float16"}
PRECISIONS = ("fp32", "fp16", "bf16", "mixed")
# The dtype a source's weights are stored in (its reader says) -> the
# --precision that keeps it, which a conversion takes when none is given.
STORED_PRECISION = {"bfloat16": "bf16", "float16": "fp16"}
# --to NAME -> the half precisions its runtimes compute on a CPU, and what
# lacks the others (x2/check/runtime.py refuses to run them there). A source
# stored in one it lacks converts in float32 by default, so that convert's
# verify can run the written model.
CPU_HALF = {"torch": (("fp16", "bf16"), ""),
            "onnx": (("fp16",), "onnxruntime's CPU provider has no bfloat16 kernels"),
            "paddle": ((), "Paddle has no CPU float16 or bfloat16 kernels for matmul, "
                           "add, softmax")}
FP16_MAX = 65504.0
# A value whose magnitude on the example inputs exceeds this stays in float32:
# real inputs may be larger than the random ones, so half the range is kept free.
FP16_SAFE = FP16_MAX / 2
# Kept in float32 unless --keep-fp32 says otherwise: ops whose result loses
# far more than one rounding in half precision (sums of exponentials,
# variances, powers) or overflows easily.
KEEP_FP32 = ("softmax", "log_softmax", "attention", "layer_norm", "batch_norm", "group_norm",
             "exp", "log",
             "pow", "softplus", "reduce_sum", "reduce_mean", "reduce_prod")
REDUCTIONS = ("reduce_sum", "reduce_mean", "reduce_prod")
# A reduction over fewer elements than this is short enough for half precision.
LONG_REDUCTION = 256
# Ops that take any input dtype as it is (they do not compute on the values).
_DTYPE_FREE = ("cast", "shape")


# IR op -> the op names Paddle's auto_cast lists use for it (custom_black_list).
PADDLE_AMP_NAMES = {"reduce_sum": ("reduce_sum", "sum"), "reduce_mean": ("reduce_mean", "mean"),
                    "reduce_prod": ("reduce_prod", "prod"), "pow": ("pow", "elementwise_pow")}
# What torch.autocast computes in float32 by itself (its "autocast to float32"
# list); --precision mixed --to torch keeps exactly these.
TORCH_AUTOCAST_FP32 = ("softmax", "log_softmax", "layer_norm", "group_norm", "exp", "log", "pow",
                       "softplus", "reduce_sum", "reduce_prod")


def choose_precision(given: str | None, stored: str | None, target: str) -> tuple[str, str]:
    """(the precision to convert in, why): --precision where given, else
    the half dtype the source's weights are stored in (no silent upcast of a
    bf16 or fp16 checkpoint) where the target computes it on a CPU, else fp32."""
    kept = STORED_PRECISION.get(stored or "")
    if given is not None:
        if kept is not None and given != kept:
            return given, f"--precision {given}; the checkpoint is stored in {stored}"
        return given, f"--precision {given}"
    if kept is None:
        return "fp32", "the default"
    runs, lacking = CPU_HALF[target]
    if kept not in runs:
        return "fp32", (f"the checkpoint is stored in {stored}, but {lacking}, so verify "
                        f"could not run a {kept} {target} model here: converted in "
                        f"float32; --precision {kept} writes {stored} (unverified on a CPU)")
    return kept, f"the checkpoint is stored in {stored}; --precision fp32 converts in float32"


def paddle_black_list(keep_fp32: list[str] | None) -> list[str]:
    """--keep-fp32 as Paddle auto_cast's custom_black_list."""
    ops = KEEP_FP32 if keep_fp32 is None else keep_fp32
    return sorted({name for op in ops for name in PADDLE_AMP_NAMES.get(op, (op,))})


def parse_keep_fp32(text: str | None) -> list[str] | None:
    """--keep-fp32 OPS: comma-separated IR ops, "default" for the default
    list (extend it: "default,tanh"), "none" for an empty list."""
    if text is None:
        return None
    ops: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if item == "default":
            ops += KEEP_FP32
        elif item and item != "none":
            if item not in OPS:
                raise X2Error(f"--keep-fp32 {item}: not an IR op (docs/IR.md lists them), "
                              f"e.g. {', '.join(KEEP_FP32[:4])}")
            ops.append(item)
    return sorted(set(ops))


def observe_ranges(graph: Graph, int_ranges: dict[str, list[int]], seed: int = 0
                   ) -> tuple[dict[str, float], str | None]:
    """max |finite value| of every float value when the IR's numpy kernels
    run on seeded example inputs; (ranges, why not) when a kernel is missing.
    A value is freed after its last reader, so memory stays near one layer."""
    rng = np.random.default_rng(seed)
    values: dict[str, np.ndarray] = {}
    for name in graph.inputs:
        info = graph.info[name]
        shape = [2 if d is None else d for d in (info.shape or [2])]
        dtype = np.dtype(info.dtype)
        if dtype.kind == "f":
            values[name] = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            low, high = int_ranges.get(name, (0, 10))
            values[name] = rng.integers(low, high, size=shape).astype(dtype)
        else:
            values[name] = rng.integers(0, 2, size=shape).astype(dtype)
    last_use = {}
    for i, node in enumerate(graph.nodes):
        for v in node.inputs:
            last_use[v] = i
    ranges = {name: _max_finite(a) for name, a in values.items()}
    for i, node in enumerate(graph.nodes):
        args = [values.get(v, graph.constants.get(v)) if v else None for v in node.inputs]
        try:
            result = evaluate(node.op, args, node.attrs)
        except Exception as exc:  # an op the numpy kernels cannot run on these inputs
            return ranges, f"{node.op} node '{node.name}': {type(exc).__name__}"
        if result is None:
            return ranges, f"IR op {node.op} has no numpy kernel"
        for out, array in zip(node.outputs, result):
            values[out] = array
            ranges[out] = _max_finite(array)
        for v in node.inputs:
            if last_use.get(v) == i and v not in graph.outputs:
                values.pop(v, None)
    return ranges, None


def _max_finite(array) -> float:
    array = np.asarray(array)
    if array.dtype.kind != "f" or array.size == 0:
        return 0.0
    finite = np.abs(array[np.isfinite(array)])
    return float(finite.max()) if finite.size else 0.0


class _Lowering:
    def __init__(self, graph: Graph, half: str, keep: set[str], ranges: dict[str, float],
                 cannot: dict[str, str]):
        self.graph, self.half, self.keep, self.ranges = graph, half, keep, ranges
        self.cannot = cannot       # IR op -> why the target computes it in float32
        self.kept: dict[str, dict] = {}   # node name -> {op, why}
        self.casts: dict[tuple[str, str], str] = {}
        self.half_consts: dict[str, str] = {}
        self.inserted = 0

    def why_fp32(self, node) -> str | None:
        g = self.graph
        if node.op in self.cannot:
            return self.cannot[node.op]
        if node.op in self.keep:
            if node.op not in REDUCTIONS:
                return "numerically sensitive (--keep-fp32)"
            shape = g.shape(node.inputs[0])
            axes = node.attrs.get("axes") or list(range(len(shape or ())))
            if shape is None or any(shape[a] is None for a in axes):
                return "reduction over a dynamic axis (--keep-fp32)"
            count = int(np.prod([shape[a] for a in axes]))
            if count >= LONG_REDUCTION:
                return f"reduction over {count} elements (--keep-fp32)"
        if self.half == "float16":
            for v in list(node.inputs) + list(node.outputs):
                big = self.ranges.get(v) if v else None
                if big is None and v in g.constants:
                    big = _max_finite(g.constants[v])
                if big is not None and big > FP16_SAFE:
                        return (f"overflows fp16: |{v}| reaches {big:.4g} (fp16 max "
                                f"{FP16_MAX:g})")
        return None

    def _dtype(self, v: str) -> str | None:
        return self.graph.dtype(v)

    def run(self, io_dtype: str) -> None:
        g = self.graph
        interface = self.half if io_dtype != "fp32" else "float32"
        for name in g.inputs:
            if g.info[name].dtype == "float32":
                g.info[name].dtype = interface
        for node in list(g.nodes):
            floats = [v for v in list(node.inputs) + list(node.outputs)
                      if v and self._dtype(v) in ("float32", "float16", "bfloat16")]
            if not floats:
                continue
            why = self.why_fp32(node)
            compute = "float32" if why else self.half
            if why:
                self.kept[node.name] = {"op": node.op, "why": why,
                                        "source": node.source.get("name", "")}
            if node.op not in _DTYPE_FREE:
                node.inputs = [self.as_dtype(v, compute, node) if v and self._dtype(v) in (
                    "float32", self.half) else v for v in node.inputs]
            if compute != "float32":
                for v in node.outputs:
                    if self._dtype(v) == "float32":
                        g.info[v].dtype = compute
                if node.attrs.get("dtype") == "float32" and node.op in ("cast", "full"):
                    node.attrs["dtype"] = compute
        for i, name in enumerate(list(g.outputs)):
            dtype = self._dtype(name)
            if dtype in ("float32", self.half) and dtype != interface:
                self._retype_output(i, name, interface)
        for node in list(g.nodes):   # a source cast the retyping made a no-op
            if node.op == "cast" and self._dtype(node.inputs[0]) == node.attrs["dtype"]:
                node.op = "identity"
                node.attrs = {}
        remove_identities(g)

    def as_dtype(self, v: str, dtype: str, node) -> str:
        """`v` as `dtype`: itself, a converted constant, or a (shared) cast."""
        g = self.graph
        have = self._dtype(v)
        if have == dtype:
            return v
        if v in g.constants and have == "float32" and dtype == self.half:
            if v not in self.half_consts:
                users = g.users(v)
                array = np.asarray(g.constants[v]).astype(numpy_dtype(self.half))
                release_pages(g.constants[v])   # the float32 weight read from the IR's map
                if all(self.why_fp32(u) is None for u in users) and v not in g.outputs:
                    g.constants[v] = array   # every reader is half: convert in place
                    g.info[v].dtype = self.half
                    self.half_consts[v] = v
                else:
                    self.half_consts[v] = g.add_constant(f"{v}_{self.half}", array)
            return self.half_consts[v]
        key = (v, dtype)
        if key not in self.casts:
            producer = g.producer(v)
            if producer is not None and producer.op == "cast" and \
                    self._dtype(producer.inputs[0]) == dtype:
                self.casts[key] = producer.inputs[0]   # cast back: read the original
            else:
                out = g.fresh_name(f"{v}_to_{dtype}")
                g.add_node("cast", [v], attrs={"dtype": dtype}, outputs=[out],
                           name=g.fresh_name(f"cast_{dtype}"), source=dict(node.source))
                g.info[out] = TensorInfo(dtype, g.info[v].shape)
                g.derive_origin(out, v)
                self.inserted += 1
                self.casts[key] = out
        return self.casts[key]

    def _retype_output(self, index: int, name: str, dtype: str) -> None:
        """Graph output `name` keeps its name but becomes `dtype`: its producer
        writes a new value, and a cast writes the output."""
        g = self.graph
        producer = g.producer(name)
        if producer is None:  # an input or constant returned as it is
            return
        inner = g.fresh_name(name)
        g.info[inner] = TensorInfo(g.info[name].dtype, g.info[name].shape)
        producer.outputs = [inner if o == name else o for o in producer.outputs]
        g.replace_uses(name, inner, graph_outputs=False)
        g.derive_origin(inner, name)
        g.add_node("cast", [inner], attrs={"dtype": dtype}, outputs=[name],
                   name=g.fresh_name(f"cast_{dtype}"), source=dict(producer.source))
        g.info[name].dtype = dtype
        self.inserted += 1


def lower_precision(graph: Graph, precision: str, *, keep_fp32: list[str] | None = None,
                    io_dtype: str | None = None, int_ranges: dict | None = None,
                    cannot: dict[str, str] | None = None) -> tuple[Graph, dict]:
    """Rewrite `graph` to compute in `precision`'s half dtype; return it and
    a record for report.json (what stayed in float32 and why, casts, the
    range run)."""
    half = HALF[precision]
    if io_dtype not in (None, "fp32", "half"):
        raise X2Error(f"--io-dtype {io_dtype}: choose fp32 (float32 inputs/outputs) or half")
    keep = set(KEEP_FP32 if keep_fp32 is None else keep_fp32)
    ranges, why_no_run = observe_ranges(graph, int_ranges or {}) if half == "float16" \
        else ({}, "bf16 has float32's range")
    lowering = _Lowering(graph, half, keep, ranges, cannot or {})
    lowering.run(io_dtype or "half")
    graph.remove_unused()
    record = {"precision": precision, "dtype": half, "io_dtype": io_dtype or "half",
              "keep_fp32": sorted(keep), "kept_fp32": lowering.kept,
              "casts_inserted": lowering.inserted,
              "casts": graph.count("cast"),
              "range_check": ("example inputs run through the IR's numpy kernels"
                              if why_no_run is None else
                              f"constants only ({why_no_run})")}
    return graph, record
