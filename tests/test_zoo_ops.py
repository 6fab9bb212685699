"""The ops issue 15's model zoo found unmapped, per frontend: each small model
converts to paddle, onnx and torch with parity against its source framework
(fp32, rtol 1e-5), or is refused with a complete message.

Every parity case first runs the source on two different inputs and asserts
that each output changes, so a pass cannot come from a reference that
ignores its input. Frameworks run in subprocesses only (TensorFlow and
paddle must not share the pytest process)."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT, convert_then_check
from x2.convert import convert
from x2.errors import X2Error
from x2.check.parity import check

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("zoo_ops")

RTOL = 1e-5
TARGETS = ["paddle", "onnx", "torch"]
TORCH_MODELS = str(ROOT / "tests" / "zoo_ops_torch.py")
ONNX_BUILDER = str(ROOT / "tests" / "zoo_ops_onnx.py")
TF_BUILDER = str(ROOT / "tests" / "zoo_ops_tf.py")

# How each source runs on inputs saved in an .npz, writing its outputs to another.
_RUNNERS = {
    "torch": """
import importlib.util, numpy as np, torch
spec = importlib.util.spec_from_file_location("m", MODEL.split(":")[0])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
net = getattr(mod, MODEL.split(":")[1])()
with torch.no_grad():
    out = net(*[torch.from_numpy(a) for a in ARRAYS])
out = out if isinstance(out, (tuple, list)) else [out]
RESULT = [o.numpy() for o in out]
""",
    "tf": """
import tensorflow as tf
fn = tf.saved_model.load(MODEL).signatures["serving_default"]
names = sorted(fn.structured_input_signature[1])
out = fn(**{n: tf.constant(a) for n, a in zip(names, ARRAYS)})
RESULT = [out[k].numpy() for k in sorted(out)]
""",
    "onnx": """
import onnxruntime as ort
sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
RESULT = sess.run(None, {i.name: a for i, a in zip(sess.get_inputs(), ARRAYS)})
""",
}


def _run_source(source: str, model: str, arrays: list[np.ndarray], tmp_path) -> list:
    np.savez(tmp_path / "in.npz", *arrays)
    script = ("import sys, numpy as np\nMODEL = sys.argv[1]\n"
              "data = np.load(sys.argv[2]); ARRAYS = [data[f'arr_{i}'] for i in "
              "range(len(data.files))]\n" + _RUNNERS[source] +
              "np.savez(sys.argv[3], *RESULT)\n")
    proc = subprocess.run([sys.executable, "-c", script, model, str(tmp_path / "in.npz"),
                           str(tmp_path / "out.npz")], capture_output=True, text=True, env=ENV,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(tmp_path / "out.npz") as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


def _inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _assert_converts_with_parity(source, model, shapes, tmp_path, **convert_args):
    first, second = _inputs(shapes, 1), _inputs(shapes, 2)
    ref_a = _run_source(source, model, first, tmp_path)
    ref_b = _run_source(source, model, second, tmp_path)
    for i, (a, b) in enumerate(zip(ref_a, ref_b)):
        assert not np.array_equal(a, b), f"output {i} of {model} does not depend on its input"
    for target in TARGETS:
        out = tmp_path / target
        convert_then_check(model, str(out), source=source, target=target, **convert_args)
        result = check(model, str(out), source=source, target=target, rtol=RTOL,
                       inputs=first)
        assert result["outputs"], result
        for r in result["outputs"]:
            assert r["passed"], f"{target} {r['runner']} {r['name']}: rel err {r['max_rel']:.3e}"
        assert len({r["name"] for r in result["outputs"]}) == len(ref_a)


# -- PyTorch ------------------------------------------------------------------

def test_torch_comparisons_bitwise_gather_cumsum(tmp_path):
    """ge/gt/lt/le/ne/eq (Tensor and Scalar), bitwise and/or/xor/not on masks,
    gather, cumsum of floats and of an int64 mask (position ids)."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:masks", [(2, 4, 8)], tmp_path,
                                 input_shapes={"x": [2, 4, 8]})


def test_torch_pooling_ceil_mode_dilation_3d_adaptive(tmp_path):
    """max_pool2d in ceil_mode and dilated, avg_pool2d in ceil_mode, adaptive
    average pooling with uneven bins (13x11 -> 3x5), max_pool3d in ceil_mode,
    avg_pool3d padded, max_pool1d in ceil_mode, avg_pool1d padded, and pools in
    ceil_mode whose window is wider than the input."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:pools", [(2, 3, 13, 11)], tmp_path,
                                 input_shapes={"x": [2, 3, 13, 11]})


def test_torch_1d_3d_and_transposed_convolutions(tmp_path):
    shapes = {"a": [2, 3, 16], "x": [2, 3, 6, 6], "v": [2, 2, 5, 8, 7]}
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:convs", list(shapes.values()),
                                 tmp_path, input_shapes=shapes)


def test_torch_indexing_with_several_index_tensors(tmp_path):
    """x[i, j]: adjacent and separated index tensors, negative and computed
    indices; F.pad with a constant value."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:advanced_index", [(2, 5, 6)],
                                 tmp_path, input_shapes={"x": [2, 5, 6]})


def test_torch_view_of_decomposed_attention(tmp_path):
    """A view of SDPA's output after a dropped .contiguous() (GPT-2): read as a
    reshape, so decomposing SDPA to another memory layout cannot break it."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:attention_view", [(2, 8, 16)],
                                 tmp_path, input_shapes={"x": [2, 8, 16]})


def test_torch_as_strided_as_reshape_slice_transpose(tmp_path):
    """as_strided over the input's memory (its layout from the export):
    offset windows, strided and transposed reads, broadcast, a permuted input,
    adaptive_avg_pool1d's restride."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:strided", [(3, 4, 6)], tmp_path,
                                 input_shapes={"x": [3, 4, 6]})


def test_torch_as_strided_overlapping_windows_is_refused(tmp_path):
    with pytest.raises(X2Error) as info:
        convert(f"{TORCH_MODELS}:overlapping_windows", str(tmp_path / "out"), source="torch",
                target="onnx", input_shapes={"x": [2, 8]})
    message = str(info.value)
    assert "aten.as_strided.default" in message and "overlapping" in message


def test_torch_vector_norms(tmp_path):
    """linalg_vector_norm of activations: orders 2, 1, inf, -inf, 0, 3, 0.5."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:norms", [(2, 3, 8)], tmp_path,
                                 input_shapes={"x": [2, 3, 8]})


def test_torch_constant_subgraph_is_folded(tmp_path):
    """i0 of an arange window has no mapper: torch runs it at conversion time."""
    _assert_converts_with_parity("torch", f"{TORCH_MODELS}:window", [(2, 8)], tmp_path,
                                 input_shapes={"x": [2, 8]})


def test_torch_unmapped_op_on_the_input_is_still_reported(tmp_path):
    with pytest.raises(X2Error) as info:
        convert(f"{TORCH_MODELS}:window_of_input", str(tmp_path / "out"), source="torch",
                target="onnx", input_shapes={"x": [2, 8]})
    message = str(info.value)
    # The folded window's two i0 nodes are not counted, only the one on the input.
    assert "1 pytorch op type(s)" in message
    assert re.search(r"aten\.i0\.default\s+x1\b", message), message


# -- ONNX ---------------------------------------------------------------------

def _onnx(name: str, tmp_path) -> str:
    out = tmp_path / f"{name}.onnx"
    proc = subprocess.run([sys.executable, ONNX_BUILDER, name, str(out)], capture_output=True,
                          text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


def test_onnx_hardswish_comparisons_gather_elements_dropout_maxpool(tmp_path):
    """HardSwish, Equal/Greater/Less/GreaterOrEqual/LessOrEqual, And/Or/Xor/Not,
    ArgMax + GatherElements, a Dropout whose mask is declared but unused,
    MaxPool in ceil_mode and dilated."""
    _assert_converts_with_parity("onnx", _onnx("ops", tmp_path), [(2, 3, 8, 9)], tmp_path)


def test_onnx_1d_3d_pools(tmp_path):
    _assert_converts_with_parity("onnx", _onnx("pools_nd", tmp_path),
                                 [(2, 3, 10), (2, 2, 5, 6, 7)], tmp_path)


def test_onnx_1d_3d_convolutions(tmp_path):
    _assert_converts_with_parity("onnx", _onnx("convs", tmp_path), [(2, 3, 17), (2, 2, 4, 7, 6)],
                                 tmp_path)


def test_onnx_constant_subgraph_is_folded(tmp_path):
    """Range, Cos and Floor on constants have no mappers: onnx.reference runs them."""
    _assert_converts_with_parity("onnx", _onnx("window", tmp_path), [(2, 12)], tmp_path)


def test_onnx_gather_nd_batch_dims_negative_indices_dynamic_batch(tmp_path):
    """GatherND with batch_dims 0 (constant negative indices), 1 (computed indices,
    the batch dim dynamic: an arange over its runtime size), 2 (computed negative
    indices) and as deep as the data; a bool mask cast from numbers and expanded
    (paddle's static expand)."""
    _assert_converts_with_parity("onnx", _onnx("gather_nd", tmp_path), [(2, 3, 8, 9)],
                                 tmp_path)


def test_onnx_gather_nd_out_of_range_constant_indices_are_refused(tmp_path):
    with pytest.raises(X2Error) as info:
        convert(_onnx("gather_nd_out_of_range", tmp_path), str(tmp_path / "out"),
                source="onnx", target="onnx")
    assert "GatherND 'gnd': constant indices -9..8 are out of range for axis 2 of size 8" \
        in str(info.value)


def test_onnx_softmax_of_a_fully_masked_row_is_nan(tmp_path):
    """A row of -inf gives NaN (replaced by 0 in the graph, as HF attention does);
    paddle's vectorized CPU softmax alone would give a uniform row."""
    _assert_converts_with_parity("onnx", _onnx("masked_softmax", tmp_path), [(2, 3, 16)],
                                 tmp_path)


def test_onnx_dropout_mask_read_is_refused_naming_every_node(tmp_path):
    model = _onnx("dropout_masks_used", tmp_path)
    with pytest.raises(X2Error) as info:
        convert(model, str(tmp_path / "out"), source="onnx", target="onnx")
    message = str(info.value)
    assert "'drop_a', 'drop_c'" in message and "drop_b" not in message
    assert "mask output is read by the graph" in message


# -- TensorFlow ---------------------------------------------------------------

@pytest.fixture(scope="module")
def zoo_tf(tmp_path_factory):
    """zoo_tf(name) -> SavedModel built by tests/zoo_ops_tf.py (in a subprocess)."""
    root = tmp_path_factory.mktemp("zoo_tf")

    def build(name: str) -> str:
        out = root / name
        if not out.exists():
            proc = subprocess.run([sys.executable, TF_BUILDER, name, str(out)],
                                  capture_output=True, text=True, env=ENV, cwd=ROOT)
            assert proc.returncode == 0, proc.stderr[-3000:]
        return str(out)
    return build


def test_tf_broadcast_cumsum_gather_scatter_resize_rfft(zoo_tf, tmp_path):
    """BroadcastTo, Cumsum (exclusive+reverse), GatherNd (constant and computed
    indices), ScatterNd with a duplicate index, nearest resize with
    half_pixel_centers (8x8 -> 16x24), LogicalAnd/Or, |RFFT| (8 and 10 points)."""
    _assert_converts_with_parity("tf", zoo_tf("ops"), [(2, 8, 8, 3)], tmp_path)


def test_tf_3d_pools(zoo_tf, tmp_path):
    _assert_converts_with_parity("tf", zoo_tf("volume"), [(2, 4, 6, 5, 3)], tmp_path)


def test_tf_constant_subgraph_is_folded(zoo_tf, tmp_path):
    """Range, FloorDiv, FloorMod and Cos that only build a window need no mapper."""
    _assert_converts_with_parity("tf", zoo_tf("window"), [(2, 12)], tmp_path)


def test_tf_rfft_with_complex_readers_is_refused(zoo_tf, tmp_path):
    with pytest.raises(X2Error) as info:
        convert(zoo_tf("complex_out"), str(tmp_path / "out"), source="tf", target="onnx")
    message = str(info.value)
    assert "RFFT" in message and "complex result is read by" in message
    assert "ComplexAbs" in message  # says what does convert
