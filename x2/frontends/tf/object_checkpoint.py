"""TF2 object checkpoint reader (tf.train.Checkpoint): variables only, no
graph. The user's --model-def factory rebuilds the Keras model / tf.Module,
the checkpoint is restored into it, and it is traced and frozen like a Keras
file (trace.py)."""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from ...contracts import ReadRequest
from ...errors import ModelLoadError, SelectionError
from . import trace
from .common import quiet_tf


def is_object_checkpoint(prefix: str) -> bool:
    tf = quiet_tf()
    try:
        return any(name == "_CHECKPOINTABLE_OBJECT_GRAPH"
                   for name, _ in tf.train.list_variables(prefix))
    except Exception:
        return False


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


def _restore(tf, obj, prefix: str) -> None:
    """Restore a tf.train.Checkpoint into `obj`, under the key it was saved with."""
    names = [n for n, _ in tf.train.list_variables(prefix) if n != "_CHECKPOINTABLE_OBJECT_GRAPH"]
    keys = {n.split("/")[0] for n in names}
    if "model" in keys:
        ckpt = tf.train.Checkpoint(model=obj)
    elif len(keys) == 1 and not next(iter(keys)).startswith(("layer", "_")):
        ckpt = tf.train.Checkpoint(**{next(iter(keys)): obj})
    else:
        ckpt = tf.train.Checkpoint(obj)
    status = ckpt.restore(prefix)
    try:
        status.assert_existing_objects_matched()
    except AssertionError as exc:
        if "save_counter" in str(exc) and "1 Python objects" in str(exc):
            return  # written with Checkpoint.write (no counter): nothing of the model missed
        raise ModelLoadError(f"{prefix}: the checkpoint does not match the model --model-def "
                             f"builds: {str(exc).splitlines()[0]}") from exc
    status.expect_partial()


def _load(prefix: str, request: ReadRequest):
    tf = quiet_tf()
    if not request.options.model_def:
        raise ModelLoadError(f"{prefix}: a TF2 object checkpoint needs --model-def")
    obj = load_model_def(request.options.model_def)()
    _restore(tf, obj, prefix)
    return tf, obj


def read(prefix: str, request: ReadRequest):
    return trace.read(*_load(prefix, request), request.input_shapes), {}


def runner(prefix: str, request: ReadRequest, source: dict, names):
    return trace.runner(*_load(prefix, request), source)
