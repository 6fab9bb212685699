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
from pathlib import Path

import numpy as np

from .contracts import ReadOptions, ReadRequest, Report
from .errors import X2Error
from .isolation import run_step
from .parity import make_inputs
from .scratch import make_dir

SOURCE_GRADS = {"tf": "tf.grad_source", "torch": "torch.grad_source"}
TARGET_GRADS = {"torch": "torch.grad_target", "paddle": "paddle.grad_target"}


def loss_weights(shape, seed: int, index: int) -> np.ndarray:
    """The fixed random tensor output `index` is weighted by in the loss."""
    return np.random.default_rng([seed, index]).standard_normal(shape).astype(np.float32)


def _save(path: str, grads: dict[str, np.ndarray], loss: float) -> dict:
    np.savez(path, **{f"g{i}": g for i, g in enumerate(grads.values())})
    return {"names": list(grads), "loss": loss}


# -- worker side (each imports one framework) ------------------------------

def tf_source_grads(args: dict) -> dict:
    """TF: the SavedModel signature under GradientTape, d loss / d variable by
    the variable's name (what the direct reader records as Origin.param)."""
    from .frontends.tf_savedmodel import load_signature
    request = ReadRequest.from_json(args["request"])
    tf, _loaded, _name, fn = load_signature(request.model, request.signature)
    arrays = _load(args["inputs"])
    variables = list(fn.trainable_variables)
    feeds = {k: tf.constant(v) for k, v in zip(args["names"], arrays)}
    with tf.GradientTape() as tape:
        tape.watch(variables)
        result = fn(**feeds)
        outputs = [result[k] for k in sorted(result)] if isinstance(result, dict) else \
            (list(result) if isinstance(result, (list, tuple)) else [result])
        loss = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32) * loss_weights(
            o.shape, args["seed"], i)) for i, o in enumerate(outputs) if o.dtype.is_floating])
    grads = tape.gradient(loss, variables)
    found = {}
    for var, grad in zip(variables, grads):
        name = var.name.removesuffix(":0")
        found[name] = np.zeros(var.shape, np.float32) if grad is None else \
            np.asarray(tf.convert_to_tensor(grad))
    return _save(args["outputs"], found, float(loss))


def torch_source_grads(args: dict) -> dict:
    """torch: the source module (eval mode) through autograd, by state_dict key."""
    import torch
    from torch.utils import _pytree
    from .frontends.torch_export import load_model
    request = ReadRequest.from_json(args["request"])
    kind, module = load_model(request.model, request.options.trust_pickle)
    if kind != "module":
        raise X2Error(f"x2 check --grad --from torch needs the model as a module "
                      f"(file.py:factory or a pickled nn.Module); {request.model} is a "
                      f"{kind}, whose parameters autograd cannot reach")
    module.eval()
    tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in _load(args["inputs"])]
    arguments = request.options.forward_args
    result = module(**dict(zip(arguments, tensors))) if arguments else module(*tensors)
    outputs = [t for t in _pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]
    loss = _torch_loss(torch, outputs, args["seed"])
    named = [(k, p) for k, p in module.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, [p for _, p in named], allow_unused=True)
    return _save(args["outputs"], {k: (torch.zeros_like(p) if g is None else g).numpy()
                                   for (k, p), g in zip(named, grads)}, float(loss))


def _torch_loss(torch, outputs, seed: int):
    return sum((o.float() * torch.from_numpy(loss_weights(tuple(o.shape), seed, i))).sum()
               for i, o in enumerate(outputs) if o.is_floating_point())


def target_grads(framework: str, args: dict) -> dict:
    """The converted model (load_model: weights loaded, eval mode) through autograd."""
    from .emitters.codegen import import_generated
    module = import_generated(Path(args["converted"]) / "model.py")
    model = module.load_model()
    arrays = _load(args["inputs"])
    if framework == "torch":
        import torch
        result = model(*[torch.from_numpy(a) for a in arrays])
        outputs = list(result) if isinstance(result, (list, tuple)) else [result]
        loss = _torch_loss(torch, outputs, args["seed"])
        loss.backward()
        grads = {k: (p.grad if p.grad is not None else torch.zeros_like(p)).numpy()
                 for k, p in model.named_parameters()}
        return _save(args["outputs"], grads, float(loss))
    import paddle
    result = model(*[paddle.to_tensor(a) for a in arrays])
    outputs = list(result) if isinstance(result, (list, tuple)) else [result]
    loss = paddle.add_n([(o.astype("float32") * paddle.to_tensor(
        loss_weights(tuple(o.shape), args["seed"], i))).sum()
        for i, o in enumerate(outputs) if o.dtype in (paddle.float32, paddle.float64)])
    loss.backward()
    # (BatchNorm2D keeps its running statistics as parameters that take no gradient)
    grads = {k: (np.asarray(p.grad.numpy()) if p.grad is not None
                 else np.zeros(p.shape, np.float32))
             for k, p in model.named_parameters() if not p.stop_gradient}
    return _save(args["outputs"], grads, float(loss))


def _load(path: str) -> list[np.ndarray]:
    with np.load(path) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


def _load_grads(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[f"g{i}"] for i, name in enumerate(names)}


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
        source_grads = _load_grads(work / "source.npz", src["names"])
        target_grads_ = _load_grads(work / "target.npz", got["names"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows, seen = [], set()
    for key, grad in target_grads_.items():
        origin = held.get(key)
        if origin is None or origin.get("param") not in source_grads:
            rows.append({"parameter": key, "source": None, "max_abs": None, "max_rel": None,
                         "passed": False, "why": "holds no source weight"})
            continue
        ref = source_grads[origin["param"]]
        seen.add(origin["param"])
        mine = as_source_layout(grad, origin, ref.shape)
        diff = float(np.max(np.abs(mine.astype(np.float64) - ref))) if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        rel = diff / scale if scale > 0 else (0.0 if diff == 0 else float("inf"))
        rows.append({"parameter": key, "source": origin["param"], "max_abs": diff,
                     "max_rel": rel, "scale": scale, "passed": diff <= atol + rtol * scale})
    for name in source_grads:
        if name not in seen:
            rows.append({"parameter": None, "source": name, "max_abs": None, "max_rel": None,
                         "passed": False, "why": "no trainable parameter of the converted "
                                                 "model holds it (an optimizer would not "
                                                 "update it)"})
    compared = [r for r in rows if r["max_rel"] is not None]
    worst = max(compared, key=lambda r: r["max_rel"], default=None)
    return {"passed": bool(rows) and all(r["passed"] for r in rows), "rtol": rtol,
            "atol": atol, "seed": seed, "batch": batch, "loss": {"source": src["loss"],
                                                                "converted": got["loss"]},
            "source_weights": len(source_grads), "converted_parameters": len(target_grads_),
            "worst": worst, "parameters": rows}
