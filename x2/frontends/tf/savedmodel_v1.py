"""TF1-style SavedModel reader (written by a Session builder, or asked for with
--tags): load the meta graph into a v1 Session, freeze the signature's outputs
and describe the frozen graph."""
from __future__ import annotations

from pathlib import Path

from ...contracts import ReadRequest
from ...errors import SelectionError
from .common import (freeze_session, pick_signature, quiet_tf, session_run,
                        value_name)
from .graphdef import describe_frozen


def is_tf1(saved_model) -> bool:
    """A SavedModel without an object graph (written by a TF1 builder)."""
    return all(len(mg.object_graph_def.nodes) == 0 for mg in saved_model.meta_graphs)


def _load(tf, sess, path: str, tags):
    from tensorflow.core.protobuf import saved_model_pb2
    proto = saved_model_pb2.SavedModel()
    pb = Path(path) / "saved_model.pb"
    if pb.exists():
        proto.ParseFromString(pb.read_bytes())
    available = [list(mg.meta_info_def.tags) for mg in proto.meta_graphs]
    if tags is None:
        tags = ["serve"] if ["serve"] in available or not available else available[0]
    tags = [tags] if isinstance(tags, str) else list(tags)
    if available and sorted(tags) not in [sorted(t) for t in available]:
        raise SelectionError(f"--tags {','.join(tags)}: the SavedModel has no meta graph with "
                             f"these tags; it has {available}")
    meta_graph = tf.compat.v1.saved_model.loader.load(sess, tags, path)
    return meta_graph, tags


def _signature(meta_graph, signature, path):
    sigs = dict(meta_graph.signature_def)
    signature = pick_signature(sigs, signature, path)
    sig = sigs[signature]
    inputs = {k: v.name for k, v in sig.inputs.items()}
    outputs = {k: sig.outputs[k].name for k in sorted(sig.outputs)}
    return signature, inputs, outputs


def read(path: str, request: ReadRequest):
    tf = quiet_tf()
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        meta_graph, tags = _load(tf, sess, path, request.options.tags)
        signature, inputs, outputs = _signature(meta_graph, request.signature, path)
        graph_def = freeze_session(tf, sess, list(outputs.values()))
    shapes = {inputs.get(k, k): v for k, v in (request.input_shapes or {}).items()}
    source = describe_frozen(tf, graph_def, list(inputs.values()), list(outputs.values()),
                             shapes)
    source.input_aliases = {value_name(t): k for k, t in inputs.items()}
    source.output_aliases = {value_name(t): k for k, t in outputs.items()}
    return source, {"signature": signature, "tags": tags}


def runner(path: str, request: ReadRequest, source: dict, names):
    tf = quiet_tf()
    graph = tf.Graph()
    sess = tf.compat.v1.Session(graph=graph)
    with graph.as_default():
        _load(tf, sess, path, source.get("tags") or request.options.tags)
    return lambda arrays: session_run(tf, sess, source, arrays)
