"""The source's names for a Keras model's weights (issue 47, item 3): each
variable the traced graph reads gets a key in the converted model's module
tree, and the two names a Keras user knows it by.

- `keras`: the layer names from the model down and the variable's name
  (`block_0/conv1/kernel`). Keras 3's own `variable.path` leaves out a
  nested functional model's name (both blocks' kernels are `conv1/kernel`),
  so it is recorded beside it (`path`), not used as the key.
- `h5`: where `model.save_weights("x.weights.h5")` stores it
  (`layers/functional/layers/conv2d/vars/0`): the generated
  load_source_checkpoint reads the file there.
- the key: the module tree's path of the layer (keras_scopes.py:
  `block_0` -> `blocks.0`), the layer's name and the target's name for the
  variable (a kernel is a `weight`, BatchNorm's moving mean a
  `running_mean`), as a torch state_dict key (`blocks.0.conv1.weight`): the
  emitters place the layer there (x2/emitters/source_paths.py) where every
  part is a Python identifier, else x2's own name stands and report.json
  lists the weight under it.
"""
from __future__ import annotations

import hashlib

import numpy as np

from .keras_scopes import _children, _holds_layers, segments

# Keras variable names -> the state_dict leaf a torch layer holds them under
# (paddle's own leaves map back to these in source_paths._SOURCE_LEAF)
_LEAF = {"kernel": "weight", "depthwise_kernel": "weight", "embeddings": "weight",
         "gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
         "moving_variance": "running_var"}


def _own_variables(layer) -> list:
    """A layer's own variables, in the order Keras saves them."""
    own = list(getattr(layer, "_trainable_variables", [])) + \
        list(getattr(layer, "_non_trainable_variables", []))
    return own if own or not hasattr(layer, "weights") else []


def weight_names(model) -> dict[int, dict]:
    """id(variable) -> {"key", "keras", "path", "h5", "shape", "trainable"}
    for every variable of `model` (a Keras model); {} for anything else."""
    if not hasattr(model, "_flatten_layers"):
        return {}
    h5 = _h5_locations(model)
    found: dict[int, dict] = {}

    def note(layer, key_prefix: str, keras_prefix: str) -> None:
        for variable in _own_variables(layer):
            if id(variable) in found:
                continue   # a shared layer's weights keep their first path
            name = variable.name.rpartition("/")[2]
            found[id(variable)] = {
                "key": key_prefix + _LEAF.get(name, name), "keras": keras_prefix + name,
                "path": str(getattr(variable, "path", name)), "h5": h5.get(id(variable), ""),
                "shape": [int(d) for d in variable.shape],
                "trainable": bool(variable.trainable), "sha256": _digest(variable)}

    def walk(layer, key_prefix: str, keras_prefix: str) -> None:
        children = _children(layer)
        named = segments([(c.name, type(c)) for c in children])
        for child, segment in zip(children, named):
            holder = _holds_layers(child)
            key = f"{key_prefix}{segment if holder else child.name}."
            keras = f"{keras_prefix}{child.name}/"
            note(child, key, keras)
            if holder:
                walk(child, key, keras)
            else:   # a recurrent layer's cell, a wrapper's layer: one layer to x2
                for inner in child._flatten_layers(include_self=False):
                    note(inner, key, keras)
    note(model, "", "")
    walk(model, "", "")
    return found


def _digest(variable) -> str:
    """What load_source_checkpoint checks a weight x2 folded into others by
    (keras_checkpoint.py): sha256 of its float32 bytes, row-major."""
    array = np.ascontiguousarray(np.asarray(variable.numpy()), dtype=np.float32)
    return hashlib.sha256(array.tobytes()).hexdigest()


def _h5_locations(model) -> dict[int, str]:
    """id(variable) -> its dataset in the file `model.save_weights` writes
    (Keras 3's format), from Keras's own walk over the model; {} where this
    Keras saves otherwise."""
    try:
        from keras.src.saving import saving_lib
    except ImportError:
        return {}
    out: dict[int, str] = {}

    class Entry:
        def __init__(self, path: str):
            self.path = path

        def __setitem__(self, index, variable):
            out.setdefault(id(variable), f"{self.path}/vars/{index}".lstrip("/"))

    class Recorder(saving_lib.H5IOStore):
        """Takes what Keras would write (the store `_save_state` checks for)."""
        def __init__(self):   # no file
            pass

        def __bool__(self):
            return True

        def make(self, path, metadata=None):
            return Entry(path)

    try:
        saving_lib._save_state(model, Recorder(), None, "", set())
    except Exception:   # another Keras: the names stand, the file is not read
        return {}
    return out


def name_constants(source, captures, names: dict[int, dict]) -> None:
    """`names`: handles()'s. Give the traced graph's constants that hold variables their keys
    (SourceOp.param) and set `source.source_state`. `captures`: the traced
    function's (variable handle, placeholder) pairs; the frozen graph names
    each variable's constant after its placeholder."""
    if not names:
        return
    placeholders = {}
    for handle, placeholder in captures:
        info = names.get(id(handle))
        if info is not None:
            placeholders[placeholder.op.name] = info
    state = {}
    for op in source.ops:
        info = placeholders.get(op.name)
        if info is None or op.const_value is None:
            continue
        op.param, op.trainable = info["key"], info["trainable"]
        state[info["key"]] = {"shape": info["shape"], "tied": info["key"],
                              **{k: info[k] for k in ("keras", "path", "h5", "sha256")}}
    source.source_state = state


def handles(model, names: dict[int, dict]) -> dict[int, dict]:
    """`names` keyed by id() of each variable's resource handle (what the
    traced function captures) instead of the variable."""
    out = {}
    for variable in getattr(model, "weights", []):
        info = names.get(id(variable))
        if info is None:
            continue
        value = getattr(variable, "value", variable)   # Keras 3: the tf.Variable inside
        handle = getattr(value, "handle", None)
        if handle is not None:
            out[id(handle)] = info
    return out
