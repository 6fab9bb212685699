"""ONNX models for the ops issue 15's model zoo found unmapped, written op by
op with onnx.helper: `python tests/zoo_ops_onnx.py NAME OUT.onnx`
(tests/test_zoo_ops.py builds them in a subprocess)."""
from __future__ import annotations

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper as h, numpy_helper

F32 = TensorProto.FLOAT


def _const(name: str, array) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(array), name)


def _save(nodes, inputs, outputs, out, inits=(), opset=17):
    graph = h.make_graph(nodes, "zoo_ops", inputs, [], list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8
    # The outputs as shape inference types them.
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(model).graph.value_info}
    model.graph.output.extend(inferred[o] for o in outputs)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, out)


def ops(out):
    """HardSwish, comparisons, And/Or/Not, GatherElements, a Dropout whose mask is
    declared but unused, MaxPool in ceil_mode and dilated."""
    nodes = [
        h.make_node("HardSwish", ["x"], ["hs"]),
        h.make_node("GreaterOrEqual", ["x", "lo"], ["ge"]),
        h.make_node("LessOrEqual", ["x", "hi"], ["le"]),
        h.make_node("Mul", ["x", "two"], ["x2"]),
        h.make_node("Cast", ["x2"], ["xi"], to=TensorProto.INT64),
        h.make_node("Equal", ["xi", "zero"], ["eq"]),
        h.make_node("Greater", ["x", "hi"], ["gt"]),
        h.make_node("Less", ["x", "lo"], ["lt"]),
        h.make_node("And", ["ge", "le"], ["band"]),
        h.make_node("Or", ["band", "eq"], ["bor"]),
        h.make_node("Xor", ["bor", "gt"], ["bxor"]),
        h.make_node("Not", ["lt"], ["nlt"]),
        h.make_node("And", ["bxor", "nlt"], ["mask"]),
        h.make_node("Cast", ["mask"], ["maskf"], to=F32),
        h.make_node("Mul", ["hs", "maskf"], ["y0"]),
        h.make_node("ArgMax", ["x"], ["idx"], axis=1, keepdims=1),
        h.make_node("GatherElements", ["x", "idx"], ["picked"], axis=1),
        h.make_node("Dropout", ["picked"], ["y1", "unused_mask"]),
        h.make_node("MaxPool", ["x"], ["y2"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        h.make_node("MaxPool", ["x"], ["y3"], kernel_shape=[3, 2], pads=[1, 1, 1, 0],
                    dilations=[2, 2]),
    ]
    inits = [_const("lo", np.float32(-0.5)), _const("hi", np.float32(0.7)),
             _const("two", np.float32(2.0)), _const("zero", np.int64(0))]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 3, 8, 9])], ["y0", "y1", "y2", "y3"],
          out, inits)


def pools_nd(out):
    """1-D and 3-D MaxPool/AveragePool (ceil_mode, pads, count_include_pad)."""
    nodes = [
        h.make_node("MaxPool", ["a"], ["y0"], kernel_shape=[3], strides=[2], ceil_mode=1),
        h.make_node("AveragePool", ["a"], ["y1"], kernel_shape=[3], strides=[2], pads=[1, 1],
                    count_include_pad=1),
        h.make_node("MaxPool", ["v"], ["y2"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
        h.make_node("AveragePool", ["v"], ["y3"], kernel_shape=[2, 3, 2], strides=[1, 2, 2],
                    pads=[0, 1, 1, 1, 1, 0]),
        h.make_node("AveragePool", ["v"], ["y4"], kernel_shape=[3, 3, 3], strides=[2, 2, 2],
                    ceil_mode=1),
    ]
    _save(nodes, [h.make_tensor_value_info("a", F32, [2, 3, 10]),
                  h.make_tensor_value_info("v", F32, [2, 2, 5, 6, 7])],
          ["y0", "y1", "y2", "y3", "y4"], out)


def convs(out):
    """1-D and 3-D Conv (pads, strides, dilations, bias) and 1-D ConvTranspose."""
    rng = np.random.default_rng(0)
    nodes = [h.make_node("Conv", ["a", "w1", "b1"], ["y0"], strides=[2], pads=[1, 2],
                         dilations=[2]),
             h.make_node("ConvTranspose", ["y0", "t1"], ["y1"], strides=[2], pads=[1, 1],
                         output_padding=[1]),
             h.make_node("Conv", ["v", "w3", "b3"], ["y2"], strides=[1, 2, 2],
                         pads=[1, 0, 1, 0, 1, 1])]
    inits = [_const("w1", rng.standard_normal((4, 3, 3)).astype(np.float32)),
             _const("b1", rng.standard_normal(4).astype(np.float32)),
             _const("t1", rng.standard_normal((4, 2, 3)).astype(np.float32)),
             _const("w3", rng.standard_normal((3, 2, 2, 3, 2)).astype(np.float32)),
             _const("b3", rng.standard_normal(3).astype(np.float32))]
    _save(nodes, [h.make_tensor_value_info("a", F32, [2, 3, 17]),
                  h.make_tensor_value_info("v", F32, [2, 2, 4, 7, 6])], ["y1", "y2"], out,
          inits)


def dropout_masks_used(out):
    """Two Dropouts whose masks the graph reads, and one whose mask nothing reads."""
    nodes = [h.make_node("Dropout", ["x"], ["d0", "m0"], name="drop_a"),
             h.make_node("Dropout", ["d0"], ["d1", "m1"], name="drop_b"),
             h.make_node("Dropout", ["d1"], ["d2", "m2"], name="drop_c"),
             h.make_node("Cast", ["m0"], ["f0"], to=F32),
             h.make_node("Cast", ["m2"], ["f2"], to=F32),
             h.make_node("Add", ["f0", "f2"], ["f"]),
             h.make_node("Add", ["d2", "f"], ["y"])]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 4])], ["y"], out)


def window(out):
    """A Hann window built by Range, Cos and Floor on constants (no mappers:
    folded with onnx.reference before they would need one)."""
    nodes = [h.make_node("Range", ["start", "limit", "delta"], ["n"]),
             h.make_node("Mul", ["n", "step"], ["angle"]),
             h.make_node("Cos", ["angle"], ["cos"]),
             h.make_node("Mul", ["cos", "half"], ["half_cos"]),
             h.make_node("Sub", ["half", "half_cos"], ["hann"]),
             h.make_node("Div", ["n", "five"], ["fifths"]),
             h.make_node("Floor", ["fifths"], ["rows"]),
             h.make_node("Mul", ["x", "hann"], ["windowed"]),
             h.make_node("Add", ["windowed", "rows"], ["y"])]
    inits = [_const("start", np.float32(0)), _const("limit", np.float32(12)),
             _const("delta", np.float32(1)), _const("step", np.float32(2 * np.pi / 12)),
             _const("half", np.float32(0.5)), _const("five", np.float32(5))]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 12])], ["y"], out, inits)


def gather_nd(out):
    """GatherND: batch_dims 0 with constant negative indices, batch_dims 1 over a
    dynamic batch (indices computed from the input), batch_dims 2 with computed
    negative indices, and an index as deep as the data (one element each); a
    bool mask cast from numbers and expanded (paddle's static expand refuses a bool
    that may carry a gradient)."""
    nodes = [
        h.make_node("GatherND", ["x", "c0"], ["y0"]),
        h.make_node("ArgMax", ["x"], ["am"], axis=2, keepdims=0),       # [N, 3, 9] in 0..7
        h.make_node("Sub", ["am", "eight"], ["neg"]),                    # -8..-1
        h.make_node("Unsqueeze", ["neg", "last"], ["i2"]),               # [N, 3, 9, 1]
        h.make_node("GatherND", ["x", "i2"], ["y2"], batch_dims=2),      # [N, 3, 9, 9]
        h.make_node("ArgMax", ["x"], ["am1"], axis=1, keepdims=0),      # [N, 8, 9] in 0..2
        h.make_node("Slice", ["am1", "zero1", "one1", "one1"], ["c1"]),  # [N, 1, 9]
        h.make_node("Slice", ["am", "zero1", "one1", "one1"], ["c2"]),   # [N, 1, 9]
        h.make_node("Concat", ["c1", "c2"], ["cc"], axis=1),             # [N, 2, 9]
        h.make_node("Transpose", ["cc"], ["i1"], perm=[0, 2, 1]),        # [N, 9, 2]
        h.make_node("GatherND", ["x", "i1"], ["y1"], batch_dims=1),      # [N, 9, 9]
        h.make_node("GatherND", ["x", "c3"], ["y3"], batch_dims=1),      # [N, 4]
        h.make_node("Cast", ["y3"], ["y3i"], to=TensorProto.INT64),      # a mask from
        h.make_node("Cast", ["y3i"], ["pos"], to=TensorProto.BOOL),      # numbers (HF's)
        h.make_node("Unsqueeze", ["pos", "one1"], ["pos1"]),             # [N, 1, 4]
        h.make_node("Expand", ["pos1", "shape3"], ["pos3"]),             # [N, 3, 4]
        h.make_node("Unsqueeze", ["y3", "one1"], ["y31"]),
        h.make_node("Where", ["pos3", "y31", "zerof"], ["y4"]),          # [N, 3, 4]
    ]
    inits = [_const("c0", np.array([[0, 1], [1, -1], [-2, 2], [1, 0]], np.int64)),
             _const("eight", np.int64(8)), _const("last", np.array([-1], np.int64)),
             _const("zero1", np.array([0], np.int64)), _const("one1", np.array([1], np.int64)),
             _const("c3", np.array([[[0, 7, 8], [-1, 0, -9], [2, -8, 4], [1, 3, 5]],
                                    [[2, 0, 0], [-3, -1, -1], [0, 6, 2], [1, 1, 1]]],
                                   np.int64)),
             _const("zerof", np.float32(0)), _const("shape3", np.array([1, 3, 4], np.int64))]
    _save(nodes, [h.make_tensor_value_info("x", F32, ["N", 3, 8, 9])],
          ["y0", "y1", "y2", "y3", "y4"], out, inits)


def gather_nd_out_of_range(out):
    nodes = [h.make_node("GatherND", ["x", "c"], ["y"], name="gnd", batch_dims=1)]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 3, 8])], ["y"], out,
          [_const("c", np.array([[1, 8], [0, -9]], np.int64).reshape(2, 1, 2))])


def masked_softmax(out):
    """Softmax and LogSoftmax over 16 (paddle's vectorized CPU kernel) of scores
    masked by a -inf constant, one row fully masked: NaN there, which the graph
    replaces by 0 as HF attention does (IsNaN, Where)."""
    mask = np.zeros((3, 16), np.float32)
    mask[1, :] = -np.inf
    mask[2, 5:] = -np.inf
    nodes = [h.make_node("Add", ["x", "mask"], ["scores"]),
             h.make_node("Softmax", ["scores"], ["p"], axis=-1),
             h.make_node("IsNaN", ["p"], ["p_nan"]),
             h.make_node("Where", ["p_nan", "zero", "p"], ["y0"]),
             h.make_node("LogSoftmax", ["scores"], ["lp"], axis=-1),
             h.make_node("IsNaN", ["lp"], ["lp_nan"]),
             h.make_node("Where", ["lp_nan", "zero", "lp"], ["lp0"]),
             h.make_node("Exp", ["lp0"], ["y1"])]
    _save(nodes, [h.make_tensor_value_info("x", F32, [2, 3, 16])], ["y0", "y1"], out,
          [_const("mask", mask), _const("zero", np.float32(0))])


if __name__ == "__main__":
    globals()[sys.argv[1]](sys.argv[2])
