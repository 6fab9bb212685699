"""`import tensorflow` then `import paddle` segfaults in one process. x2 must
work whatever the user imported first: every framework step runs in its own
worker process. These tests run in fresh interpreters so the order is real."""
import subprocess
import sys

from conftest import ENV

SCRIPT = """
import sys
{first}
import x2.convert, x2.check.parity
report = x2.convert.convert(sys.argv[1], sys.argv[2])
result = x2.check.parity.check(sys.argv[1], sys.argv[2], rtol=1e-4)
assert result["passed"], result
print("PARITY-OK", report.ops_mapped)
"""


def _run(first: str, model, out):
    return subprocess.run([sys.executable, "-c", SCRIPT.format(first=first), str(model),
                           str(out)], capture_output=True, text=True, env=ENV)


def test_segfault_is_real_so_the_test_means_something():
    proc = subprocess.run([sys.executable, "-c", "import tensorflow; import paddle"],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode != 0  # -11 (SIGSEGV) on this stack


def test_convert_to_paddle_after_importing_tensorflow(sample, tmp_path):
    proc = _run("import tensorflow as tf; assert tf.constant(1).numpy() == 1", sample("mlp"),
                tmp_path / "out")
    assert proc.returncode == 0 and "PARITY-OK" in proc.stdout, proc.stderr[-2000:]


def test_convert_after_importing_paddle_then_tensorflow(sample, tmp_path):
    proc = _run("import paddle, tensorflow", sample("mlp"), tmp_path / "out")
    assert proc.returncode == 0 and "PARITY-OK" in proc.stdout, proc.stderr[-2000:]


def test_generated_model_refuses_to_import_after_tensorflow(sample, tmp_path):
    """Loading the generated model.py where TF is already imported gives an
    actionable ImportError instead of a segfault."""
    from x2.convert import convert
    convert(str(sample("mlp")), str(tmp_path / "out"))
    code = ("import sys, tensorflow\nsys.path.insert(0, sys.argv[1])\n"
            "try:\n    import model\nexcept ImportError as e:\n    print('REFUSED', e)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")],
                          capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0 and "REFUSED import paddle before tensorflow" in proc.stdout
