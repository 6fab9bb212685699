"""Models the hostile-input tests build for themselves, each in its own process
(`python tests/hostile_models.py NAME OUT`): torch and TensorFlow never load
into the pytest process.

- `pt2 OUT_DIR`: a tiny nn.Module saved with torch.export.save (OUT_DIR/tiny.pt2),
  and the same program with one weight stored as a pickle the way
  torch.export.save stores tensor subclasses (OUT_DIR/pickled_weight.pt2: a
  legitimate pickle that weights-only loading reads).
- `keras_custom OUT_DIR`: OUT_DIR/custom_layers.py (a registered custom Keras
  layer and activation; importing it writes OUT_DIR/imported) and
  OUT_DIR/custom.keras that uses both. The marker written while building is
  removed again."""
from __future__ import annotations

import io
import json
import os
import sys
import zipfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def rewrite_zip(src: Path, dst: Path, edit) -> None:
    """Copy a zip archive, letting edit(entries) change the {name: bytes} dict."""
    with zipfile.ZipFile(src) as zin:
        entries = {info.filename: zin.read(info) for info in zin.infolist()}
    edit(entries)
    with zipfile.ZipFile(dst, "w") as zout:
        for name, data in entries.items():
            zout.writestr(name, data)


def entry(entries: dict, suffix: str) -> str:
    """The one archive name ending in `suffix` (names start with the archive's folder)."""
    found = [name for name in entries if name.endswith(suffix)]
    assert len(found) == 1, (suffix, sorted(entries))
    return found[0]


def pt2(out):
    import torch

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)
            self.register_buffer("shift", torch.linspace(-1.0, 1.0, 3))

        def forward(self, x):
            return torch.relu(self.fc(x)) + self.shift

    torch.manual_seed(0)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    module = Tiny().eval()
    program = torch.export.export(module, (torch.randn(2, 4),))
    torch.export.save(program, str(out / "tiny.pt2"))

    def pickle_weight(entries):
        config_name = entry(entries, "data/weights/model_weights_config.json")
        config = json.loads(entries[config_name])
        meta = config["config"]["fc.weight"]
        meta["use_pickle"] = True
        buffer = io.BytesIO()
        torch.save(torch.nn.Parameter(module.fc.weight.detach().clone()), buffer)
        entries[entry(entries, "data/weights/" + meta["path_name"])] = buffer.getvalue()
        entries[config_name] = json.dumps(config).encode()

    rewrite_zip(out / "tiny.pt2", out / "pickled_weight.pt2", pickle_weight)


CUSTOM_LAYERS = '''
import os
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "imported"), "w").write("ran")
import keras


@keras.saving.register_keras_serializable(package="x2hostile")
class ScaleBy(keras.layers.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


@keras.saving.register_keras_serializable(package="x2hostile")
def shifted_relu(x):
    return keras.ops.relu(x - 0.1)
'''


def keras_custom(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "custom_layers.py").write_text(CUSTOM_LAYERS)
    sys.path.insert(0, str(out))
    import keras
    import custom_layers
    inp = keras.Input((4,), name="x")
    y = custom_layers.ScaleBy(name="scale_by")(inp)
    y = keras.layers.Dense(3, activation=custom_layers.shifted_relu, name="head")(y)
    keras.Model(inp, y).save(str(out / "custom.keras"))
    (out / "imported").unlink()


MODELS = {"pt2": pt2, "keras_custom": keras_custom}

if __name__ == "__main__":
    MODELS[sys.argv[1]](sys.argv[2])
