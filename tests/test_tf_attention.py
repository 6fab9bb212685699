"""Transformer-style TF models: Keras MultiHeadAttention (EinsumDense
projections, score and value einsums, Embedding, LayerNorm) and a tf.Module
with other two-operand einsum forms, converted to every target with parity
(fp32, rtol 1e-4: a few hundred accumulations per output)."""
import pytest

from conftest import convert_then_check
from x2.check.parity import check


@pytest.mark.parametrize("model", ["keras", "einsums"])
@pytest.mark.parametrize("target", ["onnx", "paddle", "torch"])
def test_einsum_models_convert_with_parity(tf_model, tmp_path, model, target):
    path = str(tf_model("attention") / model)
    out = tmp_path / target
    report = convert_then_check(path, str(out), target=target)
    assert report.ops_seen.get("Einsum", 0) >= 2
    assert report.source["reader"] == {"name": "direct"}
    result = check(path, str(out), target=target, rtol=1e-4)
    for r in result["outputs"]:
        assert not r["ref_constant"] and r["passed"], r
