"""Keras files (.keras, .h5) and Python-built models (--model-def for TF2
checkpoints): trace the model with its input signature, freeze the variables
(convert_variables_to_constants_v2) and describe the frozen graph.

Safety: a Keras file can carry Python code (Lambda layers and lambda functions
store marshalled bytecode), name code outside it (custom classes and functions,
found by module and registered name) or load another SavedModel (TFSMLayer).
x2 reads the file's config itself first and refuses all of these, naming them,
unless --trust-code is given (which also imports the module a custom class
names, from the current directory or the installed packages), and loads with
Keras safe_mode=True otherwise, so nothing from the file runs by default."""
from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
import zipfile
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError, SelectionError
from ..text import quoted
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


def _objects(config):
    """(layer name or None, object dict) for every serialized Keras object (a
    dict with a "class_name") in a model config, in file order; the layer is the
    object's own name, else the name of the layer it is part of."""
    found = []

    def walk(item, layer):
        if isinstance(item, dict):
            if isinstance(item.get("class_name"), str):
                inner = item.get("config")
                if isinstance(inner, dict) and isinstance(inner.get("name"), str):
                    layer = inner["name"]
                found.append((layer, item))
            for key, value in item.items():
                if key != "compile_config":  # x2 loads with compile=False
                    walk(value, layer)
        elif isinstance(item, list):
            for value in item:
                walk(value, layer)

    try:
        walk(config, None)
    except RecursionError:  # a config nested beyond reason: Keras refuses it anyway
        pass
    return found


def _code_layers(config) -> list[str]:
    """Names of layers whose config carries Python code (Lambda, python functions)."""
    found = []
    for layer, obj in _objects(config):
        if obj["class_name"] == "Lambda":
            inner = obj.get("config")
            found.append(inner.get("name", "?") if isinstance(inner, dict) else "?")
        elif obj["class_name"] == "__lambda__":
            found.append(layer or "?")
    return found


_KERAS_PACKAGES = ("keras", "keras_hub", "keras_cv", "keras_nlp")
_FUNCTION_MODULES = ("activations", "constraints", "initializers", "losses", "metrics",
                     "regularizers")


def _is_keras_module(module) -> bool:
    return isinstance(module, str) and module.split(".", 1)[0] in _KERAS_PACKAGES


def _custom_objects(config) -> list[dict]:
    """The custom classes and functions a model config names: code that is not in
    the file and that Keras can only find once it is imported and registered.
    Found from the config alone; nothing is imported."""
    found, seen = [], set()
    keras = None
    for layer, obj in _objects(config):
        class_name, module = obj["class_name"], obj.get("module")
        registered = obj.get("registered_name")
        if class_name.startswith("__") and class_name.endswith("__"):
            continue  # Keras's own markers: tensors, numpy arrays, lambdas (see above)
        if class_name == "function":
            name = obj.get("config")
            if not isinstance(name, str):
                continue
            if module == "builtins" and ">" not in name:
                if keras is None:
                    import keras
                if any(hasattr(getattr(keras, m, None), name) for m in _FUNCTION_MODULES):
                    continue  # a Keras built-in function saved by name
            elif _is_keras_module(module):
                continue
            kind = "function"
            module = module if module != "builtins" else None
        elif module is None:
            # The legacy (.h5) format names no module: only a registered name
            # ("package>Name") marks a custom class there; Keras names the rest.
            if ">" not in class_name:
                continue
            name, kind = class_name, "class"
        elif _is_keras_module(module):
            continue
        else:
            name = registered if isinstance(registered, str) and registered else class_name
            kind = "class"
        key = (kind, name, module)
        if key not in seen:
            seen.add(key)
            found.append({"kind": kind, "name": name, "class_name": class_name,
                          "module": module if isinstance(module, str) else None,
                          "layer": layer})
    return found


def _describe(custom: list[dict]) -> str:
    parts = []
    for c in custom:
        where = f"module {quoted(c['module'])}" if c["module"] else "module not recorded"
        layer = f", layer {quoted(c['layer'])}" if c["layer"] and c["layer"] != c["name"] else ""
        parts.append(f"custom {c['kind']} {quoted(c['name'])} ({where}{layer})")
    return ", ".join(parts)


_IMPORTABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def _import_custom_modules(path: str, custom: list[dict]) -> dict:
    """--trust-code: import the modules the file names for its custom classes
    (from the current directory or the installed packages), so that their
    classes and functions register with Keras; returns custom_objects for
    classes that are not registered."""
    objects = {}
    modules = sorted({c["module"] for c in custom if c["module"]})
    if modules and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    for module_name in modules:
        users = [c for c in custom if c["module"] == module_name]
        if module_name == "__main__" or not _IMPORTABLE.fullmatch(module_name):
            raise ModelLoadError(
                f"{path}: {_describe(users)} cannot be loaded: it was defined in the script "
                f"that saved the model, not in an importable module; save the model from a "
                f"module, or register the class with "
                f"keras.saving.register_keras_serializable in one")
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise ModelLoadError(
                f"{path}: {_describe(users)}: importing module {quoted(module_name)} failed "
                f"({type(exc).__name__}: {_first_line(exc)}); it must be importable from the "
                f"current directory or the installed packages") from exc
        for c in users:
            obj = getattr(module, c["class_name"] if c["kind"] == "class" else
                          c["name"].rpartition(">")[2], None)
            if obj is not None:
                objects[c["name"]] = obj
    return objects


def _first_line(exc) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= 300 else line[:297] + "..."


def load_keras_file(path: str, trust_code: bool):
    tf = _quiet_tf()
    path_obj = Path(path)
    config = _keras_config(path_obj)
    code = _code_layers(config)
    if code and not trust_code:
        raise ModelLoadError(
            f"{path}: the Keras model has Python code (a Lambda layer or a lambda "
            f"function) in layer(s) {', '.join(quoted(c) for c in sorted(set(code)))}; x2 "
            f"does not run code from model files by default: {TRUST_HINT}",
            details={"lambda_layers": sorted(set(code))})
    tfsm = sorted({(obj.get("config") or {}).get("name", "?") if isinstance(
        obj.get("config"), dict) else "?" for _layer, obj in _objects(config)
        if obj["class_name"] == "TFSMLayer"})
    if tfsm and not trust_code:
        raise ModelLoadError(
            f"{path}: the Keras model has TFSMLayer(s) ({', '.join(quoted(t) for t in tfsm)}) "
            f"that load another SavedModel from outside the file, which can carry code; x2 "
            f"does not load it by default: {TRUST_HINT}", details={"tfsm_layers": tfsm})
    custom = _custom_objects(config)
    if custom and not trust_code:
        modules = sorted({c["module"] for c in custom if c["module"]})
        how = (f"pass --trust-code to import {', '.join(quoted(m) for m in modules)} (from "
               f"the current directory or the installed packages) and load it"
               if modules else "pass --trust-code to let Keras load it once registered")
        raise ModelLoadError(
            f"{path}: the Keras model uses {_describe(custom)}: Python code that is not in "
            f"the file, which Keras loads only once it is imported; x2 does not import code "
            f"a model file names by default: {how}",
            details={"custom_objects": [{k: c[k] for k in ("kind", "name", "module")}
                                        for c in custom]})
    import keras
    custom_objects = _import_custom_modules(path, custom) if trust_code and custom else {}
    if trust_code:
        keras.config.enable_unsafe_deserialization()
    try:
        return tf, keras.saving.load_model(path, compile=False, safe_mode=not trust_code,
                                           custom_objects=custom_objects or None)
    except Exception as exc:
        text = _first_line(exc)
        located = re.search(r"(?:Could not locate|Unknown) (class|function|layer)[: ]+'([^']+)'",
                            str(exc))
        if located:
            kind = "class" if located.group(1) == "layer" else located.group(1)
            raise ModelLoadError(
                f"{path}: Keras could not load custom {kind} {quoted(located.group(2))}: it is "
                f"not a Keras built-in and no imported module registers it (x2 imports the "
                f"module a .keras file names for a custom class only with --trust-code)",
                details={"custom_objects": [{"kind": kind, "name": located.group(2)}]}) from exc
        text = text.split(" Full object config:")[0]
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

