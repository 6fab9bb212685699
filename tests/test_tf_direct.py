"""The direct SavedModel reader (x2/frontends/tf/direct.py): it must describe a
model exactly as the TensorFlow reader does, import no TensorFlow, fall back
to TensorFlow (saying why) on what it does not handle, and report broken
files by name."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT, run_cli

# (fixture kind, name, path inside it, signature)
MODELS = [
    ("sample", "small_cnn", "", None),
    ("sample", "mlp", "", None),
    ("sample", "residual_cnn", "", None),
    ("tf", "raw_ops", "", None),
    ("tf", "two_inputs", "", None),
    ("tf", "unsupported", "", None),
    ("tf", "backbone_pair", "full", None),
    ("tf", "two_signatures", "", "serving_default"),
    ("tf", "two_signatures", "", "shuffle"),
    ("tf", "tf_extras", "saved", None),
]


def _last_line_of(args: list[str]) -> str:
    """Run a Python script in a fresh process (it may import TensorFlow); its
    last line of output."""
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.strip().splitlines()[-1]


def _path(sample, tf_model, kind, name, sub):
    base = sample(name) if kind == "sample" else tf_model(name)
    return base / sub if sub else base


@pytest.mark.parametrize("kind,name,sub,signature", MODELS,
                         ids=[f"{m[1]}-{m[3] or 'default'}" for m in MODELS])
def test_direct_reader_describes_the_model_as_tensorflow_does(sample, tf_model, kind, name,
                                                              sub, signature):
    """Same ops, names, attributes (with TF's defaults filled in), dtypes,
    constants and weights as the TensorFlow reader; shapes equal or more
    precise (functions record the shapes TF inferred when tracing)."""
    path = _path(sample, tf_model, kind, name, sub)
    args = [str(ROOT / "tests" / "tf_reader_diff.py"), str(path)]
    result = json.loads(_last_line_of(args + ([signature] if signature else [])))
    assert result["reader"] == "direct", result
    assert result["ops"] > 0
    assert result["problems"] == []


def test_direct_reader_imports_no_tensorflow(sample):
    code = ("import sys, json\n"
            "from x2.contracts import ReadRequest\n"
            "from x2.frontends.tf.formats import read\n"
            "source, record = read(ReadRequest(sys.argv[1]))\n"
            "print(json.dumps({'reader': record['reader'], 'ops': len(source.ops),\n"
            "  'loaded': sorted(m for m in ('tensorflow', 'keras', 'tf_keras')\n"
            "                   if m in sys.modules)}))\n")
    result = json.loads(_last_line_of(["-c", code, str(sample("small_cnn"))]))
    assert result["reader"] == {"name": "direct"}
    assert result["ops"] > 20
    assert result["loaded"] == []


def test_bundle_reader_matches_tensorflow_checkpoint_reader(sample):
    """Every tensor of the variables bundle, byte for byte, as TF reads it."""
    code = ("import sys, numpy as np, tensorflow as tf\n"
            "from pathlib import Path\n"
            "from x2.frontends.tf.bundle import Bundle\n"
            "prefix = sys.argv[1] + '/variables/variables'\n"
            "ours, theirs = Bundle(Path(prefix)), tf.train.load_checkpoint(prefix)\n"
            "keys = sorted(theirs.get_variable_to_shape_map())\n"
            "assert sorted(ours.entries) == keys, (sorted(ours.entries)[:5], keys[:5])\n"
            "for key in keys:\n"
            "    a, raw = ours.read(key), theirs.get_tensor(key)\n"
            "    if a.dtype == object:  # a string scalar: TF gives bytes\n"
            "        assert a.item() == raw and len(raw) > 100, key\n"
            "        continue\n"
            "    b = np.asarray(raw)\n"
            "    assert a.dtype == b.dtype and a.shape == b.shape, key\n"
            "    assert (a == b).all(), key\n"
            "print(len(keys))\n")
    assert int(_last_line_of(["-c", code, str(sample("residual_cnn"))])) > 10


def _onnx_outputs(model_dir, x):
    import onnxruntime as ort
    session = ort.InferenceSession(str(model_dir / "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


def test_both_readers_give_the_same_converted_model(sample, tmp_path):
    """The direct reader is the default; its ONNX output computes what the
    TensorFlow reader's does (identical IR, so identical numbers)."""
    model = sample("residual_cnn")
    reports = {}
    for reader in ("direct", "tensorflow"):
        proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(model),
                       "--out", str(tmp_path / reader), "--tf-reader", reader, "--quiet")
        assert proc.returncode == 0, proc.stderr
        reports[reader] = json.loads((tmp_path / reader / "report.json").read_text())
    assert reports["direct"]["source"]["reader"] == {"name": "direct"}
    assert reports["tensorflow"]["source"]["reader"]["name"] == "tensorflow"
    assert reports["direct"]["ir_ops"] == reports["tensorflow"]["ir_ops"]
    shape = [2 if d is None else d for d in reports["direct"]["inputs"][0]["shape"]]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    direct, with_tf = _onnx_outputs(tmp_path / "direct", x), _onnx_outputs(tmp_path / "tensorflow",
                                                                          x)
    assert np.std(direct[0]) > 1e-3  # not a constant output
    np.testing.assert_array_equal(direct[0], with_tf[0])


def test_input_shape_falls_back_to_tensorflow_and_says_why(sample, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--out", str(out), "--input-shape", "features:3,64")
    assert proc.returncode == 0, proc.stderr
    reader = json.loads((out / "report.json").read_text())["source"]["reader"]
    assert reader["name"] == "tensorflow" and "--input-shape" in reader["why"]
    summary = " ".join((proc.stdout + proc.stderr).split())
    assert "read by" in summary and "TensorFlow (--input-shape" in summary, summary


def test_direct_reader_keeps_a_runtime_cond_as_a_conditional(tf_model, tmp_path):
    """tf.cond on a value known only at run time: the direct reader (no
    TensorFlow) reads both branches from the function library into one `if`."""
    from x2.check.parity import check
    model = str(tf_model("control_flow"))
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", model, "--out", out,
                   "--tf-reader", "direct")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(open(os.path.join(out, "report.json")).read())
    assert report["source"]["reader"] == {"name": "direct"}
    import onnx
    assert "If" in [n.op_type for n in onnx.load(os.path.join(out, "model.onnx")).graph.node]
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32) * 3
    # sum > 0 takes x * 2, else x - 1; the relu after it keeps both outputs varied
    cases = [x + 1, x - 1.2]
    assert cases[0].sum() > 0 > cases[1].sum()
    for case in cases:
        result = check(model, out, source="tf", target="onnx", inputs=[case])
        assert all(r["passed"] for r in result["outputs"]), result["outputs"]


def _copy(model, tmp_path):
    copy = tmp_path / "model"
    shutil.copytree(model, copy)
    return copy


@pytest.mark.parametrize("damage,needle", [
    ("index_garbage", "not a TensorFlow checkpoint index"),
    ("data_truncated", "truncated"),
    ("data_missing", "missing"),
])
def test_broken_weights_name_the_file(sample, tmp_path, damage, needle):
    model = _copy(sample("mlp"), tmp_path)
    variables = model / "variables"
    data = variables / "variables.data-00000-of-00001"
    if damage == "index_garbage":
        (variables / "variables.index").write_bytes(b"\x00garbage" * 20)
    elif damage == "data_truncated":
        data.write_bytes(data.read_bytes()[:100])
    else:
        data.unlink()
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(model), "--out", out)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    text = " ".join(proc.stderr.split())
    assert needle in text and "variables" in text, text
    assert not os.path.exists(out)


def test_op_table_covers_every_mapped_tf_op():
    """A new TF mapper needs `python tools/gen_tf_opdefs.py`; without it the
    direct reader would leave every model using the op to TensorFlow."""
    from x2.frontends.tf.opdefs import NOT_CORE, OUTPUTS
    from x2.registry import TF
    # "x2.*" ops are made by the reader itself (a recognised Keras recurrent layer).
    missing = sorted(op for op in TF.load_mappers().supported()
                     if op not in OUTPUTS and op not in NOT_CORE and not op.startswith("x2."))
    assert missing == [], f"run tools/gen_tf_opdefs.py: {missing}"


_INPUT_ORDER = """
import json, sys
from x2.contracts import ReadRequest
from x2.frontends.tf import direct, savedmodel
path = sys.argv[1]
read = direct.read_savedmodel_direct(path, None)
traced, _ = savedmodel.read(path, ReadRequest(path, input_shapes={"token_ids": [2, 4],
                                                                  "padding_mask": [2, 4]}))
print(json.dumps([[read.input_aliases.get(v, v) for v in read.inputs],
                  [traced.input_aliases.get(v, v) for v in traced.inputs]]))
"""


def test_signature_inputs_take_one_order_whatever_the_hash_seed(tf_model):
    """A SavedModel's signature inputs are a protobuf map, which Python
    iterates in an order that changes with the hash seed (seeds 1 and 2 give
    the two orders): both readers list them sorted by name, as TensorFlow
    flattens keyword arguments, so the written forward() takes its arguments
    in one order from one conversion to the next. About 15 s (TensorFlow
    imported twice)."""
    model = str(tf_model("keyword_inputs"))
    orders = []
    for seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-c", _INPUT_ORDER, model], capture_output=True,
                              text=True, env={**ENV, "PYTHONHASHSEED": seed}, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        orders.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    expected = ["padding_mask", "token_ids"]
    assert orders == [[expected, expected]] * 2
