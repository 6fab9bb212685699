"""Hostile and malformed torch.export archives and Keras files (issue 13,
items 2 and 9).

torch.export.load unpickles (torch.load falling back to weights_only=False,
pickle.loads for opaque constants) and evaluates shape expressions with
sympy (Python eval). Each route is tried with a payload that would create a
marker file if it ever ran: x2 must refuse the archive naming the entry and
--trust-pickle, exit 2 with one line, leave no output and never run it. The
archives are made here from one saved by torch.export.save (built in a
subprocess: torch never loads into the pytest process)."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ENV, ROOT, run_cli
from hostile_models import entry, rewrite_zip

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("hostile_torch")

BUILDER = str(ROOT / "tests" / "hostile_models.py")


def _build(name: str, out: Path) -> Path:
    proc = subprocess.run([sys.executable, BUILDER, name, str(out)], capture_output=True,
                          text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, f"building {name} failed:\n{proc.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def pt2_dir(tmp_path_factory):
    return _build("pt2", tmp_path_factory.mktemp("pt2"))


class _Planted:
    """Unpickling this opens (creates) `path`: the payload of every pickle route."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _payload(marker: Path) -> bytes:
    return pickle.dumps(_Planted(marker))


# Each mutation plants a payload in a copy of tiny.pt2 and returns the suffix of
# the archive entry the refusal must name.
def _pickled_weight(entries, marker):
    name = entry(entries, "data/weights/model_weights_config.json")
    config = json.loads(entries[name])
    meta = config["config"]["fc.weight"]
    meta["use_pickle"] = True
    entries[name] = json.dumps(config).encode()
    entries[entry(entries, "data/weights/" + meta["path_name"])] = _payload(marker)
    return "data/weights/" + meta["path_name"]


def _sample_inputs(entries, marker):
    entries[entry(entries, "data/sample_inputs/model.pt")] = _payload(marker)
    return "data/sample_inputs/model.pt"


def _constant(prefix):
    def plant(entries, marker):
        name = entry(entries, "data/constants/model_constants_config.json")
        config = json.loads(entries[name])
        config["config"]["planted"] = {"path_name": f"{prefix}0", "is_param": False,
                                       "use_pickle": True, "tensor_meta": None}
        entries[name] = json.dumps(config).encode()
        entries[name.rsplit("/", 1)[0] + f"/{prefix}0"] = _payload(marker)
        return f"data/constants/{prefix}0"
    return plant


def _shape_expression(entries, marker):
    name = entry(entries, "models/model.json")
    text = entries[name].decode()
    expr = f"__import__('os').mkdir({str(marker)!r}) or 3"
    planted = json.dumps({"as_expr": {"expr_str": expr, "hint": {"as_int": 3}}})
    assert '{"as_int": 3}' in text
    entries[name] = text.replace('{"as_int": 3}', planted, 1).encode()
    return "models/model.json"


HOSTILE = {
    "pickled weight (use_pickle)": _pickled_weight,
    "tampered sample inputs": _sample_inputs,
    "pickled tensor constant": _constant("tensor_"),
    "opaque constant (pickle.loads)": _constant("opaque_obj_"),
    "TorchScript custom object": _constant("custom_obj_"),
    "shape expression (sympify)": _shape_expression,
}


def _assert_refused(proc, out: Path, marker: Path, *needles: str):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert not marker.exists(), "the payload ran"
    assert not out.exists(), "an output folder was left behind"
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize("route", sorted(HOSTILE))
def test_pt2_payload_is_refused_naming_the_entry(pt2_dir, tmp_path, route):
    marker, out = tmp_path / "pwned", tmp_path / "out"
    hostile = tmp_path / "hostile.pt2"
    planted = {}
    rewrite_zip(pt2_dir / "tiny.pt2", hostile,
                lambda entries: planted.setdefault("entry", HOSTILE[route](entries, marker)))
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model", str(hostile),
                   "--out", str(out))
    _assert_refused(proc, out, marker, str(hostile), planted["entry"], "--trust-pickle")


def test_ordinary_pt2_converts_with_parity_and_hostile_one_is_refused_by_check(pt2_dir,
                                                                               tmp_path):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model",
                   str(pt2_dir / "tiny.pt2"), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "model.onnx").is_file()
    proc = run_cli("check", "--from", "torch", "--to", "onnx", "--model",
                   str(pt2_dir / "tiny.pt2"), "--converted", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # `x2 check` runs the source model too: it loads the archive the same way.
    marker, hostile = tmp_path / "pwned", tmp_path / "hostile.pt2"
    rewrite_zip(pt2_dir / "tiny.pt2", hostile, lambda e: _sample_inputs(e, marker))
    proc = run_cli("check", "--from", "torch", "--to", "onnx", "--model", str(hostile),
                   "--converted", str(out))
    assert proc.returncode == 2 and not marker.exists(), proc.stdout + proc.stderr
    assert "--trust-pickle" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("archive, flags", [("pickled_weight.pt2", ()),
                                            ("tiny.pt2", ("--trust-pickle",))])
def test_weights_only_pickle_and_trust_pickle_still_convert(pt2_dir, tmp_path, archive,
                                                            flags):
    """A tensor pickled by torch.export.save loads weights-only (no flag needed);
    --trust-pickle keeps torch.export.load's own behaviour."""
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model",
                   str(pt2_dir / archive), "--out", str(out), *flags)
    assert proc.returncode == 0, proc.stderr
    if not flags:  # (x2 check has no --trust-pickle)
        proc = run_cli("check", "--from", "torch", "--to", "onnx", "--model",
                       str(pt2_dir / archive), "--converted", str(out))
        assert proc.returncode == 0, proc.stdout + proc.stderr


def _delete(suffix):
    def edit(entries):
        del entries[entry(entries, suffix)]
    return edit


def _garble(suffix):
    def edit(entries):
        entries[entry(entries, suffix)] = b"{not json"
    return edit


MALFORMED = {
    "weight file missing": (_delete("data/weights/weight_0"), "data/weights/weight_0",
                            "missing"),
    "program missing": (_delete("models/model.json"), "models/model.json", "missing"),
    "sample inputs missing": (_delete("data/sample_inputs/model.pt"),
                              "data/sample_inputs/model.pt", "missing"),
    "weights index missing": (_delete("data/weights/model_weights_config.json"),
                              "model_weights_config.json", "missing"),
    "program not JSON": (_garble("models/model.json"), "models/model.json", "corrupt"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_pt2_with_missing_or_corrupt_entry_names_it(pt2_dir, tmp_path, case):
    edit, named, word = MALFORMED[case]
    broken, out = tmp_path / "broken.pt2", tmp_path / "out"
    rewrite_zip(pt2_dir / "tiny.pt2", broken, edit)
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model", str(broken),
                   "--out", str(out))
    line = _assert_refused(proc, out, tmp_path / "no-marker", str(broken), named, word)
    assert "warnings above" not in line


def test_truncated_pt2_is_a_clear_error(pt2_dir, tmp_path):
    broken, out = tmp_path / "broken.pt2", tmp_path / "out"
    broken.write_bytes((pt2_dir / "tiny.pt2").read_bytes()[:2000])
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model", str(broken),
                   "--out", str(out))
    _assert_refused(proc, out, tmp_path / "no-marker", str(broken), "zip")


# -- Keras: custom classes and functions ----------------------------------------

@pytest.fixture(scope="module")
def keras_dir(tmp_path_factory):
    return _build("keras_custom", tmp_path_factory.mktemp("keras_custom"))


def test_keras_custom_class_is_refused_naming_it(keras_dir, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model",
                   str(keras_dir / "custom.keras"), "--out", str(out), cwd=keras_dir)
    line = _assert_refused(proc, out, keras_dir / "imported", "custom.keras",
                           "'x2hostile>ScaleBy'", "'custom_layers'",
                           "'x2hostile>shifted_relu'", "--trust-code")
    assert "class" in line and "function" in line


def test_keras_custom_class_loads_with_trust_code(keras_dir, tmp_path):
    out = tmp_path / "out"
    try:
        proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model",
                       str(keras_dir / "custom.keras"), "--out", str(out), "--trust-code",
                       cwd=keras_dir)
        assert proc.returncode == 0, proc.stderr
        assert (keras_dir / "imported").exists()  # --trust-code imported custom_layers
    finally:
        (keras_dir / "imported").unlink(missing_ok=True)
