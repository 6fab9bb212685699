"""Keras file reader (.keras, .h5): check the file's config for code
(tf_keras_config.py), load it with Keras safe_mode unless --trust-code, then
trace and freeze it like any Python-built model (tf_trace.py)."""
from __future__ import annotations

import re

from ..contracts import ReadRequest
from ..errors import ModelLoadError
from ..text import quoted
from . import tf_trace
from .tf_common import quiet_tf
from .tf_keras_config import TRUST_HINT, check, import_custom_modules, short_error


def load_keras_file(path: str, trust_code: bool):
    tf = quiet_tf()
    custom = check(path, trust_code)
    import keras
    custom_objects = import_custom_modules(path, custom) if trust_code and custom else {}
    if trust_code:
        keras.config.enable_unsafe_deserialization()
    try:
        return tf, keras.saving.load_model(path, compile=False, safe_mode=not trust_code,
                                           custom_objects=custom_objects or None)
    except Exception as exc:
        text = short_error(exc)
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


def _load(path: str, request: ReadRequest):
    return load_keras_file(path, bool(request.options.trust_code))


def read(path: str, request: ReadRequest):
    return tf_trace.read(*_load(path, request), request.input_shapes), {}


def run(path: str, request: ReadRequest, source: dict, names, arrays):
    return tf_trace.run(*_load(path, request), source, arrays)
