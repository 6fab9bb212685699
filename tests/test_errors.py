"""Bad input gets one clear message, a non-zero exit, no traceback, and no
output directory (not even a half-written one)."""
import json
import os

import pytest

from conftest import run_cli
from x2.convert import convert
from x2.errors import SelectionError, UnsupportedOpsError


def _assert_clean_failure(proc, out, *needles):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert not os.path.exists(out)
    leftovers = [p for p in os.listdir(os.path.dirname(out)) if "x2-staging" in p]
    assert leftovers == []


def test_all_unsupported_ops_are_listed_at_once(tf_model, tmp_path):
    """In a real `python -m x2` process, as users meet it: the error, its
    exit status, no traceback (the other tests run the command in-process)."""
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model",
                   str(tf_model("unsupported")), "--out", out, process=True)
    _assert_clean_failure(proc, out, "2 tensorflow op type(s) are not supported", "Cumprod",
                          "x2", "Atan", "x1")
    with pytest.raises(UnsupportedOpsError) as info:
        convert(str(tf_model("unsupported")), out)
    assert info.value.details["unsupported"]["Cumprod"]["count"] == 2
    assert info.value.details["unsupported"]["Atan"]["count"] == 1


def test_debug_shows_the_traceback(tf_model, tmp_path):
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model",
                   str(tf_model("unsupported")), "--out", str(tmp_path / "o"), "--debug")
    assert proc.returncode == 2 and "Traceback" in proc.stderr


def test_missing_model_and_not_a_savedmodel(tmp_path):
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model",
                   str(tmp_path / "nope"), "--out", out)
    _assert_clean_failure(proc, out, "no such file or directory")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "saved_model.pb").write_bytes(b"\x00not a protobuf at all" * 10)
    (garbage / "variables").mkdir()
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model", str(garbage),
                   "--out", out)
    _assert_clean_failure(proc, out, str(garbage), "could not load")


def test_savedmodel_without_variables(sample, tmp_path):
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(sample("mlp"), broken)
    shutil.rmtree(broken / "variables")
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model", str(broken),
                   "--out", out)
    _assert_clean_failure(proc, out, "variables", "weights are missing")


def test_unknown_output_name_lists_candidates(tf_model, tmp_path):
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model",
                   str(tf_model("two_inputs")), "--out", out, "--outputs", "left_relux")
    _assert_clean_failure(proc, out, "no tensor named 'left_relux'", "left_relu")


def test_output_needing_an_unnamed_input_is_an_error(tf_model, tmp_path):
    with pytest.raises(SelectionError, match="right") as info:
        convert(str(tf_model("two_inputs")), str(tmp_path / "out"), inputs=["left"])
    assert info.value.details["missing_inputs"] == ["right"]
    assert not (tmp_path / "out").exists()


def test_pruned_subgraph_has_exactly_the_named_inputs_and_outputs(tf_model, tmp_path):
    report = convert(str(tf_model("two_inputs")), str(tmp_path / "out"), inputs=["left"],
                     outputs=["left_relu"])
    assert [i["name"] for i in report.inputs] == ["left"]
    assert len(report.outputs) == 1 and report.ir_ops == {"relu": 1}


def test_out_is_a_file_or_a_foreign_directory(sample, tmp_path):
    model = str(sample("mlp"))
    afile = tmp_path / "afile"
    afile.write_text("mine")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model", model,
                   "--out", str(afile))
    assert proc.returncode == 2 and "is a file" in proc.stderr
    assert afile.read_text() == "mine"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model", model,
                   "--out", str(foreign))
    assert proc.returncode == 2 and "refusing to overwrite" in proc.stderr
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_reconverting_replaces_an_earlier_output(sample, tmp_path):
    model = str(sample("mlp"))
    out = tmp_path / "out"
    convert(model, str(out))  # paddle: model.pdparams, inference/
    convert(model, str(out), target="onnx")
    # Only what x2 wrote was there, so all of it is replaced (a file a user
    # added would stop it: tests/test_output_safety.py).
    assert sorted(p.name for p in out.iterdir()) == [".x2-output.json", "model.onnx",
                                                      "report.json"]


def test_failed_reconversion_keeps_the_earlier_output(sample, tf_model, tmp_path):
    out = tmp_path / "out"
    convert(str(sample("mlp")), str(out))
    before = (out / "report.json").read_text()
    with pytest.raises(UnsupportedOpsError):
        convert(str(tf_model("unsupported")), str(out))
    assert (out / "report.json").read_text() == before


def test_bad_input_shape_is_reported(sample, tmp_path):
    out = str(tmp_path / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model", str(sample("mlp")),
                   "--out", out, "--input-shape", "features:2,3,64")
    _assert_clean_failure(proc, out, "--input-shape features", "contradicts")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model", str(sample("mlp")),
                   "--out", out, "--input-shape", "nosuch:2,64")
    _assert_clean_failure(proc, out, "'nosuch' is not an input", "features")


def test_check_fails_loudly_on_a_corrupted_weight(sample, tmp_path):
    """The parity check is able to fail: corrupt one weight of the output."""
    model, out = str(sample("mlp")), tmp_path / "out"
    convert(model, str(out))
    code = (out / "model.py").read_text()
    loaded = "    wrong = [key for key, tensor in state.items() if list(tensor.shape) != shapes[key]]\n"
    corrupt = ("    key = [k for k in sorted(state) if k.endswith('.weight')][0]\n"
               "    state[key].set_value(state[key] + 0.05)\n" + loaded)
    assert loaded in code, "load_model reads its weights otherwise: corrupt them there"
    (out / "model.py").write_text(code.replace(loaded, corrupt))
    proc = run_cli("check", "--from", "tf", "--to", "paddle", "--model", model,
                   "--converted", str(out), "--json", str(tmp_path / "parity.json"))
    assert proc.returncode == 1
    result = json.loads((tmp_path / "parity.json").read_text())
    verdicts = {r["runner"]: r["passed"] for r in result["outputs"]}
    # x2 check runs the saved program through Paddle Inference by default (as served)
    assert verdicts == {"paddle:python": False, "paddle:jit.load": True,
                        "paddle:inference": True}
    assert any("Paddle Inference, default config" in n for n in result["notes"])
