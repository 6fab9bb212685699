"""Robustness: crashes in a framework step, disks that are full or read-only,
garbage in every accepted format, and batch conversion where one failure does
not stop the others. Each failure: one clear message, non-zero exit, no
traceback, no partial output."""
import json
import os
import subprocess
import uuid

import pytest

from conftest import ROOT, run_cli


def _clean_failure(proc, out, *needles):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    text = " ".join(proc.stderr.split())
    for needle in needles:
        assert needle in text, text
    assert not os.path.exists(out)
    parent = os.path.dirname(out)
    if os.path.isdir(parent):
        assert [p for p in os.listdir(parent) if "x2-staging" in p] == []


def test_segfault_in_a_loader_is_reported_not_fatal(tmp_path):
    out = str(tmp_path / "out")
    spec = f"{ROOT / 'tests' / 'fixtures' / 'crash_module.py'}:factory"
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model", spec,
                   "--input-shape", "x:1,3", "--out", out)
    _clean_failure(proc, out, "crashed (SIGSEGV)", "torch.read")


@pytest.fixture
def small_mount(tmp_path):
    """Small tmpfs mounts: one too small for the model (a full disk), one read-only."""
    mounts = []

    def make(options: str):
        where = tmp_path / f"mnt-{uuid.uuid4().hex[:6]}"
        where.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()}); "
                        f"this test needs root")
        mounts.append(where)
        return where

    yield make
    for where in mounts:
        subprocess.run(["umount", str(where)], capture_output=True)


def test_full_disk_leaves_nothing_behind(sample, small_mount):
    disk = small_mount("size=128k")  # the MLP's weights alone are 132 KB
    out = str(disk / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "paddle", "--model",
                   str(sample("mlp")), "--out", out)
    _clean_failure(proc, out, "No space left on device")
    assert os.listdir(disk) == []


def test_read_only_output_location(sample, small_mount):
    disk = small_mount("size=1m,ro")
    out = str(disk / "out")
    proc = run_cli("convert", "--from", "tf", "--to", "onnx", "--model", str(sample("mlp")),
                   "--out", out)
    _clean_failure(proc, out, "not writable")


@pytest.mark.parametrize("source,name,content", [
    ("onnx", "model.onnx", b"\x08\x07\x12\x04junk" * 50),
    ("onnx", "empty.onnx", b""),
    ("torch", "model.pt2", b"PK\x03\x04 truncated zip"),
    ("torch", "weights.pt", b"\x80\x04\x95 not really a pickle"),
])
def test_garbage_files(tmp_path, source, name, content):
    model = tmp_path / name
    model.write_bytes(content)
    out = str(tmp_path / "out")
    args = ["convert", "--from", source, "--to", "onnx", "--model", str(model), "--out", out]
    proc = run_cli(*args)
    _clean_failure(proc, out, name)


def test_convert_many_isolates_failures(sample, tf_model, tmp_path):
    out = tmp_path / "many"
    missing = tmp_path / "nope"
    proc = run_cli("convert-many", "--from", "tf", "--to", "onnx", "--out-dir", str(out),
                   "-j", "2", str(sample("mlp")), str(tf_model("unsupported")), str(missing))
    assert proc.returncode == 1
    rows = {os.path.basename(r["model"]): r for r in
            json.loads((out / "summary.json").read_text())}
    assert rows[sample("mlp").name]["status"] == "ok"
    assert (out / sample("mlp").name / "model.onnx").is_file()
    assert rows["unsupported"]["status"] == "failed"
    assert "Cumprod" in rows["unsupported"]["error"] or "not supported" in \
        rows["unsupported"]["error"]
    assert rows["nope"]["status"] == "failed" and "no such file" in rows["nope"]["error"]
    assert "1 of 3 converted" in proc.stdout


def test_convert_many_reads_a_list_file(sample, tmp_path):
    listing = tmp_path / "models.txt"
    listing.write_text(f"# my models\n{sample('mlp')}\n")
    proc = run_cli("convert-many", "--from", "tf", "--to", "onnx", "--out-dir",
                   str(tmp_path / "many"), f"@{listing}")
    assert proc.returncode == 0, proc.stderr
    assert "1 of 1 converted" in proc.stdout
