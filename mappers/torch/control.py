"""torch.export's higher-order control flow: `torch.cond` becomes the IR's
`if`, `while_loop` and `scan` its `loop`. torch.export already passes every value a
branch or body reads (parameters too) as an operand; operands that are
constants are copied into the subgraph, so its layers stay layers."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.registry import torch_mapper

from .._control import emit_if, emit_scan, emit_while
from .sizes import is_size


def _tensors(op, values) -> list[str]:
    """The operands as values: a size computed at run time (a nested loop's
    trip count) passes as the 0-d int64 tensor that holds it."""
    values = [v.value if is_size(v) else v for v in values]
    if any(not isinstance(v, str) for v in values):
        raise ConversionError(f"{op.type} '{op.name}': an operand that is not a tensor "
                              f"(a Python number); x2 passes tensors and sizes only")
    return [str(v) for v in values]


@torch_mapper("cond")
def cond(ctx, op):
    """torch.cond(pred, true_fn, false_fn, operands)."""
    pred, *operands = _tensors(op, op.inputs)
    emit_if(ctx, op, pred, operands, op.attrs["true_graph"], op.attrs["false_graph"])


@torch_mapper("while_loop")
def while_loop(ctx, op):
    """while_loop(cond_fn, body_fn, carried, additional_inputs)."""
    count = op.attrs["carried"]
    values = _tensors(op, op.inputs)
    emit_while(ctx, op, values[:count], values[count:], op.attrs["cond_graph"],
               op.attrs["body_graph"], op.outputs)


@torch_mapper("scan")
def scan(ctx, op):
    """scan(combine_fn, init, xs, additional_inputs): a loop over dim 0 of xs."""
    carried, scanned = op.attrs["carried"], op.attrs["scanned"]
    values = _tensors(op, op.inputs)
    init, xs = values[:carried], values[carried:carried + scanned]
    additional = values[carried + scanned:]
    sub = op.attrs["combine_graph"]
    inner, operands = ctx.subgraph(sub, dict(zip(sub.inputs[carried + scanned:], additional)))
    emit_scan(ctx, inner, init, xs, operands, op.outputs)
