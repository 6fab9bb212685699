"""Frozen GraphDef (.pb) and TF1-style SavedModel (Session builder + tags)
readers, and the v1-Session runner `x2 check` uses for graph-based forms.
Every form ends as a frozen GraphDef described by describe_graph_def."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ModelLoadError, SelectionError
from .tf_savedmodel import _quiet_tf, describe_graph_def, pick_signature, value_name

# Op types that are never a model output when outputs are inferred.
_NOT_OUTPUTS = {"NoOp", "Const", "Placeholder", "PlaceholderWithDefault", "Assert", "SaveV2",
                "RestoreV2", "Assign", "AssignVariableOp", "VariableV2", "Variable",
                "VarHandleOp", "VarIsInitializedOp", "MergeV2Checkpoints", "ShardedFilename",
                "StringJoin", "IsVariableInitialized", "ReadVariableOp"}


def tensor_name(value: str) -> str:
    """'conv/Relu' -> 'conv/Relu:0'; 'split:1' stays."""
    return value if ":" in value.rsplit("/", 1)[-1] else value + ":0"


def _node_input(name: str) -> str:
    return name.lstrip("^").split(":")[0]


def load_graph_def(tf, path: str):
    graph_def = tf.compat.v1.GraphDef()
    data = Path(path).read_bytes()
    try:
        if path.endswith(".pbtxt"):
            from google.protobuf import text_format
            text_format.Parse(data.decode(), graph_def)
        else:
            graph_def.ParseFromString(data)
    except Exception as exc:
        raise ModelLoadError(f"{path}: not a frozen TensorFlow GraphDef: "
                             f"{type(exc).__name__}: {exc}") from exc
    if not graph_def.node:
        raise ModelLoadError(f"{path}: the GraphDef is empty")
    variables = [n.name for n in graph_def.node if n.op in ("VariableV2", "VarHandleOp")]
    if variables:
        raise ModelLoadError(f"{path}: the graph still holds variables ({variables[0]}, ...); "
                             f"freeze it first, or pass the checkpoint's .meta file")
    return graph_def


def _training_op(node) -> bool:
    return "gradients/" in node.name or node.name.startswith("gradients") or \
        node.op.startswith(("Apply", "ResourceApply", "Assign")) or node.op == "NoOp"


def _label_side(graph_def) -> set[str]:
    """Nodes that depend on an integer Placeholder (labels of a training graph)."""
    labels = {n.name for n in graph_def.node if n.op == "Placeholder"
              and n.attr["dtype"].type in (3, 9)}  # DT_INT32, DT_INT64
    consumers: dict[str, list[str]] = {}
    for n in graph_def.node:
        for i in n.input:
            consumers.setdefault(_node_input(i), []).append(n.name)
    seen, stack = set(), list(labels)
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(consumers.get(name, []))
    return seen


def infer_io(graph_def, training: bool = False) -> tuple[list[str], list[str]]:
    """Inputs: Placeholders. Outputs: data ops nothing consumes (not in save/ scopes).
    `training` (checkpoint meta graphs): the gradient/optimizer subgraph and the
    loss side (what depends on integer label placeholders) do not count."""
    skip = _label_side(graph_def) if training else set()
    if training and len(skip) >= len(graph_def.node) - 1:
        skip = set()
    consumed = {_node_input(i) for n in graph_def.node for i in n.input
                if not (training and (_training_op(n) or n.name in skip))}
    inputs = [n.name for n in graph_def.node if n.op == "Placeholder" and n.name not in skip]
    outputs = [n.name for n in graph_def.node
               if n.name not in consumed and n.name not in skip and not _training_op(n)
               and n.op not in _NOT_OUTPUTS and not n.name.startswith(("save/", "save_"))
               and n.name != "init" and "gradients/" not in n.name]
    return inputs, outputs


def set_input_shapes(tf, graph_def, input_shapes: dict | None):
    """--input-shape: rewrite the Placeholders' shapes so TF infers the rest."""
    if not input_shapes:
        return graph_def
    by_name = {n.name: n for n in graph_def.node if n.op == "Placeholder"}
    for name, dims in input_shapes.items():
        node = by_name.get(value_name(name))
        if node is None:
            raise SelectionError(f"--input-shape: '{name}' is not an input (Placeholder); "
                                 f"inputs are {', '.join(by_name)}")
        old = tf.TensorShape(node.attr["shape"].shape)
        if not old.is_compatible_with(dims):
            raise SelectionError(f"--input-shape {name}: {dims} contradicts the model's "
                                 f"shape {old}")
        node.attr["shape"].shape.CopyFrom(tf.TensorShape(dims).as_proto())
    return graph_def


def _used_inputs(graph_def, inputs, outputs) -> list[str]:
    """The inputs the outputs depend on (training graphs have label placeholders)."""
    by_name = {n.name: n for n in graph_def.node}
    seen, stack = set(), [value_name(v).split(":")[0] for v in outputs]
    while stack:
        name = stack.pop()
        if name in seen or name not in by_name:
            continue
        seen.add(name)
        stack.extend(_node_input(i) for i in by_name[name].input)
    return [v for v in inputs if value_name(v).split(":")[0] in seen]


def describe_frozen(tf, graph_def, inputs, outputs, input_shapes=None):
    graph_def = set_input_shapes(tf, graph_def, input_shapes)
    inputs = _used_inputs(graph_def, inputs, outputs)
    return describe_graph_def(tf, graph_def, [value_name(v) for v in inputs],
                              [value_name(v) for v in outputs])


def read_graphdef(path: str, input_shapes=None):
    tf = _quiet_tf()
    graph_def = load_graph_def(tf, path)
    inputs, outputs = infer_io(graph_def)
    if not outputs:
        raise ModelLoadError(f"{path}: could not infer the outputs; name them with --outputs")
    return describe_frozen(tf, graph_def, inputs, outputs, input_shapes)


def freeze_session(tf, sess, output_values: list[str]):
    ops = sorted({value_name(v).split(":")[0] for v in output_values})
    return tf.compat.v1.graph_util.convert_variables_to_constants(
        sess, sess.graph.as_graph_def(), ops)


# ---- TF1-style SavedModel --------------------------------------------------

def _load_v1(tf, sess, path: str, tags):
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


def _v1_signature(meta_graph, signature, path):
    sigs = dict(meta_graph.signature_def)
    signature = pick_signature(sigs, signature, path)
    sig = sigs[signature]
    inputs = {k: v.name for k, v in sig.inputs.items()}
    outputs = {k: sig.outputs[k].name for k in sorted(sig.outputs)}
    return signature, inputs, outputs


def read_savedmodel_v1(path: str, signature, tags, input_shapes=None):
    tf = _quiet_tf()
    with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
        meta_graph, tags = _load_v1(tf, sess, path, tags)
        signature, inputs, outputs = _v1_signature(meta_graph, signature, path)
        graph_def = freeze_session(tf, sess, list(outputs.values()))
    shapes = {inputs.get(k, k): v for k, v in (input_shapes or {}).items()}
    source = describe_frozen(tf, graph_def, list(inputs.values()), list(outputs.values()),
                             shapes)
    source.input_aliases = {value_name(t): k for k, t in inputs.items()}
    source.output_aliases = {value_name(t): k for k, t in outputs.items()}
    return source, signature, tags


# ---- the reference runner ---------------------------------------------------

def run_session(fmt: str, path: str, signature, options: dict, source: dict,
                feeds: dict[str, np.ndarray], fetches: list[str]) -> list[np.ndarray]:
    """Run the source in a v1 Session, feeding and fetching tensors by name."""
    tf = _quiet_tf()
    frozen = None
    if fmt not in ("graphdef", "checkpoint_v1", "savedmodel_v1"):
        from .tf_keras import frozen_graph_def  # built eagerly, outside the v1 graph
        frozen = frozen_graph_def(fmt, path, signature, options)
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.Session(graph=graph) as sess:
        if fmt == "graphdef":
            tf.graph_util.import_graph_def(load_graph_def(tf, path), name="")
        elif fmt == "checkpoint_v1":
            from .tf_checkpoint import restore_v1
            restore_v1(tf, sess, path)
        elif fmt == "savedmodel_v1":
            _load_v1(tf, sess, path, source.get("tags") or options.get("tags"))
        else:  # SavedModel / Keras / TF2 checkpoint: the graph TF froze for conversion
            tf.graph_util.import_graph_def(frozen, name="")
        values = sess.run(fetches, feed_dict=feeds)
    return [np.asarray(v) for v in values]
