"""TensorFlow SavedModel frontend. Runs inside a worker process that imports
TensorFlow only (never paddle: TF-then-paddle in one process segfaults).

Most SavedModels are read without TensorFlow (tf_direct.py); this reader
takes the rest. Steps: load the SavedModel, pick a signature, freeze its variables into
constants, let TF infer every tensor's shape, and describe the frozen graph
as a SourceGraph for the shared mapping loop."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError, SelectionError
from ..ir import TensorInfo
from .common import SourceGraph, SourceOp

# Ops that carry no data: control flow bookkeeping left after freezing.
_SKIP = {"NoOp", "Assert", "SaveV2", "RestoreV2", "VarHandleOp"}


def _quiet_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    return tf


def _dtype_name(tf_dtype) -> str:
    return tf_dtype.as_numpy_dtype.__name__ if tf_dtype.name != "bfloat16" else "bfloat16"


def value_name(tensor_name: str) -> str:
    """'conv/Relu:0' -> 'conv/Relu'; other outputs keep their index."""
    return tensor_name[:-2] if tensor_name.endswith(":0") else tensor_name


def check_savedmodel_dir(path: Path) -> None:
    if not path.exists():
        raise ModelLoadError(f"{path}: no such file or directory")
    if path.is_file():
        raise ModelLoadError(f"{path}: expected a SavedModel directory (with saved_model.pb), "
                             f"got a file")
    if not (path / "saved_model.pb").exists() and not (path / "saved_model.pbtxt").exists():
        raise ModelLoadError(f"{path}: not a SavedModel directory: saved_model.pb is missing")
    if not (path / "variables").is_dir():
        raise ModelLoadError(f"{path}: the SavedModel has no variables/ directory; "
                             f"its weights are missing")


def load_signature(path: str, signature: str | None):
    """Return (tf, loaded object, signature name, concrete function)."""
    path_obj = Path(path)
    check_savedmodel_dir(path_obj)
    tf = _quiet_tf()
    try:
        loaded = tf.saved_model.load(str(path_obj))
    except Exception as exc:  # TF raises many types for corrupt files
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"{path}: TensorFlow could not load this SavedModel: {first}") from exc
    sigs = dict(loaded.signatures)
    signature = pick_signature(sigs, signature, path)
    return tf, loaded, signature, sigs[signature]


def pick_signature(sigs: dict, signature: str | None, path) -> str:
    """The signature to convert: the one asked for, else serving_default, else
    the first by name; a clear error when there is none or it does not exist."""
    if not sigs:
        raise ModelLoadError(f"{path}: the SavedModel has no signatures to convert")
    if signature is None:
        signature = "serving_default" if "serving_default" in sigs else sorted(sigs)[0]
    if signature not in sigs:
        raise SelectionError(f"--signature: '{signature}' is not in {path}; it has "
                             f"{', '.join(sorted(sigs))}")
    return signature


def _retrace(tf, fn, input_shapes: dict[str, list[int]]):
    """Specialize a signature to user-given input shapes."""
    specs = dict(fn.structured_input_signature[1])
    for name, shape in input_shapes.items():
        if name not in specs:
            raise SelectionError(f"--input-shape: '{name}' is not an input of the signature; "
                                 f"inputs are {', '.join(specs)}")
        old = specs[name].shape
        if old.rank is not None and old.rank != len(shape):
            raise SelectionError(f"--input-shape {name}: rank {len(shape)} contradicts the "
                                 f"model's shape {old}")
        if not old.is_compatible_with(shape):
            raise SelectionError(f"--input-shape {name}: {shape} contradicts the model's "
                                 f"shape {old}")
        specs[name] = tf.TensorSpec(shape, specs[name].dtype, name=name)
    wrapper = tf.function(lambda **kw: fn(**kw))
    return wrapper.get_concrete_function(**specs)


READERS = ("auto", "direct", "tensorflow")


def read_savedmodel(path: str, signature: str | None = None,
                    input_shapes: dict[str, list[int]] | None = None,
                    reader: str = "auto") -> tuple[SourceGraph, dict]:
    """(SourceGraph, which reader ran and why). `reader`: "auto" reads without
    TensorFlow where tf_direct.py can and falls back to TensorFlow otherwise;
    "direct" refuses the fallback; "tensorflow" always loads with TensorFlow."""
    if reader not in READERS:
        raise SelectionError(f"--tf-reader {reader}: choose from {', '.join(READERS)}")
    reason = "--tf-reader tensorflow"
    if reader != "tensorflow":
        from .tf_direct import NeedsTensorFlow, read_savedmodel_direct
        try:
            if input_shapes:
                raise NeedsTensorFlow("--input-shape re-traces the signature")
            return read_savedmodel_direct(path, signature), {"name": "direct"}
        except NeedsTensorFlow as exc:
            if reader == "direct":
                raise ModelLoadError(f"{path}: the direct SavedModel reader cannot read this "
                                     f"model: {exc}. Use --tf-reader auto or tensorflow.") \
                    from exc
            reason = str(exc)
    return _read_with_tensorflow(path, signature, input_shapes), \
        {"name": "tensorflow", "why": reason}


def _read_with_tensorflow(path: str, signature: str | None,
                          input_shapes: dict[str, list[int]] | None) -> SourceGraph:
    tf, _loaded, signature, fn = load_signature(path, signature)
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    input_names = list(fn.structured_input_signature[1])
    output_keys = sorted(fn.structured_outputs)  # the order TF flattens them in
    if input_shapes:
        fn = _retrace(tf, fn, input_shapes)
    frozen = convert_variables_to_constants_v2(fn)
    graph_def = frozen.graph.as_graph_def()
    placeholder_names = [value_name(t.name) for t in frozen.inputs
                         if t.dtype != tf.resource]
    output_values = [value_name(t.name) for t in frozen.outputs]
    # frozen.inputs follow the signature's flattened (sorted) kwargs order.
    sorted_inputs = sorted(input_names)
    aliases = {ph: ph if ph in input_names else sorted_inputs[i]
               for i, ph in enumerate(placeholder_names)}
    # Keep the signature's declared input order.
    inputs = sorted(placeholder_names, key=lambda ph: input_names.index(aliases[ph]))
    source = describe_graph_def(tf, graph_def, inputs, output_values)
    source.input_aliases = aliases
    source.output_aliases = dict(zip(output_values, output_keys))
    return source


def describe_graph_def(tf, graph_def, inputs: list[str], outputs: list[str]) -> SourceGraph:
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    ops: list[SourceOp] = []
    info: dict[str, TensorInfo] = {}
    for op in graph.get_operations():
        for t in op.outputs:
            if t.dtype == tf.resource or t.dtype == tf.variant:
                continue
            shape = None if t.shape.rank is None else tuple(t.shape.as_list())
            info[value_name(t.name)] = TensorInfo(_dtype_name(t.dtype), shape)
        if op.type in _SKIP or op.type == "Placeholder":
            continue
        attrs = {key: _attr(tf, op, key) for key in op.node_def.attr}
        const_value = None
        if op.type == "Const":
            const_value = np.array(tf.make_ndarray(op.node_def.attr["value"].tensor))
            attrs = {}
        ops.append(SourceOp(op.type, op.name, [value_name(t.name) for t in op.inputs],
                            [value_name(t.name) for t in op.outputs], attrs, const_value))
    return SourceGraph("tensorflow", ops, inputs, outputs, info)


def _attr(tf, op, key):
    value = op.get_attr(key)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, tf.DType):
        return _dtype_name(value)
    if isinstance(value, list):
        return [v.decode() if isinstance(v, bytes) else
                (_dtype_name(v) if isinstance(v, tf.DType) else v) for v in value]
    if hasattr(value, "dim"):  # TensorShapeProto
        return None if value.unknown_rank else [d.size for d in value.dim]
    if isinstance(value, (int, float, bool, str)) or value is None:
        return value
    return None  # tensors, funcs: mappers that need them read them otherwise


def run_savedmodel(path: str, signature: str | None, inputs: dict[str, np.ndarray]
                   ) -> list[np.ndarray]:
    """Run the signature on numpy inputs; outputs in the converted model's order."""
    tf, _loaded, signature, fn = load_signature(path, signature)
    result = fn(**{k: tf.constant(v) for k, v in inputs.items()})
    return [np.asarray(result[k]) for k in sorted(result)]


def signature_spec(path: str, signature: str | None) -> dict:
    """Input names/shapes/dtypes and output names of a signature."""
    tf, _loaded, signature, fn = load_signature(path, signature)
    specs = fn.structured_input_signature[1]
    return {"inputs": [{"name": k, "shape": v.shape.as_list() if v.shape.rank is not None
                        else None, "dtype": _dtype_name(v.dtype)} for k, v in specs.items()],
            "outputs": sorted(fn.structured_outputs), "signature": signature}
