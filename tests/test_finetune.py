"""Fine-tunable output (x2 convert --for training, x2 check --grad): every
learned weight of the source is a trainable parameter of the converted
model, BatchNorm stays a BatchNorm layer, gradients match the source's and
an optimizer step on the converted model lowers the loss.

Models: a Keras CNN with BatchNorm (tests/tf_models.py finetune_cnn, random
BatchNorm statistics) and a PyTorch transformer encoder
(tests/torch_models.py encoder). Converted models are loaded in subprocesses
(one framework each; TF never meets paddle)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import ENV, ROOT, run_cli
from x2.check.gradcheck import check_grad
from x2.convert import convert as x2_convert

TORCH_MODELS = str(ROOT / "tests" / "torch_models.py")
BATCHNORM = {"torch": "nn.BatchNorm2d(", "paddle": "nn.BatchNorm2D("}

# Loads a converted model (load_model: weights in, eval mode) and reports its
# trainable parameter count, its BatchNorm layer classes, and the loss
# sum(outputs * W) (W as x2 check --grad draws it) before and after one SGD step.
_PROBE = r'''
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1])
from x2.emitters.codegen import import_generated
from x2.check.gradcheck_runtime import loss_weights
from x2.check.parity import make_inputs
framework, out = sys.argv[2], Path(sys.argv[3])
report = json.loads((out / "report.json").read_text())
arrays = make_inputs({"inputs": report["inputs"]}, 0, 2)
model = import_generated(out / "model.py").load_model()
result = {}
if framework == "torch":
    import torch
    params = [p for p in model.parameters() if p.requires_grad]
    result["layers"] = sorted({type(m).__name__ for m in model.modules()})
    def loss_of():
        y = model(*[torch.from_numpy(a) for a in arrays])
        return (y * torch.from_numpy(loss_weights(tuple(y.shape), 0, 0))).sum()
    opt = torch.optim.SGD(params, lr=1e-2)
else:
    import paddle
    params = [p for p in model.parameters() if not p.stop_gradient]
    result["layers"] = sorted({type(m).__name__ for m in model.sublayers()})
    def loss_of():
        y = model(*[paddle.to_tensor(a) for a in arrays])
        return (y * paddle.to_tensor(loss_weights(tuple(y.shape), 0, 0))).sum()
    opt = paddle.optimizer.SGD(learning_rate=1e-2, parameters=params)
result["trainable"] = int(sum(int(np.prod(p.shape)) for p in params))
loss = loss_of()
loss.backward()
opt.step()
result["loss_before"] = float(loss)
result["loss_after"] = float(loss_of())
print(json.dumps(result))
'''


def probe(framework: str, out) -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT), framework, str(out)],
                          capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# The trainable parameter count of a torch source FILE.py:factory.
_SOURCE_TRAINABLE = r'''
import importlib.util, sys
from pathlib import Path
path, factory = sys.argv[1].rsplit(":", 1)
sys.path.insert(0, str(Path(path).parent))
spec = importlib.util.spec_from_file_location("source_models", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = getattr(module, factory)()
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
'''


def torch_source_trainable(spec: str) -> int:
    proc = subprocess.run([sys.executable, "-c", _SOURCE_TRAINABLE, spec], capture_output=True,
                          text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return int(proc.stdout.strip().splitlines()[-1])


def convert(tmp_path, source: str, target: str, model: str, *, input_shapes=None,
            input_dtype: str | None = None, purpose="training"):
    """x2 convert --for PURPOSE, in this process on warm workers (the CLI
    itself is tested in test_grad_check_fails_on_a_wrong_gradient)."""
    out = tmp_path / f"{target}_{purpose}"
    x2_convert(model, str(out), source=source, target=target, input_shapes=input_shapes,
               options={"input_dtypes": {"*": input_dtype}} if input_dtype else None,
               emit_options={"purpose": purpose})
    return out


def grad_check(source: str, target: str, model: str, out) -> dict:
    result = check_grad(model, str(out), source=source, target=target)
    assert result["passed"], result["worst"]
    return result


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_keras_cnn_for_training(tmp_path, tf_model, target):
    src = tf_model("finetune_cnn")
    out = convert(tmp_path, "tf", target, str(src))
    text = (out / "model.py").read_text()
    # Both Keras BatchNormalization layers come back as BatchNorm layers, named
    # after them, with their running statistics loaded; nothing else is a buffer.
    assert text.count(BATCHNORM[target]) == 2
    assert f"self.bn1 = {BATCHNORM[target]}" in text
    assert "register_buffer" not in text
    assert json.loads((out / "report.json").read_text())["target_details"]["for"] == "training"

    found = probe(target, out)
    expected = json.loads((src / "trainable.json").read_text())["trainable"]
    assert found["trainable"] == expected == 868
    assert ("BatchNorm2d" if target == "torch" else "BatchNorm2D") in found["layers"]

    grads = grad_check("tf", target, str(src), out)
    assert grads["passed"] and grads["source_weights"] == 9
    assert grads["worst"]["max_rel"] < 1e-4
    assert {r["source"] for r in grads["parameters"]} >= {"bn1/gamma", "bn2/beta",
                                                         "conv1/kernel", "head/bias"}
    # The loss the probe lowers is the one --grad differentiated, on both sides.
    assert found["loss_before"] == pytest.approx(grads["loss"]["source"], rel=1e-4)
    assert found["loss_after"] < found["loss_before"]


def test_keras_cnn_for_inference_folds_batchnorm(tmp_path, tf_model):
    """The default stays what it was: BatchNorm folded into the convolutions."""
    out = convert(tmp_path, "tf", "torch", str(tf_model("finetune_cnn")), purpose="inference")
    text = (out / "model.py").read_text()
    assert "BatchNorm" not in text and text.count("nn.Conv2d(") == 2
    assert json.loads((out / "report.json").read_text())["target_details"]["for"] == "inference"


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_torch_encoder_for_training(tmp_path, target):
    model = f"{TORCH_MODELS}:encoder"
    out = convert(tmp_path, "torch", target, model, input_shapes={"tokens": [2, 16]},
                  input_dtype="int64")
    text = (out / "model.py").read_text()
    # The embedding table and the LayerNorms are layers, the learned positions a
    # parameter, and the q/k/v projection a Linear layer named after its source
    # weight: an optimizer updates them all.
    # (the encoder layers' classes hold theirs: module_tree.py)
    for layer in ("embed = nn.Embedding(", "norm2 = nn.LayerNorm(", "in_proj = nn.Linear("):
        assert f"self.{layer}" in text, text
    assert "self.pos = " in text and "register_buffer('c_pos'" not in text

    found = probe(target, out)
    assert found["trainable"] == torch_source_trainable(model) == 19429
    assert found["loss_after"] < found["loss_before"]
    if target == "paddle":
        grads = grad_check("torch", target, model, out)
        assert grads["passed"] and grads["source_weights"] == 30
        assert grads["worst"]["max_rel"] < 1e-4
        assert found["loss_before"] == pytest.approx(grads["loss"]["source"], rel=1e-4)


# Runs in a torch process: the source's state_dict (weights moved off the
# conversion's, the tied table once) loads strictly into the converted GPT-2,
# which then gives that source's logits; and the source's parameter count
# (torch_source_trainable's, from the process this one takes the place of).
_STRICT_LOAD = r'''
import json, sys
from pathlib import Path
import torch
root, out = sys.argv[1], Path(sys.argv[2])
sys.path[:0] = [root, root + "/tests"]
from dynamic_models import gpt2_logits
from x2.emitters.codegen import import_generated
converted = import_generated(out / "model.py").load_model()
other = gpt2_logits()
gen = torch.Generator().manual_seed(1)
with torch.no_grad():
    for p in other.parameters():
        p.add_(torch.randn(p.shape, generator=gen) * 0.05)
    converted.load_state_dict(other.state_dict(), strict=True)
    ids = torch.randint(0, 100, (2, 16), generator=gen)
    mask = torch.ones_like(ids)
    want = other(ids, mask)
    print(json.dumps({"scale": float(want.abs().max()),
                      "error": float((converted(ids, mask) - want).abs().max()),
                      "trainable": sum(p.numel() for p in other.parameters())}))
'''


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_a_head_tied_to_its_embedding_stays_tied(tmp_path, target):
    """GPT-2's lm_head is wte.weight: the converted head multiplies by the
    embedding layer's own table, so the model has the source's parameter
    count and one optimizer step moves the one table both read. Its
    transformers Conv1D projections keep their [in, out] weights at the
    source's keys (torch: model.py's Conv1D; Paddle's Linear holds [in, out]),
    so the blocks are one class in a loop and, on torch, the source's
    state_dict loads strictly and gives its logits (in the torch process that
    counts the source's parameters: no process added)."""
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:gpt2_logits"
    out = convert(tmp_path, "torch", target, model,
                  input_shapes={"input_ids": ["batch", "seq=16"],
                                "attention_mask": ["batch", "seq=16"]},
                  input_dtype="int64")
    text = (out / "model.py").read_text()
    # (the embedding sits at its source path, transformer.wte)
    # (in GPT2LMHeadModel's class, which holds the transformer: module_tree.py)
    head = {"torch": r"F\.linear\(\w+, self\.transformer\.wte\.weight\)",
            "paddle": r"paddle\.matmul\(\w+, self\.transformer\.wte\.weight, "
                      r"transpose_y=True\)"}
    assert re.search(head[target], text), text
    assert text.count("nn.Linear(32, 100") == 0 and text.count("nn.Embedding(100, 32)") == 1
    container, attn = {"torch": ("nn.ModuleList", "Conv1D(nf=96, nx=32)"),
                       "paddle": ("nn.LayerList", "nn.Linear(32, 96, bias_attr=None)")}[target]
    assert re.findall(r"^class (GPT2\w*)\(", text, re.M) == [
        "GPT2Attention", "GPT2MLP", "GPT2Block", "GPT2Model", "GPT2LMHeadModel"], text
    assert f"self.h = {container}([GPT2Block() for _ in range(2)])" in text
    assert "for layer in self.h:" in text and f"self.c_attn = {attn}" in text
    if target == "paddle":   # the source's [in, out] as it is: no transpose on load
        assert "'model.transformer.h.1.attn.c_attn.weight': " \
            "(('model.transformer.h.1.attn.c_attn.weight',), None, (32, 96))," in text
        source_trainable = torch_source_trainable(model)
    else:
        proc = subprocess.run([sys.executable, "-c", _STRICT_LOAD, str(ROOT), str(out)],
                              capture_output=True, text=True, env=ENV, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        loaded = json.loads(proc.stdout.strip().splitlines()[-1])
        assert loaded["error"] <= 1e-5 * loaded["scale"], loaded
        source_trainable = loaded["trainable"]

    found = probe(target, out)
    # An untied copy would add the 100 x 32 table again.
    assert found["trainable"] == source_trainable == 30720
    assert found["loss_after"] < found["loss_before"]
    grads = grad_check("torch", target, model, out)
    assert grads["worst"]["max_rel"] < 1e-4
    assert found["loss_before"] == pytest.approx(grads["loss"]["source"], rel=1e-4)


# One call per function the source calls once, on the code text (issue 17).
CALLS = {"torch": {"gelu": "F.gelu(", "silu": "F.silu(", "layer_norm": "nn.LayerNorm(",
                   "attention": "F.scaled_dot_product_attention(", "embedding": "nn.Embedding("},
         # Paddle's attention is one expression: softmax(q @ k^T * scale) @ v
         "paddle": {"gelu": "F.gelu(", "silu": "F.swish(", "layer_norm": "nn.LayerNorm(",
                    "attention": "F.softmax(", "embedding": "nn.Embedding("}}


def _assert_calls(text: str, target: str, **counts: int) -> None:
    for function, count in counts.items():
        assert text.count(CALLS[target][function]) == count, (function, text)


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_keras_transformer_for_training(tmp_path, tf_model, target):
    """A Keras transformer block: each function is one call (the moments-form
    LayerNorm, the erfc-form GELU, swish and MultiHeadAttention fused), the
    EinsumDense/Tensordot projections are Linear layers holding their biases,
    values are named after the layers that make them (MultiHeadAttention is a
    class of its own), and every trainable Keras weight is one trainable
    parameter with matching gradients."""
    src = tf_model("finetune_transformer")
    out = convert(tmp_path, "tf", target, str(src))
    text = (out / "model.py").read_text()
    _assert_calls(text, target, gelu=1, silu=1, layer_norm=2, attention=1, embedding=1)
    assert text.count("nn.Linear(") == 8 and "_nchw" not in text
    # MultiHeadAttention (a layer holding layers) is a class of its own,
    # named after the layer: the SavedModel records no classes (issue 47)
    assert "self.attn = Attn()" in text and "class Attn(" in text
    assert re.search(r"(\w+) = self\.norm1\(\w+\)\n +ffn_up = self\.ffn_up\(\1\)", text), text
    assert "create_parameter" not in text and "nn.Parameter" not in text

    found = probe(target, out)
    expected = json.loads((src / "trainable.json").read_text())["trainable"]
    assert found["trainable"] == expected == 3204
    grads = grad_check("tf", target, str(src), out)
    assert grads["passed"] and grads["source_weights"] == grads["converted_parameters"] == 21
    assert found["loss_before"] == pytest.approx(grads["loss"]["source"], rel=1e-4)
    assert found["loss_after"] < found["loss_before"]


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_hugging_face_bert_for_training(tmp_path, target):
    """transformers' BertForSequenceClassification (small config, random
    init) from the un-decomposed export: embeddings, LayerNorms and GELUs as
    one call each, every parameter trainable, gradients as torch's."""
    model = f"{ROOT / 'tools' / 'zoo_models' / 'hf.py'}:bert_classifier"
    out = convert(tmp_path, "torch", target, model, input_shapes={"input_ids": [2, 16]},
                  input_dtype="int64")
    text = (out / "model.py").read_text()
    # once per class: the two BertLayers share one, called in a loop (module_tree.py)
    _assert_calls(text, target, gelu=1, layer_norm=3, attention=1, embedding=3)
    assert "for layer in self.layer:" in text
    found = probe(target, out)
    assert found["trainable"] == torch_source_trainable(model) == 24581
    assert found["loss_after"] < found["loss_before"]
    if target == "paddle":
        grads = grad_check("torch", target, model, out)
        assert grads["passed"] and grads["converted_parameters"] == grads["source_weights"]
        assert found["loss_before"] == pytest.approx(grads["loss"]["source"], rel=1e-4)


def test_grad_check_fails_on_a_wrong_gradient(tmp_path, tf_model):
    """A converted weight that differs from the source's gives other gradients:
    --grad names it and exits 1."""
    src = tf_model("finetune_cnn")
    out = convert(tmp_path, "tf", "torch", str(src))
    code = f'''
import torch
state = torch.load({str(out / "model.pt")!r})
state["conv2.weight"] = state["conv2.weight"] * 1.5
torch.save(state, {str(out / "model.pt")!r})
'''
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
    proc = run_cli("check", "--grad", "--from", "tf", "--to", "torch", "--model", str(src),
                   "--converted", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL" in proc.stdout and "worst" in proc.stdout and "max rel err" in proc.stdout


def _keras_batchnorm_graph():
    """Keras 3's inference BatchNormalization as the direct reader maps it:
    x * m + (beta - mean * m), m = rsqrt(moving_variance + eps) * gamma."""
    import numpy as np
    from x2.ir import Graph, Origin
    rng = np.random.default_rng(0)
    g = Graph()
    g.add_input("x", "float32", (2, 5, 5, 3))
    for name, value, trainable in (("gamma", rng.uniform(0.5, 1.5, 3), True),
                                   ("beta", rng.normal(0, 0.1, 3), True),
                                   ("mean", rng.normal(0, 0.1, 3), False),
                                   ("var", rng.uniform(0.5, 1.5, 3), False)):
        g.add_constant(name, value.astype(np.float32))
        g.origin[name] = Origin(name, param=f"bn/{name}", trainable=trainable)
    g.add_constant("eps", np.array(1e-3, np.float32))
    for op, inputs, out in (("add", ["var", "eps"], "v"), ("rsqrt", ["v"], "r"),
                            ("mul", ["r", "gamma"], "m"), ("mul", ["x", "m"], "xm"),
                            ("mul", ["mean", "m"], "mm"), ("sub", ["beta", "mm"], "shift"),
                            ("add", ["xm", "shift"], "y")):
        g.add_node(op, inputs, name=out, outputs=[out])
    g.outputs = ["y"]
    return g


def test_keras_batchnorm_arithmetic_becomes_batch_norm():
    """--for training's passes on the IR: nothing computed from the variables
    is folded, the arithmetic becomes one batch_norm node (NCHW between two
    transposes) that computes the same (numpy kernels)."""
    import numpy as np
    from x2.ir.interpret import interpret
    from x2.passes import pipeline_for, run_pipeline
    from x2.passes.fold import fold_constants_for_training
    from x2.passes.training import batch_norm_from_affine
    x = np.random.default_rng(1).standard_normal((2, 5, 5, 3)).astype(np.float32)
    expected = interpret(_keras_batchnorm_graph(), [x])[0]
    graph = batch_norm_from_affine(fold_constants_for_training(_keras_batchnorm_graph()))
    assert graph.op_counts() == {"transpose": 2, "batch_norm": 1}
    assert [graph.origin[v].param for v in graph.nodes[1].inputs[1:]] == \
        ["bn/gamma", "bn/beta", "bn/mean", "bn/var"]
    np.testing.assert_allclose(interpret(graph, [x])[0], expected, rtol=1e-6, atol=1e-6)
    # The whole training pipeline keeps it; the inference one folds it to constants.
    trained, _ = run_pipeline(_keras_batchnorm_graph(), pipeline_for(purpose="training"))
    assert trained.count("batch_norm") == 1
    folded, _ = run_pipeline(_keras_batchnorm_graph(), pipeline_for())
    assert folded.count("batch_norm") == 0 and folded.count("rsqrt") == 0
    np.testing.assert_allclose(interpret(trained, [x])[0], expected, rtol=1e-6, atol=1e-6)


# Group and instance normalization (issue 17): one layer call each, with the
# source's learned weights as its trainable parameters.
NORMS = {"torch": ("nn.GroupNorm(", "nn.InstanceNorm2d("),
         "paddle": ("nn.GroupNorm(", "nn.InstanceNorm2D(")}


def _assert_parity(model: str, out, source: str, target: str) -> None:
    from x2.check.parity import check
    result = check(model, str(out), source=source, target=target, rtol=1e-5)
    assert result["passed"], result
    for r in result["outputs"]:
        assert not r["ref_constant"] and r["ref_scale"] > 1e-3, r


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_torch_group_and_instance_norm_for_training(tmp_path, target):
    model = f"{TORCH_MODELS}:norms"
    out = convert(tmp_path, "torch", target, model, input_shapes={"x": [2, 3, 8, 8]})
    text = (out / "model.py").read_text()
    group, instance = NORMS[target]
    assert text.count(group) == 1 and text.count(instance) == 1, text
    assert "self.gn = " + group in text and "self.inorm = " + instance in text
    _assert_parity(model, out, "torch", target)
    found = probe(target, out)
    assert found["trainable"] == torch_source_trainable(model) == 256
    assert found["loss_after"] < found["loss_before"]


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_keras_group_norm_for_training(tmp_path, tf_model, target):
    """Keras GroupNormalization's reshape/moments/arithmetic is one GroupNorm
    layer holding gamma and beta; the channels-last transposes around it cancel."""
    src = tf_model("finetune_groupnorm")
    out = convert(tmp_path, "tf", target, str(src))
    text = (out / "model.py").read_text()
    assert text.count(NORMS[target][0]) == 1 and "self.gn = " in text, text
    assert "rsqrt" not in text and "reshape" not in text and text.count("permute(") <= 2
    _assert_parity(str(src), out, "tf", target)
    found = probe(target, out)
    expected = json.loads((src / "trainable.json").read_text())["trainable"]
    assert found["trainable"] == expected == 276
    assert found["loss_after"] < found["loss_before"]


# Runs a converted model on one batch (shape argv[4]) in eval() twice and in train() once:
# eval is deterministic, train (dropout active) is not the eval output.
_DROPOUT_PROBE = r'''
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1])
from x2.emitters.codegen import import_generated
framework, out = sys.argv[2], Path(sys.argv[3])
model = import_generated(out / "model.py").load_model()
shape = [int(d) for d in sys.argv[4].split(",")]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
if framework == "torch":
    import torch
    torch.manual_seed(0)
    run = lambda: model(torch.from_numpy(x)).detach().numpy()
else:
    import paddle
    paddle.seed(0)
    run = lambda: model(paddle.to_tensor(x)).numpy()
evals = [run(), run()]
model.train()
trained = run()
print(json.dumps({"eval_repeat": float(np.abs(evals[0] - evals[1]).max()),
                  "train_vs_eval": float(np.abs(trained - evals[0]).max())}))
'''


def assert_dropout_active(target: str, out, shape: str) -> None:
    """Eval is deterministic; train() (dropout on) changes the output."""
    proc = subprocess.run([sys.executable, "-c", _DROPOUT_PROBE, str(ROOT), target, str(out),
                           shape], capture_output=True, text=True, env=ENV, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["eval_repeat"] == 0.0 and found["train_vs_eval"] > 1e-3, found


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_torch_dropout_is_a_layer_for_training(tmp_path, target):
    """nn.Dropout(0.1) comes back as a dropout layer of rate 0.1: inactive in
    eval() (parity with the source), active in train(). The source is decomposed
    (Softsign has no mapper), where torch turns eval-mode dropout into a clone."""
    model = f"{TORCH_MODELS}:dropout_mlp"
    out = convert(tmp_path, "torch", target, model, input_shapes={"input": [4, 8]})
    assert (out / "model.py").read_text().count("nn.Dropout(p=0.1)") == 1
    _assert_parity(model, out, "torch", target)
    assert_dropout_active(target, out, "64,8")
    # Converted for inference, dropout is gone.
    plain = convert(tmp_path, "torch", target, model, input_shapes={"input": [4, 8]},
                    purpose="inference")
    assert "Dropout" not in (plain / "model.py").read_text()


@pytest.mark.parametrize("target", ["torch", "paddle"])
def test_keras_dropout_is_a_layer_for_training(tmp_path, tf_model, target):
    """A Keras Dropout(0.25) read from a .keras file comes back as one dropout
    layer of rate 0.25 named after it (Keras traces it with training=False,
    where it leaves nothing): parity with Keras in eval(), active in train().
    Converted for inference, nothing of it is left."""
    model = str(tf_model("keras_dropout") / "mlp.keras")
    out = convert(tmp_path, "tf", target, model)
    text = (out / "model.py").read_text()
    assert text.count("Dropout") == text.count("nn.Dropout(p=0.25)") == 1, text
    assert "self.drop_1 = nn.Dropout(p=0.25)" in text
    _assert_parity(model, out, "tf", target)
    assert_dropout_active(target, out, "64,8")
    plain = convert(tmp_path, "tf", target, model, purpose="inference")
    assert "Dropout" not in (plain / "model.py").read_text()


def test_keras_cnn_dropout_for_training(tmp_path, tf_model):
    """In a CNN (.h5), Dropout after a Conv2D is a dropout layer; SpatialDropout2D
    (whole channels, not nn.Dropout) stays the inference identity and the
    report names it."""
    model = str(tf_model("keras_dropout") / "cnn.h5")
    out = convert(tmp_path, "tf", "torch", model)
    text = (out / "model.py").read_text()
    assert text.count("Dropout") == text.count("nn.Dropout(p=0.25)") == 1, text
    _assert_parity(model, out, "tf", "torch")
    assert_dropout_active("torch", out, "16,6,6,3")
    report = json.loads((out / "report.json").read_text())
    assert report["source"]["dropout_left_out"] == [{"layer": "channels",
                                                     "class": "SpatialDropout2D"}]
