"""The IR serializes losslessly, and passes preserve semantics (checked with
the numpy reference interpreter)."""
import numpy as np
import pytest

from x2.ir import Graph, Origin, load_graph, save_graph
from x2.ir.interpret import interpret, interpret_all
from x2.passes import run_pipeline
from x2.passes.layout import eliminate_transposes


def _graph_with_everything():
    g = Graph()
    g.add_input("x", "float32", (None, 4, 4, 3))
    g.add_constant("w16", np.arange(6, dtype=np.float16).reshape(2, 3))
    g.add_constant("i64", np.array([[-(2 ** 40), 7]], dtype=np.int64))
    g.add_constant("flag", np.array([True, False, True]))
    g.add_constant("scalar", np.array(2.5, dtype=np.float32))
    g.add_constant("empty", np.zeros((0, 5), np.float32))
    g.add_node("relu", ["x"], name="r", source={"op": "Relu", "name": "a/Relu"})
    g.add_node("mul", ["r", "scalar"], name="m", attrs={"note": [1, 2]})
    g.outputs = ["m"]
    g.meta.io_layout = "nchw"
    g.meta.io_transposes = {"x": {"role": "input", "perm": [0, 3, 1, 2]}}
    g.origin["r"] = Origin("a/Relu:0", (0, 3, 1, 2))
    g.origin["w16"] = Origin("w16", None, "fc.weight")
    return g


def test_ir_round_trip_is_lossless(tmp_path):
    g = _graph_with_everything()
    back = load_graph(save_graph(g, tmp_path / "ir"))
    assert back.inputs == g.inputs and back.outputs == g.outputs and back.meta == g.meta
    assert back.origin == g.origin
    assert [n.to_json() for n in back.nodes] == [n.to_json() for n in g.nodes]
    assert back.info == g.info
    assert set(back.constants) == set(g.constants)
    for name, array in g.constants.items():
        assert back.constants[name].dtype == array.dtype
        np.testing.assert_array_equal(back.constants[name], array)


def test_ir_loading_memory_maps_weights(tmp_path):
    g = Graph()
    g.add_input("x", "float32", (2,))
    g.add_constant("big", np.ones(1 << 20, np.float32))
    g.add_node("add", ["x", "x"], name="y")
    g.outputs = ["y"]
    back = load_graph(save_graph(g, tmp_path / "ir"))
    assert isinstance(back.constants["big"].base, np.memmap) or \
        isinstance(back.constants["big"], np.memmap)


def _nhwc_graph():
    """NHWC-style graph as a frontend emits it: Transpose pairs around a
    layout-sensitive op (here an NCHW 'reduce' stands in for a conv), with
    elementwise ops, a residual add, concat, pad and flatten -> matmul between."""
    rng = np.random.default_rng(0)
    g = Graph()
    g.add_input("x", "float32", (2, 5, 6, 3))
    to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]

    def add(op, inputs, out_shape, **attrs):
        node = g.add_node(op, inputs, attrs=attrs)
        g.info[node.outputs[0]] = type(g.info["x"])("float32", out_shape)
        return node.outputs[0]

    a = add("transpose", ["x"], (2, 3, 5, 6), perm=to_nchw)
    kernel = g.add_constant("kernel", rng.normal(size=(3, 3, 3, 3)).astype("float32"))
    a = add("conv2d", [a, kernel], (2, 3, 5, 6), strides=[1, 1], dilations=[1, 1],
            pads=[1, 1, 1, 1], groups=1)
    a = add("transpose", [a], (2, 5, 6, 3), perm=to_nhwc)
    bias = g.add_constant("bias", rng.normal(size=3).astype("float32"))
    b = add("add", [a, bias], (2, 5, 6, 3))
    b = add("sigmoid", [b], (2, 5, 6, 3))
    r = add("add", [b, "x"], (2, 5, 6, 3))
    c = add("concat", [r, b], (2, 5, 6, 6), axis=3)
    p = add("pad", [c], (2, 6, 7, 6), pads=[0, 1, 0, 0, 0, 0, 1, 0], mode="constant", value=0.0)
    t = add("transpose", [p], (2, 6, 6, 7), perm=to_nchw)
    t = add("max_pool2d", [t], (2, 6, 6, 7), kernel=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
    t = add("transpose", [t], (2, 6, 7, 6), perm=to_nhwc)
    f = add("reshape", [t], (2, 252), shape=[-1, 252])
    w = g.add_constant("w", rng.normal(size=(252, 4)).astype("float32"))
    y = add("matmul", [f, w], (2, 4))
    m = add("reduce_mean", [t], (2, 6), axes=[1, 2], keepdims=False)
    g.outputs = [y, m]
    return g


def test_layout_pass_removes_transposes_and_preserves_numbers():
    g = _nhwc_graph()
    x = np.random.default_rng(1).normal(size=(2, 5, 6, 3)).astype("float32")
    before = interpret(g, [x])
    assert g.count("transpose") == 4
    g = eliminate_transposes(g)
    after = interpret(g, [x])
    for ref, got in zip(before, after):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    # One Transpose per NHWC input is what the math needs; the flatten -> matmul
    # boundary is handled by permuting the weight rows.
    assert g.count("transpose") == 1


def test_origin_composes_permutations():
    nchw = Origin("t").permuted([0, 3, 1, 2])
    assert nchw.perm == (0, 3, 1, 2)
    assert nchw.permuted([0, 2, 3, 1]) == Origin("t")  # back to the source layout
    assert Origin("w", None, "fc.weight").permuted([1, 0]) == Origin("w", (1, 0), "fc.weight")
    with pytest.raises(ValueError, match="does not fit"):
        nchw.permuted([1, 0])


def test_origins_say_what_each_value_is_after_the_passes():
    """Every value the passes leave with an origin equals that source value,
    transposed by the origin's perm: what `x2 check --bisect` relies on."""
    g = _nhwc_graph()
    for value in [*g.inputs, *(o for n in g.nodes for o in n.outputs)]:
        g.origin[value] = Origin(value)
    x = np.random.default_rng(3).normal(size=(2, 5, 6, 3)).astype("float32")
    source = interpret_all(g, [x])
    g, _ = run_pipeline(g)
    g.lint("after the pipeline")
    converted = interpret_all(g, [x])
    checked = permuted = 0
    for value, origin in g.origin.items():
        if origin.tensor in source and value in converted:
            ref = source[origin.tensor]
            if origin.perm is not None:
                ref, permuted = np.transpose(ref, origin.perm), permuted + 1
            np.testing.assert_allclose(converted[value], ref, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{value}: {origin}")
            checked += 1
    assert checked >= 6 and permuted >= 3, (checked, permuted)


def test_full_pipeline_preserves_numbers():
    g = _nhwc_graph()
    x = np.random.default_rng(2).normal(size=(2, 5, 6, 3)).astype("float32")
    before = interpret(g, [x])
    g, records = run_pipeline(g)
    # Inference drops dropout first, then identities, before any rewrite.
    assert [r["pass"] for r in records][:2] == ["remove_dropout", "remove_identities"]
    for ref, got in zip(before, interpret(g, [x])):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_undefined_value_is_caught():
    g = Graph()
    g.add_input("x", "float32", (1,))
    g.add_node("relu", ["nope"], name="y")
    g.outputs = ["y"]
    with pytest.raises(ValueError, match="undefined value 'nope'"):
        g.validate()


@pytest.mark.parametrize("data_format,pads,kept", [
    ("NCHW", [0, 0, 3, 1, 0, 0, 2, 1], False),   # spatial zero pad: folded
    ("NHWC", [0, 1, 2, 0, 0, 0, 1, 0], False),
    ("NCHW", [0, 1, 0, 0, 0, 0, 0, 0], True),    # pads channels: must stay
])
def test_zero_pad_folds_into_the_convolution(data_format, pads, kept):
    from x2.passes.fuse import fold_pad_into_conv
    rng = np.random.default_rng(0)
    shape = (1, 3, 7, 6) if data_format == "NCHW" else (1, 7, 6, 3)
    in_ch = 3 + (pads[1] + pads[5] if data_format == "NCHW" else 0)

    def build():
        g = Graph()
        g.add_input("x", "float32", shape)
        g.add_constant("w", rng.standard_normal((4, in_ch, 3, 3)).astype(np.float32))
        g.add_node("pad", ["x"], name="p", attrs={"pads": pads, "mode": "constant"})
        g.add_node("conv2d", ["p", "w"], name="c",
                   attrs={"strides": [2, 1], "dilations": [1, 1], "groups": 1,
                          "pads": [1, 0, 0, 1], "data_format": data_format})
        g.outputs = ["c"]
        return g

    x = rng.standard_normal(shape).astype(np.float32)
    graph = build()
    before = interpret(graph, [x])[0]
    after_graph = fold_pad_into_conv(graph)
    assert after_graph.count("pad") == (1 if kept else 0)
    np.testing.assert_allclose(interpret(after_graph, [x])[0], before, rtol=1e-5, atol=1e-5)


def test_pad_behind_the_interface_transpose_folds_too():
    """NHWC input -> ZeroPadding2D -> Transpose -> conv: the Transpose moves
    above the pad and the pad into the conv (ResNet50's first layers)."""
    from x2.passes.fuse import fold_pad_into_conv
    rng = np.random.default_rng(1)
    g = Graph()
    g.add_input("x", "float32", (1, 9, 8, 3))
    g.add_constant("w", rng.standard_normal((5, 3, 7, 7)).astype(np.float32))
    g.add_node("pad", ["x"], name="p", attrs={"pads": [0, 3, 2, 0, 0, 3, 1, 0]})
    g.add_node("transpose", ["p"], name="t", attrs={"perm": [0, 3, 1, 2]})
    g.add_node("conv2d", ["t", "w"], name="c", attrs={"strides": [2, 2], "dilations": [1, 1],
                                                      "groups": 1, "pads": [0, 0, 0, 0]})
    g.outputs = ["c"]
    x = rng.standard_normal((1, 9, 8, 3)).astype(np.float32)
    before = interpret(g, [x])[0]
    g = fold_pad_into_conv(g)
    assert [n.op for n in g.nodes] == ["transpose", "conv2d"]
    assert g.nodes[1].attrs["pads"] == [3, 2, 3, 1]
    np.testing.assert_allclose(interpret(g, [x])[0], before, rtol=1e-5, atol=1e-5)


def test_transpose_of_unit_axes_becomes_one_reshape():
    """Squeeze-excite (EfficientNet): mean -> reshape [N,1,1,C] -> transpose to
    NCHW -> conv. The transpose only moves unit axes: one reshape remains."""
    from x2.passes.layout import transposes_to_reshapes
    rng = np.random.default_rng(2)
    g = Graph()
    g.add_input("x", "float32", (None, 4, 5, 6))
    g.add_constant("w", rng.standard_normal((3, 4, 1, 1)).astype(np.float32))
    g.add_node("reduce_mean", ["x"], name="m", attrs={"axes": [2, 3], "keepdims": False})
    g.info["m"] = type(g.info["x"])("float32", (None, 4))
    g.add_node("reshape", ["m"], name="r", attrs={"shape": [-1, 1, 1, 4]})
    g.info["r"] = type(g.info["x"])("float32", (None, 1, 1, 4))
    g.add_node("transpose", ["r"], name="t", attrs={"perm": [0, 3, 1, 2]})
    g.add_node("conv2d", ["t", "w"], name="c", attrs={"strides": [1, 1], "dilations": [1, 1],
                                                      "groups": 1, "pads": [0, 0, 0, 0]})
    g.outputs = ["c"]
    x = rng.standard_normal((2, 4, 5, 6)).astype(np.float32)
    before = interpret(g, [x])[0]
    g = transposes_to_reshapes(g)
    assert [n.op for n in g.nodes] == ["reduce_mean", "reshape", "conv2d"]
    assert g.nodes[1].attrs["shape"] == [-1, 4, 1, 1]
    np.testing.assert_allclose(interpret(g, [x])[0], before, rtol=1e-6)


def test_a_transpose_that_reorders_data_stays():
    from x2.passes.layout import transposes_to_reshapes
    g = Graph()
    g.add_input("x", "float32", (2, 1, 3, 4))
    g.add_node("transpose", ["x"], name="t", attrs={"perm": [0, 3, 1, 2]})
    g.outputs = ["t"]
    assert [n.op for n in transposes_to_reshapes(g).nodes] == ["transpose"]


def test_attention_query_that_sees_no_key_gives_zero_as_torch_does():
    """Left padding under a causal mask hides every key from the first query:
    torch's scaled_dot_product_attention gives 0 there (Hugging Face relies on
    it), a plain softmax NaN, which the next layer spreads to every row."""
    from x2.ir.kernels import attention
    from x2.check.parity import padding_masks
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 5, 4)).astype(np.float32) for _ in range(3))
    masks = padding_masks([2, 5], rng)
    assert masks[0, -1] == 0 and masks[1, 0] == 0 and masks.sum(axis=1).min() >= 1
    additive = np.where(masks[:, None, None, :] == 1, 0, -np.inf).astype(np.float32)
    out = attention([q, k, v, additive], {"causal": True})[0]
    assert np.isfinite(out).all()
    hidden = masks[1].argmax()          # the left-padded row's queries before its first token
    assert hidden >= 1 and np.all(out[1, :, :hidden] == 0)
    scores = q[0] @ k[0].transpose(0, 2, 1) / 2 + additive[0]
    scores = np.where(np.tril(np.ones((5, 5), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (weights / weights.sum(-1, keepdims=True)) @ v[0]
    np.testing.assert_allclose(out[0], expected, rtol=1e-5)


def test_a_size_read_twice_is_computed_once():
    """Two views of one input by its run-time length (a torch export reads
    x.size(1) per view) share one shape read and one shape target."""
    from x2.ir import TensorInfo
    from x2.passes.cleanup import merge_size_computations
    g = Graph()
    g.add_input("x", "float32", (None, None))
    g.info["x"] = TensorInfo("float32", (None, None))
    results = []
    for i in range(2):
        dims = g.add_node("shape", ["x"], attrs={"dtype": "int64"}, name=f"s{i}",
                          outputs=[f"dims{i}"])
        g.info[dims.outputs[0]] = TensorInfo("int64", (2,))
        index = g.add_constant(f"one{i}", np.array([1], np.int64))
        seq = g.add_node("gather", [f"dims{i}", index], attrs={"axis": 0}, name=f"g{i}",
                         outputs=[f"seq{i}"])
        g.info[seq.outputs[0]] = TensorInfo("int64", (1,))
        target = g.add_constant(f"minus{i}", np.array([-1], np.int64))
        shape = g.add_node("concat", [target, f"seq{i}"], attrs={"axis": 0}, name=f"c{i}",
                           outputs=[f"shape{i}"])
        g.info[shape.outputs[0]] = TensorInfo("int64", (2,))
        g.add_node("reshape_dynamic", ["x", f"shape{i}"], name=f"r{i}", outputs=[f"y{i}"])
        g.info[f"y{i}"] = TensorInfo("float32", (None, None))
        results.append(f"y{i}")
    g.outputs = results
    merged = merge_size_computations(g)
    assert merged.count("shape") == 1 and merged.count("gather") == 1
    assert merged.count("concat") == 1 and merged.count("reshape_dynamic") == 2
    merged.validate()


def test_a_reshape_to_its_inputs_own_sizes_needs_no_size_computation():
    """transformers' Conv1D (`view(-1, K)`, addmm, `view(x.size()[:-1] + (N,))`)
    and a head split (`view(batch, seq, 2, 3)`) reshape to sizes read from
    shapes: they become one linear on x and a static reshape copying dims;
    a size of another input (`w` viewed by x's length) keeps the computed
    reshape. Numbers equal at two sizes, 1 included."""
    import copy
    from x2.ir import TensorInfo
    from x2.ir.ops import evaluate
    from x2.passes.dims import reshapes_from_dims
    g = Graph()
    for name, shape, dims in (("x", (None, None, 4), ["batch", "seq"]),
                              ("w", (None, 6), ["length"])):
        g.add_input(name, "float32", shape)
        g.meta.dims[name] = dims + [None]

    def node(op, inputs, dims, kind="float32", **attrs):
        out = g.add_node(op, inputs, attrs=attrs, name=g.fresh_name(op)).outputs[0]
        g.info[out] = TensorInfo(kind, dims)
        return out

    def size_of(value, axis):
        dims = node("shape", [value], (len(g.shape(value)),), "int64", dtype="int64")
        index = g.add_constant(g.fresh_name("axis"), np.array(axis, np.int64))
        return node("unsqueeze", [node("gather", [dims, index], (), "int64", axis=0)], (1,),
                    "int64", axes=[0])

    def sizes(*items):
        parts = [item if isinstance(item, str) else
                 g.add_constant(g.fresh_name("n"), np.array([item], np.int64)) for item in items]
        return node("concat", parts, (len(parts),), "int64", axis=0)

    flat = node("reshape", ["x"], (None, 4), shape=[-1, 4])
    weight = g.add_constant("weight", np.arange(24, dtype=np.float32).reshape(4, 6) / 10)
    bias = g.add_constant("bias", np.linspace(-1, 1, 6, dtype=np.float32))
    linear = node("add", [node("matmul", [flat, weight], (None, 6)), bias], (None, 6))
    batch, seq = size_of("x", 0), size_of("x", 1)
    restored = node("reshape_dynamic", [linear, sizes(batch, seq, 6)], (None, None, 6))
    heads = node("reshape_dynamic", [restored, sizes(batch, seq, 2, 3)], (None, None, 2, 3))
    other = node("reshape_dynamic", ["w", sizes(seq, -1)], (None, None))
    g.outputs = [heads, other]
    before = copy.deepcopy(g)
    after = reshapes_from_dims(g)

    def run(op, arrays, attrs):  # (the IR has no numpy kernel for a computed reshape)
        if op == "reshape_dynamic":
            return [arrays[0].reshape(arrays[1])]
        return evaluate(op, arrays, attrs)
    after.validate()
    assert after.count("reshape_dynamic") == 1 and after.count("shape") == 1
    assert [n.attrs["shape"] for n in after.nodes if n.op == "reshape"] == [[0, 0, 2, 3]]
    rng = np.random.default_rng(0)
    for b, s, n in ((2, 3, 5), (1, 1, 1)):
        feeds = {"x": rng.standard_normal((b, s, 4)).astype(np.float32),
                 "w": rng.standard_normal((n, 6)).astype(np.float32)}
        for want, got in zip(interpret(before, [feeds["x"], feeds["w"]], run),
                             interpret(after, [feeds["x"], feeds["w"]], run)):
            np.testing.assert_array_equal(want, got)
