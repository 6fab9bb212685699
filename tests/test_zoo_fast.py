"""A fast subset of the model zoo (tools/zoo.py) as tests: a few small
entries from different sources, each converted to every target and checked
against its source framework at the entry's fp32 rtol (1e-5 for small nets,
1e-4 for larger ones), with a reference that must depend on its input. The
full zoo is a command (`make zoo`), not a test."""
import dataclasses
import importlib.util
import sys

import pytest

import builders
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools" / "zoo_models"))
_spec = importlib.util.spec_from_file_location("zoo_tool", ROOT / "tools" / "zoo.py")
zoo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zoo)
registry = zoo.registry
# Source models built in the suite's warm builder processes (tests/builders.py).
zoo.run_build = lambda command: builders.build(command, zoo.ENV, ROOT)

# One small entry of every zoo family, at the fp32 rtol of small nets
# (1e-5); keras_mobilenet_v3_small is a Keras application, a large net whose
# fp32 error against float64 is itself ~5e-5, so it keeps the zoo's 1e-4.
# Text models are checked with padded attention masks (x2/check/parity.py
# padding_masks: right- and left-padded rows), so a decoder whose causal
# queries see no key fails here as it would for a user.
# keras_hub_gpt2 computes its positions from the input's shape (Shape -> Range):
# they fold only because the zoo converts it with static input shapes.
# cache_gpt2 is GPT-2 exported to ONNX with its cache: checked at three (new,
# cached) lengths and by generating GENERATE tokens (x2 check --generate).
# with_cache_llama is Llama converted from transformers with its cache
# (x2 convert --with-cache): three (new, cached) lengths and GENERATE tokens.
# silero_vad_frames is Silero's voice-activity model with its trained weights
# (the silero-vad wheel), checked on a voiced signal.
# folder_vit is a ViT as save_pretrained writes it, converted with --model DIR
# and no other flag (tests/test_hf_folder.py has the decoder and the refusals).
FAST = {"keras_text_cnn": 1e-5, "resnet": 1e-5, "keras_hub_gpt2": 1e-5,
        "llama": 1e-5, "bart": 1e-5, "bert": 1e-5, "wav2vec2": 1e-5,
        "keras_mobilenet_v3_small": 1e-4, "torch_nn_transformer_legacy": 1e-5,
        "light_squeezenet": 1e-5, "cache_gpt2": 1e-5, "silero_vad_frames": 1e-5,
        "with_cache_llama": 1e-5, "folder_vit": 1e-5}
# Tokens the decoders generate here: 8 cached steps past three prompts (the
# zoo itself generates registry.GENERATE_TOKENS, 32).
GENERATE = 8


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("zoo")


def test_registry_has_sixty_architectures_from_every_source():
    entries = registry.ENTRIES.values()
    assert len(registry.ENTRIES) >= 60
    assert {e.source for e in entries} == {"tf", "torch", "onnx"}
    assert {"hf-text", "hf-decoder", "hf-seq2seq", "hf-vision", "hf-speech", "keras-app",
            "keras-seq", "keras-hub", "onnx-exported", "onnx-light", "onnx-cache",
            "packaged", "torch-cache", "hf-folder"} <= set(
                registry.FAMILIES)


def test_fast_subset_holds_every_zoo_family():
    assert {registry.ENTRIES[name].family for name in FAST} == set(registry.FAMILIES)


@pytest.mark.parametrize("name", sorted(FAST))
def test_zoo_entry_converts_to_every_target_with_parity(work, name):
    entry = registry.ENTRIES[name]
    entry = dataclasses.replace(entry, rtol=FAST[name], generate=min(entry.generate, GENERATE))
    result = zoo.run_entry(entry, work, list(registry.TARGETS), lambda *_: None,
                           latency=False)
    assert set(result["targets"]) == set(registry.TARGETS)
    for target, row in result["targets"].items():
        assert row["passed"], f"{name} -> {target}: {row.get('reason')}"
        assert row["max_rel"] <= entry.rtol, row
        assert row["transposes_left"] >= 0 and row["convert_s"] > 0
        # written only once convert's own verify proved it against the source
        assert row["verified"] and row["verify_s"] > 0, row
        if target == "paddle":
            assert set(row["verify_runners"]) == set(row["runners"]), row
        if target == "paddle":  # served as users serve it, not only as written
            assert row["runners"] == ["paddle:inference", "paddle:jit.load", "paddle:python"]
        if entry.generate:  # a decoder with its cache also generates the source's tokens
            assert row["generate"]["passed"] and row["generate"]["tokens"] == GENERATE, row
            assert all(r["tokens_equal"] for r in row["generate"]["runners"])


def test_dynamic_zoo_names_the_dims_users_vary():
    """`make zoo` --dynamic converts Hugging Face models with batch and length
    named at the zoo's example sizes, keras_hub backbones without shapes."""
    bert = registry.ENTRIES["bert"]
    assert bert.convert_args["input_shapes"]["input_ids"] == [2, 16]
    assert bert.dynamic_args["input_shapes"] == {"input_ids": ["batch=2", "seq=16"],
                                                 "attention_mask": ["batch=2", "seq=16"]}
    assert registry.ENTRIES["resnet"].dynamic_args["input_shapes"]["pixel_values"] == [
        "batch=2", 3, 64, 64]
    assert "input_shapes" not in registry.ENTRIES["keras_hub_gpt2"].dynamic_args


def test_keras_hub_backbone_converts_without_input_shapes(work):
    """The dynamic zoo's keras_hub GPT-2: positions from the token row's run-time
    length (Range, a computed Slice of the position table, BroadcastTo), checked
    at three lengths within its position table on every target."""
    entry = registry.ENTRIES["keras_hub_gpt2"]
    dynamic = work / "dynamic"   # its own outputs, the source models shared
    (work / "models").mkdir(exist_ok=True)
    dynamic.mkdir()
    (dynamic / "models").symlink_to(work / "models")
    result = zoo.run_entry(entry, dynamic, list(registry.TARGETS), lambda *_: None,
                           latency=False, dynamic=True)
    for target, row in result["targets"].items():
        assert row["passed"], f"keras_hub_gpt2 -> {target}: {row.get('reason')}"
        assert row["dims"] == ["batch", "dim1"]
        assert [shapes[0] for shapes in row["shapes"]] == [[2, 12], [1, 1], [3, 9]]


def test_zoo_tables_count_and_group_failures(tmp_path):
    results = {
        "a": {"name": "a", "family": "hf-text", "source": "torch", "rtol": 1e-4, "targets": {
            "paddle": {"target": "paddle", "passed": True, "max_rel": 2e-6, "convert_s": 1.0,
                       "transposes_left": 0, "dims": ["batch", "seq"], "verified": True,
                       "verify_s": 0.43, "verify_runners": ["paddle:python"],
                       "shapes": [[[2, 16]], [[1, 1]], [[3, 25]]]},
            "onnx": {"target": "onnx", "passed": False, "stage": "read",
                     "reason": "unsupported 2 op type(s): aten.ge.Scalar, aten.gather.default",
                     "unsupported": ["aten.gather.default", "aten.ge.Scalar"]}}},
        "b": {"name": "b", "family": "hf-text", "source": "torch", "rtol": 1e-4, "targets": {
            "onnx": {"target": "onnx", "passed": False, "stage": "read",
                     "reason": "unsupported 1 op type(s): aten.ge.Scalar",
                     "unsupported": ["aten.ge.Scalar"]}}}}
    assert zoo.summary(results) == [{"family": "hf-text", "models": 2, "paddle": [1, 1],
                                     "onnx": [0, 2], "torch": [0, 0]}]
    assert zoo.failure_causes(results)[0] == ("unsupported op aten.ge.Scalar", 2,
                                              ["a->onnx", "b->onnx"])
    md = tmp_path / "zoo.md"
    zoo.write_outputs(results, tmp_path / "zoo.json", md)
    text = md.read_text()
    assert "| hf-text | 2 | 1/1 | 0/2 | 0/0 |" in text
    assert "| a | hf-text | torch | 0.0001 | batch, seq | 2x16; 1x1; 3x25 | — | pass |" in text
    assert "| 2.00e-06 | 1.0 | yes (0.4) | 0 |" in text
    assert "proved **1 of 1** written models, median verify 0.4 s" in text
    assert "a stale table" in text
    results["a"]["targets"]["paddle"]["generate"] = {"tokens": 32, "passed": True, "runners": []}
    zoo.write_outputs(results, tmp_path / "zoo.json", md)
    assert "| 2x16; 1x1; 3x25 | 32 tokens: paddle | pass |" in md.read_text()
    results["a"]["commit"] = "0123abcd"
    zoo.write_outputs(results, tmp_path / "zoo.json", md)
    assert "Measured at 2 different x2 commits (0123abcd, unknown)" in md.read_text()
    assert "unsupported 2 op type(s): aten.ge.Scalar, aten.gather.default" in text
