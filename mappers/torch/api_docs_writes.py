"""API-difference entries (torch): writes into tensors, sorting and counting,
and mixture-of-experts kernels; metadata only, filled into
mappers/torch/api_docs.py's TABLE."""
from __future__ import annotations

from mappers.torch.api_docs import OUT, TABLE, aten
from x2.api_diff import a

api = TABLE.api
call = TABLE.call

api("torch.Tensor.repeat", "tensor", aten("repeat.default"), "paddle.Tensor.tile",
    "torch.Tensor.repeat(*repeats)", "paddle.Tensor.tile(repeat_times, name=None)",
    [a("*repeats", "repeat_times", "semantics", "varargs in torch, one list in Paddle")],
    "out = [t.repeat(2, 1, 3), t.repeat(1, 1, 2, 2)]",
    "out = [t.tile([2, 1, 3]), t.tile([1, 1, 2, 2])]",
    "More repeats than dims add leading dims on both sides.", category="api-name",
    single="variadic")
call("torch.histc", "reduction", aten("histc.default"), "paddle.histogram",
     "input=t; bins=5?; min=-1.0?; max=1.0?", pd_then=".astype('float32')", rows=[OUT],
     notes="torch counts in the input's float dtype, Paddle in int64 (cast here); min = max = 0 "
           "takes the data's range on both sides.", category="return-types")
_INDEX = "(t.abs() * 10).long() % 3 | (t.abs() * 10).astype('int64') % 3"
call("torch.scatter_add", "array", aten("scatter_add.default"), "paddle.put_along_axis",
     f"input>arr=t; dim>axis=1; index>indices={_INDEX}; src>values=u; -<reduce='add'",
     pd_pos=1, category="usage",
     notes="Argument order differs (torch input, dim, index, src; Paddle arr, indices, values, "
           "axis); repeated indices add up on both sides.")
call("torch.scatter_reduce", "array", aten("scatter_reduce.two"), "paddle.put_along_axis",
     f"input>arr=t; dim>axis=1; index>indices={_INDEX}; src>values=u; reduce='sum' | 'add'; "
     f"*include_self=True?", pd_pos=1, category="usage",
     notes="torch's 'sum' and 'prod' are Paddle's 'add' and 'multiply' ('amax', 'amin', 'mean' "
           "the same); x2 converts sum, prod, amax and amin with include_self.")
call("torch.Tensor.index_put_", "array", aten("index_put.default"), "paddle.Tensor.index_put",
     "indices=(i,); values>value=v; accumulate=True?", src_fn="t.clone().index_put_",
     pd_fn="t.index_put", pre="i = torch.tensor([1, 0, 1])\nv = u[:1].expand(3, 3, 4)\n",
     pd_pre="i = paddle.to_tensor([1, 0, 1])\nv = u[:1].expand([3, 3, 4])\n", category="api-name",
     notes="x[i] = v and, with accumulate, x[i] += v; torch writes in place, Paddle returns a "
           "new tensor. Without accumulate, which of repeated indices wins is unspecified on "
           "both sides.")
call("torch.Tensor.copy_", "array", aten("copy.default"), "paddle.assign",
     "other>x=t; non_blocking>-=False?", src_fn="torch.zeros(2, 3, 4).copy_", category="api-name",
     notes=("copy_ broadcasts its source to the tensor it writes; paddle.assign copies x as it "
            "is.", "torch documents the source as `src`, but its binding takes the keyword "
                   "`other`."))
call("torch.slice_scatter", "array", aten("slice_scatter.default"), "paddle.slice_scatter",
     "input>x=t; src>value=u[:, 1:3]; dim>axes=1 | [1]; start>starts=1 | [1]; "
     "end>ends=3 | [3]; step>strides=1 | [1]?![1]", category="arg-types",
     notes="x[..., start:end:step, ...] = src as a new tensor; Paddle takes lists of axes and "
           "bounds.")
call("torch.select_scatter", "array", aten("select_scatter.default"), "paddle.select_scatter",
     "input>x=t; src>values=u[:, 1]; dim>axis=1; index=1",
     notes="x[..., index, ...] = src as a new tensor.")
call("torch.empty_like", "creation",
     aten("empty_like.default", "empty.memory_format", "empty_permuted.default"),
     "paddle.empty_like", "input>x=t; *dtype=torch.float32 | 'float32'?", then=".fill_(2.0)",
     notes="The values are undefined until written on both sides (filled here); x2 writes "
           "zeros, its IR having no uninitialized tensor. torch.empty(*size) is "
           "paddle.empty(shape).")
_ROWS = "np.random.RandomState(3).randn(5, 8).astype('float32')"
_WEIGHTS = "np.random.RandomState(4).randn(2, 8, 4).astype('float32')"
call("torch.nn.functional.grouped_mm", "math",
     ("aten._grouped_mm.default", "transformers.grouped_mm_fallback.default"), "paddle.matmul",
     "mat_a>x=a; mat_b>y=b; *offs=torch.tensor([2, 5], dtype=torch.int32) | [2, 5]",
     pre=f"a = torch.tensor({_ROWS})\nb = torch.tensor({_WEIGHTS})\n",
     pd_pre=f"a = paddle.to_tensor({_ROWS})\nb = paddle.to_tensor({_WEIGHTS})\n"
            "def grouped_mm(x, y, offs):\n"
            "    starts = [0] + list(offs[:-1])\n"
            "    return paddle.concat([paddle.matmul(x[s:e], y[g])\n"
            "                          for g, (s, e) in enumerate(zip(starts, offs))])\n",
     pd_fn="grouped_mm", category="composite", atol=1e-4,
     notes=("Rows offs[g-1]:offs[g] times weight g (a mixture-of-experts layer's experts; "
            "transformers calls its own grouped_mm_fallback on CPU). Paddle has no grouped "
            "matmul: one matmul per group. x2 computes every group's product and keeps each "
            "row's own.", "torch's CPU kernel wants 16-byte aligned strides (here rows of 8 "
                          "and 4 floats)."))
