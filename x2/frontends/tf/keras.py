"""Keras file reader (.keras, .h5): check the file's config for code
(keras_config.py), load it with Keras safe_mode unless --trust-code, then
trace and freeze it like any Python-built model (trace.py)."""
from __future__ import annotations

import re
import shutil

from ...contracts import ReadRequest
from ...errors import ConversionError, ModelLoadError
from ...text import quoted
from . import trace
from .common import quiet_tf
from .loops import LIST_OPS, WHILE_OPS
from .keras_config import TRUST_HINT, check, import_custom_modules, short_error


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


# What a traced loop leaves in the frozen graph (its loop ops are lowered to v1
# control flow, which the TensorFlow reader refuses at its TensorList ops).
LOOP_OPS = WHILE_OPS | LIST_OPS | {"Enter", "Exit", "LoopCond", "NextIteration"}


def _load(path: str, request: ReadRequest):
    return load_keras_file(path, bool(request.options.trust_code))


def read(path: str, request: ReadRequest):
    tf, model = _load(path, request)
    training = bool(request.options.keep_trainable)
    try:
        return trace.read(tf, model, request.input_shapes, keep_dropout=training), \
            _dropout_record(model) if training else {}
    except ConversionError as exc:
        loop = (exc.details or {}).get("op") in LOOP_OPS
        if not loop or not hasattr(model, "export") or request.inputs or request.outputs or \
                request.input_shapes:
            raise
    return _read_exported(model, request)


def _dropout_record(model) -> dict:
    """--for training: the dropout-like layers that stay identities (report.json
    source.dropout_left_out; trace.dropout_layers says why)."""
    other = trace.dropout_layers(model)[1]
    return {"dropout_left_out": [{"layer": layer.name, "class": type(layer).__name__}
                                 for layer in other]} if other else {}


def _read_exported(model, request: ReadRequest):
    """A model with loops (Keras recurrent layers): exported to a SavedModel in
    scratch space and read by the direct reader, which converts each layer as
    one (recurrent.py) or unrolls loops; the TensorFlow reader can do neither.
    `x2 check` still runs the Keras model itself (trace.runner), so only the
    unpruned model takes this way."""
    from ...process.scratch import make_dir
    from .direct import read_savedmodel_direct
    folder = make_dir("keras-export-")
    try:
        model.export(str(folder / "saved_model"), verbose=False)
        source = read_savedmodel_direct(str(folder / "saved_model"), None,
                                        unroll_loops=request.options.unroll_loops)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    reader = {"name": "direct", "via": "keras export"}
    if source.unrolled_loops:
        reader["unrolled_loops"] = source.unrolled_loops
    if source.recurrent_layers:
        reader["recurrent_layers"] = source.recurrent_layers
    return source, {"reader": reader}


def runner(path: str, request: ReadRequest, source: dict, names):
    return trace.runner(*_load(path, request), source)
