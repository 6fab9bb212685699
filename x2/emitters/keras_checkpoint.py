"""load_source_checkpoint for a model converted from Keras (issue 47, item
3), on the paddle and torch targets: it reads the weights file
`model.save_weights("x.weights.h5")` writes (Keras 3) and lays each weight
out as the converted model holds it, by the table the conversion recorded
(SourceTree.layouts: which Keras weight each parameter holds and the axes
the frontend and passes permuted it by: HWIO kernels to OIHW, a Dense
kernel to torch's [out, in]). A source weight x2 folded into others (an
inference BatchNorm's statistics, scaled into a multiplier) cannot be
refreshed that way: the file must hold it as it was at conversion, which
the loader checks by its digest, and says to convert again otherwise."""
from __future__ import annotations

def is_keras(state: dict) -> bool:
    """Whether GraphMeta.source_state describes Keras weights (keras_weights.py)."""
    return any("h5" in info for info in state.values())


def footer_lines(tree, framework: str) -> list[str]:
    """SOURCE_KEYS, FOLDED and load_source_checkpoint for model.py."""
    used = {source for source, _perm, _shape in tree.layouts.values()}
    rows = []
    for key, (source, perm, shape) in tree.layouts.items():
        info = tree.state[source]
        rows.append(f"    {key!r}: ({info['keras']!r}, {info['h5']!r}, "
                    f"{None if perm is None else tuple(perm)}, {tuple(shape)}),")
    folded = [f"    {info['keras']!r}: ({info['h5']!r}, {info['sha256']!r}),"
              for source, info in tree.state.items()
              if source not in used and info.get("h5") and info.get("sha256")]
    return ["", "", "# parameter or buffer -> (the Keras weight it holds, where "
            "model.save_weights() stores it,", "# the axes x2 permuted it by, its shape here)",
            "SOURCE_KEYS = {", *rows, "}",
            "# Keras weights x2 folded into others (the checkpoint must hold them as they "
            "were;", "# their sha256 as float32)",
            "FOLDED = {", *folded, "}", "", "", _LOADER.format(**_FRAMEWORK[framework])]


_FRAMEWORK = {
    "paddle": {"state": "model.state_dict()",
               "put": "state[name] = paddle.to_tensor(array).astype(state[name].dtype)",
               "set": "model.set_state_dict(state)"},
    "torch": {"state": "{k: v.clone() for k, v in model.state_dict().items()}",
              "put": "state[name] = torch.from_numpy(array).to(state[name].dtype)",
              "set": "model.load_state_dict(state, strict=True)"},
}

_LOADER = '''def load_source_checkpoint(path):
    """The model with the weights of a Keras weights file of its source
    (`model.save_weights("x.weights.h5")`, Keras 3), each laid out as this
    model holds it (SOURCE_KEYS); what the file does not hold comes from
    load_model()."""
    import hashlib

    import numpy as np
    try:
        import h5py
    except ImportError as exc:
        raise ImportError("load_source_checkpoint reads Keras weights files with h5py: "
                          "pip install h5py") from exc
    with h5py.File(path, "r") as source:
        missing = [name for name, place, _, _ in SOURCE_KEYS.values() if place not in source]
        if missing:
            raise ValueError(f"{{path}} does not hold the Keras weights {{missing[:5]}} "
                             f"(is it this model's save_weights file?)")
        arrays = {{name: np.asarray(source[place], dtype=np.float32)
                  for name, (_, place, _, _) in SOURCE_KEYS.items()}}
        changed = [name for name, (place, sha) in FOLDED.items() if place in source and
                   hashlib.sha256(np.ascontiguousarray(source[place], dtype=np.float32)
                                  .tobytes()).hexdigest() != sha]
    if changed:
        raise ValueError(f"{{path}}: x2 folded the Keras weights {{changed[:5]}} into others "
                         f"when it converted the model, and they changed since: convert the "
                         f"model again (or with --for training, which keeps them)")
    model = load_model()
    state = {state}
    for name, (keras_name, _, perm, shape) in SOURCE_KEYS.items():
        array = arrays[name]
        if perm is not None:  # the Keras tensor, reshaped if x2 did, then transposed
            array = array.reshape([shape[i] for i in np.argsort(perm)]).transpose(perm)
        if array.size != int(np.prod(shape)):
            raise ValueError(f"{{path}}: {{keras_name}} has shape {{list(arrays[name].shape)}}, "
                             f"which does not fit {{name}} {{list(shape)}}")
        array = np.ascontiguousarray(array.reshape(shape))
        {put}
    {set}
    return model'''
