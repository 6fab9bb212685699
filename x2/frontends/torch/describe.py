"""Describing a captured torch.export program as a SourceGraph for the shared
mapping loop: FX nodes become SourceOps named `aten.NAME.OVERLOAD`, parameters
and buffers constants named after their state_dict keys, `cond`/`while_loop`
subgraphs the IR's control flow. Size arguments computed from a dynamic dim
reach the mappers as SymDim markers; the sizes themselves become ops
(`aten.sym_size.int` and `sym.mul`-style arithmetic) whose values are 0-d
int64 tensors, for mappers that need them at run time."""
from __future__ import annotations

import operator
import numpy as np
from ...ir import TensorInfo
from ..common import SourceGraph, SourceOp
from .trace import TensorRef, dtype_name, flatten
from .loading import _torch


class SymDim:
    """A size argument that depends on a dynamic dim (a SymInt in the FX graph);
    `value` names the 0-d int64 tensor that holds it at run time."""

    symbolic = True  # what x2/frontends/common.py names in its error

    def __init__(self, expr: str, value: str):
        self.expr = expr
        self.value = value

    def __repr__(self) -> str:
        return f"SymDim({self.expr})"

    def __str__(self) -> str:
        return self.expr


def _dims(shape) -> tuple:
    """Static dims as ints, symbolic (dynamic-batch) dims as None."""
    return tuple(_static(d) for d in shape)


def _static(dim) -> int | None:
    """A dim's size, or None when it is dynamic: a SymInt that Dim.AUTO fixed
    (x2/frontends/torch/specialize.py) holds a constant."""
    if isinstance(dim, int):
        return int(dim)
    value = dim.node.maybe_as_int() if hasattr(dim, "node") else None
    return None if value is None else int(value)


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


def describe_program(program, root: str = "") -> SourceGraph:
    """`root`: the path of the source model in the captured module, where a
    wrapper holds it (--with-cache's step holds it as `model`): its state_dict
    keys and module scopes are named as from the source itself."""
    from torch.export.graph_signature import InputKind

    sig = program.graph_signature
    consts: dict[str, str] = {}   # placeholder name -> state_dict key
    user_inputs: list[str] = []
    for spec in sig.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            # a Python number given to forward (--input-value) is a constant of the program
            if type(spec.arg).__name__ == "TensorArgument":
                user_inputs.append(spec.arg.name)
        elif spec.target is not None:
            consts[spec.arg.name] = spec.target

    def constant(node):
        key = consts[node.name]
        tensor = program.state_dict.get(key)
        if tensor is None:
            tensor = program.constants[key]
        name = _under(key, root)
        return (name, tensor.detach().cpu().numpy(), name if key in program.state_dict else "",
                key in program.graph_signature.parameters)

    ops, info, outs = _describe_graph(program.graph, program.graph_module, consts, constant,
                                      root)
    named = _output_names(program, len(outs))
    aliases = {v: named[i] if named else ("output" if len(outs) == 1 else f"output_{i}")
               for i, v in enumerate(outs)}
    return SourceGraph("pytorch", ops, user_inputs, outs, info,
                       input_aliases={v: v for v in user_inputs}, output_aliases=aliases)


def _under(path: str, root: str) -> str:
    """`path` (a state_dict key or module path in the captured module) as the
    source model at `root` names it."""
    return path[len(root) + 1:] if root and path.startswith(f"{root}.") else path


def _subgraph(module, root: str) -> SourceGraph:
    """A higher-order op's branch or body (an FX GraphModule whose inputs are
    all placeholders: torch.export passes parameters to it as operands)."""
    ops, info, outs = _describe_graph(module.graph, module, {}, None, root)
    inputs = [n.name for n in module.graph.nodes if n.op == "placeholder"]
    return SourceGraph("pytorch", ops, inputs, outs, info)


# torch.export's higher-order control-flow ops: their subgraph arguments
# (get_attr nodes naming GraphModules) become SourceGraph attributes.
_CONTROL_FLOW = {"cond": ("true_graph", "false_graph"),
                 "while_loop": ("cond_graph", "body_graph"),
                 "scan": ("combine_graph",)}


def _control_flow_op(node, ref, submodules, root: str) -> SourceOp:
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
        attrs[name] = _subgraph(submodules[fn.name], root)
    inputs = [ref(v) for v in values]
    return SourceOp(kind, node.name, inputs, [], attrs)


def _describe_graph(fx_graph, owner, consts: dict, constant, root: str):
    """(ops, info, output values) of an FX graph; `constant(node)` gives a
    placeholder in `consts` as (state_dict key, array, parameter name, trainable);
    `root`: describe_program's."""
    torch = _torch()
    # Ops whose result depends on their input's memory layout, not only on its
    # values: their mappers get that layout.
    layout_ops = {torch.ops.aten.as_strided.default}
    rename: dict[str, str] = {}
    sizes: dict[str, object] = {}  # size-valued nodes: an int, or a SymDim when dynamic
    submodules: dict[str, object] = {}
    ops: list[SourceOp] = []
    info: dict[str, TensorInfo] = {}
    positions = {node: i for i, node in enumerate(fx_graph.nodes)}

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
            elif isinstance(node.meta.get("val"), torch.SymInt):
                # a size passed into a subgraph (a nested loop's trip count):
                # a 0-d int64 tensor there, as sizes are
                sizes[node.name] = SymDim(str(node.meta["val"]), node.name)
                info[node.name] = TensorInfo("int64", ())
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
            # size computed from a dynamic dim.
            if isinstance(val, torch.SymInt) and val.node.maybe_as_int() is not None:
                val = val.node.maybe_as_int()
            if isinstance(val, int):
                sizes[node.name] = int(val)
                continue
            ops.append(_size_op(node, ref, positions))
            ops[-1].scope = module_scope(node, root)
            info[node.name] = TensorInfo("int64", ())
            sizes[node.name] = SymDim(str(val), node.name)
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
            op = _control_flow_op(node, ref, submodules, root)
            op.outputs = outputs
            op.scope = module_scope(node, root)
            ops.append(op)
            continue
        args, kwargs = ref(list(node.args)), ref(dict(node.kwargs))
        inputs = _read_values(flatten([args, list(kwargs.values())]))
        attrs = {"args": args, "kwargs": kwargs}
        if node.target in layout_ops:
            attrs["input_layout"] = _layout(node.args[0])
        ops.append(SourceOp(str(node.target), node.name, inputs, outputs, attrs,
                            scope=module_scope(node, root)))
    out_node = next(n for n in fx_graph.nodes if n.op == "output")
    outs = [rename.get(a.name, a.name) for a in flatten(list(out_node.args))
            if isinstance(a, torch.fx.Node)]
    return ops, info, outs


def module_scope(node, root: str = "") -> str:
    """The modules whose forward ran an FX node (its `nn_module_stack`: key ->
    (path, class); a later call of a module has a key ending "@N"), the root
    module left out, as x2/ir/scopes.py writes them. Where the source sits at
    `root` in a wrapper, the source's own root (the module at `root`) is left
    out and the paths below it are the source's."""
    from ...ir.scopes import Scope, encode
    chain = []
    for key, entry in (node.meta.get("nn_module_stack") or {}).items():
        try:
            path, cls = entry
        except (TypeError, ValueError):
            continue
        if not isinstance(path, str) or not path or path == root:
            continue
        path = _under(path, root)
        call = str(key).rpartition("@")[2] if "@" in str(key) else "0"
        name = cls if isinstance(cls, str) else \
            f"{getattr(cls, '__module__', '')}.{getattr(cls, '__qualname__', cls)}"
        chain.append(Scope(path, int(call) if call.isdigit() else 0, name))
    return encode(chain)


# Python arithmetic on sizes in FX graphs, by the SourceOp type it becomes.
_SIZE_ARITHMETIC = {operator.add: "sym.add", operator.sub: "sym.sub", operator.mul: "sym.mul",
                    operator.floordiv: "sym.floordiv", operator.mod: "sym.mod",
                    operator.neg: "sym.neg"}
_COMMUTATIVE = {operator.add, operator.mul}


def _size_op(node, ref, positions: dict) -> SourceOp:
    """The op computing a size from a dynamic dim: `aten.sym_size.int(x, dim)`
    or arithmetic on sizes (`sym.mul` ...). Its size operands are SymDims or
    ints in `args`; `inputs` lists the tensors it reads. `positions`: each
    FX node's place in its graph."""
    operands = list(node.args)
    if node.target in _COMMUTATIVE:
        # in graph order, not sympy's: torch.export writes `s10 + s2` (it
        # orders symbols by name), so one decoder layer in ten would read
        # `past + seq` where the others read `seq + past`, as another class
        operands.sort(key=lambda a: positions.get(a, len(positions)))
    args = ref(operands)
    kind = _SIZE_ARITHMETIC.get(node.target) or {
        "sym_max": "sym.max", "sym_min": "sym.min"}.get(getattr(node.target, "__name__", ""),
                                                          str(node.target))
    return SourceOp(kind, node.name, _read_values(flatten(args)), [node.name],
                    {"args": args, "kwargs": {}})


def _read_values(leaves) -> list:
    """The values an op reads: its tensors, then the sizes it takes (SymDims,
    so that pruning keeps the ops that compute them)."""
    leaves = list(leaves)
    return [a for a in leaves if isinstance(a, TensorRef)] + \
        [TensorRef(a.value) for a in leaves if isinstance(a, SymDim)]


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

