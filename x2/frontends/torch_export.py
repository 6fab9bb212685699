"""PyTorch frontend. Runs inside a worker process that imports torch only.

A model arrives as a module spec (`pkg.module:factory` or `file.py:factory`,
called with no arguments, returning an nn.Module), a `torch.export` program
(`.pt2`), a TorchScript archive (torch.jit.save; `.pt`/`.ts`/..., loaded with
torch.jit.load, which runs no pickled code) or a pickled nn.Module
(`.pt`/`.pth`, only with --trust-pickle). It is captured with `torch.export`
(TorchScript through torch._export.converter.TS2EPConverter) and decomposed to
the core ATen op set, and the FX graph is described as a SourceGraph for the
shared mapping loop. Parameters and buffers become constants named after their
state_dict keys.

With options["dynamic_batch"], dim 0 of every input is a torch.export.Dim:
tensor shapes then hold None there, and size arguments computed from it
(sym_size, and arithmetic on it) reach the mappers as SymDim markers."""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import operator
import sys
from pathlib import Path

import numpy as np

from ..errors import ModelLoadError, SelectionError
from ..ir import TensorInfo
from .common import SourceGraph, SourceOp

_PICKLE_SUFFIXES = (".pt", ".pth", ".pkl", ".bin")


class TensorRef(str):
    """An FX argument that is a tensor value; a str, so mappers pass it as a value name."""


class SymDim:
    """A size argument that depends on the dynamic batch (a SymInt in the FX graph)."""

    def __init__(self, expr: str):
        self.expr = expr

    def __repr__(self) -> str:
        return f"SymDim({self.expr})"


def _torch():
    import torch
    return torch


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


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


def load_model(spec: str, trust_pickle: bool = False):
    """Return ('program', ExportedProgram) or ('module', nn.Module)."""
    torch = _torch()
    path = Path(spec)
    if path.suffix == ".pt2" or (path.is_file() and path.suffix != ".py"):
        if not path.is_file():
            raise ModelLoadError(f"{spec}: no such file")
        if path.suffix == ".pt2":
            try:
                return "program", torch.export.load(str(path))
            except Exception as exc:
                raise ModelLoadError(f"{spec}: torch.export.load failed: "
                                     f"{type(exc).__name__}: {exc}") from exc
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


def example_inputs(module, input_shapes: dict | None, input_dtypes: dict | None):
    """Random example inputs for forward()'s tensor arguments, in order."""
    torch = _torch()
    if isinstance(module, torch.jit.ScriptModule):
        names = [a.name for a in module.forward.schema.arguments[1:]
                 if a.default_value is None and not a.kwarg_only]
    else:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is inspect.Parameter.empty]
        names = [p.name for p in params]
    module_name = getattr(module, "original_name", None) or type(module).__name__
    shapes = dict(input_shapes or {})
    dtypes = dict(input_dtypes or {})
    for name in list(shapes) + [d for d in dtypes if d != "*"]:
        if name not in names:
            raise SelectionError(f"'{name}' is not an argument of {module_name}."
                                 f"forward; its arguments are {', '.join(names) or 'none'}")
    missing = [n for n in names if n not in shapes]
    if missing:
        raise SelectionError(
            f"give the shape of every input with --input-shape NAME:D1,D2,...; missing: "
            f"{', '.join(missing)} (forward({', '.join(names)}))")
    gen = torch.Generator().manual_seed(0)
    args = []
    for name in names:
        wanted = dtypes.get(name, dtypes.get("*", "float32"))
        dtype = getattr(torch, wanted, None)
        if not isinstance(dtype, torch.dtype):
            raise SelectionError(f"--input-dtype {name}: unknown dtype {wanted!r}")
        if dtype.is_floating_point:
            args.append(torch.randn(shapes[name], generator=gen).to(dtype))
        else:
            # Small non-negative integers: valid token ids and indices.
            args.append(torch.randint(0, 2, shapes[name], generator=gen).to(dtype))
    return tuple(args)


def _first_line(exc) -> str:
    return (str(exc).strip().splitlines() or [""])[0]


def export(kind: str, obj, input_shapes=None, input_dtypes=None, dynamic_batch=False):
    torch = _torch()
    if kind == "program":
        if input_shapes:
            raise SelectionError("--input-shape does not apply to a .pt2 program: its input "
                                 "shapes were fixed when it was exported")
        if dynamic_batch:
            raise SelectionError("--dynamic-batch does not apply to a .pt2 program: its "
                                 "dynamic dims were chosen when it was exported")
        return obj.run_decompositions()
    args = example_inputs(obj, input_shapes, input_dtypes)
    if kind == "script":
        import warnings
        from torch._export.converter import TS2EPConverter
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                program = TS2EPConverter(obj, args).convert()
        except Exception as exc:
            raise ModelLoadError(f"could not convert the TorchScript module to a torch.export "
                                 f"program: {type(exc).__name__}: {_first_line(exc)}") from exc
        # The converter's own dynamic dims are its guess: export again with ours.
        obj = program.module()
    dynamic = None
    if dynamic_batch:
        if any(a.dim() == 0 for a in args):
            raise SelectionError("--dynamic-batch: every input needs a batch dim (dim 0)")
        batch = torch.export.Dim("batch")
        dynamic = tuple({0: batch} for _ in args)
    try:
        with torch.no_grad():
            program = torch.export.export(obj, args, dynamic_shapes=dynamic)
    except Exception as exc:
        hint = (" with a dynamic batch (the model may fix or constrain its batch size; "
                "give an example batch of 2 or more in --input-shape, or convert without "
                "--dynamic-batch)" if dynamic_batch else "")
        raise ModelLoadError(f"torch.export could not capture the model{hint}: "
                             f"{type(exc).__name__}: {_first_line(exc)}") from exc
    return program.run_decompositions()


def _dims(shape) -> tuple:
    """Static dims as ints, symbolic (dynamic-batch) dims as None."""
    return tuple(int(d) if isinstance(d, int) else None for d in shape)


def _info(node) -> TensorInfo | None:
    val = node.meta.get("val")
    torch = _torch()
    if isinstance(val, torch.Tensor):
        return TensorInfo(dtype_name(val.dtype), _dims(val.shape))
    return None


def describe_program(program) -> SourceGraph:
    torch = _torch()
    from torch.export.graph_signature import InputKind

    sig = program.graph_signature
    consts: dict[str, str] = {}   # placeholder name -> state_dict key
    user_inputs: list[str] = []
    for spec in sig.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            user_inputs.append(spec.arg.name)
        elif spec.target is not None:
            consts[spec.arg.name] = spec.target
    rename: dict[str, str] = {}
    sizes: dict[str, object] = {}  # size-valued nodes: an int, or a SymDim when dynamic
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

    for node in program.graph.nodes:
        if node.op == "placeholder":
            if node.name in consts:
                key = consts[node.name]
                tensor = program.state_dict.get(key)
                if tensor is None:
                    tensor = program.constants[key]
                array = tensor.detach().cpu().numpy()
                rename[node.name] = key
                ops.append(SourceOp("constant", key, [], [key], const_value=array))
            elif (i := _info(node)) is not None:
                info[node.name] = i
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
        args, kwargs = ref(list(node.args)), ref(dict(node.kwargs))
        inputs = [a for a in _flatten([args, list(kwargs.values())]) if isinstance(a, TensorRef)]
        if isinstance(val, (list, tuple)):
            outputs = [f"{node.name}:{i}" for i in range(len(val))]
            for out, v in zip(outputs, val):
                if isinstance(v, torch.Tensor):
                    info[out] = TensorInfo(dtype_name(v.dtype), _dims(v.shape))
        else:
            outputs = [node.name]
            if (i := _info(node)) is not None:
                info[node.name] = i
        ops.append(SourceOp(str(node.target), node.name, inputs, outputs,
                            {"args": args, "kwargs": kwargs}))
    out_node = next(n for n in program.graph.nodes if n.op == "output")
    outs = [rename.get(a.name, a.name) for a in _flatten(list(out_node.args))
            if isinstance(a, torch.fx.Node)]
    aliases = {v: ("output" if len(outs) == 1 else f"output_{i}") for i, v in enumerate(outs)}
    return SourceGraph("pytorch", ops, user_inputs, outs, info,
                       input_aliases={v: v for v in user_inputs}, output_aliases=aliases)


def _flatten(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flatten(item)
        else:
            yield item


def read_torch(spec: str, input_shapes=None, options: dict | None = None) -> SourceGraph:
    options = options or {}
    kind, obj = load_model(spec, bool(options.get("trust_pickle")))
    program = export(kind, obj, input_shapes, options.get("input_dtypes"),
                     bool(options.get("dynamic_batch")))
    return describe_program(program)


def run_torch(spec: str, inputs: list[np.ndarray], options: dict | None = None
              ) -> list[np.ndarray]:
    """Run the source model on numpy inputs (eval mode, no grad)."""
    torch = _torch()
    options = options or {}
    kind, obj = load_model(spec, bool(options.get("trust_pickle")))
    model = obj.module() if kind == "program" else obj
    with torch.no_grad():
        result = model(*[torch.from_numpy(np.ascontiguousarray(x)) for x in inputs])
    flat = list(_flatten([result])) if isinstance(result, (list, tuple)) else [result]
    return [t.detach().cpu().numpy() for t in flat]
