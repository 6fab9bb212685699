"""Models converted once with their dynamic dims kept, then proven at several
shapes against the source framework on every target.

Parity (fp32, x2 check's default rtol 1e-4 of the output's scale, atol 1e-6):
x2 check runs each dynamic dim at its example size, 1 and a larger odd size
(x2/check/shapes.py), token inputs with padded attention masks; paddle is run
as written (model.py), through paddle.jit.load of inference/ and, as it is
served, through Paddle Inference with its default config (oneDNN on).
The latent-attention cache (DeepseekV3, keys and values of different sizes)
is one Paddle conversion, about 45 s on 2 cores."""
import json
import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import onnx
import pytest

from conftest import ROOT, _build, convert_then_check
from dynamic_models import EXAMPLE_SEQ
from x2.check.parity import check
from x2.convert import convert
from x2.errors import X2Error

pytestmark = pytest.mark.xdist_group("dynamic")
TARGETS = ["onnx", "paddle", "torch"]


@pytest.fixture(scope="module", params=["gpt2_legacy", "gpt2_dynamo"])
def gpt2_onnx(request, model_dir):
    return _build(["tests/dynamic_models.py", request.param], model_dir / f"{request.param}.onnx")


@pytest.mark.parametrize("target", TARGETS)
def test_gpt2_exported_with_dynamic_axes_runs_at_every_batch_and_length(gpt2_onnx, target,
                                                                        tmp_path):
    out = tmp_path / "out"
    report = convert_then_check(str(gpt2_onnx), str(out), source="onnx", target=target)
    assert [i["dims"] for i in report.inputs] == [["batch", "seq"], ["batch", "seq"]]
    result = check(str(gpt2_onnx), str(out), source="onnx", target=target, serving=True)
    shapes = [s["dims"] for s in result["shapes_checked"]]
    assert shapes == [{"batch": 2, "seq": 16}, {"batch": 1, "seq": 1},
                      {"batch": 3, "seq": 25}], shapes
    runners = {"onnx": {"onnx:onnxruntime"}, "torch": {"torch:python"},
               "paddle": {"paddle:python", "paddle:jit.load", "paddle:inference"}}[target]
    assert {(r["runner"], r["batch"]) for r in result["outputs"]} == {
        (runner, b) for runner in runners for b in range(3)}
    assert result["passed"], result["outputs"]
    if target == "onnx":
        written = onnx.load(str(out / "model.onnx"))
        assert [[d.dim_param for d in i.type.tensor_type.shape.dim]
                for i in written.graph.input] == [["batch", "seq"], ["batch", "seq"]]
    if target == "torch":
        forward = (out / "model.py").read_text().split("def forward", 1)[1]
        assert not re.search(rf"(?<![\w.])({EXAMPLE_SEQ}|{2 * EXAMPLE_SEQ})(?![\w.])",
                             forward), "the export's example length is baked into model.py"


def test_a_dim_named_in_input_shape_must_be_dynamic_in_the_model(gpt2_onnx, tmp_path):
    from x2.errors import SelectionError
    fixed = convert_then_check(str(gpt2_onnx), str(tmp_path / "fixed"), source="onnx",
                               target="onnx",
                               input_shapes={"input_ids": [2, "seq"], "attention_mask": [2, "seq"]})
    assert [i["dims"] for i in fixed.inputs] == [[None, "seq"], [None, "seq"]]
    assert fixed.inputs[0]["shape"] == [2, None]
    result = check(str(gpt2_onnx), str(tmp_path / "fixed"), source="onnx", target="onnx",
                   dim_sizes={"seq": [3, 7]})
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [[2, 3], [2, 7]]
    assert result["passed"]
    with pytest.raises(SelectionError, match="contradicts"):
        convert_then_check(str(gpt2_onnx), str(tmp_path / "bad"), source="onnx", target="onnx",
                           input_shapes={"input_ids": [2, 3, "seq"]})


@pytest.mark.parametrize("target", TARGETS)
def test_torch_dims_named_in_input_shape_stay_dynamic(target, tmp_path):
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:fully_convolutional_cnn"
    out = tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes={"input": ["n", 3, "h=12", "w=12"]})
    assert report.inputs[0]["shape"] == [None, 3, None, None]
    assert report.inputs[0]["dims"] == ["n", None, "h", "w"]
    result = check(model, str(out), source="torch", target=target, serving=True)
    # n was captured at torch's default example size for a named dim (7), h and w at 12.
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [7, 3, 12, 12], [1, 3, 1, 1], [11, 3, 19, 19]]
    assert result["passed"], result["outputs"]


@pytest.mark.parametrize("target", TARGETS)
def test_hugging_face_decoder_from_torch_runs_at_every_batch_and_length(target, tmp_path):
    """GPT-2 from torch with `NAME:batch,seq`: the sizes its attention computes
    from the sequence (views, the causal mask, position ids) stay in the
    graph; checked at three shapes with left- and right-padded masks."""
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:gpt2_logits"
    out = tmp_path / "out"
    dims = ["batch", f"seq={EXAMPLE_SEQ}"]
    report = convert_then_check(model, str(out), source="torch", target=target,
                                input_shapes={"input_ids": dims, "attention_mask": dims},
                                options={"input_dtypes": {"*": "int64"}})
    assert [i["dims"] for i in report.inputs] == [["batch", "seq"], ["batch", "seq"]]
    # Paddle also through Paddle Inference, default config (oneDNN), as served.
    result = check(model, str(out), source="torch", target=target, serving=True)
    assert [s["dims"] for s in result["shapes_checked"]] == [
        {"batch": 2, "seq": EXAMPLE_SEQ}, {"batch": 1, "seq": 1}, {"batch": 3, "seq": 19}]
    runners = {"onnx": {"onnx:onnxruntime"}, "torch": {"torch:python"},
               "paddle": {"paddle:python", "paddle:jit.load", "paddle:inference"}}[target]
    assert {(r["runner"], r["batch"]) for r in result["outputs"]} == {
        (runner, b) for runner in runners for b in range(3)}
    assert result["passed"], result["outputs"]
    if target == "torch":
        forward = (out / "model.py").read_text().split("def forward", 1)[1]
        assert not re.search(rf"(?<![\w.])({EXAMPLE_SEQ}|{2 * EXAMPLE_SEQ})(?![\w.])",
                             forward), "the capture's example length is baked into model.py"
    if target in ("torch", "paddle"):
        # Sizes are Python numbers read from the inputs, named after their dims,
        # as a person writes them: no size tensor built and copied back per view,
        # and none at all where a view keeps its input's leading dims (the heads).
        text = (out / "model.py").read_text()
        forward = text.split("def forward", 1)[1]
        assert re.search(r"^\s+batch = \w+\.shape\[0\]", text, re.M), text
        assert re.search(r"^\s+seq = \w+\.shape\[1\]", text, re.M), text
        split = {"paddle": r"shape=\[0, 0, (2|-1), 16\]\)",
                 "torch": r", 2, \[(2|-1), 16\]\)"}[target]
        assert re.search(split, forward) and "[batch, seq, 2, 16]" not in text
        assert ".tolist()" not in forward and "paddle.shape(" not in forward


@pytest.fixture(scope="module")
def yolo_onnx(model_dir):
    return _build(["tests/dynamic_models.py", "yolo_onnx"], model_dir / "yolo.onnx")


# Height and width at different sizes, so a swapped pair cannot pass.
YOLO_SIZES = {"height": [12, 1, 17], "width": [20, 3, 31]}


@pytest.mark.parametrize("target", TARGETS)
def test_yolo_style_head_decodes_boxes_at_every_feature_map_size(yolo_onnx, target, tmp_path):
    """The grid comes from the map's computed height and width (Shape, Range,
    a computed Expand), as a YOLOv8 export has it."""
    out = tmp_path / "out"
    report = convert_then_check(str(yolo_onnx), str(out), source="onnx", target=target)
    assert report.inputs[0]["dims"] == ["batch", None, "height", "width"]
    result = check(str(yolo_onnx), str(out), source="onnx", target=target, dim_sizes=YOLO_SIZES,
                   serving=True)
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [2, 8, 12, 20], [1, 8, 1, 3], [3, 8, 17, 31]]
    assert result["passed"], result["outputs"]


def test_yolo_style_head_from_torch_keeps_named_dims(tmp_path):
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:yolo_head"
    out = tmp_path / "out"
    convert_then_check(model, str(out), source="torch", target="onnx",
                       input_shapes={"features": ["n", 8, "height=12", "width=20"]})
    written = onnx.load(str(out / "model.onnx"))
    assert [d.dim_param for d in written.graph.input[0].type.tensor_type.shape.dim] == [
        "n", "", "height", "width"]
    result = check(model, str(out), source="torch", target="onnx", dim_sizes=YOLO_SIZES)
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [7, 8, 12, 20], [1, 8, 1, 3], [11, 8, 17, 31]]
    assert result["passed"], result["outputs"]


def test_first_and_last_position_of_a_dynamic_sequence(tmp_path):
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:end_tokens"
    out = tmp_path / "out"
    convert_then_check(model, str(out), source="torch", target="onnx",
                       input_shapes={"x": [2, "seq", 4]})
    result = check(model, str(out), source="torch", target="onnx")
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [2, 7, 4], [2, 1, 4], [2, 11, 4]]
    assert result["passed"], result["outputs"]


@pytest.mark.parametrize("target", ["paddle", "torch"])
def test_a_size_divided_at_run_time_stays_an_integer(target, tmp_path):
    """len // 2 is an int64 size in the converted model (/ would make a float;
    paddle's 0-d int // a Python int is 1-d), also in paddle's inference/."""
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:frame_pairs"
    out = tmp_path / "out"
    convert_then_check(model, str(out), source="torch", target=target,
                       input_shapes={"x": [2, "n=8"]})
    result = check(model, str(out), source="torch", target=target, dim_sizes={"n": [8, 2, 14]},
                   serving=True)
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [[2, 8], [2, 2], [2, 14]]
    assert result["passed"], result["outputs"]


def test_a_size_computed_from_a_named_torch_dim_is_named_where_unmapped(tmp_path):
    """A size derived from a dynamic dim where x2 takes only a number (a resize
    by a fractional factor; F.pad's amounts now convert, test_run_time_sizes):
    the error names the op and what to do, and nothing is written."""
    from x2.errors import ConversionError
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:interpolate_by_a_fraction"
    with pytest.raises(ConversionError, match="whole scale factors.*--input-shape"):
        convert(model, str(tmp_path / "out"), source="torch", target="onnx",
                input_shapes={"x": [1, 3, "h=8", "w=8"]})
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("target", TARGETS)
def test_keras_fully_convolutional_net_takes_any_image_size(model_dir, target, tmp_path):
    """SAME padding on unknown sizes where the pads do not depend on the size
    (stride 1, a 1-wide kernel of any stride)."""
    model = _build(["tests/tf_models.py", "fully_convolutional"], model_dir / "fully_conv")
    out = tmp_path / "out"
    report = convert_then_check(str(model), str(out), source="tf", target=target)
    assert report.inputs[0]["shape"] == [None, None, None, 3]
    result = check(str(model), str(out), source="tf", target=target, serving=True)
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [2, 16, 16, 3], [1, 1, 1, 3], [3, 25, 25, 3]]
    assert result["passed"], result["outputs"]


@pytest.mark.parametrize("target", TARGETS)
def test_keras_token_model_takes_any_batch_and_length(model_dir, target, tmp_path):
    """MultiHeadAttention's einsums over an unknown batch and length: their
    regrouping reshapes read both sizes at run time."""
    model = _build(["tests/tf_models.py", "token_attention"], model_dir / "token_attention")
    out = tmp_path / "out"
    report = convert_then_check(str(model), str(out), source="tf", target=target)
    assert [i["shape"] for i in report.inputs] == [[None, None], [None, None]]
    result = check(str(model), str(out), source="tf", target=target, serving=True)
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [[2, 16], [1, 1], [3, 25]]
    assert result["passed"], result["outputs"]


def test_a_class_token_tiled_over_a_dynamic_batch(model_dir, tmp_path):
    """Tile by multiples computed from the batch (keras_hub's ViT) is a
    broadcast of the token's unit dim."""
    model = _build(["tests/tf_models.py", "class_token"], model_dir / "class_token")
    out = tmp_path / "out"
    convert_then_check(str(model), str(out), source="tf", target="onnx")
    result = check(str(model), str(out), source="tf", target="onnx")
    assert [s["input_shapes"][0] for s in result["shapes_checked"]] == [
        [2, 3, 4], [1, 3, 4], [3, 3, 4]]
    assert result["passed"], result["outputs"]


# -- PP-OCR: Paddle's flagship OCR models as paddle2onnx exports them (-1 and
# unnamed dims, Reshape targets computed from Shape, nearest upsampling of a
# dynamic image), with the trained weights that ship in the rapidocr wheel.
PPOCR = {"det": "ch_PP-OCRv4_det_infer", "cls": "ch_ppocr_mobile_v2.0_cls_infer",
         "rec": "ch_PP-OCRv4_rec_infer"}
# (height, width) per model, two sizes each where the model takes any: the
# detector any multiple of 32, the recognizer a 48-pixel line of any width,
# the classifier its fixed 48 x 192 crop (its batch is what is dynamic).
PPOCR_SIZES = {"det": [(96, 160), (128, 224)], "rec": [(48, 160), (48, 320)],
               "cls": [(48, 192)]}


@pytest.fixture(scope="module")
def ppocr(tmp_path_factory):
    wheels = sorted((ROOT / ".venv" / "models").glob("rapidocr_onnxruntime-*.whl"))
    assert wheels, "the PP-OCR models come with `make install` (.venv/models/rapidocr*.whl)"
    folder = tmp_path_factory.mktemp("ppocr")
    with zipfile.ZipFile(wheels[-1]) as wheel:
        for name in PPOCR.values():
            (folder / f"{name}.onnx").write_bytes(
                wheel.read(f"rapidocr_onnxruntime/models/{name}.onnx"))
    return folder


def text_image(height: int, width: int, batch: int) -> np.ndarray:
    """Dark text on a light background, normalised as PP-OCR expects."""
    from PIL import Image, ImageDraw
    images = []
    for item in range(batch):
        image = Image.new("RGB", (width, height), (235, 230, 220))
        draw = ImageDraw.Draw(image)
        for row, y in enumerate(range(4, height - 12, 24)):
            draw.text((6 + 5 * item, y), f"x2 OCR {row}{item} 2026", fill=(20, 20, 30))
        images.append(np.asarray(image, np.float32).transpose(2, 0, 1) / 255)
    return ((np.stack(images) - 0.5) / 0.5).astype(np.float32)


@pytest.mark.parametrize("kind", list(PPOCR))
@pytest.mark.parametrize("target", TARGETS)
def test_ppocr_models_convert_with_dynamic_dims_and_match_on_text(ppocr, kind, target,
                                                                  tmp_path):
    model = str(ppocr / f"{PPOCR[kind]}.onnx")
    out = tmp_path / "out"
    # The recognizer's height is dynamic in the file but must be 48: convert's
    # verify is told the sizes the model takes (the classifier's are fixed).
    sizes = PPOCR_SIZES[kind]
    dims = {"dim2": [h for h, _ in sizes], "dim3": [w for _, w in sizes]}
    report = convert(model, str(out), source="onnx", target=target,
                     emit_options={"verify_dims": dims} if kind != "cls" else {})
    shape = report.inputs[0]["shape"]
    assert shape[0] is None and shape[1] == 3, shape
    for batch, (height, width) in zip((1, 2), PPOCR_SIZES[kind] * 2):
        image = text_image(height, width, batch)
        result = check(model, str(out), source="onnx", target=target, inputs=[image],
                       serving=True)
        assert result["passed"], (height, width, result["outputs"])
        assert all(r["ref_scale"] > 0.1 for r in result["outputs"]), result["outputs"]


# An exported decoder's mask spans cached and new tokens (total = past + seq):
# convert's verify is told sizes that agree, as the check is.
CACHE_VERIFY = {"verify_dims": {"seq": [3, 1], "past": [5, 7], "total": [8, 8]}}


@pytest.fixture(scope="module", params=["gpt2_with_past_legacy", "gpt2_with_past_dynamo"])
def decoder_with_past(request, model_dir):
    return _build(["tests/dynamic_models.py", request.param], model_dir / f"{request.param}.onnx")


@pytest.mark.parametrize("target", TARGETS)
def test_decoder_exported_with_its_cache_runs_at_every_cached_length(decoder_with_past, target,
                                                                     tmp_path):
    """The form exported decoders generate with: new tokens, a mask over cached
    and new ones, and the cache of every layer in and out. Checked one token
    after 7 cached (a generation step), 3 after 5 and 4 after 2 (prompts)."""
    from dynamic_models import PAST_INPUTS, PRESENT_OUTPUTS
    out = tmp_path / "out"
    report = convert_then_check(str(decoder_with_past), str(out), source="onnx", target=target,
                                emit_options=CACHE_VERIFY)
    assert [i["name"] for i in report.inputs] == [
        "input_ids", "attention_mask", "position_ids", *PAST_INPUTS]
    assert [i["dims"] for i in report.inputs][3:] == [["batch", None, "past", None]] * 4
    sizes = {"seq": [3, 1, 4], "past": [5, 7, 2], "total": [8, 8, 6]}
    result = check(str(decoder_with_past), str(out), source="onnx", target=target,
                   dim_sizes=sizes, serving=True)
    assert [(s["dims"]["seq"], s["dims"]["past"]) for s in result["shapes_checked"]] == [
        (3, 5), (1, 7), (4, 2)]
    assert {r["name"] for r in result["outputs"]} == {"logits", *PRESENT_OUTPUTS}
    assert result["passed"], result["outputs"]


@pytest.mark.parametrize("target", TARGETS)
def test_decoder_exported_with_its_cache_generates_the_sources_tokens(decoder_with_past, target,
                                                                      tmp_path):
    """x2 check --generate: 8 greedy tokens from 3 left-padded prompts (3, 9
    and 17 tokens), the converted model's cache fed back at every step, against
    onnxruntime running the source the same way: equal tokens, and each step's
    logits within fp32's 1e-4 of the source's scale."""
    from x2.check.generation import check_generation
    out = tmp_path / "out"
    convert(str(decoder_with_past), str(out), source="onnx", target=target,
                     emit_options=CACHE_VERIFY)
    result = check_generation(str(decoder_with_past), str(out), source="onnx", target=target,
                              new_tokens=8, serving=True)
    runners = {"onnx": ["onnx:onnxruntime"], "torch": ["torch:python"],
               "paddle": ["paddle:python", "paddle:jit.load", "paddle:inference"]}[target]
    assert [r["runner"] for r in result["runners"]] == runners
    assert all(r["tokens_equal"] and r["steps_compared"] == 8 for r in result["runners"]), \
        result["runners"]
    assert result["passed"], result["runners"]
    tokens = np.array(result["source_tokens"])
    assert tokens.shape == (3, 8) and len({tuple(row) for row in tokens}) == 3
    if target != "onnx":  # model.py's own generate() decodes the same tokens
        assert _model_py_generate(target, out, 8) == result["source_tokens"]


@pytest.mark.parametrize("target", TARGETS)
def test_transformers_decoder_with_cache_from_torch_generates_the_sources_tokens(target,
                                                                                tmp_path):
    """x2 convert --with-cache: transformers' GPT-2 itself (its DynamicCache
    built from tensors and flattened back inside the step) becomes the
    exported-decoder interface, named as optimum names it; checked at three
    (new, cached) lengths, then 8 greedy tokens from left-padded prompts
    against transformers running the same step, and model.py's generate()."""
    from dynamic_models import PAST_INPUTS, PRESENT_OUTPUTS
    from x2.check.generation import check_generation
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:gpt2_lm"
    out = tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target=target,
                                options={"with_cache": True}, emit_options=CACHE_VERIFY)
    assert [i["name"] for i in report.inputs] == [
        "input_ids", "attention_mask", "position_ids", *PAST_INPUTS]
    assert [i["dims"] for i in report.inputs] == [
        ["batch", "seq"], ["batch", "total"], ["batch", "seq"],
        *[["batch", None, "past", None]] * 4]
    assert [o["name"] for o in report.outputs] == ["logits", *PRESENT_OUTPUTS]
    # Conv1D's `view(size_out)` and the heads' `view(batch, seq, heads, dim)`
    # restate their input's dims: nothing is reshaped to a computed size.
    assert "reshape_dynamic" not in report.ir_ops, report.ir_ops
    sizes = {"seq": [3, 1, 4], "past": [5, 7, 2], "total": [8, 8, 6]}
    result = check(model, str(out), source="torch", target=target, dim_sizes=sizes,
                   serving=True)
    assert [(s["dims"]["seq"], s["dims"]["past"]) for s in result["shapes_checked"]] == [
        (3, 5), (1, 7), (4, 2)]
    assert result["passed"], result["outputs"]
    generated = check_generation(model, str(out), source="torch", target=target,
                                 new_tokens=8, serving=True)
    assert generated["passed"] and all(r["tokens_equal"] for r in generated["runners"]), \
        generated["runners"]
    assert generated["source_generate"]["tokens_equal"], generated["source_generate"]
    if target != "onnx":
        assert _model_py_generate(target, out, 8) == generated["source_tokens"]
        # transformers' Conv1D weights, [in, out], at the source's keys (torch:
        # model.py's Conv1D, Paddle: its Linear): the blocks are one class
        # called in a loop, each with its layer's cache
        assert report.target_details["source_names"] == {
            "source_keys": 29, "matched": 29, "not_in_the_graph": [], "renamed": {}}
        text = (out / "model.py").read_text()
        assert text.count("class GPT2Block(") == 1 and "self.h[" not in text
        assert re.search(r"^        for layer, \w+, \w+ in zip\(self\.h, ", text, re.M), text


def test_latent_attention_cache_of_keys_and_values_of_different_sizes(tmp_path):
    """--with-cache of DeepseekV3 (multi-head latent attention caches one head
    of compressed keys, 8 wide, and of rope keys, 4 wide, per layer: not the
    config's heads and head_dim): the interface takes the shapes the model
    itself caches; on Paddle (model.py, jit.load, Paddle Inference) at three
    (new, cached) lengths and 8 greedy tokens against transformers' generate
    (about 60 s on 2 cores; onnx and torch convert the same way)."""
    from x2.check.generation import check_generation
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:deepseek_v3_lm"
    out = tmp_path / "out"
    report = convert_then_check(model, str(out), source="torch", target="paddle",
                                options={"with_cache": True})
    assert [(i["name"], i["shape"]) for i in report.inputs[3:5]] == [
        ("past_key_values.0.key", [None, 1, None, 8]),
        ("past_key_values.0.value", [None, 1, None, 4])]
    result = check(model, str(out), source="torch", target="paddle", serving=True)
    assert [(s["dims"]["seq"], s["dims"]["past"]) for s in result["shapes_checked"]] == [
        (3, 5), (1, 7), (4, 2)]
    assert "paddle:inference" in {r["runner"] for r in result["outputs"]}
    assert result["passed"], result["outputs"]
    generated = check_generation(model, str(out), source="torch", target="paddle",
                                 new_tokens=8, serving=True)
    assert generated["passed"] and all(r["tokens_equal"] for r in generated["runners"]), \
        generated["runners"]


@pytest.mark.parametrize("name,target", [("t5_lm", "paddle"), ("t5_lm", "onnx"),
                                         ("t5_lm", "torch"), ("bart_lm", "paddle")])
def test_transformers_encoder_decoder_with_cache_generates_the_sources_tokens(name, target,
                                                                             tmp_path):
    """x2 convert --with-cache --part encoder|decoder: T5 and BART as the two
    models generation runs (the encoder with the first step, then each later
    step with both caches), named as optimum names them; the decoder checked
    at three (new, cached, source) lengths, then 8 greedy tokens from
    left-padded prompts equal to the source's (and to transformers' own
    generate()), every step's logits within fp32's 1e-4."""
    from x2.check.generation import check_generation
    model = f"{ROOT / 'tools' / 'zoo_models' / 'hf.py'}:{name}"
    encoder, decoder = tmp_path / "encoder", tmp_path / "decoder"
    first = convert_then_check(model, str(encoder), source="torch", target=target,
                               options={"with_cache": True, "cache_part": "encoder"})
    step = convert_then_check(model, str(decoder), source="torch", target=target,
                              options={"with_cache": True, "cache_part": "decoder"})
    assert [i["name"] for i in first.inputs] == ["input_ids", "attention_mask"]
    assert [o["name"] for o in first.outputs][:5] == [
        "logits", "present.0.decoder.key", "present.0.decoder.value",
        "present.0.encoder.key", "present.0.encoder.value"]
    assert [i["name"] for i in step.inputs][:4] == [
        "input_ids", "encoder_attention_mask", "past_key_values.0.decoder.key",
        "past_key_values.0.decoder.value"]
    dims = {i["name"]: i["dims"] for i in step.inputs}
    assert dims["past_key_values.1.decoder.value"][::2] == ["batch", "past"]
    assert dims["past_key_values.1.encoder.key"][::2] == ["batch", "source"]
    assert [o["name"] for o in step.outputs] == [
        "logits", *[f"present.{n}.decoder.{kv}" for n in (0, 1) for kv in ("key", "value")]]
    sizes = {"seq": [3, 1, 4], "past": [5, 7, 2], "source": [7, 3, 9]}
    result = check(model, str(decoder), source="torch", target=target, dim_sizes=sizes,
                   serving=True)
    assert result["passed"], result["outputs"]
    generated = check_generation(model, str(decoder), source="torch", target=target,
                                 new_tokens=8, serving=True, encoder=str(encoder))
    assert generated["passed"], generated["runners"]
    assert all(r["tokens_equal"] and r["steps_compared"] == 8 for r in generated["runners"])
    assert generated["source_generate"]["tokens_equal"], generated["source_generate"]
    tokens = np.array(generated["source_tokens"])
    assert tokens.shape == (3, 8) and len({tuple(row) for row in tokens}) == 3
    assert all(len(set(row)) > 1 for row in tokens.tolist()), tokens   # not one token repeated


def test_with_cache_takes_a_causal_lm_and_sets_the_inputs_itself(tmp_path):
    model = f"{ROOT / 'tests' / 'dynamic_models.py'}:gpt2_lm"
    with pytest.raises(X2Error, match="--with-cache sets the inputs itself"):
        convert(model, str(tmp_path / "a"), source="torch", target="onnx",
                input_shapes={"input_ids": [2, 3]}, options={"with_cache": True})
    with pytest.raises(X2Error, match="is not an encoder-decoder; a causal LM converts as one"):
        convert(model, str(tmp_path / "c"), source="torch", target="onnx",
                options={"with_cache": True, "cache_part": "encoder"})
    with pytest.raises(X2Error, match="--part decoder chooses a part .* add --with-cache"):
        convert(model, str(tmp_path / "d"), source="torch", target="onnx",
                options={"cache_part": "decoder"})
    with pytest.raises(X2Error, match="give --part encoder .* or --part decoder"):
        convert(f"{ROOT / 'tools' / 'zoo_models' / 'hf.py'}:bart_lm", str(tmp_path / "e"),
                source="torch", target="onnx", options={"with_cache": True})
    with pytest.raises(X2Error, match="--with-cache takes a transformers causal LM"):
        convert(f"{ROOT / 'tests' / 'dynamic_models.py'}:yolo_head", str(tmp_path / "b"),
                source="torch", target="onnx", options={"with_cache": True})


_GENERATE = """
import json
import sys
from pathlib import Path
from x2.check.generate import prompts
from x2.emitters.codegen import import_generated
import {fw}
model = import_generated(Path(sys.argv[1]) / "model.py").load_model()
ids, mask = ({fw}.{tensor}(a) for a in prompts(int(sys.argv[2]), 0))
print(json.dumps(model.generate(ids, mask, int(sys.argv[3])).numpy().tolist()))
"""


def _model_py_generate(target: str, out, new_tokens: int) -> list:
    """Tokens from the generated model.py's generate(), in a process of its
    own (one framework per process), on check --generate's prompts."""
    code = _GENERATE.format(fw=target, tensor="from_numpy" if target == "torch" else "to_tensor")
    proc = subprocess.run([sys.executable, "-c", code, str(out), "100", str(new_tokens)],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_generation_needs_a_decoder_with_its_cache_at_the_interface(gpt2_onnx, tmp_path):
    from x2.check.generation import check_generation
    from x2.errors import SelectionError
    out = tmp_path / "out"
    convert(str(gpt2_onnx), str(out), source="onnx", target="onnx")
    with pytest.raises(SelectionError, match="past_key_values.N.key/value"):
        check_generation(str(gpt2_onnx), str(out), source="onnx", target="onnx", new_tokens=4)


def test_paddle_inference_runs_a_sliding_window_cache_crop(tmp_path):
    """Mistral's sliding-window cache keeps the last 7 cached steps: Slice
    from -7 of a cache that may hold fewer (after the one-piece Concat the
    exporter writes). Paddle Inference's oneDNN slice throws on a start before
    the first element (std::exception); x2 clamps it at run time, and the
    saved model runs there at 5, 9 and 1 cached steps."""
    from onnx import TensorProto, helper
    cache = helper.make_tensor_value_info("cache", TensorProto.FLOAT, ["batch", 2, "past", 4])
    kept = helper.make_tensor_value_info("kept", TensorProto.FLOAT, ["batch", 2, None, 4])
    bounds = [helper.make_tensor(n, TensorProto.INT64, [1], [v])
              for n, v in (("starts", -7), ("ends", 2 ** 62), ("axes", 2))]
    graph = helper.make_graph(
        [helper.make_node("Concat", ["cache"], ["joined"], axis=2),
         helper.make_node("Slice", ["joined", "starts", "ends", "axes"], ["kept"])],
        "crop", [cache], [kept], bounds)
    model = tmp_path / "crop.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    out = tmp_path / "out"
    convert_then_check(str(model), str(out), source="onnx", target="paddle")
    result = check(str(model), str(out), source="onnx", target="paddle",
                   dim_sizes={"past": [5, 9, 1]}, serving=True)
    assert {(r["runner"], r["batch"]) for r in result["outputs"]} >= {
        ("paddle:inference", b) for b in range(3)}
    assert [s["input_shapes"][0][2] for s in result["shapes_checked"]] == [5, 9, 1]
    assert result["passed"], result["outputs"]
