"""Python-built models (a Keras model or a tf.Module, from a Keras file or a
TF2 checkpoint's --model-def): trace the model with its input signature,
freeze the variables (convert_variables_to_constants_v2), describe the
frozen graph, or run it for `x2 check`. Readers of such formats only load
the model: read/run here are the rest."""
from __future__ import annotations

from contextlib import contextmanager

from ...errors import SelectionError
from .common import describe_graph_def, flat_outputs, graph_def_runner, value_name
from .keras_scopes import Recorded, recording
from .keras_weights import handles, name_constants, weight_names


def _is_keras(obj) -> bool:
    return any(c.__module__.startswith("keras") for c in type(obj).__mro__)


def _specs(tf, obj, input_shapes: dict | None):
    """TensorSpecs of the model's inputs, with --input-shape applied."""
    input_shapes = dict(input_shapes or {})
    specs = []
    if _is_keras(obj) and getattr(obj, "inputs", None):
        for i, t in enumerate(obj.inputs):
            name = getattr(t, "name", None) or f"input_{i}"
            specs.append(tf.TensorSpec(tuple(t.shape), t.dtype or "float32", name=name))
    else:
        call = getattr(obj, "__call__", None)
        signature = getattr(call, "input_signature", None)
        if signature:
            specs = [tf.TensorSpec(s.shape, s.dtype, name=s.name or f"input_{i}")
                     for i, s in enumerate(signature)]
        elif input_shapes:
            specs = [tf.TensorSpec(dims, tf.float32, name=name)
                     for name, dims in input_shapes.items()]
        else:
            raise SelectionError("the model has no input signature; give each input's shape "
                                 "with --input-shape NAME:D1,D2,...")
    out = []
    for i, spec in enumerate(specs):
        dims = input_shapes.pop(spec.name, None)
        if dims is None and len(specs) == 1 and len(input_shapes) == 1:
            dims = input_shapes.pop(next(iter(input_shapes)))
        if dims is not None:
            if not spec.shape.is_compatible_with(dims):
                raise SelectionError(f"--input-shape {spec.name}: {dims} contradicts the "
                                     f"model's shape {spec.shape}")
            spec = tf.TensorSpec(dims, spec.dtype, name=spec.name)
        out.append(spec)
    if input_shapes:
        raise SelectionError(f"--input-shape: {', '.join(input_shapes)} not an input; inputs "
                             f"are {', '.join(s.name for s in out)}")
    return out


def _call(obj, xs):
    if _is_keras(obj):
        return obj(_keras_inputs(obj, xs), training=False)
    return obj(*xs)


def _keras_inputs(obj, xs):
    """The inputs as the model takes them: a model built on a dict of inputs
    (keras_hub's backbones) refuses a list; `xs` follow `obj.inputs`."""
    struct = getattr(obj, "input", None) if getattr(obj, "inputs", None) else None
    if isinstance(struct, dict) and len(struct) == len(xs):
        position = {id(t): i for i, t in enumerate(obj.inputs)}
        if all(id(t) in position for t in struct.values()):
            return {key: xs[position[id(t)]] for key, t in struct.items()}
    return xs[0] if len(xs) == 1 else list(xs)


def _output_names(obj, structured) -> list[str]:
    if isinstance(structured, dict):
        return sorted(structured)
    flat = structured if isinstance(structured, (list, tuple)) else [structured]
    names = list(getattr(obj, "output_names", None) or []) if _is_keras(obj) else []
    if len(names) != len(flat):
        names = [f"output_{i}" for i in range(len(flat))]
    return names


def _freeze(tf, obj, input_shapes, scopes: Recorded | None = None):
    """The traced model with its variables made constants, and its output
    names; `scopes` (a Keras model) gets its ops' module scopes."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    specs = _specs(tf, obj, input_shapes)
    with recording(tf, obj, scopes if scopes is not None else Recorded()) as finish:
        fn = tf.function(lambda *xs: _call(obj, xs)).get_concrete_function(*specs)
    finish(fn.graph)
    if scopes is not None:   # (each variable's placeholder, for its name)
        scopes.captures = list(fn.graph.captures)
    names = _output_names(obj, fn.structured_outputs)
    return convert_variables_to_constants_v2(fn), names


def read(tf, obj, input_shapes=None, keep_dropout: bool = False):
    """The frozen model as a SourceGraph. `keep_dropout` (--for training): its
    Dropout layers are in `source.dropouts` (_marked_dropouts)."""
    dropouts: dict[str, float] = {}
    scopes = Recorded()
    with _marked_dropouts(tf, obj, dropouts if keep_dropout else None):
        frozen, names = _freeze(tf, obj, input_shapes, scopes)
    inputs = [value_name(t.name) for t in frozen.inputs if t.dtype != tf.resource]
    outputs = [value_name(t.name) for t in frozen.outputs]
    source = describe_graph_def(tf, frozen.graph.as_graph_def(), inputs, outputs)
    source.output_aliases = dict(zip(outputs, names))
    for op in source.ops:
        op.scope = scopes.op_scopes.get(op.name, "")
    source.source_modules, source.source_class = scopes.modules, scopes.root_class
    if _is_keras(obj):
        name_constants(source, scopes.captures, handles(obj, weight_names(obj)))
    kept = {op.name for op in source.ops}
    source.dropouts = {name: rate for name, rate in dropouts.items() if name in kept}
    return source


def dropout_layers(obj) -> tuple[list, list]:
    """(layers kept as dropout --for training, other dropout-like layers). Only a
    keras.layers.Dropout itself (no noise_shape) drops elements independently
    like nn.Dropout; SpatialDropout (its subclasses: whole channels),
    GaussianDropout and AlphaDropout are other layers, left the inference
    identity they trace to."""
    if not _is_keras(obj) or not hasattr(obj, "_flatten_layers"):
        return [], []
    import keras
    kept, other = [], []
    for layer in obj._flatten_layers(include_self=False):
        if type(layer) is keras.layers.Dropout and layer.noise_shape is None:
            if layer.rate > 0:
                kept.append(layer)
        elif "Dropout" in type(layer).__name__:
            other.append(layer)
    return kept, other


@contextmanager
def _marked_dropouts(tf, obj, table: dict | None):
    """Traced with training=False, a Dropout layer leaves nothing in the graph.
    With a `table`, each kept one (dropout_layers) returns tf.identity of its
    output, inside the layer's name scope like its other ops, and `table` maps
    that node's name to the layer's rate: the TF Identity mapper makes it the
    IR's dropout(rate)."""
    layers = dropout_layers(obj)[0] if table is not None else []
    for layer in layers:
        layer.call = _marking_call(tf, layer, layer.call, table)
    try:
        yield
    finally:
        for layer in layers:
            del layer.call


def _marking_call(tf, layer, call, table: dict):
    def marked(inputs, training=None):
        out = call(inputs, training=training)
        if training:  # called with training=True in the model itself: left as traced
            return out
        out = tf.identity(out)
        table[out.op.name] = float(layer.rate)
        return out
    return marked


def runner(tf, obj, source: dict):
    """The model as `x2 check` runs it: eagerly, or, when the conversion was
    pruned to inner tensors, the frozen graph it was read from between those
    tensors."""
    if source.get("pruned"):
        return graph_def_runner(tf, _freeze(tf, obj, None)[0].graph.as_graph_def(), source)
    return lambda arrays: flat_outputs(_call(obj, [tf.constant(a) for a in arrays]))
