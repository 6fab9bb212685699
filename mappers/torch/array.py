"""Shape and data movement: views, permutes, concatenation, slicing and
indexing, embedding lookups, casts, copies and tensor factories."""
from __future__ import annotations

import numpy as np

from x2.registry import torch_mapper

from ._util import args, axis, clamp_range, rank, unsupported
from .sizes import is_size, shape_value, size_value


@torch_mapper("aten.clone.default", "aten.alias.default", "aten.contiguous.default",
              "aten.detach.default", "aten.lift_fresh_copy.default")
def identity(ctx, op):
    """nothing (copies and aliases; removed by the cleanup pass)."""
    ctx.alias(op.outputs[0], op.inputs[0])


@torch_mapper("aten.dropout.default", "aten.native_dropout.default")
def dropout(ctx, op):
    """`dropout(rate)` in eval mode: nothing at inference, a dropout layer --for training."""
    x, p, train = args(op, None, 0.5, False)[:3]
    if train:
        raise unsupported(op, "dropout in training mode; put the model in eval() first")
    if float(p) == 0.0:
        ctx.alias(op.outputs[0], x)
    else:
        ctx.emit("dropout", [x], {"rate": float(p)}, outputs=op.outputs[:1])


@torch_mapper("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout",
              "aten.to.device")
def to_copy(ctx, op):
    """`cast` to the new dtype (a copy with the same dtype is nothing)."""
    x = op.inputs[0]
    dtype = ctx.dtype(op.outputs[0])
    if dtype == ctx.dtype(x):
        ctx.alias(op.outputs[0], x)
    else:
        ctx.emit("cast", [x], {"dtype": dtype}, outputs=op.outputs)


@torch_mapper("aten._assert_tensor_metadata.default")
def assert_tensor_metadata(ctx, op):
    """nothing: torch.export's check that a tensor has the dtype and shape the
    capture saw (before `.to`), which the IR's own dtypes and shapes carry."""


@torch_mapper("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
              "aten.flatten.using_ints")
def view(ctx, op):
    """`reshape` to the output shape (-1 for its one dynamic dim); with more
    than one, `reshape_dynamic` to the sizes computed from them."""
    shape = ctx.shape(op.outputs[0])
    if sum(d is None for d in shape) > 1:
        ctx.emit("reshape_dynamic", [op.inputs[0], shape_value(ctx, _target(ctx, op))],
                 outputs=op.outputs)
        return
    ctx.emit("reshape", op.inputs[:1], {"shape": [-1 if d is None else int(d) for d in shape]},
             outputs=op.outputs)


_MAX_END = 1 << 62  # "to the end" as a slice bound every target accepts


def _target(ctx, op) -> list:
    """A view's target sizes (ints and SymDims); flatten's from its input's dims."""
    if op.type != "aten.flatten.using_ints":
        return list(args(op)[1])
    x, start, end = args(op, None, 0, -1)
    start, end = axis(ctx, x, start), axis(ctx, x, end)
    dims = [_dim(ctx, x, i) for i in range(rank(ctx, x))]
    return [*dims[:start], -1, *dims[end + 1:]]


def _dim(ctx, x: str, i: int):
    """x's size along axis i: an int, or a SymDim-like marker of its run-time value."""
    size = ctx.shape(x)[i]
    if size is not None:
        return size
    return _Size(ctx.run_time_dim(x, i))


class _Size:
    """A size read from a tensor while mapping (what SymDim is for the frontend's sizes)."""
    symbolic = True

    def __init__(self, value: str):
        self.value = value


@torch_mapper("aten.permute.default")
def permute(ctx, op):
    """`transpose` (folded for weights; their origin keeps the state_dict name)."""
    x, dims = args(op)
    ctx.emit("transpose", [x], {"perm": [axis(ctx, x, d) for d in dims]}, outputs=op.outputs)


@torch_mapper("aten.t.default", "aten.transpose.int", "aten.numpy_T.default")
def transpose(ctx, op):
    """`transpose` swapping two axes (the last two for t())."""
    x, d0, d1 = args(op, None, 0, 1)
    perm = list(range(rank(ctx, x)))
    if len(perm) >= 2:
        a, b = axis(ctx, x, d0), axis(ctx, x, d1)
        perm[a], perm[b] = perm[b], perm[a]
    ctx.emit("transpose", [x], {"perm": perm}, outputs=op.outputs)


@torch_mapper("aten.expand.default")
def expand(ctx, op):
    """`expand` to the output shape (a dynamic-batch dim must already be the input's)."""
    x, out = op.inputs[0], ctx.shape(op.outputs[0])
    in_shape = ctx.shape(x)
    if tuple(in_shape) == tuple(out):
        ctx.alias(op.outputs[0], x)
        return
    aligned = [None] * (len(out) - len(in_shape)) + list(in_shape)
    if any(d is None and (i < len(out) - len(in_shape) or aligned[i] is not None)
           for i, d in enumerate(out)):
        # A dim broadcast to a dynamic size: the sizes computed from it, with
        # -1 (keep the input's) as 1, which broadcasting keeps the same way.
        sizes = [1 if not is_size(d) and d == -1 else d for d in args(op)[1]]
        lead = len(out) - len(in_shape)
        if lead:  # new leading dims: the input gets them as 1s first
            x = ctx.emit("unsqueeze", [x], {"axes": list(range(lead))},
                         shape=(1,) * lead + tuple(in_shape), hint="ranked")
        ctx.emit("expand_dynamic", [x, shape_value(ctx, sizes)], outputs=op.outputs)
        return
    # ONNX-style: 1 keeps the input's (dynamic) dim
    ctx.emit("expand", [x], {"shape": [1 if d is None else int(d) for d in out]},
             outputs=op.outputs)


@torch_mapper("aten.repeat.default")
def repeat(ctx, op):
    """`tile` (more repeats than dims: new leading dims of size 1 first)."""
    x, repeats = args(op)
    shape = tuple(ctx.shape(x))
    extra = len(repeats) - len(shape)
    if extra > 0:
        x = ctx.emit("unsqueeze", [x], {"axes": list(range(extra))}, shape=(1,) * extra + shape,
                     hint="lead")
    if any(is_size(r) for r in repeats):
        # A count read from a shape (`y.shape[1] // 4`): the counts as a computed 1-D value.
        ctx.emit("tile_dynamic", [x, shape_value(ctx, repeats)], outputs=op.outputs)
        return
    ctx.emit("tile", [x], {"repeats": [int(r) for r in repeats]}, outputs=op.outputs)


@torch_mapper("aten.unsqueeze.default")
def unsqueeze(ctx, op):
    """`unsqueeze`."""
    x, dim = args(op)
    ctx.emit("unsqueeze", [x], {"axes": [dim % (rank(ctx, x) + 1)]}, outputs=op.outputs)


@torch_mapper("aten.squeeze.dims", "aten.squeeze.dim", "aten.squeeze.default")
def squeeze(ctx, op):
    """`squeeze` of the size-1 dims among those named."""
    x, dims = args(op, None, None)
    shape = ctx.shape(x)
    dims = range(len(shape)) if dims is None else ([dims] if isinstance(dims, int) else dims)
    picked = sorted({axis(ctx, x, d) for d in dims if shape[d % len(shape)] == 1})
    if not picked:
        ctx.alias(op.outputs[0], x)
    else:
        ctx.emit("squeeze", [x], {"axes": picked}, outputs=op.outputs)


@torch_mapper("aten.cat.default", "aten.concat.default")
def cat(ctx, op):
    """`concat`; a 1-D empty tensor among higher-rank ones is left out, as
    torch leaves it out (a transformers DynamicCache starts each layer so)."""
    values, dim = args(op, None, 0)
    out_rank = rank(ctx, op.outputs[0])
    values = [v for v in values if out_rank == 1 or tuple(ctx.shape(v) or ()) != (0,)]
    if len(values) == 1:
        ctx.alias(op.outputs[0], values[0])
        return
    ctx.emit("concat", values, {"axis": axis(ctx, op.outputs[0], dim)}, outputs=op.outputs)


@torch_mapper("aten.stack.default")
def stack(ctx, op):
    """`stack`."""
    values, dim = args(op, None, 0)
    ctx.emit("stack", list(values), {"axis": axis(ctx, op.outputs[0], dim)},
             outputs=op.outputs)


def _slice(ctx, x, out, dim, start, end, step=1):
    size = ctx.shape(x)[dim]
    if is_size(start) or is_size(end):
        start, end = (0 if start is None else start), (_MAX_END if end is None else end)
        ctx.emit("slice_dynamic", [x, shape_value(ctx, [start]), shape_value(ctx, [end])],
                 {"axes": [dim], "steps": [step]}, outputs=[out])
        return
    if size is None and step > 0:
        # ONNX-style bounds: negative ones count from the end, both clamp
        start, end = (0 if start is None else start), min(_MAX_END if end is None else end,
                                                           _MAX_END)
        ctx.emit("slice", [x], {"axes": [dim], "starts": [start], "ends": [end],
                                "steps": [step]}, outputs=[out])
        return
    start, end = clamp_range(size, start, end, step)
    ctx.emit("slice", [x], {"axes": [dim], "starts": [start], "ends": [end], "steps": [step]},
             outputs=[out])


@torch_mapper("aten.slice.Tensor")
def slice_(ctx, op):
    """`slice` with bounds clamped to the static size."""
    x, dim, start, end, step = args(op, None, 0, None, None, 1)
    _slice(ctx, x, op.outputs[0], axis(ctx, x, dim), start, end, step)


@torch_mapper("aten.flip.default")
def flip(ctx, op):
    """`slice` of each dim from its last element to its first, step -1."""
    x, dims = args(op)
    dims = [axis(ctx, x, d) for d in dims]
    ctx.emit("slice", [x], {"axes": dims, "starts": [-1] * len(dims),
                            "ends": [-(1 << 62)] * len(dims), "steps": [-1] * len(dims)},
             outputs=op.outputs)


@torch_mapper("aten.select.int")
def select(ctx, op):
    """`slice` of one index + `squeeze`; `gather` of a run-time index (a
    TorchScript loop's `x[i]`)."""
    x, dim, index = args(op)
    dim = axis(ctx, x, dim)
    if is_size(index):
        ctx.emit("gather", [x, index.value], {"axis": dim}, outputs=op.outputs)
        return
    shape = list(ctx.shape(x))
    if shape[dim] is not None:
        index %= shape[dim]
    # A negative index on a dynamic dim counts from its end, as a slice bound does.
    end = _MAX_END if index == -1 else index + 1
    shape[dim] = 1
    one = ctx.emit("slice", [x], {"axes": [dim], "starts": [index], "ends": [end],
                                  "steps": [1]}, shape=tuple(shape), hint="select")
    ctx.emit("squeeze", [one], {"axes": [dim]}, outputs=op.outputs)


@torch_mapper("aten.unbind.int")
def unbind(ctx, op):
    """one `slice` of one index + `squeeze` per output."""
    x, dim = args(op, None, 0)
    dim = axis(ctx, x, dim)
    shape = list(ctx.shape(x))
    shape[dim] = 1
    for index, out in enumerate(op.outputs):
        one = ctx.emit("slice", [x], {"axes": [dim], "starts": [index], "ends": [index + 1],
                                      "steps": [1]}, shape=tuple(shape), hint="unbind_piece")
        ctx.emit("squeeze", [one], {"axes": [dim]}, outputs=[out])


@torch_mapper("aten.split.Tensor", "aten.split_with_sizes.default")
def split(ctx, op):
    """one `slice` per piece."""
    x, sizes, dim = args(op, None, None, 0)
    dim = axis(ctx, x, dim)
    total = ctx.shape(x)[dim]
    if isinstance(sizes, int):
        sizes = [min(sizes, total - s) for s in range(0, total, sizes)]
    start = 0
    for out, size in zip(op.outputs, sizes):
        _slice(ctx, x, out, dim, start, start + size)
        start += size


@torch_mapper("aten.embedding.default")
def embedding(ctx, op):
    """`gather` of rows (axis 0) of the weight, keeping padding_idx (a row never trained)."""
    weight, indices, *rest = args(op)
    padding = rest[0] if rest and isinstance(rest[0], int) and rest[0] >= 0 else None
    ctx.emit("gather", [weight, indices], {"axis": 0, "padding_idx": padding}, outputs=op.outputs)


@torch_mapper("aten.gather.default")
def gather(ctx, op):
    """`gather_elements` along dim (torch.gather; sparse_grad does not matter here)."""
    x, dim, idx = args(op)[:3]
    ctx.emit("gather_elements", [x, idx], {"axis": axis(ctx, x, dim)}, outputs=op.outputs)


@torch_mapper("aten.index.Tensor", "aten.index_select.default")
def index(ctx, op):
    """`gather` along the indexed axis (x[idx], x[:, idx], index_select); with
    several index tensors (x[i, j]) along the indexed axes merged into one."""
    if op.type == "aten.index_select.default":
        x, dim, idx = args(op)
        ctx.emit("gather", [x, idx], {"axis": axis(ctx, x, dim)}, outputs=op.outputs)
        return
    x, indices = args(op)
    used = [i for i, v in enumerate(indices) if v is not None]
    if any(ctx.dtype(indices[i]) == "bool" for i in used):
        raise unsupported(op, "indexing with a boolean mask gives a data-dependent shape")
    if len(used) == 1:
        ctx.emit("gather", [x, indices[used[0]]], {"axis": used[0]}, outputs=op.outputs)
        return
    _index_several(ctx, op, x, [indices[i] for i in used], used)


def _index_several(ctx, op, x, indices, dims):
    """x[i, j] with several index tensors: one gather of the indexed dims
    merged into one, at the flat index i * size(j) + j. Torch puts the
    broadcast index shape where the indexed dims were when they are adjacent,
    else first: a transpose brings them to the front then."""
    shape = list(ctx.shape(x))
    if dims != list(range(dims[0], dims[0] + len(dims))):
        perm = dims + [d for d in range(len(shape)) if d not in dims]
        x = ctx.emit("transpose", [x], {"perm": perm}, dtype=ctx.dtype(x),
                     shape=tuple(shape[p] for p in perm))
        shape, dims = [shape[p] for p in perm], list(range(len(dims)))
    sizes = [_dim(ctx, x, d) for d in dims]
    flat = None
    for k, idx in enumerate(indices):
        if ctx.dtype(idx) != "int64":
            idx = ctx.emit("cast", [idx], {"dtype": "int64"}, dtype="int64",
                           shape=ctx.shape(idx))
        # Negative indices count from the end, as in torch.
        idx = ctx.emit("mod", [idx, size_value(ctx, sizes[k])], dtype="int64",
                       shape=ctx.shape(idx))
        stride = _product(ctx, sizes[k + 1:])
        if stride != 1:
            idx = ctx.emit("mul", [idx, size_value(ctx, stride)], dtype="int64")
        flat = idx if flat is None else ctx.emit("add", [flat, idx], dtype="int64")
    a = dims[0]
    merged = shape[:a] + [-1] + shape[a + len(dims):]
    if None in merged:
        target = [_dim(ctx, x, i) for i in range(a)] + [-1] + \
            [_dim(ctx, x, i) for i in range(a + len(dims), len(shape))]
        x = ctx.emit("reshape_dynamic", [x, shape_value(ctx, target)], dtype=ctx.dtype(x),
                     shape=tuple(None if d == -1 else d for d in merged))
    else:
        known = [d for d in shape[a:a + len(dims)] if d is not None]
        merged[a] = int(np.prod(known)) if len(known) == len(dims) else -1
        x = ctx.emit("reshape", [x], {"shape": merged}, dtype=ctx.dtype(x),
                     shape=tuple(None if d == -1 else d for d in merged))
    ctx.emit("gather", [x, flat], {"axis": a}, outputs=op.outputs)


def _product(ctx, sizes):
    """The product of sizes (ints and run-time sizes): an int when all are known."""
    result = int(np.prod([d for d in sizes if not is_size(d)], dtype=np.int64))
    for size in (d for d in sizes if is_size(d)):
        result = size if result == 1 else _Size(ctx.emit(
            "mul", [size_value(ctx, result), size.value], dtype="int64", shape=(), hint="stride"))
    return result


def _constant(ctx, op, array):
    out = op.outputs[0]
    ctx.graph.constants[out] = array
    from x2.ir import TensorInfo
    ctx.graph.info[out] = TensorInfo(str(array.dtype), tuple(array.shape))


@torch_mapper("aten.full.default", "aten.full_like.default", "aten.zeros_like.default",
              "aten.ones_like.default", "aten.scalar_tensor.default", "aten.zeros.default",
              "aten.ones.default", "aten.empty.memory_format", "aten.empty_permuted.default",
              "aten.empty_like.default", "aten.new_ones.default", "aten.new_zeros.default")
def full(ctx, op):
    """a constant of the output shape (size 1 at a dynamic batch dim read only
    by elementwise ops). `empty` tensors hold no defined value until written:
    zeros."""
    kind = op.type.split(".")[1]
    value = {"zeros_like": 0, "ones_like": 1, "zeros": 0, "ones": 1, "empty": 0,
             "empty_permuted": 0, "empty_like": 0, "new_ones": 1, "new_zeros": 0}.get(kind)
    if value is None:
        value = args(op)[0] if kind == "scalar_tensor" else args(op)[1]
    shape, dtype = ctx.shape(op.outputs[0]), ctx.dtype(op.outputs[0])
    if is_size(value) and shape == ():
        # a size held as a tensor (a TorchScript loop's trip count: script_loops.py)
        ctx.emit("cast", [value.value], {"dtype": dtype}, outputs=op.outputs)
        return
    if None in shape:
        if not _only_broadcast_into(ctx, op.outputs[0], shape):
            # A tensor of a size computed at run time: `full` of that shape.
            if kind.endswith("_like"):
                target = ctx.emit("shape", [op.inputs[0]], {"dtype": "int64"}, dtype="int64",
                                  shape=(len(shape),), hint="shape")
            else:   # (x.new_ones(size): the size follows the tensor)
                target = shape_value(ctx, args(op)[1 if kind.startswith("new_") else 0])
            ctx.emit("full", [target], {"value": float(value), "dtype": dtype},
                     outputs=op.outputs)
            return
        # Only elementwise ops of the same output shape read it: size 1 broadcasts.
        shape = tuple(1 if d is None else d for d in shape)
    _constant(ctx, op, np.full(shape, value, dtype=dtype))


_ELEMENTWISE = {"aten.where.self", "aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor",
                "aten.div.Tensor"}


def _only_broadcast_into(ctx, value: str, shape) -> bool:
    users = [o for o in ctx.source.ops if value in o.inputs]
    return bool(users) and all(
        u.type in _ELEMENTWISE and tuple(ctx.shape(u.outputs[0]) or ()) == tuple(shape)
        for u in users)


@torch_mapper("aten.arange.start_step", "aten.arange.default", "aten.arange.start")
def arange(ctx, op):
    """a constant; `range` when a bound is a size computed from a dynamic dim."""
    bounds = args(op)
    dtype = ctx.dtype(op.outputs[0])
    if not any(is_size(b) for b in bounds):
        _constant(ctx, op, np.arange(*bounds).astype(dtype))
        return
    start, end, step = ([0, *bounds, 1] if len(bounds) == 1 else [*bounds, 1])[:3]
    scalars = [size_value(ctx, b) if is_size(b) else
               ctx.constant(np.array(b, dtype), "bound") for b in (start, end, step)]
    scalars = [v if ctx.dtype(v) == dtype else
               ctx.emit("cast", [v], {"dtype": dtype}, dtype=dtype, shape=(), hint="bound")
               for v in scalars]
    ctx.emit("range", scalars, outputs=op.outputs)


@torch_mapper("aten.constant_pad_nd.default")
def constant_pad_nd(ctx, op):
    """`pad` with a constant (F.pad): torch lists (begin, end) from the last dim back."""
    x, pad, value = args(op, None, None, 0.0)
    n = rank(ctx, x)
    if len(pad) % 2 or len(pad) > 2 * n:
        raise unsupported(op, f"pad {list(pad)} must hold (begin, end) pairs for at most "
                              f"{n} dims")
    if any(not is_size(p) and int(p) < 0 for p in pad):
        raise unsupported(op, f"negative padding {list(pad)} (cropping) is not supported yet")
    begins, ends = [0] * n, [0] * n
    for k in range(len(pad) // 2):
        begins[n - 1 - k], ends[n - 1 - k] = pad[2 * k], pad[2 * k + 1]
    if any(is_size(p) for p in pad):
        # Amounts computed from a dynamic dim (`(8 - h % 8) % 8`): a computed 1-D value.
        ctx.emit("pad_dynamic", [x, shape_value(ctx, begins + ends)], {"value": float(value)},
                 outputs=op.outputs)
        return
    ctx.emit("pad", [x], {"pads": [int(p) for p in begins + ends], "mode": "constant",
                          "value": float(value)}, outputs=op.outputs)


@torch_mapper("aten.as_strided.default")
def as_strided(ctx, op):
    """the input's memory read as `reshape`, `slice`, `transpose` and `expand`
    (its layout comes from the export: dense strides in any dim order); windows
    that overlap or interleave, and reads outside the input, are refused."""
    x, size, stride, offset = args(op, None, None, None, None)
    in_shape, layout = ctx.shape(x), op.attrs.get("input_layout")
    size, stride = list(size), list(stride)
    if (in_shape is None or None in in_shape or layout is None
            or not all(isinstance(v, int) for v in size + stride + [offset or 0])):
        raise unsupported(op, "as_strided of a tensor whose size or memory layout is known "
                              "only at runtime (dynamic batch) is not supported")
    # The input's memory in order: its dims by decreasing stride must be contiguous.
    in_strides, numel = layout["strides"], int(np.prod(in_shape, dtype=np.int64))
    order = sorted((d for d in range(len(in_shape)) if in_shape[d] > 1),
                   key=lambda d: -in_strides[d])
    expected = 1
    for d in reversed(order):
        if in_strides[d] != expected:
            raise unsupported(op, f"the input (shape {list(in_shape)}, strides {in_strides}) "
                                  f"is not dense in memory; as_strided of it is not supported")
        expected *= in_shape[d]
    start = 0 if offset is None else int(offset) - int(layout["offset"])
    # The output: its dims by decreasing stride must nest (each stride a multiple
    # of the next, no overlap); stride-0 dims broadcast.
    dims = sorted((k for k in range(len(size)) if size[k] > 1 and stride[k] != 0),
                  key=lambda k: -stride[k])
    for outer, inner in zip(dims, dims[1:]):
        if stride[outer] % stride[inner] or stride[outer] < size[inner] * stride[inner]:
            raise unsupported(op, f"as_strided to size {size}, strides {stride} reads "
                                  f"overlapping or interleaved windows, which are not a "
                                  f"reshape, slice or transpose of the input")
    reach = start + sum((size[k] - 1) * stride[k] for k in dims)
    if start < 0 or reach >= numel:
        raise unsupported(op, f"as_strided to size {size}, strides {stride}, offset {start} "
                              f"reads memory outside its input of {numel} elements")
    steps = []  # (IR op, attrs, output shape)
    value_shape = list(in_shape)
    if [d for d in range(len(in_shape)) if in_shape[d] > 1] != order:
        perm = order + [d for d in range(len(in_shape)) if in_shape[d] <= 1]
        value_shape = [in_shape[d] for d in perm]
        steps.append(("transpose", {"perm": perm}, value_shape))
    # memory[start : start + rows * row] as [rows, stride ratios..., last stride]
    grid = ([size[dims[0]]] + [stride[a] // stride[b] for a, b in zip(dims, dims[1:])]
            + [stride[dims[-1]]]) if dims else [1]
    length = int(np.prod(grid))
    if start or length != numel:
        steps.append(("reshape", {"shape": [numel]}, [numel]))
        end = min(start + length, numel)
        if start or end != numel:
            steps.append(("slice", {"starts": [start], "ends": [end], "axes": [0],
                                    "steps": [1]}, [end - start]))
        if start + length > numel:  # never read: only the last row's unused tail
            steps.append(("pad", {"pads": [0, start + length - numel], "mode": "constant",
                                  "value": 0.0}, [length]))
    ends = [size[k] for k in dims[1:]] + [1]
    if any(e < g for e, g in zip(ends, grid[1:])):
        steps.append(("reshape", {"shape": grid}, grid))
        steps.append(("slice", {"starts": [0] * len(ends), "ends": ends,
                                "axes": list(range(1, len(grid))),
                                "steps": [1] * len(ends)}, grid[:1] + ends))
    # The nested dims in output order, then the output shape (broadcast dims 1).
    kept = [size[k] for k in dims]
    in_order = sorted(range(len(dims)), key=lambda i: dims[i])
    if in_order != list(range(len(dims))):
        steps.append(("reshape", {"shape": kept}, kept))
        steps.append(("transpose", {"perm": in_order}, [kept[i] for i in in_order]))
    unit = [1 if k not in dims else size[k] for k in range(len(size))]
    steps.append(("reshape", {"shape": unit}, unit))
    if unit != size:
        steps.append(("expand", {"shape": size}, size))
    _emit_steps(ctx, op, x, steps)


def _emit_steps(ctx, op, x, steps):
    """Emit a chain of single-input IR ops, the last one writing op's output;
    a reshape to the shape the value already has is left out."""
    shape = list(ctx.shape(x))
    kept = []
    for step in steps:
        if step[0] == "reshape" and list(step[2]) == shape:
            continue
        kept.append(step)
        shape = list(step[2])
    if not kept:
        ctx.alias(op.outputs[0], x)
        return
    for i, (name, attrs, shape) in enumerate(kept):
        if i == len(kept) - 1:
            ctx.emit(name, [x], attrs, outputs=op.outputs)
        else:
            x = ctx.emit(name, [x], attrs, shape=tuple(shape), hint=name)
