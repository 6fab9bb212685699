"""Convert's verify (x2/check/verify.py): the source framework judges every
model x2 writes. A model that disagrees with its source, crashes or hangs is
refused with the runner and output named; the trap models
(tests/trap_models.py) convert right on every target or are refused."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from x2.check.compare import compare_indices
from x2.check.parity import check
from x2.check.verify import verify
from x2.convert import convert
from conftest import run_cli
from x2.errors import ConversionError, InternalError, X2Error

pytestmark = pytest.mark.xdist_group("verify")

TRAPS = str(Path(__file__).with_name("trap_models.py"))
TOKENS = {"input_ids": ["batch", "seq=7"], "attention_mask": ["batch", "seq"]}
CASES = {
    "padded_embedding": dict(input_shapes=TOKENS,
                             options={"input_dtypes": {"*": "int64"}}),
    "edge_values": dict(input_shapes={"x": ["batch=4", 6]}),
    "TopkTies": dict(input_shapes={"x": ["batch=4", 6]}),
    "BigIndexMath": dict(input_shapes={"input_ids": ["batch=2", "seq=5"]},
                         options={"input_dtypes": {"*": "int64"}}),
}
# What each runner must run right (a refusal would be a regression: these
# were refused, or written wrong, before the fixes they came with).
MUST_CONVERT = {("padded_embedding", "paddle"), ("BigIndexMath", "paddle"),
                ("padded_embedding", "torch"), ("padded_embedding", "onnx"),
                # top-k over ties: every target picks other tied indices than
                # torch, all right (compared up to ties, x2/check/compare.py)
                ("TopkTies", "paddle"), ("TopkTies", "onnx"), ("TopkTies", "torch")}


@pytest.mark.parametrize("target", ["paddle", "onnx", "torch"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_trap_models_are_right_or_refused(tmp_path, name, target):
    out = tmp_path / "out"
    try:
        report = convert(f"{TRAPS}:{name}", str(out), source="torch", target=target,
                         **CASES[name])
    except InternalError:
        raise
    except X2Error as exc:
        assert (name, target) not in MUST_CONVERT, str(exc)
        assert "refuses" in str(exc) or "not supported" in str(exc), str(exc)
        assert not out.exists()
        return
    record = report.target_details["verify"]
    assert record["verified"] is True
    assert [s["dims"].get("batch") for s in record["shapes"]] == [2, 1]
    # An independent check at three sizes, other seeds: the verify let nothing
    # wrong through.
    result = check(f"{TRAPS}:{name}", str(out), source="torch", target=target, seed=5,
                   serving=True)
    assert result["passed"], result["outputs"]


def test_pad_token_rows_are_fed_and_read_as_torch_does(tmp_path):
    """The pad id (a trained row) is among the verify's inputs, so paddle's
    zeroing of padding_idx rows could not pass it."""
    out = tmp_path / "out"
    convert(f"{TRAPS}:padded_embedding", str(out), source="torch", target="paddle",
            **CASES["padded_embedding"])
    report = json.loads((out / "report.json").read_text())
    ids = next(i for i in report["inputs"] if i["name"] == "input_ids")
    assert ids["range"] == [0, 50] and 3 in ids["special"]
    assert "padding_idx" not in (out / "model.py").read_text()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A small torch model written to torch, paddle and onnx without verify,
    for the tests below to break."""
    root = tmp_path_factory.mktemp("written")
    outs = {}
    for target in ("torch", "paddle", "onnx"):
        outs[target] = root / target
        convert(f"{TRAPS}:padded_embedding", str(outs[target]), source="torch",
                target=target, emit_options={"verify": False}, **CASES["padded_embedding"])
    return outs


def _broken_copy(src: Path, dst: Path, edit) -> Path:
    shutil.copytree(src, dst)
    path = dst / "model.py"
    path.write_text(edit(path.read_text()))
    return dst


def test_an_unverified_model_says_so(written):
    report = json.loads((written["torch"] / "report.json").read_text())
    assert report["target_details"]["verify"] == {"verified": False, "skipped": "--no-verify"}


def test_a_model_that_disagrees_is_refused_naming_runner_output_and_size(written, tmp_path):
    # The head off by 0.1%: far beyond float32 noise, small enough to miss by eye.
    wrong = _broken_copy(written["torch"], tmp_path / "wrong", lambda text: text.replace(
        "= self.lm_head(", "= 1.001 * self.lm_head(", 1))
    assert "1.001 * self.lm_head(" in (wrong / "model.py").read_text()
    (tmp_path / "work").mkdir()
    with pytest.raises(ConversionError) as exc:
        verify(f"{TRAPS}:padded_embedding", wrong, tmp_path / "work", source="torch",
               target="torch")
    message = str(exc.value)
    assert "torch:python output" in message and "batch=2" in message
    assert "--no-verify" in message


def test_float32_rounding_is_told_from_a_wrong_mapping_by_the_float64_run():
    """A deep net with large activations wanders in float32 (the source and
    the target each by ~3e-4 of the output's scale): the converted model run
    in float64 says it is rounding. A mapping 1e-3 off is as far from its own
    float64 run as from the source; a runner off in float32 only (a serving
    runtime's pass) is far from the float64 run while the source is close:
    both stay refused."""
    from x2.check.compare import rounding_only
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(2, 100)) * 500
    source = (truth + rng.normal(size=truth.shape) * 0.15).astype(np.float32)
    target = (truth + rng.normal(size=truth.shape) * 0.15).astype(np.float32)
    opinion = rounding_only(source, target, [truth], 0, 1e-4, 1e-6)
    assert opinion["rounding"] and opinion["source_vs_float64"] < 1e-3
    wrong_truth = truth * 1.001          # what a wrong mapping computes, exactly
    wrong = (wrong_truth + rng.normal(size=truth.shape) * 1e-4).astype(np.float32)
    assert not rounding_only(source, wrong, [wrong_truth], 0, 1e-4, 1e-6)["rounding"]
    exact_source = truth.astype(np.float32)   # the source right to float32's last bit
    assert not rounding_only(exact_source, (truth * 1.001).astype(np.float32), [truth], 0,
                             1e-4, 1e-6)["rounding"]
    assert rounding_only(source, target, None, 0, 1e-4, 1e-6) is None   # no float64 run
    holed = truth.copy()
    holed[0, 0] = np.nan   # a float64 run that lost a value the source has: no opinion
    assert rounding_only(source, target, [holed], 0, 1e-4, 1e-6) is None


@pytest.mark.parametrize("target", ["torch", "paddle", "onnx"])
def test_the_written_model_runs_in_float64_for_the_second_opinion(written, target, tmp_path):
    """model.py in float64; model.onnx computed in float64 by x2's numpy
    kernels. Each is the written model's float32 result to within float32
    rounding, and carries bits float32 has not (a float64 computation, not a
    float32 one widened). Takes about a second per target."""
    from x2.check.parity import TARGET_RUNS, float64_outputs, make_inputs, run_target
    from x2.check.parity import save_batches
    from x2.contracts import Report
    report = Report.load(written[target])
    spec = {"inputs": report.inputs, "outputs": [o["name"] for o in report.outputs]}
    (folder,) = save_batches(tmp_path, [make_inputs(spec, 0, {"batch": 2, "seq": 7})],
                             [i["name"] for i in report.inputs], {})
    (logits,) = float64_outputs(target, folder, written[target], report, None, 120)
    assert logits.dtype == np.float64 and logits.shape[-1] == 50 and np.isfinite(logits).all()
    task, mode = TARGET_RUNS[target][0]
    ((float32,),), _ = run_target(task, mode, [folder], str(written[target]), target, report,
                                  None, "fp32", 1)
    scale = float(np.max(np.abs(logits)))
    assert np.max(np.abs(float32 - logits)) <= 1e-6 * scale and scale > 0.1
    assert np.any(logits != logits.astype(np.float32))


def _rounded_head(text: str) -> str:
    """model.py with the head's result rounded to float32's steps at 1e4."""
    lines = text.splitlines()
    (i,) = [i for i, line in enumerate(lines) if "= self.lm_head(" in line]
    target, expr = lines[i].split("  #")[0].split(" = ", 1)
    lines[i] = f"{target} = -1e4 + (1e4 + {expr})"
    return "\n".join(lines) + "\n"


def test_check_asks_the_float64_run_and_refuses_what_is_not_rounding(written, tmp_path):
    """x2 check's rule is verify's. A head 0.1% off is as far from its own
    float64 run as from the source; a head rounded to float32's steps at 1e4
    (about 5e-4 off) is far from its float64 run while the source is right to
    the last bits: a numerically worse model, not the source's rounding.
    Both fail, the float64 run's distances in the row."""
    shapes = {"batch": [2], "seq": [7]}
    for edit, far in ((lambda text: text.replace("= self.lm_head(", "= 1.001 * self.lm_head(",
                                                 1), "source"),
                      (_rounded_head, "target")):
        out = _broken_copy(written["torch"], tmp_path / far, edit)
        result = check(f"{TRAPS}:padded_embedding", str(out), source="torch", target="torch",
                       rtol=1e-5, dim_sizes=shapes)
        assert not result["passed"], result["outputs"]
        (row,) = [r for r in result["outputs"] if not r["passed"]]
        near = "target" if far == "source" else "source"
        assert row["vs_float64"][f"{far}_vs_float64"] > 1e-4 > \
            10 * row["vs_float64"][f"{near}_vs_float64"], row


def _onnx_head_edited(written: Path, dst: Path, *ops) -> Path:
    """A copy of the written ONNX model with `ops` ((op_type, constant) pairs,
    in order) applied to its output."""
    import onnx
    from onnx import helper, numpy_helper
    shutil.copytree(written, dst)
    model = onnx.load(str(dst / "model.onnx"))
    name = model.graph.output[0].name
    (producer,) = [n for n in model.graph.node if name in n.output]
    value = "head_before_edit"
    producer.output[list(producer.output).index(name)] = value
    for i, (op_type, constant) in enumerate(ops):
        model.graph.initializer.append(numpy_helper.from_array(
            np.array(constant, np.float32), f"head_edit_{i}"))
        result = name if i == len(ops) - 1 else f"head_edited_{i}"
        model.graph.node.append(helper.make_node(op_type, [value, f"head_edit_{i}"],
                                                 [result]))
        value = result
    onnx.save(model, str(dst / "model.onnx"))
    return dst


def test_check_of_an_onnx_target_judges_near_misses_by_its_float64_run(written, tmp_path):
    """The ONNX target's second opinion (model.onnx in float64 by x2's
    kernels) holds to the rule of model.py's: at a tolerance below float32
    rounding the right model passes, the rounding told by the float64 run;
    a head 0.1% off (the source far from the float64 run) and a head rounded
    to float32's steps at 1e4 (onnxruntime far from it) are refused. Three
    checks, about 6 s."""
    shapes = {"batch": [2], "seq": [7]}
    right = check(f"{TRAPS}:padded_embedding", str(written["onnx"]), source="torch",
                  target="onnx", rtol=1e-9, atol=0.0, dim_sizes=shapes)
    (row,) = right["outputs"]
    assert row["max_rel"] > 1e-9 and row["vs_float64"]["rounding"], row
    assert right["passed"], right["outputs"]
    for far, ops in (("source", [("Mul", 1.001)]), ("target", [("Add", 1e4), ("Sub", 1e4)])):
        out = _onnx_head_edited(written["onnx"], tmp_path / far, *ops)
        result = check(f"{TRAPS}:padded_embedding", str(out), source="torch", target="onnx",
                       rtol=1e-5, dim_sizes=shapes)
        assert not result["passed"], result["outputs"]
        (row,) = result["outputs"]
        near = "target" if far == "source" else "source"
        assert row["vs_float64"][f"{far}_vs_float64"] > 1e-4 > \
            10 * row["vs_float64"][f"{near}_vs_float64"], row


def _forward_replaced(body: str):
    """An edit of model.py: forward runs `body` (the real one is renamed)."""
    def edit(text):
        return text.replace("    def forward(self, ", f"    def forward(self, *_a, **_k):\n"
                            f"        {body}\n\n    def _forward(self, ", 1)
    return edit


def test_a_runner_that_crashes_or_hangs_is_a_refusal_not_a_hang(written, tmp_path):
    hang = _forward_replaced("__import__('time').sleep(600)")
    hung = _broken_copy(written["paddle"], tmp_path / "hung", hang)
    (tmp_path / "work").mkdir()
    with pytest.raises(ConversionError, match="paddle:python.*did not finish within 12"):
        verify(f"{TRAPS}:padded_embedding", hung, tmp_path / "work", source="torch",
               target="paddle", timeout=12)

    crash = _forward_replaced("raise RuntimeError('kernel missing')")
    crashed = _broken_copy(written["torch"], tmp_path / "crashed", crash)
    (tmp_path / "work2").mkdir()
    with pytest.raises(ConversionError, match="fails in torch:python.*kernel missing"):
        verify(f"{TRAPS}:padded_embedding", crashed, tmp_path / "work2", source="torch",
               target="torch")


def test_edge_ids_are_planted_in_real_tokens():
    from x2.check.parity import make_inputs
    spec = {"inputs": [{"name": "input_ids", "dtype": "int64", "shape": [None, None],
                        "dims": ["batch", "seq"], "range": [0, 50], "special": [3, 7]},
                       {"name": "attention_mask", "dtype": "int64", "shape": [None, None],
                        "dims": ["batch", "seq"], "range": [0, 2]}]}
    ids, mask = make_inputs(spec, 0, {"batch": 2, "seq": 9}, edge_ids=True)
    for row, keep in zip(ids, mask):
        real = set(row[keep == 1].tolist())
        assert {3, 7, 49, 0} <= real, (row, keep)
    assert mask[0, 0] == 1 and mask[0, -1] == 0 and mask[1, 0] == 0 and mask[1, -1] == 1
    assert np.all(mask.sum(axis=1) >= 5)


def test_the_cli_process_verifies_and_says_so(sample, tmp_path):
    """x2 convert as users run it (`python -m x2`, its own warm worker per
    framework for the job): TensorFlow and all three paddle runners judge the
    model, the summary says so, and report.json holds what ran at which sizes."""
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model",
                   str(sample("small_cnn")), "--out", str(out), process=True)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stderr.split())
    assert "verified against the source" in text and "yes: paddle:python, paddle:jit.load, " \
           "paddle:inference at batch=2; batch=1" in text, proc.stderr
    record = json.loads((out / "report.json").read_text())["target_details"]["verify"]
    assert record["verified"] is True and record["against"].startswith("tf")
    assert all(rel < 1e-4 for per in record["max_rel"].values() for rel in per.values())
    assert record["noise"]["output_0"] >= 0 and record["seconds"] > 0


def test_top_k_indices_that_are_wrong_even_up_to_ties_are_refused(tmp_path):
    """TopkTies written right, then its indices shifted by one: verify and
    x2 check both refuse it, though the right one (other tied indices than
    torch's) passes both (test_trap_models_are_right_or_refused)."""
    right = tmp_path / "right"
    report = convert(f"{TRAPS}:TopkTies", str(right), source="torch", target="torch",
                     emit_options={"verify": False}, **CASES["TopkTies"])
    assert report.outputs[1]["indices_of"] == {"op": "topk", "values": "output_0", "axis": 1,
                                               "axis_size": 6, "largest": True}
    shifted = _broken_copy(right, tmp_path / "shifted", lambda text: text.replace(
        "return output_0, output_1", "return output_0, output_1 + 1", 1))
    assert "output_1 + 1" in (shifted / "model.py").read_text()
    (tmp_path / "work").mkdir()
    with pytest.raises(ConversionError, match="output 'output_1'.*even up to ties"):
        verify(f"{TRAPS}:TopkTies", shifted, tmp_path / "work", source="torch",
               target="torch")
    result = check(f"{TRAPS}:TopkTies", str(shifted), source="torch", target="torch", seed=5)
    rows = [r for r in result["outputs"] if r["name"] == "output_1"]
    # (a batch whose rows are all tied may pass: any distinct tied indices are right)
    assert not result["passed"] and any(r["wrong_indices"] > 0 for r in rows), rows


TOPK = {"op": "topk", "values": "values", "axis": 1, "axis_size": 6}


@pytest.mark.parametrize("got, wrong", [
    ([[4, 2], [3, 1]], 0),   # tied 2 and 4 in the other order
    ([[2, 5], [3, 1]], 0),   # another element of the last tied value (the k-th)
    ([[2, 4], [1, 3]], 1),   # the largest of row 1 (no tie) is element 3, not 1
    ([[2, 2], [3, 1]], 2),   # an index twice
    ([[2, 6], [3, 1]], 1),   # past the axis
])
def test_top_k_indices_compared_up_to_ties(got, wrong):
    values = np.array([[1.0, 1.0], [1.0, 0.0]])   # row 0 tied, row 1 not
    assert compare_indices(np.array([[2, 4], [3, 1]]), np.array(got), TOPK, values) == wrong


def test_sort_indices_ties_and_the_fallbacks_without_values():
    ref, values = np.array([0, 1, 2]), np.array([3.0, 3.0, 1.0])
    sort = {"op": "sort", "values": "values", "axis": 0}
    assert compare_indices(ref, np.array([1, 0, 2]), sort, values) == 0
    # a run of ties before the last must hold the same elements (all of them)
    assert compare_indices(ref, np.array([0, 2, 1]), sort, values) == 3
    # values not an output: the index set per row, the order within unknown
    assert compare_indices(ref, np.array([2, 0, 1]), dict(sort, values=None)) == 0
    assert compare_indices(ref, np.array([0, 1, 1]), dict(sort, values=None)) == 3
    # argmax: exact (its tied candidates are not among the outputs)
    argmax = {"op": "argmax", "values": None, "axis": 1}
    assert compare_indices(np.array([1, 0]), np.array([1, 2]), argmax) == 1


def _onnx_file(path: Path, nodes, inputs, output, initializers=()) -> str:
    from onnx import TensorProto, helper, save
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                                         dims)
                                           for name, dims in inputs],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
                              initializer=list(initializers))
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    return str(path)


@pytest.mark.parametrize("kind", ["audio", "image"])
def test_sizes_the_source_rejects_are_searched_past(tmp_path, kind):
    """Under a second each (ONNX to ONNX): a source that rejects verify's
    sizes is verified at sizes it takes, not refused. Audio reflect-padded by
    32 samples needs more than 32 (verify's 16 grow 4 times at a step: 64);
    a recognizer built for 48-row images rejects 96 and 64 rows (48 is
    found, and the batch-1 set takes it too). Found with the zoo's packaged
    Silero and PP-OCR models, which verify refused."""
    from onnx import helper, numpy_helper
    if kind == "audio":
        pads = numpy_helper.from_array(np.array([0, 32, 0, 32], np.int64), "pads")
        model = _onnx_file(tmp_path / "m.onnx", [
            helper.make_node("Pad", ["x", "pads"], ["p"], mode="reflect"),
            helper.make_node("ReduceMean", ["p"], ["y"], keepdims=0)],
            [("x", ["batch", "samples"])], "y", [pads])
        want = {"samples": 64}
    else:
        rows = numpy_helper.from_array(np.linspace(-1, 1, 48, dtype=np.float32)
                                       .reshape(1, 1, 48, 1), "rows")
        model = _onnx_file(tmp_path / "m.onnx", [helper.make_node("Add", ["x", "rows"], ["y"])],
                           [("x", ["batch", 3, "height", "width"])], "y", [rows])
        want = {"height": 48}
    record = convert(model, str(tmp_path / "out"), source="onnx",
                     target="onnx").target_details["verify"]
    assert record["verified"], record
    found = [{name: s["dims"][name] for name in want} for s in record["shapes"]]
    assert found[0] == want, record["shapes"]
    if kind == "image":
        assert [s["dims"]["batch"] for s in record["shapes"]] == [2, 1] and found[1] == want
    assert any("the source itself rejects" in n for n in record["notes"]), record["notes"]

