"""Dims asked dynamic that the model's code fixes (issue 49): `x.view(2, -1)`
fixes the batch, `if x.shape[1] == 8` the sequence. torch.export refuses
those under Dim.DYNAMIC ("Constraints violated ... specialized it to be a
constant"); x2 then exports again with Dim.AUTO, which keeps dynamic what
torch can and fixes the rest at the example size, and records which input
dims were fixed and the line of the model that fixed each (report.json
`source.specialized_dims`, a warning on the CLI).

The line comes from torch's own shape log: when a symbol is fixed
(`set_replacement s0 = 2 (range_refined_to_singleton)`), the handler below
runs inside the guard that fixed it, so the innermost frame outside torch
is the model's code."""
from __future__ import annotations

import logging
import re
import sys
import sysconfig

_SHAPES_LOG = "torch.fx.experimental.symbolic_shapes"
_FIXED = re.compile(r"set_replacement (s\d+) = (-?\d+) \(range_refined_to_singleton\)")
_CREATED = re.compile(r"create_symbol (s\d+) = \d+ for (.+?) \[")


def is_specialization(exc: Exception) -> bool:
    """Whether torch.export refused a dim marked dynamic because the code fixes it."""
    text = str(exc)
    return "Constraints violated" in text and "specialized it to be a constant" in text


def export_auto(torch, obj, args, kwargs, dynamic, names: list[str]):
    """(program, specialized dims) of torch.export with every dynamic dim of
    `dynamic` (by input, in `names` order) made Dim.AUTO. Each specialized
    dim: {"input", "axis", "size", "why"}."""
    auto = _as_auto(torch, dynamic)
    fixed_at: dict[str, str] = {}   # symbol -> the model's line that fixed it
    sources: dict[str, str] = {}    # symbol -> torch's name of the dim (L['x'].size()[0])
    handler = _Listener(fixed_at, sources)
    logger = logging.getLogger(_SHAPES_LOG)
    # torch's own console handlers would print every guard: only ours listens
    saved = logger.level, logger.propagate, list(logger.handlers)
    for other in saved[2]:
        logger.removeHandler(other)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        with torch.no_grad():
            program = torch.export.export(obj, args, kwargs=kwargs, dynamic_shapes=auto)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        for other in saved[2]:
            logger.addHandler(other)
    return program, _specialized(program, dynamic, names, fixed_at, sources)


def _as_auto(torch, dynamic):
    if isinstance(dynamic, dict):
        return {k: _as_auto(torch, v) for k, v in dynamic.items()}
    if isinstance(dynamic, (list, tuple)):
        return type(dynamic)(_as_auto(torch, v) for v in dynamic)
    return torch.export.Dim.AUTO if dynamic is torch.export.Dim.DYNAMIC else dynamic


class _Listener(logging.Handler):
    def __init__(self, fixed_at: dict, sources: dict):
        super().__init__(logging.INFO)
        self.fixed_at, self.sources = fixed_at, sources

    def emit(self, record):
        message = record.getMessage()
        created = _CREATED.match(message)
        if created:
            self.sources[created[1]] = created[2]
        fixed = _FIXED.match(message)
        if fixed and fixed[1] not in self.fixed_at:
            self.fixed_at[fixed[1]] = _model_line()


def _not_the_model() -> tuple[str, ...]:
    """Where code that is not the model's lives: the standard library, torch,
    sympy and x2 (folders, each ending in "/")."""
    import os
    import sympy
    import torch
    folders = [sysconfig.get_paths()["stdlib"], os.path.dirname(torch.__file__),
               os.path.dirname(sympy.__file__), os.path.dirname(os.path.dirname(__file__))]
    return tuple(f.replace("\\", "/").rstrip("/") + "/" for f in folders)


def _model_line() -> str:
    """The innermost frame of the model's own code on the current stack."""
    skip = _not_the_model()
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename.replace("\\", "/")
        if not path.startswith(skip) and not path.startswith("<"):
            line = _source_line(frame)
            return f"{path.rsplit('/', 1)[-1]}:{frame.f_lineno} in {frame.f_code.co_name}" + \
                (f": `{line}`" if line else "")
        frame = frame.f_back
    return ""


def _source_line(frame) -> str:
    import linecache
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()


def _specialized(program, dynamic, names, fixed_at, sources) -> list[dict]:
    """The dims `dynamic` asked dynamic that the program holds as numbers."""
    from torch.export.graph_signature import InputKind
    from .describe import _static
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    users = [placeholders[s.arg.name] for s in program.graph_signature.input_specs
             if s.kind == InputKind.USER_INPUT and type(s.arg).__name__ == "TensorArgument"]
    specs = dynamic.values() if isinstance(dynamic, dict) else dynamic
    out = []
    for name, spec, node in zip(names, specs, users):
        shape = node.meta["val"].shape
        for axis in sorted(spec or {}):
            if _static(shape[axis]) is not None:
                symbol = next((s for s, where in sources.items()
                               if where.endswith(f"['{name}'].size()[{axis}]")), None)
                why = fixed_at.get(symbol or "", "")
                out.append({"input": name, "axis": axis, "size": _static(shape[axis]),
                            "why": f"fixed by {why}" if why else "fixed by the model's code"})
    return out


def bounds(program, names: list[str], dynamic) -> list[dict]:
    """The dims asked dynamic that the model's code bounds (`if x.shape[1] > 8`
    keeps the branch it took for sizes on that side only): each {"input",
    "axis", "min", "max"} (max None when unbounded). torch.export's own
    lower bound of 2 (it fixes sizes 0 and 1 at capture, the model does not)
    is no bound."""
    from torch.export.graph_signature import InputKind
    from .describe import _static
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    users = [placeholders[s.arg.name] for s in program.graph_signature.input_specs
             if s.kind == InputKind.USER_INPUT and type(s.arg).__name__ == "TensorArgument"]
    specs = dynamic.values() if isinstance(dynamic, dict) else dynamic or ()
    out = []
    for name, spec, node in zip(names, specs, users):
        shape = node.meta["val"].shape
        for axis in sorted(spec or {}):
            if _static(shape[axis]) is not None:
                continue
            found = program.range_constraints.get(shape[axis].node.expr)
            low, high = (_bound(found.lower), _bound(found.upper)) if found else (None, None)
            if (low or 0) > 2 or high is not None:
                out.append({"input": name, "axis": axis, "min": low, "max": high})
    return out


def _bound(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return None   # int_oo: unbounded
