"""load_source_checkpoint for a model converted from Keras (issue 47, item
3), on the paddle and torch targets: it reads the weights file
`model.save_weights("x.weights.h5")` writes (Keras 3) and lays each weight
out as the converted model holds it, by the tables the conversion recorded:
SOURCE_KEYS, which Keras weight each parameter holds and the axes the
frontend and passes permuted it by (HWIO kernels to OIHW, a Dense kernel
to torch's [out, in]); DERIVED, what x2 computed from Keras weights and how
(x2/ir/recipes.py: an inference BatchNorm folded to a multiplier and an
offset, or into the convolution before it). A Keras weight x2 folded some
other way cannot be refreshed: the file must hold it as it was at
conversion, which the loader checks by its digest (FOLDED), and says to
convert again otherwise."""
from __future__ import annotations

import numpy as np

from ..ir import recipes


def is_keras(state: dict) -> bool:
    """Whether GraphMeta.source_state describes Keras weights (keras_weights.py)."""
    return any("h5" in info for info in state.values())


class _Zeros:
    """Zeros of each source weight's shape, made as a recipe reads them."""
    def __init__(self, state: dict):
        self.state = state

    def __getitem__(self, key: str) -> np.ndarray:
        return np.zeros(self.state[key]["shape"], np.float32)


def _readable(recipe, state: dict, used: set) -> list:
    """A recipe with each weight by its Keras name (noted in `used`), and
    no reshape to the shape its value has already."""
    kind = recipe[0]
    if kind == "w":
        used.add(recipe[1])
        return ["w", state[recipe[1]]["keras"]]
    if kind == "c":
        return recipe
    if kind == "r":
        inner = recipe[2]
        while inner[0] == "r":
            inner = inner[2]
        if list(np.shape(recipes.evaluate(inner, _Zeros(state)))) == list(recipe[1]):
            return _readable(inner, state, used)
        return ["r", recipe[1], _readable(inner, state, used)]
    if kind == "t":
        return ["t", recipe[1], recipe[2], _readable(recipe[3], state, used)]
    return [kind, *(_readable(part, state, used) for part in recipe[1:])]


def footer_lines(tree, framework: str) -> list[str]:
    """WEIGHTS, SOURCE_KEYS, DERIVED, FOLDED and load_source_checkpoint for model.py."""
    used = {source for source, _perm, _shape in tree.layouts.values()}
    rows = [f"    {key!r}: ({tree.state[source]['keras']!r}, "
            f"{None if perm is None else tuple(perm)}, {tuple(shape)}),"
            for key, (source, perm, shape) in tree.layouts.items()]
    derived = [f"    {key!r}: ({_readable(recipe, tree.state, used)!r}, {tuple(shape)}),"
               for key, (recipe, shape) in tree.recipes.items()]
    weights = [f"    {tree.state[key]['keras']!r}: {tree.state[key]['h5']!r},"
               for key in tree.state if key in used]
    folded = [f"    {info['keras']!r}: ({info['h5']!r}, {info['sha256']!r}),"
              for source, info in tree.state.items()
              if source not in used and info.get("h5") and info.get("sha256")]
    return ["", "", "# Keras weight -> where model.save_weights() stores it",
            "WEIGHTS = {", *weights, "}",
            "# parameter or buffer -> (the Keras weight it holds, the axes x2 permuted it by, "
            "its shape here)", "SOURCE_KEYS = {", *rows, "}",
            "# parameter or buffer -> (how x2 computed it from Keras weights, its shape here):",
            "# [\"w\", weight], [\"c\", values, dtype], [\"r\", shape, x] (reshape), "
            "[\"t\", perm, shape, x]", "# (reshape, transpose) or [op, x, ...]",
            "DERIVED = {", *derived, "}",
            "# Keras weights x2 folded otherwise (the file must hold them as they were; "
            "sha256 of", "# their float32 bytes)",
            "FOLDED = {", *folded, "}", "", "", LOADER.format(**_FRAMEWORK[framework])]


_FRAMEWORK = {
    "paddle": {"state": "model.state_dict()",
               "put": "state[name] = paddle.to_tensor(array).astype(state[name].dtype)",
               "set": "model.set_state_dict(state)"},
    "torch": {"state": "{k: v.clone() for k, v in model.state_dict().items()}",
              "put": "state[name] = torch.from_numpy(array).to(state[name].dtype)",
              "set": "model.load_state_dict(state, strict=True)"},
}

LOADER = '''def load_source_checkpoint(path):
    """The model with the weights of a Keras weights file of its source
    (`model.save_weights("x.weights.h5")`, Keras 3), each laid out as this
    model holds it (SOURCE_KEYS) or computed from them as x2 did (DERIVED)."""
    import hashlib

    import numpy as np
    try:
        import h5py
    except ImportError as exc:
        raise ImportError("load_source_checkpoint reads Keras weights files with h5py: "
                          "pip install h5py") from exc
    with h5py.File(path, "r") as source:
        missing = [name for name, place in WEIGHTS.items() if place not in source]
        if missing:
            raise ValueError(f"{{path}} does not hold the Keras weights {{missing[:5]}} "
                             f"(is it this model's save_weights file?)")
        arrays = {{name: np.asarray(source[place], dtype=np.float32)
                  for name, place in WEIGHTS.items()}}
        changed = [name for name, (place, sha) in FOLDED.items() if place in source and
                   hashlib.sha256(np.ascontiguousarray(source[place], dtype=np.float32)
                                  .tobytes()).hexdigest() != sha]
    if changed:
        raise ValueError(f"{{path}}: x2 folded the Keras weights {{changed[:5]}} into others "
                         f"when it converted the model, and they changed since: convert the "
                         f"model again")
    ops = {{"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
           "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt, "neg": np.negative,
           "reciprocal": lambda x: 1 / x}}

    def derive(recipe):
        kind = recipe[0]
        if kind == "w":
            return arrays[recipe[1]]
        if kind == "c":
            return np.asarray(recipe[1], dtype=recipe[2])
        if kind == "r":
            return derive(recipe[2]).reshape(recipe[1])
        if kind == "t":
            return derive(recipe[3]).reshape(recipe[2]).transpose(recipe[1])
        return ops[kind](*(derive(part) for part in recipe[1:]))

    model = load_model()
    state = {state}
    laid_out = {{name: (["r", shape, ["w", keras_name]] if perm is None else
                       ["t", list(perm), [shape[i] for i in np.argsort(perm)],
                        ["w", keras_name]], shape)
                for name, (keras_name, perm, shape) in SOURCE_KEYS.items()}}
    for name, (recipe, shape) in {{**laid_out, **DERIVED}}.items():
        try:
            array = np.ascontiguousarray(derive(recipe), dtype=np.float32).reshape(shape)
        except ValueError as exc:
            raise ValueError(f"{{path}}: the weights for {{name}} do not fit its shape "
                             f"{{list(shape)}} ({{exc}})") from exc
        {put}
    {set}
    return model'''
