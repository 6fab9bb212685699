"""The quick capture of a PyTorch module: torch.jit.trace, read as the same
SourceGraph that torch.export gives (capture.py).

Why a second capture: torch.export's first call imports torch._dynamo, 3 to 4
seconds on a small machine, which is longer than the legacy ONNX exporter
takes for a whole small model; torch.jit.trace imports nothing new. The
traced TorchScript graph is described in torch.export's terms: op types
`aten.NAME.OVERLOAD`, FX-style node names (`linear`, `linear_1`), arguments
as FX passes them (trailing defaults dropped, keyword-only ones as kwargs,
dtypes by name), parameters named by their state_dict keys. So every ATen
mapper serves both.

A trace only records the path one input took, so it is used where that path
is the model: `Untraceable` sends the model to torch.export when tracing
warns that a tensor's value steered Python (data-dependent control flow,
`.item()`, numpy), when an in-place op writes a value that is read again or
aliases another, when a list of tensors has no fixed length, or when the
outputs are not tensors in tuples. The caller also falls back when an op
has no mapper or the mapped graph disagrees with the module
(capture.read_ir)."""
from __future__ import annotations

import warnings


from ...ir import TensorInfo
from ..common import SourceGraph, SourceOp


class TensorRef(str):
    """An ATen argument that is a tensor value; a str, so mappers pass it as a value name."""


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


class Untraceable(Exception):
    """Why this module needs torch.export instead of a trace."""


# TracerWarnings that do not make a trace path-dependent: iterating a tensor
# unrolls over its first dim, which a static shape fixes as torch.export does.
_HARMLESS_WARNINGS = ("Iterating over a tensor",)

# c10's ScalarType, Layout and MemoryFormat enums, as TorchScript constants
# hold them (torch.export passes torch.dtype objects, read by name).
_DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
           "complex32", "complex64", "complex128", "bool", "qint8", "quint8", "qint32",
           "bfloat16")
_LAYOUTS = ("torch.strided", "torch.sparse_coo")
_MEMORY_FORMATS = ("torch.contiguous_format", "torch.preserve_format", "torch.channels_last",
                   "torch.channels_last_3d")
_ENUMS = {"ScalarType": _DTYPES, "Layout": _LAYOUTS, "MemoryFormat": _MEMORY_FORMATS}

# Ops whose result may share memory with an input: an in-place op on such a
# result writes the input too, which a functional graph cannot say.
_ALIASING = {"view", "reshape", "_unsafe_view", "transpose", "t", "permute", "select", "slice",
             "narrow", "expand", "expand_as", "squeeze", "unsqueeze", "flatten", "unflatten",
             "as_strided", "alias", "detach", "contiguous", "unbind", "split", "chunk",
             "split_with_sizes", "diagonal", "view_as", "unfold", "movedim", "swapaxes",
             "numpy_T", "real", "imag", "to", "type_as"}


class _Module:
    """A submodule reached by prim::GetAttr (its state_dict prefix)."""

    def __init__(self, path: str, obj):
        self.path, self.obj = path, obj


def trace(module, kwargs: dict):
    """The traced TorchScript graph of `module` called with `kwargs` (by name)."""
    import torch
    with torch.no_grad(), warnings.catch_warnings():
        # The first warning that the trace depends on a tensor's value ends it.
        warnings.filterwarnings("error", category=torch.jit.TracerWarning)
        for harmless in _HARMLESS_WARNINGS:
            warnings.filterwarnings("ignore", message=harmless, category=torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", category=FutureWarning)
        try:
            # strict=False: a Hugging Face model returns a dict (its ModelOutput).
            traced = torch.jit.trace(module, example_kwarg_inputs=kwargs, check_trace=False,
                                     strict=False)
        except Exception as exc:
            warned = _tracer_warning(exc, torch.jit.TracerWarning)
            if warned is not None:
                raise Untraceable(f"tracing warned: {str(warned).splitlines()[0]}") from exc
            raise Untraceable(f"torch.jit.trace failed: {type(exc).__name__}: "
                              f"{(str(exc).strip().splitlines() or [''])[0]}") from exc
    return traced.inlined_graph


def _tracer_warning(exc, kind):
    """The TracerWarning that ended a trace: raised in torch's C++ tracer, it
    arrives as the cause or context of a SystemError."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def describe_trace(graph, module, arguments: list[str]) -> SourceGraph:
    """A traced graph (trace()) as a SourceGraph like describe_program's."""
    return _Reader(module).read(graph, arguments)


class _Reader:
    def __init__(self, module):
        import torch
        self.torch = torch
        self.module = module
        self.values: dict = {}         # TorchScript value -> what it holds
        self.ops: list[SourceOp] = []
        self.info: dict[str, TensorInfo] = {}
        self.taken: set[str] = set()
        self.counts: dict[str, int] = {}
        self.producer: dict[str, str] = {}   # value name -> ATen op name that made it
        # Tied weights: every path to one tensor reads the first state_dict key.
        self.keys = {}
        for key, tensor in [*module.named_parameters(), *module.named_buffers()]:
            self.keys.setdefault(id(tensor), key)
        self.parameters = {key for key, _ in module.named_parameters()}
        self.constants: dict[str, str] = {}  # state_dict key -> value name
        # module scopes (x2/ir/scopes.py): the chain the last op ran in, and
        # how often each module path was entered
        self.chain: list[str] = []
        self.calls: dict[str, int] = {}
        self.classes: dict[str, str] = {}

    def read(self, graph, arguments: list[str]) -> SourceGraph:
        inputs = list(graph.inputs())
        if len(inputs) != len(arguments) + 1:
            raise Untraceable(f"the trace takes {len(inputs) - 1} inputs, not "
                              f"{len(arguments)}")
        self.values[inputs[0]] = _Module("", self.module)
        for value, name in zip(inputs[1:], arguments):
            self.values[value] = TensorRef(name)
            self.taken.add(name)
            self._note_info(value, name)
        for node in graph.nodes():
            self._node(node)
        results = [self.values[v] for v in graph.outputs()]
        outs = list(flatten(results))
        if not outs or not all(isinstance(v, TensorRef) for v in outs):
            raise Untraceable("the module returns something other than tensors in tuples "
                              "and dicts")
        names = _output_names(results[0]) if len(results) == 1 else None
        aliases = {v: names[i] if names else "output" if len(outs) == 1 else f"output_{i}"
                   for i, v in enumerate(outs)}
        return SourceGraph("pytorch", self.ops, list(arguments), [str(v) for v in outs],
                           self.info, input_aliases={v: v for v in arguments},
                           output_aliases=aliases)

    # -- values ------------------------------------------------------------

    def _fresh(self, base: str) -> str:
        """FX's naming: the op's name, then name_1, name_2, ... past taken names."""
        name = base
        while name in self.taken:
            self.counts[base] = self.counts.get(base, 0) + 1
            name = f"{base}_{self.counts[base]}"
        self.taken.add(name)
        return name

    def _note_info(self, value, name: str) -> None:
        kind = value.type()
        if isinstance(kind, self.torch._C.TensorType) and kind.dtype() is not None and \
                kind.sizes() is not None:
            self.info[name] = TensorInfo(dtype_name(kind.dtype()), tuple(kind.sizes()))

    def _constant_op(self, key: str, tensor, param: str, trainable: bool):
        if key not in self.constants:
            name = self._fresh(key)
            self.ops.append(SourceOp("constant", name, [], [name],
                                     const_value=tensor.detach().cpu().numpy(), param=param,
                                     trainable=trainable))
            self.constants[key] = name
        return TensorRef(self.constants[key])

    # -- nodes -------------------------------------------------------------

    def _node(self, node) -> None:
        kind = node.kind()
        ins = [self.values.get(v) for v in node.inputs()]
        outs = list(node.outputs())
        if kind == "prim::GetAttr":
            self._get_attr(node, ins[0])
        elif kind == "prim::Constant":
            self.values[outs[0]] = self._constant(node)
        elif kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            self.values[outs[0]] = (list if kind == "prim::ListConstruct" else tuple)(ins)
        elif kind == "prim::DictConstruct":
            self.values[outs[0]] = dict(zip(ins[::2], ins[1::2]))
        elif kind in ("prim::ListUnpack", "prim::TupleUnpack"):
            self._unpack(node, ins[0], outs)
        elif kind in ("prim::NumToTensor", "aten::Int", "aten::Float", "aten::ScalarImplicit",
                      "aten::IntImplicit", "aten::FloatImplicit"):
            if isinstance(ins[0], (int, float, bool)):
                self.values[outs[0]] = ins[0]
            else:
                raise Untraceable(f"{kind} of a tensor value: the trace fixed a number "
                                  f"that the input decides")
        elif kind.startswith("aten::"):
            self._aten(node, ins, outs)
        else:
            raise Untraceable(f"the trace holds {kind}, which x2 reads only from torch.export")

    def _get_attr(self, node, owner) -> None:
        if not isinstance(owner, _Module):
            raise Untraceable("prim::GetAttr of something other than a submodule")
        name = node.s("name")
        path = f"{owner.path}.{name}" if owner.path else name
        obj = getattr(owner.obj, name)
        out = node.output()
        if isinstance(obj, self.torch.nn.Module):
            self.values[out] = _Module(path, obj)
        elif isinstance(obj, self.torch.Tensor):
            key = self.keys.get(id(obj), path)
            self.values[out] = self._constant_op(key, obj, key if id(obj) in self.keys else "",
                                                 key in self.parameters)
        else:
            raise Untraceable(f"attribute {path} is a {type(obj).__name__}")

    def _constant(self, node):
        value = node.output().toIValue()
        if isinstance(value, self.torch.Tensor):
            if value.dim() == 0:
                return value.item()  # a number, as torch.export passes sizes
            base = f"_tensor_constant{sum(k.startswith('_tensor_constant') for k in self.constants)}"
            return self._constant_op(base, value, "", False)
        if isinstance(value, self.torch.device):
            return str(value)
        return value

    def _unpack(self, node, packed, outs) -> None:
        if isinstance(packed, (list, tuple)):
            items = list(packed)
        elif isinstance(packed, TensorRef):
            # A multi-output op: its outputs are "op:i", as torch.export names them.
            items = [TensorRef(f"{packed}:{i}") for i in range(len(outs))]
            for i, value in enumerate(outs):
                self._note_info(value, f"{packed}:{i}")
                self.producer[f"{packed}:{i}"] = self.producer.get(str(packed), "")
        else:
            raise Untraceable(f"{node.kind()} of {type(packed).__name__}")
        if len(items) != len(outs):
            raise Untraceable(f"{node.kind()} of {len(items)} items into {len(outs)}")
        for value, item in zip(outs, items):
            self.values[value] = item

    def _aten(self, node, ins, outs) -> None:
        schema = self.torch._C.parse_schema(node.schema())
        name = schema.name.removeprefix("aten::")
        overload = schema.overload_name or "default"
        if name == "size" and isinstance(ins[0], TensorRef) and str(ins[0]) in self.info:
            shape = self.info[str(ins[0])].shape
            self.values[outs[0]] = list(shape) if len(ins) == 1 else shape[ins[1]]
            return
        if all(not isinstance(v, (TensorRef, _Module)) for v in flatten(ins)) and \
                _is_number_type(outs):
            self.values[outs[0]] = self._fold(node, name, overload, ins)
            return
        if name.endswith("_") and not name.endswith("__"):
            name = self._functional(node, name, ins)
        if name == "_convolution":  # the traced spelling of torch.export's convolution
            name, overload, ins, schema = "convolution", "default", ins[:9], None
        elif name == "batch_norm" and ins[5] is False:
            name, overload, schema = "_native_batch_norm_legit_no_training", "default", None
            ins = [*ins[:5], ins[6], ins[7]]
        args, kwargs = _arguments(schema, ins) if schema is not None else (ins, {})
        if name == "view":  # as _decompose does: the IR has no strides
            name = "reshape"
        op_name = self._fresh(name)
        if name == "_native_batch_norm_legit_no_training":
            # torch.export's op returns (output, mean, rstd); the traced one the output.
            outputs = [f"{op_name}:{i}" for i in range(3)]
            self._bind(outs[0], outputs[0], name)
        elif len(outs) > 1:
            outputs = [f"{op_name}:{i}" for i in range(len(outs))]
            for value, output in zip(outs, outputs):
                self._bind(value, output, name)
        elif isinstance(outs[0].type(), self.torch._C.ListType):
            outputs = self._unpacked(node, op_name, outs[0])
            self.values[outs[0]] = TensorRef(op_name)
            self.producer[op_name] = name
        else:
            outputs = [op_name]
            self._bind(outs[0], op_name, name)
        inputs = [a for a in flatten([args, list(kwargs.values())]) if isinstance(a, TensorRef)]
        self.ops.append(SourceOp(f"aten.{name}.{overload}", op_name, inputs, outputs,
                                 {"args": args, "kwargs": kwargs}, scope=self._scope(node)))

    def _scope(self, node) -> str:
        """The modules whose forward ran `node` (its scope name,
        `__module.seq/__module.seq.0`). A trace does not number a module's
        calls: a module entered again after the ops ran outside it is its
        next call (two calls with no op of the caller between read as one)."""
        from ...ir.scopes import Scope, encode
        try:
            text = node.scopeName()
        except RuntimeError:
            return ""
        paths = [p.removeprefix("__module.") for p in text.split("/")
                 if p.startswith("__module.")]
        same = 0
        while same < min(len(paths), len(self.chain)) and paths[same] == self.chain[same]:
            same += 1
        for path in paths[same:]:
            self.calls[path] = self.calls.get(path, -1) + 1
        self.chain = paths
        chain = []
        for path in paths:
            if path not in self.classes:
                try:
                    kind = type(self.module.get_submodule(path))
                    self.classes[path] = f"{kind.__module__}.{kind.__qualname__}"
                except (AttributeError, TypeError):
                    self.classes[path] = ""
            if not self.classes[path]:
                return encode(chain)
            chain.append(Scope(path, self.calls[path], self.classes[path]))
        return encode(chain)

    def _bind(self, value, name: str, made_by: str) -> None:
        self._note_info(value, name)
        self.values[value] = TensorRef(name)
        self.producer[name] = made_by

    def _unpacked(self, node, op_name: str, out) -> list[str]:
        """The outputs of an op returning a list of tensors (unbind, split):
        as many as its only user, a ListUnpack, takes apart."""
        users = [use.user for use in out.uses()]
        if len(users) != 1 or users[0].kind() != "prim::ListUnpack":
            raise Untraceable(f"{node.kind()} returns a list of tensors that is not unpacked")
        return [f"{op_name}:{i}" for i in range(len(list(users[0].outputs())))]

    def _functional(self, node, name: str, ins) -> str:
        """The functional op for an in-place one, when no one can see the write:
        it writes a fresh result of an op (not a view of another value, not an
        input or weight) that nothing else reads."""
        target = ins[0] if ins else None
        made_by = self.producer.get(str(target)) if isinstance(target, TensorRef) else None
        readers = [use.user for use in node.inputsAt(0).uses()]
        if made_by is None or made_by in _ALIASING or len(readers) != 1:
            raise Untraceable(f"{node.kind()} writes a value that is read elsewhere or "
                              f"shares memory with another")
        return name[:-1]

    def _fold(self, node, name: str, overload: str, ins):
        """A computation on sizes and numbers (b // heads): its value, as
        torch.export has it once shapes are static."""
        torch = self.torch
        fn = getattr(getattr(torch.ops.aten, name), overload)
        real = [torch.tensor(v) if isinstance(v, (int, float, bool)) and
                _tensor_slot(node, i) else v for i, v in enumerate(ins)]
        try:
            value = fn(*real)
        except Exception as exc:
            raise Untraceable(f"{node.kind()} on numbers: {type(exc).__name__}") from exc
        return value.item() if isinstance(value, torch.Tensor) else value


def _output_names(result) -> list[str] | None:
    """The keys of a dict result (a ModelOutput's last_hidden_state, logits),
    joined with "_" down nested results, as capture._output_names."""
    names: list[str] = []
    keyed = False

    def walk(value, path):
        nonlocal keyed
        if isinstance(value, dict):
            keyed = True
            for key, item in value.items():
                walk(item, path + [str(key)])
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, path + [str(i)])
        else:
            names.append("_".join(path))

    walk(result, [])
    return names if keyed and len(set(names)) == len(names) and all(names) else None


def flatten(items):
    """The leaves of nested lists, tuples and dicts (their values), in order."""
    for item in items.values() if isinstance(items, dict) else items:
        if isinstance(item, (list, tuple, dict)):
            yield from flatten(item)
        else:
            yield item


def _is_number_type(outs) -> bool:
    """Whether the op's one result is a number or a 0-d tensor."""
    import torch
    if len(outs) != 1:
        return False
    kind = outs[0].type()
    if isinstance(kind, torch._C.TensorType):
        sizes = kind.sizes()
        return sizes is not None and len(sizes) == 0
    return isinstance(kind, (torch._C.IntType, torch._C.FloatType, torch._C.BoolType,
                             torch._C.NumberType))


def _tensor_slot(node, index: int) -> bool:
    import torch
    return isinstance(node.inputsAt(index).type(), torch._C.TensorType)


def _arguments(schema, ins) -> tuple[list, dict]:
    """(args, kwargs) as an FX node holds them: enums by name, keyword-only
    arguments as kwargs, those equal to their default left out."""
    args, kwargs = [], {}
    for argument, value in zip(schema.arguments, ins):
        default = argument.default_value if argument.has_default_value() else _NO_DEFAULT
        given = _enum(argument, value)
        if argument.kwarg_only:
            if not _same(value, default):
                kwargs[argument.name] = given
        else:
            args.append((given, _same(value, default)))
    while args and args[-1][1]:
        args.pop()
    return [a for a, _ in args], kwargs


_NO_DEFAULT = object()


def _same(value, default) -> bool:
    if default is _NO_DEFAULT:
        return False
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return list(value) == list(default)
    return type(value) is type(default) and value == default or value is default is None


def _enum(argument, value):
    kind = str(argument.real_type).removeprefix("Optional[").removesuffix("]")
    names = _ENUMS.get(kind)
    if names is None or not isinstance(value, int):
        return value
    if not 0 <= value < len(names):
        raise Untraceable(f"{kind} {value} is not one x2 knows")
    return names[value]
