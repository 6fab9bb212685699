"""TensorFlow While loops unrolled by the direct SavedModel reader
(x2/frontends/tf/loops.py): every Keras recurrent layer form (LSTM, GRU with
reset_after True and False, SimpleRNN, Bidirectional, return_sequences,
return_state, go_backwards, masking) converts to onnx, paddle and torch with
fp32 parity at rtol 1e-5 and no Transpose left; a tf.while_loop over a
TensorArray and a tf.cond on a static dim unroll too; a loop whose trip
count depends on an input value, or that runs too long, is refused naming
its While node; a variant tensor reaching the TensorFlow reader is a clear
error. Keras layers over a dynamic sequence length are one nn.LSTM/nn.GRU
(the loop's condition proves it runs once per step) with parity at two
lengths; a loop not proven so, or masked, is refused. Models are built in
subprocesses (tests/tf_models.py)."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from conftest import convert_then_check, run_cli
from x2.convert import convert
from x2.errors import ConversionError
from x2.check.parity import check

RTOL = 1e-5
TARGETS = ["onnx", "paddle", "torch"]
# tests/tf_models.py _rnn_layers: Keras RNN forms, each a SavedModel of keras_rnns.
RNNS = ["lstm", "lstm_seq", "lstm_state", "gru", "gru_reset_before", "gru_backwards",
        "simple_rnn", "bilstm", "bigru_sum", "lstm_masked"]
# Padded token rows (0 is the padding id): the masked steps keep the state.
PADDED = np.array([[3, 7, 1, 0, 0, 0, 0], [12, 4, 4, 9, 18, 2, 0], [5, 0, 0, 0, 0, 0, 0]],
                  dtype=np.int32)


UNROLL = {"unroll_loops": True}


def _parity(model, out, target, **kwargs):
    report = convert_then_check(str(model), str(out), target=target, options=UNROLL)
    result = check(str(model), str(out), target=target, rtol=RTOL, batch=3, **kwargs)
    for r in result["outputs"]:
        assert not r["ref_constant"], f"reference output {r['name']} ignores the input"
        assert r["ref_scale"] > 1e-2, f"reference output {r['name']} has vanished"
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    return report, result


# Every form on one target in turn, and two forms on every target: the emitters
# see the same unrolled ops whatever the form (keeps CI time to a few minutes).
CASES = sorted({(name, TARGETS[i % len(TARGETS)]) for i, name in enumerate(RNNS)} |
               {(name, target) for name in ("lstm", "bigru_sum") for target in TARGETS})


# The layers x2 recognises in their While loops (tf_recurrent.py); the other
# (masking) is unrolled.
LAYERS = {"lstm": ["lstm"], "lstm_seq": ["lstm"], "lstm_state": ["lstm"], "gru": ["gru"],
          "gru_reset_before": ["gru"], "gru_backwards": ["gru"], "simple_rnn": ["rnn"],
          "bilstm": ["lstm", "lstm"], "bigru_sum": ["gru", "gru"]}
LAYER_CLASS = {"lstm": "nn.LSTM(", "gru": "nn.GRU(", "rnn": "RNN("}
# A GRU resetting before its recurrent matmul, which no nn.GRU does, is x2's own
# class in model.py (x2/emitters/recurrent_classes.py).
LAYER_CLASS_OF = {"gru_reset_before": "= GRUResetBefore("}


@pytest.mark.parametrize("name, target", CASES)
def test_keras_rnn_converts_with_parity(tf_model, tmp_path, name, target):
    model = tf_model("keras_rnns") / name
    report, _ = _parity(model, tmp_path / "out", target)
    reader = report.source["reader"]
    assert reader["name"] == "direct"
    if name in LAYERS:
        assert sorted(reader["recurrent_layers"].values()) == LAYERS[name]
        assert "unrolled_loops" not in reader
        if target != "onnx":
            code = (tmp_path / "out" / "model.py").read_text()
            # Bidirectional(LSTM) is one bidirectional nn.LSTM (when its halves are only
            # concatenated; merge_mode="sum" keeps two layers).
            kind = LAYERS[name][0]
            layers = 1 if name == "bilstm" else len(LAYERS[name])
            assert code.count(LAYER_CLASS_OF.get(name, LAYER_CLASS[kind])) == layers, code
            assert ("bidirectional=True" in code or "direction='bidirect'" in code) == \
                (name == "bilstm"), code
    else:
        assert set(reader["unrolled_loops"].values()) == {7}  # 7 time steps
        assert "Unpack" in report.ops_seen
    assert not [op for op in report.ops_seen if op.startswith("TensorList") or "While" in op]
    assert report.inputs[0]["shape"][0] is None
    # Masking reads Keras's first-step cell (zeros_like of its output) from the
    # time-major input: that one Transpose stays.
    assert report.transposes_left == (1 if name == "lstm_masked" else 0), \
        report.transposes_where
    if name == "lstm_masked":  # padded rows: the masked steps must keep the state
        _parity(model, tmp_path / "out", target, inputs=[PADDED])


def test_unrolled_nodes_are_named_per_iteration_and_share_weights(tf_model, tmp_path):
    """Nodes of iteration K are '<while>/iter_K/<node>' (7 steps: iter_0..iter_6);
    the cell's weights are one constant, one torch submodule."""
    model = tf_model("keras_rnns") / "lstm_masked"   # masking: not an nn.LSTM, unrolled
    report = convert(str(model), str(tmp_path / "out"), target="torch", options=UNROLL)
    sources = {v["source"]["name"] for v in report.values if v.get("source")}
    iterations = {s.split("/iter_")[1].split("/")[0] for s in sources if "/iter_" in s}
    assert iterations == {str(k) for k in range(7)}
    assert all("/while/iter_" in s for s in sources if "/iter_" in s)
    code = (tmp_path / "out" / "model.py").read_text()
    # kernel and recurrent kernel for the loop and for Keras's first-step cell call
    # outside it (masking reads its output shape), and the head: one per step would be 14+.
    assert code.count("nn.Linear(") == 5


def test_while_over_tensor_array_and_static_cond_unroll(tf_model, tmp_path):
    """A tf.while_loop writing a TensorArray (5 steps), a tf.cond on a static
    dim (its taken branch inlined) and a 3-step loop, outside Keras."""
    for target in TARGETS:
        report, _ = _parity(tf_model("tf_loops") / "static", tmp_path / target, target)
        assert report.source["reader"]["name"] == "direct"
        assert not [op for op in report.ops_seen if "If" in op or "While" in op]
        assert report.transposes_left == 0


def test_data_dependent_loop_is_refused_naming_the_while_node(tf_model, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ConversionError) as info:
        convert(str(tf_model("tf_loops") / "dynamic"), str(out), target="onnx", options=UNROLL)
    message = info.value.message
    assert "StatelessWhile node 'PartitionedCall/halve' cannot be unrolled" in message
    assert "trip count depends on input values" in message and "'steps'" in message
    assert info.value.details["node"] == "PartitionedCall/halve"
    assert not out.exists()


@pytest.mark.parametrize("options", [UNROLL, {}])
def test_dynamic_sequence_length_is_refused_clearly(tf_model, tmp_path, options):
    """A masked LSTM over a dynamic length is no nn.LSTM (masking) and cannot be
    unrolled: refused naming its step list, with or without --unroll-loops."""
    with pytest.raises(ConversionError) as info:
        convert(str(tf_model("keras_rnns") / "dynamic_masked"), str(tmp_path / "out"),
                target="onnx", options=options)
    assert "TensorListFromTensor node '" in info.value.message
    assert "not known at conversion time" in info.value.message
    assert "fixed sequence length" in info.value.message
    assert not (tmp_path / "out").exists()


def test_too_long_loop_is_refused(tf_model, tmp_path):
    with pytest.raises(ConversionError, match=r"StatelessWhile node 'PartitionedCall/long' "
                                              r"cannot be unrolled: it runs more than 4096"):
        convert(str(tf_model("tf_loops") / "long"), str(tmp_path / "out"), target="onnx",
                options=UNROLL)


def test_loops_are_unrolled_only_when_asked(tf_model, tmp_path):
    """Without --unroll-loops a While over TensorLists that is not a recognised
    layer (a masked LSTM) is refused, naming it and the flag."""
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model",
                   str(tf_model("keras_rnns") / "lstm_masked"), "--out", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    text = " ".join(proc.stderr.split())
    assert re.search(r"While node 'StatefulPartitionedCall/lstm_masked_1/[^']*' carries a "
                     r"TensorList", text), text
    assert "--unroll-loops converts it" in text and "Traceback" not in text
    assert not os.path.exists(out)


def test_tensorflow_reader_names_the_variant_op(tf_model, tmp_path):
    """--tf-reader tensorflow on a Keras LSTM: one line naming the TensorList
    op and why the TensorFlow reader ran (it was KeyError: 21)."""
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model",
                   str(tf_model("keras_rnns") / "lstm"), "--out", out, "--tf-reader",
                   "tensorflow")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "KeyError" not in proc.stderr
    text = " ".join(proc.stderr.split())
    assert re.search(r"TensorList\w+ node 'StatefulPartitionedCall/lstm_1/", text), text
    assert "makes a variant tensor" in text
    assert "(the TensorFlow reader ran because: --tf-reader tensorflow)" in text
    assert not os.path.exists(out)


# -- Keras recurrent layers as layers (issue 16) ---------------------------------

@pytest.mark.parametrize("model, targets", [("text", TARGETS), ("text.keras", ["torch"]),
                                            ("stacked", ["paddle"])])
def test_keras_sequence_models_become_recurrent_layers(tf_model, tmp_path, model, targets):
    """Embedding + Bidirectional(LSTM) + GRU (as a SavedModel and as a .keras
    file) and two stacked LSTMs: each layer is one nn.LSTM/nn.GRU, no loop left,
    with parity (without --unroll-loops: nothing is unrolled)."""
    path = tf_model("keras_text_rnn") / model
    for target in targets:
        out = tmp_path / target
        report = convert_then_check(str(path), str(out), target=target)
        result = check(str(path), str(out), target=target, rtol=RTOL, batch=3)
        for r in result["outputs"]:
            assert not r["ref_constant"] and r["ref_scale"] > 1e-2, r
            assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
        layers = sorted(report.source["reader"]["recurrent_layers"].values())
        assert layers == (["lstm", "lstm"] if model == "stacked" else ["gru", "lstm", "lstm"])
        assert not [op for op in report.ops_seen if "While" in op or "TensorList" in op]
        if target == "onnx":
            import onnx
            ops = [n.op_type for n in onnx.load(str(out / "model.onnx")).graph.node]
            assert sorted(o for o in ops if o in ("LSTM", "GRU")) == ["GRU", "LSTM"]
        else:
            code = (out / "model.py").read_text()
            # The Bidirectional wrapper's two LSTMs are one bidirectional layer.
            assert code.count("nn.LSTM(") == (2 if model == "stacked" else 1), code
            assert code.count("nn.GRU(") == layers.count("gru"), code


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_keras_gru_resetting_before_its_matmul_converts_without_unrolling(tf_model, tmp_path,
                                                                          target):
    """Keras GRU(reset_after=False) is an IR gru with linear_before_reset=0: model.py
    runs it as x2's own GRUResetBefore class (no nn.GRU computes it), with parity,
    and no loop is unrolled."""
    model = tf_model("keras_rnns") / "gru_reset_before"
    out = tmp_path / target
    report = convert_then_check(str(model), str(out), target=target)
    result = check(str(model), str(out), target=target, rtol=RTOL, batch=3)
    for r in result["outputs"]:
        assert not r["ref_constant"] and r["ref_scale"] > 1e-2, r
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    reader = report.source["reader"]
    assert list(reader["recurrent_layers"].values()) == ["gru"]
    assert "unrolled_loops" not in reader
    code = (out / "model.py").read_text()
    assert code.count("class GRUResetBefore(") == 1, code
    assert code.count("= GRUResetBefore(") == 1 and "nn.GRU(" not in code, code


# Dynamic-length models of tf_models.keras_text_rnn: their layers, and how many
# nn.LSTM the torch/Paddle code holds (Bidirectional's two LSTMs are one).
DYNAMIC = {"text_dynamic": (["gru", "lstm", "lstm"], 1), "stacked_dynamic": (["lstm", "lstm"], 2),
           "backwards_dynamic": (["gru"], 0)}


@pytest.mark.parametrize("model, targets", [("text_dynamic", TARGETS),
                                            ("stacked_dynamic", ["torch"]),
                                            ("backwards_dynamic", ["paddle"])])
def test_keras_recurrent_layers_over_a_dynamic_length(tf_model, tmp_path, model, targets):
    """Embedding + Bidirectional(LSTM) + GRU over (None, None) token ids, two
    stacked LSTMs and a GRU(go_backwards) over (None, None, 4): the loop's
    condition proves it runs once per step of its input, so each layer is one
    nn.LSTM/nn.GRU (ONNX LSTM/GRU) however long the sequence. One converted
    model, parity (rtol 1e-4) at two lengths: no shape constant fixes the length."""
    path = tf_model("keras_text_rnn") / model
    rng = np.random.default_rng(0)
    for target in targets:
        out = tmp_path / target
        report = convert_then_check(str(path), str(out), target=target)
        layers = sorted(report.source["reader"]["recurrent_layers"].values())
        assert layers == DYNAMIC[model][0]
        assert not [op for op in report.ops_seen if "While" in op or "TensorList" in op]
        assert report.inputs[0]["shape"][1] is None and report.transposes_left == 0
        references = []
        for length in (5, 9):
            x = rng.integers(1, 30, (3, length)).astype(np.int32) if model == "text_dynamic" \
                else rng.standard_normal((3, length, 4)).astype(np.float32)
            result = check(str(path), str(out), target=target, rtol=1e-4, inputs=[x])
            for r in result["outputs"]:
                assert not r["ref_constant"] and r["ref_scale"] > 1e-2, r
                assert r["passed"], f"{r['runner']} {r['name']} at length {length}: " \
                                    f"rel err {r['max_rel']:.3e}"
            references.append(result["outputs"][0]["ref_scale"])
        assert references[0] != references[1]   # the two lengths gave different outputs
        if target == "onnx":
            import onnx
            graph = onnx.load(str(out / "model.onnx")).graph
            assert sorted(n.op_type for n in graph.node if n.op_type in ("LSTM", "GRU")) == \
                ["GRU", "LSTM"]
            assert graph.input[0].type.tensor_type.shape.dim[1].dim_param
        else:
            code = (out / "model.py").read_text()
            assert code.count("nn.LSTM(") == DYNAMIC[model][1], code
            assert code.count("nn.GRU(") == layers.count("gru"), code


def test_a_reset_before_gru_over_a_dynamic_length(tf_model, tmp_path):
    """GRU(reset_after=False) over a run-time length: an ONNX GRU, and torch's
    GRUResetBefore class at any length; Paddle's traced inference model would
    fix the number of steps, so Paddle refuses it, saying so."""
    path = tf_model("keras_text_rnn") / "reset_before_dynamic"
    rng = np.random.default_rng(1)
    for target in ("onnx", "torch"):
        report = convert_then_check(str(path), str(tmp_path / target), target=target)
        assert list(report.source["reader"]["recurrent_layers"].values()) == ["gru"]
        for length in (3, 6):
            x = rng.standard_normal((2, length, 4)).astype(np.float32)
            result = check(str(path), str(tmp_path / target), target=target, rtol=1e-4,
                           inputs=[x])
            assert all(r["passed"] and not r["ref_constant"] for r in result["outputs"]), result
    with pytest.raises(ConversionError, match=r"linear_before_reset=0 .*over a dynamic number "
                                              r"of time steps"):
        convert_then_check(str(path), str(tmp_path / "paddle"), target="paddle")
    assert not (tmp_path / "paddle").exists()


def _forge(model, out, change):
    """A copy of the SavedModel with change(node) applied to every node of its functions."""
    import shutil
    from x2.frontends.tf.protos import messages
    shutil.copytree(model, out)
    saved = messages().SavedModel.FromString((out / "saved_model.pb").read_bytes())
    for function in saved.meta_graphs[0].graph_def.library.function:
        for node in function.node_def:
            change(node)
    (out / "saved_model.pb").write_bytes(saved.SerializeToString())
    return out


def _less_equal(node):   # the LSTMs' loop conditions become time <= T, counter <= T
    if node.op == "Less" and re.search(r"lstm[^/]*/while/Less", node.name):
        node.op = "LessEqual"


def _batch_bound(node):  # the LSTMs' T = Shape(time-major x)[0] becomes [1]: the batch
    if node.op == "Const" and re.search(r"lstm[^/]*/strided_slice_3/stack(_1)?$", node.name):
        tensor = node.attr["value"].tensor
        tensor.ClearField("tensor_content")
        tensor.int_val[:] = [2 if node.name.endswith("stack_1") else 1]


@pytest.mark.parametrize("change", [_less_equal, _batch_bound])
def test_a_dynamic_loop_not_proven_to_run_once_per_step_is_refused(tf_model, tmp_path, change):
    """The LSTM cell is intact but the condition is time <= T, or T is the batch
    size: not proven to run once per step, so not a layer, and refused."""
    model = _forge(tf_model("keras_text_rnn") / "stacked_dynamic", tmp_path / "forged", change)
    with pytest.raises(ConversionError) as info:
        convert(str(model), str(tmp_path / "out"), target="torch")
    assert re.search(r"TensorListFromTensor node '[^']*lstm[^']*': .*not known at "
                     r"conversion time", info.value.message), info.value.message
    assert not (tmp_path / "out").exists()


def test_a_cell_that_only_looks_like_an_lstm_is_unrolled(tf_model, tmp_path):
    """LSTM-shaped weights and gates but h = o * c: the numeric check refuses to
    call it an LSTM, so without --unroll-loops it is refused and with it the loop
    is unrolled, with parity."""
    model = tf_model("keras_text_rnn") / "lookalike"
    with pytest.raises(ConversionError, match="carries a TensorList"):
        convert(str(model), str(tmp_path / "refused"), target="torch")
    report, _ = _parity(model, tmp_path / "out", "torch")
    assert "recurrent_layers" not in report.source["reader"]
    assert set(report.source["reader"]["unrolled_loops"].values()) == {6}


def test_a_model_node_cannot_pose_as_a_recognised_layer(tf_model, tmp_path):
    """x2.KerasRecurrent is made by the reader only: a SavedModel whose node
    claims that op type is refused, naming the node."""
    import shutil
    from x2.frontends.tf.protos import messages
    model = tmp_path / "forged"
    shutil.copytree(tf_model("keras_rnns") / "lstm", model)
    saved = messages().SavedModel.FromString((model / "saved_model.pb").read_bytes())
    forged = [n for f in saved.meta_graphs[0].graph_def.library.function for n in f.node_def
              if n.op == "MatMul" and "head" in n.name]
    forged[0].op = "x2.KerasRecurrent"
    (model / "saved_model.pb").write_bytes(saved.SerializeToString())
    with pytest.raises(ConversionError, match=r"has op type 'x2.KerasRecurrent', which is not a "
                                              r"TensorFlow op"):
        convert(str(model), str(tmp_path / "out"), target="onnx")
    assert not (tmp_path / "out").exists()


# -- control flow kept as control flow (issue 16) --------------------------------

def _feeds(report, **arrays):
    """The inputs in the converted model's order (the signature's names)."""
    return [arrays[item["name"]] for item in report.inputs]


@pytest.mark.parametrize("target", TARGETS)
def test_runtime_while_and_cond_stay_control_flow(tf_model, tmp_path, target):
    """A tf.while_loop whose trip count depends on input values, and a tf.cond
    on the result, read without TensorFlow and written as a loop and a
    conditional: parity (rtol 1e-4, the issue's bar: the loop compounds
    rounding) for 0, 1 and several steps and both branches."""
    model = tf_model("tf_loops") / "runtime"
    out = tmp_path / target
    report = convert_then_check(str(model), str(out), target=target)
    assert report.source["reader"]["name"] == "direct"
    assert "unrolled_loops" not in report.source["reader"]
    x = np.full((2, 3), 0.1, np.float32)
    steps_seen = set()
    # A positive x keeps h positive (the then-branch), a negative one negative.
    # Steps: 0, 1, 49, 49 and 2 (a limit the loop never reaches would never end).
    for limit, scale in ((0.1, 1.0), (1.2, 1.0), (3.5, 1.0), (3.5, -1.0), (5.0, -4.0)):
        result = check(str(model), str(out), target=target, rtol=1e-4,
                       inputs=_feeds(report, x=x * scale, limit=np.array(limit, np.float32)))
        for r in result["outputs"]:
            assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
        reference = {r["name"]: r for r in result["outputs"]}
        steps_seen.add(reference["steps"]["ref_scale"])
    assert len(steps_seen) >= 3, steps_seen   # several trip counts, 0 included
    if target == "onnx":
        import onnx
        ops = [n.op_type for n in onnx.load(str(out / "model.onnx")).graph.node]
        assert "Loop" in ops and "If" in ops, ops
    else:
        code = (out / "model.py").read_text()
        assert "while " in code and "if " in code, code


def test_loop_with_input_trip_count_converts_without_unrolling(tf_model, tmp_path):
    model = tf_model("tf_loops") / "dynamic"
    out = tmp_path / "out"
    report = convert_then_check(str(model), str(out), target="paddle")
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    for steps in (0, 2, 7):
        result = check(str(model), str(out), target="paddle", rtol=1e-4,
                       inputs=_feeds(report, x=x, steps=np.array(steps, np.int32)))
        assert all(r["passed"] for r in result["outputs"]), result["outputs"]


@pytest.mark.parametrize("target", TARGETS)
def test_switch_case_on_a_runtime_index_is_nested_ifs(tf_model, tmp_path, target):
    """tf.switch_case on an input index, read without TensorFlow: nested ifs
    (index == k), the last branch the default, with parity for every branch
    and for indices out of range (TF runs the last branch); a switch_case on an
    index known when the model is read is its one branch, inlined."""
    model = tf_model("tf_switch_case")
    out = tmp_path / target
    report = convert_then_check(str(model), str(out), target=target)
    assert report.source["reader"]["name"] == "direct"
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    scales = {}
    for index in (0, 1, 2, 3, -1):
        result = check(str(model), str(out), target=target, rtol=RTOL,
                       inputs=_feeds(report, x=x, index=np.array(index, np.int32)))
        for r in result["outputs"]:   # (Paddle: model.py and the inference program)
            assert r["passed"], f"{index}: {r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
        scales[index] = result["outputs"][0]["ref_scale"]
    assert len({scales[0], scales[1], scales[2]}) == 3, scales   # each branch its own
    assert scales[3] == scales[-1] == scales[2], scales           # out of range: the last
    if target == "onnx":
        import onnx
        graph = onnx.load(str(out / "model.onnx")).graph
        (node,) = [n for n in graph.node if n.op_type == "If"]
        orelse = next(a.g for a in node.attribute if a.name == "else_branch")
        assert [n.op_type for n in orelse.node].count("If") == 1   # index == 1, else 2
    else:
        code = (out / "model.py").read_text()
        forward = code[code.index("def forward"):code.index("def load_model")]
        # if index == 0: ... else: if index == 1: ... else: ...
        assert [line.strip()[:3] for line in forward.splitlines()
                if line.strip().startswith(("if ", "else:"))] == ["if ", "els", "if ", "els"], \
            forward
