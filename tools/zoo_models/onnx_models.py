"""ONNX models for the zoo: `python tools/zoo/onnx_models.py NAME OUT.onnx`.

- light_*: the small-weight versions of classic zoo models that ship inside
  the onnx wheel (onnx/backend/test/data/light). Their weights are
  ConstantOfShape fills (every input gives the same output), so they are
  re-drawn at random, seeded (He-scaled convolutions, BatchNorm variances
  positive), and the final Softmax is dropped: parity is measured on logits.
- torch_*: PyTorch models (Hugging Face architectures from tools/zoo/hf.py,
  and torch.nn's TransformerEncoder) exported with torch.onnx.export, both
  the TorchScript-based exporter (`_legacy`) and the dynamo one (`_dynamo`).
  With --dynamic (`make zoo` --dynamic), exported as users export them: the
  batch and sequence dims dynamic (`dynamic_axes` for the legacy exporter,
  `dynamic_shapes` with torch.export.Dim for dynamo).
Imports onnx (light) or torch (exports): a process of its own."""
from __future__ import annotations

import sys
from pathlib import Path

SEED = 0
LIGHT = ("bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
         "shufflenet", "squeezenet", "vgg19", "zfnet512")
EXPORTED = ("hf_resnet", "hf_vit", "hf_bert", "hf_gpt2", "nn_transformer")
NAMES = ([f"light_{n}" for n in LIGHT] +
         [f"torch_{n}_{e}" for n in EXPORTED for e in ("legacy", "dynamo")])


def light_path(name: str) -> Path:
    import onnx
    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"{name}.onnx"


def _random_weight(rng, name: str, shape: list[int]):
    import numpy as np
    lowered = name.lower()
    if len(shape) >= 2:
        fan_in = int(np.prod(shape[1:])) or 1
        return rng.normal(0, np.sqrt(2.0 / fan_in), shape)
    if "var" in lowered:
        return rng.uniform(0.5, 1.5, shape)
    if "scale" in lowered or "gamma" in lowered:
        return rng.uniform(0.5, 1.5, shape)
    return rng.normal(0, 0.1, shape)


def rerandomize(model):
    """Replace every constant weight (ConstantOfShape fills and float
    initializers) by seeded random values; drop a final Softmax."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    rng = np.random.default_rng(SEED)
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    kept_nodes, weights = [], {}
    for node in graph.node:
        if node.op_type == "ConstantOfShape" and node.input and node.input[0] in inits:
            shape = [int(d) for d in numpy_helper.to_array(inits[node.input[0]])]
            weights[node.output[0]] = _random_weight(rng, node.output[0], shape)
        else:
            kept_nodes.append(node)
    for init in graph.initializer:
        array = numpy_helper.to_array(init)
        if array.dtype == np.float32 and init.name not in weights:
            weights[init.name] = _random_weight(rng, init.name, list(array.shape))
    used = {i for n in kept_nodes for i in n.input}
    new_inits = [numpy_helper.from_array(np.asarray(v, np.float32), k)
                 for k, v in weights.items() if k in used]
    new_inits += [i for i in graph.initializer if i.name not in weights and i.name in used]
    if kept_nodes and kept_nodes[-1].op_type == "Softmax" and \
            kept_nodes[-1].output[0] == graph.output[0].name:
        # Softmax keeps the shape: the logits have the probabilities' type.
        out = onnx.ValueInfoProto()
        out.CopyFrom(graph.output[0])
        out.name = kept_nodes.pop().input[0]
        del graph.output[:]
        graph.output.append(out)
    del graph.node[:]
    graph.node.extend(kept_nodes)
    del graph.initializer[:]
    graph.initializer.extend(new_inits)
    # Inputs that are weights (older IR versions list them) are initializers now.
    data_inputs = [i for i in graph.input if i.name not in inits and i.name not in weights]
    del graph.input[:]
    graph.input.extend(data_inputs)
    # IR 4 is the first that lets initializers stay out of the graph inputs.
    model.ir_version = max(model.ir_version, 4)
    return model


def calibrate_batchnorm(model):
    """BatchNormalization statistics from data, as a trained model's are:
    node by node in order, each mean/variance set to those of its input on
    one seeded random batch (with the statistics before it already set).
    Random statistics instead give outputs that do not depend on the input."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    rng = np.random.default_rng(SEED + 1)
    data = graph.input[0]
    shape = [d.dim_value or 1 for d in data.type.tensor_type.shape.dim]
    feed = {data.name: rng.standard_normal(shape).astype(np.float32)}
    for node in [n for n in graph.node if n.op_type == "BatchNormalization"]:
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        del probe.graph.output[:]
        probe.graph.output.append(onnx.helper.make_tensor_value_info(
            node.input[0], onnx.TensorProto.FLOAT, None))
        session = ort.InferenceSession(probe.SerializeToString(),
                                       providers=["CPUExecutionProvider"])
        act = session.run(None, feed)[0].astype(np.float64)
        axes = tuple(i for i in range(act.ndim) if i != 1)
        for index, value in ((3, act.mean(axes)), (4, act.var(axes) + 1e-3)):
            inits[node.input[index]].CopyFrom(numpy_helper.from_array(
                value.astype(np.float32), node.input[index]))
    return model


def build_light(name: str, out: str) -> None:
    import onnx
    model = calibrate_batchnorm(rerandomize(onnx.load(str(light_path(name)))))
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)


def _dynamic_dims(name: str, input_names: list[str]) -> dict[str, dict[int, str]]:
    """The dims each exported input leaves dynamic, named as the zoo's HF entries name them."""
    if name == "nn_transformer":
        return {"src": {0: "batch", 1: "seq"}}
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import hf
    return {arg: hf.DYNAMIC_DIMS.get(arg, {}) for arg in input_names}


def _torch_model(name: str):
    import torch
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import hf
    if name == "nn_transformer":
        torch.manual_seed(SEED)
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
        example = {"src": torch.randn(2, 10, 32, generator=torch.Generator().manual_seed(1))}
        return model, example, ["src"], ["output"]
    hf_name = {"hf_resnet": "resnet", "hf_vit": "vit", "hf_bert": "bert", "hf_gpt2": "gpt2"}[name]
    inner = hf.build(hf_name)
    example = hf.example(hf_name)
    key = "last_hidden_state" if hf_name == "bert" else "logits"

    class Head(torch.nn.Module):
        """Tensors in, the logits (or last hidden state) out: what the
        exporters take."""

        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            return self.inner(**dict(zip(example, args)))[key]

    return Head().eval(), example, list(example), [key]


def build_exported(name: str, exporter: str, out: str, dynamic: bool = False) -> None:
    import torch
    model, example, input_names, output_names = _torch_model(name)
    args = tuple(example.values())
    dims = _dynamic_dims(name, input_names) if dynamic else {}
    # With grad enabled: under no_grad torch.nn.TransformerEncoderLayer takes a
    # fused fast path (aten::_transformer_encoder_layer_fwd) no exporter handles.
    with torch.enable_grad():
        if exporter == "legacy":
            axes = {arg: names for arg, names in dims.items() if names}
            if axes:  # the output keeps the batch (and sequence) of the first input
                axes[output_names[0]] = dict(next(iter(axes.values())))
            torch.onnx.export(model, args, out, dynamo=False, input_names=input_names,
                              output_names=output_names, opset_version=17,
                              dynamic_axes=axes or None)
        else:
            shapes = None
            if dims:
                symbols = {n: torch.export.Dim(n, min=1, max=4096)
                           for names in dims.values() for n in names.values()}
                shapes = tuple({axis: symbols[n] for axis, n in dims[arg].items()} or None
                               for arg in input_names)
                if name != "nn_transformer":
                    shapes = (shapes,)  # the HF wrapper's forward(*args) takes one tuple
            program = torch.onnx.export(model, args, dynamo=True, input_names=input_names,
                                        output_names=output_names, opset_version=18,
                                        dynamic_shapes=shapes)
            program.save(out)


def build(name: str, out: str, dynamic: bool = False) -> None:
    if name.startswith("light_"):
        build_light(name, out)
        return
    base, _, exporter = name.removeprefix("torch_").rpartition("_")
    build_exported(base, exporter, out, dynamic)


if __name__ == "__main__":
    argv = [a for a in sys.argv[1:] if a != "--dynamic"]
    if len(argv) != 2 or argv[0] not in NAMES:
        sys.exit(f"usage: python tools/zoo/onnx_models.py {{{'|'.join(NAMES)}}} OUT.onnx "
                 "[--dynamic]")
    build(argv[0], argv[1], dynamic="--dynamic" in sys.argv[1:])
