"""Hostile strings on their way into generated code (issue 13, items 1, 6, 7).

Names of nodes and values, attribute strings and the model's file name come
from an untrusted file. They reach model.py only through
`codegen.escape_text` (comments, docstrings, literals) and `codegen.Namer`
(identifiers). Each route is tried end to end with a payload that would
create a marker file if it ever ran; the converted model must compile, load
and match the source."""
from __future__ import annotations

import ast
import json
import random
import unicodedata

import pytest

from conftest import run_cli
from x2.emitters.codegen import RESERVED, Namer, escape_text, literal

PAYLOAD = '__import__("os").system("touch {marker}")'


# -- the escaping function and the namer, on adversarial strings ---------------

def _adversarial_strings(count: int = 3000) -> list[str]:
    """Seeded strings over the characters that end lines, literals or
    comments, plus random code points (surrogates and non-characters too)."""
    rng = random.Random(13)
    nasty = ["\n", "\r", "\r\n", "\x00", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029",
             "'", '"', '"""', "'''", "\\", "\\N{", "#", "ａ", "½", "ﬁ", "𝔞", "\ud800", "\ufeff",
             "é", "e\u0301", "\t", "{", "}", "%s"]
    out = list(nasty)
    for _ in range(count):
        parts = [rng.choice(nasty) if rng.random() < 0.5 else chr(rng.randrange(0x110000))
                 for _ in range(rng.randrange(1, 12))]
        out.append("".join(parts))
    return out


def test_escaped_text_is_one_printable_ascii_line_with_the_same_value():
    for text in _adversarial_strings():
        escaped = escape_text(text)
        assert all(" " <= ch <= "~" for ch in escaped), repr(escaped)
        assert ast.literal_eval(f"'{escaped}'") == text
        assert ast.literal_eval(f'"""{escaped}"""') == text
        # As a comment it stays a comment: the module is one statement.
        tree = ast.parse(f"x = 1  # {escaped}\n")
        assert len(tree.body) == 1


def test_string_attributes_become_literals_not_code():
    text = "constant'); __import__('os').system('x'); ('"
    assert ast.literal_eval(literal(text)) == text
    assert ast.literal_eval(literal([text, 1, 2.5, None])) == [text, 1, 2.5, None]
    with pytest.raises(TypeError):
        literal(object())  # anything but plain data is an x2 bug, never pasted in


def test_identifiers_are_valid_unique_and_stable_under_nfkc():
    namer = Namer()
    values = list(dict.fromkeys(_adversarial_strings(1500) + [
        "a", "ａ", "float", "self", "torch", "F", "match", "1x", "", "_", "__class__", "½"]))
    names = [namer(v) for v in values]
    assert len(set(names)) == len(values)
    for name in names:
        assert name.isidentifier() and name.isascii(), repr(name)
        assert unicodedata.normalize("NFKC", name) == name
        assert name not in RESERVED, name
    assert namer("a") == names[values.index("a")]  # the same value keeps its name


# -- end to end ----------------------------------------------------------------

def _hostile_onnx(path, marker):
    """relu(x) - sigmoid(x) with every name hostile: node names carrying code
    (\\n, \\r\\n, NUL, \"\"\", U+2028), values 'ａ' and 'a' (one name under
    NFKC), an input called `float` (the generated code calls float('inf')),
    and a value named '½\\x00' (not an identifier under any normalisation)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    code = PAYLOAD.format(marker=marker)
    nodes = [
        helper.make_node("Relu", ["float"], ["ａ"], name=f"a\n        {code}\n        #"),
        helper.make_node("Sigmoid", ["float"], ["a"], name=f"s\r\n{code}\r#"),
        helper.make_node("Sub", ["ａ", "a"], ["½\x00"], name=f"sub\x00{code}"),
        helper.make_node("Constant", [], ["inf"], name='c"""\u2028' + code,
                         value=helper.make_tensor("v", TensorProto.FLOAT, [], [np.inf])),
        helper.make_node("Min", ["½\x00", "inf"], ["y"], name=f"'''\r{code}"),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("float", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _assert_safe_output(out, marker, source_name_part):
    assert not marker.exists(), "a payload ran"
    text = (out / "model.py").read_text()
    tree = ast.parse(text)  # compiles
    assert all(" " <= ch <= "~" or ch == "\n" for ch in text)
    forward = next(f for cls in tree.body if isinstance(cls, ast.ClassDef)
                   for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward")
    calls = [n for n in ast.walk(forward) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id in ("__import__", "exec", "eval")]
    assert calls == []
    assert source_name_part in ast.get_docstring(tree)  # the name survives, as text


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_hostile_onnx_names_and_file_name(tmp_path, target):
    marker = tmp_path / "pwned"
    # The file name itself ends the docstring and runs code if pasted raw.
    name = f'x"""\n{PAYLOAD.format(marker=marker.name)}\n"""y.onnx'
    model = tmp_path / name
    _hostile_onnx(model, marker)
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "onnx", "--to", target, "--model", name,
                   "--out", str(out), "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    _assert_safe_output(out, marker, name)
    report = tmp_path / "check.json"
    proc = run_cli("check", "--from", "onnx", "--to", target, "--model", name,
                   "--converted", str(out), "--json", str(report), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(report.read_text())
    assert result["passed"] and result["outputs"]
    # relu(x) - sigmoid(x) is not zero: merged names ('ａ' == 'a') would give zeros.
    assert all(r["ref_scale"] > 0.1 for r in result["outputs"])
    assert not marker.exists() and not (tmp_path / marker.name).exists()


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_hostile_savedmodel_function_node_names(tf_model, tmp_path, target):
    models = tf_model("hostile_names")
    model, marker = models / "hostile", models / "pwned"
    out = tmp_path / "out"
    # TensorFlow cannot load these names, so it cannot judge the model: convert
    # says so and writes nothing, unless told --no-verify.
    proc = run_cli("convert", "--from", "tf", "--to", target, "--model", str(model),
                   "--out", str(out), "--quiet")
    assert proc.returncode != 0 and "verify could not run the source model" in proc.stderr
    assert "--no-verify" in proc.stderr and not out.exists()
    proc = run_cli("convert", "--from", "tf", "--to", target, "--model", str(model),
                   "--out", str(out), "--quiet", "--no-verify")
    assert proc.returncode == 0, proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["source"]["reader"]["name"] == "direct"  # the reader TF would not be
    _assert_safe_output(out, marker, model.name)
    # TensorFlow refuses to load the hostile names: the reference is the same
    # model with its original names.
    proc = run_cli("check", "--from", "tf", "--to", target, "--model", str(models / "clean"),
                   "--converted", str(out), "--json", str(tmp_path / "check.json"))
    assert proc.returncode == 0, proc.stderr
    result = json.loads((tmp_path / "check.json").read_text())
    assert result["passed"] and result["outputs"]
    assert all(r["ref_scale"] > 0.1 for r in result["outputs"])
    assert not marker.exists()


def test_error_messages_show_hostile_paths_on_one_line(tmp_path):
    """A path with a line break, CR and rich markup cannot fake lines of
    x2's output or style it: the error is one escaped line."""
    name = "bad[red]\nerror: fake line\r.onnx"
    (tmp_path / name).write_bytes(b"not onnx")
    proc = run_cli("convert", "--from", "onnx", "--to", "onnx", "--model", name,
                   "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("error: bad[red]\\nerror: fake line\\r.onnx: not a readable")
    assert len([ln for ln in lines if ln.startswith("error:")]) == 1
    assert "\r" not in proc.stderr
