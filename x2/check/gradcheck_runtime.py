"""Worker side of `x2 check --grad` (x2/check/gradcheck.py): each function runs in
a worker process that imports one framework, and returns the gradients of the
loss sum_i sum(output_i * W_i) by parameter name (saved to an .npz)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..contracts import ReadRequest
from ..errors import X2Error


def loss_weights(shape, seed: int, index: int) -> np.ndarray:
    """The fixed random tensor output `index` is weighted by in the loss."""
    return np.random.default_rng([seed, index]).standard_normal(shape).astype(np.float32)


def _save(path: str, grads: dict[str, np.ndarray], loss: float) -> dict:
    np.savez(path, **{f"g{i}": g for i, g in enumerate(grads.values())})
    return {"names": list(grads), "loss": loss}


def tf_source_grads(args: dict) -> dict:
    """TF: the SavedModel signature under GradientTape, d loss / d variable by
    the variable's name (what the direct reader records as Origin.param)."""
    from ..frontends.tf.savedmodel import load_signature
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
    from ..frontends.torch.capture import load_model
    request = ReadRequest.from_json(args["request"])
    kind, module = load_model(request.model, request.options.trust_pickle)
    if kind != "module":
        raise X2Error(f"x2 check --grad --from torch needs the model as a module "
                      f"(file.py:factory or a pickled nn.Module); {request.model} is a "
                      f"{kind}, whose parameters autograd cannot reach")
    module.eval()
    tensors = [torch.from_numpy(np.array(a, order="C")) for a in _load(args["inputs"])]
    arguments = request.options.forward_args
    result = module(**dict(zip(arguments, tensors))) if arguments else module(*tensors)
    outputs = [t for t in _pytree.tree_leaves(result) if isinstance(t, torch.Tensor)]
    loss = _torch_loss(torch, outputs, args["seed"])
    named = [(k, p) for k, p in module.named_parameters() if p.requires_grad]
    grads = torch.autograd.grad(loss, [p for _, p in named], allow_unused=True)
    saved = _save(args["outputs"], {k: (torch.zeros_like(p) if g is None else g).numpy()
                                    for (k, p), g in zip(named, grads)}, float(loss))
    # A tied weight (GPT-2's lm_head.weight is transformer.wte.weight) has one
    # gradient under its first name; the converter may record any of its names.
    first = {id(p): k for k, p in named}
    saved["aliases"] = {k: first[id(p)] for k, p in module.named_parameters(
        remove_duplicate=False) if id(p) in first and first[id(p)] != k}
    return saved


def _torch_loss(torch, outputs, seed: int):
    return sum((o.float() * torch.from_numpy(loss_weights(tuple(o.shape), seed, i))).sum()
               for i, o in enumerate(outputs) if o.is_floating_point())


def target_grads(framework: str, args: dict) -> dict:
    """The converted model (load_model: weights loaded, eval mode) through autograd."""
    from ..emitters.codegen import import_generated
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


def load_grads(path: Path, names: list[str]) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[f"g{i}"] for i, name in enumerate(names)}
