"""`x2 convert-many --executor ray`: the same summary as the local executor,
a lost Ray worker retried (a model's own error not), resume after an
interrupted run, and the install hint without Ray. Each CLI run with
--executor ray starts (and stops) its own local Ray instance with -j CPUs.

Cost: about 1.5-2 min on 2 cores (two runs of 20 pairs with checks, one of
8 pairs interrupted and resumed)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ENV
from x2.batch import unique_names

TARGETS = ("onnx", "torch")
# The CLI, reporting at exit which frameworks its own process imported.
DRIVER = ("import atexit, sys\n"
          "atexit.register(lambda: print('DRIVER_IMPORTED', sorted(m for m in ('torch', "
          "'tensorflow', 'paddle', 'onnx', 'onnxruntime') if m in sys.modules), "
          "file=sys.stderr))\n"
          "from x2.cli import main\nmain()")


def _save(path: Path, nodes, x_shape, y_shape, inits) -> Path:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        nodes, path.stem, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
        [numpy_helper.from_array(v.astype(np.float32) if v.dtype == np.float64 else v, k)
         for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _mlp(path: Path, seed: int, act: str, hidden: int) -> Path:
    from onnx import helper
    rng = np.random.default_rng(seed)
    inits = {"w1": rng.normal(0, 0.5, (8, hidden)), "b1": rng.normal(0, 0.1, hidden),
             "w2": rng.normal(0, 0.5, (hidden, 4)), "b2": rng.normal(0, 0.1, 4)}
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node(act, ["hb"], ["a"]),
             helper.make_node("MatMul", ["a", "w2"], ["o"]),
             helper.make_node("Add", ["o", "b2"], ["y"])]
    return _save(path, nodes, [2, 8], [2, 4], inits)


def _cnn(path: Path, seed: int, kernel: int) -> Path:
    from onnx import helper
    rng = np.random.default_rng(seed)
    inits = {"w": rng.normal(0, 0.4, (6, 3, kernel, kernel)), "b": rng.normal(0, 0.1, 6),
             "fc": rng.normal(0, 0.4, (4, 6)), "fc_b": rng.normal(0, 0.1, 4)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[kernel, kernel],
                              pads=[kernel // 2] * 4),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fc_b"], ["y"], transB=1)]
    return _save(path, nodes, [2, 3, 8, 8], [2, 4], inits)


def _unsupported(path: Path) -> Path:
    from onnx import helper
    nodes = [helper.make_node("CumSum", ["x", "axis"], ["y"])]
    return _save(path, nodes, [2, 8], [2, 8], {"axis": np.array(1, np.int64)})


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[Path]:
    """Ten small models: nine that convert (two of them both named mlp_relu),
    one whose conversion fails by itself (an op x2 does not map)."""
    d = tmp_path_factory.mktemp("batch_models")
    built = [_mlp(d / f"mlp_{act.lower()}.onnx", i, act, 16)
             for i, act in enumerate(("Relu", "Tanh", "Sigmoid"))]
    built += [_mlp(d / f"wide_{act.lower()}.onnx", 10 + i, act, 64)
              for i, act in enumerate(("Relu", "Tanh"))]
    built += [_cnn(d / f"cnn_k{k}.onnx", 20 + k, k) for k in (1, 3, 5)]
    built.append(_mlp(d / "other" / "mlp_relu.onnx", 30, "Relu", 8))
    built.append(_unsupported(d / "cumsum.onnx"))
    return built


def _x2(*args, env=None, wait=True):
    command = [sys.executable, "-c", DRIVER, *args]
    environment = {**ENV, "COLUMNS": "200", **(env or {})}
    if not wait:
        return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=600)


def _many(out: Path, models, *extra) -> list[str]:
    args = ["convert-many", "--from", "onnx", "--out-dir", str(out), "-j", "2"]
    for target in TARGETS:
        args += ["--to", target]
    return args + list(extra) + [str(m) for m in models]


def _summary(out: Path) -> list[dict]:
    """summary.json without what may differ between runs: timings, the
    output folder's root, and the parity error's last digits (Ray limits each
    task to its CPUs: other thread counts, other rounding)."""
    rows = json.loads((out / "summary.json").read_text())
    for row in rows:
        row.pop("seconds")
        row["out"] = str(Path(row["out"]).relative_to(out))
        if "max_rel" in row:
            assert row["max_rel"] < 1e-4, row  # x2 check's default fp32 rtol
            row["max_rel"] = "below rtol"
    return rows


def test_ray_gives_the_local_summary_and_survives_a_lost_worker(models, tmp_path):
    local = _x2(*_many(tmp_path / "local", models, "--check"))
    assert local.returncode == 1, local.stderr  # the CumSum model fails, the rest pass
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    killed = tmp_path / "ray" / "cnn_k3" / "torch"
    (hooks / "kill").write_text(str(killed))  # its first attempt's worker is SIGKILLed
    ray = _x2(*_many(tmp_path / "ray", models, "--check", "--executor", "ray"),
              env={"X2_TEST_RAY_DIR": str(hooks)})
    assert ray.returncode == 1, ray.stderr
    assert "DRIVER_IMPORTED []" in ray.stderr  # no framework in the driver

    expected = _summary(tmp_path / "local")
    assert _summary(tmp_path / "ray") == expected
    assert [(r["out"], r["status"], r.get("check")) for r in expected] == [
        (f"{name}/{t}", "failed" if name == "cumsum" else "ok",
         None if name == "cumsum" else "pass")
        for name in ("mlp_relu", "mlp_tanh", "mlp_sigmoid", "wide_relu", "wide_tanh", "cnn_k1",
                     "cnn_k3", "cnn_k5", "mlp_relu_2", "cumsum") for t in TARGETS]
    assert "CumSum" in expected[-1]["error"]
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


def test_resume_after_an_interrupted_ray_run(models, tmp_path):
    out, chosen = tmp_path / "out", models[:4]
    journal = out / ".x2-journal.jsonl"
    proc = _x2(*_many(out, chosen, "--executor", "ray", "-j", "1"), wait=False)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and (
            not journal.exists() or len(journal.read_text().splitlines()) < 3):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "run the same command with --resume" in stderr
    finished = {json.loads(line)["out"] for line in journal.read_text().splitlines()}
    assert 3 <= len(finished) < 8
    before = _outputs(out)

    hooks = tmp_path / "hooks"
    hooks.mkdir()
    resumed = _x2(*_many(out, chosen, "--executor", "ray", "-j", "1", "--resume"),
                  env={"X2_TEST_RAY_DIR": str(hooks)})
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.count("(done before: --resume)") == len(finished)
    rows = json.loads((out / "summary.json").read_text())
    everything = {str(out / n / t) for n in ("mlp_relu", "mlp_tanh", "mlp_sigmoid", "wide_relu")
                  for t in TARGETS}
    assert [r["status"] for r in rows] == ["ok"] * 8 and {r["out"] for r in rows} == everything
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
