"""x2's result tables (check, bisect, conversion summary, convert-many) and `x2 --help`
never cut a number or a description, whatever the console width, piped or not."""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from x2.cli import FitTable, _first_sentence, _summary, bisect_table, main, parity_table
from x2.contracts import Report

ROOT = Path(__file__).resolve().parent.parent
WIDTHS = (40, 60, 80, 200)


def parity_result(batches=2, per_output_tol=True) -> dict:
    outputs = []
    for b in range(batches):
        for i, runner in enumerate(("python", "inference")):
            for name in ("StatefulPartitionedCall:0", "logits"):
                outputs.append({
                    "runner": runner, "name": name, "batch": b, "seed": 7 + b,
                    "max_abs": 5.3501234e-05 * (i + 1) * (b + 3), "max_rel": 1.234567e-07 * (b + 1),
                    "ref_scale": 1234.5678 if name == "logits" else 0.000123456,
                    "ref_constant": name == "logits" and b == 1, "passed": i == 0,
                    "rtol": 1e-4, "atol": 1e-5 if per_output_tol and name == "logits" else 1e-6})
    return {"passed": False, "rtol": 1e-4, "atol": 1e-6, "precision": "fp32",
            "devices": {"source": "cpu", "target": "gpu:0"},
            "input_shapes": [[2, 224, 224, 3], [2, 17]], "outputs": outputs,
            "warnings": [], "notes": ["a note with [brackets] and [/odd] markup"],
            "tolerance_note": "fp32: rtol 0.0001, atol 1e-06", "bisect": None}


def parity_numbers(result: dict) -> list[str]:
    rows = result["outputs"]
    return ([f"{r['max_abs']:.3e}" for r in rows] + [f"{r['max_rel']:.3e}" for r in rows]
            + [f"{r['ref_scale']:.3g}" for r in rows]
            + [f"{r['rtol']:g}/{r['atol']:g}" for r in rows if r["atol"] != result["atol"]])


BISECT = {"ran": True, "runner": "inference", "batch": 0, "compared": 123, "skipped": 4,
          "first_divergence": {"var": "conv2d_3", "ir_op": "conv2d", "source_op": "Conv2D",
                               "source_name": "model/conv2d_3/Conv2D", "mapper": "conv",
                               "max_rel": 3.2109e-3},
          "unmatched_before": [],
          "points": [{"var": f"very_long_converted_variable_name_{i}", "ir_op": "conv2d",
                      "source_op": "Conv2D", "source_name": f"model/block_{i}/conv2d/Conv2D",
                      "max_rel": 3.2109e-3 * 10 ** -i, "layout": "nhwc->nchw",
                      "passed": i != 0} for i in range(4)]}

REPORT_JSON = {
    "source": {"framework": "tf", "model": "/a/rather/long/path/to/some/saved_model_dir",
               "reader": {"name": "tensorflow", "why": "--input-shape needs re-tracing"}},
    "target": "paddle", "inputs": [{"name": "input_1", "shape": [None, 224, 224, 3]}],
    "outputs": [{"name": "dense[/x]", "shape": [None, 1000]}],
    "ops_mapped": 12345, "ops_seen": ["Conv2D"] * 17, "nodes_before_passes": 45678,
    "nodes_after_passes": 32109, "transposes_before_passes": 40, "transposes_left": 1,
    "transposes_where": [{"where": "input_1", "why": "NHWC image input"}],
    "timings_s": {"read": 1.2345, "emit": 0.5}, "target_details": {}, "ir_ops": {},
    "layout": {}, "passes": [], "files": [], "values": []}
REPORT = Report(**REPORT_JSON)
SUMMARY_NUMBERS = ["12345", "(17", "45678", "32109", "40", "1.73", "1000]", "224,"]


def render(table, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), force_terminal=False)
    console.print(table)
    text = console.file.getvalue()
    assert all(len(line) <= width for line in text.splitlines()), text
    return text


def assert_whole(text: str, numbers: list[str]) -> None:
    assert "…" not in text and "..." not in text, text
    # A number counts as whole when it is one token of the output (not split over lines).
    tokens = set(re.split(r"[\s│┃]+", text))
    for number in numbers:
        pieces = number.split()
        assert all(p in tokens for p in pieces) and number in " ".join(text.split()), \
            f"{number!r} cut in:\n{text}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("batches,per_output_tol", [(1, False), (2, True)])
def test_parity_table_never_cuts_a_number(width, batches, per_output_tol):
    result = parity_result(batches, per_output_tol)
    text = render(parity_table(result), width)
    assert_whole(text, parity_numbers(result))
    assert "FAIL" in text and "pass" in text and "logits" in text  # names may fold, not vanish


@pytest.mark.parametrize("width", WIDTHS)
def test_bisect_table_never_cuts_a_number(width):
    text = render(bisect_table(BISECT), width)
    assert_whole(text, [f"{p['max_rel']:.3e}" for p in BISECT["points"]])
    assert "123 mapped points" in " ".join(text.split())


@pytest.mark.parametrize("width", WIDTHS)
def test_summary_never_cuts_a_number(width):
    text = render(_summary(REPORT), width)
    assert_whole(text, SUMMARY_NUMBERS)
    assert "dense[/x]" in text  # model names are shown literally, never as rich markup


def test_wide_console_keeps_the_table_layout():
    text = render(parity_table(parity_result()), 200)
    assert "max abs err" in text and "┃" in text
    # One batch, default tolerances: at 80 columns still a (boxed) table, not key: value lines.
    assert "│" in render(parity_table(parity_result(1, False)), 80)


def test_numbers_stay_whole_at_every_width():
    result = parity_result()
    for width in range(30, 161, 7):
        assert_whole(render(parity_table(result), width), parity_numbers(result))
        assert_whole(render(bisect_table(BISECT), width),
                     [f"{p['max_rel']:.3e}" for p in BISECT["points"]])
        assert_whole(render(_summary(REPORT), width), SUMMARY_NUMBERS)


def test_fit_table_numeric_column_keeps_its_width():
    table = FitTable(title="t")
    table.add_column("a name column")
    table.add_column("a long numeric header", numeric=True)
    table.add_row("x" * 50, "-1.234567e+89")
    for width in WIDTHS:
        assert_whole(render(table, width), ["-1.234567e+89"])


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT)


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return {**env, "PYTHONPATH": str(ROOT), "TERM": "dumb", **extra}


@pytest.mark.parametrize("columns", [None, "60", "80"])
def test_piped_check_output_is_never_cut(columns):
    """Piped (no terminal): rich alone would lay the table out at 80 columns."""
    result = parity_result()
    result["bisect"] = BISECT
    code = ("import json, sys; from x2.cli import print_parity; "
            "print_parity(json.loads(sys.argv[1]) if False else json.loads(sys.stdin.read()))")
    env = _env(**({"COLUMNS": columns} if columns else {}))
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(result),
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert_whole(proc.stdout, parity_numbers(result)
                 + [f"{p['max_rel']:.3e}" for p in BISECT["points"]])
    if columns is None:  # no width given: the table prints whole, as a table
        assert "┃" in proc.stdout and "max abs err" in proc.stdout
    else:
        assert max(len(line) for line in proc.stdout.splitlines()) <= int(columns)
    assert "[brackets] and [/odd] markup" in proc.stdout


def test_piped_summary_is_never_cut():
    code = ("import json, sys; from x2.cli import _summary, print_table; "
            "from x2.contracts import Report; "
            "print_table(_summary(Report(**json.loads(sys.stdin.read()))), stderr=True)")
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(REPORT_JSON),
                          capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert_whole(proc.stderr, SUMMARY_NUMBERS)
    assert "/a/rather/long/path/to/some/saved_model_dir" in proc.stderr


@pytest.mark.parametrize("columns", ["80", "60", "40"])
def test_help_shows_each_command_description_whole(columns):
    proc = subprocess.run([sys.executable, "-m", "x2", "--help"], capture_output=True,
                          text=True, env=_env(COLUMNS=columns), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    commands = proc.stdout.split("Commands:")[1]
    assert "..." not in commands and "…" not in commands, proc.stdout
    text = " ".join(commands.split())
    assert main.commands, "no commands"
    for name, cmd in main.commands.items():
        sentence = cmd.short_help or _first_sentence(cmd.help or "")
        assert sentence.endswith(".") and len(sentence) > 20, (name, sentence)
        assert f"{name} {sentence}" in text, (name, proc.stdout)
