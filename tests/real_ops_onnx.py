"""ONNX models for the ops real models still missed (issue 31), written op
by op: `python tests/real_ops_onnx.py NAME OUT.onnx` (tests/test_real_ops.py
builds them in a subprocess)."""
from __future__ import annotations

import sys

import numpy as np
from onnx import TensorProto, helper as h

from zoo_ops_onnx import _const, _save

F32 = TensorProto.FLOAT


def ordering(out):
    """TopK (largest and smallest, K as a constant input, on an inner axis),
    and Size of a tensor times the input (a voice-activity model's frame count)."""
    nodes = [h.make_node("TopK", ["x", "k3"], ["top", "top_at"], axis=1),
             h.make_node("TopK", ["x", "k2"], ["low", "low_at"], axis=-1, largest=0),
             h.make_node("Size", ["x"], ["count"]),
             h.make_node("Cast", ["count"], ["countf"], to=F32),
             h.make_node("Mul", ["x", "countf"], ["scaled"])]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 6, 5])],
          ["top", "top_at", "low", "low_at", "scaled"], out,
          [_const("k3", np.array([3], np.int64)), _const("k2", np.array([2], np.int64))])


def pixel_shuffle(out):
    """DepthToSpace in DCR and CRD order, SpaceToDepth, on a dynamic batch."""
    nodes = [h.make_node("DepthToSpace", ["x"], ["dcr"], blocksize=2),
             h.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD"),
             h.make_node("SpaceToDepth", ["x"], ["s2d"], blocksize=3)]
    _save(nodes, [h.make_tensor_value_info("x", F32, ["batch", 8, 6, 9])],
          ["dcr", "crd", "s2d"], out)


def reflect_pad_2d_input(out):
    """Reflect Pad of a [batch, samples] signal (an STFT's centre padding),
    and of a 3-D one on its last axis only (opset 18 axes)."""
    nodes = [h.make_node("Pad", ["x", "pads"], ["y0"], mode="reflect"),
             h.make_node("Unsqueeze", ["x", "axis1"], ["x3"]),
             h.make_node("Pad", ["x3", "pads", "", "last"], ["y1"], mode="reflect"),
             h.make_node("Pad", ["x", "pads"], ["y2"], mode="edge")]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 16])], ["y0", "y1", "y2"], out,
          [_const("pads", np.array([0, 4, 0, 3], np.int64)),
           _const("axis1", np.array([1], np.int64)), _const("last", np.array([1, 2], np.int64))],
          opset=18)


def rate_branch(out):
    """If on an int64 scalar input (Silero VAD's `sr == 16000`): the branches
    give different ranks, so only a fixed rate makes the output's shape known."""
    then = h.make_graph([h.make_node("Tanh", ["x"], ["t"]),
                         h.make_node("Mul", ["t", "two"], ["y_then"])], "then", [],
                        [h.make_tensor_value_info("y_then", F32, None)], [_const("two", np.float32(2))])
    other = h.make_graph([h.make_node("ReduceSum", ["x", "last"], ["y_else"], keepdims=0)],
                         "else", [], [h.make_tensor_value_info("y_else", F32, None)],
                         [_const("last", np.array([-1], np.int64))])
    nodes = [h.make_node("Equal", ["sr", "rate16k"], ["is16k"]),
             h.make_node("If", ["is16k"], ["y"], then_branch=then, else_branch=other),
             h.make_node("Identity", ["y"], ["out"])]
    graph = h.make_graph(nodes, "rate_branch",
                         [h.make_tensor_value_info("x", F32, [2, 8]),
                          h.make_tensor_value_info("sr", TensorProto.INT64, [])],
                         [h.make_tensor_value_info("out", F32, None)],
                         [_const("rate16k", np.array(16000, np.int64))])
    import onnx
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    # no onnx.checker: it wants typed branch outputs, which exporters leave out
    # (Silero's do); onnxruntime runs the file
    onnx.save(model, out)


if __name__ == "__main__":
    globals()[sys.argv[1]](sys.argv[2])
