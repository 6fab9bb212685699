import subprocess
import sys

from conftest import ENV, ROOT


def test_supported_ops_table_is_up_to_date():
    proc = subprocess.run([sys.executable, "tools/gen_op_tables.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_tf_mapper_says_what_it_becomes():
    from x2.registry import TF
    undocumented = sorted(op for op, entries in TF.supported().items()
                          if not (entries[0].fn.__doc__ or "").strip())
    assert undocumented == []


def test_every_torch_mapper_says_what_it_becomes():
    from x2.registry import TORCH
    undocumented = sorted(op for op, entries in TORCH.supported().items()
                          if not (entries[0].fn.__doc__ or "").strip())
    assert undocumented == [] and len(TORCH.supported()) > 80


def test_parity_tool_runs_the_check_command():
    proc = subprocess.run([sys.executable, "tools/parity_check.py", "--help"], cwd=ROOT,
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and "--converted" in proc.stdout
