"""A Hugging Face model folder (what `save_pretrained` writes) as a torch
model: `config.json` beside `model.safetensors`, or sharded
`model-0000N-of-0000M.safetensors` with `model.safetensors.index.json`;
also one `.safetensors` file with its `config.json` beside it.

The class is `config.architectures[0]` looked up in `transformers` itself:
nothing from the folder runs. A config that asks for the model's own code
(`auto_map`, written by trust_remote_code models) is refused, and so are
pickled `pytorch_model.bin` weights unless --trust-pickle (then read by
torch.load with weights_only=True, as transformers reads them). The
weights are checked before transformers reads them (every shard the index
names is there, inside the folder, with a readable header), and a
checkpoint that leaves a weight of the model unset is refused rather than
converted with random values.

The inputs default from the model's task (`default_inputs`).
Runs inside the torch worker (imports torch and transformers)."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

from ...errors import ModelLoadError, SelectionError
from ...text import quoted

CONFIG = "config.json"
SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
PICKLE = "pytorch_model.bin"
PICKLE_INDEX = "pytorch_model.bin.index.json"
# A vision config without an image size (ResNet, ConvNeXt): the size they are trained at.
DEFAULT_IMAGE_SIZE = 224


def is_hf_model(spec: str) -> bool:
    """Whether --model names a folder or a .safetensors file (a Hugging Face model)."""
    path = Path(spec)
    return path.is_dir() or path.suffix == ".safetensors"


def _folder_and_file(spec: str) -> tuple[Path, Path | None]:
    """(the folder holding config.json, the one weights file named, if any)."""
    path = Path(spec)
    if path.suffix == ".safetensors":
        if not path.is_file():
            raise ModelLoadError(f"{spec}: no such file")
        folder, file = path.parent, path
    else:
        folder, file = path, None
    if not (folder / CONFIG).is_file():
        what = f"the folder of {path.name}" if file else "the folder"
        raise ModelLoadError(
            f"{spec}: {what} has no {CONFIG}; x2 reads a Hugging Face model as the folder "
            f"save_pretrained writes ({CONFIG} and model.safetensors), or --model "
            f"file.py:factory, a .pt2 or a TorchScript file")
    return folder, file


def read_config(folder: Path) -> dict:
    """config.json as JSON, refused when it asks for the model's own code or
    names no architecture."""
    try:
        config = json.loads((folder / CONFIG).read_text())
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise ModelLoadError(f"{folder / CONFIG}: not readable JSON "
                             f"({type(exc).__name__}: {exc})") from exc
    if not isinstance(config, dict):
        raise ModelLoadError(f"{folder / CONFIG}: holds a {type(config).__name__}, not a "
                             f"model config")
    if config.get("auto_map"):
        raise ModelLoadError(
            f"{folder / CONFIG}: the model's classes come from Python files in the folder "
            f"(auto_map: trust_remote_code); x2 does not run code from a model folder. "
            f"Convert a model whose class transformers has, or write a factory "
            f"(--model file.py:factory) that builds this one")
    architectures = config.get("architectures")
    if not (isinstance(architectures, list) and architectures
            and isinstance(architectures[0], str)):
        raise ModelLoadError(f"{folder / CONFIG}: names no model class (\"architectures\"); "
                             f"save the model with save_pretrained, which writes it")
    return config


def model_class(folder: Path, config: dict):
    """The transformers class config.architectures[0] names."""
    import transformers
    name = config["architectures"][0]
    cls = getattr(transformers, name, None) if name.isidentifier() else None
    if not (isinstance(cls, type) and issubclass(cls, transformers.PreTrainedModel)):
        raise ModelLoadError(
            f"{folder / CONFIG}: architecture {quoted(name)} is not a model class of "
            f"transformers {transformers.__version__}; a newer transformers may have it, "
            f"or it is a model with its own code (which x2 does not run)")
    return cls


def _shard_names(folder: Path, index: str) -> list[str]:
    """The weight files a sharded checkpoint's index names, each a file in the folder."""
    try:
        weight_map = json.loads((folder / index).read_text())["weight_map"]
        names = sorted(set(weight_map.values()))
    except (OSError, ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError,
            RecursionError) as exc:
        raise ModelLoadError(f"{folder / index}: not a weights index (JSON with a "
                             f"\"weight_map\"): {type(exc).__name__}: {exc}") from exc
    for name in names:
        path = folder / str(name)
        if not isinstance(name, str) or Path(name).name != name or \
                not path.resolve().is_relative_to(folder.resolve()):
            raise ModelLoadError(f"{folder / index}: names weight file {quoted(str(name))} "
                                 f"outside the folder")
        if not path.is_file():
            raise ModelLoadError(f"{folder}: shard {quoted(name)} named by {index} is "
                                 f"missing; copy the whole checkpoint")
    return names


def weight_files(folder: Path, file: Path | None, trust_pickle: bool) -> list[Path]:
    """The checkpoint's weight files; pickled ones only with trust_pickle."""
    if file is not None:
        names = [file.name]
    elif (folder / SAFETENSORS_INDEX).is_file():
        names = _shard_names(folder, SAFETENSORS_INDEX)
    elif (folder / SAFETENSORS).is_file():
        names = [SAFETENSORS]
    elif (folder / PICKLE_INDEX).is_file() or (folder / PICKLE).is_file():
        if not trust_pickle:
            raise ModelLoadError(
                f"{folder}: the weights are pickled ({PICKLE}), and unpickling can run code "
                f"from the file. If you trust it, pass --trust-pickle (x2 then reads it with "
                f"torch.load(weights_only=True)); better, save the model with "
                f"save_pretrained, which writes model.safetensors")
        if (folder / PICKLE_INDEX).is_file():
            return [folder / n for n in _shard_names(folder, PICKLE_INDEX)]
        return [folder / PICKLE]
    else:
        raise ModelLoadError(f"{folder}: has {CONFIG} but no weights ({SAFETENSORS}, or "
                             f"{SAFETENSORS_INDEX} with its shards)")
    for name in names:
        _check_safetensors(folder / name)
    return [folder / n for n in names]


def _check_safetensors(path: Path) -> None:
    """A readable safetensors header (it is memory-mapped, not read, here)."""
    from safetensors import safe_open
    try:
        with safe_open(str(path), framework="pt") as f:
            f.keys()
    except Exception as exc:  # safetensors raises its own SafetensorError, OSError, ...
        raise ModelLoadError(f"{path}: not a readable safetensors file (truncated or "
                             f"corrupt?): {type(exc).__name__}: {exc}") from exc


def load(spec: str, trust_pickle: bool = False):
    """The model of a Hugging Face folder (or .safetensors file), in eval mode,
    float32: a bf16 or fp16 checkpoint is upcast as it is read, and the
    conversion writes it back in its dtype (loading.load_model_and_dtype)."""
    import torch
    folder, file = _folder_and_file(spec)
    config_json = read_config(folder)
    cls = model_class(folder, config_json)
    files = weight_files(folder, file, trust_pickle)
    quiet = _quiet_transformers()
    try:
        config = cls.config_class.from_pretrained(str(folder), local_files_only=True)
        if file is not None:  # one file, whatever its name: its tensors are the state dict
            from safetensors.torch import load_file
            model, info = cls.from_pretrained(None, config=config, state_dict=load_file(file),
                                              dtype=torch.float32, output_loading_info=True)
        else:
            pickled = files[0].suffix == ".bin"
            model, info = _from_folder(cls, folder, config, pickled)
    except ModelLoadError:
        raise
    except Exception as exc:  # transformers and safetensors raise many kinds
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ModelLoadError(f"{spec}: transformers could not load {cls.__name__}: "
                             f"{type(exc).__name__}: {first}") from exc
    finally:
        quiet()
    unset = sorted(info.get("missing_keys") or []) + sorted(
        str(m[0]) if isinstance(m, tuple) else str(m) for m in info.get("mismatched_keys") or [])
    if unset:
        raise ModelLoadError(
            f"{spec}: the checkpoint does not hold every weight of {cls.__name__} (missing or "
            f"of another shape: {', '.join(unset[:5])}{', ...' if len(unset) > 5 else ''}); "
            f"x2 would convert random values for them")
    return model.eval()


def _from_folder(cls, folder: Path, config, pickled: bool):
    """from_pretrained on the folder; pickled weights weights-only first (the
    caller has --trust-pickle), then in full."""
    import torch
    kwargs = dict(config=config, local_files_only=True, dtype=torch.float32,
                  output_loading_info=True, use_safetensors=not pickled)
    try:
        return cls.from_pretrained(str(folder), weights_only=True, **kwargs)
    except Exception as exc:
        if not pickled or "weights_only" not in str(exc).lower():
            raise
    return cls.from_pretrained(str(folder), weights_only=False, **kwargs)


def _quiet_transformers():
    """Keep transformers' progress bars and warnings off the user's terminal
    while it loads; returns what puts them back."""
    from transformers.utils import logging
    level = logging.get_verbosity()
    bars = logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()

    def restore():
        logging.set_verbosity(level)
        if bars:
            logging.enable_progress_bar()
    return restore


# config.json's dtype, or a safetensors header's, of the half-precision
# checkpoints whose dtype a conversion keeps by default.
HALF_DTYPES = {"bfloat16": "bfloat16", "float16": "float16", "BF16": "bfloat16",
               "F16": "float16"}


def stored_dtype(spec: str, trust_pickle: bool = False) -> str | None:
    """"bfloat16" or "float16" when the checkpoint is stored in it: as its
    config.json says (`dtype`, or `torch_dtype` as older transformers wrote
    it), else as every floating tensor of its safetensors files is; None
    for a float32 (or mixed, or pickled) checkpoint."""
    folder, file = _folder_and_file(spec)
    said = _config_dtype(read_config(folder))
    if said is not None:
        return HALF_DTYPES.get(said)
    files = weight_files(folder, file, trust_pickle)
    if any(f.suffix != ".safetensors" for f in files):
        return None
    dtypes = {entry["dtype"] for f in files for key, entry in _safetensors_header(f).items()
              if key != "__metadata__" and entry["dtype"] in ("BF16", "F16", "F32", "F64")}
    return HALF_DTYPES.get(dtypes.pop()) if len(dtypes) == 1 else None


def _config_dtype(config: dict) -> str | None:
    """The dtype a config says its weights were saved in (`dtype`, or
    `torch_dtype` as older transformers wrote it), None where it says none."""
    said = config.get("dtype", config.get("torch_dtype"))
    return said if isinstance(said, str) and said != "auto" else None


def declared_half_dtype(spec: str) -> str | None:
    """"bfloat16" or "float16" where a Hugging Face folder's config.json says
    its weights are stored in it, else None; never raises (convert sizes its
    workers by it before the reader checks the folder) and imports nothing."""
    try:
        folder, _ = _folder_and_file(spec)
        return HALF_DTYPES.get(_config_dtype(json.loads((folder / CONFIG).read_text())) or "")
    except (ModelLoadError, OSError, ValueError, UnicodeDecodeError, RecursionError,
            AttributeError):
        return None


def _safetensors_header(path: Path) -> dict:
    """A safetensors file's JSON header (its tensors' dtypes and shapes), read
    without the tensors; weight_files has checked that it reads."""
    with open(path, "rb") as f:
        return json.loads(f.read(int.from_bytes(f.read(8), "little")))


def _task_inputs(model) -> dict[str, tuple[list, str]]:
    """forward() argument -> (dims, dtype) of the inputs the model's task takes:
    a causal LM input_ids and attention_mask over (batch, seq); an encoder
    also token_type_ids where forward takes them; an encoder-decoder also
    decoder_input_ids over (batch, target); vision pixel_values at the
    config's image size, the batch dynamic; speech input_values (16000
    samples) or input_features (the config's mel bins and frames)."""
    config = model.config
    arguments = set(inspect.signature(model.forward).parameters)
    text = ["batch", "seq"]
    inputs: dict[str, tuple[list, str]] = {}
    if "pixel_values" in arguments:
        size = getattr(config, "image_size", None) or DEFAULT_IMAGE_SIZE
        height, width = (size, size) if isinstance(size, int) else size
        inputs["pixel_values"] = (["batch", int(getattr(config, "num_channels", 3)),
                                   int(height), int(width)], "float32")
    elif "input_values" in arguments:
        inputs["input_values"] = (["batch", 16000], "float32")
    elif "input_features" in arguments:
        frames = 2 * int(getattr(config, "max_source_positions", 1500))
        inputs["input_features"] = (["batch", int(config.num_mel_bins), frames], "float32")
    elif "input_ids" in arguments:
        inputs["input_ids"] = (text, "int64")
        if "attention_mask" in arguments:
            inputs["attention_mask"] = (text, "int64")
        causal = type(model).can_generate() and not config.is_encoder_decoder
        if "token_type_ids" in arguments and not causal:
            inputs["token_type_ids"] = (text, "int64")
    if not inputs:
        raise SelectionError(
            f"{type(model).__name__}: x2 has no default inputs for this task (its forward "
            f"takes none of input_ids, pixel_values, input_values, input_features); name them "
            f"with --inputs and --input-shape")
    if config.is_encoder_decoder and "decoder_input_ids" in arguments:
        inputs["decoder_input_ids"] = (["batch", "target"], "int64")
    return inputs


def default_inputs(model, arguments: list[str] | None, input_shapes: dict | None,
                   input_dtypes: dict) -> tuple[dict, dict]:
    """(input shapes, input dtypes) for a folder's model: the task's defaults
    for the forward() arguments chosen (`arguments`: those --inputs named,
    else the task's), where --input-shape and --input-dtype do not say
    otherwise."""
    defaults = _task_inputs(model)
    chosen = [name for name in arguments or defaults if name in defaults]
    shapes = {name: defaults[name][0] for name in chosen}
    shapes.update(input_shapes or {})
    dtypes = {name: defaults[name][1] for name in chosen}
    dtypes.update(input_dtypes or {})
    return shapes, dtypes
