"""Checkpoint readers.

TF1 checkpoint + meta graph (tf.compat.v1 Saver): import the meta graph into
a v1 Session, restore the variables, freeze them with
graph_util.convert_variables_to_constants, describe the frozen graph.

TF2 object checkpoint (tf.train.Checkpoint): variables only, no graph. The
user's --model-def factory rebuilds the Keras model / tf.Module, the
checkpoint is restored into it, and it is traced and frozen like a Keras file
(x2/frontends/tf_keras.py)."""
from __future__ import annotations

from ..errors import ModelLoadError
from .tf_graphdef import describe_frozen, freeze_session, infer_io
from .tf_savedmodel import _quiet_tf, value_name


def is_object_checkpoint(prefix: str) -> bool:
    tf = _quiet_tf()
    try:
        return any(name == "_CHECKPOINTABLE_OBJECT_GRAPH"
                   for name, _ in tf.train.list_variables(prefix))
    except Exception:
        return False


def restore_v1(tf, sess, meta_path: str):
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
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"{prefix}: could not restore the checkpoint's variables "
                             f"(are the .index/.data files next to the .meta?): {first}") from exc


def read_checkpoint_v1(meta_path: str, input_shapes=None, outputs=None):
    tf = _quiet_tf()
    with tf.Graph().as_default() as graph, tf.compat.v1.Session() as sess:
        restore_v1(tf, sess, meta_path)
        graph_def = graph.as_graph_def()
        inputs, sinks = infer_io(graph_def, training=True)
        # Scalar sinks of a training graph are losses and metrics, not model outputs.
        sinks = [s for s in sinks if graph.get_operation_by_name(s).outputs and
                 graph.get_operation_by_name(s).outputs[0].shape.rank != 0 and
                 graph.get_operation_by_name(s).outputs[0].dtype.is_floating]
        ops = {op.name for op in graph.get_operations()}
        wanted = [o for o in (outputs or []) if value_name(o).split(":")[0] in ops]
        if not sinks and not wanted:
            raise ModelLoadError(f"{meta_path}: could not infer the outputs; name them "
                                 f"with --outputs")
        graph_def = freeze_session(tf, sess, wanted or sinks)
    return describe_frozen(tf, graph_def, inputs, wanted or sinks, input_shapes)


def restore_v2(tf, obj, prefix: str) -> None:
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


def read_checkpoint_v2(prefix: str, options: dict, input_shapes=None):
    from .tf_keras import read_model_object
    return read_model_object("checkpoint_v2", prefix, options, input_shapes)
