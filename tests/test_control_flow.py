"""Structured control flow (issue 16): the IR's `if` and `loop` with closed
subgraphs, from ONNX If/Loop/Scan (and torch.cond) to Python if/while in
torch and Paddle (the Paddle inference model holds static control flow) and
ONNX If/Loop, with parity against the source on inputs that take both
branches, stop loops at several trip counts and scan sequences of two
lengths. fp32 tolerance 1e-4 relative (the issue's bar): loops compound
rounding over their steps.

A TorchScript file with prim::Loop (a for loop over an input's size, a while
loop on a value) and prim::If (issue 49) converts on every target: one
conversion each, x2 check at three sizes per dynamic dim (Paddle Inference
included) and on inputs that run the while loop 0 and 9+ steps (about 25 s
a target on 2 cores). An ONNX while loop of trip count INT64_MAX runs in
Paddle's static program (about 6 s)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import control_flow_models as models
from conftest import convert_then_check
from x2.convert import convert
from x2.ir import Graph, TensorInfo
from x2.ir.interpret import interpret
from x2.ir.lint import LintError
from x2.check.parity import check

RTOL = 1e-4
TORCH_MODULES = Path(__file__).resolve().parent / "control_flow_torch.py"


def _branch(op: str) -> Graph:
    g = Graph()
    g.add_input("a", "float32", (2,))
    g.add_constant("k", np.float32(3))
    g.add_node(op, ["a", "k"], name="r")
    g.info["r"] = g.info["a"]
    g.outputs = ["r"]
    return g


def _counting_body() -> Graph:
    """acc * w + iteration, until sum(acc) >= 100; each step's acc is scanned."""
    g = Graph()
    g.add_input("i", "int64", ())
    g.add_input("c", "bool", ())
    g.add_input("acc", "float32", (2,))
    g.add_input("w", "float32", (2,))
    g.add_node("mul", ["acc", "w"], name="m")
    g.add_node("cast", ["i"], attrs={"dtype": "float32"}, name="fi")
    g.add_node("add", ["m", "fi"], name="n")
    g.add_node("reduce_sum", ["n"], attrs={"axes": [0], "keepdims": False}, name="s")
    g.add_constant("limit", np.float32(100))
    g.add_node("less", ["s", "limit"], name="more")
    for v, dtype, shape in (("m", "float32", (2,)), ("fi", "float32", ()),
                            ("n", "float32", (2,)), ("s", "float32", ()), ("more", "bool", ())):
        g.info[v] = TensorInfo(dtype, shape)
    g.outputs = ["more", "n", "n"]
    return g


def _cf_graph() -> Graph:
    g = Graph()
    g.add_input("x", "float32", (2,))
    g.add_input("p", "bool", ())
    g.add_input("t", "int64", ())
    g.add_node("if", ["p", "x"], attrs={"then_branch": _branch("add"),
                                        "else_branch": _branch("mul")}, name="cond",
               outputs=["y"])
    g.info["y"] = g.info["x"]
    g.add_constant("go", np.array(True))
    g.add_node("loop", ["t", "go", "y", "x"], attrs={"body": _counting_body(), "carried": 1},
               name="lp", outputs=["final", "steps"])
    g.info["final"] = g.info["x"]
    g.info["steps"] = TensorInfo("float32", (None, 2))
    g.outputs = ["final", "steps"]
    return g


def test_ir_semantics_branches_and_trip_counts():
    """The reference kernels: the branch follows `cond`; the loop stops at the
    trip count or when its condition turns false, whichever comes first."""
    g = _cf_graph()
    g.lint()
    x = np.array([1.0, 2.0], np.float32)
    runs = {}
    for p in (True, False):
        for t in (0, 2, 5):
            final, steps = interpret(g, [x, np.array(p), np.array(t, np.int64)])
            runs[p, t] = (final, steps)
    np.testing.assert_array_equal(runs[True, 0][0], x + 3)    # no step: the branch's value
    np.testing.assert_array_equal(runs[False, 0][0], x * 3)
    assert runs[True, 0][1].shape == (0, 2)
    np.testing.assert_array_equal(runs[True, 2][0], [5.0, 21.0])  # (4,5)*(1,2)+0, *(1,2)+1
    assert runs[True, 2][1].shape == (2, 2)
    assert runs[True, 5][1].shape == (4, 2), "the condition stops it after 4 steps"
    np.testing.assert_array_equal(runs[True, 5][1][-1], runs[True, 5][0])


def test_the_float64_run_stays_float64_through_branches_and_loops(monkeypatch):
    """The ONNX target's float64 second opinion (x2/ir/float64.py): float32
    inputs, constants and casts inside `if` and `loop` bodies widen, and the
    result is the graph's math done in float64 step for step; a computed
    reshape runs too. An op without a kernel, or a kernel that narrows to
    float32 (inside the loop body), gives no opinion. Milliseconds."""
    from x2.ir import float64
    x = np.array([0.1, 1 / 3], np.float32)
    feeds = [x, np.array(False), np.array(5, np.int64)]   # the mul branch, then the loop
    final, steps = float64.interpret_float64(_cf_graph(), feeds)
    acc, w, expected = x.astype(np.float64) * 3, x.astype(np.float64), []
    for i in range(5):
        acc = acc * w + float(i)
        expected.append(acc)
        if not acc.sum() < 100:
            break
    assert final.dtype == steps.dtype == np.float64
    np.testing.assert_array_equal(final, acc)
    np.testing.assert_array_equal(steps, np.stack(expected))
    assert np.any(final != interpret(_cf_graph(), feeds)[0])   # not float32's result

    g = Graph()   # a computed reshape (no kernel in the op table), then an op x2 lacks
    g.add_input("x", "float32", (2,))
    g.add_constant("shape", np.array([-1, 1], np.int64))
    g.add_node("reshape_dynamic", ["x", "shape"], name="r")
    g.outputs = ["r"]
    (column,) = float64.interpret_float64(g, [x])
    assert column.dtype == np.float64 and column.shape == (2, 1)
    g.add_node("an_op_without_a_kernel", ["r"], name="unknown")
    g.outputs = ["unknown"]
    with pytest.raises(float64.NoFloat64Run, match="no numpy kernel for IR op 'an_op_with"):
        float64.interpret_float64(g, [x])

    kernels = float64.evaluate

    def narrowing_add(op, arrays, attrs):
        result = kernels(op, arrays, attrs)
        return [r.astype(np.float32) for r in result] if op == "add" else result
    monkeypatch.setattr(float64, "evaluate", narrowing_add)
    with pytest.raises(float64.NoFloat64Run, match="'add' returns float32"):
        float64.interpret_float64(_cf_graph(), feeds)


def test_ir_serialization_keeps_subgraphs(tmp_path):
    from x2.ir.serialize import load_graph, save_graph
    g = _cf_graph()
    save_graph(g, tmp_path)
    again = load_graph(tmp_path)
    again.lint()
    body = again.nodes[-1].attrs["body"]
    assert body.inputs == ["i", "c", "acc", "w"] and float(body.constants["limit"]) == 100
    feeds = [np.array([0.5, -1.0], np.float32), np.array(False), np.array(3, np.int64)]
    for a, b in zip(interpret(g, feeds), interpret(again, feeds)):
        np.testing.assert_array_equal(a, b)


def test_lint_checks_subgraph_interfaces_and_contents():
    g = _cf_graph()
    g.nodes[-1].attrs["body"].outputs = ["more", "n"]       # a scan output gone
    g.nodes[0].attrs["then_branch"].nodes[0].inputs = ["a", "nowhere"]
    with pytest.raises(LintError) as info:
        g.lint()
    text = str(info.value)
    assert "body gives 2 outputs, the node needs 3" in text
    assert "in then_branch of node 'cond' (if)" in text and "undefined value 'nowhere'" in text


def test_passes_run_inside_bodies():
    """fold_constants reaches into a body: constant arithmetic there is folded."""
    from x2.passes import run_pipeline
    g = _cf_graph()
    body = g.nodes[-1].attrs["body"]
    body.add_constant("two", np.float32(2))
    body.add_constant("three", np.float32(3))
    body.add_node("add", ["two", "three"], name="five")
    body.add_node("mul", ["n", "five"], name="scaled")
    body.info["five"], body.info["scaled"] = TensorInfo("float32", ()), TensorInfo("float32", (2,))
    body.outputs = ["more", "n", "scaled"]
    feeds = [np.array([1.0, 2.0], np.float32), np.array(True), np.array(3, np.int64)]
    want = interpret(g, feeds)
    g, _ = run_pipeline(g)
    body = g.nodes[-1].attrs["body"]
    assert "add" in [n.op for n in body.nodes] and body.count("add") == 1, body.nodes
    for a, b in zip(want, interpret(g, feeds)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def _assert_parity(result):
    assert result["outputs"]
    for r in result["outputs"]:
        assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"


def _check_cases(model, out, target, cases, source="onnx"):
    for inputs in cases:
        _assert_parity(check(str(model), str(out), source=source, target=target, rtol=RTOL,
                             inputs=inputs))


TARGETS = ["torch", "paddle", "onnx"]


@pytest.mark.parametrize("target", TARGETS)
def test_onnx_if_takes_both_branches(tmp_path, target):
    model = models.if_model(tmp_path / "if.onnx")
    out = tmp_path / target
    convert(str(model), str(out), source="onnx", target=target)
    rng = np.random.default_rng(0)
    x = np.abs(rng.standard_normal((3, 4))).astype(np.float32)
    _check_cases(model, out, target, [[x], [-x]])
    _assert_structure(out, target, python="if ", onnx="If")


@pytest.mark.parametrize("target", TARGETS)
def test_onnx_loop_with_runtime_trip_count_and_condition(tmp_path, target):
    import onnxruntime as ort
    model = models.loop_model(tmp_path / "loop.onnx")
    out = tmp_path / target
    convert(str(model), str(out), source="onnx", target=target)
    rng = np.random.default_rng(1)
    small = (rng.standard_normal((2, 3)) * 0.1).astype(np.float32)
    big = np.full((2, 3), 3.0, np.float32)   # saturates tanh: the condition stops it early
    cases = [[small, np.array(n, np.int64), small] for n in (1, 3, 6)] + \
        [[big, np.array(6, np.int64), small]]
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    trips = [session.run(None, dict(zip(["x", "n", "h0"], c)))[1].shape[0] for c in cases]
    assert trips == [1, 3, 6, 1], trips   # the cases do exercise both ways to stop
    _check_cases(model, out, target, cases)
    _assert_structure(out, target, python="while ", onnx="Loop")


def test_a_while_loop_of_trip_count_int64_max_runs_in_paddles_static_program(tmp_path):
    """ONNX Loop with M = 2**63 - 1 (torch.onnx's while loop): Paddle's static
    program holds that literal as a double (-2**63 after jit.save), so the
    code leaves the trip count out and the condition ends the loop, in
    jit.load and Paddle Inference too (0 and 6 steps)."""
    model = models.unbounded_while_model(tmp_path / "while.onnx")
    out = tmp_path / "paddle"
    convert_then_check(str(model), str(out), source="onnx", target="paddle")
    assert str(2 ** 63 - 1) not in (out / "model.py").read_text()
    x = np.full(3, 0.25, np.float32)
    for limit in (0.5, 100.0):   # 0.75 >= 0.5: no step; 100: 6 steps
        result = check(str(model), str(out), source="onnx", target="paddle", rtol=RTOL,
                       inputs=[x, np.array(limit, np.float32)], serving=True)
        assert {r["runner"] for r in result["outputs"]} == {
            "paddle:python", "paddle:jit.load", "paddle:inference"}
        _assert_parity(result)


@pytest.mark.parametrize("target", TARGETS)
def test_onnx_scan_reversed_on_axis_1_over_two_lengths(tmp_path, target):
    model = models.scan_model(tmp_path / "scan.onnx")
    out = tmp_path / target
    convert(str(model), str(out), source="onnx", target=target)
    rng = np.random.default_rng(2)
    cases = [[rng.standard_normal((2, 3)).astype(np.float32),
              rng.standard_normal((2, steps, 3)).astype(np.float32)] for steps in (2, 5)]
    _check_cases(model, out, target, cases)
    _assert_structure(out, target, python="while ", onnx="Loop")


@pytest.mark.parametrize("target", TARGETS)
def test_torchscript_loops_over_sizes_and_values(tmp_path, target):
    """torch.jit.script's prim::Loop, which torch's own converter unrolls only
    at a constant trip count, read as while loops: the for loop's trip count
    follows the input's size, the while loop's the input's values."""
    from control_flow_torch import save_scripted_loops
    model = save_scripted_loops(tmp_path / "loops.pt")
    out = tmp_path / target
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes={"xs": ["t=4", "batch", 3], "limit": [1]})
    # ops_seen counts the top level: the nested loop is inside the first
    assert report.ops_seen.get("while_loop") == 2 and report.ops_seen.get("cond") == 1, \
        report.ops_seen
    result = check(model, str(out), source="torch", target=target, rtol=RTOL,
                   dim_sizes={"t": [4, 1, 7], "batch": [2, 1, 3]}, serving=target == "paddle")
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [4, 2, 3], [1, 1, 3], [7, 3, 3]]
    if target == "paddle":
        assert "paddle:inference" in {r["runner"] for r in result["outputs"]}
    _assert_parity(result)
    xs = np.random.default_rng(6).standard_normal((5, 2, 3)).astype(np.float32)
    # limit 0: no doubling; limit 500: sum|y| (at most 12) doubles past 4000 in 9+ steps
    _check_cases(model, out, target, [[xs, np.array([v], np.float32)] for v in (0.0, 500.0)],
                 source="torch")
    _assert_structure(out, target, python="while ", onnx="Loop")
    if target != "onnx":   # three loops, none unrolled
        assert (out / "model.py").read_text().count("while ") == 3


def _assert_structure(out, target, python: str, onnx: str):
    """The control flow stays control flow: no unrolling, no silent constant branch."""
    if target == "onnx":
        import onnx as onnx_lib
        ops = [n.op_type for n in onnx_lib.load(str(out / "model.onnx")).graph.node]
        assert onnx in ops, ops
        return
    code = (out / "model.py").read_text()
    assert python in code, code
    if target == "paddle":
        assert (out / "inference").is_dir()


@pytest.mark.parametrize("target", TARGETS)
def test_torch_cond_takes_both_branches(tmp_path, target):
    model = f"{TORCH_MODULES}:gate"
    out = tmp_path / target
    convert(model, str(out), source="torch", target=target, input_shapes={"x": [2, 4]})
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    # The predicate is mean(tanh(inp(x))) > 0: x and -x land on either side
    # (the layer's bias is small next to the input's spread).
    _check_cases(model, out, target, [[x * 3], [-x * 3]], source="torch")
    _assert_structure(out, target, python="if ", onnx="If")
    if target != "onnx":   # the branch's layer stays a layer, named after its parameter
        assert "self.up(" in (out / "model.py").read_text()


@pytest.mark.parametrize("target", TARGETS)
def test_torch_while_loop_runs_as_long_as_the_input_says(tmp_path, target):
    model = f"{TORCH_MODULES}:doubling"
    out = tmp_path / target
    convert(model, str(out), source="torch", target=target,
            input_shapes={"x": [2, 3], "limit": [1]})
    x = np.full((2, 3), 0.25, np.float32)
    limits = (1.0, 5.0, 100.0)   # 0, 1 and 5 steps
    _check_cases(model, out, target, [[x, np.array([v], np.float32)] for v in limits],
                 source="torch")
    _assert_structure(out, target, python="while ", onnx="Loop")


def _exported(out, example):
    """torch.export of the converted model: the higher-order ops it kept."""
    import torch
    from x2.emitters.codegen import import_generated
    model = import_generated(out / "model.py").load_model()
    program = torch.export.export(model, tuple(torch.from_numpy(a) for a in example))
    kept = [str(n.target) for n in program.graph.nodes
            if n.op == "call_function" and str(n.target) in ("cond", "while_loop")]
    return model, program.module(), kept


def _same(eager, exported, inputs):
    import torch
    xs = [torch.from_numpy(a) for a in inputs]
    want, got = eager(*xs), exported(*xs)
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("source", ["torch", "onnx"])
def test_exportable_torch_output_stays_control_flow_under_torch_export(tmp_path, source):
    """--exportable: torch.cond / while_loop in model.py, so torch.export of
    the converted model keeps both branches and any trip count; exported and
    eager agree on inputs other than the one it was exported with."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    if source == "torch":
        model, shapes = f"{TORCH_MODULES}:gate", {"x": [2, 4]}
        cases, call = [[x * 3], [-x * 3]], "torch.cond("
    else:
        model, shapes = models.if_model(tmp_path / "if.onnx"), None
        x = np.abs(rng.standard_normal((3, 4))).astype(np.float32)
        cases, call = [[x], [-x]], "torch.cond("
    out = tmp_path / "torch"
    convert(str(model), str(out), source=source, target="torch", input_shapes=shapes,
            emit_options={"exportable": True})
    _check_cases(model, out, "torch", cases, source=source)
    code = (out / "model.py").read_text()
    assert call in code and "\n        if " not in code, code
    eager, exported, kept = _exported(out, cases[0])
    assert kept == ["cond"], kept
    for inputs in cases:
        _same(eager, exported, inputs)


def test_exportable_while_loop_keeps_a_runtime_trip_count(tmp_path):
    model = f"{TORCH_MODULES}:doubling"
    out = tmp_path / "torch"
    convert(model, str(out), source="torch", target="torch",
            input_shapes={"x": [2, 3], "limit": [1]}, emit_options={"exportable": True})
    x = np.full((2, 3), 0.25, np.float32)
    cases = [[x, np.array([v], np.float32)] for v in (1.0, 5.0, 100.0)]   # 0, 1, 5 steps
    _check_cases(model, out, "torch", cases, source="torch")
    code = (out / "model.py").read_text()
    assert "torch._higher_order_ops.while_loop(" in code and "while " not in code, code
    eager, exported, kept = _exported(out, cases[1])
    assert kept == ["while_loop"], kept
    for inputs in cases:
        _same(eager, exported, inputs)


def test_exportable_refuses_what_while_loop_cannot_write(tmp_path):
    from x2.errors import X2Error
    model = models.loop_model(tmp_path / "loop.onnx")   # stacks a per-step output
    with pytest.raises(X2Error, match="scan outputs.*without --exportable"):
        convert(str(model), str(tmp_path / "torch"), source="onnx", target="torch",
                emit_options={"exportable": True})
    with pytest.raises(X2Error, match="--exportable.*--to torch only"):
        convert(str(model), str(tmp_path / "paddle"), source="onnx", target="paddle",
                emit_options={"exportable": True})
    assert not (tmp_path / "torch").exists() and not (tmp_path / "paddle").exists()


def _endless_loop(trip: str) -> Graph:
    """acc + 1 while the body passes its condition on unchanged: only a trip
    count (`trip`, or "" for none) ends it."""
    body = Graph()
    body.add_input("i", "int64", ())
    body.add_input("c", "bool", ())
    body.add_input("acc", "float32", (2,))
    body.add_constant("one", np.float32(1))
    body.add_node("add", ["acc", "one"], name="n")
    body.info["n"] = body.info["acc"]
    body.outputs = ["c", "n"]
    g = Graph()
    g.add_input("x", "float32", (2,))
    g.add_input("t", "int64", ())
    g.add_node("loop", [trip, "", "x"], attrs={"body": body, "carried": 1}, name="lp",
               outputs=["final"])
    g.info["final"] = g.info["x"]
    g.outputs = ["final"]
    return g


@pytest.mark.parametrize("exportable", [False, True])
def test_both_loop_forms_agree_on_what_ends_a_loop(exportable):
    """A loop with a trip count and a body that passes its condition on keeps
    no keep_going variable; without the trip count it is refused (never ends)."""
    from x2.emitters.codegen import generate_module
    from x2.emitters.torch_ops import TORCH_OPS, TorchContext
    from x2.errors import X2Error

    def code(graph):
        e = TorchContext(graph)
        e.export_control_flow = exportable
        return generate_module(e, TORCH_OPS, [], [], [])[0]

    text = code(_endless_loop("t"))
    assert ("while_loop(" in text) == exportable and "keep_going" not in text, text
    with pytest.raises(X2Error, match="neither a trip count nor a condition.*never end"):
        code(_endless_loop(""))


@pytest.mark.parametrize("target", TARGETS)
def test_torch_scan_over_two_sequence_lengths(tmp_path, target):
    """torch.export's scan (a carried state through a layer, stacked outputs;
    a reverse scan over dim 1) is a loop over dim 0 with its outputs stacked:
    parity at two sequence lengths (dim 0 dynamic: --dynamic-batch)."""
    model = f"{TORCH_MODULES}:running"
    out = tmp_path / target
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes={"xs": [4, 3]}, options={"dynamic_batch": True})
    assert "scan" in report.ops_seen, report.ops_seen
    rng = np.random.default_rng(5)
    for steps in (2, 6):
        xs = rng.standard_normal((steps, 3)).astype(np.float32)
        result = check(model, str(out), source="torch", target=target, rtol=RTOL, inputs=[xs])
        assert len(result["outputs"]) >= 4
        for r in result["outputs"]:
            assert not r["ref_constant"] and r["ref_scale"] > 1e-2, r
            assert r["passed"], f"{r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
    _assert_structure(out, target, python="while ", onnx="Loop")
