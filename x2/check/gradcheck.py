"""`x2 check --grad`: gradient parity between a source model and its conversion.

One forward and backward pass of the scalar loss

    loss = sum_i sum(output_i * W_i)      (W_i seeded random, one per output)

runs in the source (TF: GradientTape over the signature's trainable variables;
torch: autograd over named_parameters) and in the converted model (torch or
paddle autograd over its parameters), each in its own worker process (never
TensorFlow and paddle in one). Every trainable parameter of the converted
model names the source weight it holds (report.json
target_details.parameters: the weight, and the transpose applied to it); its
gradient is laid back out like that weight and compared with the source's:

    max|g_converted - g_source| <= atol + rtol * max|g_source|

Both models run in inference mode (BatchNorm on its running statistics,
dropout off), so the same function is differentiated on both sides.
A source weight that no converted parameter holds fails the check: an
optimizer would never update it.
"""
from __future__ import annotations

import shutil

import numpy as np

from ..contracts import ReadOptions, ReadRequest, Report
from ..errors import X2Error
from .gradcheck_runtime import load_grads
from ..process.isolation import run_step
from .parity import make_inputs
from ..process.scratch import make_dir

SOURCE_GRADS = {"tf": "tf.grad_source", "torch": "torch.grad_source"}
TARGET_GRADS = {"torch": "torch.grad_target", "paddle": "paddle.grad_target"}


# -- orchestration (no framework imported) ----------------------------------

def as_source_layout(grad: np.ndarray, origin: dict, shape: tuple) -> np.ndarray:
    """A converted parameter's gradient laid out like the source weight: the
    transpose undone, then the source's shape (x2/ir/provenance.py Origin)."""
    if origin.get("perm") is not None:
        grad = np.transpose(grad, np.argsort(origin["perm"]))
    if grad.size != int(np.prod(shape)):
        raise X2Error(f"internal: a gradient of {list(grad.shape)} cannot hold source weight "
                      f"'{origin.get('param')}' of {list(shape)}")
    return grad.reshape(shape)


def check_grad(model: str, converted: str, *, source: str, target: str,
               signature: str | None = None, seed: int = 0, batch: int = 2,
               rtol: float = 1e-4, atol: float = 1e-6) -> dict:
    """Compare the gradient of every source weight with that of the converted
    parameter holding it; returns a JSON-able report ("passed", one row per
    weight, the worst)."""
    if source not in SOURCE_GRADS:
        raise X2Error(f"--grad --from {source}: gradients are read from tf and torch sources")
    if target not in TARGET_GRADS:
        raise X2Error(f"--grad --to {target}: gradients are compared for paddle and torch "
                      f"outputs (an ONNX model has no autograd)")
    report = Report.load(converted)
    held = report.target_details.get("parameters")
    if held is None:
        raise X2Error(f"{converted} was written by an x2 that did not record which source "
                      f"weight each parameter holds; convert it again")
    io = report.layout.get("io_transposes", {})
    if io:
        raise X2Error("--grad: the model was converted with --io-layout nchw; compare "
                      "gradients on a conversion with the source's interface")
    spec = {"inputs": report.inputs}
    names = [i["name"] for i in report.inputs]
    arrays = make_inputs(spec, seed, batch)
    request = ReadRequest(model, signature=signature or report.source.get("signature"),
                          options=ReadOptions.from_json(report.source.get("options") or {}))
    work = make_dir("x2-grad-")
    try:
        np.savez(work / "inputs.npz", *arrays)
        src = run_step(SOURCE_GRADS[source], {
            "request": request.to_json(), "names": names, "seed": seed,
            "inputs": str(work / "inputs.npz"), "outputs": str(work / "source.npz")})
        got = run_step(TARGET_GRADS[target], {
            "converted": str(converted), "seed": seed, "inputs": str(work / "inputs.npz"),
            "outputs": str(work / "target.npz")})
        source_grads = load_grads(work / "source.npz", src["names"])
        target_grads_ = load_grads(work / "target.npz", got["names"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows, seen = [], set()
    aliases = src.get("aliases", {})
    for key, grad in target_grads_.items():
        origin = held.get(key)
        param = origin and aliases.get(origin.get("param"), origin.get("param"))
        if param not in source_grads:
            rows.append({"parameter": key, "source": None, "max_abs": None, "max_rel": None,
                         "passed": False, "why": "holds no source weight"})
            continue
        ref = source_grads[param]
        seen.add(param)
        mine = as_source_layout(grad, origin, ref.shape)
        diff = float(np.max(np.abs(mine.astype(np.float64) - ref))) if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        rel = diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))
        rows.append({"parameter": key, "source": param, "max_abs": diff,
                     "max_rel": rel, "scale": scale, "passed": diff <= atol + rtol * scale})
    for name in source_grads:
        if name not in seen:
            rows.append({"parameter": None, "source": name, "max_abs": None, "max_rel": None,
                         "passed": False, "why": "no trainable parameter of the converted "
                                                 "model holds it (an optimizer would not "
                                                 "update it)"})
    compared = [r for r in rows if r["max_rel"] is not None]
    # Worst against the tolerance, not by relative error alone: a gradient that
    # is zero in exact arithmetic (a key bias under softmax) has a relative
    # error of rounding noise over rounding noise.
    worst = max(compared, key=lambda r: r["max_abs"] / (atol + rtol * r["scale"]), default=None)
    return {"passed": bool(rows) and all(r["passed"] for r in rows), "rtol": rtol,
            "atol": atol, "seed": seed, "batch": batch, "loss": {"source": src["loss"],
                                                                "converted": got["loss"]},
            "source_weights": len(source_grads), "converted_parameters": len(target_grads_),
            "worst": worst, "parameters": rows}
