"""Helpers every TensorFlow reader shares: the quiet TensorFlow import, tensor
naming, signature choice, describing a frozen GraphDef as a SourceGraph and
running one. A leaf: it imports no other tf_* reader, so each reader can
import it without the readers importing each other."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ...errors import ConversionError, ModelLoadError, SelectionError
from ...ir import TensorInfo
from ..common import SourceGraph, SourceOp


class NeedsTensorFlow(Exception):
    """The direct SavedModel reader (direct.py) cannot read this model; the
    message says why, and the TensorFlow reader takes over."""


# Ops that carry no data: control flow bookkeeping left after freezing.
_SKIP = {"NoOp", "Assert", "SaveV2", "RestoreV2", "VarHandleOp"}


def quiet_tf():
    # TF logs to stderr at import and on every load; x2 reports errors itself.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf.get_logger().setLevel("ERROR")
    return tf


def first_line(exc) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# Handle dtypes: no numpy equivalent, never converted.
HANDLE_DTYPES = ("variant", "resource")


def tf_dtype_name(tf_dtype) -> str:
    if tf_dtype.name in ("bfloat16",) + HANDLE_DTYPES:
        return tf_dtype.name
    return tf_dtype.as_numpy_dtype.__name__


def refuse_variant(op_type: str, name: str, makes: bool) -> ConversionError:
    """The error for a variant tensor (a TensorList) that reaches conversion."""
    return ConversionError(
        f"{op_type} node '{name}' {'makes' if makes else 'reads'} a variant tensor (a "
        f"TensorList, as the While loops of Keras recurrent layers and tf.TensorArray use), "
        f"which x2 cannot convert as a tensor; x2 unrolls such loops when their trip count "
        f"is static, in its direct SavedModel reader only",
        details={"node": name, "op": op_type})


def value_name(tensor_name: str) -> str:
    """'conv/Relu:0' -> 'conv/Relu'; other outputs keep their index."""
    return tensor_name[:-2] if tensor_name.endswith(":0") else tensor_name


def tensor_name(value: str) -> str:
    """'conv/Relu' -> 'conv/Relu:0'; 'split:1' stays."""
    return value if ":" in value.rsplit("/", 1)[-1] else value + ":0"


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


def parse_saved_model(directory: Path):
    """saved_model.pb as a SavedModel message, with x2's own schema (no TF
    import: detection and the direct reader must stay TensorFlow-free)."""
    from google.protobuf.message import DecodeError

    from .protos import messages
    pb = directory / "saved_model.pb"
    try:
        return messages().SavedModel.FromString(pb.read_bytes())
    except DecodeError as exc:
        raise ModelLoadError(f"{directory}: TensorFlow could not load this SavedModel: "
                             f"saved_model.pb is corrupt ({exc})") from exc


def describe_graph_def(tf, graph_def, inputs: list[str], outputs: list[str]) -> SourceGraph:
    """A frozen GraphDef as a SourceGraph, with the shapes TF infers. v1
    control flow (Switch/Merge/Enter/Exit, TensorArrayV3) is rebuilt as
    While / If ops (v1_control.py)."""
    from .v1_control import V1_OPS, Node, rebuild, shape_graph
    graph = _import(tf, graph_def)
    v1_control = any(op.type in V1_OPS for op in graph.get_operations())
    info = _infos(tf, shape_graph(tf, graph_def) if v1_control else graph)
    nodes: list[Node] = []
    for op in graph.get_operations():
        variant = [t for t in list(op.outputs) + list(op.inputs) if t.dtype == tf.variant]
        if variant and op.type not in _SKIP and op.type != "Placeholder":
            raise refuse_variant(op.type, op.name, variant[0] in op.outputs)
        if op.type in _SKIP or op.type == "Placeholder":
            continue
        attrs = {key: _attr(tf, op, key) for key in op.node_def.attr}
        const_value = None
        if op.type == "Const":
            const_value = np.array(tf.make_ndarray(op.node_def.attr["value"].tensor))
            attrs = {}
        # Control inputs place a node inside a loop or a branch (v1 control flow).
        nodes.append(Node(op.type, op.name, [value_name(t.name) for t in op.inputs],
                          [c.name for c in op.control_inputs],
                          [value_name(t.name) for t in op.outputs], attrs, const_value))
    ops = rebuild(nodes, info) if v1_control else \
        [SourceOp(n.type, n.name, n.inputs, n.outputs, n.attrs, n.const_value) for n in nodes]
    return SourceGraph("tensorflow", ops, inputs, outputs, info)


def _import(tf, graph_def):
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    return graph


def _infos(tf, graph) -> dict[str, TensorInfo]:
    """dtype and shape of every tensor TF infers (handles have none)."""
    info = {}
    for op in graph.get_operations():
        for t in op.outputs:
            if t.dtype == tf.resource or t.dtype == tf.variant:
                continue
            shape = None if t.shape.rank is None else tuple(t.shape.as_list())
            info[value_name(t.name)] = TensorInfo(tf_dtype_name(t.dtype), shape)
    return info


def _attr(tf, op, key):
    value = op.get_attr(key)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, tf.DType):
        return tf_dtype_name(value)
    if isinstance(value, list):
        return [v.decode() if isinstance(v, bytes) else
                (tf_dtype_name(v) if isinstance(v, tf.DType) else v) for v in value]
    if hasattr(value, "dim"):  # TensorShapeProto
        return None if value.unknown_rank else [d.size for d in value.dim]
    if isinstance(value, (int, float, bool, str)) or value is None:
        return value
    return None  # tensors, funcs: mappers that need them read them otherwise


def freeze_session(tf, sess, output_values: list[str]):
    ops = sorted({value_name(v).split(":")[0] for v in output_values})
    return tf.compat.v1.graph_util.convert_variables_to_constants(
        sess, sess.graph.as_graph_def(), ops)


def session_run(tf, sess, source: dict, arrays) -> list[np.ndarray]:
    """Fetch report.json's source "fetches" feeding its "feeds": the tensors
    the (possibly pruned) converted model starts and ends at."""
    feeds = dict(zip(source.get("feeds") or [], arrays))
    return [np.asarray(v) for v in sess.run(source.get("fetches"), feed_dict=feeds)]


def graph_def_runner(tf, graph_def, source: dict):
    """A function running the frozen graph between report.json's feeds and
    fetches on numpy inputs (the graph imported once, for every input set)."""
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(graph_def, name="")
    sess = tf.compat.v1.Session(graph=graph)
    return lambda arrays: session_run(tf, sess, source, arrays)


def flat_outputs(result) -> list[np.ndarray]:
    """A model's result flattened like the converted model's outputs (a dict in
    TensorFlow's sorted-key order)."""
    if isinstance(result, dict):
        return [np.asarray(result[k]) for k in sorted(result)]
    flat = result if isinstance(result, (list, tuple)) else [result]
    return [np.asarray(r) for r in flat]
