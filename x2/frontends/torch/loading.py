"""Loading a PyTorch model safely. Runs inside a worker process that imports torch only.

A model arrives as a module spec (`pkg.module:factory` or `file.py:factory`,
called with no arguments, returning an nn.Module), a Hugging Face folder
(config.json and safetensors weights, hf_folder.py), a `torch.export` program
(`.pt2`; checked entry by entry and loaded with nothing unpickled but tensors
unless --trust-pickle, see _load_pt2), a TorchScript archive (torch.jit.save;
`.pt`/`.ts`/..., loaded with torch.jit.load, which runs no pickled code) or a
pickled nn.Module (`.pt`/`.pth`, only with --trust-pickle)."""
from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import io
import json
import logging
import re
import sys
import warnings
from pathlib import Path
from ...errors import ModelLoadError
from ...process.phase import phase
from ...text import quoted
from . import hf_folder


_PT2_TRUST_HINT = ("pass --trust-pickle if you trust this file (x2 then lets torch.export.load "
                   "unpickle it, which can run code from the file)")


def _first_line(exc) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


_PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".bin")


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
        with phase(f"calling {factory}() of {target!r}"):
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
    """Return ('program', ExportedProgram), ('script', ScriptModule) or
    ('module', nn.Module), in float32 (see load_model_and_dtype); a
    transformers module without its cache outputs (cache.drop_cache_outputs)."""
    return load_model_and_dtype(spec, trust_pickle)[0]


def load_model_and_dtype(spec: str, trust_pickle: bool = False):
    """(load_model's (kind, model), the half dtype its weights are stored in:
    "bfloat16", "float16" or None). A model stored in half precision is
    read and run in float32, its weights upcast exactly: torch.export and
    jit.trace capture a bf16 model on a CPU, but x2's capture hands every
    weight to numpy, which has no bfloat16, checks its trace with numpy
    kernels, and its IR passes expect a float32 graph; the conversion then
    lowers the IR back to the stored dtype (x2/passes/precision.py). A Hugging Face folder is read in float32
    by transformers itself, tensor by tensor, so no half copy is held."""
    from .cache import drop_cache_outputs
    kind, obj = _load(spec, trust_pickle)
    if hf_folder.is_hf_model(spec):
        stored = hf_folder.stored_dtype(spec, trust_pickle)
    else:
        stored = _to_float32(spec, kind, obj)
    if kind == "module":
        drop_cache_outputs(obj)
    return (kind, obj), stored


def _to_float32(spec: str, kind: str, obj) -> str | None:
    """Upcast a module's or TorchScript's half-precision weights to float32
    in place (floating parameters and buffers only); return "bfloat16" or
    "float16" when every floating weight was of that dtype, else None."""
    torch = _torch()
    if kind == "program":
        tensors = list(obj.state_dict.values()) + list(obj.constants.values())
    else:
        tensors = list(obj.parameters()) + list(obj.buffers())
    dtypes = {t.dtype for t in tensors if isinstance(t, torch.Tensor) and t.is_floating_point()}
    half = dtypes & {torch.bfloat16, torch.float16}
    if not half:
        return None
    names = sorted(str(d).removeprefix("torch.") for d in half)
    if kind == "program":
        raise ModelLoadError(
            f"{spec}: the torch.export program was exported with {' and '.join(names)} "
            f"weights, and x2 reads a program in float32 (its graph's dtypes are fixed at "
            f"export). Export the model in float32 and convert it with --precision "
            f"{'bf16' if names == ['bfloat16'] else 'fp16'}")
    obj.float()
    return names[0] if len(dtypes) == 1 else None


def _load(spec: str, trust_pickle: bool):
    torch = _torch()
    path = Path(spec)
    if hf_folder.is_hf_model(spec):
        return "module", hf_folder.load(spec, trust_pickle)
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

