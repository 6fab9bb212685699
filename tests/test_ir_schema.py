"""The IR contract as code: every op has a complete, consistent schema; every
emitter has code for every op (or the schema says why not); Graph.lint finds
each kind of broken node; the producer/consumer lists Graph maintains stay
right through every kind of edit; schema defaults reach every node."""
import importlib
import json

import numpy as np
import pytest

from x2.ir import Graph, Node, load_graph, save_graph
from x2.ir.lint import LintError
from x2.ir.ops import OPS, evaluate
from x2.ir.schema import TARGETS
from x2.passes import run_pipeline

from conftest import run_cli

# Where each target's emitter registry lives: {IR op name: function}.
REGISTRIES = {"paddle": ("x2.emitters.paddle_ops", "PADDLE_OPS"),
              "onnx": ("x2.emitters.onnx_ops", "ONNX_OPS"),
              "torch": ("x2.emitters.torch_ops", "TORCH_OPS")}


def _registry(target: str) -> dict:
    module, name = REGISTRIES[target]
    return getattr(importlib.import_module(module), name)


# -- the schemas --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(OPS))
def test_schema_is_complete_and_consistent(name):
    opdef = OPS[name]
    assert opdef.name == name
    assert opdef.problems() == []


def test_every_op_but_reshape_dynamic_has_a_kernel():
    """if/loop run subgraphs: the interpreter holds their kernels (x2/ir/interpret.py)."""
    from x2.ir.interpret import _CONTROL_FLOW
    assert [name for name, opdef in OPS.items() if opdef.kernel is None] == \
        ["reshape_dynamic", "if", "loop"]
    assert sorted(_CONTROL_FLOW) == ["if", "loop"]


# -- emitter coverage, one test per IR op and target ----------------------------

@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(OPS))
def test_emitter_has_code_for_op(name, target):
    reason = OPS[name].unsupported.get(target)
    table = _registry(target)
    if reason:
        assert name not in table, f"{target} emits {name}, but its schema says: {reason}"
    else:
        assert name in table, (f"no {target} code for IR op {name}: register a function in "
                               f"{REGISTRIES[target][0]}, or set OPS[{name!r}].unsupported"
                               f"[{target!r}] to the reason")


@pytest.mark.parametrize("target", TARGETS)
def test_emitters_register_only_ir_ops(target):
    assert sorted(set(_registry(target)) - set(OPS)) == []


# -- defaults -------------------------------------------------------------------

def _conv_graph():
    g = Graph()
    g.add_input("x", "float32", (1, 2, 5, 5))
    g.add_constant("w", np.ones((3, 2, 3, 3), np.float32))
    g.add_node("conv2d", ["x", "w"], name="c",
               attrs={"strides": [1, 1], "dilations": [1, 1], "pads": [1, 1, 1, 1]})
    g.add_node("pad", ["c"], name="p", attrs={"pads": [0, 0, 1, 1, 0, 0, 1, 1]})
    g.outputs = ["p"]
    return g


def test_add_node_fills_in_schema_defaults(tmp_path):
    g = _conv_graph()
    assert g.producer("c").attrs == {"strides": [1, 1], "dilations": [1, 1],
                                     "pads": [1, 1, 1, 1], "groups": 1, "data_format": "NCHW",
                                     "auto_pad": "NOTSET"}
    assert g.producer("p").attrs == {"pads": [0, 0, 1, 1, 0, 0, 1, 1], "mode": "constant",
                                     "value": 0.0}
    g.lint()
    back = load_graph(save_graph(g, tmp_path / "ir"))
    assert back.producer("c").attrs == g.producer("c").attrs
    # Nodes built by hand get them when they join a graph.
    g.nodes = [*g.nodes, Node("gelu", ["p"], ["q"], name="q")]
    assert g.producer("q").attrs == {"approximate": False}


def test_evaluate_fills_in_defaults_for_mappers_folding_early():
    x = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_allclose(evaluate("elu", [x], {})[0], [np.expm1(-1.0), 2.0], rtol=1e-6)
    assert evaluate("shape", [x], {})[0].dtype == np.int64


# -- lint -------------------------------------------------------------------------

def _graph():
    g = Graph()
    g.add_input("x", "float32", (2, 3))
    g.add_constant("k", np.ones(3, np.float32))
    return g


def _lint_problems(g) -> list[str]:
    with pytest.raises(LintError) as info:
        g.lint()
    return info.value.problems


@pytest.mark.parametrize("build, expected", [
    (lambda g: g.add_node("frobnicate", ["x"], name="n"), "node 'n' (frobnicate): unknown IR op"),
    (lambda g: g.add_node("add", ["x"], name="n"), "has 1 inputs, add takes 2"),
    (lambda g: g.add_node("relu", ["x", "k"], name="n"), "has 2 inputs, relu takes 1"),
    (lambda g: g.add_node("batch_norm", ["x", "", "k", "k", "k"], name="n",
                          attrs={"epsilon": 1e-3}), "input 1 (scale) is empty but required"),
    (lambda g: g.add_node("relu", ["nope"], name="n"), "reads undefined value 'nope'"),
    (lambda g: g.add_node("relu", ["x"], name="k"), "defines 'k', already defined by a constant"),
    (lambda g: g.add_node("topk", ["x"], name="n", attrs={"k": 1, "axis": 1}),
     "has 1 outputs, topk gives 2"),
    (lambda g: g.add_node("transpose", ["x"], name="n"), "attribute 'perm' is missing"),
    (lambda g: g.add_node("transpose", ["x"], name="n", attrs={"perm": [1, 0.5]}),
     "attribute 'perm' is [1, 0.5], not of type ints"),
    (lambda g: g.add_node("reduce_sum", ["x"], name="n", attrs={"axes": [1], "keepdims": 1}),
     "attribute 'keepdims' is 1, not of type bool"),
    (lambda g: g.add_node("pad", ["x"], name="n", attrs={"pads": [0] * 4, "mode": "wrap"}),
     "attribute 'mode' is 'wrap', not one of constant, reflect, edge"),
    (lambda g: g.add_node("relu", ["x"], name="n", attrs={"alpha": 1.0}),
     "unknown attribute(s) alpha for relu"),
    (lambda g: g.info.__setitem__("k", type(g.info["x"])("float64", (3,))),
     "constant 'k' is float32[3] but its info says float64[3]"),
    (lambda g: g.info.__setitem__("ghost", type(g.info["x"])("float32", (1,))),
     "info for 'ghost', which nothing defines"),
    (lambda g: g.info.__setitem__("x", type(g.info["x"])("complex64", [2, -1])),
     "unknown dtype 'complex64'"),
])
def test_lint_names_the_node_and_the_problem(build, expected):
    g = _graph()
    build(g)
    g.outputs = ["x"]
    problems = _lint_problems(g)
    assert any(expected in p for p in problems), problems


def test_lint_catches_use_before_definition_and_missing_outputs():
    g = _graph()
    g.add_node("relu", ["b"], name="a")
    g.add_node("relu", ["x"], name="b")
    g.outputs = ["a", "gone"]
    problems = _lint_problems(g)
    assert "node 'a' (relu): reads 'b' before it is defined (by node 'b')" in problems
    assert "graph output 'gone' is not defined" in problems


def test_lint_message_names_the_source_op_and_mapper():
    g = _graph()
    g.add_node("relu", ["x"], name="n", attrs={"bad": 1},
               source={"op": "Relu", "name": "model/relu", "mapper": "mappers.tf.nn.unary"})
    g.outputs = ["n"]
    with pytest.raises(LintError, match=r"node 'n' \(relu\) from Relu 'model/relu' \(mapper "
                                        r"mappers.tf.nn.unary\): unknown attribute"):
        g.lint()


def test_pipeline_lints_after_every_pass_with_x2_lint(monkeypatch):
    def break_it(graph):
        graph.producer("y").attrs["surprise"] = True
        return graph

    g = _graph()
    g.add_node("relu", ["x"], name="y")
    g.outputs = ["y"]
    monkeypatch.setenv("X2_LINT", "1")
    with pytest.raises(LintError, match="after pass breaker: .*node 'y' \\(relu\\): unknown"):
        run_pipeline(g, [("breaker", break_it)])
    monkeypatch.setenv("X2_LINT", "0")
    run_pipeline(g, [("breaker", break_it)])  # conversions do not pay for lint


def test_suite_conversions_are_linted(sample, tmp_path):
    """tests/conftest.py turns lint on for every conversion the suite runs,
    including those in CLI subprocesses: their reports say each pass was linted."""
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--out", str(tmp_path / "out"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    passes = json.loads((tmp_path / "out" / "report.json").read_text())["passes"]
    assert passes and all(p["linted"] for p in passes)


# -- producer / consumer lists ---------------------------------------------------

def _rebuilt(g):
    producers = {o: n for n in g.nodes for o in n.outputs}
    users = {}
    for n in g.nodes:
        for v in n.inputs:
            if v and n not in users.setdefault(v, []):
                users[v].append(n)
    return producers, users


def _assert_lists_right(g):
    producers, users = _rebuilt(g)
    values = set(producers) | set(users) | set(g.inputs) | set(g.constants) | {"nope"}
    assert {v: g.producer(v) for v in values} == {v: producers.get(v) for v in values}
    assert {v: set(g.users(v)) for v in values} == {v: set(users.get(v, [])) for v in values}


def test_producer_and_users_follow_every_edit():
    g = _graph()
    a = g.add_node("relu", ["x"], name="a")
    b = g.add_node("add", ["a", "a"], name="b")
    c = g.add_node("mul", ["b", "k"], name="c")
    g.outputs = ["c"]
    _assert_lists_right(g)
    assert g.users("a") == [b] and g.producer("c") is c

    b.inputs = ["a", "x"]                      # rewire one input
    _assert_lists_right(g)
    c.outputs = ["c2"]                         # rename an output
    g.outputs = ["c2"]
    _assert_lists_right(g)
    g.replace_uses("a", "x")                   # a loses its users
    assert g.users("a") == [] and set(g.users("x")) == {a, b}
    _assert_lists_right(g)
    d = g.add_node("neg", ["b"], name="d", position=0)   # out of order on purpose
    g.toposort()
    assert g.nodes.index(d) > g.nodes.index(b)
    _assert_lists_right(g)
    g.remove_node(b)
    assert b not in g.nodes and g.producer("b") is None and b.graph is None
    _assert_lists_right(g)
    g.nodes = [n for n in g.nodes if n is not d]  # filtering detaches
    assert d.graph is None
    _assert_lists_right(g)
    g.remove_unused()
    _assert_lists_right(g)


def test_node_inputs_cannot_be_edited_in_place():
    g = _graph()
    n = g.add_node("relu", ["x"], name="n")
    with pytest.raises(TypeError):
        n.inputs[0] = "k"  # would bypass the consumer lists


def test_a_node_belongs_to_one_graph():
    g, h = _graph(), _graph()
    n = g.add_node("relu", ["x"], name="n")
    with pytest.raises(ValueError, match="already belongs"):
        h.nodes = [n]
