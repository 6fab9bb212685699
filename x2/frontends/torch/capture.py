"""PyTorch frontend. Runs inside a worker process that imports torch only.

A model arrives as a module spec (`pkg.module:factory` or `file.py:factory`,
called with no arguments, returning an nn.Module), a `torch.export` program
(`.pt2`; checked entry by entry and loaded with nothing unpickled but tensors
unless --trust-pickle, see _load_pt2), a TorchScript archive (torch.jit.save;
`.pt`/`.ts`/..., loaded with torch.jit.load, which runs no pickled code) or a
pickled nn.Module (`.pt`/`.pth`, only with --trust-pickle). A module is
traced first (trace.py), which costs a fraction of torch.export's first
call; where the trace cannot be trusted it is captured with `torch.export`
(TorchScript through torch._export.converter.TS2EPConverter), ops without a
mapper decomposed, and the FX graph is described as a SourceGraph for the
shared mapping loop. Parameters and buffers become
constants named after their state_dict keys.

With options.dynamic_batch (--dynamic-batch), dim 0 of every input is a torch.export.Dim:
tensor shapes then hold None there, and size arguments computed from it
(sym_size, and arithmetic on it) reach the mappers as SymDim markers."""
from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import logging
import operator
import re
import sys
import warnings
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ...contracts import ReadOptions, ReadRequest
from ...errors import ModelLoadError, SelectionError
from ...ir import TensorInfo
from ...text import quoted
from ..common import SourceGraph, SourceOp
from .trace import TensorRef, dtype_name, flatten

_PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".bin")


class SymDim:
    """A size argument that depends on the dynamic batch (a SymInt in the FX graph)."""

    def __init__(self, expr: str):
        self.expr = expr

    def __repr__(self) -> str:
        return f"SymDim({self.expr})"


def _torch():
    import torch
    return torch


def _load_factory(spec: str):
    target, sep, factory = spec.rpartition(":")
    if not sep or not target or not factory.isidentifier():
        raise ModelLoadError(f"--model {spec!r}: expected 'package.module:factory', "
                             f"'path/file.py:factory', a .pt2 torch.export file or a "
                             f"TorchScript/pickle file")
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise ModelLoadError(f"--model {spec!r}: {path} does not exist")
            name = f"x2_user_{path.stem}"
            module_spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(module_spec)
            sys.path.insert(0, str(path.resolve().parent))
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except ModelLoadError:
        raise
    except Exception as exc:  # user code can raise anything while importing
        raise ModelLoadError(f"--model {spec!r}: importing {target} failed: "
                             f"{type(exc).__name__}: {exc}") from exc
    fn = getattr(module, factory, None)
    if fn is None or not callable(fn):
        raise ModelLoadError(f"--model {spec!r}: {target} has no callable {factory!r}")
    try:
        model = fn()
    except Exception as exc:
        raise ModelLoadError(f"--model {spec!r}: calling {factory}() failed: "
                             f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(model, _torch().nn.Module):
        raise ModelLoadError(f"--model {spec!r}: {factory}() returned a "
                             f"{type(model).__name__}, not a torch.nn.Module")
    return model


def _load_pickle(path: Path, trust_pickle: bool):
    torch = _torch()
    try:
        obj = torch.load(str(path), map_location="cpu", weights_only=not trust_pickle)
    except Exception as exc:
        if not trust_pickle and "weights_only" in str(exc):
            raise ModelLoadError(
                f"{path}: this pickle needs more than tensors to load, and unpickling it "
                f"could run arbitrary code. If you trust the file, pass --trust-pickle; "
                f"better, give a module spec (file.py:factory) or a torch.export .pt2 "
                f"file.") from exc
        raise ModelLoadError(f"{path}: torch.load failed: {type(exc).__name__}: {exc}") from exc
    if not isinstance(obj, torch.nn.Module):
        raise ModelLoadError(f"{path}: holds a {type(obj).__name__} (a state_dict?), not an "
                             f"nn.Module; give a module spec file.py:factory that builds the "
                             f"model and loads these weights")
    return obj


# --- .pt2 archives: read without running anything from the file --------------
#
# torch.export.load unpickles: tensors saved with use_pickle, the sample inputs
# and legacy state dicts go through torch.load, which falls back to
# weights_only=False; opaque constants through pickle.loads, TorchScript
# custom objects through torch._C._pickle_load_obj; an AOTInductor package
# loads a compiled library; symbolic shape expressions go through
# sympy.sympify (Python eval). Without --trust-pickle, x2 first checks the
# archive itself (every entry present, no entry that only code can read) and
# then loads it with every one of those routes either restricted to plain
# data (torch.load with weights_only=True) or refused.

_PT2_TRUST_HINT = ("pass --trust-pickle if you trust this file (x2 then lets torch.export.load "
                   "unpickle it, which can run code from the file)")


class _Pt2Refused(BaseException):
    """Raised from inside torch.export.load. A BaseException so that no
    `except Exception` in torch turns it into a fallback to full unpickling."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# sympy constructors a serialized torch.export shape expression uses (srepr form:
# `Add(Mul(Integer(2), Symbol('s0', positive=True, integer=True)), Integer(-1))`),
# and torch's own sympy functions (torch/_export/serde/serialize.py).
_SYM_CALLS = frozenset("""
    Symbol Integer Float Rational Add Mul Pow Max Min Mod Abs floor ceiling sqrt
    Eq Ne Lt Le Gt Ge Equality Unequality StrictLessThan StrictGreaterThan LessThan
    GreaterThan And Or Not Xor Piecewise ExprCondPair ITE Tuple Infinity NegativeInfinity
    IntInfinity NegativeIntInfinity BooleanTrue BooleanFalse Zero One NegativeOne Half
    NaN ComplexInfinity
    FloorDiv ModularIndexing Where PythonMod CleanDiv CeilToInt FloorToInt CeilDiv LShift
    RShift PowByNatural FloatPow FloatTrueDiv IntTrueDiv IsNonOverlappingAndDenseIndicator
    TruncToFloat TruncToInt RoundToInt RoundDecimal ToFloat Identity
    """.split())
# The only calls that take a string: a symbol's name, a number's digits.
_SYM_STRING_ARG = {"Symbol": r"[A-Za-z][A-Za-z0-9_]*", "Integer": r"[-+]?[0-9]+",
                   "Float": r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[-+]?[0-9]+)?|[-+]?inf|nan",
                   "Rational": r"[-+]?[0-9]+(/[0-9]+)?"}
_SYM_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
                  ast.BitXor, ast.BitAnd, ast.BitOr, ast.USub, ast.UAdd, ast.Not, ast.Invert,
                  ast.And, ast.Or, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _plain_sym_expr(text) -> bool:
    """Whether `text` is a shape expression sympify can evaluate without running
    anything but arithmetic: numbers, names, operators and calls of the sympy
    constructors above; no attribute, subscript, lambda or other call, and a
    string only as a symbol's name or a number's digits."""
    if not isinstance(text, str) or len(text) > 20_000:
        return False
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False

    def ok(node, string_pattern=None) -> bool:
        if isinstance(node, ast.Expression):
            return ok(node.body)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return string_pattern is not None and re.fullmatch(
                    string_pattern, node.value, re.IGNORECASE) is not None
            return type(node.value) in (int, float, bool)
        if isinstance(node, ast.Name):
            return not node.id.startswith("_")
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, _SYM_OPERATORS) and ok(node.left) and ok(node.right)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, _SYM_OPERATORS) and ok(node.operand)
        if isinstance(node, ast.BoolOp):
            return isinstance(node.op, _SYM_OPERATORS) and all(ok(v) for v in node.values)
        if isinstance(node, ast.Compare):
            return (all(isinstance(op, _SYM_OPERATORS) for op in node.ops)
                    and ok(node.left) and all(ok(c) for c in node.comparators))
        if isinstance(node, ast.Tuple):
            return all(ok(e) for e in node.elts)
        if isinstance(node, ast.Call):
            func = node.func
            if not isinstance(func, ast.Name) or func.id not in _SYM_CALLS:
                return False
            pattern = _SYM_STRING_ARG.get(func.id)
            return (all(ok(a, pattern if i == 0 else None) for i, a in enumerate(node.args))
                    and all(k.arg is not None and not k.arg.startswith("_") and ok(k.value)
                            for k in node.keywords))
        return False

    try:
        return ok(tree)
    except RecursionError:
        return False


def _walk_json(value):
    """(key, value) of every dict entry in a parsed JSON document."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                yield k, v
                stack.append(v)
        elif isinstance(item, list):
            stack.extend(item)


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _check_pt2(path: Path, trust_pickle: bool) -> None:
    """Check the archive before torch reads it: every entry torch.export.load
    needs is there and readable (a missing one is named, instead of torch's
    "check the warnings above"), and, unless trust_pickle, no entry needs code
    to load (custom/opaque objects, compiled AOTInductor code, a shape
    expression that is not plain arithmetic)."""
    import zipfile
    from torch.export.pt2_archive import constants as C

    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ModelLoadError(f"{path}: not a readable torch.export archive (a .pt2 file is a "
                             f"zip archive): {type(exc).__name__}: {_first_line(exc)}") from exc
    with zf:
        names = zf.namelist()
        if not names:
            raise ModelLoadError(f"{path}: the torch.export archive is empty")
        root = names[0].split("/", 1)[0] + "/" if "/" in names[0] else ""
        if "version" in names and root + C.ARCHIVE_FORMAT_PATH not in names:
            return  # the older (torch 2.7) layout: the loading guard covers its pickles
        rel = {n[len(root):]: n for n in names if n.startswith(root)}

        def missing(entry: str, what: str) -> ModelLoadError:
            return ModelLoadError(
                f"{path}: the torch.export archive is incomplete or corrupt: entry "
                f"{quoted(root + entry)} ({what}) is missing", details={"entry": root + entry})

        def need(entry: str, what: str) -> str:
            if entry not in rel:
                raise missing(entry, what)
            return rel[entry]

        def read_json(entry: str, what: str):
            name = need(entry, what)
            try:
                return json.loads(zf.read(name))
            except (ValueError, UnicodeDecodeError, zipfile.BadZipFile, OSError, EOFError,
                    RecursionError) as exc:
                raise ModelLoadError(
                    f"{path}: the torch.export archive is corrupt: entry {quoted(name)} "
                    f"({what}) is not readable JSON ({type(exc).__name__}: "
                    f"{_shorten(_first_line(exc))})", details={"entry": name}) from exc

        def payloads(entry: str, what: str) -> dict:
            config = read_json(entry, what)
            items = config.get("config") if isinstance(config, dict) else None
            if not isinstance(items, dict) or not all(
                    isinstance(m, dict) and isinstance(m.get("path_name"), str)
                    for m in items.values()):
                raise ModelLoadError(f"{path}: the torch.export archive is corrupt: entry "
                                     f"{quoted(rel[entry])} ({what}) does not list payloads "
                                     f"as torch.export.save writes them",
                                     details={"entry": rel[entry]})
            return items

        def refuse(entry: str, what: str) -> ModelLoadError:
            return ModelLoadError(f"{path}: entry {quoted(entry)} is {what}; x2 does not run "
                                  f"code from a model file by default: {_PT2_TRUST_HINT}",
                                  details={"entry": entry})

        need(C.ARCHIVE_FORMAT_PATH, "the archive format marker")
        need(C.ARCHIVE_VERSION_PATH, "the archive version")
        model_entry = C.MODELS_FILENAME_FORMAT.format("model")
        if model_entry not in rel:
            others = sorted(r for r in rel if r.startswith(C.MODELS_DIR))
            what = ("the serialized program; the archive has " + ", ".join(
                quoted(root + r) for r in others)) if others else "the serialized program"
            raise missing(model_entry, what)
        if not trust_pickle:
            compiled = sorted(n for r, n in rel.items() if r.startswith(C.AOTINDUCTOR_DIR))
            if compiled:
                raise refuse(compiled[0], "AOTInductor compiled code, which torch.export.load "
                                          "loads as a native library")
        for entry in sorted(r for r in rel if r.startswith(C.MODELS_DIR) and r.endswith(".json")):
            name = entry[len(C.MODELS_DIR):-len(".json")]
            program = read_json(entry, "the serialized program")
            if not trust_pickle:
                for key, value in _walk_json(program):
                    if key == "expr_str" and not _plain_sym_expr(value):
                        raise refuse(rel[entry], f"a program whose symbolic shape expression "
                                                 f"{quoted(_shorten(str(value)))} is not plain "
                                                 f"arithmetic (torch evaluates it as Python)")
            need(C.SAMPLE_INPUTS_FILENAME_FORMAT.format(name), "the sample inputs")
            if f"{C.WEIGHTS_DIR}{name}.pt" not in rel:  # else the older single-file layout
                config = C.WEIGHTS_CONFIG_FILENAME_FORMAT.format(name)
                for fqn, meta in payloads(config, "the weights index").items():
                    need(C.WEIGHTS_DIR + meta["path_name"], f"weight {quoted(fqn)}")
            if f"{C.CONSTANTS_DIR}{name}.pt" not in rel:
                config = C.CONSTANTS_CONFIG_FILENAME_FORMAT.format(name)
                for fqn, meta in payloads(config, "the constants index").items():
                    entry_name = need(C.CONSTANTS_DIR + meta["path_name"],
                                      f"constant {quoted(fqn)}")
                    if trust_pickle:
                        continue
                    if meta["path_name"].startswith(C.CUSTOM_OBJ_FILENAME_PREFIX):
                        raise refuse(entry_name, f"constant {quoted(fqn)}, a TorchScript "
                                                 f"custom object that only unpickling builds")
                    if meta["path_name"].startswith(C.OPAQUE_OBJ_FILENAME_PREFIX):
                        raise refuse(entry_name, f"constant {quoted(fqn)}, a pickled Python "
                                                 f"object")


def _pickle_entry(path: Path, buffer) -> str | None:
    """The archive entry whose bytes `buffer` (an io.BytesIO) holds."""
    import zipfile
    if not isinstance(buffer, io.BytesIO):
        return None
    data = buffer.getvalue()
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.file_size == len(data) and zf.read(info) == data:
                    return info.filename
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        pass
    return None


def _unpickler_reason(exc) -> str:
    """What torch's weights-only unpickler objected to, without its advice."""
    text = str(exc)
    found = re.search(r"WeightsUnpickler error:(.*?)(Check the documentation|$)", text, re.S)
    reason = " ".join((found.group(1) if found else _first_line(exc)).split())
    reason = reason.split(" Please use ")[0] or type(exc).__name__
    return _shorten(reason, 200)


@contextlib.contextmanager
def _only_data_from(path: Path):
    """While torch.export.load runs: torch.load reads only tensors and plain
    containers (weights_only=True; a caller's fallback to weights_only=False
    refuses the entry instead), and pickle.loads, TorchScript object unpickling,
    AOTInductor loading and non-arithmetic shape expressions are refused."""
    torch = _torch()
    from torch._export.serde import serialize
    from torch.export.pt2_archive import _package

    real_load = torch.load
    real_pickle_load_obj = getattr(torch._C, "_pickle_load_obj", None)
    real_pickle_module = _package.pickle
    real_load_aoti = getattr(_package, "_load_aoti", None)
    real_parse = serialize.GraphModuleDeserializer._parse_sym_expr
    import sympy

    def load(f, map_location=None, pickle_module=None, *, weights_only=None, **kwargs):
        try:
            return real_load(f, map_location=map_location, weights_only=True, **kwargs)
        except Exception as exc:
            if weights_only is not False:
                raise  # the caller's own weights-only attempt: let it fall back to us
            entry = _pickle_entry(path, f)
            where = f"entry {quoted(entry)}" if entry else "a pickled entry"
            raise _Pt2Refused(
                f"{path}: {where} is a pickle that needs more than tensors to load "
                f"({_unpickler_reason(exc)}); unpickling it could run code from the file: "
                f"{_PT2_TRUST_HINT}") from None

    def refused(what):
        def refuse(*_args, **_kwargs):
            raise _Pt2Refused(f"{path}: the archive holds {what}; x2 does not run code from a "
                              f"model file by default: {_PT2_TRUST_HINT}")
        return refuse

    class NoUnpickling:
        def __getattr__(self, name):
            if name in ("load", "loads", "Unpickler"):
                return refused("a pickled Python object")
            return getattr(real_pickle_module, name)

    def parse_sym_expr(self, expr_str, *args, **kwargs):
        # Strings come from the file; torch's own recursion passes sympy objects.
        if not (isinstance(expr_str, (int, float, sympy.Basic)) or _plain_sym_expr(expr_str)):
            raise _Pt2Refused(f"{path}: the program has a symbolic shape expression "
                              f"{quoted(_shorten(str(expr_str)))} that is not plain arithmetic "
                              f"(torch evaluates it as Python): {_PT2_TRUST_HINT}")
        return real_parse(self, expr_str, *args, **kwargs)

    torch.load = load
    torch.serialization.load = load
    if real_pickle_load_obj is not None:
        torch._C._pickle_load_obj = refused("a TorchScript custom object")
    _package.pickle = NoUnpickling()
    if real_load_aoti is not None:
        _package._load_aoti = refused("AOTInductor compiled code")
    serialize.GraphModuleDeserializer._parse_sym_expr = parse_sym_expr
    try:
        yield
    finally:
        torch.load = real_load
        torch.serialization.load = real_load
        if real_pickle_load_obj is not None:
            torch._C._pickle_load_obj = real_pickle_load_obj
        _package.pickle = real_pickle_module
        if real_load_aoti is not None:
            _package._load_aoti = real_load_aoti
        serialize.GraphModuleDeserializer._parse_sym_expr = real_parse


@contextlib.contextmanager
def _torch_log_records():
    """Collect (and keep off stderr) what torch.export logs while loading: the
    real cause of a failure is logged as a warning with a traceback, and the
    exception torch raises then only says "check the warnings above"."""
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record)

    handler = Collect(logging.DEBUG)
    loggers = [logging.getLogger(name) for name in ("torch.export", "torch._export")]
    saved = [(lg, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False
    try:
        yield records
    finally:
        for lg, propagate in saved:
            lg.removeHandler(handler)
            lg.propagate = propagate


def _load_pt2(path: Path, trust_pickle: bool):
    torch = _torch()
    _check_pt2(path, trust_pickle)
    with _torch_log_records() as records, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if trust_pickle:
                return torch.export.load(str(path))
            with _only_data_from(path):
                return torch.export.load(str(path))
        except _Pt2Refused as refused:
            raise ModelLoadError(refused.message) from None
        except Exception as exc:
            logged = [r.exc_info[1] for r in records if r.exc_info and r.exc_info[1]]
            cause = logged[-1] if logged else exc
            raise ModelLoadError(f"{path}: cannot read the torch.export program (corrupt or "
                                 f"not written by torch.export.save): {type(cause).__name__}: "
                                 f"{_shorten(_first_line(cause), 300)}") from exc


def load_model(spec: str, trust_pickle: bool = False):
    """Return ('program', ExportedProgram) or ('module', nn.Module)."""
    torch = _torch()
    path = Path(spec)
    if path.suffix == ".pt2" or (path.is_file() and path.suffix != ".py"):
        if not path.is_file():
            raise ModelLoadError(f"{spec}: no such file")
        if path.suffix == ".pt2":
            return "program", _load_pt2(path, trust_pickle)
        if _is_torchscript(path):
            try:
                return "script", torch.jit.load(str(path), map_location="cpu").eval()
            except Exception as exc:
                first = (str(exc).strip().splitlines() or [""])[0]
                raise ModelLoadError(f"{spec}: not a readable TorchScript archive "
                                     f"(torch.jit.load failed: {type(exc).__name__}: "
                                     f"{first})") from exc
        if path.suffix in _PICKLE_SUFFIXES:
            return "module", _load_pickle(path, trust_pickle).eval()
        raise ModelLoadError(f"{spec}: unknown model file type {path.suffix!r}")
    return "module", _load_factory(spec).eval()


def _is_torchscript(path: Path) -> bool:
    import zipfile
    with open(path, "rb") as f:
        if f.read(4) != b"PK\x03\x04":
            return False
    try:
        with zipfile.ZipFile(path) as zf:
            return any(n.endswith("/constants.pkl") or "/code/" in n for n in zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ModelLoadError(f"{path}: a zip archive (TorchScript or torch.save) that is "
                             f"truncated or corrupt: {type(exc).__name__}: {exc}") from exc


def forward_arguments(module) -> list[tuple[str, bool]]:
    """forward()'s tensor-capable arguments in order, each with whether it has
    a default (Hugging Face models give every argument a default of None)."""
    torch = _torch()
    if isinstance(module, torch.jit.ScriptModule):
        return [(a.name, a.default_value is not None) for a in module.forward.schema.arguments[1:]
                if not a.kwarg_only]
    return [(p.name, p.default is not inspect.Parameter.empty)
            for p in inspect.signature(module.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def select_arguments(module, wanted: list[str] | None, input_shapes: dict | None) -> list[str]:
    """The forward() arguments that become inputs: every one without a default,
    plus the defaulted ones named in --inputs or --input-shape, in signature order."""
    arguments = forward_arguments(module)
    names = [name for name, _ in arguments]
    module_name = getattr(module, "original_name", None) or type(module).__name__
    for name in list(wanted or []) + list(input_shapes or {}):
        if name not in names:
            listing = ", ".join(f"{n}{'=...' if d else ''}" for n, d in arguments) or "none"
            raise SelectionError(f"'{name}' is not an argument of {module_name}.forward; its "
                                 f"arguments are {listing}")
    chosen = set(wanted or []) | set(input_shapes or {})
    return [n for n, has_default in arguments if not has_default or n in chosen]


def example_inputs(module, input_shapes: dict | None, input_dtypes: dict | None,
                   names: list[str] | None = None) -> dict:
    """Random example inputs for the chosen forward() arguments, by name in
    signature order."""
    torch = _torch()
    names = names if names is not None else select_arguments(module, None, input_shapes)
    module_name = getattr(module, "original_name", None) or type(module).__name__
    shapes = dict(input_shapes or {})
    dtypes = dict(input_dtypes or {})
    for name in [d for d in dtypes if d != "*"]:
        if name not in names:
            raise SelectionError(f"--input-dtype {name}: not an input of {module_name}.forward; "
                                 f"its inputs are {', '.join(names) or 'none'} (name defaulted "
                                 f"arguments in --inputs to make them inputs)")
    missing = [n for n in names if n not in shapes]
    if missing:
        raise SelectionError(
            f"give the shape of every input with --input-shape NAME:D1,D2,...; missing: "
            f"{', '.join(missing)} (forward({', '.join(names)}))")
    gen = torch.Generator().manual_seed(0)
    args = {}
    for name in names:
        wanted = dtypes.get(name, dtypes.get("*", "float32"))
        dtype = getattr(torch, wanted, None)
        if not isinstance(dtype, torch.dtype):
            raise SelectionError(f"--input-dtype {name}: unknown dtype {wanted!r}")
        if dtype.is_floating_point:
            args[name] = torch.randn(shapes[name], generator=gen).to(dtype)
        else:
            # Small non-negative integers: valid token ids, masks and indices.
            args[name] = torch.randint(0, 2, shapes[name], generator=gen).to(dtype)
    return args


def _first_line(exc) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


def export(kind: str, obj, input_shapes=None, input_dtypes=None, dynamic_batch=False,
           arguments: list[str] | None = None):
    """A decomposed torch.export program of `obj`; `arguments` are the forward()
    arguments that become inputs (default: those without a default value)."""
    torch = _torch()
    if kind == "program":
        if input_shapes:
            raise SelectionError("--input-shape does not apply to a .pt2 program: its input "
                                 "shapes were fixed when it was exported")
        if dynamic_batch:
            raise SelectionError("--dynamic-batch does not apply to a .pt2 program: its "
                                 "dynamic dims were chosen when it was exported")
        return _decompose(obj)
    kwargs = example_inputs(obj, input_shapes, input_dtypes, arguments)
    if kind == "script":
        import warnings
        from torch._export.converter import TS2EPConverter
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                program = TS2EPConverter(obj, tuple(kwargs.values())).convert()
        except Exception as exc:
            raise ModelLoadError(f"could not convert the TorchScript module to a torch.export "
                                 f"program: {type(exc).__name__}: {_first_line(exc)}") from exc
        # The converter's own dynamic dims are its guess: export again with ours.
        obj = program.module()
    dynamic = None
    if dynamic_batch:
        if any(a.dim() == 0 for a in kwargs.values()):
            raise SelectionError("--dynamic-batch: every input needs a batch dim (dim 0)")
        batch = torch.export.Dim("batch")
        dynamic = {name: {0: batch} for name in kwargs}
    # A module by keyword: a defaulted argument chosen with --inputs may follow
    # others left at their defaults. The converted TorchScript program takes
    # its (all required) arguments by position.
    args, kwargs = ((tuple(kwargs.values()), {}) if kind == "script" else ((), kwargs))
    if dynamic is not None and kind == "script":
        dynamic = tuple(dynamic.values())
    try:
        with torch.no_grad():
            program = torch.export.export(obj, args, kwargs=kwargs, dynamic_shapes=dynamic)
    except Exception as exc:
        hint = (" with a dynamic batch (the model may fix or constrain its batch size; "
                "give an example batch of 2 or more in --input-shape, or convert without "
                "--dynamic-batch)" if dynamic_batch else "")
        raise ModelLoadError(f"torch.export could not capture the model{hint}: "
                             f"{type(exc).__name__}: {_first_line(exc)}") from exc
    return _decompose(program)


def _decompose(program):
    """The program decomposed to core ATen, its `view`s read as `reshape`s.

    torch.export records strides at capture time, then decomposes ops whose
    decomposition returns another memory layout: scaled_dot_product_attention
    captured contiguous comes back as a transposed layout once decomposed, so
    a `.contiguous()` that was a no-op at capture (and so left out of the
    graph) is missing, and a later `view` of it fails (pytorch/pytorch#136543:
    "Cannot view a tensor with shape ... and strides ..."). A view and a
    reshape give the same values whenever the view is valid, and the IR has
    no strides (x2 maps both to `reshape`), so each view becomes a reshape,
    which copies when the layout needs it."""
    torch = _torch()
    view, reshape = torch.ops.aten.view.default, torch.ops.aten.reshape.default
    changed = False
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and node.target is view:
            node.target = reshape
            changed = True
    if changed:
        program.graph_module.recompile()
    if _all_mapped(program):
        # Decomposing would change nothing x2 reads, and costs seconds.
        return program
    dropouts = {node.name: node.args for node in program.graph_module.graph.nodes
                if node.op == "call_function" and node.target is torch.ops.aten.dropout.default}
    return _restore_dropouts(program.run_decompositions(_decomposition_table()), dropouts)


def _restore_dropouts(program, dropouts: dict):
    """Eval-mode dropout decomposes to a clone whatever the table says, and
    --for training writes it back as a dropout layer: each clone made from a
    dropout node (its `from_node` provenance) is that dropout again."""
    torch = _torch()
    changed = False
    for node in program.graph_module.graph.nodes if dropouts else ():
        if node.op != "call_function" or node.target is not torch.ops.aten.clone.default:
            continue
        names = [getattr(s, "name", None) for s in node.meta.get("from_node") or ()]
        found = next((dropouts[n] for n in names if n in dropouts), None)
        if found is not None and len(found) >= 2 and node.args[0] is not None:
            node.target = torch.ops.aten.dropout.default
            node.args, node.kwargs = (node.args[0], *found[1:]), {}
            changed = True
    if changed:
        program.graph_module.recompile()
    return program


def _all_mapped(program) -> bool:
    """Whether a mapper takes every op of the program (and its subgraphs) as
    it is: no in-place or other non-core op is left for the decompositions."""
    import operator
    from ..registry import TORCH
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op == "call_function" and node.target is not operator.getitem and \
                    str(node.target) not in _CONTROL_FLOW and TORCH.lookup(str(node.target)) is None:
                return False
    return True


def _decomposition_table() -> dict:
    """Core ATen's decompositions less those of ops a mapper takes as they
    are: linear, gelu, scaled_dot_product_attention... stay one op (and one
    call in the generated model) instead of becoming the arithmetic the
    fusions would have to find again."""
    torch = _torch()
    from ..registry import TORCH
    table = torch.export.default_decompositions()
    for op in list(table):
        if TORCH.lookup(str(op)) is not None:
            del table[op]
    return table


def _dims(shape) -> tuple:
    """Static dims as ints, symbolic (dynamic-batch) dims as None."""
    return tuple(int(d) if isinstance(d, int) else None for d in shape)


def _info(node) -> TensorInfo | None:
    val = node.meta.get("val")
    torch = _torch()
    if isinstance(val, torch.Tensor):
        return TensorInfo(dtype_name(val.dtype), _dims(val.shape))
    return None


def _layout(node) -> dict | None:
    """{"strides", "offset"} of an FX node's tensor as torch lays it out in
    memory (from its fake value), or None when unknown or symbolic."""
    torch = _torch()
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor):
        return None
    try:
        return {"strides": [int(s) for s in val.stride()], "offset": int(val.storage_offset())}
    except (TypeError, ValueError, RuntimeError):
        return None  # a stride that depends on the dynamic batch


def describe_program(program) -> SourceGraph:
    from torch.export.graph_signature import InputKind

    sig = program.graph_signature
    consts: dict[str, str] = {}   # placeholder name -> state_dict key
    user_inputs: list[str] = []
    for spec in sig.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            user_inputs.append(spec.arg.name)
        elif spec.target is not None:
            consts[spec.arg.name] = spec.target

    def constant(node):
        key = consts[node.name]
        tensor = program.state_dict.get(key)
        if tensor is None:
            tensor = program.constants[key]
        return (key, tensor.detach().cpu().numpy(), key if key in program.state_dict else "",
                key in program.graph_signature.parameters)

    ops, info, outs = _describe_graph(program.graph, program.graph_module, consts, constant)
    named = _output_names(program, len(outs))
    aliases = {v: named[i] if named else ("output" if len(outs) == 1 else f"output_{i}")
               for i, v in enumerate(outs)}
    return SourceGraph("pytorch", ops, user_inputs, outs, info,
                       input_aliases={v: v for v in user_inputs}, output_aliases=aliases)


def _subgraph(module) -> SourceGraph:
    """A higher-order op's branch or body (an FX GraphModule whose inputs are
    all placeholders: torch.export passes parameters to it as operands)."""
    ops, info, outs = _describe_graph(module.graph, module, {}, None)
    inputs = [n.name for n in module.graph.nodes if n.op == "placeholder"]
    return SourceGraph("pytorch", ops, inputs, outs, info)


# torch.export's higher-order control-flow ops: their subgraph arguments
# (get_attr nodes naming GraphModules) become SourceGraph attributes.
_CONTROL_FLOW = {"cond": ("true_graph", "false_graph"),
                 "while_loop": ("cond_graph", "body_graph"),
                 "scan": ("combine_graph",)}


def _control_flow_op(node, ref, submodules) -> SourceOp:
    kind = str(node.target)
    if kind == "cond":
        pred, true_fn, false_fn, operands = node.args[:4]
        graphs, values, attrs = (true_fn, false_fn), [pred, *operands], {}
    elif kind == "scan":
        # torch.export leaves scan(dim=0, reverse=False): a movedim and flips
        # around it make the other dims and directions.
        combine_fn, init, xs, additional = node.args[:4]
        graphs, values = (combine_fn,), [*init, *xs, *additional]
        attrs = {"carried": len(init), "scanned": len(xs)}
    else:
        cond_fn, body_fn, carried, additional = node.args[:4]
        graphs, values = (cond_fn, body_fn), [*carried, *additional]
        attrs = {"carried": len(carried)}
    for name, fn in zip(_CONTROL_FLOW[kind], graphs):
        attrs[name] = _subgraph(submodules[fn.name])
    inputs = [ref(v) for v in values]
    return SourceOp(kind, node.name, inputs, [], attrs)


def _describe_graph(fx_graph, owner, consts: dict, constant):
    """(ops, info, output values) of an FX graph; `constant(node)` gives a
    placeholder in `consts` as (state_dict key, array, parameter name, trainable)."""
    torch = _torch()
    # Ops whose result depends on their input's memory layout, not only on its
    # values: their mappers get that layout.
    layout_ops = {torch.ops.aten.as_strided.default}
    rename: dict[str, str] = {}
    sizes: dict[str, object] = {}  # size-valued nodes: an int, or a SymDim when dynamic
    submodules: dict[str, object] = {}
    ops: list[SourceOp] = []
    info: dict[str, TensorInfo] = {}

    def ref(arg):
        if isinstance(arg, torch.fx.Node):
            if arg.name in sizes:
                return sizes[arg.name]
            return TensorRef(rename.get(arg.name, arg.name))
        if isinstance(arg, (list, tuple)):
            return type(arg)(ref(a) for a in arg)
        if isinstance(arg, torch.dtype):
            return dtype_name(arg)
        if isinstance(arg, (torch.device, torch.memory_format, torch.layout)):
            return str(arg)
        return arg

    for node in fx_graph.nodes:
        if node.op == "placeholder":
            if node.name in consts:
                key, array, param, trainable = constant(node)
                rename[node.name] = key
                ops.append(SourceOp("constant", key, [], [key], const_value=array, param=param,
                                    trainable=trainable))
            elif (i := _info(node)) is not None:
                info[node.name] = i
            continue
        if node.op == "get_attr" and isinstance(getattr(owner, str(node.target), None),
                                                torch.fx.GraphModule):
            submodules[node.name] = getattr(owner, str(node.target))
            continue
        if node.op == "output" or node.op != "call_function":
            continue
        val = node.meta.get("val")
        if isinstance(val, (int, torch.SymInt)) and not isinstance(val, bool):
            # sym_size and arithmetic on sizes: a number at conversion time, or a
            # dynamic-batch size the mappers resolve (-1 in a reshape target).
            if isinstance(val, torch.SymInt) and val.node.maybe_as_int() is not None:
                val = val.node.maybe_as_int()
            sizes[node.name] = int(val) if isinstance(val, int) else SymDim(str(val))
            continue
        if node.target is operator.getitem:
            # Multi-output ops name their outputs "op:i"; getitem is that name.
            src, index = node.args
            rename[node.name] = f"{rename.get(src.name, src.name)}:{index}"
            continue
        if isinstance(val, (list, tuple)):
            outputs = [f"{node.name}:{i}" for i in range(len(val))]
            for out, v in zip(outputs, val):
                if isinstance(v, torch.Tensor):
                    info[out] = TensorInfo(dtype_name(v.dtype), _dims(v.shape))
        else:
            outputs = [node.name]
            if (i := _info(node)) is not None:
                info[node.name] = i
        if str(node.target) in _CONTROL_FLOW:
            op = _control_flow_op(node, ref, submodules)
            op.outputs = outputs
            ops.append(op)
            continue
        args, kwargs = ref(list(node.args)), ref(dict(node.kwargs))
        inputs = [a for a in flatten([args, list(kwargs.values())]) if isinstance(a, TensorRef)]
        attrs = {"args": args, "kwargs": kwargs}
        if node.target in layout_ops:
            attrs["input_layout"] = _layout(node.args[0])
        ops.append(SourceOp(str(node.target), node.name, inputs, outputs, attrs))
    out_node = next(n for n in fx_graph.nodes if n.op == "output")
    outs = [rename.get(a.name, a.name) for a in flatten(list(out_node.args))
            if isinstance(a, torch.fx.Node)]
    return ops, info, outs


def evaluate_aten(op: SourceOp, arrays: list) -> list[np.ndarray] | None:
    """Run one ATen op on constant tensors with torch itself (source-graph
    constant folding, x2/frontends/source_fold.py)."""
    torch = _torch()
    parts = op.type.split(".")
    if len(parts) != 3 or parts[0] != "aten":
        return None
    fn = getattr(getattr(torch.ops.aten, parts[1]), parts[2])
    tensors = {ref: torch.from_numpy(np.array(a)) for ref, a in zip(op.inputs, arrays)}

    def real(arg):
        if isinstance(arg, TensorRef):
            return tensors[arg]
        if isinstance(arg, SymDim):
            raise ValueError("a dynamic-batch size")
        if isinstance(arg, (list, tuple)):
            return type(arg)(real(a) for a in arg)
        if isinstance(arg, dict):
            return {k: real(v) for k, v in arg.items()}
        return arg

    with torch.no_grad():
        out = fn(*real(op.attrs["args"]), **real(op.attrs["kwargs"]))
    return [t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]


def _output_names(program, count: int) -> list[str] | None:
    """Names of the flattened outputs when the model returns a dict-like
    structure (a Hugging Face ModelOutput: last_hidden_state, logits, ...);
    None for a tensor or a plain tuple (named output, output_0, ...)."""
    spec = getattr(program.call_spec, "out_spec", None)
    if spec is None:
        return None
    names: list[str] = []
    keyed = False

    def walk(node, path):
        nonlocal keyed
        if node.is_leaf():
            names.append("_".join(path))
            return
        context = node.context
        keys = (list(context) if isinstance(context, (list, tuple)) and
                len(context) == len(node.children_specs) and
                all(isinstance(k, str) for k in context) else None)
        keyed = keyed or keys is not None
        for i, child in enumerate(node.children_specs):
            walk(child, path + [keys[i] if keys else str(i)])

    walk(spec, [])
    if not keyed or len(names) != count or len(set(names)) != count or not all(names):
        return None
    return names


def _is_module(kind: str) -> bool:
    return kind in ("module", "script")


def read_torch(spec: str, input_shapes=None, options: ReadOptions | None = None,
               inputs: list[str] | None = None, loaded=None
               ) -> tuple[SourceGraph, list[str] | None]:
    """The model (`loaded`: load_model's result, if already loaded) as a
    SourceGraph, and the forward() arguments it takes (None for a .pt2
    program). --inputs that are all forward() arguments choose the arguments
    (defaulted ones included); other names prune the graph."""
    options = options or ReadOptions()
    kind, obj = loaded or load_model(spec, options.trust_pickle)
    arguments = None
    if _is_module(kind):
        arguments = select_arguments(obj, _argument_inputs(obj, inputs), input_shapes)
    program = export(kind, obj, input_shapes, options.input_dtypes, options.dynamic_batch,
                     arguments)
    return describe_program(program), arguments


def _argument_inputs(module, inputs: list[str] | None) -> list[str] | None:
    """--inputs when they all name forward() arguments (then they choose the
    arguments), else None (other names prune the graph)."""
    names = {n for n, _ in forward_arguments(module)}
    return inputs if inputs and all(n in names for n in inputs) else None


def read_ir(request: ReadRequest):
    """(IR graph, source record): the model captured, pruned to
    --inputs/--outputs and mapped. When --inputs named forward() arguments,
    the record's options name them, so `x2 check` passes its inputs there.
    A module is traced first (trace.py: seconds faster) and exported
    when the trace cannot be trusted; the record says which ("capture")."""
    from ..registry import TORCH
    from .common import map_graph, select_subgraph
    inputs = request.inputs
    loaded = load_model(request.model, request.options.trust_pickle)
    traced, why = _read_traced(request, *loaded)
    if traced is not None:
        graph, arguments = traced
        record = {"capture": "torch.jit.trace"}
    else:
        source, arguments = read_torch(request.model, request.input_shapes, request.options,
                                       inputs, loaded)
        if arguments is not None and inputs and all(n in arguments for n in inputs):
            inputs = None  # they chose forward() arguments, not a subgraph
        source = select_subgraph(source, inputs, request.outputs)
        graph = map_graph(source, TORCH, evaluate_aten, request.options.keep_trainable)
        record = {"capture": "torch.export", **({"not_traced": why} if why else {})}
    graph.meta.source_model = request.model
    if arguments is not None:
        record["options"] = {**asdict(request.options), "forward_args": arguments}
    return graph, record


def _read_traced(request: ReadRequest, kind: str, obj):
    """((IR graph, forward arguments), None) from a trace of a module, or
    (None, why not) when only torch.export will do: a .pt2 or TorchScript
    file, --dynamic-batch, a pruned graph, or a trace that is not the model
    (its ops unmapped, or its IR disagreeing with the module on the example)."""
    from ..errors import X2Error
    from ..ir.interpret import interpret
    from ..registry import TORCH
    from . import trace
    from .common import map_graph
    options = request.options
    if request.outputs or options.dynamic_batch or kind != "module":
        return None, None
    chosen = _argument_inputs(obj, request.inputs)
    if request.inputs and chosen is None:
        return None, None
    arguments = select_arguments(obj, chosen, request.input_shapes)
    kwargs = example_inputs(obj, request.input_shapes, options.input_dtypes, arguments)
    try:
        source = trace.describe_trace(trace.trace(obj, kwargs), obj, arguments)
        graph = map_graph(source, TORCH, evaluate_aten, options.keep_trainable)
    except trace.Untraceable as exc:
        return None, str(exc)
    except X2Error as exc:
        return None, f"the traced graph does not map: {_first_line(exc)}"
    torch = _torch()
    try:
        got = interpret(graph, [kwargs[n].numpy() for n in arguments])
        with torch.no_grad():
            want = _output_arrays(obj(**kwargs))
    except Exception as exc:  # torch.export may still capture what the check could not run
        return None, f"checking the trace failed: {type(exc).__name__}: {_first_line(exc)}"
    if not _agree(want, got):
        return None, "the traced graph disagrees with the module on the example input"
    return (graph, arguments), None


def _agree(want: list, got: list) -> bool:
    """Same outputs: same shapes and dtypes, integers equal, floats within
    rtol 1e-4 of each output's scale by x2 check's measure (x2/check/compare.py)."""
    from ..parity_compare import compare
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        g = np.asarray(g)
        if w.shape != g.shape or w.dtype != g.dtype:
            return False
        if not (compare(w, g, rtol=1e-4, atol=1e-6)[-1] if w.dtype.kind in "fc"
                else np.array_equal(g, w)):
            return False
    return True


def run_torch(spec: str, inputs: list[np.ndarray], options: ReadOptions | None = None
              ) -> list[np.ndarray]:
    """Run the source model on numpy inputs (eval mode, no grad); a module's
    inputs go to the forward() arguments chosen at conversion, by name."""
    torch = _torch()
    options = options or ReadOptions()
    kind, obj = load_model(spec, options.trust_pickle)
    model = obj.module() if kind == "program" else obj
    tensors = [torch.from_numpy(np.array(x, order="C")) for x in inputs]  # (ascontiguousarray makes 0-d 1-d)
    arguments = options.forward_args
    with torch.no_grad():
        if arguments and kind == "module":
            result = model(**dict(zip(arguments, tensors)))
        else:
            result = model(*tensors)
    return _output_arrays(result)


def _output_arrays(result) -> list[np.ndarray]:
    """A module's result flattened as torch.export flattens its outputs
    (ModelOutput and dicts included)."""
    torch = _torch()
    from torch.utils import _pytree
    return [t.detach().cpu().numpy() for t in _pytree.tree_leaves(result)
            if isinstance(t, torch.Tensor)]
