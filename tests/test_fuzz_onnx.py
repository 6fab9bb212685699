"""Seeded fuzzing of the ONNX route (issue 13, "Done when").

Small valid ONNX models are mutated (names, attributes, shapes, types,
opsets, references) by a seeded generator; each mutant is converted. Every
case must end one of two ways: converted with parity against onnxruntime,
or refused with an X2Error whose message is one line. Never another
exception (a traceback for the user), never a payload run, never a
half-written output. X2_FUZZ_CASES sets how many mutants (default 36);
X2_FUZZ_SEED the seed."""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

from conftest import convert_then_check
from x2.errors import X2Error
from x2.check.parity import check

CASES = int(os.environ.get("X2_FUZZ_CASES", "36"))
SEED = int(os.environ.get("X2_FUZZ_SEED", "1313"))
MARKER = "/tmp/x2-fuzz-payload-ran"
HOSTILE = [f'a\n        __import__("os").system("touch {MARKER}")\n        #',
           f"b\r\n__import__('os').system('touch {MARKER}')", "ａ", "a", "float", "self",
           "½", "x\x00y", '"""', "\u2028", "1", "", "torch", "__class__", "é" * 3]


def _base_models():
    """(name, ModelProto) pairs: a conv net and an array/elementwise graph,
    both with random weights and outputs that vary with the input."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def init(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    conv = helper.make_graph([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1],
                         strides=[1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Reshape", ["p", "shape"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "w2"], ["m"], name="dense"),
        helper.make_node("Add", ["m", "b2"], ["y"], name="bias"),
    ], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [init("w", (4, 3, 3, 3)), init("b", (4,)), init("w2", (64, 5)), init("b2", (5,)),
         numpy_helper.from_array(np.array([1, 64], np.int64), "shape")])
    array = helper.make_graph([
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 1]),
        helper.make_node("Pad", ["t", "pads"], ["pd"], name="pad", mode="reflect"),
        helper.make_node("Mul", ["pd", "scale"], ["s"], name="mul"),
        helper.make_node("Tanh", ["s"], ["th"], name="tanh"),
        helper.make_node("ReduceMean", ["th"], ["mean"], name="mean", axes=[2], keepdims=1),
        helper.make_node("Sub", ["th", "mean"], ["centered"], name="center"),
        helper.make_node("Concat", ["centered", "th"], ["cat"], name="concat", axis=1),
        helper.make_node("Gather", ["cat", "idx"], ["y"], name="gather", axis=2),
    ], "array", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 12, 3])],
        [numpy_helper.from_array(np.array([0, 1, 0, 0, 1, 0], np.int64), "pads"),
         init("scale", (6,)), numpy_helper.from_array(np.array([0, 2, 5], np.int64), "idx")])
    return [(graph.name, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
            for graph in (conv, array)]


def _rename_value(model, rng, consistent: bool):
    graph = model.graph
    values = [o for n in graph.node for o in n.output] + [i.name for i in graph.initializer]
    old = rng.choice(values)
    new = rng.choice(HOSTILE) + str(rng.randrange(3))
    for node in graph.node:
        node.output[:] = [new if v == old else v for v in node.output]
        if consistent:
            node.input[:] = [new if v == old else v for v in node.input]
    for item in list(graph.initializer) + list(graph.output):
        if item.name == old:
            item.name = new
    return f"rename value {old!r} -> {new!r} ({'consistent' if consistent else 'dangling'})"


def _rename_node(model, rng):
    node = rng.choice(list(model.graph.node))
    node.name = rng.choice(HOSTILE)
    return f"rename node -> {node.name!r}"


def _mutate_attribute(model, rng):
    from onnx import AttributeProto
    nodes = [n for n in model.graph.node if n.attribute]
    node = rng.choice(nodes)
    attr = rng.choice(list(node.attribute))
    if attr.type == AttributeProto.INTS:
        attr.ints[:] = [rng.randrange(-3, 9) for _ in range(rng.randrange(0, 5))]
    elif attr.type == AttributeProto.INT:
        attr.i = rng.randrange(-5, 9)
    elif attr.type == AttributeProto.STRING:
        attr.s = rng.choice([b"edge", b"wrap", b"constant", b"nope", b"\xff\xfe", b"",
                             HOSTILE[0].encode()])
    elif attr.type == AttributeProto.FLOAT:
        attr.f = rng.choice([0.0, -1.0, float("nan"), 1e30])
    return f"{node.op_type}.{attr.name} mutated"


def _mutate_shape(model, rng):
    graph = model.graph
    choice = rng.randrange(3)
    if choice == 0:
        dims = graph.input[0].type.tensor_type.shape.dim
        dim = rng.choice(list(dims))
        dim.dim_value = rng.choice([0, 1, 2, 3, 7, 1000000])
        return "input dim changed"
    init = rng.choice(list(graph.initializer))
    if choice == 1 and init.dims:
        init.dims[rng.randrange(len(init.dims))] = rng.choice([0, 1, 3, 400, 1000000])
        return f"initializer {init.name} dims changed, data not"
    from onnx import numpy_helper
    array = numpy_helper.to_array(init)
    shape = [rng.choice([1, 2, 3, 64, -1]) for _ in range(rng.randrange(1, 4))]
    new = np.resize(array, [abs(d) for d in shape]).astype(array.dtype)
    init.CopyFrom(numpy_helper.from_array(new, init.name))
    return f"initializer {init.name} replaced by shape {list(new.shape)}"


def _mutate_type_or_opset(model, rng):
    from onnx import TensorProto
    if rng.random() < 0.5:
        model.opset_import[0].version = rng.choice([1, 6, 11, 13, 17, 18, 21, 99])
        return f"opset {model.opset_import[0].version}"
    model.graph.input[0].type.tensor_type.elem_type = rng.choice(
        [TensorProto.INT64, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.STRING,
         TensorProto.BOOL])
    return "input dtype changed"


MUTATIONS = [lambda m, r: _rename_value(m, r, True), lambda m, r: _rename_value(m, r, False),
             _rename_node, _rename_node, _mutate_attribute, _mutate_attribute, _mutate_shape,
             _mutate_type_or_opset]


def _mutants():
    rng = random.Random(SEED)
    bases = _base_models()
    cases = []
    for index in range(CASES):
        name, base = bases[index % len(bases)]
        model = type(base)()
        model.CopyFrom(base)
        applied = [rng.choice(MUTATIONS)(model, rng) for _ in range(rng.randrange(1, 3))]
        target = ["onnx", "torch", "paddle"][index % 3]
        cases.append(pytest.param(model, target, applied, id=f"{index}-{name}-{target}"))
    return cases


@pytest.fixture(autouse=True)
def no_marker():
    if os.path.exists(MARKER):
        os.remove(MARKER)
    yield
    assert not os.path.exists(MARKER), "a payload from a model name ran"


@pytest.mark.parametrize("model,target,applied", _mutants())
def test_mutant_converts_with_parity_or_is_refused_in_one_line(tmp_path, model, target,
                                                               applied):
    import onnx
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "out"
    try:
        convert_then_check(str(path), str(out), source="onnx", target=target)
    except X2Error as exc:
        assert "\n" not in exc.message.strip(), (applied, exc.message)
        assert exc.kind not in ("crash", "internal") and "internal" not in exc.message, \
            (applied, exc.message)
        assert not out.exists()
        assert [p for p in os.listdir(tmp_path) if "x2-staging" in p] == []
        return
    # Converted: it must be right, and onnxruntime must run the source.
    result = check(str(path), str(out), source="onnx", target=target)
    assert result["passed"], (applied, result["outputs"])
