"""Which TensorFlow model format a --model path is, which reader reads it, and
the reader policy (--tf-reader auto|direct|tensorflow). Runs in a worker
process (may import TensorFlow, never paddle).

Detection (first match wins):
  directory with saved_model.pb[txt]   SavedModel; TF1-style (Session
                                       builder, no object graph) or --tags
                                       given -> loaded in a v1 Session
  directory with a `checkpoint` file   the latest checkpoint in it (below)
  *.keras, *.h5, *.hdf5                Keras file (safe_mode unless --trust-code)
  *.meta, or PREFIX with PREFIX.meta   TF1 checkpoint with its meta graph
  PREFIX with PREFIX.index (no .meta)  TF2 object checkpoint: needs --model-def
  other *.pb / *.pbtxt file            frozen GraphDef

Every reader module has read(path, ReadRequest) -> (SourceGraph, record
fields) and run(path, ReadRequest, source record, names, arrays) -> outputs.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...contracts import ReadOptions, ReadRequest
from ...errors import ConversionError, ModelLoadError, SelectionError
from . import checkpoint, graphdef, keras, object_checkpoint, savedmodel, savedmodel_v1
from .common import HANDLE_DTYPES, parse_saved_model, refuse_variant
from .direct import NeedsTensorFlow, read_savedmodel_direct

READERS = {"savedmodel": savedmodel, "savedmodel_v1": savedmodel_v1,
           "keras": keras, "checkpoint_v1": checkpoint,
           "checkpoint_v2": object_checkpoint, "graphdef": graphdef}
FORMATS = tuple(READERS)
TF_READERS = ("auto", "direct", "tensorflow")


@dataclass
class Found:
    format: str
    path: str
    saved_model: object = None  # saved_model.pb, parsed once for detection and reading


def _latest_checkpoint(directory: Path) -> str | None:
    from .common import quiet_tf
    return quiet_tf().train.latest_checkpoint(str(directory))


def detect(model: str, options: ReadOptions) -> Found:
    """The format and resolved path. Errors name what is missing."""
    path = Path(model)
    if path.is_dir():
        if (path / "saved_model.pb").exists() or (path / "saved_model.pbtxt").exists():
            if options.tags:
                return Found("savedmodel_v1", str(path))
            proto = parse_saved_model(path) if (path / "saved_model.pb").exists() else None
            if proto is not None and savedmodel_v1.is_tf1(proto):
                return Found("savedmodel_v1", str(path))
            return Found("savedmodel", str(path), proto)
        if (path / "checkpoint").exists():
            latest = _latest_checkpoint(path)
            if latest:
                return detect(latest, options)
        return Found("savedmodel", str(path))  # the SavedModel checks give the precise error
    suffix = path.suffix.lower()
    if suffix in (".keras", ".h5", ".hdf5"):
        if not path.is_file():
            raise ModelLoadError(f"{model}: no such file")
        return Found("keras", str(path))
    if suffix == ".meta":
        if not path.is_file():
            raise ModelLoadError(f"{model}: no such file")
        return Found("checkpoint_v1", str(path))
    prefix = str(path)
    for cut in (".index", ".data-00000-of-00001"):
        if prefix.endswith(cut):
            prefix = prefix[: -len(cut)]
    if Path(prefix + ".index").exists():
        if Path(prefix + ".meta").exists():
            return Found("checkpoint_v1", prefix + ".meta")
        if options.model_def:
            return Found("checkpoint_v2", prefix)
        if object_checkpoint.is_object_checkpoint(prefix):
            raise ModelLoadError(
                f"{model}: a TF2 object checkpoint holds variables but no graph; pass "
                f"--model-def package.module:factory (or file.py:factory) returning the "
                f"Keras model or tf.Module it was saved from")
        raise ModelLoadError(
            f"{model}: a TF1 checkpoint without its meta graph ({Path(prefix).name}.meta is "
            f"missing); save it with tf.compat.v1.train.Saver (write_meta_graph=True), or "
            f"convert a frozen graph or SavedModel instead")
    if path.is_file() and suffix in (".pb", ".pbtxt"):
        return Found("graphdef", str(path))
    if not path.exists():
        raise ModelLoadError(f"{model}: no such file or directory")
    raise ModelLoadError(
        f"{model}: not a TensorFlow model x2 recognises; expected a SavedModel directory, a "
        f"frozen graph (.pb), a checkpoint (.meta or prefix), or a Keras file (.keras/.h5)")


def _read_savedmodel(found: Found, request: ReadRequest):
    """"auto" reads without TensorFlow where direct.py can and falls back to
    TensorFlow otherwise; "direct" refuses the fallback; "tensorflow" always
    loads with TensorFlow."""
    choice = request.options.tf_reader
    if choice not in TF_READERS:
        raise SelectionError(f"--tf-reader {choice}: choose from {', '.join(TF_READERS)}")
    reason = "--tf-reader tensorflow"
    if choice != "tensorflow":
        try:
            if request.input_shapes:
                raise NeedsTensorFlow("--input-shape re-traces the signature")
            source = read_savedmodel_direct(found.path, request.signature, found.saved_model,
                                            unroll_loops=request.options.unroll_loops)
            reader = {"name": "direct"}
            if source.unrolled_loops:
                reader["unrolled_loops"] = source.unrolled_loops
            if source.recurrent_layers:
                reader["recurrent_layers"] = source.recurrent_layers
            return source, {"reader": reader}
        except NeedsTensorFlow as exc:
            if choice == "direct":
                raise ModelLoadError(f"{found.path}: the direct SavedModel reader cannot read "
                                     f"this model: {exc}. Use --tf-reader auto or "
                                     f"tensorflow.") from exc
            reason = str(exc)
    try:
        source, _ = savedmodel.read(found.path, request)
    except ConversionError as exc:  # e.g. a loop's variant tensor: say why TF read it
        exc.message = f"{exc.message} (the TensorFlow reader ran because: {reason})"
        exc.args = (exc.message,)
        raise
    return source, {"reader": {"name": "tensorflow", "why": reason}}


def read(request: ReadRequest):
    """(SourceGraph, source record for report.json) for any TF format."""
    found = detect(request.model, request.options)
    if found.format == "savedmodel":
        source, fields = _read_savedmodel(found, request)
    else:
        source, fields = READERS[found.format].read(found.path, request)
    return source, {"format": found.format, **fields}


def read_ir(request: ReadRequest):
    """(IR graph, source record): the model read, pruned to --inputs/--outputs
    and mapped. The record names the tensors the converted model spans, which
    is what `x2 check` feeds and fetches when it runs the source."""
    from ...registry import TF
    from ..common import map_graph, select_subgraph
    from ..source_fold import evaluate_tf
    from .common import tensor_name
    source, record = read(request)
    source = select_subgraph(source, request.inputs, request.outputs)
    _refuse_handles(source)
    record.update(feeds=[tensor_name(v) for v in source.inputs],
                  fetches=[tensor_name(v) for v in source.outputs],
                  pruned=bool(request.inputs or request.outputs))
    graph = map_graph(source, TF, evaluate_tf, request.options.keep_trainable)
    graph.meta.source_model = request.model
    if source.source_modules:   # a Keras model's layers that hold layers (keras_scopes.py)
        graph.meta.source_modules = dict(source.source_modules)
        graph.meta.source_class = source.source_class
    if source.source_state:     # a Keras model's weights by name (keras_weights.py)
        graph.meta.source_state = dict(source.source_state)
    # Keras/TF image tensors are NHWC at the interface (--io-layout nchw changes that).
    graph.meta.source_layout = "NHWC"
    return graph, record


def _refuse_handles(source) -> None:
    """No variant or resource tensor reaches a mapper: name the op instead."""
    for op in source.ops:
        for value in op.inputs + op.outputs:
            info = source.info.get(value)
            if info is not None and info.dtype in HANDLE_DTYPES:
                if info.dtype == "variant":
                    raise refuse_variant(op.type, op.name, value in op.outputs)
                raise ConversionError(f"{op.type} node '{op.name}' uses a resource tensor "
                                      f"('{value}'), which x2 cannot convert",
                                      details={"node": op.name, "op": op.type})


def runner(request: ReadRequest, names, source: dict):
    """The source model, loaded once, as a function of numpy inputs giving its
    outputs in the converted model's order. `source` is report.json's
    "source": feeds/fetches name the (possibly pruned) tensors the converted
    model starts and ends at."""
    found = detect(request.model, request.options)
    return READERS[found.format].runner(found.path, request, source, names)
