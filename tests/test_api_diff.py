"""docs/api_diff: every mapper is documented, the pages are up to date, and every
page's example (every call form of it) gives the same values, shapes and dtypes
in the source framework and in Paddle.

Examples run in three subprocesses (all TF examples in one, all torch examples
in one, all Paddle examples in one; TF and Paddle never share a process); this
process only compares with numpy. Nothing is cached between runs.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import ENV, ROOT
from x2.api_diff import SINGLE_FORM, Category, all_entries, call_forms, parse_spec, uncovered_ops, unknown_ops
from x2.registry import TF, TORCH, Registry

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("api_diff")

ENTRIES = all_entries()


@pytest.fixture(scope="session")
def example_outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("api_diff")
    procs = {side: subprocess.Popen([sys.executable, "tools/run_api_examples.py", side, str(out / f"{side}.npz")],
                                    cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for side in ("tf", "torch", "paddle")}
    loaded = {}
    for side, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{side} examples crashed:\n{stderr[-3000:]}"
        loaded[side] = dict(np.load(out / f"{side}.npz"))
    return loaded


def _outputs(saved: dict, api: str):
    if f"{api}::error" in saved:
        pytest.fail(f"{api} example raised:\n{saved[f'{api}::error']}")
    values, i = [], 0
    while f"{api}::{i}" in saved:
        values.append(saved[f"{api}::{i}"])
        i += 1
    return values


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.api for e in ENTRIES])
def test_example_agrees_with_paddle(entry, example_outputs):
    source = _outputs(example_outputs[entry.framework], entry.api)
    paddle = _outputs(example_outputs["paddle"], entry.api)
    assert source and len(source) == len(paddle), f"{len(source)} source outputs vs {len(paddle)} paddle outputs"
    assert len(source) >= len(entry.forms), "each call form must give at least one output"
    for i, (s, p) in enumerate(zip(source, paddle)):
        assert s.shape == p.shape, f"output {i}: shape {s.shape} vs {p.shape}"
        if entry.check_dtype:
            assert s.dtype == p.dtype, f"output {i}: dtype {s.dtype} vs {p.dtype}"
        if s.dtype == bool or p.dtype == bool:
            assert (s == p).all(), f"output {i}: boolean outputs differ"
        else:
            np.testing.assert_allclose(p.astype(np.float64), s.astype(np.float64), atol=entry.atol, rtol=entry.rtol,
                                       err_msg=f"output {i} of {entry.api}")


def test_every_registered_mapper_has_api_docs():
    assert uncovered_ops(TF, [e for e in ENTRIES if e.framework == "tf"]) == []
    assert uncovered_ops(TORCH, [e for e in ENTRIES if e.framework == "torch"]) == []


def test_api_docs_name_only_mapped_ops():
    assert unknown_ops(TF, [e for e in ENTRIES if e.framework == "tf"]) == []
    assert unknown_ops(TORCH, [e for e in ENTRIES if e.framework == "torch"]) == []


def test_coverage_check_catches_a_mapper_without_docs():
    fake = Registry("tensorflow", "mappers.tf")
    fake._entries = {op: list(entries) for op, entries in TF.supported().items()}
    fake._loaded = True

    @fake.register("FakeOpWithoutDocs")
    def _fake(ctx, op):
        """nothing."""

    tf_entries = [e for e in ENTRIES if e.framework == "tf"]
    assert uncovered_ops(fake, tf_entries) == ["FakeOpWithoutDocs"]
    assert uncovered_ops(TF, tf_entries) == []
    # and an entry naming an op no mapper handles is caught too
    bogus = tf_entries[0].__class__(**{**tf_entries[0].__dict__, "ops": ("NoSuchOp",)})
    assert unknown_ops(TF, [bogus]) == [(bogus.api, "NoSuchOp")]


def test_call_spec_gives_the_four_call_forms():
    params = parse_spec("input>x=t; negative_slope=0.1?!0.2; inplace>-=False?")
    forms = call_forms("F.leaky_relu", "F.leaky_relu", params, "", "")
    assert forms == [
        ("all positional", "F.leaky_relu(t, 0.1, False)", "F.leaky_relu(t, 0.1)"),
        ("all keyword", "F.leaky_relu(input=t, negative_slope=0.1, inplace=False)", "F.leaky_relu(x=t, negative_slope=0.1)"),
        ("keywords reordered", "F.leaky_relu(inplace=False, negative_slope=0.1, input=t)",
         "F.leaky_relu(negative_slope=0.1, x=t)"),
        ("defaults omitted", "F.leaky_relu(t)", "F.leaky_relu(t, negative_slope=0.2)")]


def test_every_page_runs_two_call_forms_or_says_why_not():
    """Issue 19: the four call forms wherever the API accepts them; a one-form page names a reason
    whose check on the source signature holds (variadic: `*args`; no-arguments: `()`; operator: no call)."""
    missing = [e.api for e in ENTRIES if len(e.forms) < 2 and not e.single]
    assert missing == [], f"{len(missing)} pages run one call form without a reason: {missing[:20]}"
    wrong = [(e.api, e.single) for e in ENTRIES if e.single and not SINGLE_FORM[e.single][1](e.source_sig)]
    assert wrong == [], f"the reason does not fit the signature: {wrong}"
    assert [e.api for e in ENTRIES if e.single and len(e.forms) >= 2] == []
    # the checks can fail
    assert not SINGLE_FORM["variadic"][1]("torch.add(input, other, *, alpha=1, out=None)")
    assert SINGLE_FORM["variadic"][1]("torch.einsum(equation, *operands)")
    assert not SINGLE_FORM["no-arguments"][1]("torch.nn.ReLU(inplace=False)")


def test_enough_apis_in_every_family_each_with_a_category():
    by_fw = {fw: [e for e in ENTRIES if e.framework == fw] for fw in ("tf", "torch")}
    assert len(ENTRIES) >= 450 and len(by_fw["tf"]) >= 200 and len(by_fw["torch"]) >= 250
    prefixes = {"tf": ("tf.", "keras."), "torch": ("torch.",)}
    assert all(e.api.startswith(prefixes[e.framework]) for e in ENTRIES)
    assert all(isinstance(e.cat, Category) for e in ENTRIES)
    # the forms are the point of the pages: nearly all run more than one call form
    assert sum(len(e.forms) > 1 for e in ENTRIES) >= 600


def test_enough_apis_and_the_confusing_ones_are_there():
    apis = {e.api for e in ENTRIES}
    assert len(ENTRIES) >= 150 and len(apis) == len(ENTRIES)
    for api in ("tf.nn.conv2d", "keras.layers.Conv2D", "torch.nn.Conv2d", "torch.nn.functional.gelu",
                "keras.layers.BatchNormalization", "torch.nn.BatchNorm2d", "keras.layers.LSTM", "torch.nn.LSTM",
                "tf.image.resize", "torch.nn.functional.interpolate", "torch.nn.Softmax", "keras.layers.Flatten",
                "keras.layers.Dropout", "torch.nn.Dropout", "tf.math.reduce_sum", "torch.nn.Linear"):
        assert api in apis
    assert all(row.kind for e in ENTRIES for row in e.args)


def test_api_diff_docs_are_up_to_date():
    proc = subprocess.run([sys.executable, "tools/gen_api_diff.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_category_is_derived_from_the_argument_table_unless_set():
    by_api = {e.api: e for e in ENTRIES}
    assert by_api["torch.abs"].cat is Category.SOURCE_MORE          # torch's out= has no Paddle counterpart
    assert by_api["keras.ops.add"].cat is Category.ARG_NAMES        # x1/x2 vs x/y
    assert by_api["torch.nn.functional.avg_pool2d"].cat is Category.DEFAULTS   # count_include_pad vs exclusive
    assert by_api["tf.math.xlogy"].cat is Category.MISSING          # set explicitly
    assert len(Category) == 12 and len({c.key for c in Category}) == 12


def test_index_and_table_list_every_api_with_category_and_converter():
    readme = (ROOT / "docs" / "api_diff" / "README.md").read_text()
    table = (ROOT / "docs" / "api_diff" / "table.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| [`")]
    assert len(rows) == len(ENTRIES)
    conv2d = next(line for line in readme.splitlines() if line.startswith("| [`torch.nn.Conv2d`]"))
    conv2d_entry = next(e for e in ENTRIES if e.api == "torch.nn.Conv2d")
    assert "yes: `mappers.torch." in conv2d and f"| {conv2d_entry.cat.key} |" in conv2d
    xlogy = next(line for line in rows if line.startswith("| [`tf.math.xlogy`]"))
    assert "| missing |" in xlogy and "| no |" in xlogy
    for cat in Category:
        assert f"### {cat.key}" in readme
