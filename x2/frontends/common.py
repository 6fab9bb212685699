"""What every frontend shares: a neutral view of source ops, subgraph
selection (the pruning pass on the source graph), and the mapping loop that
checks every op before converting any, so all unsupported ops are reported
at once."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import ConversionError, SelectionError, UnsupportedOpsError, X2Error
from ..ir import Graph, Origin, TensorInfo, recipes
from ..ir.provenance import looks_up_source_table, rearranges_weight, reshapes_keras_weight
from ..ir.bounds import foldable
from ..ir.ops import evaluate
from ..ir.shape_rules import infer as infer_shape
from ..registry import Registry
from .source_fold import constant_values, fold_op, is_static


def one_line(text, limit: int = 400) -> str:
    """Exception or message text as one line (the CLI prints one), shortened."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


@dataclass
class SourceOp:
    type: str
    name: str
    inputs: list[str]          # value names (producer outputs), data inputs only
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    const_value: np.ndarray | None = None   # for constant ops
    param: str = ""                          # constants: the source's parameter name, if one
    trainable: bool = False                  # constants: the source learns it (x2/ir/provenance.py)
    param_perm: tuple | None = None          # constants: the value is `param` transposed so
    # the source modules whose forward ran the op, outermost first (torch:
    # nn_module_stack), as x2/ir/scopes.py writes them; "" where unknown
    scope: str = ""


@dataclass
class SourceGraph:
    framework: str
    ops: list[SourceOp]                      # topological order
    inputs: list[str]                        # graph input value names, in signature order
    outputs: list[str]                       # graph output value names, in signature order
    info: dict[str, TensorInfo]              # dtype/shape of every value known
    input_aliases: dict[str, str] = field(default_factory=dict)   # IR name for an input value
    output_aliases: dict[str, str] = field(default_factory=dict)  # IR name for an output value
    version: int = 1                         # opset / producer version for versioned mappers
    path: str = ""                           # the model file, named in mapping errors
    unrolled_loops: dict[str, int] = field(default_factory=dict)  # While -> iterations
    recurrent_layers: dict[str, str] = field(default_factory=dict)  # While -> lstm/gru/rnn
    # --for training: the Identity node a Keras Dropout layer left -> its rate
    # (x2/frontends/tf/trace.py); the Identity mapper emits dropout(rate).
    dropouts: dict[str, float] = field(default_factory=dict)
    # A subgraph of a control-flow op (an attribute value of its SourceOp):
    # the values of the graph around it that it reads by name. The op lists
    # them after its own inputs, so pruning and ordering see them.
    captures: list[str] = field(default_factory=list)
    # interface value -> the source's name for each dynamic axis (ONNX dim_param)
    dims: dict[str, list] = field(default_factory=dict)
    # what the capture found about the dims asked dynamic, for report.json's
    # source record: "specialized_dims" (fixed at their example size) and
    # "bounded_dims" (x2/frontends/torch/specialize.py)
    dim_facts: dict = field(default_factory=dict)
    # the modules of a source that is not a torch module, as GraphMeta holds
    # a torch source's: an ONNX file torch exported (x2/frontends/onnx/scopes.py:
    # its modules' classes, the initializers named by state_dict keys, the root
    # module's class) or a Keras model (x2/frontends/tf/keras_scopes.py: its
    # layers that hold layers, no state)
    source_modules: dict[str, str] = field(default_factory=dict)
    source_state: dict[str, dict] = field(default_factory=dict)
    source_class: str = ""


class MapContext:
    """Handed to each mapper: read source facts, emit IR nodes."""

    def __init__(self, graph: Graph, source: SourceGraph, keep_trainable: bool = False,
                 registry: Registry | None = None, evaluate=None):
        self.graph = graph
        self.source = source
        # x2 convert --for training: arithmetic on a learned weight is not
        # evaluated here, so the weight stays a parameter (x2/passes/fold.py).
        self.keep_trainable = keep_trainable
        self.registry = registry
        self.evaluate = evaluate
        self.current: SourceOp | None = None
        self.current_mapper = ""

    def subgraph(self, sub: SourceGraph, bound: dict[str, str] | None = None
                 ) -> tuple[Graph, list[str]]:
        """Map a control-flow op's source subgraph to a closed IR graph.
        `bound` maps subgraph inputs to the outer values passed to them (torch's
        operands); the other inputs stay its own (a loop's state). Its IR inputs
        are its own inputs, then the bound inputs and captured outer values
        (ONNX's by-name reads) that are not constants; constants are copied in,
        so the mappers inside see them as constants. Returns the graph and the
        outer values to pass for those inputs."""
        bound = dict(bound or {})
        bound.update((v, v) for v in sub.captures)
        own = [v for v in sub.inputs if v not in bound]
        constant = {v: o for v, o in bound.items() if o in self.graph.constants}
        passed = [v for v in [*sub.inputs, *sub.captures] if v in bound and v not in constant]
        passed = list(dict.fromkeys(passed))
        origin = self.graph.origin
        ops = [SourceOp("Initializer", v, [], [v], {}, np.asarray(self.graph.constants[o]),
                        param=origin[o].param if o in origin else "",
                        trainable=o in origin and origin[o].trainable)
               for v, o in constant.items()] + list(sub.ops)
        info = {v: self.graph.info[o] for v, o in bound.items() if o in self.graph.info}
        info.update(sub.info)
        inner = SourceGraph(sub.framework, ops, [*own, *passed], list(sub.outputs), info,
                            version=sub.version, path=sub.path)
        return map_graph(inner, self.registry, self.evaluate, self.keep_trainable), \
            [bound[v] for v in passed]

    def _on_trainable(self, op: str, inputs: list[str]) -> bool:
        """Whether `op` computes on a source variable that --for training keeps
        (or that a torch source's names keep: looks_up_source_table)."""
        if inputs and looks_up_source_table(op, self.graph.origin.get(inputs[0]),
                                            self.source.framework):
            return True
        if not self.keep_trainable:
            return False
        # Any source variable: a learned weight, or statistics kept beside it
        # (BatchNorm's moving mean/variance, which x2/passes/training.py needs).
        origins = [self.graph.origin.get(v) for v in inputs]
        learned = [o for o in origins if o is not None and (o.trainable or o.param)]
        return bool(learned) and not (len(learned) == 1 and origins[0] is learned[0]
                                      and rearranges_weight(op, learned[0]))

    # facts about source values
    def shape(self, value: str):
        info = self.graph.info.get(value) or self.source.info.get(value)
        return None if info is None else info.shape

    def dtype(self, value: str) -> str:
        info = self.graph.info.get(value) or self.source.info.get(value)
        if info is None:
            raise ConversionError(f"{self.current.type} node '{self.current.name}': the dtype "
                                  f"of '{value}' is unknown")
        return info.dtype

    def const(self, value: str) -> np.ndarray | None:
        return self.graph.constants.get(value)

    def require_const(self, value: str, what: str) -> np.ndarray:
        array = self.const(value)
        if array is None:
            raise ConversionError(
                f"{self.current.type} node '{self.current.name}': {what} must be a constant "
                f"at conversion time, but '{value}' is computed by the graph")
        return array

    # building IR
    def constant(self, array, hint: str = "const") -> str:
        return self.graph.add_constant(f"{self.current.name}/{hint}" if self.current else hint,
                                       np.asarray(array))

    def run_time_dim(self, value: str, axis: int, outputs: list[str] | None = None) -> str:
        """The size of `value` along `axis` as a 0-D int64 value computed by the
        graph (`shape`, then `gather` of the one dim): a dim only known at run
        time."""
        dims = self.emit("shape", [value], {"dtype": "int64"}, dtype="int64",
                         shape=(len(self.shape(value)),), hint="shape")
        index = self.constant(np.array(axis, np.int64), "dim")
        return self.emit("gather", [dims, index], {"axis": 0}, outputs=outputs, dtype="int64",
                         shape=(), hint="size")

    def emit(self, op: str, inputs: list[str], attrs: dict | None = None, *,
             outputs: list[str] | None = None, dtype: str | None = None, shape=None,
             hint: str = "") -> str:
        """Add one IR node; returns its first output. `outputs` defaults to fresh names;
        pass the source op's outputs for the node that produces them.

        An op whose inputs are all constants is evaluated now, so mappers
        downstream see constants (e.g. weights behind Identity chains); so is
        the `shape` of a value whose shape is static (the sizes and slices
        that models compute from their input's shape)."""
        if op == "shape" and outputs is not None and is_static(self.shape(inputs[0])):
            array = np.array(self.shape(inputs[0]), dtype=(attrs or {}).get("dtype", "int64"))
            self.graph.constants[outputs[0]] = array
            self.graph.info[outputs[0]] = TensorInfo(str(array.dtype), tuple(array.shape))
            return outputs[0]
        if outputs is not None and inputs and all(v in self.graph.constants for v in inputs) \
                and not self._on_trainable(op, inputs) \
                and foldable(op, [self.graph.constants[v] for v in inputs], attrs or {}):
            folded = evaluate(op, [self.graph.constants[v] for v in inputs], attrs or {})
            if folded is not None:
                for name, array in zip(outputs, folded):
                    array = np.asarray(array)
                    self.graph.constants[name] = array
                    self.graph.info[name] = TensorInfo(str(array.dtype), tuple(array.shape))
                if op in ("transpose", "identity"):
                    # A transposed weight is still that parameter (names the emitted layer).
                    self.graph.derive_origin(outputs[0], inputs[0], (attrs or {}).get("perm"))
                elif self.keep_trainable and rearranges_weight(
                        op, self.graph.origin.get(inputs[0])) or reshapes_keras_weight(
                        op, self.graph.origin.get(inputs[0]), self.source.source_state):
                    self.graph.derive_origin(outputs[0], inputs[0])
                else:   # computed from Keras weights (an inference BatchNorm's multiplier)
                    recipes.note_folded(self.graph, op, inputs, outputs[0])
                return outputs[0]
        name = self.graph.fresh_name(f"{self.current.name}/{hint or op}") if outputs is None \
            else outputs[0]
        source = {"op": self.current.type, "name": self.current.name,
                  "mapper": self.current_mapper}
        if self.current.scope:
            source["scope"] = self.current.scope
        node = self.graph.add_node(op, inputs, attrs=attrs, name=name, outputs=outputs,
                                   source=source)
        for out in node.outputs:
            if out in self.source.info and out not in self.graph.info:
                self.graph.info[out] = self.source.info[out]
        if outputs is None:
            self.graph.info[node.outputs[0]] = TensorInfo(
                dtype or self.dtype(inputs[0]), shape)
        elif dtype is not None or shape is not None:
            self.graph.info[node.outputs[0]] = TensorInfo(dtype or self.dtype(inputs[0]), shape)
        if len(node.outputs) == 1:
            self._fill_shape(node)
        return node.outputs[0]

    def _fill_shape(self, node) -> None:
        """An output shape the source did not infer, from the IR's rules."""
        out = node.outputs[0]
        info = self.graph.info.get(out)
        if info is not None and info.shape is not None and None not in info.shape:
            return
        shapes = [self.shape(v) if v else None for v in node.inputs]
        lengths = [s[0] if s is not None and len(s) == 1 else None for s in shapes]
        shape = infer_shape(node.op, shapes, node.attrs, lengths)
        if shape is None:
            return
        if info is not None and info.shape is not None:
            if len(info.shape) != len(shape):
                return  # the source's inference disagrees: trust neither more
            shape = tuple(s if s is not None else r for s, r in zip(info.shape, shape))
        dtype = info.dtype if info is not None else None
        if dtype is None:
            try:
                dtype = self.dtype(node.inputs[0])
            except ConversionError:
                return
        self.graph.info[out] = TensorInfo(dtype, shape)

    def alias(self, output: str, value: str) -> None:
        """The source output is the same tensor as `value` (identity-like ops)."""
        self.emit("identity", [value], outputs=[output])


def _symbolic_sizes(value) -> list[str]:
    """The symbolic size markers (a frontend's objects with `symbolic = True`)
    among an op's attributes, as text."""
    if getattr(value, "symbolic", False):
        return [str(value)]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return list(dict.fromkeys(s for v in value for s in _symbolic_sizes(v)))
    return []


def _scope_outputs(source: SourceGraph, layer: str) -> list[str]:
    """The tensors leaving a layer's name scope: a Keras layer 'mixed5' is the
    scope 'mixed5' or, after Keras 3 export renames it, 'mixed5_1'."""
    scope = re.compile(rf"(^|/){re.escape(layer)}(_\d+)?/")
    inside = {op.name for op in source.ops if scope.search(op.name)}
    if not inside:
        return []
    used_outside = {v for op in source.ops if op.name not in inside for v in op.inputs}
    return [v for op in source.ops if op.name in inside for v in op.outputs
            if v in used_outside or v in source.outputs]


def _suggest(name: str, candidates: list[str]) -> str:
    short = {c.rsplit("/", 1)[-1]: c for c in reversed(candidates)}
    close = [short[c] for c in difflib.get_close_matches(name.rsplit("/", 1)[-1], list(short),
                                                          n=5, cutoff=0.5)]
    close = close or difflib.get_close_matches(name, candidates, n=5, cutoff=0.4)
    pool = close or candidates[:8]
    return ", ".join(repr(c) for c in pool)


def select_subgraph(source: SourceGraph, inputs: list[str] | None,
                    outputs: list[str] | None) -> SourceGraph:
    """Keep only the ops between the named inputs and outputs.

    Names may be value names ('block/relu:0' style, the ':0' optional) or op
    names. A named input becomes a graph input; an output that depends on a
    graph input not named is an error listing the missing inputs."""
    producer = {out: op for op in source.ops for out in op.outputs}
    known = list(producer) + list(source.inputs)
    by_alias = {v: k for k, v in {**source.input_aliases, **source.output_aliases}.items()}

    def resolve(name: str, role: str) -> str:
        for candidate in (name, by_alias.get(name), name + ":0", name.removesuffix(":0")):
            if candidate and (candidate in producer or candidate in source.inputs):
                return candidate
        # Names inside function-call scopes ('StatefulPartitionedCall/model/...'):
        # accept a unique trailing part of the name.
        tail = "/" + name.removesuffix(":0")
        matches = [v for v in known if v.endswith(tail)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise SelectionError(f"--{role}: '{name}' is ambiguous; it ends "
                                 f"{len(matches)} tensor names: {_suggest(name, matches)}",
                                 details={"name": name, "role": role})
        layer_outputs = _scope_outputs(source, name.removesuffix(":0"))
        if len(layer_outputs) == 1:
            return layer_outputs[0]
        if layer_outputs:
            raise SelectionError(f"--{role}: the layer '{name}' has {len(layer_outputs)} "
                                 f"outputs; name one: {_suggest(name, layer_outputs)}",
                                 details={"name": name, "role": role})
        raise SelectionError(
            f"--{role}: no tensor named '{name}' in the model. Closest names: "
            f"{_suggest(name, list(dict.fromkeys(known + list(by_alias))))}",
            details={"name": name, "role": role})

    new_outputs = [resolve(n, "outputs") for n in outputs] if outputs else list(source.outputs)
    new_inputs = [resolve(n, "inputs") for n in inputs] if inputs else list(source.inputs)
    boundary = set(new_inputs)
    needed: set[str] = set()
    missing_inputs: set[str] = set()
    stack = list(new_outputs)
    while stack:
        value = stack.pop()
        if value in needed:
            continue
        needed.add(value)
        if value in boundary:
            continue
        op = producer.get(value)
        if op is None:
            if value in source.inputs:
                missing_inputs.add(value)
            continue
        for out in op.outputs:
            needed.add(out)
        stack.extend(op.inputs)
    if missing_inputs:
        names = [source.input_aliases.get(v, v) for v in sorted(missing_inputs)]
        raise SelectionError(
            f"the outputs {new_outputs} depend on input(s) {names} that are not named in "
            f"--inputs {inputs}. Add them to --inputs, or pick outputs that do not need them.",
            details={"missing_inputs": names})
    ops = [op for op in source.ops
           if any(o in needed for o in op.outputs) and not all(o in boundary for o in op.outputs)]
    return SourceGraph(source.framework, ops, new_inputs, new_outputs, source.info,
                       {k: v for k, v in source.input_aliases.items() if k in boundary},
                       {k: v for k, v in source.output_aliases.items() if k in new_outputs},
                       source.version, source.path, dropouts=source.dropouts,
                       dims=source.dims, source_modules=source.source_modules,
                       source_state=source.source_state, source_class=source.source_class)


def apply_input_shapes(source: SourceGraph, shapes: dict[str, list] | None) -> None:
    """--input-shape for formats whose inputs are declared in the file: each
    shape must agree with the declared one wherever that is known (a dim
    given by name, None here, must be dynamic in the file)."""
    for name, dims in (shapes or {}).items():
        if name not in source.inputs:
            raise SelectionError(f"--input-shape: '{name}' is not an input; inputs are "
                                 f"{', '.join(source.inputs)}")
        info = source.info[name]
        old = info.shape
        if old is not None and (len(old) != len(dims) or any(
                o is not None and o != d for o, d in zip(old, dims))):
            shown = ["NAME" if d is None else d for d in dims]
            raise SelectionError(f"--input-shape {name}: {shown} contradicts the model's "
                                 f"shape {['?' if o is None else o for o in old]} (a dim "
                                 f"given by a name must be dynamic in the model)")
        source.info[name] = TensorInfo(info.dtype, tuple(dims))


def fix_input_values(source: SourceGraph, values: dict | None) -> None:
    """--input-value for formats whose inputs are declared in the file: each
    named input becomes a constant of its declared dtype (a branch on it, an
    exporter's `if sr == 16000`, then folds to the branch taken)."""
    for name, value in (values or {}).items():
        if name not in source.inputs:
            raise SelectionError(f"--input-value: '{name}' is not an input; inputs are "
                                 f"{', '.join(source.inputs)}")
        info = source.info[name]
        array = np.array(value, dtype=info.dtype)
        declared = info.shape
        if declared is not None and (len(declared) != array.ndim or any(
                d is not None and d != a for d, a in zip(declared, array.shape))):
            raise SelectionError(f"--input-value {name}: a value of shape {list(array.shape)} "
                                 f"for an input of shape "
                                 f"{['?' if d is None else d for d in declared]}")
        source.inputs.remove(name)
        source.ops.insert(0, SourceOp("Constant", name, [], [name], const_value=array))
        source.info[name] = TensorInfo(str(array.dtype), tuple(array.shape))


def split_input_shapes(shapes: dict[str, list] | None
                       ) -> tuple[dict[str, list] | None, dict[str, list], dict[str, int]]:
    """--input-shape dims as given (x2/cli.py parse_input_shapes): an int fixes
    a dim; a name ("seq") keeps it dynamic under that symbol, "seq=16" also
    gives the example size. Returns (the shapes with None for each named dim,
    input -> symbol per axis, symbol -> example size)."""
    if not shapes:
        return shapes, {}, {}
    static, named, examples = {}, {}, {}
    for name, dims in shapes.items():
        static[name], named[name] = [], []
        for dim in dims:
            if isinstance(dim, str):
                symbol, _, size = dim.partition("=")
                static[name].append(None)
                named[name].append(symbol)
                if size:
                    if examples.get(symbol, int(size)) != int(size):
                        raise SelectionError(f"--input-shape: {symbol} is given two example "
                                             f"sizes, {examples[symbol]} and {size}")
                    examples[symbol] = int(size)
            else:
                static[name].append(None if dim is None or dim < 0 else int(dim))
                named[name].append(None)
        if not any(named[name]):
            del named[name]
    return static, named, examples


def name_dims(graph: Graph, named: dict[str, list], examples: dict[str, int]) -> None:
    """Record the symbols --input-shape gave (x2/ir/symbols.py) on the graph."""
    for value, symbols in named.items():
        if value not in graph.inputs:
            continue  # pruned away, or renamed by the frontend (its own names stand)
        shape = graph.info[value].shape or ()
        old = graph.meta.dims.get(value) or [None] * len(shape)
        graph.meta.dims[value] = [s if s is not None and i < len(shape) and shape[i] is None
                                  else o for i, (s, o) in enumerate(zip(symbols, old))]
    graph.meta.dim_examples.update(examples)


def map_graph(source: SourceGraph, registry: Registry, evaluate=None,
              keep_trainable: bool = False) -> Graph:
    """Map every source op to IR nodes. All unsupported ops are found first;
    unmapped ops that only compute constants are run by `evaluate` instead
    (x2/frontends/source_fold.py), and reported only if that fails.
    `keep_trainable`: computations on learned weights stay nodes (--for training)."""
    unsupported: dict[str, list[str]] = {}
    mappers = _find_mappers(source, registry, evaluate, unsupported)
    if unsupported:
        raise UnsupportedOpsError(source.framework, unsupported)

    graph = Graph()
    graph.meta.source_framework = source.framework
    # a Keras source's weights by name: what folding them records (x2/ir/recipes.py)
    graph.meta.source_state = dict(source.source_state)
    for value in source.inputs:
        info = source.info[value]
        graph.add_input(value, info.dtype, info.shape)
    graph.meta.dims.update({v: list(d) for v, d in source.dims.items()
                            if v in source.inputs or v in source.outputs})
    ctx = MapContext(graph, source, keep_trainable, registry, evaluate)
    for op, fn in zip(source.ops, mappers):
        ctx.current = op
        if op.const_value is not None:
            graph.constants[op.outputs[0]] = op.const_value
            graph.info[op.outputs[0]] = TensorInfo(str(op.const_value.dtype),
                                                   tuple(op.const_value.shape))
            graph.origin[op.outputs[0]] = Origin(op.outputs[0], op.param_perm, param=op.param,
                                                 trainable=op.trainable)
            continue
        if fn is _fold:
            arrays = [graph.constants.get(v) if v else None for v in op.inputs]
            folded = None if any(a is None for a, v in zip(arrays, op.inputs) if v) else \
                fold_op(op, arrays, source.info, evaluate)
            if folded is None:
                unsupported.setdefault(op.type, []).append(op.name)
            for out, array in zip(op.outputs, folded or []):
                if out:
                    graph.constants[out] = array
                    graph.info[out] = TensorInfo(str(array.dtype), tuple(array.shape))
            continue
        ctx.current_mapper = f"{fn.__module__}.{fn.__name__}"
        try:
            fn(ctx, op)
        except X2Error as exc:
            _name_file(exc, source.path)
            raise
        except (Exception, RecursionError) as exc:
            # A malformed node a mapper did not anticipate, or a bug in x2:
            # name the node rather than leak "KeyError: 'x'".
            where = f"{source.path}: " if source.path else ""
            symbolic = _symbolic_sizes(op.attrs)
            if symbolic:
                raise ConversionError(
                    f"{where}{op.type} node '{op.name}' takes a size computed from a dynamic "
                    f"dim ({', '.join(symbolic)}), which x2 does not map for this op yet; "
                    f"give that dim as a number in --input-shape",
                    details={"node": op.name, "op": op.type}) from exc
            raise ConversionError(
                f"{where}{op.type} node '{op.name}' cannot be converted ({type(exc).__name__}: "
                f"{one_line(exc, 200) or 'no detail'}); the node is malformed or x2's mapper "
                f"{ctx.current_mapper} has a bug", details={"node": op.name, "op": op.type,
                                                          "mapper": ctx.current_mapper}) from exc
    if unsupported:  # constant-only ops the source framework could not run either
        raise UnsupportedOpsError(source.framework, unsupported)
    # Mappers give the IR value that equals a source tensor that tensor's name.
    for value in [*source.inputs, *(v for op in source.ops for v in op.outputs)]:
        if value in graph.info or graph.producer(value) is not None:
            graph.origin.setdefault(value, Origin(value))
    graph.outputs = list(source.outputs)
    _apply_aliases(graph, source)
    graph.meta.source_ops = _count(op.type for op in source.ops)
    graph.toposort()
    graph.validate()
    return graph


def _find_mappers(source: SourceGraph, registry: Registry, evaluate,
                  unsupported: dict[str, list[str]]) -> list[Callable | None]:
    """Each op's mapper (None for constants); ops without one are added to
    `unsupported`, those inside subgraphs too, so all are reported at once."""
    mappers: list[Callable | None] = []
    constant = constant_values(source) if evaluate is not None else set()
    for op in source.ops:
        if op.const_value is not None:
            mappers.append(None)
            continue
        fn = registry.lookup(op.type, source.version)
        if fn is None and op.outputs and all(o in constant for o in op.outputs if o):
            fn = _fold
        if fn is None:
            unsupported.setdefault(op.type, []).append(op.name)
        mappers.append(fn)
        for value in op.attrs.values():
            if isinstance(value, SourceGraph):
                _find_mappers(value, registry, evaluate, unsupported)
    return mappers


def _fold(ctx, op):
    """Marks an unmapped op that map_graph folds with the source framework."""


def _name_file(exc: X2Error, path: str) -> None:
    """Put the model file in front of a mapper's error message (once)."""
    if path and path not in exc.message:
        exc.message = f"{path}: {exc.message}"
        exc.args = (exc.message,)


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def _apply_aliases(graph: Graph, source: SourceGraph) -> None:
    """Give graph inputs/outputs the names of the source signature."""
    renames = {**source.input_aliases}
    for value, alias in source.output_aliases.items():
        if value in graph.inputs or value in graph.constants:
            # An output that is an input or a constant: give it its own node.
            node = graph.add_node("identity", [value], name=alias, outputs=[alias])
            graph.info[alias] = graph.info[value]
            graph.derive_origin(alias, value)
            graph.outputs = [alias if v == value else v for v in graph.outputs]
            del node
        else:
            renames[value] = alias
    for old, new in renames.items():
        if old == new:
            continue
        if new in graph.info and new not in renames:
            raise ConversionError(f"signature name {new!r} clashes with a tensor of the graph")
    for node in graph.nodes:
        node.inputs = [renames.get(v, v) for v in node.inputs]
        node.outputs = [renames.get(v, v) for v in node.outputs]
    graph.inputs = [renames.get(v, v) for v in graph.inputs]
    graph.outputs = [renames.get(v, v) for v in graph.outputs]
    graph.info = {renames.get(k, k): v for k, v in graph.info.items()}
    graph.origin = {renames.get(k, k): v for k, v in graph.origin.items()}
    graph.meta.dims = {renames.get(k, k): v for k, v in graph.meta.dims.items()}
