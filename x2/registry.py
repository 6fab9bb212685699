"""Mapper registries: one per source framework, keyed on op type (and version).

Mappers live in the top-level `mappers/` package, one module per op family,
and register themselves with a decorator:

    @tf_mapper("Relu", "Relu6")
    def relu(ctx, op): ...

A registry is filled by importing its mapper package (`load_mappers`), which
only imports numpy: mappers never import a framework.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class MapperEntry:
    op_type: str
    fn: Callable
    since: int
    until: int | None  # exclusive; None: still current


class Registry:
    def __init__(self, framework: str, package: str):
        self.framework = framework
        self.package = package
        self._entries: dict[str, list[MapperEntry]] = {}
        self._loaded = False

    def register(self, *op_types: str, since: int = 1, until: int | None = None):
        def decorate(fn: Callable) -> Callable:
            for op_type in op_types:
                entries = self._entries.setdefault(op_type, [])
                clash = next((e for e in entries if since < (e.until or 1 << 30) and
                              e.since < (until or 1 << 30)), None)
                if clash is not None:
                    # two mappers for one op: which one runs would depend on import order
                    raise ValueError(f"{self.framework} op {op_type!r} has two mappers: "
                                     f"{clash.fn.__module__}.{clash.fn.__name__} and "
                                     f"{fn.__module__}.{fn.__name__}")
                entries.append(MapperEntry(op_type, fn, since, until))
            return fn
        return decorate

    def load_mappers(self) -> "Registry":
        if not self._loaded:
            package = importlib.import_module(self.package)
            for info in pkgutil.iter_modules(package.__path__):
                # api_docs*: API-difference metadata (x2/api_diff.py), not mappers.
                if not info.name.startswith("api_docs"):
                    importlib.import_module(f"{self.package}.{info.name}")
            self._loaded = True
        return self

    def lookup(self, op_type: str, version: int = 1) -> Callable | None:
        self.load_mappers()
        for entry in self._entries.get(op_type, []):
            if entry.since <= version and (entry.until is None or version < entry.until):
                return entry.fn
        return None

    def supported(self) -> dict[str, list[MapperEntry]]:
        self.load_mappers()
        return dict(sorted(self._entries.items()))


TF = Registry("tensorflow", "mappers.tf")
tf_mapper = TF.register

# PyTorch mappers are keyed on the ATen op target string ("aten.relu.default").
TORCH = Registry("pytorch", "mappers.torch")
torch_mapper = TORCH.register

# ONNX mappers are versioned: `since`/`until` are opsets of the default domain.
ONNX = Registry("onnx", "mappers.onnx")
onnx_mapper = ONNX.register
