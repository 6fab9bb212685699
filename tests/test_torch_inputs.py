"""Inputs of Hugging Face-shaped models: forward() arguments that default to
None chosen with --inputs, integer inputs drawn within their valid range, and
dict outputs flattened to named outputs."""
import json

import pytest

from conftest import ROOT, run_cli
from x2.check.parity import make_inputs

MODEL = f"{ROOT / 'tests' / 'torch_models.py'}:token_encoder"
ARGS = ("--inputs", "input_ids,attention_mask", "--input-shape", "input_ids:2,7",
        "--input-shape", "attention_mask:2,7", "--input-dtype", "int64")


@pytest.mark.parametrize("target", ["onnx", "torch"])
def test_defaulted_arguments_become_inputs_with_parity(tmp_path, target):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "torch", "--to", target, "--model", MODEL, *ARGS,
                   "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    inputs = {i["name"]: i for i in report["inputs"]}
    assert list(inputs) == ["input_ids", "attention_mask"]
    # The embedding has 50 rows: ids are drawn from [0, 50); a mask is 0/1.
    assert inputs["input_ids"]["range"] == [0, 50]
    assert inputs["attention_mask"]["range"] == [0, 2]
    assert [o["name"] for o in report["outputs"]] == ["last_hidden_state", "pooler_output"]
    assert report["source"]["options"]["forward_args"] == ["input_ids", "attention_mask"]
    proc = run_cli("check", "--from", "torch", "--to", target, "--model", MODEL,
                   "--converted", str(out), "--rtol", "1e-5", "--json", str(tmp_path / "p.json"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads((tmp_path / "p.json").read_text())
    for row in result["outputs"]:
        assert row["passed"] and row["ref_scale"] > 1e-2, row


def test_integer_inputs_are_drawn_within_their_range():
    spec = {"inputs": [{"name": "ids", "dtype": "int64", "shape": [None, 400],
                        "range": [3, 7]},
                       {"name": "other", "dtype": "int32", "shape": [4]}]}
    ids, other = make_inputs(spec, seed=0, batch=2)
    assert ids.shape == (2, 400) and ids.min() == 3 and ids.max() == 6
    assert other.min() >= 0 and other.max() <= 9


def test_input_range_option_overrides_and_is_checked(tmp_path):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "torch", "--to", "torch", "--model", MODEL, *ARGS,
                   "--input-range", "input_ids:5,9", "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["inputs"][0]["range"] == [5, 9]
    proc = run_cli("convert", "--from", "torch", "--to", "torch", "--model", MODEL, *ARGS,
                   "--input-range", "input_ids:9,5", "--out", str(tmp_path / "o2"))
    assert proc.returncode == 2 and "LOW < HIGH" in proc.stderr, proc.stderr


def test_a_name_that_is_no_argument_lists_the_real_ones(tmp_path):
    proc = run_cli("convert", "--from", "torch", "--to", "torch", "--model", MODEL,
                   "--input-shape", "input_idz:2,7", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert ("'input_idz' is not an argument of TokenEncoder.forward; its arguments are "
            "input_ids=..., attention_mask=..., token_type_ids=..., output_attentions=..."
            in proc.stderr), proc.stderr
    assert "Traceback" not in proc.stderr


def test_index_ranges_are_inferred_through_casts_from_any_frontend():
    """On the IR: an integer input that reaches a gather on axis 0 of a
    constant table (through a cast, as ONNX exports do) gets [0, rows)."""
    import numpy as np

    from x2.check.input_ranges import infer_index_ranges
    from x2.ir import Graph
    graph = Graph()
    graph.add_input("ids", "int32", (2, 5))
    graph.add_input("attention_mask", "int64", (2, 5))
    graph.add_input("count", "int64", (2,))
    table = graph.add_constant("table", np.zeros((37, 4), np.float32))
    cast = graph.add_node("cast", ["ids"], attrs={"dtype": "int64"})
    graph.add_node("gather", [table, cast.outputs[0]], attrs={"axis": 0})
    assert infer_index_ranges(graph) == {"ids": [0, 37], "attention_mask": [0, 2]}
