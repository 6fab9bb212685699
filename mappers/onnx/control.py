"""Control flow: If, Loop and Scan become the IR's `if` and `loop`, whose
subgraphs are closed: the outer values an ONNX subgraph reads by name are
passed to the IR node as inputs (x2/ir/control_flow.py)."""
from __future__ import annotations

import numpy as np

from x2.errors import ConversionError
from x2.ir import Graph, TensorInfo
from x2.ir.control_flow import inline
from x2.registry import onnx_mapper

from .._control import emit_scan, take_operands
from ._util import check_axis, rank_of

_TO_THE_START = -(1 << 62)


def _own_inputs(op) -> list[str]:
    """The node's inputs without the captured values the reader appended."""
    return op.inputs[:len(op.inputs) - len(op.attrs.get("x2_captures", []))]


def _take(ctx, graph: Graph, operands: list[str]) -> None:
    """Make `graph`'s captured inputs exactly `operands`, in that order (a
    branch takes the values the other branch captures too, unused)."""
    own = tuple(v for v in graph.inputs if v not in operands)
    captured = {v: v for v in graph.inputs if v in operands}
    take_operands(ctx, graph, operands, captured, own)


@onnx_mapper("If")
def if_(ctx, op):
    """If: the two branches, mapped with the same mappers, as closed subgraphs;
    only the branch taken where the condition is known at conversion time
    (exporters test the input's rank or a size: `if x.dim() == 3`), inlined."""
    known = ctx.const(op.inputs[0])
    if known is not None:
        taken, operands = ctx.subgraph(op.attrs["then_branch" if np.asarray(known).reshape(-1)[0]
                                               else "else_branch"])
        _take(ctx, taken, operands)
        results = inline(ctx.graph, taken, operands, op.name)
        if len(results) != len(op.outputs):
            raise ConversionError(f"If '{op.name}': the branch taken gives {len(results)} "
                                  f"outputs, the node has {len(op.outputs)}")
        for out, value in zip(op.outputs, results):
            declared, given = ctx.shape(out), ctx.shape(value)
            if declared is not None and given is not None and len(declared) != len(given) and \
                    None not in declared and None not in given and \
                    int(np.prod(declared)) == int(np.prod(given)):
                # a branch giving [1] where the node declares a scalar: onnxruntime
                # takes it, the ops after the node expect the declared shape
                ctx.emit("reshape", [value], {"shape": list(declared)}, outputs=[out])
            else:
                ctx.alias(out, value)
        return
    then_branch, then_operands = ctx.subgraph(op.attrs["then_branch"])
    else_branch, else_operands = ctx.subgraph(op.attrs["else_branch"])
    operands = list(dict.fromkeys(then_operands + else_operands))
    _take(ctx, then_branch, operands)
    _take(ctx, else_branch, operands)
    for name, branch in (("then_branch", then_branch), ("else_branch", else_branch)):
        if len(branch.outputs) != len(op.outputs):
            raise ConversionError(f"If '{op.name}': {name} gives {len(branch.outputs)} outputs, "
                                  f"the node has {len(op.outputs)}")
    _refuse_branches_of_other_ranks(ctx, op, then_branch, else_branch)
    ctx.emit("if", [op.inputs[0], *operands],
             {"then_branch": then_branch, "else_branch": else_branch}, outputs=op.outputs)
    for i, out in enumerate(op.outputs):
        if ctx.shape(out) is None:
            _shape_from_branches(ctx, out, then_branch.info.get(then_branch.outputs[i]),
                                 else_branch.info.get(else_branch.outputs[i]))


def _refuse_branches_of_other_ranks(ctx, op, then_branch: Graph, else_branch: Graph):
    """Branches whose outputs differ in rank cannot be one tensor after the
    If (the ops after it fail on a rank they do not take). A condition on an
    input's value (a voice-activity model's `If(sr == 16000)`) is a mode the
    user fixes with --input-value; name that input."""
    for then_out, else_out in zip(then_branch.outputs, else_branch.outputs):
        a, b = then_branch.shape(then_out), else_branch.shape(else_out)
        if a is None or b is None or len(a) == len(b):
            continue
        inputs = _inputs_behind(ctx.graph, op.inputs[0])
        fix = (", ".join(f"--input-value {name}=VALUE" for name in inputs) +
               " fixes it as a constant and converts the branch it picks") if inputs else \
            "it depends on no graph input x2 can fix"
        raise ConversionError(
            f"If '{op.name}': its branches give outputs of different ranks ({len(a)} and "
            f"{len(b)}), chosen at run time by a condition on the value of input "
            f"{', '.join(repr(n) for n in inputs) or '(none)'}; {fix}",
            details={"node": op.name, "condition_inputs": inputs})


def _inputs_behind(graph: Graph, value: str) -> list[str]:
    """The graph inputs `value` is computed from."""
    seen, todo, found = set(), [value], []
    while todo:
        current = todo.pop()
        if current in seen or not current:
            continue
        seen.add(current)
        if current in graph.inputs:
            found.append(current)
        node = graph.producer(current)
        if node is not None:
            todo.extend(node.inputs)
    return sorted(found)


def _shape_from_branches(ctx, out: str, then: TensorInfo | None, other: TensorInfo | None):
    """An If output the model leaves untyped (exporters often do): the shape
    both branches agree on, a dim they differ in unknown. Its rank is what
    the ops after it need."""
    if then is None or other is None or then.shape is None or other.shape is None or \
            len(then.shape) != len(other.shape):
        return
    shape = tuple(a if a == b else None for a, b in zip(then.shape, other.shape))
    ctx.graph.info[out] = TensorInfo(then.dtype or other.dtype, shape)


@onnx_mapper("Loop")
def loop(ctx, op):
    """Loop (trip count and condition both optional), as the IR's `loop`."""
    body, operands = ctx.subgraph(op.attrs["body"])
    own = _own_inputs(op) + ["", ""][len(_own_inputs(op)):]
    max_trip, cond, carried = own[0], own[1], own[2:]
    if len(body.inputs) != 2 + len(carried) + len(operands):
        raise ConversionError(f"Loop '{op.name}': the body takes {len(body.inputs) - len(operands)}"
                              f" inputs; it must take the iteration, the condition and the "
                              f"{len(carried)} carried values")
    ctx.emit("loop", [max_trip, cond, *carried, *operands],
             {"body": body, "carried": len(carried)}, outputs=op.outputs)


@onnx_mapper("Scan", since=9)
def scan(ctx, op):
    """Scan: a loop over axis 0 of the time-major, forward-ordered scan inputs;
    each step takes its slice with a gather, the scan outputs are stacked and
    then put on their axis and in their direction."""
    inner, operands = ctx.subgraph(op.attrs["body"])
    own = _own_inputs(op)
    m = int(op.attrs["num_scan_inputs"])
    n = len(own) - m
    if n < 0 or len(inner.inputs) != n + m + len(operands):
        raise ConversionError(f"Scan '{op.name}': num_scan_inputs={m} does not fit its "
                              f"{len(own)} inputs and its body's {len(inner.inputs)}")
    k = len(inner.outputs) - n
    states, sequences = own[:n], []
    for value, axis, reverse in zip(own[n:], op.attrs.get("scan_input_axes", [0] * m),
                                    op.attrs.get("scan_input_directions", [0] * m)):
        rank = rank_of(ctx, op, value)
        axis = check_axis(op, axis, rank, "scan_input_axes entry")
        if axis:
            perm = [axis] + [d for d in range(rank) if d != axis]
            value = ctx.emit("transpose", [value], {"perm": perm},
                             shape=_permuted(ctx.shape(value), perm))
        if reverse:
            value = ctx.emit("slice", [value], {"starts": [-1], "ends": [_TO_THE_START],
                                                "axes": [0], "steps": [-1]},
                             shape=ctx.shape(value))
        sequences.append(value)
    results = list(op.outputs[:n])
    moves = []
    for i, (out, axis, reverse) in enumerate(zip(
            op.outputs[n:], op.attrs.get("scan_output_axes", [0] * k),
            op.attrs.get("scan_output_directions", [0] * k))):
        element = inner.info.get(inner.outputs[n + i])
        rank = len(element.shape) + 1 if element and element.shape is not None else None
        axis = check_axis(op, axis, rank, "scan_output_axes entry")
        if axis == 0 and not reverse:
            results.append(out)
            continue
        stacked = ctx.graph.fresh_name(f"{op.name}/stacked")
        results.append(stacked)
        moves.append((stacked, out, axis, reverse, rank, element))
    emit_scan(ctx, inner, states, sequences, operands, results)
    for stacked, out, axis, reverse, rank, element in moves:
        ctx.graph.info[stacked] = TensorInfo(element.dtype if element else ctx.dtype(out),
                                             None if rank is None else
                                             (None, *element.shape))
        value = stacked
        if reverse:
            value = ctx.emit("slice", [value], {"starts": [-1], "ends": [_TO_THE_START],
                                                "axes": [0], "steps": [-1]},
                             outputs=None if axis else [out])
        if axis:
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, rank))
            ctx.emit("transpose", [value], {"perm": perm}, outputs=[out])


def _permuted(shape, perm):
    return None if shape is None else tuple(shape[p] for p in perm)
