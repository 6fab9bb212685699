"""Paddle Inference (default config: oneDNN and the PIR passes on) runs what
x2 writes exactly as model.py does (issue 46).

- Models of the kinds Paddle Inference refused or got wrong
  (tests/pi_fidelity_models.py) convert to paddle and pass `x2 check`
  through every runner, Paddle Inference included, at three sizes of each
  dynamic dim.
- A runner that aborts or hangs is that runner's failure, within its
  timeout, in `x2 check` and in convert's verify.
- A fast subset of tools/paddle_inference_diff.py (model.py against Paddle
  Inference on the patterns that were broken).
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from x2.check.parity import check
from x2.check.verify import verify
from x2.convert import convert
from x2.errors import ConversionError
from x2.process import isolation

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "pi_fidelity_models.py"
SEQ = ["batch", "seq=13"]
TOKENS = {"input_shapes": {"input_ids": SEQ, "attention_mask": SEQ},
          "options": {"input_dtypes": {"*": "int64"}}}
# name: (convert arguments, --dim sizes; None: the check's own three sizes)
CASES = {
    "alibi": (TOKENS, None),
    "frames_linear": ({"input_shapes": {"input": ["frames=11", 128]}}, None),
    "window_attention": ({"input_shapes": {"pixels": ["batch", 3, 16, 16]}}, None),
    # the class token and the rest pooled in pairs: the source needs 3 tokens
    "pooled_sequence": (TOKENS, {"seq": [13, 3, 8]}),
    "moe_routing": ({"input_shapes": {"x": ["batch", "seq=7", 32]}}, None),
    "sliding_window": (TOKENS, None),
}
pytestmark = pytest.mark.xdist_group("paddle_inference_fidelity")
PADDLE_RUNNERS = {"paddle:python", "paddle:jit.load", "paddle:inference"}


@pytest.mark.parametrize("name", CASES)
def test_model_kind_passes_through_paddle_inference_at_three_sizes(name, tmp_path):
    arguments, dims = CASES[name]
    spec = f"{MODELS}:{name}"
    out = tmp_path / "out"
    # x2 check below runs what verify would, at three sizes instead of two.
    report = convert(spec, str(out), source="torch", target="paddle",
                     emit_options={"verify": False}, **arguments)
    assert (out / "inference" / "model.json").exists()
    result = check(spec, str(out), source="torch", target="paddle", serving=True,
                   dim_sizes=dims)
    assert result["runner_errors"] == {}
    named = {d for i in report.inputs for d in i["dims"] if d}
    for dim in named:
        assert len({s["dims"][dim] for s in result["shapes_checked"]}) == 3, dim
    assert {(r["runner"], r["batch"]) for r in result["outputs"]} == {
        (runner, b) for runner in PADDLE_RUNNERS for b in range(len(result["batches"]))}
    assert result["passed"], [r for r in result["outputs"] if not r["passed"]]


# -- runners that crash or hang ----------------------------------------------------

# Imported by every worker process started with it on PYTHONPATH: once
# x2/check/runtime.py is loaded, the paddle runners named in X2_TEST_BREAK
# ("inference=abort,jit.load=sleep") abort (as on glibc heap corruption) or
# hang; the others run as usual.
BREAK_RUNNERS = '''
import importlib.abc, importlib.util, os, sys, time

BREAK = dict(item.split("=") for item in os.environ["X2_TEST_BREAK"].split(","))


class _Break(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "x2.check.runtime":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            run_paddle = module.run_paddle

            def broken(args, inputs):
                if BREAK.get(args["mode"]) == "abort":
                    os.abort()
                if BREAK.get(args["mode"]) == "sleep":
                    time.sleep(3600)
                return run_paddle(args, inputs)
            module.RUNNERS["paddle"] = module.run_paddle = broken
        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Break())
'''
TIMEOUT = 15


@pytest.fixture
def break_runners(tmp_path, monkeypatch):
    """break_runners("inference=abort"): fresh workers (not the suite's warm
    ones) that load BREAK_RUNNERS."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(BREAK_RUNNERS)
    monkeypatch.setenv("PYTHONPATH", f"{hook}:{ROOT}")
    monkeypatch.setattr(isolation, "_REUSE", [False])
    isolation._POOL.close()   # the suite's warm workers were started without the hook
    return lambda what: monkeypatch.setenv("X2_TEST_BREAK", what)


@pytest.fixture(scope="module")
def frames_linear(tmp_path_factory):
    out = tmp_path_factory.mktemp("frames") / "out"
    convert(f"{MODELS}:frames_linear", str(out), source="torch", target="paddle",
            input_shapes={"input": ["frames=11", 128]}, emit_options={"verify": False})
    return out


def test_check_reports_an_aborting_and_a_hanging_runner_as_their_failures(
        frames_linear, break_runners):
    break_runners("inference=abort,jit.load=sleep")
    started = time.monotonic()
    result = check(f"{MODELS}:frames_linear", str(frames_linear), source="torch",
                   target="paddle", serving=True, timeout=TIMEOUT)
    assert time.monotonic() - started < 4 * TIMEOUT
    assert not result["passed"]
    errors = result["runner_errors"]
    assert set(errors) == {"paddle:inference", "paddle:jit.load"}
    assert "crashed (SIGABRT)" in errors["paddle:inference"]
    assert f"did not finish within {TIMEOUT}" in errors["paddle:jit.load"]
    assert not any("internal error" in e for e in errors.values())
    # model.py still ran and matched
    assert {r["runner"] for r in result["outputs"]} == {"paddle:python"}
    assert all(r["passed"] for r in result["outputs"])


def test_verify_refuses_a_model_whose_runner_aborts_and_ends_past_one_that_hangs(
        frames_linear, tmp_path, break_runners):
    break_runners("jit.load=abort,inference=sleep")
    started = time.monotonic()
    with pytest.raises(ConversionError) as refused:
        verify(f"{MODELS}:frames_linear", frames_linear, tmp_path, source="torch",
               target="paddle", timeout=TIMEOUT)
    # it waited for the hung runner's timeout, no longer
    assert TIMEOUT <= time.monotonic() - started < 4 * TIMEOUT
    message = str(refused.value)
    assert "fails in paddle:jit.load" in message and "crashed (SIGABRT)" in message, message
    assert "internal error" not in message


# -- the differential tool's fast subset ---------------------------------------------

def _tool():
    spec = importlib.util.spec_from_file_location(
        "paddle_inference_diff", ROOT / "tools" / "paddle_inference_diff.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_differential_tool_finds_no_difference_on_the_patterns_that_were_broken(tmp_path):
    tool = _tool()
    # ALiBi's integer positions unsqueezed after a multiply, windows into the
    # batch and back on int64, a mask of finfo.min rows, a waveform's and a
    # token sequence's pad at dynamic sizes (a crash, a hang), frames gathered
    # from a sliced view (model.py wrong): each broke before.
    cases = ["alibi_broadcast", "reshape_windows", "attention_finite_mask", "pad_waveform",
             "pad_sequence_axis", "gather_frames"]
    rows, passes = tool.run(cases, timeout=120, work=tmp_path, report=lambda line: None,
                            classes=("dynamic",), dtypes=("float32", "int64"))
    assert [(r["case"], r["dtype"]) for r in rows] == [
        ("alibi_broadcast", "float32"), ("reshape_windows", "float32"),
        ("reshape_windows", "int64"), ("attention_finite_mask", "float32"),
        ("pad_waveform", "float32"), ("pad_waveform", "int64"),
        ("pad_sequence_axis", "float32"), ("gather_frames", "float32")]
    assert [r for r in rows if r["result"] != "ok"] == []
    assert "operator_unsqueeze_onednn_fuse_pass" in passes


def test_differential_tool_tells_a_difference_and_a_crash():
    tool = _tool()
    same = [np.array([1.0, np.nan], np.float32)]
    assert tool.differs(same, [same[0].copy()]) is None
    assert "off by" in tool.differs(same, [np.array([1.01, np.nan], np.float32)])
    assert "shape" in tool.differs(same, [np.zeros(3, np.float32)])
    crashed = tool.run_worker(Path("/nonexistent"), Path("/nonexistent.npz"), [], timeout=60)
    assert crashed["result"] == "crash" and crashed["why"]
