import subprocess
import sys

from conftest import ENV, ROOT


def test_supported_ops_table_is_up_to_date():
    proc = subprocess.run([sys.executable, "tools/gen_op_tables.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_kernel_audit_is_current_and_every_difference_is_explained():
    """docs/kernel_audit.md: the IR kernels against torch on edge values, as
    this commit's kernels give them; a new difference needs a note."""
    proc = subprocess.run([sys.executable, "tools/kernel_audit.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not yet looked at" not in (ROOT / "docs" / "kernel_audit.md").read_text()


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


def test_every_ir_op_is_documented_and_emitted_by_every_target():
    import re
    from x2.emitters.onnx_ops import ONNX_OPS
    from x2.emitters.paddle_ops import PADDLE_OPS
    from x2.emitters.torch_ops import TORCH_OPS
    from x2.ir.ops import OPS
    doc = (ROOT / "docs" / "IR.md").read_text()
    assert [op for op in OPS if not re.search(rf"\b{op}\b", doc)] == []
    for table in (PADDLE_OPS, ONNX_OPS, TORCH_OPS):
        assert sorted(set(OPS) - set(table)) == []


def test_ir_op_tables_are_generated_from_the_schemas():
    from x2.ir import optable
    doc = optable.DOC.read_text()
    assert optable.render(doc) == doc, \
        f"docs/IR.md's op tables are stale: run `{optable.COMMAND}`"


def test_every_onnx_mapper_says_what_it_becomes():
    from x2.registry import ONNX
    undocumented = sorted(op for op, entries in ONNX.supported().items()
                          for entry in entries if not (entry.fn.__doc__ or "").strip())
    assert undocumented == [] and len(ONNX.supported()) >= 55
