"""Frozen GraphDef (.pb / .pbtxt) reader, and the GraphDef helpers the
Session-based readers (TF1 SavedModel, TF1 checkpoint) share: inferring a
graph's inputs and outputs, applying --input-shape, describing the frozen
graph."""
from __future__ import annotations

from pathlib import Path

from ...contracts import ReadRequest
from ...errors import ModelLoadError, SelectionError
from .common import describe_graph_def, quiet_tf, graph_def_runner, value_name

# Op types that are never a model output when outputs are inferred.
_NOT_OUTPUTS = {"NoOp", "Const", "Placeholder", "PlaceholderWithDefault", "Assert", "SaveV2",
                "RestoreV2", "Assign", "AssignVariableOp", "VariableV2", "Variable",
                "VarHandleOp", "VarIsInitializedOp", "MergeV2Checkpoints", "ShardedFilename",
                "StringJoin", "IsVariableInitialized", "ReadVariableOp"}


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


def read(path: str, request: ReadRequest):
    tf = quiet_tf()
    graph_def = load_graph_def(tf, path)
    inputs, outputs = infer_io(graph_def)
    if not outputs:
        raise ModelLoadError(f"{path}: could not infer the outputs; name them with --outputs")
    return describe_frozen(tf, graph_def, inputs, outputs, request.input_shapes), {}


def runner(path: str, request: ReadRequest, source: dict, names):
    tf = quiet_tf()
    return graph_def_runner(tf, load_graph_def(tf, path), source)
