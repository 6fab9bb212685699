"""TF2 SavedModel reader that loads it with TensorFlow: pick a signature,
freeze its variables into constants, let TF infer every tensor's shape and
describe the frozen graph. Most SavedModels are read without TensorFlow
(direct.py); formats.py decides which reader runs."""
from __future__ import annotations

from pathlib import Path

from ...contracts import ReadRequest
from ...errors import ModelLoadError, SelectionError
from . import savedmodel_scopes
from .common import (check_savedmodel_dir, describe_graph_def, first_line,
                        flat_outputs, pick_signature, quiet_tf, graph_def_runner, value_name)


def load_signature(path: str, signature: str | None):
    """Return (tf, loaded object, signature name, concrete function)."""
    path_obj = Path(path)
    check_savedmodel_dir(path_obj)
    tf = quiet_tf()
    try:
        loaded = tf.saved_model.load(str(path_obj))
    except Exception as exc:  # TF raises many types for corrupt files
        raise ModelLoadError(f"{path}: TensorFlow could not load this SavedModel: "
                             f"{first_line(exc)}") from exc
    sigs = dict(loaded.signatures)
    signature = pick_signature(sigs, signature, path)
    return tf, loaded, signature, sigs[signature]


def retrace(tf, fn, input_shapes: dict[str, list[int]]):
    """Specialize a signature to user-given input shapes."""
    specs = dict(sorted(fn.structured_input_signature[1].items()))   # (see read)
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


def read(path: str, request: ReadRequest):
    tf, loaded, _signature, fn = load_signature(path, request.signature)
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)

    # sorted, as TensorFlow flattens the kwargs (the dict's own order is a
    # protobuf map's, which changes from one run to the next)
    input_names = sorted(fn.structured_input_signature[1])
    output_keys = sorted(fn.structured_outputs)  # the order TF flattens them in
    if request.input_shapes:
        fn = retrace(tf, fn, request.input_shapes)
    frozen = convert_variables_to_constants_v2(fn)
    graph_def = frozen.graph.as_graph_def()
    placeholder_names = [value_name(t.name) for t in frozen.inputs
                         if t.dtype != tf.resource]
    output_values = [value_name(t.name) for t in frozen.outputs]
    # frozen.inputs follow the signature's flattened (sorted) kwargs order.
    sorted_inputs = sorted(input_names)
    aliases = {ph: ph if ph in input_names else sorted_inputs[i]
               for i, ph in enumerate(placeholder_names)}
    inputs = sorted(placeholder_names, key=lambda ph: input_names.index(aliases[ph]))
    source = describe_graph_def(tf, graph_def, inputs, output_values)
    source.input_aliases = aliases
    source.output_aliases = dict(zip(output_values, output_keys))
    # Keras layers that hold layers, by name (the frozen graph keeps no variables)
    savedmodel_scopes.record(source, [v.name.rpartition(":")[0]
                                      for v in getattr(loaded, "variables", ())])
    return source, {}


def runner(path: str, request: ReadRequest, source: dict, names):
    """The signature as a function of numpy inputs (loaded once); a pruned
    model runs the frozen graph between the tensors it was cut at."""
    tf, loaded, _signature, fn = load_signature(path, request.signature)
    if source.get("pruned"):
        from tensorflow.python.framework.convert_to_constants import (
            convert_variables_to_constants_v2)
        graph_def = convert_variables_to_constants_v2(fn).graph.as_graph_def()
        return graph_def_runner(tf, graph_def, source)
    # `loaded` owns the signature's variables: the function keeps it alive.
    return lambda arrays, keep=loaded: flat_outputs(
        fn(**{k: tf.constant(v) for k, v in zip(names, arrays)}))
