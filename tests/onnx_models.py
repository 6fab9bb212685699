"""ONNX models the tests build for themselves, in their own process:
`python tests/onnx_models.py NAME OUT.onnx`. Some are exported from our own
torch modules with torch.onnx, the rest are written op by op with onnx.helper
to pin opset-specific forms (axes as attributes vs inputs, old Pad/Clip)."""
from __future__ import annotations

import sys

import numpy as np


def _rng():
    return np.random.default_rng(0)


def torch_cnn(out):
    """Conv/BN/ReLU/MaxPool/AvgPool/Flatten/Gemm/Dropout at opset 13, dynamic batch."""
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 8, 3, groups=2, dilation=2, padding=2),
        torch.nn.LeakyReLU(0.1), torch.nn.AvgPool2d(2), torch.nn.Flatten(),
        torch.nn.Dropout(0.3), torch.nn.Linear(8 * 4 * 4, 10), torch.nn.Tanh())
    bn = net[1]
    bn.running_mean.uniform_(-0.2, 0.2)
    bn.running_var.uniform_(0.5, 1.5)
    net.eval()
    torch.onnx.export(net, (torch.randn(2, 3, 16, 16),), out, dynamo=False,
                      input_names=["image"], output_names=["scores"],
                      dynamic_axes={"image": {0: "batch"}}, opset_version=13)


def torch_decoder(out):
    """ConvTranspose2d (stride 2, output_padding), bilinear and nearest upsampling."""
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 6, 3, padding=1), torch.nn.ReLU(),
        torch.nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1),
        torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
        torch.nn.Conv2d(4, 4, 3, padding=1),
        torch.nn.Upsample(scale_factor=2, mode="nearest"),
        torch.nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
        torch.nn.Conv2d(4, 2, 1)).eval()
    torch.onnx.export(net, (torch.randn(1, 3, 6, 6),), out, dynamo=False,
                      input_names=["image"], output_names=["mask"],
                      dynamic_axes={"image": {0: "batch"}}, opset_version=13)


def torch_transformer(out):
    """Embedding + TransformerEncoderLayer (attention, LayerNormalization, GELU
    as Erf) + mean pooling + Linear, at opset 17, dynamic batch."""
    import torch
    torch.manual_seed(0)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(50, 16)
            self.layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1,
                                                          batch_first=True, activation="gelu")
            self.head = torch.nn.Linear(16, 3)

        def forward(self, ids):
            return self.head(self.layer(self.embed(ids)).mean(dim=1))

    torch.onnx.export(Encoder().eval(), (torch.randint(0, 50, (2, 7)),), out, dynamo=False,
                      input_names=["ids"], output_names=["logits"],
                      dynamic_axes={"ids": {0: "batch"}}, opset_version=17)


def _save(nodes, inputs, outputs, initializers, opset, out):
    import onnx
    from onnx import helper, numpy_helper
    graph = helper.make_graph(nodes, "handmade", inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in initializers.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = helper.find_min_ir_version_for(list(model.opset_import))
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)


def _handmade(opset, out):
    """The same network in the form each opset wants: Squeeze/Unsqueeze/ReduceMean
    axes, Pad, Clip, Split and Slice change between opsets 7 and 18."""
    from onnx import TensorProto, helper
    rng = _rng()
    f32 = TensorProto.FLOAT
    inits = {"w": rng.normal(0, 0.4, (6, 3, 3, 3)).astype("float32"),
             "b": rng.normal(0, 0.1, 6).astype("float32"),
             "fc": rng.normal(0, 0.3, (5, 12)).astype("float32"),
             "fc_b": rng.normal(0, 0.1, 5).astype("float32"),
             "gamma": rng.uniform(0.5, 1.5, 12).astype("float32"),
             "beta": rng.normal(0, 0.1, 12).astype("float32"),
             "bias3": rng.normal(0, 0.1, (1, 6, 1, 1)).astype("float32")}
    nodes = []
    if opset >= 11:
        inits["pads"] = np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64)
        nodes.append(helper.make_node("Pad", ["x", "pads"], ["padded"], mode="reflect"))
    else:
        nodes.append(helper.make_node("Pad", ["x"], ["padded"], mode="reflect",
                                      pads=[0, 0, 1, 1, 0, 0, 1, 1]))
    nodes.append(helper.make_node("Conv", ["padded", "w", "b"], ["conv"], kernel_shape=[3, 3],
                                  strides=[2, 2]))
    nodes.append(helper.make_node("LRN", ["conv"], ["lrn"], size=3, alpha=1e-3, beta=0.75,
                                  bias=1.0))
    if opset >= 11:
        inits["lo"], inits["hi"] = np.array(-1.0, np.float32), np.array(2.0, np.float32)
        nodes.append(helper.make_node("Clip", ["lrn", "lo", "hi"], ["clipped"]))
    else:
        nodes.append(helper.make_node("Clip", ["lrn"], ["clipped"], min=-1.0, max=2.0))
    nodes.append(helper.make_node("Add", ["clipped", "bias3"], ["shifted"]))
    # Split channels 6 -> 2 + 4, then put them back in the other order.
    if opset >= 13:
        inits["split"] = np.array([2, 4], np.int64)
        nodes.append(helper.make_node("Split", ["shifted", "split"], ["s1", "s2"], axis=1))
    else:
        nodes.append(helper.make_node("Split", ["shifted"], ["s1", "s2"], axis=1, split=[2, 4]))
    nodes.append(helper.make_node("Concat", ["s2", "s1"], ["swapped"], axis=1))
    if opset >= 18:
        inits["axes23"] = np.array([2, 3], np.int64)
        nodes.append(helper.make_node("ReduceMean", ["swapped", "axes23"], ["pooled"],
                                      keepdims=1))
    else:
        nodes.append(helper.make_node("ReduceMean", ["swapped"], ["pooled"], axes=[2, 3],
                                      keepdims=1))
    if opset >= 13:
        inits["sq_axes"] = np.array([3, 2], np.int64)
        nodes.append(helper.make_node("Squeeze", ["pooled", "sq_axes"], ["vec"]))
    else:
        nodes.append(helper.make_node("Squeeze", ["pooled"], ["vec"], axes=[3, 2]))
    # Slice the 6 channels to 4 (from the end, negative step), then tile to 12.
    if opset >= 10:
        for name, value in (("st", [-1]), ("en", [-5]), ("ax", [1]), ("sp", [-1])):
            inits[name] = np.array(value, np.int64)
        nodes.append(helper.make_node("Slice", ["vec", "st", "en", "ax", "sp"], ["part"]))
    else:
        nodes.append(helper.make_node("Slice", ["vec"], ["part"], starts=[2], ends=[6],
                                      axes=[1]))
    nodes.append(helper.make_node("Concat", ["part", "part", "part"], ["wide"], axis=1))
    nodes.append(helper.make_node("Mul", ["wide", "gamma"], ["scaled"]))
    nodes.append(helper.make_node("Sum", ["scaled", "beta", "wide"], ["summed"]))
    nodes.append(helper.make_node("Gemm", ["summed", "fc", "fc_b"], ["logits"], transB=1,
                                  alpha=0.5, beta=2.0))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=1))
    _save(nodes, [helper.make_tensor_value_info("x", f32, ["n", 3, 9, 9])],
          [helper.make_tensor_value_info("logits", f32, ["n", 5]),
           helper.make_tensor_value_info("probs", f32, ["n", 5])], inits, opset, out)


def handmade_opset11(out):
    _handmade(11, out)


def handmade_opset13(out):
    _handmade(13, out)


def handmade_opset18(out):
    _handmade(18, out)


def handmade_misc(out):
    """Gather, Where, Expand, ConstantOfShape, Shape->Reshape, Unsqueeze,
    Transpose, MatMul, LayerNormalization and a Cast, at opset 17."""
    from onnx import TensorProto, helper
    rng = _rng()
    inits = {"table": rng.normal(0, 1, (10, 8)).astype("float32"),
             "idx": np.array([[1, 3], [-1, 0]], np.int64),
             "w": rng.normal(0, 0.5, (8, 8)).astype("float32"),
             "gamma": rng.uniform(0.5, 1.5, 8).astype("float32"),
             "beta": rng.normal(0, 0.1, 8).astype("float32"),
             "shape_hint": np.array([2, 2, 8], np.int64),
             "target": np.array([0, -1], np.int64),
             "zero": np.array(0.0, np.float32),
             "one_shape": np.array([1, 8], np.int64)}
    h = helper
    nodes = [
        h.make_node("Gather", ["table", "idx"], ["rows"], axis=0),
        h.make_node("Add", ["rows", "x"], ["mixed"]),
        h.make_node("MatMul", ["mixed", "w"], ["proj"]),
        h.make_node("LayerNormalization", ["proj", "gamma", "beta"], ["normed"], axis=-1,
                    epsilon=1e-5),
        h.make_node("Cast", ["normed"], ["normed_copy"], to=TensorProto.FLOAT),
        h.make_node("ConstantOfShape", ["one_shape"], ["ones"],
                    value=h.make_tensor("v", TensorProto.FLOAT, [1], [0.5])),
        h.make_node("Expand", ["ones", "shape_hint"], ["halves"]),
        h.make_node("Mul", ["normed_copy", "halves"], ["half_normed"]),
        h.make_node("Transpose", ["half_normed"], ["t"], perm=[1, 0, 2]),
        h.make_node("Shape", ["t"], ["t_shape"]),
        h.make_node("Reshape", ["t", "target"], ["flat"]),
        h.make_node("Unsqueeze", ["flat", "ax0"], ["flat3"]),
        h.make_node("Where", ["cond", "flat3", "zero"], ["y"]),
    ]
    inits["ax0"] = np.array([0], np.int64)
    inits["cond"] = (rng.uniform(size=(1, 2, 16)) > 0.3)
    _save(nodes, [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 8])],
          [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 16])], inits, 17, out)


def _norms(opset, out):
    """Conv -> GroupNorm(2, 8) -> InstanceNorm(8), as each exporter writes them:
    opset 17 torch.onnx.export's reshape/InstanceNormalization/reshape/Mul/Add,
    opset 21 GroupNormalization (onnx deprecates its per-group form of 18-20)."""
    from onnx import TensorProto, helper
    rng = _rng()
    f32 = TensorProto.FLOAT
    inits = {"w": rng.normal(0, 0.4, (8, 3, 3, 3)).astype("float32"),
             "gamma": rng.uniform(0.5, 1.5, 8).astype("float32"),
             "beta": rng.normal(0, 0.3, 8).astype("float32"),
             "in_scale": rng.uniform(0.5, 1.5, 8).astype("float32"),
             "in_bias": rng.normal(0, 0.3, 8).astype("float32")}
    nodes = [helper.make_node("Conv", ["x", "w"], ["conv"], pads=[1, 1, 1, 1])]
    if opset == 17:
        inits.update(split=np.array([0, 2, -1], np.int64), back=np.array([2, 8, 6, 6], np.int64),
                     ones=np.ones(2, np.float32), zeros=np.zeros(2, np.float32),
                     gamma_c=inits["gamma"].reshape(8, 1, 1), beta_c=inits["beta"].reshape(8, 1, 1))
        nodes += [helper.make_node("Reshape", ["conv", "split"], ["grouped"]),
                  helper.make_node("InstanceNormalization", ["grouped", "ones", "zeros"],
                                   ["normed"], epsilon=1e-5),
                  helper.make_node("Reshape", ["normed", "back"], ["restored"]),
                  helper.make_node("Mul", ["restored", "gamma_c"], ["scaled"]),
                  helper.make_node("Add", ["scaled", "beta_c"], ["gn"])]
    else:
        nodes.append(helper.make_node("GroupNormalization", ["conv", "gamma", "beta"], ["gn"],
                                      num_groups=2, epsilon=1e-5))
    nodes.append(helper.make_node("InstanceNormalization", ["gn", "in_scale", "in_bias"], ["y"],
                                  epsilon=1e-5))
    _save(nodes, [helper.make_tensor_value_info("x", f32, [2, 3, 6, 6])],
          [helper.make_tensor_value_info("y", f32, [2, 8, 6, 6])], inits, opset, out)


def norms_opset17(out):
    _norms(17, out)


def norms_opset21(out):
    _norms(21, out)


def unsupported_ops(out):
    """Ops x2 does not map (two Round, one custom-domain op) at opset 13."""
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Round", ["x"], ["a"]),
             helper.make_node("Round", ["a"], ["b"]),
             helper.make_node("FancyOp", ["b"], ["c"], domain="com.example"),
             helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor("axis", TensorProto.INT64, [], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)])
    import onnx
    onnx.save(model, out)


def old_opset(out):
    """A valid model at opset 6, older than x2 reads (upgraded on reading)."""
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "old",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    model.ir_version = 3
    import onnx
    onnx.save(model, out)


def dangling_input(out):
    """A node reads a tensor nothing defines (onnx.checker would refuse it too)."""
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Add", ["x", "ghost"], ["y"])], "dangling",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    import onnx
    onnx.save(model, out)


def _save_small(path, nodes, x_shape, y_shape, inits):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        nodes, path.stem, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(v.astype(np.float32) if v.dtype == np.float64 else v, k)
         for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _mlp(path, seed: int, act: str, hidden: int):
    from onnx import helper
    rng = np.random.default_rng(seed)
    inits = {"w1": rng.normal(0, 0.5, (8, hidden)), "b1": rng.normal(0, 0.1, hidden),
             "w2": rng.normal(0, 0.5, (hidden, 4)), "b2": rng.normal(0, 0.1, 4)}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node(act, ["hb"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["y"])]
    return _save_small(path, nodes, [2, 8], [2, 4], inits)


def _cnn(path, seed: int, kernel: int):
    from onnx import helper
    rng = np.random.default_rng(seed)
    inits = {"w": rng.normal(0, 0.4, (6, 3, kernel, kernel)), "b": rng.normal(0, 0.1, 6),
             "fc": rng.normal(0, 0.4, (4, 6)), "fc_b": rng.normal(0, 0.1, 4)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kernel, kernel],
                              pads=[kernel // 2] * 4),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fc_b"], ["y"], transB=1)]
    return _save_small(path, nodes, [2, 3, 8, 8], [2, 4], inits)


def _unmapped(path):
    from onnx import helper
    nodes = [helper.make_node("Round", ["x"], ["y"])]
    return _save_small(path, nodes, [2, 8], [2, 8], {})


def batch_set(out):
    """Ten small models for `convert-many` (tests/test_batch_ray.py,
    tools/bench_executors.py), written into the folder `out`: nine that
    convert (two of them both named mlp_relu), one whose conversion fails by
    itself (Round, which x2 does not map). Returns their paths in order."""
    from pathlib import Path
    d = Path(out)
    built = [_mlp(d / f"mlp_{act.lower()}.onnx", i, act, 16)
             for i, act in enumerate(("Relu", "Tanh", "Sigmoid"))]
    built += [_mlp(d / f"wide_{act.lower()}.onnx", 10 + i, act, 64)
              for i, act in enumerate(("Relu", "Tanh"))]
    built += [_cnn(d / f"cnn_k{k}.onnx", 20 + k, k) for k in (1, 3, 5)]
    built.append(_mlp(d / "other" / "mlp_relu.onnx", 30, "Relu", 8))
    built.append(_unmapped(d / "unmapped.onnx"))
    return built


MODELS = {f.__name__: f for f in (torch_cnn, torch_decoder, torch_transformer, handmade_opset11, handmade_opset13, handmade_opset18,
                                  handmade_misc, unsupported_ops, old_opset, dangling_input, batch_set,
                                  norms_opset17, norms_opset21)}

if __name__ == "__main__":
    MODELS[sys.argv[1]](sys.argv[2])
