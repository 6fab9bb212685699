"""The table an emitter looks its op functions up in: IR op -> function.

One class for every target (Paddle, PyTorch, ONNX). A key registered twice
is an error, as in onnx2torch: with a silent overwrite, which of two
functions writes an op would depend on import order."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping


class OpRegistry(Mapping):
    def __init__(self, target: str, *bases: Mapping):
        """`bases`: registries whose entries this one starts with (the shared
        Python-code ops for Paddle and PyTorch); they cannot be replaced."""
        self.target = target
        self._fns: dict[str, Callable] = {}
        for base in bases:
            for name, fn in base.items():
                self._add(name, fn)

    def register(self, *names: str):
        def decorate(fn: Callable) -> Callable:
            for name in names:
                self._add(name, fn)
            return fn
        return decorate

    def _add(self, name: str, fn: Callable) -> None:
        if name in self._fns:
            old = self._fns[name]
            raise ValueError(f"{self.target} emitter: IR op {name!r} registered twice "
                             f"({old.__module__}.{old.__qualname__} and "
                             f"{fn.__module__}.{fn.__qualname__})")
        self._fns[name] = fn

    def __getitem__(self, name: str) -> Callable:
        return self._fns[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fns)

    def __len__(self) -> int:
        return len(self._fns)

    def check(self, graph) -> None:
        """Raise one error listing every op of `graph` this target cannot write."""
        from ..errors import ConversionError
        missing: dict[str, list[str]] = {}
        for node in graph.nodes:
            if node.op not in self._fns:
                missing.setdefault(node.op, []).append(node.source.get("name", node.name))
        if missing:
            listing = "; ".join(f"{op} x{len(n)} (e.g. from '{n[0]}')"
                                for op, n in missing.items())
            raise ConversionError(f"the {self.target} emitter has no code for IR op(s): "
                                  f"{listing}")
