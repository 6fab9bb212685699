"""The Python-code emitters' own machinery (issue 14, item 5): one op
registry class with no silent overwrites, one spelling table for Paddle and
PyTorch, and a code model that holds every line of forward (channels_last
included). Nothing here imports a framework: the end-to-end conversions in
test_torch.py, test_tf_to_paddle.py and test_parity.py run the code."""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from x2.emitters.codegen import generate_module
from x2.emitters.paddle_ops import PADDLE_OPS, PaddleContext
from x2.emitters.python_ops import PYTHON_OPS
from x2.emitters.registry import OpRegistry
from x2.emitters.spelling import FRAMEWORKS, POSITIONAL, SPELLING, spelling
from x2.emitters.torch import channels_last_inputs
from x2.emitters.torch_ops import TORCH_OPS, TorchContext
from x2.errors import ConversionError
from x2.ir.graph import Graph


def test_registering_an_op_twice_is_an_error():
    ops = OpRegistry("Test")
    ops.register("relu", "tanh")(lambda e, node: None)
    with pytest.raises(ValueError, match="'tanh' registered twice"):
        ops.register("tanh")(lambda e, node: None)
    derived = OpRegistry("Derived", ops)
    with pytest.raises(ValueError, match="'relu' registered twice"):
        derived.register("relu")(lambda e, node: None)


def test_two_mappers_for_one_source_op_are_an_error():
    """Which of two mappers ran would depend on module import order."""
    from x2.registry import Registry
    mappers = Registry("onnx", "no.package")
    mappers.register("TopK", since=10)(lambda ctx, op: None)
    mappers.register("TopK", until=10)(lambda ctx, op: None)   # another opset range: fine
    with pytest.raises(ValueError, match="'TopK' has two mappers"):
        mappers.register("TopK", since=11)(lambda ctx, op: None)


def test_framework_ops_extend_the_shared_ones_without_replacing_them():
    for table in (PADDLE_OPS, TORCH_OPS):
        assert all(table[op] is fn for op, fn in PYTHON_OPS.items())
    assert set(PADDLE_OPS) == set(TORCH_OPS)


def test_every_missing_op_is_listed_at_once():
    graph = Graph()
    graph.add_input("x", "float32", (1, 2))
    graph.add_node("no_such_op", ["x"], name="a")
    graph.add_node("other_op", ["x"], name="b")
    graph.add_node("no_such_op", ["x"], name="c")
    with pytest.raises(ConversionError, match=r"no_such_op x2 \(e.g. from 'a'\); other_op x1"):
        TORCH_OPS.check(graph)


def test_spellings_are_dotted_names_and_keywords():
    """The table's text is pasted into model.py: it must be names, never code."""
    for key in SPELLING:
        for framework in FRAMEWORKS:
            spelled = spelling(framework, key)
            if spelled is None:
                continue
            name, renames = spelled
            assert re.fullmatch(r"(F|nn|paddle|torch)(\.[A-Za-z_]\w*)+", name), (key, name)
            assert all(v == POSITIONAL or v.isidentifier() for v in renames.values()), key


def _graph() -> Graph:
    graph = Graph()
    graph.add_input("image", "float32", (None, 3, 8, 8))
    graph.add_input("mask", "float32", (None, 4))
    graph.add_constant("w", np.ones((4, 3, 3, 3), np.float32))
    conv = graph.add_node("conv2d", ["image", "w"], name="conv", attrs={
        "strides": [1, 1], "dilations": [1, 1], "pads": [0, 0, 1, 1], "groups": 1})
    soft = graph.add_node("softmax", ["mask"], name="soft", attrs={"axis": 1})
    top = graph.add_node("topk", [soft.outputs[0]], name="top", attrs={"k": 2, "axis": 1},
                         n_outputs=2)
    graph.outputs = [conv.outputs[0], top.outputs[0]]
    return graph


def _forward(text: str) -> list[str]:
    tree = ast.parse(text)
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    forward = next(f for f in model.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
    return [ast.unparse(stmt) for stmt in forward.body]


def test_one_shared_op_is_spelled_by_each_framework():
    text, _ = generate_module(PaddleContext(_graph()), PADDLE_OPS, [], [], [])
    paddle_lines = _forward(text)
    text, _ = generate_module(TorchContext(_graph()), TORCH_OPS, [], [], [])
    torch_lines = _forward(text)
    # Paddle pads a convolution on one side itself; torch pads the input first.
    assert paddle_lines[0] == "conv = self.conv(image)"
    assert torch_lines[0] == "conv = self.conv(F.pad(image, [0, 1, 0, 1]))"
    assert paddle_lines[1] == "soft = F.softmax(mask, axis=1)"
    assert torch_lines[1] == "soft = F.softmax(mask, dim=1)"
    # topk as a stable sort: ties to the lower index, as the IR and ONNX order them
    assert paddle_lines[2] == (
        "top_0, top_1 = [paddle.slice(part, [1], [0], [2]) for part in (paddle.sort(soft, "
        "axis=1, descending=True, stable=True), paddle.argsort(soft, axis=1, descending=True, "
        "stable=True))]")
    assert torch_lines[2] == ("top_0, top_1 = [part.narrow(1, 0, 2) for part in "
                              "torch.sort(soft, dim=1, descending=True, stable=True)]")


def test_channels_last_is_the_prologue_of_forward():
    e = TorchContext(_graph())
    text, _ = generate_module(e, TORCH_OPS, [], [], [], prologue=channels_last_inputs)
    # Only the rank-4 input changes memory format, before any op runs.
    assert [str(step.expr) for step in e.code.prologue] == [
        "image.contiguous(memory_format=torch.channels_last)"]
    assert _forward(text)[0] == "image = image.contiguous(memory_format=torch.channels_last)"
    assert _forward(text)[1].startswith("conv = ")
