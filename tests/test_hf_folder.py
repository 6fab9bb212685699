"""A Hugging Face folder is a model: `x2 convert --from torch --model DIR`
with DIR as `save_pretrained` wrote it, and no other flag. The inputs,
their dynamic dims and the cache come from the folder's config
(x2/frontends/torch/hf_folder.py); each conversion is verified against
transformers' own model loaded from the folder (and x2 check rebuilds it from the folder too). Folders x2 must not read
(the model's own code, pickled weights, a missing shard, ...) are refused
with what to do, and nothing is written.

Models: tools/zoo_models/hf_folder_models.py (random weights, seed 0), built
once per run: a Llama decoder saved in seven shards with use_cache=True (as
from_pretrained gives it back), a BERT encoder stored in bfloat16 (converted
in bfloat16 by default), a ViT."""
import json
import shutil

import pytest

from conftest import ROOT, _build, run_cli
from x2.check.parity import check
from x2.convert import convert
from x2.errors import X2Error

pytestmark = pytest.mark.xdist_group("hf_folder")

BUILD = ROOT / "tools" / "zoo_models" / "hf_folder_models.py"
RTOL = 1e-5   # fp32, small nets


@pytest.fixture(scope="module")
def folder(model_dir):
    return lambda name: _build([str(BUILD), name], model_dir / name)


def _report(out):
    return json.loads((out / "report.json").read_text())


def _inputs(report) -> dict:
    return {i["name"]: i["dims"] for i in report["inputs"]}


def _passes(model, out, target) -> dict:
    result = check(str(model), str(out), source="torch", target=target, rtol=RTOL,
                   serving=target == "paddle")
    assert result["passed"], [r for r in result["outputs"] if not r["passed"]]
    assert {d for s in result["shapes_checked"] for d in s["dims"]} >= {"batch"}
    return result


def _nothing_written(out):
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.x2-staging-*"))


def test_sharded_decoder_with_its_cache_config_converts_to_every_target(folder, tmp_path):
    model = folder("folder_llama")
    assert len(list(model.glob("model-0000*-of-00007.safetensors"))) == 7
    assert json.loads((model / "config.json").read_text())["use_cache"] is True
    for target in ("onnx", "paddle", "torch"):
        report = convert(str(model), str(tmp_path / target), source="torch", target=target)
        assert report.target_details["verify"]["verified"]
        assert _inputs(_report(tmp_path / target)) == {"input_ids": ["batch", "seq"],
                                                       "attention_mask": ["batch", "seq"]}
        assert [o["name"] for o in report.outputs] == ["logits"]   # the cache left out
        assert any("--with-cache writes one decoding step" in n for n in report.source["notes"])
        # every op of transformers' decoder mapped as captured: no run_decompositions
        # (half of a 0.5B model's read time, tools/llm_scale.py)
        assert "decomposed_for" not in report.source, report.source["decomposed_for"]
        verified = report.target_details["verify"]
        assert max(max(v.values()) for v in verified["max_rel"].values()) <= RTOL
        if target == "paddle":
            assert set(verified["runners"]) == {
                "paddle:python", "paddle:jit.load", "paddle:inference"}
    # Convert's verify ran transformers' model from the folder; x2 check
    # rebuilds it from the folder too.
    _passes(model, tmp_path / "onnx", "onnx")


def test_encoder_takes_token_type_ids_and_a_bf16_checkpoint_converts_in_bf16(folder, tmp_path):
    model = folder("folder_bert")
    out = tmp_path / "torch"
    report = convert(str(model), str(out), source="torch", target="torch")
    assert _inputs(_report(out)) == {name: ["batch", "seq"] for name in
                                     ("input_ids", "attention_mask", "token_type_ids")}
    assert all(i["dtype"] == "int64" for i in report.inputs)
    precision = _report(out)["target_details"]["precision"]
    assert precision["precision"] == "bf16"
    assert precision["chosen"] == ("the checkpoint is stored in bfloat16; --precision fp32 "
                                   "converts in float32")
    assert {o["dtype"] for o in report.outputs} == {"bfloat16"}
    verified = report.target_details["verify"]
    assert verified["verified"] and verified["tolerance"]["rtol"] == 5e-2
    assert max(max(v.values()) for v in verified["max_rel"].values()) <= 5e-2


def test_precision_fp32_converts_a_bf16_checkpoint_in_fp32(folder, tmp_path):
    """A config that names no dtype: the safetensors headers say bfloat16.
    About 8 s (one conversion)."""
    model = _copy(folder("folder_bert"), tmp_path, "bert")
    config = json.loads((model / "config.json").read_text())
    config.pop("dtype", None), config.pop("torch_dtype", None)
    (model / "config.json").write_text(json.dumps(config))
    report = convert(str(model), str(tmp_path / "out"), source="torch", target="torch",
                     emit_options={"precision": "fp32"})
    assert report.source["stored_dtype"] == "bfloat16"
    assert report.target_details["precision"]["chosen"] == (
        "--precision fp32; the checkpoint is stored in bfloat16")
    assert {o["dtype"] for o in report.outputs} == {"float32"}
    verified = report.target_details["verify"]
    assert max(max(v.values()) for v in verified["max_rel"].values()) <= RTOL


def test_vision_model_takes_pixel_values_at_its_image_size(folder, tmp_path):
    model = folder("folder_vit")
    out = tmp_path / "onnx"
    report = convert(str(model), str(out), source="torch", target="onnx")
    (pixels,) = report.inputs
    assert pixels["name"] == "pixel_values" and pixels["shape"] == [None, 3, 32, 32]
    assert pixels["dims"][0] == "batch"
    assert report.target_details["verify"]["verified"]


def test_a_safetensors_file_beside_its_config_and_the_with_cache_step(folder, tmp_path):
    """`--model DIR/x.safetensors` reads that file with the folder's config;
    --with-cache writes the decoder's cached step from a folder."""
    sharded = folder("folder_llama")
    single = tmp_path / "llama"
    single.mkdir()
    shutil.copy(sharded / "config.json", single)
    _merge_shards(sharded, single / "weights.safetensors")
    out = tmp_path / "cached"
    report = convert(str(single / "weights.safetensors"), str(out), source="torch",
                     target="onnx", options={"with_cache": True})
    assert [i["name"] for i in report.inputs][:3] == ["input_ids", "attention_mask",
                                                       "position_ids"]
    assert "present.1.value" in [o["name"] for o in report.outputs]
    assert report.target_details["verify"]["verified"]


def _merge_shards(folder, path):
    """One safetensors file of a sharded checkpoint (in a torch worker: the
    test process imports no framework)."""
    import subprocess
    import sys
    code = ("import sys, safetensors.torch as st, pathlib\n"
            "tensors = {}\n"
            "for f in sorted(pathlib.Path(sys.argv[1]).glob('model-*.safetensors')):\n"
            "    tensors.update(st.load_file(str(f)))\n"
            "st.save_file(tensors, sys.argv[2], metadata={'format': 'pt'})\n")
    subprocess.run([sys.executable, "-c", code, str(folder), str(path)], check=True)


def _copy(folder, tmp_path, name):
    copy = tmp_path / name
    shutil.copytree(folder, copy)
    return copy


def _edit_config(model, **changes):
    config = json.loads((model / "config.json").read_text())
    config.update(changes)
    (model / "config.json").write_text(json.dumps(config))


def test_remote_code_is_refused_by_the_cli_and_nothing_is_written(folder, tmp_path):
    model = _copy(folder("folder_llama"), tmp_path, "remote")
    _edit_config(model, auto_map={"AutoModelForCausalLM": "modeling_x.MyModel"})
    (model / "modeling_x.py").write_text("raise SystemExit('model code ran')\n")
    out = tmp_path / "out"
    proc = run_cli("convert", "--from", "torch", "--to", "onnx", "--model", str(model),
                   "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "auto_map: trust_remote_code" in proc.stderr
    assert "x2 does not run code from a model folder" in proc.stderr
    assert "Traceback" not in proc.stderr and "model code ran" not in proc.stderr
    _nothing_written(out)


def _refusal(model, tmp_path, **options) -> str:
    out = tmp_path / "out"
    with pytest.raises(X2Error) as refused:
        convert(str(model), str(out), source="torch", target="torch", options=options)
    _nothing_written(out)
    return str(refused.value)


def test_pickled_weights_need_trust_pickle(folder, tmp_path):
    model = tmp_path / "pickled"
    model.mkdir()
    shutil.copy(folder("folder_llama") / "config.json", model)
    (model / "pytorch_model.bin").write_bytes(b"not read: refused before unpickling")
    message = _refusal(model, tmp_path)
    assert "pytorch_model.bin" in message and "--trust-pickle" in message


def test_missing_shard_unknown_architecture_and_missing_config_are_refused(folder, tmp_path):
    sharded = folder("folder_llama")
    missing = _copy(sharded, tmp_path, "missing")
    (missing / "model-00003-of-00007.safetensors").unlink()
    assert "shard 'model-00003-of-00007.safetensors' named by " \
           "model.safetensors.index.json is missing" in _refusal(missing, tmp_path)

    corrupt = _copy(sharded, tmp_path, "corrupt")
    (corrupt / "model-00002-of-00007.safetensors").write_bytes(b"\xff" * 64)
    assert "not a readable safetensors file" in _refusal(corrupt, tmp_path)

    unknown = _copy(sharded, tmp_path, "unknown")
    _edit_config(unknown, architectures=["LlamaForTimeTravel"])
    assert "'LlamaForTimeTravel' is not a model class of transformers" in _refusal(
        unknown, tmp_path)

    no_config = _copy(sharded, tmp_path, "no_config")
    (no_config / "config.json").unlink()
    assert "has no config.json" in _refusal(no_config, tmp_path)

    no_weights = tmp_path / "no_weights"
    no_weights.mkdir()
    shutil.copy(sharded / "config.json", no_weights)
    assert "has config.json but no weights" in _refusal(no_weights, tmp_path)

    short = _copy(sharded, tmp_path, "short")   # the index names a shard without its tensor
    index = json.loads((short / "model.safetensors.index.json").read_text())
    shard = index["weight_map"]["lm_head.weight"]
    others = [k for k, v in index["weight_map"].items() if v == shard and k != "lm_head.weight"]
    assert not others   # lm_head has a shard of its own: replace it with an empty one
    (short / shard).write_bytes(_empty_safetensors())
    message = _refusal(short, tmp_path)
    assert "does not hold every weight" in message and "lm_head.weight" in message


def _empty_safetensors() -> bytes:
    header = json.dumps({"__metadata__": {"format": "pt"}}).encode()
    return len(header).to_bytes(8, "little") + header


FACTORY = '''
import torch, transformers


def gpt2():
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=1,
                                     n_head=2)
    assert config.use_cache   # transformers' default, as from_pretrained gives it
    return transformers.GPT2LMHeadModel(config).eval()
'''


def test_a_factory_model_with_use_cache_converts_without_its_cache(tmp_path):
    """torch.export cannot return a DynamicCache ("register a pytree"): the
    model is read without its cache, and the note says how to get it."""
    (tmp_path / "lm.py").write_text(FACTORY)
    report = convert(f"{tmp_path / 'lm.py'}:gpt2", str(tmp_path / "out"), source="torch",
                     target="torch", input_shapes={"input_ids": [2, 5]},
                     options={"input_dtypes": {"input_ids": "int64"}})
    assert [o["name"] for o in report.outputs] == ["logits"]
    assert report.target_details["verify"]["verified"]
    # every source key, Conv1D's [in, out] weights and the position table its
    # constant positions read included (tests/test_finetune.py loads one strictly)
    assert report.target_details["source_names"] == {
        "source_keys": 17, "matched": 17, "not_in_the_graph": [], "renamed": {}}
    assert any("--with-cache writes one decoding step" in n for n in report.source["notes"])
