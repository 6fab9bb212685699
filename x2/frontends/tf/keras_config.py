"""Checks of a Keras file's config before Keras loads it: a Keras file can
carry Python code (Lambda layers and lambda functions store marshalled
bytecode), name code outside it (custom classes and functions, found by module
and registered name) or load another SavedModel (TFSMLayer). Found from the
file alone; nothing is imported unless --trust-code asks for the custom
classes' modules (_import_custom_modules)."""
from __future__ import annotations

import importlib
import json
import re
import sys
import zipfile
from pathlib import Path

from ...errors import ModelLoadError
from ...text import quoted

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


def import_custom_modules(path: str, custom: list[dict]) -> dict:
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
                f"({type(exc).__name__}: {short_error(exc)}); it must be importable from the "
                f"current directory or the installed packages") from exc
        for c in users:
            obj = getattr(module, c["class_name"] if c["kind"] == "class" else
                          c["name"].rpartition(">")[2], None)
            if obj is not None:
                objects[c["name"]] = obj
    return objects


def short_error(exc) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line if len(line) <= 300 else line[:297] + "..."


def check(path: str, trust_code: bool) -> list[dict]:
    """Refuse, by name, what would run or import code unless --trust-code;
    returns the custom classes and functions the file names."""
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
    return custom
