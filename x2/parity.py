"""Numerical parity between a source model and its conversion.

Source and converted model run in separate worker processes on the same
seeded random inputs. An output passes when

    max|converted - source| <= atol + rtol * max|source|

i.e. the error is measured relative to the output's scale, which stays
meaningful for logits near zero (an elementwise relative error does not).
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import X2Error
from .isolation import run_step

# --from NAME -> worker task that runs the source model on saved inputs.
SOURCE_RUNS = {"tf": "tf.run", "onnx": "onnx.run", "torch": "torch.run"}
# --to NAME -> (worker task, mode) pairs that run the converted model; each
# mode is one way a user loads it (generated code, exported inference model).
TARGET_RUNS = {"paddle": [("paddle.run", "python"), ("paddle.run", "inference")],
               "onnx": [("onnx.run_converted", "onnxruntime")],
               "torch": [("torch.run_converted", "python")]}


@dataclass
class OutputParity:
    runner: str
    name: str
    max_abs: float
    max_rel: float
    ref_scale: float
    ref_constant: bool
    passed: bool

    def to_json(self) -> dict:
        return dict(self.__dict__)


def make_inputs(spec: dict, seed: int, batch: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for item in spec["inputs"]:
        shape = [batch if d is None else d for d in (item["shape"] or [batch])]
        dtype = np.dtype(item["dtype"])
        if dtype.kind == "f":
            arrays.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind in "iu":
            arrays.append(rng.integers(0, 10, size=shape).astype(dtype))
        else:
            arrays.append(rng.integers(0, 2, size=shape).astype(dtype))
    return arrays


def compare(ref: np.ndarray, got: np.ndarray, rtol: float, atol: float) -> tuple:
    if ref.shape != got.shape:
        raise X2Error(f"output shapes differ: source {ref.shape}, converted {got.shape}")
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    max_abs = float(np.max(np.abs(ref64 - got64))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref64))) if ref.size else 0.0
    max_rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    constant = bool(ref.size > 1 and np.all(ref64 == ref64.reshape(-1)[0]))
    return max_abs, max_rel, scale, constant, max_abs <= atol + rtol * scale


def check(model: str, converted: str, *, source: str = "tf", target: str = "paddle",
          signature: str | None = None, rtol: float = 1e-4, atol: float = 1e-6,
          seed: int = 0, batch: int = 2, inputs: list[np.ndarray] | None = None) -> dict:
    if source not in SOURCE_RUNS:
        raise X2Error(f"--from {source}: parity is not supported for this source yet")
    if target not in TARGET_RUNS:
        raise X2Error(f"--to {target}: parity is not supported for this target yet")
    report_path = Path(converted) / "report.json"
    if not report_path.exists():
        raise X2Error(f"{converted}: not an x2 output directory (report.json is missing)")
    # The converted model's interface (names, shapes after --input-shape) drives the inputs.
    report = json.loads(report_path.read_text())
    spec = {"inputs": report["inputs"], "outputs": [o["name"] for o in report["outputs"]]}
    signature = signature or report["source"].get("signature")
    with tempfile.TemporaryDirectory(prefix="x2-check-") as tmp:
        tmp_path = Path(tmp)
        arrays = inputs if inputs is not None else make_inputs(spec, seed, batch)
        np.savez(tmp_path / "inputs.npz", *arrays)
        # --io-layout nchw: the source sees its own (NHWC) layout of the same data.
        io = report.get("layout", {}).get("io_transposes", {})
        names = [i["name"] for i in spec["inputs"]]
        np.savez(tmp_path / "source_inputs.npz", *[
            np.transpose(a, np.argsort(io[n]["perm"])) if io.get(n, {}).get("role") == "input"
            else a for n, a in zip(names, arrays)])
        run_step(SOURCE_RUNS[source], {"model": model, "signature": signature,
                                       "names": names,
                                       "options": report["source"].get("options") or {},
                            "inputs": str(tmp_path / "source_inputs.npz"),
                            "outputs": str(tmp_path / "ref.npz")})
        with np.load(tmp_path / "ref.npz") as data:
            refs = [data[f"arr_{i}"] for i in range(len(data.files))]
        refs = [np.transpose(r, io[n]["perm"]) if io.get(n, {}).get("role") == "output" else r
                for n, r in zip(spec["outputs"], refs)]
        results: list[OutputParity] = []
        for task, mode in TARGET_RUNS[target]:
            out_file = tmp_path / f"{mode}.npz"
            run_step(task, {"out": converted, "inputs": str(tmp_path / "inputs.npz"),
                            "outputs": str(out_file), "mode": mode})
            with np.load(out_file) as data:
                got = [data[f"arr_{i}"] for i in range(len(data.files))]
            if len(got) != len(refs):
                raise X2Error(f"{target} ({mode}) returned {len(got)} outputs, the source "
                              f"{len(refs)}")
            for name, ref, out in zip(spec["outputs"], refs, got):
                max_abs, max_rel, scale, constant, ok = compare(ref, out, rtol, atol)
                results.append(OutputParity(f"{target}:{mode}", name, max_abs, max_rel, scale,
                                            constant, ok))
    return {"passed": all(r.passed for r in results), "rtol": rtol, "atol": atol, "seed": seed,
            "batch": batch, "input_shapes": [list(a.shape) for a in arrays],
            "outputs": [r.to_json() for r in results]}
