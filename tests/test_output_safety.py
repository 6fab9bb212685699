"""`--out` never destroys what x2 did not write (issue 13, items 4 and 5).

x2 recognises its own output by the marker it writes last
(`.x2-output.json`, with the version and every file it wrote) and replaces
a directory only when it holds exactly those files. A killed run's staging
and scratch folders carry its PID and are removed by the next run."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ENV, run_cli


@pytest.fixture
def tiny_onnx(tmp_path):
    import onnx
    from onnx import TensorProto, helper

    folder = tmp_path / "models"
    folder.mkdir()
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    path = folder / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def _convert(model, out, *extra, cwd=None):
    return run_cli("convert", "--from", "onnx", "--to", "onnx", "--model", str(model),
                   "--out", str(out), "--quiet", *extra, cwd=cwd)


def _tree(folder):
    return sorted((str(p.relative_to(folder)), p.read_bytes() if p.is_file() else None)
                  for p in folder.rglob("*"))


def test_a_users_folder_with_a_report_json_is_not_replaced(tiny_onnx, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "report.json").write_text("{}")
    (project / "notes.txt").write_text("my work")
    before = _tree(project)
    proc = _convert(tiny_onnx, project)
    assert proc.returncode == 2
    assert "x2 did not write" in proc.stderr and "notes.txt" in proc.stderr
    assert _tree(project) == before


@pytest.mark.parametrize("where", ["model folder", "parent of the model folder",
                                   "the model file"])
def test_out_that_holds_or_is_inside_the_model_is_refused(tiny_onnx, tmp_path, where):
    out = {"model folder": tiny_onnx.parent, "parent of the model folder": tmp_path,
           "the model file": tiny_onnx}[where]
    before = tiny_onnx.read_bytes()
    proc = _convert(tiny_onnx, out)
    assert proc.returncode == 2, proc.stderr
    assert "model" in proc.stderr and "Traceback" not in proc.stderr
    assert tiny_onnx.read_bytes() == before


def test_savedmodel_out_inside_the_model_is_refused(tmp_path):
    model = tmp_path / "saved"
    model.mkdir()
    (model / "saved_model.pb").write_bytes(b"not read: refused before")
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(model),
                   "--out", str(model / "variables" / "out"), "--quiet")
    assert proc.returncode == 2 and "inside the source model" in proc.stderr


def test_x2_output_is_replaced_but_not_once_a_user_added_a_file(tiny_onnx, tmp_path):
    out = tmp_path / "out"
    assert _convert(tiny_onnx, out).returncode == 0
    marker = json.loads((out / ".x2-output.json").read_text())
    assert marker["written_by"] == "x2" and "model.onnx" in marker["files"]
    assert sorted(marker["files"]) == sorted(
        str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()
        and p.name != ".x2-output.json")
    assert _convert(tiny_onnx, out).returncode == 0  # an x2 output: replaced
    (out / "my_eval.py").write_text("keep me")
    proc = _convert(tiny_onnx, out)
    assert proc.returncode == 2 and "my_eval.py" in proc.stderr
    assert (out / "my_eval.py").read_text() == "keep me"


def test_output_folder_follows_the_umask(tiny_onnx, tmp_path):
    out = tmp_path / "out"
    old = os.umask(0o022)
    try:
        assert _convert(tiny_onnx, out).returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_staging_of_a_dead_run_is_removed_live_ones_kept(tiny_onnx, tmp_path):
    out = tmp_path / "out"
    stale = tmp_path / f".out.x2-staging-{_dead_pid()}-abc"
    (stale / "out").mkdir(parents=True)
    (stale / "out" / "model.onnx").write_bytes(b"partial")
    live = tmp_path / f".out.x2-staging-{os.getpid()}-def"  # this process is alive
    live.mkdir()
    other = tmp_path / f".other.x2-staging-{_dead_pid()}-ghi"  # another output's
    other.mkdir()
    assert _convert(tiny_onnx, out).returncode == 0
    assert not stale.exists() and live.exists() and other.exists()


def test_sigkill_leaves_nothing_a_later_run_does_not_clean(tmp_path):
    """Kill x2 while it converts (the worker is still reading); its workers
    die with it, and the next conversion to the same --out removes its job
    folder (staging, IR and the workers' scratch all live there)."""
    slow = tmp_path / "slow.py"
    slow.write_text("import time, torch\n"
                    "def factory():\n"
                    "    time.sleep(60)\n"
                    "    return torch.nn.ReLU()\n")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "x2", "convert", "--from", "torch", "--to",
                             "onnx", "--model", f"{slow}:factory", "--input-shape", "x:1,3",
                             "--out", str(out), "--quiet"], env=ENV, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not list(tmp_path.glob(".out.x2-staging-*/x2-step-*")) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    workers = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                             text=True).stdout.split()
    assert workers, "x2 had started its worker processes"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert list(tmp_path.glob(".out.x2-staging-*")), "the killed run had a job folder"
    time.sleep(1.0)
    for pid in workers:  # PR_SET_PDEATHSIG: the workers died with x2
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        assert state in ("Z", "X"), f"worker {pid} still running ({state})"
    tiny = tmp_path / "m.onnx"
    import onnx
    from onnx import TensorProto, helper
    onnx.save(helper.make_model(helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])]),
        opset_imports=[helper.make_opsetid("", 13)]), str(tiny))
    assert _convert(tiny, out).returncode == 0
    assert list(tmp_path.glob(".out.x2-staging-*")) == []
