"""Keras files (.keras, .h5) and Python-built models (--model-def for TF2
checkpoints): trace the model with its input signature, freeze the variables
(convert_variables_to_constants_v2) and describe the frozen graph.

Safety: a Keras file can carry Python code (Lambda layers store marshalled
bytecode). x2 reads the file's config itself first and refuses any Lambda
unless --trust-code is given, and loads with Keras safe_mode=True otherwise,
so nothing from the file runs by default."""
from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError, SelectionError
from .tf_savedmodel import _quiet_tf, describe_graph_def, value_name

TRUST_HINT = ("pass --trust-code if you trust this file (its Python code will run while "
              "loading and converting)")


def _keras_config(path: Path) -> dict | None:
    try:
        if path.suffix.lower() == ".keras":
            with zipfile.ZipFile(path) as zf:
                return json.loads(zf.read("config.json"))
        import h5py
        with h5py.File(path, "r") as fh:
            raw = fh.attrs.get("model_config")
            if raw is None:
                return None
            return json.loads(raw.decode() if isinstance(raw, bytes) else raw)
    except (OSError, KeyError, zipfile.BadZipFile, ValueError) as exc:
        raise ModelLoadError(f"{path}: not a readable Keras file: {exc}") from exc


def _code_layers(config) -> list[str]:
    """Names of layers whose config carries Python code (Lambda, python functions)."""
    found = []
    if isinstance(config, dict):
        if config.get("class_name") == "Lambda":
            inner = config.get("config", {})
            found.append(inner.get("name", "?") if isinstance(inner, dict) else "?")
        for value in config.values():
            found += _code_layers(value)
    elif isinstance(config, list):
        for value in config:
            found += _code_layers(value)
    return found


def load_keras_file(path: str, trust_code: bool):
    tf = _quiet_tf()
    path_obj = Path(path)
    code = _code_layers(_keras_config(path_obj))
    if code and not trust_code:
        raise ModelLoadError(
            f"{path}: the Keras model has Lambda layer(s) with Python code "
            f"({', '.join(sorted(set(code)))}); x2 does not run code from model files by "
            f"default: {TRUST_HINT}", details={"lambda_layers": sorted(set(code))})
    import keras
    if trust_code:
        keras.config.enable_unsafe_deserialization()
    try:
        return tf, keras.saving.load_model(path, compile=False, safe_mode=not trust_code)
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        hint = f"; {TRUST_HINT}" if "safe_mode" in str(exc) or "unsafe" in str(exc) else ""
        raise ModelLoadError(f"{path}: Keras could not load this file: {text}{hint}") from exc


def load_model_def(spec: str):
    """'package.module:factory' or 'path/file.py:factory' -> the factory callable."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise SelectionError(f"--model-def {spec!r}: expected package.module:factory or "
                             f"file.py:factory")
    try:
        if module_name.endswith(".py"):
            file = Path(module_name).resolve()
            if not file.is_file():
                raise SelectionError(f"--model-def: {module_name}: no such file")
            mod_spec = importlib.util.spec_from_file_location(f"x2_model_def_{file.stem}", file)
            module = importlib.util.module_from_spec(mod_spec)
            sys.path.insert(0, str(file.parent))
            mod_spec.loader.exec_module(module)
        else:
            sys.path.insert(0, str(Path.cwd()))
            module = importlib.import_module(module_name)
    except SelectionError:
        raise
    except Exception as exc:
        raise SelectionError(f"--model-def {spec!r}: importing {module_name} failed: "
                             f"{type(exc).__name__}: {exc}") from exc
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise SelectionError(f"--model-def {spec!r}: {module_name} has no callable {attr!r}")
    return factory


def build_object(fmt: str, path: str, options: dict):
    """The Keras model / tf.Module of a Keras file or a TF2 checkpoint, weights loaded."""
    if fmt == "keras":
        return load_keras_file(path, bool(options.get("trust_code")))
    tf = _quiet_tf()
    if not options.get("model_def"):
        raise ModelLoadError(f"{path}: a TF2 object checkpoint needs --model-def")
    obj = load_model_def(options["model_def"])()
    from .tf_checkpoint import restore_v2
    restore_v2(tf, obj, path)
    return tf, obj


def _is_keras(obj) -> bool:
    return any(c.__module__.startswith("keras") for c in type(obj).__mro__)


def _specs(tf, obj, input_shapes: dict | None):
    """TensorSpecs of the model's inputs, with --input-shape applied."""
    input_shapes = dict(input_shapes or {})
    specs = []
    if _is_keras(obj) and getattr(obj, "inputs", None):
        for i, t in enumerate(obj.inputs):
            name = getattr(t, "name", None) or f"input_{i}"
            specs.append(tf.TensorSpec(tuple(t.shape), t.dtype or "float32", name=name))
    else:
        call = getattr(obj, "__call__", None)
        signature = getattr(call, "input_signature", None)
        if signature:
            specs = [tf.TensorSpec(s.shape, s.dtype, name=s.name or f"input_{i}")
                     for i, s in enumerate(signature)]
        elif input_shapes:
            specs = [tf.TensorSpec(dims, tf.float32, name=name)
                     for name, dims in input_shapes.items()]
        else:
            raise SelectionError("the model has no input signature; give each input's shape "
                                 "with --input-shape NAME:D1,D2,...")
    out = []
    for i, spec in enumerate(specs):
        dims = input_shapes.pop(spec.name, None)
        if dims is None and len(specs) == 1 and len(input_shapes) == 1:
            dims = input_shapes.pop(next(iter(input_shapes)))
        if dims is not None:
            if not spec.shape.is_compatible_with(dims):
                raise SelectionError(f"--input-shape {spec.name}: {dims} contradicts the "
                                     f"model's shape {spec.shape}")
            spec = tf.TensorSpec(dims, spec.dtype, name=spec.name)
        out.append(spec)
    if input_shapes:
        raise SelectionError(f"--input-shape: {', '.join(input_shapes)} not an input; inputs "
                             f"are {', '.join(s.name for s in out)}")
    return out


def _call(obj, xs):
    if _is_keras(obj):
        return obj(xs[0] if len(xs) == 1 else list(xs), training=False)
    return obj(*xs)


def _output_names(obj, structured) -> list[str]:
    if isinstance(structured, dict):
        return sorted(structured)
    flat = structured if isinstance(structured, (list, tuple)) else [structured]
    names = list(getattr(obj, "output_names", None) or []) if _is_keras(obj) else []
    if len(names) != len(flat):
        names = [f"output_{i}" for i in range(len(flat))]
    return names


def _freeze(tf, obj, input_shapes):
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    specs = _specs(tf, obj, input_shapes)
    fn = tf.function(lambda *xs: _call(obj, xs)).get_concrete_function(*specs)
    names = _output_names(obj, fn.structured_outputs)
    return convert_variables_to_constants_v2(fn), specs, names


def read_model_object(fmt: str, path: str, options: dict, input_shapes=None):
    tf, obj = build_object(fmt, path, options)
    frozen, _specs_, names = _freeze(tf, obj, input_shapes)
    inputs = [value_name(t.name) for t in frozen.inputs if t.dtype != tf.resource]
    outputs = [value_name(t.name) for t in frozen.outputs]
    source = describe_graph_def(tf, frozen.graph.as_graph_def(), inputs, outputs)
    source.output_aliases = dict(zip(outputs, names))
    return source


def read_keras(path: str, options: dict, input_shapes=None):
    return read_model_object("keras", path, options, input_shapes)


def frozen_graph_def(fmt: str, path: str, signature, options: dict):
    """The frozen graph the reader converted (for running a pruned model in TF)."""
    if fmt == "savedmodel":
        from tensorflow.python.framework.convert_to_constants import (
            convert_variables_to_constants_v2)
        from .tf_savedmodel import load_signature
        _tf, _loaded, _sig, fn = load_signature(path, signature)
        return convert_variables_to_constants_v2(fn).graph.as_graph_def()
    tf, obj = build_object(fmt, path, options)
    return _freeze(tf, obj, None)[0].graph.as_graph_def()


def run_model(fmt: str, path: str, options: dict, arrays: list[np.ndarray]):
    """Call the Keras model / tf.Module eagerly; outputs flattened like the converted model."""
    tf, obj = build_object(fmt, path, options)
    result = _call(obj, [tf.constant(a) for a in arrays])
    if isinstance(result, dict):
        return [np.asarray(result[k]) for k in sorted(result)]
    flat = result if isinstance(result, (list, tuple)) else [result]
    return [np.asarray(r) for r in flat]

