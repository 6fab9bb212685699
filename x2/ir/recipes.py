"""How a constant x2 computed from a Keras source's weights follows from
them (issue 47, item 3: load_source_checkpoint refreshes what x2 folded).
An inference BatchNorm is folded to a multiplier gamma * rsqrt(var + eps)
and an offset, and a convolution before it takes the multiplier into its
weight: such a value's Origin carries a recipe, recorded where the frontend
or a pass folded it, which the generated loader evaluates on the weights
of a new checkpoint (x2/emitters/keras_checkpoint.py).

A recipe is a nested JSON list:
  ["w", KEY]                a source weight (its GraphMeta.source_state key)
  ["c", VALUES, DTYPE]      a small constant x2 or the model holds (an epsilon)
  ["r", SHAPE, R]           R reshaped
  ["t", PERM, SHAPE, R]     R reshaped to SHAPE, then transposed by PERM
  [OP, R1, R2]              OP in BINARY, numpy broadcasting
  [OP, R]                   OP in UNARY
Only values computed from Keras weights get one (a torch source's are
loaded as they are)."""
from __future__ import annotations

import numpy as np

from .provenance import Origin

BINARY = {"add", "sub", "mul", "div"}
UNARY = {"rsqrt", "sqrt", "neg", "reciprocal"}
# ops that keep the elements in order (a float cast of float32 weights too)
RESHAPING = {"reshape", "squeeze", "unsqueeze", "identity", "cast"}
# a constant no weight names, written into the recipe as it is, up to this size
_INLINE = 64


def recipe_of(graph, value: str) -> list | None:
    """The recipe of constant `value` in its own shape, or None where it is
    neither a Keras weight, nor computed from them, nor small."""
    array = graph.constants.get(value)
    if array is None:
        return None
    shape = [int(d) for d in array.shape]
    origin = graph.origin.get(value)
    if origin is not None and origin.recipe is not None:
        return ["r", shape, origin.recipe] if origin.perm is None else None
    if origin is not None and "keras" in graph.meta.source_state.get(origin.param, {}):
        if origin.perm is None:
            return ["r", shape, ["w", origin.param]]
        before = [shape[i] for i in np.argsort(origin.perm)]
        return ["t", list(origin.perm), before, ["w", origin.param]]
    if array.size <= _INLINE and array.dtype.kind == "f":
        return ["c", array.tolist(), str(array.dtype)]
    return None


def _named(recipe) -> bool:
    """Whether a recipe reads a weight (else it is x2's own constant)."""
    if not isinstance(recipe, list) or not recipe:
        return False
    return recipe[0] == "w" or any(_named(part) for part in recipe[1:])


def note(graph, output: str, recipe: list | None) -> bool:
    """Give `output` the recipe, where it reads a Keras weight."""
    if recipe is None or not _named(recipe):
        return False
    graph.origin[output] = Origin(output, recipe=recipe)
    return True


def note_folded(graph, op: str, inputs: list[str], output: str) -> bool:
    """Where `op` on constants `inputs` was evaluated into constant `output`:
    its recipe, if every input has one and one reads a Keras weight."""
    if op not in BINARY | UNARY | RESHAPING or not graph.meta.source_state:
        return False
    parts = [recipe_of(graph, v) for v in inputs]
    if op in RESHAPING:
        array = graph.constants.get(output)
        if not parts or parts[0] is None or array is None or array.dtype.kind != "f":
            return False
        return note(graph, output, ["r", [int(d) for d in array.shape], parts[0]])
    count = 2 if op in BINARY else 1
    if len(parts) != count or any(p is None for p in parts):
        return False
    return note(graph, output, [op, *parts])


def evaluate(recipe, weights: dict) -> np.ndarray:
    """The recipe's value, `weights` being KEY -> array (x2's own check of
    what the generated loader does: keras_checkpoint.LOADER's `_derive`)."""
    kind = recipe[0]
    if kind == "w":
        return np.asarray(weights[recipe[1]], dtype=np.float32)
    if kind == "c":
        return np.asarray(recipe[1], dtype=recipe[2])
    if kind == "r":
        return evaluate(recipe[2], weights).reshape(recipe[1])
    if kind == "t":
        return evaluate(recipe[3], weights).reshape(recipe[2]).transpose(recipe[1])
    args = [evaluate(part, weights) for part in recipe[1:]]
    return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
            "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt, "neg": np.negative,
            "reciprocal": lambda x: 1 / x}[kind](*args)
