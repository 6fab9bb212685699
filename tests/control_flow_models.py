"""Hand-built ONNX models with If, Loop and Scan whose results depend on the
input values (branches taken, trip counts), for tests/test_control_flow.py."""
from __future__ import annotations

import numpy as np


def _model(graph, opset: int = 17):
    from onnx import checker, helper
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    checker.check_model(model, full_check=True)
    return model


def if_model(path):
    """y = (x @ W) * 2 + 1 if sum(x) > 0 else relu(x @ W) - b: both branches
    read outer values (the matmul result and an initializer) by name."""
    from onnx import TensorProto as T, helper, numpy_helper
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    then_graph = helper.make_graph(
        [helper.make_node("Mul", ["h", "two"], ["t1"]),
         helper.make_node("Add", ["t1", "one"], ["then_out"])],
        "then", [], [helper.make_tensor_value_info("then_out", T.FLOAT, ["N", 3])],
        initializer=[numpy_helper.from_array(np.float32(2), "two"),
                     numpy_helper.from_array(np.float32(1), "one")])
    else_graph = helper.make_graph(
        [helper.make_node("Relu", ["h"], ["e1"]),
         helper.make_node("Sub", ["e1", "b"], ["else_out"])],
        "else", [], [helper.make_tensor_value_info("else_out", T.FLOAT, ["N", 3])])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]),
         helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["y"], then_branch=then_graph,
                          else_branch=else_graph)],
        "if_model", [helper.make_tensor_value_info("x", T.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", T.FLOAT, ["N", 3])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b"),
                     numpy_helper.from_array(np.float32(0), "zero")])
    from onnx import save
    save(_model(graph), str(path))
    return path


def loop_model(path):
    """A Loop whose trip count is an input and whose condition is computed:
    h = tanh(h @ R + x) until sum(|h|) exceeds a bound or n steps have run;
    every step's h is a scan output."""
    from onnx import TensorProto as T, helper, numpy_helper, save
    rng = np.random.default_rng(1)
    r = (rng.standard_normal((3, 3)) * 0.9).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "R"], ["hr"]),
         helper.make_node("Add", ["hr", "x"], ["pre"]),
         helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("Abs", ["h_out"], ["mag"]),
         helper.make_node("ReduceSum", ["mag"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "bound"], ["cond_out"]),
         helper.make_node("Identity", ["h_out"], ["h_scan"])],
        "body", [helper.make_tensor_value_info("i", T.INT64, []),
                 helper.make_tensor_value_info("cond_in", T.BOOL, []),
                 helper.make_tensor_value_info("h_in", T.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []),
         helper.make_tensor_value_info("h_out", T.FLOAT, [2, 3]),
         helper.make_tensor_value_info("h_scan", T.FLOAT, [2, 3])],
        initializer=[numpy_helper.from_array(np.float32(4.5), "bound")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "start", "h0"], ["h_final", "h_all"], body=body)],
        "loop_model", [helper.make_tensor_value_info("x", T.FLOAT, [2, 3]),
                       helper.make_tensor_value_info("n", T.INT64, []),
                       helper.make_tensor_value_info("h0", T.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("h_final", T.FLOAT, [2, 3]),
         helper.make_tensor_value_info("h_all", T.FLOAT, [None, 2, 3])],
        initializer=[numpy_helper.from_array(r, "R"),
                     numpy_helper.from_array(np.array(True), "start")])
    save(_model(graph), str(path))
    return path


def scan_model(path):
    """Scan over axis 1 of x [batch, steps, 3], one input read backwards: a
    running sum state and a per-step output stacked on axis 1, reversed."""
    from onnx import TensorProto as T, helper, numpy_helper, save
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x_t"], ["acc_out"]),
         helper.make_node("Mul", ["acc_out", "scale"], ["y_t"])],
        "body", [helper.make_tensor_value_info("acc_in", T.FLOAT, [2, 3]),
                 helper.make_tensor_value_info("x_t", T.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("acc_out", T.FLOAT, [2, 3]),
         helper.make_tensor_value_info("y_t", T.FLOAT, [2, 3])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["acc0", "x"], ["acc", "ys"], body=body, num_scan_inputs=1,
                          scan_input_axes=[1], scan_input_directions=[1],
                          scan_output_axes=[1], scan_output_directions=[1])],
        "scan_model", [helper.make_tensor_value_info("acc0", T.FLOAT, [2, 3]),
                       helper.make_tensor_value_info("x", T.FLOAT, [2, "steps", 3])],
        [helper.make_tensor_value_info("acc", T.FLOAT, [2, 3]),
         helper.make_tensor_value_info("ys", T.FLOAT, [2, "steps", 3])],
        initializer=[numpy_helper.from_array(np.float32(0.5), "scale")])
    save(_model(graph), str(path))
    return path


def unbounded_while_model(path):
    """A while loop as torch.onnx writes one: trip count INT64_MAX, ended by
    its condition: y = 2|y| + 0.5 while sum(y) < limit (it ends for any
    input: y grows)."""
    from onnx import TensorProto as T, helper, numpy_helper, save
    body = helper.make_graph(
        [helper.make_node("Abs", ["y_in"], ["mag"]),
         helper.make_node("Mul", ["mag", "two"], ["twice"]),
         helper.make_node("Add", ["twice", "half"], ["y_out"]),
         helper.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
         helper.make_node("Less", ["total", "limit"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", T.INT64, []),
                 helper.make_tensor_value_info("cond_in", T.BOOL, []),
                 helper.make_tensor_value_info("y_in", T.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []),
         helper.make_tensor_value_info("y_out", T.FLOAT, [3])],
        initializer=[numpy_helper.from_array(np.float32(2), "two"),
                     numpy_helper.from_array(np.float32(0.5), "half")])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["start_total"], keepdims=0),
         helper.make_node("Less", ["start_total", "limit"], ["go"]),
         helper.make_node("Loop", ["unbounded", "go", "x"], ["y"], body=body)],
        "unbounded_while", [helper.make_tensor_value_info("x", T.FLOAT, [3]),
                            helper.make_tensor_value_info("limit", T.FLOAT, [])],
        [helper.make_tensor_value_info("y", T.FLOAT, [3])],
        initializer=[numpy_helper.from_array(np.array(2 ** 63 - 1, np.int64), "unbounded")])
    save(_model(graph), str(path))
    return path
