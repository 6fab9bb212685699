"""Sizes computed from dynamic dims: `x.size(d)` and Python arithmetic on
sizes become 0-d int64 tensors, and size lists holding them become 1-D
shape tensors for the ops that take a computed shape."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from ._util import args, axis, unsupported

_ARITHMETIC = {"sym.add": "add", "sym.sub": "sub", "sym.mul": "mul", "sym.mod": "mod",
               # sizes are never negative: truncating and flooring division agree
               "sym.floordiv": "div",
               # torch.sym_max/sym_min (a sliding window's bound on the cached length)
               "sym.max": "maximum", "sym.min": "minimum"}


def is_size(arg) -> bool:
    """Whether an argument is a size computed from a dynamic dim (a SymDim)."""
    return getattr(arg, "symbolic", False)


def size_value(ctx, arg) -> str:
    """A 0-d int64 tensor for a size argument: its run-time value, or a constant."""
    if is_size(arg):
        return arg.value
    return ctx.constant(np.array(int(arg), np.int64), "size")


def shape_value(ctx, sizes) -> str:
    """A 1-D int64 tensor of `sizes` (ints and SymDims), runs of ints as one constant."""
    pieces: list[str] = []
    run: list[int] = []
    for size in sizes:
        if is_size(size):
            if run:
                pieces.append(ctx.constant(np.array(run, np.int64), "sizes"))
                run = []
            pieces.append(ctx.emit("unsqueeze", [size.value], {"axes": [0]}, dtype="int64",
                                   shape=(1,), hint="size"))
        else:
            run.append(int(size))
    if run:
        pieces.append(ctx.constant(np.array(run, np.int64), "sizes"))
    if len(pieces) == 1:
        return pieces[0]
    return ctx.emit("concat", pieces, {"axis": 0}, dtype="int64", shape=(len(sizes),),
                    hint="shape")


@torch_mapper("aten.sym_size.int")
def sym_size(ctx, op):
    """`shape` of the tensor, then the one dim (`gather` of a 0-d index)."""
    x, dim = args(op)
    ctx.run_time_dim(x, axis(ctx, x, dim), outputs=op.outputs)


@torch_mapper(*_ARITHMETIC)
def arithmetic(ctx, op):
    """the IR's elementwise op on 0-d int64 sizes."""
    a, b = args(op)
    ctx.emit(_ARITHMETIC[op.type], [size_value(ctx, a), size_value(ctx, b)], outputs=op.outputs)


@torch_mapper("sym.neg")
def negate(ctx, op):
    """`neg` of a 0-d int64 size."""
    ctx.emit("neg", [size_value(ctx, args(op)[0])], outputs=op.outputs)


@torch_mapper("aten._local_scalar_dense.default")
def item(ctx, op):
    """`.item()` of a 0-d integer tensor (the iteration a TorchScript loop's
    block takes as an int: x2/frontends/torch/script_loops.py) as the 0-d
    int64 size it gives."""
    (x,) = args(op)
    if not ctx.dtype(x).startswith(("int", "uint")) or ctx.shape(x) not in ((), None):
        raise unsupported(op, f".item() of a {ctx.dtype(x)} tensor of shape {ctx.shape(x)}: "
                              f"x2 reads a number from a 0-d integer tensor only")
    ctx.emit("cast", [x], {"dtype": "int64"}, outputs=op.outputs)
