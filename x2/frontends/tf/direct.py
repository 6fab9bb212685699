"""Read a TF2 SavedModel without importing TensorFlow.

Importing TensorFlow, restoring the SavedModel's objects and freezing its
signature take 3-5 s before x2 sees one op. The graph is all in
saved_model.pb already: the signature is a call to a function of the graph's
library, every function node records its output shapes (`_output_shapes`),
and the weights sit in the variables bundle. So this reader:

  1. parses saved_model.pb with x2's own schema (protos.py);
  2. follows the signature's call node to its function and binds the
     function's captured inputs to variables through the object graph
     (SavedConcreteFunction.bound_inputs -> SavedObject -> checkpoint key);
  3. inlines nested function calls, naming inlined nodes
     "<call node>/<node>" as TensorFlow's own inliner does, keeps only what
     the signature's outputs need, and turns each ReadVariableOp into a
     constant holding the variable's value;
  4. fills in the attribute defaults and output dtypes that FunctionDefs
     leave out (opdefs.py, generated from TF's op registry).

While loops with a trip count known at read time (Keras RNNs) are unrolled
with --unroll-loops (refused, naming the node and the flag, without it)
and If nodes with a known condition reduced to their taken branch
(loops.py, on the read-time values of known.py); a loop whose trip
count is not static is refused naming it. Whatever else it does not handle
(other control-flow functions, resources other than variables, ops missing
from tf_opdefs, a user-given --input-shape that needs re-tracing, ...)
raises NeedsTensorFlow, and the TensorFlow reader
(savedmodel.py) takes over (formats.py decides); the report says which
reader ran and why.
"""
from __future__ import annotations

from collections import ChainMap
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ConversionError
from ...ir import TensorInfo
from . import loops, recurrent, savedmodel_scopes
from ..common import SourceGraph, SourceOp
from .common import NeedsTensorFlow, check_savedmodel_dir, parse_saved_model, pick_signature
from .bundle import Bundle, UnreadableBundle
from ..source_fold import is_random
from .known import is_small_plain, known_outputs
from .opdefs import DEFAULTS, NOT_CORE, OUTPUTS
from .protos import DT_RESOURCE, dtype_name, messages

_CALL_OPS = {"StatefulPartitionedCall", "PartitionedCall"}
_DROPPED = {"NoOp"}

__all__ = ["NeedsTensorFlow", "read_savedmodel_direct"]


@dataclass
class Resource:
    """A captured variable (or constant) reaching a function as a resource input;
    `variable` is the variable's name and `trainable` whether Keras trains it
    (both become the IR value's Origin, so the emitters make it a parameter)."""
    value: np.ndarray
    variable: str = ""
    trainable: bool = False


def shape_of(proto) -> tuple | None:
    if proto.unknown_rank:
        return None
    return tuple(d.size if d.size >= 0 else None for d in proto.dim)


def tensor_value(proto) -> np.ndarray:
    """A TensorProto as a numpy array (TF repeats the last value to fill the shape)."""
    dtype = dtype_name(proto.dtype)
    shape = shape_of(proto.tensor_shape) or ()
    count = int(np.prod(shape)) if shape else 1
    if dtype == "string":
        values = list(proto.string_val)
        array = np.array(values or [b""] * count, dtype=object)
    elif dtype == "bfloat16":
        raise NeedsTensorFlow("a bfloat16 constant")
    elif proto.tensor_content:
        array = np.frombuffer(proto.tensor_content, dtype=np.dtype(dtype).newbyteorder("<"))
    else:
        field = {"float32": "float_val", "float64": "double_val", "int64": "int64_val",
                 "bool": "bool_val", "uint32": "uint32_val", "uint64": "uint64_val",
                 "float16": "half_val"}.get(dtype, "int_val")
        values = list(getattr(proto, field))
        if dtype == "float16":
            values = np.array(values, dtype=np.uint16).view(np.float16)
        array = np.array(values, dtype=dtype)
    if array.size == 0 and count:
        array = np.zeros(count, dtype=array.dtype)
    elif array.size != count:
        array = np.concatenate([array, np.repeat(array[-1:], count - array.size)])
    return array.astype(dtype if dtype != "string" else object).reshape(shape)


def attr_value(proto):
    """An AttrValue as the plain Python value the TF mappers read."""
    kind = proto.WhichOneof("value")
    if kind == "s":
        return proto.s.decode(errors="replace")
    if kind in ("i", "f", "b"):
        return getattr(proto, kind)
    if kind == "type":
        return _dtype(proto.type)
    if kind == "shape":
        shape = shape_of(proto.shape)
        return None if shape is None else [-1 if d is None else d for d in shape]
    if kind == "list":
        lst = proto.list
        if len(lst.s):
            return [s.decode(errors="replace") for s in lst.s]
        if len(lst.type):
            return [_dtype(t) for t in lst.type]
        if len(lst.shape):
            return [attr_value(messages().AttrValue(shape=s)) for s in lst.shape]
        for field in ("i", "f", "b"):
            if len(getattr(lst, field)):
                return list(getattr(lst, field))
        return []
    return None  # tensors, functions: read from the NodeDef where needed


def _dtype(enum: int) -> str:
    try:
        return dtype_name(enum)
    except KeyError:
        raise NeedsTensorFlow(f"dtype enum {enum}") from None


class _Variables:
    """Variable values by SavedObjectGraph node id, read from the bundle."""

    def __init__(self, directory: Path, object_graph):
        self.directory = directory
        self.saved = object_graph
        self._bundle = None
        self._checkpoint_graph = None

    def _open(self):
        if self._bundle is None:
            try:
                self._bundle = Bundle(self.directory / "variables" / "variables")
            except UnreadableBundle as exc:
                raise NeedsTensorFlow(str(exc)) from exc
            data = self._bundle.read("_CHECKPOINTABLE_OBJECT_GRAPH").item()
            self._checkpoint_graph = messages().TrackableObjectGraph.FromString(data)
        return self._bundle, self._checkpoint_graph

    def value(self, node_id: int) -> np.ndarray:
        bundle, graph = self._open()
        if node_id >= len(graph.nodes):
            raise NeedsTensorFlow("object graph and checkpoint disagree")
        saved_name = self.saved.nodes[node_id].variable.name
        for attribute in graph.nodes[node_id].attributes:
            if attribute.name == "VARIABLE_VALUE":
                if saved_name and attribute.full_name and attribute.full_name != saved_name:
                    raise NeedsTensorFlow("object graph and checkpoint disagree on "
                                          f"variable {saved_name}")
                try:
                    return bundle.read(attribute.checkpoint_key)
                except UnreadableBundle as exc:
                    raise NeedsTensorFlow(str(exc)) from exc
        raise NeedsTensorFlow(f"variable {saved_name} has no value in the checkpoint")


class _Inliner:
    """Flattens a function and the functions it calls into SourceOps."""

    def __init__(self, library: dict, info=None, known=None, inputs=(), unroll_loops=False):
        self.library = library
        self.unroll_loops = unroll_loops  # --unroll-loops: else a While is refused
        self.unrolled_loops: dict[str, int] = {}  # While node -> iterations unrolled
        self.recurrent_layers: dict[str, str] = {}  # While node -> lstm/gru/rnn
        self.protos = recurrent.Protos(tensor_value, attr_value)
        self.ops: list[SourceOp] = []
        self.info: dict[str, TensorInfo] = {} if info is None else info
        # Read-time values of small int/bool tensors (known.py).
        self.known: dict[str, np.ndarray] = {} if known is None else known
        self.inputs = set(inputs)   # the signature's inputs
        self.producer: dict[str, SourceOp] = {}
        # Pack of a TensorList -> (items, axis); a run-time-length layer output -> its View
        self.stacked: dict = {}
        self.unrolled = False       # a loop was unrolled: prune what it left unused
        # Inside an unrolled loop: a body node given the same inputs as in an
        # earlier iteration (a constant, a variable read, arithmetic on weights)
        # is made once; (function, node, inputs) -> its outputs.
        self._loop_memo: dict | None = None

    def scratch(self) -> "_Inliner":
        """An inliner whose ops are thrown away (a loop condition evaluated on
        the side) but which sees, and adds to, this one's known values."""
        other = _Inliner(self.library, ChainMap({}, self.info), self.known, self.inputs,
                         self.unroll_loops)
        other._loop_memo = None if self._loop_memo is None else ChainMap({}, self._loop_memo)
        other.producer, other.stacked = ChainMap({}, self.producer), self.stacked
        return other

    def child(self) -> "_Inliner":
        """An inliner for a subgraph (a runtime If's branch, a While's body):
        its own ops, the same library, reading (not adding to) this one's
        read-time values, which its placeholders have none of."""
        other = _Inliner(self.library, self.info, ChainMap({}, self.known), self.inputs,
                         self.unroll_loops)
        other.producer, other.stacked = ChainMap({}, self.producer), self.stacked
        other.unrolled_loops, other.recurrent_layers = self.unrolled_loops, self.recurrent_layers
        return other

    def placeholder(self, name: str, info: TensorInfo | None) -> str:
        """A subgraph input."""
        if info is not None:
            self.info[name] = info
        return name

    @contextmanager
    def in_loop(self):
        outer = self._loop_memo
        self._loop_memo = {} if outer is None else outer
        self.unrolled = True
        try:
            yield
        finally:
            self._loop_memo = outer

    def add_op(self, op: str, name: str, inputs: list, attrs: dict, infos: list) -> list:
        """Emit one op; its output values."""
        values = [name if k == 0 else f"{name}:{k}" for k in range(len(infos))]
        for value, info in zip(values, infos):
            self.info[value] = info
        self.ops.append(SourceOp(op, name, list(inputs), values, attrs))
        for value in values:
            self.producer[value] = self.ops[-1]
        return values

    def run(self, fdef, prefix: str, args: dict) -> list:
        """Emit the nodes `fdef`'s outputs need; return its outputs' bindings
        (a value name, or a Resource)."""
        nodes = {n.name: n for n in fdef.node_def}
        outputs: dict[str, list] = {}

        def resolve(ref: str):
            if ":" not in ref:
                if ref not in args:
                    raise NeedsTensorFlow(f"function {fdef.signature.name}: unknown input {ref}")
                return args[ref]
            node_name, arg, index = ref.split(":")
            node = nodes[node_name]
            return outputs[node_name][_flat_index(node, arg, int(index), self.library)]

        for node in _needed_in_order(fdef, nodes):
            inputs = [resolve(i) for i in node.input if not i.startswith("^")]
            outputs[node.name] = self._node(node, prefix, inputs, fdef.signature.name)
        return [resolve(fdef.ret[arg.name]) for arg in fdef.signature.output_arg]

    def _node(self, node, prefix: str, inputs: list, function: str) -> list:
        name = prefix + node.name
        op = node.op
        if op in _DROPPED:
            return []
        if self._loop_memo is not None:
            if op == "Identity" and inputs and isinstance(inputs[0], str):
                return [inputs[0]]  # loop bookkeeping: no node per iteration
            if not is_random(op):
                key = (function, node.name, tuple(
                    v if isinstance(v, (str, loops.TensorList)) else id(v) for v in inputs))
                if key not in self._loop_memo:
                    self._loop_memo[key] = self._node_outside_loop(node, name, op, inputs)
                return self._loop_memo[key]
        return self._node_outside_loop(node, name, op, inputs)

    def _node_outside_loop(self, node, name: str, op: str, inputs: list) -> list:
        if op in _CALL_OPS or op in self.library:
            callee = self.library.get(node.attr["f"].func.name if op in _CALL_OPS else op)
            if callee is None:
                raise NeedsTensorFlow(f"{name} calls a function missing from the library")
            arg_names = [a.name for a in callee.signature.input_arg]
            return self.run(callee, name + "/", dict(zip(arg_names, inputs)))
        if op in loops.OPS or any(isinstance(v, loops.TensorList) for v in inputs):
            attrs = {k: attr_value(v) for k, v in node.attr.items() if not k.startswith("_")}
            return loops.node(self, node, name, inputs, attrs)
        if any(v.WhichOneof("value") == "func" or
               (v.WhichOneof("value") == "list" and len(v.list.func)) for v in node.attr.values()):
            raise NeedsTensorFlow(f"{op} {name} runs functions (control flow)")
        if op == "ReadVariableOp" or (op == "Identity" and isinstance(inputs[0], Resource)):
            if not isinstance(inputs[0], Resource):
                raise NeedsTensorFlow(f"{name} reads a resource that is not a captured variable")
            if op == "Identity":
                return [inputs[0]]
            return [self.const(name, inputs[0].value, inputs[0].variable,
                               inputs[0].trainable)]
        if any(isinstance(v, Resource) for v in inputs):
            raise NeedsTensorFlow(f"{op} {name} uses a variable directly (resource op)")
        if op.startswith("x2."):   # x2's own synthetic ops are made by the reader only
            raise ConversionError(f"node '{name}' has op type '{op}', which is not a "
                                  f"TensorFlow op", details={"node": name, "op": op})
        if op in NOT_CORE:
            raise NeedsTensorFlow(f"{op} is not a core TensorFlow op")
        if op == "Const":
            return [self.const(name, tensor_value(node.attr["value"].tensor))]
        attrs = dict(DEFAULTS.get(op, {}))
        attrs.update({k: attr_value(v) for k, v in node.attr.items() if not k.startswith("_")})
        shapes = node.attr["_output_shapes"].list.shape if "_output_shapes" in node.attr else None
        if shapes is None:
            raise NeedsTensorFlow(f"{op} {name} has no recorded output shapes")
        dtypes = _output_dtypes(op, attrs, len(shapes))
        infos = [TensorInfo(dtype, shape_of(shape)) for dtype, shape in zip(dtypes, shapes)]
        view = loops.stacked_view(self, op, name, inputs, attrs, infos)
        if view is not None:  # a Transpose/slice of a stacked TensorList, made directly
            return view
        values = self.add_op(op, name, inputs, attrs, infos)
        self._remember(op, attrs, inputs, values, dtypes)
        return values

    def _remember(self, op: str, attrs: dict, inputs: list, values: list, dtypes: list) -> None:
        """Keep the outputs' values when they are small ints/bools computable now."""
        infos = [self.info.get(v) if isinstance(v, str) else None for v in inputs]
        try:
            results = known_outputs(op, attrs, [self.known.get(v) if isinstance(v, str) else None
                                                for v in inputs],
                                    [None if i is None else i.shape for i in infos], dtypes)
        except Exception:  # numpy refused (a malformed node): the value stays unknown
            results = None
        for value, result in zip(values, results or []):
            self.known[value] = result

    def const(self, name: str, value: np.ndarray, param: str = "", trainable: bool = False
              ) -> str:
        self.ops.append(SourceOp("Const", name, [], [name], {}, value, param=param,
                                 trainable=trainable))
        if value.dtype != object:
            self.info[name] = TensorInfo(str(value.dtype), tuple(value.shape))
            if is_small_plain(value):
                self.known[name] = value
        return name


def _needed_in_order(fdef, nodes: dict) -> list:
    """The nodes the function's outputs depend on, each after its inputs."""
    roots = [ref.split(":")[0] for ref in fdef.ret.values() if ":" in ref]
    order, state, stack = [], {}, [(r, False) for r in roots]
    while stack:
        name, done = stack.pop()
        if done:
            state[name] = 2
            order.append(nodes[name])
            continue
        if state.get(name):
            continue
        if name not in nodes:
            raise NeedsTensorFlow(f"function {fdef.signature.name}: unknown node {name}")
        state[name] = 1
        stack.append((name, True))
        for ref in nodes[name].input:
            if not ref.startswith("^") and ":" in ref and not state.get(ref.split(":")[0]):
                stack.append((ref.split(":")[0], False))
    return order


def _flat_index(node, arg: str, index: int, library: dict) -> int:
    """'node:arg:index' -> the position among all of node's outputs."""
    if node.op in _CALL_OPS:
        return index  # one list-valued output argument
    if node.op in library:  # a direct call: one output argument per result
        names = [a.name for a in library[node.op].signature.output_arg]
        if arg not in names:
            raise NeedsTensorFlow(f"{node.op} has no output {arg}")
        return names.index(arg) + index
    args = OUTPUTS.get(node.op)
    if args is None:
        return index  # an op x2 does not map: only its type matters (it is reported)
    position = 0
    for name, _dtype, count in args:
        if name == arg:
            return position + index
        position += _count(node, count)
    raise NeedsTensorFlow(f"{node.op} has no output argument {arg}")


def _count(node, count) -> int:
    if count == 1:
        return 1
    kind, attr = count.split(":")
    value = node.attr.get(attr)
    if value is None:
        default = DEFAULTS.get(node.op, {}).get(attr)
        return len(default) if kind == "list" else int(default)
    return len(value.list.type) if kind == "list" else value.i


def _output_dtypes(op: str, attrs: dict, count: int) -> list[str]:
    args = OUTPUTS.get(op)
    if args is None:  # unmapped op: its dtype only matters for the report
        guess = attrs.get("T") or attrs.get("dtype") or "float32"
        return [guess if isinstance(guess, str) else "float32"] * count
    dtypes: list[str] = []
    for _name, dtype, _count in args:
        if not dtype.startswith("attr:"):
            dtypes.append(dtype)
            continue
        value = attrs.get(dtype[5:])
        if isinstance(value, list):
            dtypes.extend(value)
        else:
            dtypes.append(value)
    while len(dtypes) < count:  # a list argument: repeat its element type
        dtypes.append(dtypes[-1])
    if any(not isinstance(d, str) for d in dtypes):
        raise NeedsTensorFlow(f"{op}: cannot tell its output dtypes")
    return dtypes[:count]


def _meta_graph(path: Path, saved_model):
    if not (path / "saved_model.pb").exists():
        raise NeedsTensorFlow("the SavedModel is in text form (saved_model.pbtxt)")
    if saved_model is None:
        saved_model = parse_saved_model(path)
    graphs = list(saved_model.meta_graphs)
    if len(graphs) != 1:
        graphs = [g for g in graphs if "serve" in g.meta_info_def.tags]
    if len(graphs) != 1:
        raise NeedsTensorFlow(f"{len(saved_model.meta_graphs)} meta graphs")
    if not graphs[0].object_graph_def.nodes:
        raise NeedsTensorFlow("a TF1 SavedModel (no object graph)")
    return graphs[0]


def read_savedmodel_direct(path: str, signature: str | None, saved_model=None,
                           unroll_loops: bool = False) -> SourceGraph:
    """`saved_model`: saved_model.pb already parsed (by format detection)."""
    directory = Path(path)
    check_savedmodel_dir(directory)
    meta = _meta_graph(directory, saved_model)
    sigs = {k: v for k, v in meta.signature_def.items() if k != "__saved_model_init_op"}
    name = pick_signature(sigs, signature, path)
    sig = sigs[name]
    top = {n.name: n for n in meta.graph_def.node}
    library = {f.signature.name: f for f in meta.graph_def.library.function}

    out_refs = {key: sig.outputs[key].name.split(":") for key in sorted(sig.outputs)}
    callers = {node for node, _ in out_refs.values()}
    call = top.get(callers.pop()) if len(callers) == 1 else None
    if call is None or call.op not in _CALL_OPS:
        raise NeedsTensorFlow("the signature's outputs do not come from one function call")
    fn_name = call.attr["f"].func.name
    fdef = library.get(fn_name)
    if fdef is None:
        raise NeedsTensorFlow(f"function {fn_name} is missing from the library")

    placeholder_keys = {sig.inputs[k].name.split(":")[0]: k for k in sig.inputs}
    data_inputs = [i for i in call.input if not i.startswith("^")]
    arg_defs = list(fdef.signature.input_arg)
    if len(data_inputs) != len(arg_defs):
        raise NeedsTensorFlow("the signature call's inputs do not match its function")
    bound = list(meta.object_graph_def.concrete_functions[fn_name].bound_inputs) \
        if fn_name in meta.object_graph_def.concrete_functions else []
    variables = _Variables(directory, meta.object_graph_def)
    inliner = _Inliner(library, unroll_loops=unroll_loops)
    args, inputs, aliases = {}, [], {}
    captured = 0
    for ref, arg in zip(data_inputs, arg_defs):
        node_name = ref.split(":")[0]
        if node_name in placeholder_keys:
            key = placeholder_keys[node_name]
            tensor = sig.inputs[key]
            args[arg.name] = arg.name
            inputs.append(arg.name)
            aliases[arg.name] = key
            inliner.info[arg.name] = TensorInfo(_dtype(tensor.dtype),
                                                shape_of(tensor.tensor_shape))
            continue
        if captured >= len(bound):
            raise NeedsTensorFlow("captured inputs without their objects")
        value = _captured(meta, top, variables, bound[captured])
        captured += 1
        if arg.type == DT_RESOURCE:
            saved = meta.object_graph_def.nodes[bound[captured - 1]]
            variable = saved.variable if saved.HasField("variable") else None
            args[arg.name] = Resource(value, variable.name if variable else "",
                                      bool(variable and variable.trainable))
        else:  # a captured tensor (an eager constant) arrives as a plain input
            args[arg.name] = inliner.const(arg.name, value)
    if len(inputs) != len(sig.inputs):
        raise NeedsTensorFlow("signature inputs are not fed to its function directly")
    # The signature's inputs sorted by name, as TensorFlow flattens its kwargs: the
    # order a SavedModel declares them in is a protobuf map's, which Python
    # iterates in an order that changes from one run to the next.
    order = sorted(sig.inputs)
    inputs.sort(key=lambda v: order.index(aliases[v]) if aliases[v] in order else len(order))

    inliner.inputs = set(inputs)
    results = inliner.run(fdef, "", args)
    outputs, output_aliases = [], {}
    for key, (_node, index) in out_refs.items():
        value = results[int(index)]
        if isinstance(value, Resource) or value in output_aliases:
            raise NeedsTensorFlow(f"signature output {key} is not a distinct tensor")
        outputs.append(value)
        output_aliases[value] = key
    ops = _used(inliner.ops, outputs) if inliner.unrolled else inliner.ops
    source = SourceGraph("tensorflow", ops, inputs, outputs, inliner.info)
    source.input_aliases = aliases
    source.output_aliases = output_aliases
    source.unrolled_loops = dict(inliner.unrolled_loops)
    source.recurrent_layers = dict(inliner.recurrent_layers)
    savedmodel_scopes.record(source)   # Keras layers that hold layers, by name
    return source


def _used(ops: list[SourceOp], outputs: list[str]) -> list[SourceOp]:
    """The ops the outputs need (an unrolled loop computes its last state and
    every loop variable, needed or not)."""
    producer = {v: op for op in ops for v in op.outputs}
    needed, stack = set(), list(outputs)
    while stack:
        op = producer.get(stack.pop())
        if op is not None and id(op) not in needed:
            needed.add(id(op))
            stack.extend(op.inputs)
    return [op for op in ops if id(op) in needed]


def _captured(meta, top: dict, variables: _Variables, node_id: int) -> np.ndarray:
    obj = meta.object_graph_def.nodes[node_id]
    if obj.HasField("variable"):
        return variables.value(node_id)
    if obj.HasField("constant") and obj.constant.operation in top:
        return tensor_value(top[obj.constant.operation].attr["value"].tensor)
    kinds = [k for k in ("resource", "captured_tensor", "function", "user_object")
             if obj.HasField(k)]
    raise NeedsTensorFlow(f"the signature captures a {kinds[0] if kinds else 'object'}")

