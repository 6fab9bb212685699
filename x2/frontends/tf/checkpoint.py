"""TF1 checkpoint reader (tf.compat.v1 Saver, with its .meta graph): import the
meta graph into a v1 Session, restore the variables, freeze them with
graph_util.convert_variables_to_constants, describe the frozen graph.
(TF2 object checkpoints: object_checkpoint.py.)"""
from __future__ import annotations

from ...contracts import ReadRequest
from ...errors import ModelLoadError
from .common import first_line, freeze_session, quiet_tf, session_run, value_name
from .graphdef import describe_frozen, infer_io


def _restore(tf, sess, meta_path: str):
    prefix = meta_path[: -len(".meta")]
    try:
        saver = tf.compat.v1.train.import_meta_graph(meta_path, clear_devices=True)
    except Exception as exc:
        raise ModelLoadError(f"{meta_path}: not a readable meta graph: {exc}") from exc
    if saver is None:
        raise ModelLoadError(f"{meta_path}: the meta graph has no variables to restore")
    try:
        saver.restore(sess, prefix)
    except Exception as exc:
        raise ModelLoadError(f"{prefix}: could not restore the checkpoint's variables "
                             f"(are the .index/.data files next to the .meta?): "
                             f"{first_line(exc)}") from exc


def read(meta_path: str, request: ReadRequest):
    tf = quiet_tf()
    with tf.Graph().as_default() as graph, tf.compat.v1.Session() as sess:
        _restore(tf, sess, meta_path)
        graph_def = graph.as_graph_def()
        inputs, sinks = infer_io(graph_def, training=True)
        # Scalar sinks of a training graph are losses and metrics, not model outputs.
        sinks = [s for s in sinks if graph.get_operation_by_name(s).outputs and
                 graph.get_operation_by_name(s).outputs[0].shape.rank != 0 and
                 graph.get_operation_by_name(s).outputs[0].dtype.is_floating]
        ops = {op.name for op in graph.get_operations()}
        wanted = [o for o in (request.outputs or []) if value_name(o).split(":")[0] in ops]
        if not sinks and not wanted:
            raise ModelLoadError(f"{meta_path}: could not infer the outputs; name them "
                                 f"with --outputs")
        graph_def = freeze_session(tf, sess, wanted or sinks)
    return describe_frozen(tf, graph_def, inputs, wanted or sinks, request.input_shapes), {}


def runner(meta_path: str, request: ReadRequest, source: dict, names):
    tf = quiet_tf()
    graph = tf.Graph()
    sess = tf.compat.v1.Session(graph=graph)
    with graph.as_default():
        _restore(tf, sess, meta_path)
    return lambda arrays: session_run(tf, sess, source, arrays)
