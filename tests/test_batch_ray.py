"""`x2 convert-many --executor ray`: the same summary as the local executor,
a lost Ray worker retried (a model's own error not), resume after an
interrupted run, and the install hint without Ray. Each CLI run with
--executor ray starts (and stops) its own local Ray instance with -j CPUs.

Cost: two runs of 8 conversions, 6 conversions + checks interrupted and
resumed, three local Ray instances: about 1.5 min on 2 idle cores, several
minutes when other jobs share them."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ENV, ROOT
from x2.process.batch import unique_names
from x2.emitters.codegen import import_generated

# Its tests share models built once per module: one pytest-xdist worker runs them all.
pytestmark = pytest.mark.xdist_group("batch_ray")

# Loaded by path: tools/zoo_models (on sys.path for the zoo tests) has a module of
# the same name, and whichever is imported first would shadow the other.
batch_set = import_generated(ROOT / "tests" / "onnx_models.py").batch_set

TARGETS = ("onnx", "torch")
# The CLI, reporting at exit which frameworks its own process imported.
DRIVER = ("import atexit, sys\n"
          "atexit.register(lambda: print('DRIVER_IMPORTED', sorted(m for m in ('torch', "
          "'tensorflow', 'paddle', 'onnx', 'onnxruntime') if m in sys.modules), "
          "file=sys.stderr))\n"
          "from x2.cli import main\nmain()")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[Path]:
    return batch_set(tmp_path_factory.mktemp("batch_models"))


def _x2(*args, env=None, wait=True):
    command = [sys.executable, "-c", DRIVER, *args]
    environment = {**ENV, "COLUMNS": "200", **(env or {})}
    if not wait:
        # A pytest-xdist worker ignores SIGINT, and a child inherits that: the
        # driver must take the test's Ctrl-C as a user's terminal delivers it.
        return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)


def _many(out: Path, models, *extra) -> list[str]:
    # What is tested here is the distribution of pairs (summaries, lost workers,
    # resume), not each model's verify (tests/test_verify.py): skipped for time.
    args = ["convert-many", "--from", "onnx", "--out-dir", str(out), "-j", "2", "--no-verify"]
    for target in TARGETS:
        args += ["--to", target]
    return args + list(extra) + [str(m) for m in models]


def _summary(out: Path) -> list[dict]:
    """summary.json without what differs between runs: timings and the
    output folder's root."""
    rows = json.loads((out / "summary.json").read_text())
    for row in rows:
        row.pop("seconds")
        row["out"] = str(Path(row["out"]).relative_to(out))
    return rows


def test_ray_gives_the_local_summary_and_survives_a_lost_worker(models, tmp_path):
    # Two models of one name, the one whose worker is lost, the one that fails.
    models = [m for m in models if m.stem in ("mlp_relu", "cnn_k3", "unmapped")]
    assert len(models) == 4
    local = _x2(*_many(tmp_path / "local", models))
    assert local.returncode == 1, local.stderr  # the Round model fails, the rest convert
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    killed = tmp_path / "ray" / "cnn_k3" / "torch"
    (hooks / "kill").write_text(str(killed))  # its first attempt's worker is SIGKILLed
    ray = _x2(*_many(tmp_path / "ray", models, "--executor", "ray"),
              env={"X2_TEST_RAY_DIR": str(hooks)})
    assert ray.returncode == 1, ray.stderr
    assert "DRIVER_IMPORTED []" in ray.stderr  # no framework in the driver

    expected = _summary(tmp_path / "local")
    assert _summary(tmp_path / "ray") == expected
    assert [(r["out"], r["status"]) for r in expected] == [
        (f"{name}/{t}", "failed" if name == "unmapped" else "ok")
        for name in ("mlp_relu", "cnn_k3", "mlp_relu_2", "unmapped") for t in TARGETS]
    assert "Round" in expected[-1]["error"]
    # The lost worker's pair ran twice; the model's own error once, like the rest.
    attempts = (hooks / "attempts").read_text().split()
    assert not (hooks / "kill").exists()
    assert attempts.count(str(killed)) == 2
    assert sorted(set(attempts)) == sorted(str(tmp_path / "ray" / r["out"]) for r in expected)
    assert len(attempts) == len(expected) + 1
    assert (killed / "model.py").is_file() and (killed / "report.json").is_file()
    assert not [p for p in (tmp_path / "ray").rglob("*x2-staging*")]


def _outputs(out: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(out)): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in out.rglob("*") if p.is_file() and "x2-staging" not in str(p)
            and p.parent != out}


def test_resume_after_an_interrupted_ray_run_with_checks(models, tmp_path):
    out, chosen = tmp_path / "out", models[:3]
    journal = out / ".x2-journal.jsonl"
    held = tmp_path / "held"
    held.mkdir()
    (held / "hold_after").write_text("2")   # the run cannot end before the interrupt
    proc = _x2(*_many(out, chosen, "--check", "--executor", "ray", "-j", "1"), wait=False,
               env={"X2_TEST_RAY_DIR": str(held)})
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and (
            not journal.exists() or len(journal.read_text().splitlines()) < 2):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "run the same command with --resume" in stderr
    finished = {json.loads(line)["out"] for line in journal.read_text().splitlines()}
    assert 2 <= len(finished) < 6
    before = _outputs(out)

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    resumed = _x2(*_many(out, chosen, "--check", "--executor", "ray", "-j", "1", "--resume"),
                  env={"X2_TEST_RAY_DIR": str(hooks)})
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("(done before: --resume)") == len(finished)
    rows = json.loads((out / "summary.json").read_text())
    everything = {str(out / n / t) for n in ("mlp_relu", "mlp_tanh", "mlp_sigmoid")
                  for t in TARGETS}
    assert {r["out"] for r in rows} == everything
    # Each pair's parity check ran in its task: converted models match onnxruntime.
    assert [(r["status"], r["check"]) for r in rows] == [("ok", "pass")] * 6
    assert all(r["max_rel"] < 1e-4 for r in rows)
    # Only the pairs that had not finished ran; finished outputs were not touched.
    assert sorted((hooks / "attempts").read_text().split()) == sorted(everything - finished)
    after = _outputs(out)
    for path, stamp in before.items():
        if str(out / Path(path).parent) in finished:
            assert after[path] == stamp, path
    assert not [p for p in out.rglob("*x2-staging*")]


def test_without_ray_executor_ray_says_how_to_install(tmp_path):
    hidden = "import sys; sys.modules['ray'] = None\n" + DRIVER  # import ray fails
    proc = subprocess.run([sys.executable, "-c", hidden, "convert-many", "--from", "onnx",
                           "--to", "onnx", "--out-dir", str(tmp_path), "--executor", "ray",
                           str(tmp_path / "m.onnx")], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("DRIVER_IMPORTED")]
    assert lines == ["error: --executor ray needs Ray, an optional extra: pip install "
                     "'x2[ray]'"]


def test_output_names_are_unique_and_never_hidden():
    paths = [Path(p) for p in ("a/net.onnx", "b/net.pb", "c/NET.onnx", "net_2.onnx", ".hid.onnx",
                               "..", "summary.json.onnx", "saved_model_dir")]
    assert unique_names(paths) == ["net", "net_2", "NET_3", "net_2_2", "hid", "model",
                                   "summary.json_2", "saved_model_dir"]


def test_gpu_checks_on_a_ray_cluster_without_gpus_are_refused(models, tmp_path):
    proc = _x2("convert-many", "--from", "onnx", "--to", "onnx", "--out-dir", str(tmp_path),
               "--check", "--device", "gpu", "--executor", "ray", "-j", "1", str(models[0]),
               env={"CUDA_VISIBLE_DEVICES": ""})  # a GPU machine too: Ray sees none
    assert proc.returncode == 2, proc.stderr
    assert "error: --device gpu: the Ray cluster has no GPU" in proc.stderr
    assert not (tmp_path / "mlp_relu").exists()  # nothing ran
