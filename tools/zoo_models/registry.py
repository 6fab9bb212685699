"""The zoo's entries: real architectures with random weights, each with how
to build its source model and how to convert it. Pure data: importing this
module imports no framework (the builders import theirs in their own
processes)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# Siblings: tools/zoo.py puts this folder on sys.path.
import cache_models
import hf
import hf_folder_models
import keras_hub_models
import keras_models
import onnx_models
import packaged_models

HERE = Path(__file__).resolve().parent
TARGETS = ("paddle", "onnx", "torch")
# fp32 parity: the rtol for large nets, tighter for small ones.
RTOL_LARGE, RTOL_SMALL = 1e-4, 1e-5


@dataclass(frozen=True)
class Entry:
    name: str
    family: str
    source: str                      # x2 --from
    builder: str                     # "hf" (a module spec, nothing to build), "keras",
                                     # "keras_hub", "onnx", "hf_folder" (save_pretrained)
    convert_args: dict = field(default_factory=dict)   # x2.convert.convert keyword arguments
    rtol: float = RTOL_LARGE
    # the arguments of `make zoo` --dynamic: the dims the source leaves dynamic kept so
    dynamic_args: dict = field(default_factory=dict)
    check_sizes: dict = field(default_factory=dict)   # x2 check --dim, --dynamic only
    # x2 check --generate: tokens decoded greedily (a decoder with its cache,
    # dynamic in every mode: check_sizes apply always)
    generate: int = 0
    # checked on the inputs packaged_models.inputs(name) gives (what the
    # model sees in use) instead of x2 check's drawn ones
    real_inputs: bool = False
    # an encoder-decoder with its cache: convert_args make the decoder, these
    # the encoder (converted next to it, checked at its own check sizes)
    encoder_args: dict = field(default_factory=dict)
    encoder_check_sizes: dict = field(default_factory=dict)

    def model_path(self, models_dir: Path) -> str:
        """What x2 --model names: a module spec, a SavedModel folder or an .onnx file."""
        if self.builder == "hf":
            return f"{HERE / 'hf.py'}:{self.name.removeprefix('with_cache_')}"
        if self.builder in ("keras", "keras_hub", "hf_folder"):
            return str(models_dir / self.name)
        if self.builder == "packaged":
            return str(models_dir / packaged_models.file_name(self.name))
        return str(models_dir / f"{self.name}.onnx")

    def build_command(self, out: Path, dynamic: bool = False) -> list[str] | None:
        script = {"keras": "keras_models.py", "keras_hub": "keras_hub_models.py",
                  "onnx": "onnx_models.py", "cache": "cache_models.py",
                  "packaged": "packaged_models.py",
                  "hf_folder": "hf_folder_models.py"}.get(self.builder)
        if script is None:
            return None
        # Exports fix their dims unless told which to leave dynamic.
        # and Keras applications their image size (built over (None, None, 3)).
        extra = ["--dynamic"] if dynamic and self.family in ("onnx-exported", "keras-app") \
            else []
        return [str(HERE / script), self.name, str(out), *extra]


HF_FAMILY = {"text": "hf-text", "seq2seq": "hf-seq2seq", "image": "hf-vision",
             "audio": "hf-speech", "mel": "hf-speech"}
DECODERS = {"gpt2", "llama", "mistral", "qwen2", "gpt_neox", "opt", "phi", "mixtral"}
# Decoders also converted from torch with their cache (x2 convert --with-cache).
WITH_CACHE = sorted(DECODERS)


def _hf_entry(name: str) -> Entry:
    inputs = hf.inputs_of(name)
    kind = hf.MODELS[name][3]
    family = "hf-decoder" if name in DECODERS else HF_FAMILY[kind]
    common = dict(inputs=[arg for arg, _, _ in inputs],
                  options={"input_dtypes": {arg: dtype for arg, _, dtype in inputs}})
    dims = {arg: hf.dynamic_dims(arg, shape) for arg, shape, _ in inputs}
    named = {d.split("=")[0] for shape in dims.values() for d in shape if isinstance(d, str)}
    return Entry(name, family, "torch", "hf",
                 dict(common, input_shapes={arg: shape for arg, shape, _ in inputs}),
                 dynamic_args=dict(common, input_shapes=dims),
                 check_sizes={n: s for n, s in hf.CHECK_SIZES.items() if n in named})


# Models whose own fp32 logits lie farther from their float64 logits than
# RTOL_LARGE allows for two fp32 implementations (measured by
# `python tools/zoo_models/keras_models.py --fp32-error NAME`, the largest over
# five seeded batches of 3: MobileNetV3Large 8.6e-5, EfficientNetV2B0 9.0e-4).
# Two correct fp32 implementations differ by up to about twice that; the rtol
# is about 4x the floor for MobileNetV3Large and 2.2x for EfficientNetV2B0
# (its floor was 2.2e-4 on one batch of 2, and the dynamic zoo's batch of 3
# found TF itself 9e-4 off float64 where x2's outputs were 8.9e-4 to 1.0e-3
# off TF: noise, not a conversion error).
RTOL_FP32_FLOOR = {"keras_mobilenet_v3_large": 4e-4, "keras_efficientnet_v2_b0": 2e-3}


def _keras_entry(name: str) -> Entry:
    family = "keras-app" if name in keras_models.APPLICATIONS else "keras-seq"
    rtol = RTOL_SMALL if family == "keras-seq" else RTOL_FP32_FLOOR.get(name, RTOL_LARGE)
    # Keras RNNs are While loops over a fixed sequence length: converted unrolled.
    args = {"options": {"unroll_loops": True}} if name in keras_models.RECURRENT else {}
    return Entry(name, family, "tf", "keras", args, rtol, dynamic_args=args,
                 check_sizes=keras_models.check_sizes(name))


def _keras_hub_entry(name: str) -> Entry:
    # Static shapes by default: the backbones slice position tables and tile
    # class tokens by sizes computed from the input's shape.
    return Entry(name, "keras-hub", "tf", "keras_hub",
                 {"input_shapes": keras_hub_models.input_shapes(name)}, dynamic_args={},
                 check_sizes=keras_hub_models.check_sizes(name))


def _onnx_entry(name: str) -> Entry:
    family = "onnx-light" if name.startswith("light_") else "onnx-exported"
    return Entry(name, family, "onnx", "onnx")


def _cache_entry(name: str) -> Entry:
    return Entry(name, "onnx-cache", "onnx", "cache", check_sizes=cache_models.CHECK_SIZES,
                 generate=GENERATE_TOKENS)


def _with_cache_entry(decoder: str) -> Entry:
    args = {"options": {"with_cache": True}}
    return Entry(f"with_cache_{decoder}", "torch-cache", "torch", "hf", args, dynamic_args=args,
                 check_sizes=cache_models.CHECK_SIZES, generate=GENERATE_TOKENS)


def _seq2seq_with_cache_entry(name: str) -> Entry:
    part = {"options": {"with_cache": True, "cache_part": "decoder"}}
    encoder = {"options": {"with_cache": True, "cache_part": "encoder"}}
    return Entry(f"with_cache_{name}", "torch-cache", "torch", "hf", part, dynamic_args=part,
                 check_sizes=cache_models.SEQ2SEQ_CHECK_SIZES, generate=GENERATE_TOKENS,
                 encoder_args=encoder,
                 encoder_check_sizes={"source": cache_models.SEQ2SEQ_CHECK_SIZES["source"]})


def _hf_folder_entry(name: str) -> Entry:
    """A save_pretrained folder converted with no flag but --model: the
    inputs, their dims and the cache come from the folder (x2/frontends/torch/hf_folder.py)."""
    return Entry(name, "hf-folder", "torch", "hf_folder")


def _packaged_entry(name: str) -> Entry:
    args = packaged_models.convert_args(name)
    return Entry(name, "packaged", packaged_models.source(name), "packaged", args,
                 dynamic_args=args, real_inputs=True)


# Tokens each decoder with its cache generates in x2 check --generate.
GENERATE_TOKENS = 32

ENTRIES: dict[str, Entry] = {e.name: e for e in (
    [_hf_entry(n) for n in hf.MODELS] +
    [_keras_entry(n) for n in keras_models.NAMES] +
    [_keras_hub_entry(n) for n in keras_hub_models.NAMES] +
    [_onnx_entry(n) for n in onnx_models.NAMES] +
    [_cache_entry(n) for n in cache_models.NAMES] +
    [_with_cache_entry(n) for n in WITH_CACHE] +
    [_seq2seq_with_cache_entry(n) for n in hf.GENERATORS] +
    [_packaged_entry(n) for n in packaged_models.NAMES] +
    [_hf_folder_entry(n) for n in hf_folder_models.NAMES])}
FAMILIES = sorted({e.family for e in ENTRIES.values()})
