"""x2 as an ONNX backend (`onnx.backend.base.Backend`): run an ONNX model in
PyTorch or Paddle by converting it with x2 and loading the generated model
the way a user would (model.py's `load_model`).

    from x2.onnx_backend import X2Backend
    rep = X2Backend.prepare(onnx.load("model.onnx"), target="paddle")
    outputs = rep.run([x])

onnx's own `onnx.backend.test.BackendTest` runs its node suite through this
class (tests/test_onnx_conformance.py, tools/onnx_conformance.py).

The ONNX reader and the torch writer run in this process (no TensorFlow is
involved, and the framework import is paid once, not per conversion); the
paddle writer too, unless TensorFlow is already imported here (the two
frameworks segfault in one process), in which case it runs in a worker.
"""
from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from .convert import convert
from .emitters.codegen import import_generated
from .errors import X2Error
from .process.isolation import in_process

TARGETS = ("torch", "paddle")

# The refusal of a value that must be a constant (x2/frontends/common.py require_const).
_NEEDS_CONSTANT = re.compile(r"must be a constant at conversion time, but '(.+?)' is "
                             r"computed by the graph")
# Past this many frozen-value sets, a model whose "constant" inputs change
# every call is refused rather than converted again and again.
MAX_SPECIALIZATIONS = 16
# Frozen inputs are parameters (axes, sizes, pads, bounds), not data tensors.
MAX_FROZEN_SIZE = 64


class X2Rep(BackendRep):
    """A converted model, loaded: `run(inputs)` -> outputs as numpy arrays."""

    def __init__(self, model, target: str, inputs: list[str], outputs: list[str], report):
        self.model, self.target, self.report = model, target, report
        self.input_names, self.output_names = inputs, outputs

    def run(self, inputs, **kwargs) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, dict):
            missing = [n for n in self.input_names if n not in inputs]
            if missing:
                raise X2Error(f"inputs missing: {', '.join(missing)}")
            arrays = [inputs[n] for n in self.input_names]
        else:
            arrays = list(inputs if isinstance(inputs, (list, tuple)) else [inputs])
            if len(arrays) != len(self.input_names):
                raise X2Error(f"the model takes {len(self.input_names)} inputs "
                              f"({', '.join(self.input_names)}); {len(arrays)} were given")
        arrays = [np.asarray(a) for a in arrays]
        if self.target == "torch":
            import torch
            with torch.no_grad():
                # np.array, not np.ascontiguousarray, which makes a 0-d input 1-d
                result = self.model(*[torch.from_numpy(np.array(a, order="C")) for a in arrays])
        else:
            import paddle
            result = self.model(*[paddle.to_tensor(a) for a in arrays])
        result = result if isinstance(result, (list, tuple)) else [result]
        return tuple(_to_numpy(r) for r in result)


class X2DeferredRep(BackendRep):
    """A model converted at `run`, with the inputs in `frozen` (those x2
    needs as constants) taken as initializers of their run-time values; one
    converted model per distinct set of values."""

    def __init__(self, model, target: str, frozen: list[str], kwargs: dict):
        self.model, self.target, self.kwargs = model, target, kwargs
        initializers = {i.name for i in model.graph.initializer}
        self.input_names = [i.name for i in model.graph.input if i.name not in initializers]
        self.frozen = frozen
        self.converted: dict[tuple, X2Rep] = {}

    def run(self, inputs, **kwargs) -> tuple[np.ndarray, ...]:
        if isinstance(inputs, dict):
            values = dict(inputs)
        else:
            arrays = list(inputs if isinstance(inputs, (list, tuple)) else [inputs])
            if len(arrays) != len(self.input_names):
                raise X2Error(f"the model takes {len(self.input_names)} inputs "
                              f"({', '.join(self.input_names)}); {len(arrays)} were given")
            values = dict(zip(self.input_names, arrays))
        missing = [n for n in self.input_names if n not in values]
        if missing:
            raise X2Error(f"inputs missing: {', '.join(missing)}")
        values = {n: np.asarray(values[n]) for n in self.input_names}
        for _ in range(len(self.input_names) + 1):  # each round freezes more inputs
            large = [n for n in self.frozen if values[n].size > MAX_FROZEN_SIZE]
            if large:  # a data tensor, not an axes/sizes-like parameter
                raise X2Error(f"x2 needs input(s) {', '.join(large)} as constants at "
                              f"conversion time, and they are data ({MAX_FROZEN_SIZE}+ values)")
            key = tuple((n, values[n].dtype.str, values[n].shape, values[n].tobytes())
                        for n in self.frozen)
            rep = self.converted.get(key)
            if rep is None:
                if len(self.converted) >= MAX_SPECIALIZATIONS:
                    raise X2Error(f"inputs {', '.join(self.frozen)} must be constants for "
                                  f"x2; they took {MAX_SPECIALIZATIONS} different values "
                                  f"already")
                fixed = _freeze(self.model, {n: values[n] for n in self.frozen})
                rep = X2Backend.prepare(fixed, "CPU", self.target, **self.kwargs)
                if isinstance(rep, X2DeferredRep):  # another value x2 needs as a constant
                    self.frozen += [n for n in rep.frozen if n not in self.frozen]
                    self.converted.clear()
                    continue
                self.converted[key] = rep
            return rep.run([values[n] for n in rep.input_names])
        raise X2Error(f"x2 needs inputs {', '.join(self.frozen)} as constants")  # unreachable


def _freeze(model, values: dict[str, np.ndarray]):
    """A copy of `model` with these graph inputs as initializers."""
    from onnx import numpy_helper
    fixed = onnx.ModelProto()
    fixed.CopyFrom(model)
    kept = [i for i in fixed.graph.input if i.name not in values]
    del fixed.graph.input[:]
    fixed.graph.input.extend(kept)
    fixed.graph.initializer.extend(numpy_helper.from_array(np.asarray(v), n)
                                   for n, v in values.items())
    return fixed


def _inputs_behind(model, value: str) -> list[str]:
    """The graph inputs `value` is computed from, not counting those it
    depends on only through their shape (Shape, Size)."""
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    producer = {out: node for node in model.graph.node for out in node.output}
    found, todo, seen = set(), [value], set()
    while todo:
        name = todo.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if name in inputs:
            found.add(name)
        node = producer.get(name)
        if node is not None and node.op_type not in ("Shape", "Size"):
            todo.extend(node.input)
    return [n for n in inputs if n in found]


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):  # torch
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy"):  # paddle
        return np.asarray(value.numpy())
    return np.asarray(value)


class X2Backend(Backend):
    @classmethod
    def prepare(cls, model, device: str = "CPU", target: str = "torch",
                **kwargs) -> X2Rep | X2DeferredRep:
        """Convert `model` (a ModelProto or a path to a .onnx file) to `target`
        and load it. Raises an X2Error subclass when x2 refuses the model;
        a model that x2 refuses only for want of input values as constants
        is converted at `run` (X2DeferredRep). Convert's verify judges it by
        onnxruntime (ONNX's reference evaluator where onnxruntime has no
        kernel), run in this process like the conversion itself."""
        if target not in TARGETS:
            raise X2Error(f"target {target!r}: choose from {', '.join(TARGETS)}")
        if not cls.supports_device(device):
            raise X2Error(f"device {device!r}: the ONNX backend runs on CPU")
        folder = Path(tempfile.mkdtemp(prefix="x2-onnx-backend-"))
        try:
            if isinstance(model, (str, Path)):
                path = str(model)
                model = onnx.load(path, load_external_data=False)
            else:
                path = str(folder / "model.onnx")
                onnx.save_model(model, path)
            out = folder / "converted"
            # The backend runs many small models: framework steps in this
            # process (never paddle beside TensorFlow), the verify's included.
            tasks = {"onnx.read", "torch.emit", "onnx.run", "torch.parity_run", "torch.locate"}
            if "tensorflow" not in sys.modules:
                tasks |= {"paddle.emit", "paddle.parity_run", "paddle.locate"}
            try:
                with in_process(tasks):
                    report = convert(path, str(out), source="onnx", target=target,
                                     **kwargs)
            except X2Error as exc:
                needed = _NEEDS_CONSTANT.search(str(exc))
                frozen = _inputs_behind(model, needed.group(1)) if needed else []
                if not frozen or type(exc).__name__ in ("InternalError", "StepCrashed"):
                    raise
                return X2DeferredRep(model, target, frozen, kwargs)
            loaded = import_generated(out / "model.py").load_model()
        finally:  # the weights are loaded: the files are no longer needed
            shutil.rmtree(folder, ignore_errors=True)
        initializers = {i.name for i in model.graph.initializer}
        source_inputs = [i.name for i in model.graph.input if i.name not in initializers]
        converted = [i["name"] for i in report.inputs]
        if converted != source_inputs:
            raise X2Error(f"the converted model takes inputs {converted}, the ONNX model "
                          f"{source_inputs}")
        return X2Rep(loaded, target, converted, [o["name"] for o in report.outputs], report)

    @classmethod
    def for_target(cls, target: str) -> type[X2Backend]:
        """This backend with another default target, for runners that call
        `prepare(model, device)` (onnx's BackendTest)."""
        if target not in TARGETS:
            raise X2Error(f"target {target!r}: choose from {', '.join(TARGETS)}")

        class TargetBackend(cls):
            @classmethod
            def prepare(cls, model, device: str = "CPU", target: str = target, **kwargs):
                return X2Backend.prepare(model, device, target, **kwargs)
        TargetBackend.__name__ = f"X2Backend_{target}"
        return TargetBackend

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return str(device).upper().startswith("CPU")


prepare = X2Backend.prepare
run_model = X2Backend.run_model
supports_device = X2Backend.supports_device
