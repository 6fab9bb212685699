"""TF1 dataflow control flow (x2/frontends/tf/v1_control.py): a v1
tf.while_loop with a trip count that depends on input values and a tf.cond on
an input-dependent value, dynamic_rnn over an LSTM cell (v1 TensorArrays),
and a tf.cond inside a while body, read from frozen GraphDefs (and the first
from a TF1 checkpoint and a TF1 SavedModel), convert to paddle, onnx and torch
as loops and conditionals, not unrolled, with parity at rtol 1e-4 (the loops
compound rounding) for several trip counts and both branches; so does a TF2
SavedModel's While/If that the TensorFlow reader lowers to v1 ops. A malformed
frame, and a TensorArray written off the loop counter, are refused naming the
node. Models: tests/tf_models.py tf_v1_control (and tf_loops)."""
from __future__ import annotations

import numpy as np
import pytest

from x2.convert import convert
from x2.errors import ConversionError
from x2.check.parity import check

RTOL = 1e-4
TARGETS = ["paddle", "onnx", "torch"]


def _feeds(report, **arrays):
    """The inputs in the converted model's order."""
    return [arrays[item["name"]] for item in report.inputs]


def _parity(model, out, target, report, **arrays) -> dict:
    result = check(str(model), str(out), target=target, rtol=RTOL,
                   inputs=_feeds(report, **arrays))
    for r in result["outputs"]:
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    return {r["name"]: r for r in result["outputs"]}


def _assert_control_flow(out, target, ops=("Loop", "If")):
    """The converted model keeps the loop (and conditional) as control flow."""
    if target == "onnx":
        import onnx

        def types(graph):
            for node in graph.node:
                yield node.op_type
                for attr in node.attribute:
                    for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                        yield from types(sub)
        seen = list(types(onnx.load(str(out / "model.onnx")).graph))
        assert all(op in seen for op in ops), seen
    else:
        code = (out / "model.py").read_text()
        assert "while " in code, code
        assert ("If" not in ops) or "if " in code, code


# x scales and limits: a positive x keeps h positive (the then-branch), a
# negative one negative; 0, 1, several steps (a limit never reached would never end).
RUNTIME_CASES = ((0.1, 1.0), (1.2, 1.0), (3.5, 1.0), (3.5, -1.0), (5.0, -4.0))


def _runtime_parity(model, out, target, report, outputs=("y", "steps")):
    x = np.full((2, 3), 0.1, np.float32)
    seen = set()
    for limit, scale in RUNTIME_CASES:
        ref = _parity(model, out, target, report, x=x * scale,
                      limit=np.array(limit, np.float32))
        assert sorted(ref) == sorted(outputs)
        seen.add(round(ref["y"]["ref_scale"], 5))
    assert len(seen) >= 3, seen


@pytest.mark.parametrize("target", TARGETS)
def test_frozen_while_with_runtime_trip_count_and_cond(tf_model, tmp_path, target):
    model = tf_model("tf_v1_control") / "runtime.pb"
    out = tmp_path / target
    report = convert(str(model), str(out), target=target)
    assert report.source["format"] == "graphdef"
    assert {"While", "If"} <= set(report.ops_seen), report.ops_seen
    x = np.full((2, 3), 0.1, np.float32)
    steps = set()
    for limit, scale in RUNTIME_CASES:
        ref = _parity(model, out, target, report, x=x * scale,
                      limit=np.array(limit, np.float32))
        steps.add(ref["steps"]["ref_scale"])
    assert len(steps) >= 3 and 0 in steps, steps   # several trip counts, 0 included
    _assert_control_flow(out, target)


@pytest.mark.parametrize("form, target", [("ckpt/model.ckpt.meta", "onnx"),
                                          ("saved_v1", "torch")])
def test_checkpoint_and_tf1_savedmodel_with_v1_loops(tf_model, tmp_path, form, target):
    """The same graph from a TF1 checkpoint (+ .meta; its outputs inferred:
    y, the scalar step count is left out as a loss-like sink) and a TF1
    SavedModel."""
    model = tf_model("tf_v1_control") / form
    out = tmp_path / "out"
    report = convert(str(model), str(out), target=target)
    assert {"While", "If"} <= set(report.ops_seen), report.ops_seen
    _runtime_parity(model, out, target, report,
                    ("y",) if form.startswith("ckpt") else ("y", "steps"))
    _assert_control_flow(out, target)


@pytest.mark.parametrize("target", TARGETS)
def test_dynamic_rnn_lstm_over_tensor_arrays(tf_model, tmp_path, target):
    """dynamic_rnn: TensorArrayV3 unstack + read in the loop, write at the
    loop counter + stack after it; unknown time dim, run at 4 and 7 steps."""
    model = tf_model("tf_v1_control") / "rnn.pb"
    out = tmp_path / target
    report = convert(str(model), str(out), target=target)
    assert "While" in report.ops_seen
    assert not [op for op in report.ops_seen if op.startswith("TensorArray")]
    assert report.inputs[0]["shape"] == [None, None, 3]
    rng = np.random.default_rng(0)
    for time in (4, 7):
        ref = _parity(model, out, target, report,
                      x=rng.standard_normal((2, time, 3)).astype(np.float32))
        assert not ref["y"]["ref_constant"] and ref["c"]["ref_scale"] > 1e-2
    _assert_control_flow(out, target, ("Loop",))


@pytest.mark.parametrize("target", TARGETS)
def test_cond_inside_a_while_body(tf_model, tmp_path, target):
    """A tf.cond on the state inside a loop of `steps` (an input) steps: the
    conditional stays inside the loop body."""
    model = tf_model("tf_v1_control") / "nested.pb"
    out = tmp_path / target
    report = convert(str(model), str(out), target=target)
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    scales = set()
    for steps, scale in ((0, 1.0), (1, 3.0), (3, 1.0), (6, -2.0)):
        ref = _parity(model, out, target, report, x=x * scale,
                      steps=np.array(steps, np.int32))
        scales.add(round(ref["y"]["ref_scale"], 5))
    assert len(scales) == 4, scales
    _assert_control_flow(out, target)
    if target != "onnx":
        lines = (out / "model.py").read_text().splitlines()
        loop = next(i for i, line in enumerate(lines) if line.lstrip().startswith("while "))
        indent = len(lines[loop]) - len(lines[loop].lstrip())
        body = lines[loop + 1:]
        body = body[:next((i for i, line in enumerate(body) if line.strip() and
                           len(line) - len(line.lstrip()) <= indent), len(body))]
        assert any(line.lstrip().startswith("if ") for line in body), lines  # in the loop


@pytest.mark.parametrize("target", TARGETS)
def test_state_whose_shape_changes_per_step(tf_model, tmp_path, target):
    """x is (2, 3) and the state gains a row per step: its row count (read in
    the body) must not be folded as the first step's 2."""
    model = tf_model("tf_v1_control") / "growing.pb"
    out = tmp_path / target
    report = convert(str(model), str(out), target=target)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for steps in (0, 1, 3):
        _parity(model, out, target, report, x=x, steps=np.array(steps, np.int32))
    _assert_control_flow(out, target, ("Loop",))


def test_tf2_loops_lowered_by_the_tensorflow_reader(tf_model, tmp_path):
    """A TF2 SavedModel's functional While/If, frozen by the TensorFlow reader
    (convert_variables_to_constants_v2 lowers them to v1 control flow)."""
    model = tf_model("tf_loops") / "runtime"
    out = tmp_path / "out"
    report = convert(str(model), str(out), target="torch", options={"tf_reader": "tensorflow"})
    assert report.source["reader"]["name"] == "tensorflow"
    assert {"While", "If"} <= set(report.ops_seen), report.ops_seen
    _runtime_parity(model, out, "torch", report)
    _assert_control_flow(out, "torch")


def test_tensor_array_written_off_the_counter_is_refused(tf_model, tmp_path):
    with pytest.raises(ConversionError) as info:
        convert(str(tf_model("tf_v1_control") / "strided_write.pb"), str(tmp_path / "out"),
                target="torch")
    assert "TensorArrayWriteV3 node 'while/TensorArrayWrite/TensorArrayWriteV3' writes a " \
           "TensorArray at an index that is not while loop 'while''s counter" \
        in info.value.message, info.value.message


def test_exit_without_enter_is_refused_naming_it(tf_model, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ConversionError) as info:
        convert(str(tf_model("tf_v1_control") / "exit_without_enter.pb"), str(out),
                target="onnx")
    assert "Exit node 'lost/Exit' leaves no while loop" in info.value.message
    assert "an Exit without its Enter" in info.value.message
    assert info.value.details["node"] == "lost/Exit"
    assert not out.exists()
