"""Recurrent layers (issue 16): ONNX LSTM/GRU/RNN become one IR op each, written
as the target's own recurrent layer (nn.LSTM, nn.GRU, ...) with parity against
onnxruntime. fp32 tolerance 1e-5 relative: a handful of small matmuls per step."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, convert_then_check
from x2.convert import convert
from x2.errors import ConversionError
from x2.check.parity import check

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("rnn")

RTOL = 1e-5


def _rnn_model(path, kind, direction="forward", seq_lens=False, init=False, lbr=1,
               activation=None, steps=5, batch=3, size=4, hidden=6):
    import onnx
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    rng = np.random.default_rng(len(kind) + len(direction))
    dirs = 2 if direction == "bidirectional" else 1
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    weights = [rng.standard_normal(s).astype(np.float32) * 0.5 for s in (
        (dirs, gates * hidden, size), (dirs, gates * hidden, hidden), (dirs, 2 * gates * hidden))]
    inits = [nh.from_array(a, n) for a, n in zip(weights, "WRB")]
    state_shape = [dirs, batch, hidden]
    ins = [h.make_tensor_value_info("X", T.FLOAT, [steps, batch, size])]
    node_in = ["X", "W", "R", "B", "seq" if seq_lens else ""]
    if seq_lens:
        ins.append(h.make_tensor_value_info("seq", T.INT32, [batch]))
    if init:
        states = ["h0", "c0"] if kind == "LSTM" else ["h0"]
        ins += [h.make_tensor_value_info(s, T.FLOAT, state_shape) for s in states]
        node_in += states
    outs = ["Y", "Y_h", "Y_c"][:3 if kind == "LSTM" else 2]
    attrs = {"hidden_size": hidden, "direction": direction}
    if kind == "GRU":
        attrs["linear_before_reset"] = lbr
    if activation:
        attrs["activations"] = [activation] * dirs
    while not node_in[-1]:
        node_in.pop()
    node = h.make_node(kind, node_in, outs, **attrs)
    shapes = {"Y": [steps, dirs, batch, hidden], "Y_h": state_shape, "Y_c": state_shape}
    graph = h.make_graph([node], "rnn", ins,
                         [h.make_tensor_value_info(o, T.FLOAT, shapes[o]) for o in outs], inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)
    return path


def _assert_parity(result):
    assert result["outputs"]
    for r in result["outputs"]:
        assert not r["ref_constant"] and r["ref_scale"] > 1e-2, r
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"


def test_ir_kernels_match_onnxruntime(tmp_path):
    """The numpy reference kernels against onnxruntime, every direction, with
    and without sequence lengths and initial states."""
    import onnxruntime as ort
    from x2.contracts import ReadRequest
    from x2.frontends.onnx.reader import read_ir
    from x2.ir.interpret import interpret
    rng = np.random.default_rng(0)
    checked = 0
    for kind in ("LSTM", "GRU", "RNN"):
        for direction in ("forward", "reverse", "bidirectional"):
            for seq_lens, init in ((False, False), (True, True)):
                path = _rnn_model(tmp_path / f"{kind}_{direction}_{seq_lens}.onnx", kind,
                                  direction, seq_lens, init, lbr=0 if kind == "GRU" else 1)
                session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
                feeds = {i.name: (np.array([5, 2, 4], np.int32) if i.name == "seq" else
                                  rng.standard_normal(i.shape).astype(np.float32))
                         for i in session.get_inputs()}
                graph, _ = read_ir(ReadRequest(model=str(path)))
                got = interpret(graph, [feeds[name] for name in graph.inputs])
                for want, have in zip(session.run(None, feeds), got):
                    np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)
                    checked += 1
    assert checked == 42


@pytest.fixture(scope="module")
def text_classifier(tmp_path_factory):
    """torch.onnx.export (TorchScript exporter) of Embedding -> bidirectional
    LSTM -> GRU -> Linear, as users export recurrent text models."""
    path = tmp_path_factory.mktemp("rnn") / "text.onnx"
    code = f"""
import torch
torch.manual_seed(0)
class Text(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(50, 8)
        self.lstm = torch.nn.LSTM(8, 12, bidirectional=True, batch_first=True)
        self.gru = torch.nn.GRU(24, 10, batch_first=True)
        self.head = torch.nn.Linear(10, 3)
    def forward(self, ids):
        x, _ = self.lstm(self.emb(ids))
        x, h = self.gru(x)
        return self.head(h[-1])
torch.onnx.export(Text().eval(), (torch.randint(0, 50, (2, 7)),), {str(path)!r}, dynamo=False,
                  input_names=["ids"], output_names=["logits"], opset_version=17)
"""
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV, capture_output=True)
    return path


@pytest.mark.parametrize("target", ["torch", "paddle", "onnx"])
def test_exported_lstm_gru_become_layers(text_classifier, tmp_path, target):
    out = tmp_path / target
    convert_then_check(str(text_classifier), str(out), source="onnx", target=target)
    _assert_parity(check(str(text_classifier), str(out), source="onnx", target=target,
                         rtol=RTOL))
    if target == "onnx":
        import onnx
        ops = [n.op_type for n in onnx.load(str(out / "model.onnx")).graph.node]
        assert ops.count("LSTM") == 1 and ops.count("GRU") == 1, ops
        return
    code = (out / "model.py").read_text()
    assert code.count("nn.LSTM(") == 1 and code.count("nn.GRU(") == 1, code
    # The exporter's zero initial states (of the example's batch) are dropped, and its
    # Transpose/Reshape after the LSTM cancel against the IR's own (in the model;
    # Paddle's load_source_checkpoint reshapes checkpoint arrays).
    model = code.split("def load_model")[0]
    assert "reshape" not in model and "expand" not in model, code


@pytest.mark.parametrize("target", ["torch", "paddle", "onnx"])
def test_bidirectional_lstm_with_lengths_and_states(tmp_path, target):
    model = _rnn_model(tmp_path / "lstm.onnx", "LSTM", "bidirectional", seq_lens=True,
                       init=True)
    convert_then_check(str(model), str(tmp_path / target), source="onnx", target=target)
    _assert_parity(check(str(model), str(tmp_path / target), source="onnx", target=target,
                         rtol=RTOL))


@pytest.mark.parametrize("kind,direction,activation", [("GRU", "reverse", None),
                                                       ("RNN", "bidirectional", "Relu")])
def test_gru_and_rnn(tmp_path, kind, direction, activation):
    model = _rnn_model(tmp_path / "m.onnx", kind, direction, init=True, activation=activation)
    for target in ("torch", "paddle"):
        convert_then_check(str(model), str(tmp_path / target), source="onnx", target=target)
        _assert_parity(check(str(model), str(tmp_path / target), source="onnx",
                             target=target, rtol=RTOL))


@pytest.mark.parametrize("direction,seq_lens", [("forward", True), ("reverse", True),
                                               ("bidirectional", False)])
def test_gru_resetting_before_its_matmul_becomes_x2s_own_class(tmp_path, direction, seq_lens):
    """linear_before_reset=0 (ONNX's default), which no nn.GRU computes: model.py
    defines GRUResetBefore and runs it with parity; onnx keeps the GRU."""
    model = _rnn_model(tmp_path / "gru.onnx", "GRU", direction, seq_lens=seq_lens, init=True,
                       lbr=0)
    for target in ("torch", "paddle", "onnx"):
        convert_then_check(str(model), str(tmp_path / target), source="onnx", target=target)
        _assert_parity(check(str(model), str(tmp_path / target), source="onnx",
                             target=target, rtol=RTOL))
        if target != "onnx":
            code = (tmp_path / target / "model.py").read_text()
            assert code.count("class GRUResetBefore(") == 1 and "nn.GRU(" not in code, code


def test_gru_resetting_before_its_matmul_over_any_number_of_steps(tmp_path):
    """With the number of time steps dynamic, torch's GRUResetBefore runs any
    of them (parity at 2 and 7 steps); Paddle's jit.save would trace it with
    the steps unknown, so Paddle refuses it, naming why."""
    import onnx
    model = onnx.load(str(_rnn_model(tmp_path / "fixed.onnx", "GRU", lbr=0)))
    for value in (model.graph.input[0], *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "steps"
    onnx.save(model, tmp_path / "gru.onnx")
    path = str(tmp_path / "gru.onnx")
    convert_then_check(path, str(tmp_path / "torch"), source="onnx", target="torch")
    rng = np.random.default_rng(2)
    for steps in (2, 7):
        x = rng.standard_normal((steps, 3, 4)).astype(np.float32)
        _assert_parity(check(path, str(tmp_path / "torch"), source="onnx", target="torch",
                             rtol=RTOL, inputs=[x]))
    with pytest.raises(ConversionError, match="dynamic number of time steps"):
        convert_then_check(path, str(tmp_path / "paddle"), source="onnx", target="paddle")


def test_gru_resetting_before_its_matmul_differs_from_nn_gru(tmp_path):
    """The parity above can fail: the same weights with linear_before_reset=1
    (what nn.GRU computes) give other outputs, and the lengths matter."""
    import onnxruntime as ort
    outs = []
    for lbr in (0, 1):
        model = _rnn_model(tmp_path / f"gru{lbr}.onnx", "GRU", seq_lens=True, lbr=lbr)
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        x = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(np.float32)
        for lens in ([5, 5, 5], [5, 2, 1]):
            outs.append(session.run(None, {"X": x, "seq": np.array(lens, np.int32)})[0])
    assert not np.allclose(outs[0], outs[2], rtol=1e-3)   # lbr 0 vs 1
    assert not np.allclose(outs[0], outs[1], rtol=1e-3)   # lengths


def test_peepholes_are_refused_by_name(tmp_path):
    import onnx
    from onnx import numpy_helper as nh
    model = onnx.load(str(_rnn_model(tmp_path / "lstm.onnx", "LSTM")))
    model.graph.initializer.append(nh.from_array(np.zeros((1, 18), np.float32), "P"))
    model.graph.node[0].input[:] = ["X", "W", "R", "B", "", "", "", "P"]
    onnx.save(model, tmp_path / "peep.onnx")
    with pytest.raises(ConversionError, match="LSTM '.*': the peephole input P"):
        convert(str(tmp_path / "peep.onnx"), str(tmp_path / "out"), source="onnx",
                target="torch")
