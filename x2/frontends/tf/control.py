"""TensorFlow's functional control flow kept as control flow, for the direct
SavedModel reader: an `If` whose condition (a `Case` whose branch index) is
known only at run time, and a `While` that is neither a Keras recurrent layer
nor unrolled, become one SourceOp each whose branches / condition / body are
SourceGraphs read from the function library (mappers/tf/control.py makes the
IR's `if` (nested ones for a Case) / `loop`).

Function inputs that are tensors become subgraph inputs; captured variables
(resources) are read inside the subgraph, as constants. A While's loop
variables that its body returns unchanged (the maximum trip count, captured
tensors) are invariants, passed to the loop rather than carried by it, so a
constant one stays a constant inside the body."""
from __future__ import annotations

from ...errors import ConversionError
from ...ir import TensorInfo
from ..common import SourceGraph


def _is_tensor(value) -> bool:
    return isinstance(value, str)


def _refuse_lists(node, name: str, inputs: list) -> None:
    if any(not _is_tensor(v) and type(v).__name__ == "TensorList" for v in inputs):
        raise ConversionError(
            f"{node.op} node '{name}' carries a TensorList (a TensorArray); x2 keeps loops "
            f"as loops only over tensors: --unroll-loops converts it as one copy of its body "
            f"per iteration where the trip count is static", details={"node": name, "op": node.op})


def _branch(inliner, fdef, prefix: str, inputs: list, call) -> tuple[SourceGraph, list[str]]:
    """The function as a SourceGraph of its own: tensor arguments become its
    inputs (named after the function's arguments), resources pass through."""
    child = inliner.child()
    args, params = [], []
    for arg, value in zip(fdef.signature.input_arg, inputs):
        if _is_tensor(value):
            param = child.placeholder(f"{prefix}{arg.name}", inliner.info.get(value))
            params.append(param)
            args.append(param)
        else:
            args.append(value)
    results = [_through_identities(child, v) for v in call(child, fdef, prefix, args)]
    for i, value in enumerate(results):
        # A While body returns its captured variables unchanged; anything else
        # that is not a tensor (a new TensorList) cannot be a subgraph output.
        if not _is_tensor(value) and not (i < len(inputs) and value is inputs[i]):
            raise ConversionError(f"function {fdef.signature.name} returns a variable or a "
                                  f"TensorList; x2 converts control flow over tensors only")
    info = {v: child.info[v] for op in child.ops for v in op.outputs if v in child.info}
    info.update({p: child.info[p] for p in params if p in child.info})
    outputs = [v for v in results if _is_tensor(v)]
    return SourceGraph("tensorflow", child.ops, params, outputs, info), results


def _through_identities(child, value):
    """The value an Identity chain inside the subgraph passes on (a While body
    returns an unchanged loop variable through an Identity)."""
    while _is_tensor(value):
        op = child.producer.maps[0].get(value)
        if op is None or op.type != "Identity" or not op.inputs:
            break
        value = op.inputs[0]
    return value


def structured_if(inliner, node, name: str, inputs: list, function, call) -> list:
    """One If SourceOp holding both branches."""
    fdefs = {attr: function(inliner, node, name, attr) for attr in ("then_branch", "else_branch")}
    return _branching_op(inliner, node, name, inputs, fdefs, {}, call)


def structured_case(inliner, node, name: str, inputs: list, fdefs: list, call) -> list:
    """One Case SourceOp holding its N branches as attributes branch_0..branch_N-1
    (`branches`: N); inputs[0] is the branch index."""
    return _branching_op(inliner, node, name, inputs,
                         {f"branch_{k}": fdef for k, fdef in enumerate(fdefs)},
                         {"branches": len(fdefs)}, call)


def _branching_op(inliner, node, name: str, inputs: list, fdefs: dict, attrs: dict,
                  call) -> list:
    """A SourceOp choosing between branches (functions of inputs[1:], by
    attribute name) on inputs[0]; its outputs have what the branches' share."""
    _refuse_lists(node, name, inputs)
    branches, infos = {}, None
    for attr, fdef in fdefs.items():
        sub, results = _branch(inliner, fdef, f"{name}/{attr}/", inputs[1:], call)
        branches[attr] = sub
        these = [sub.info.get(v) for v in results]
        infos = these if infos is None else [_merge(a, b) for a, b in zip(infos, these)]
    operands = [v for v in inputs if _is_tensor(v)]
    return inliner.add_op(node.op, name, operands, {**branches, **attrs},
                          [i or TensorInfo("float32", None) for i in infos])


def structured_while(inliner, node, name: str, inputs: list, cond_fdef, body_fdef,
                     call) -> list:
    """One While SourceOp: its loop variables split into carried state and
    invariants; returns a binding per loop variable."""
    _refuse_lists(node, name, inputs)
    body, results = _branch(inliner, body_fdef, f"{name}/body/", inputs, call)
    tensors = [i for i, v in enumerate(inputs) if _is_tensor(v)]
    position = {p: i for i, p in zip(tensors, body.inputs)}
    invariant = {i for i, r in enumerate(results) if _is_tensor(r) and position.get(r) == i}
    carried = [i for i in tensors if i not in invariant]
    fixed = [i for i in tensors if i in invariant]
    by_index = dict(zip(tensors, body.inputs))
    body.inputs = [by_index[i] for i in carried + fixed]
    body.outputs = [results[i] for i in carried]
    cond, _ = _branch(inliner, cond_fdef, f"{name}/cond/", inputs, call)
    cond_by_index = dict(zip(tensors, cond.inputs))
    cond.inputs = [cond_by_index[i] for i in carried + fixed]
    infos = [body.info.get(results[i]) or inliner.info.get(inputs[i]) for i in carried]
    values = inliner.add_op(node.op, name, [inputs[i] for i in carried + fixed],
                            {"cond_graph": cond, "body_graph": body, "carried": len(carried)},
                            infos) if carried else []
    out = list(inputs)
    for i, value in zip(carried, values):
        out[i] = value
    return out


def _merge(a: TensorInfo | None, b: TensorInfo | None) -> TensorInfo | None:
    """What two branches' outputs have in common (a dim they disagree on is unknown)."""
    if a is None or b is None:
        return a or b
    if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
        return TensorInfo(a.dtype, None)
    return TensorInfo(a.dtype, tuple(x if x == y else None for x, y in zip(a.shape, b.shape)))
