"""Which TensorFlow model format a --model path is, and the reader/runner for
each. Runs in a worker process (imports TensorFlow, never paddle).

Detection (first match wins):
  directory with saved_model.pb[txt]   SavedModel; TF1-style (Session
                                       builder, no object graph) or --tags
                                       given -> loaded in a v1 Session
  directory with a `checkpoint` file   the latest checkpoint in it (below)
  *.keras, *.h5, *.hdf5                Keras file (safe_mode unless --trust-code)
  *.meta, or PREFIX with PREFIX.meta   TF1 checkpoint with its meta graph
  PREFIX with PREFIX.index (no .meta)  TF2 object checkpoint: needs --model-def
  other *.pb / *.pbtxt file            frozen GraphDef
"""
from __future__ import annotations

from pathlib import Path

from ..errors import ModelLoadError

FORMATS = ("savedmodel", "savedmodel_v1", "keras", "checkpoint_v1", "checkpoint_v2", "graphdef")


def _is_tf1_savedmodel(path: Path) -> bool:
    """A SavedModel without an object graph (written by a TF1 builder)."""
    if not (path / "saved_model.pb").exists():
        return False
    from .tf_direct import parse_saved_model
    proto = parse_saved_model(path)
    return all(len(mg.object_graph_def.nodes) == 0 for mg in proto.meta_graphs)


def _latest_checkpoint(directory: Path) -> str | None:
    import tensorflow as tf
    return tf.train.latest_checkpoint(str(directory))


def detect(model: str, options: dict) -> tuple[str, str]:
    """Return (format, resolved path). Errors name what is missing."""
    path = Path(model)
    if path.is_dir():
        if (path / "saved_model.pb").exists() or (path / "saved_model.pbtxt").exists():
            if options.get("tags") or _is_tf1_savedmodel(path):
                return "savedmodel_v1", str(path)
            return "savedmodel", str(path)
        if (path / "checkpoint").exists():
            latest = _latest_checkpoint(path)
            if latest:
                return detect(latest, options)
        return "savedmodel", str(path)  # the SavedModel checks give the precise error
    suffix = path.suffix.lower()
    if suffix in (".keras", ".h5", ".hdf5"):
        if not path.is_file():
            raise ModelLoadError(f"{model}: no such file")
        return "keras", str(path)
    if suffix == ".meta":
        if not path.is_file():
            raise ModelLoadError(f"{model}: no such file")
        return "checkpoint_v1", str(path)
    prefix = str(path)
    for cut in (".index", ".data-00000-of-00001"):
        if prefix.endswith(cut):
            prefix = prefix[: -len(cut)]
    if Path(prefix + ".index").exists():
        if Path(prefix + ".meta").exists():
            return "checkpoint_v1", prefix + ".meta"
        if options.get("model_def"):
            return "checkpoint_v2", prefix
        from .tf_checkpoint import is_object_checkpoint
        if is_object_checkpoint(prefix):
            raise ModelLoadError(
                f"{model}: a TF2 object checkpoint holds variables but no graph; pass "
                f"--model-def package.module:factory (or file.py:factory) returning the "
                f"Keras model or tf.Module it was saved from")
        raise ModelLoadError(
            f"{model}: a TF1 checkpoint without its meta graph ({Path(prefix).name}.meta is "
            f"missing); save it with tf.compat.v1.train.Saver (write_meta_graph=True), or "
            f"convert a frozen graph or SavedModel instead")
    if path.is_file() and suffix in (".pb", ".pbtxt"):
        return "graphdef", str(path)
    if not path.exists():
        raise ModelLoadError(f"{model}: no such file or directory")
    raise ModelLoadError(
        f"{model}: not a TensorFlow model x2 recognises; expected a SavedModel directory, a "
        f"frozen graph (.pb), a checkpoint (.meta or prefix), or a Keras file (.keras/.h5)")


def read(model: str, signature, input_shapes, options: dict, outputs=None):
    """(SourceGraph, source record for report.json) for any TF format."""
    fmt, path = detect(model, options)
    record = {"format": fmt}
    if fmt == "savedmodel":
        from .tf_savedmodel import read_savedmodel
        source, record["reader"] = read_savedmodel(path, signature, input_shapes,
                                                   options.get("tf_reader", "auto"))
        return source, record
    if fmt == "savedmodel_v1":
        from .tf_graphdef import read_savedmodel_v1
        source, record["signature"], record["tags"] = read_savedmodel_v1(
            path, signature, options.get("tags"), input_shapes)
        return source, record
    if fmt == "graphdef":
        from .tf_graphdef import read_graphdef
        return read_graphdef(path, input_shapes), record
    if fmt == "checkpoint_v1":
        from .tf_checkpoint import read_checkpoint_v1
        return read_checkpoint_v1(path, input_shapes, outputs), record
    if fmt == "checkpoint_v2":
        from .tf_checkpoint import read_checkpoint_v2
        return read_checkpoint_v2(path, options, input_shapes), record
    from .tf_keras import read_keras
    return read_keras(path, options, input_shapes), record


def run(model: str, signature, names, arrays, options: dict, source: dict):
    """Run the source model on numpy inputs; outputs in the converted model's order.
    `source` is report.json's "source": feeds/fetches name the (possibly pruned)
    tensors the converted model starts and ends at."""
    fmt, path = detect(model, options)
    feeds, fetches = source.get("feeds"), source.get("fetches")
    if fmt == "savedmodel" and not source.get("pruned"):
        from .tf_savedmodel import run_savedmodel
        return run_savedmodel(path, signature, dict(zip(names, arrays)))
    if fmt in ("keras", "checkpoint_v2") and not source.get("pruned"):
        from .tf_keras import run_model
        return run_model(fmt, path, options, arrays)
    from .tf_graphdef import run_session
    return run_session(fmt, path, signature, options, source, dict(zip(feeds, arrays)),
                       fetches)
