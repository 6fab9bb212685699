"""Call forms for the PyTorch API-difference pages whose example was written by hand
(x2.api_diff.ApiTable.add_forms), and the reason for each page that has one form only
(ApiTable.single_form). Metadata only; imported last (x2.api_diff.MODULES).

Layers with weights get them from `_w(layer, *names)` (defined by `_W`/`_PW` below): the
same deterministic numbers on both sides, transposed on the Paddle side for the names in
`T` (Linear's [in, out] weight), then eval mode, so every constructor form is compared.
"""
from __future__ import annotations

from mappers.torch.api_docs import TABLE
import mappers.torch.api_docs_nn  # noqa: F401  (add_forms names their entries)
import mappers.torch.api_docs_ops  # noqa: F401  (add_forms names their entries)

# the same numbers for a parameter of the same (source) shape on both sides
_W = """
def _w(m, *names, T=()):
    for k, n in enumerate(names):
        p = getattr(m, n)
        p.data = torch.tensor(np.cos(np.arange(p.numel()) + k).reshape(tuple(p.shape)).astype('float32') * 0.5)
    return m.eval()
"""
_PW = """
def _w(m, *names, T=()):
    for k, n in enumerate(names):
        p = getattr(m, n)
        shape = tuple(p.shape)[::-1] if n in T else tuple(p.shape)
        v = np.cos(np.arange(int(np.prod(shape))) + k).reshape(shape).astype('float32') * 0.5
        p.set_value(v.T if n in T else v)
    m.eval()
    return m
"""


def _layer(spec, cls, pd_cls, names=("weight", "bias"), T=(), inp="(t)", pd_inp=None, **opts):
    """Options for a layer whose constructor forms each get `_w` weights (and eval mode) and are applied to `inp`."""
    args = "".join(f", {n!r}" for n in names)
    pd_t = f", T={T!r}" if T else ""
    return spec, {"src_fn": f"nn.{cls}", "pd_fn": f"paddle.nn.{pd_cls}", "pre": _W, "pd_pre": _PW,
                  "post": f"_w({{}}{args}){inp}", "pd_post": f"_w({{}}{args}{pd_t})" + (pd_inp or inp), **opts}


def _tensor(expr: str) -> str:
    """`torch.tensor(expr) | paddle.to_tensor(expr)`: a literal tensor spelled on each side."""
    return f"torch.tensor({expr}) | paddle.to_tensor({expr})"


_OUT = "*out>-=None?"   # torch's out= (Paddle returns a new tensor): left out in "defaults omitted"
_XY = f"input>x=t; other>y=u; {_OUT}"
_INT = "(t * 10).int() | (t * 10).astype('int32')"
_INT2 = "(u * 10).int() | (u * 10).astype('int32')"
TABLE.add_forms({
    "torch.sign": f"input>x=t; {_OUT}", "torch.reciprocal": f"input>x=abs(t) + 0.5; {_OUT}",
    "torch.isnan": "input>x=t.log()", "torch.isinf": "input>x=1 / t.clip(0)",
    "torch.add": f"{_XY}; *alpha>-=1?", "torch.sub": f"{_XY}; *alpha>-=1?", "torch.mul": _XY,
    "torch.rsub": ("input>y=t; other>x=u; *alpha>-=1?", {"pd_fn": "paddle.subtract", "pd_pos": 0}),
    "torch.div": f"input>x=t; other>y=abs(u) + 0.5; *rounding_mode>-=None?; {_OUT}",
    "torch.pow": f"input>x=abs(t) + 0.5; exponent>y=2.0; {_OUT}", "torch.maximum": _XY, "torch.minimum": _XY,
    "torch.eq": f"input>x=t; other>y=t.clip(0); {_OUT}", "torch.ne": f"input>x=t; other>y=t.clip(0); {_OUT}",
    "torch.ge": _XY, "torch.gt": _XY, "torch.le": _XY, "torch.lt": _XY,
    "torch.remainder": f"input>x=t * 3; other>y=abs(u) + 0.5; {_OUT}",
    "torch.where": f"condition=t > 0; input>x=t; other>y=u; {_OUT}",
    **{f"torch.bitwise_{op}": f"input>x={_INT}; other>y={_INT2}; {_OUT}" for op in ("and", "or", "xor")},
    "torch.bitwise_not": f"input>x={_INT}; {_OUT}",
    "torch.nn.functional.linear": ("input>x=t; weight=w | w.T; bias=b?", {
        "pre": "w, b = [torch.tensor(np.cos(np.arange(n)).astype('float32')) for n in (20, 5)]\nw = w.reshape(5, 4)",
        "pd_pre": "w, b = [paddle.to_tensor(np.cos(np.arange(n)).astype('float32')) for n in (20, 5)]\nw = w.reshape([5, 4])"}),
    "torch.addmm": "input=t[0, :, :3]; mat1>x=t[0]; mat2>y=u[0].T; *beta=0.5?; *alpha=2.0?",
    "torch.mm": f"input=t[0]; mat2=u[0].T; {_OUT}", "torch.bmm": f"input>x=t; mat2>y=u.transpose(1, 2) | u.transpose([0, 2, 1]); {_OUT}",
    "torch.matmul": f"input>x=t; other>y=u.transpose(1, 2) | u.transpose([0, 2, 1]); {_OUT}",
    "torch.cumsum": f"input>x=t; dim>axis=1; {_OUT}", "torch.argmax": "input>x=t; dim>axis=1?; keepdim=True?",
    "torch.var": "input>x=t; dim>axis=1?; *correction>unbiased=1 | True?; *keepdim=True?",
    "torch.ops.aten._unsafe_view": ("self>x=t; size>shape=[6, 4]", {"pd_fn": "paddle.reshape"}),
    "torch.transpose": ("input>x=t; dim0>-=0; dim1>-=2; -<perm=[2, 1, 0]", {"pd_fn": "paddle.transpose"}),
    "torch.unsqueeze": "input>x=t; dim>axis=1", "torch.squeeze": "input>x=t[:, :1]; dim>axis=1?",
    "torch.cat": "tensors>x=[t, u]; dim>axis=2?", "torch.concat": "tensors>x=[t, u]; dim>axis=2?",
    "torch.stack": "tensors>x=[t, u]; dim>axis=1?",
    # Paddle has no select(): the page's indexing, as a function of the same arguments
    "torch.select": ("input>x=t; dim>axis=1; index=2", {
        "pd_pre": "def _select(x, axis, index):\n    return x[(slice(None),) * axis + (index,)]", "pd_fn": "_select"}),
    "torch.split": "tensor>x=t; split_size_or_sections>num_or_sections=[1, 3]; dim>axis=2",
    "torch.index_select": (f"input>x=t; dim>axis=2; index={_tensor('[3, 0]')}; {_OUT}", {"pd_pos": 1}),
    "torch.gather": (f"input>arr=t; dim>axis=2; index>indices={_tensor('[[[0], [1], [2]], [[3], [0], [1]]]')}; *sparse_grad>-=False?; {_OUT}",
                     {"pd_fn": "paddle.take_along_axis", "pd_pos": 1}),
    "torch.nn.Embedding": _layer("num_embeddings=10; embedding_dim=4; padding_idx=None?", "Embedding", "Embedding",
                                 ("weight",), inp="(torch.tensor([[1, 7], [3, 3]]))",
                                 pd_inp="(paddle.to_tensor([[1, 7], [3, 3]]))"),
    "torch.nn.functional.pad": "input>x=t; pad=[1, 2]; mode='constant'?; value=1.5?",
    "torch.Tensor.to": ("dtype=torch.int32 | 'int32'", {"src_fn": "(t * 3).to", "pd_fn": "(t * 3).astype"}),
    "torch.clone": ("input>x=t; *memory_format>-=torch.preserve_format?", {"pd_fn": "paddle.clone"}),
    "torch.Tensor.contiguous": ("*memory_format>-=torch.contiguous_format?; -<x=t",
                                {"src_fn": "t.contiguous", "pd_fn": "paddle.assign"}),
    "torch.ops.aten.alias": ("self>x=t", {"pd_fn": "paddle.assign"}),
    "torch.tensor (constant in forward)": ("data=[1.0, 2.0, 3.0, 4.0]; *dtype=torch.float32 | 'float32'?",
                                           {"src_fn": "torch.tensor", "pd_fn": "paddle.to_tensor"}),
    "torch.nn.Dropout": _layer("p=0.3?; inplace>-=False?", "Dropout", "Dropout", ()),
    "torch.nn.Dropout2d": _layer("p=0.5?; inplace>-=False?", "Dropout2d", "Dropout2D", (),
                                 inp="(t.reshape(1, 2, 3, 4))", pd_inp="(t.reshape([1, 2, 3, 4]))"),
    "torch.full": "size>shape=(2, 3) | [2, 3]; fill_value=1.5; *dtype=torch.float32 | 'float32'?",
    "torch.full_like": "input>x=t; fill_value=2.0; *dtype=torch.float32 | 'float32'?",
    "torch.zeros": "size>shape=(2, 3) | [2, 3]; *dtype=torch.float32 | 'float32'?",
    "torch.ones": "size>shape=(2, 3) | [2, 3]; *dtype=torch.float32 | 'float32'?",
    **{f"torch.Tensor.new_{kind}": ("size>shape=(2, 3) | [2, 3]; *dtype=torch.float32 | 'float32'?",
                                    {"src_fn": f"t.new_{kind}", "pd_fn": f"paddle.{kind}"})
       for kind in ("ones", "zeros")},
    "torch.zeros_like": "input>x=t; *dtype=torch.float32 | 'float32'?",
    "torch.ones_like": "input>x=t; *dtype=torch.float32 | 'float32'?",
    "torch.scalar_tensor": ("s>data=2.5; *dtype=torch.float32 | 'float32'?", {"pd_fn": "paddle.to_tensor"}),
    "torch.arange": "start=1; end=7; step=2?",
    "torch.nn.functional.interpolate": "input>x=t; size=None?; scale_factor=2.0; mode='bilinear'?; align_corners=False?",
    "torch.as_strided": "input>x=t; size>shape=(2, 3) | [2, 3]; stride=(6, 2) | [6, 2]; storage_offset>offset=1 | 4?",
    "torch.linalg.vector_norm": "x=t; ord>p=3.0?; dim>axis=1?; keepdim=True?",
    "torch.Tensor.softmax": ("-<x=t; dim>axis=1; dtype=None?", {"src_fn": "t.softmax", "pd_fn": "F.softmax", "pd_pos": 0}),
    # layers with weights (set by _w) and pools
    "torch.nn.Linear": _layer("in_features=4; out_features=5; bias>bias_attr=True | None?", "Linear", "Linear",
                              T=("weight",), pd_pos=2),
    "torch.nn.Conv2d": _layer("in_channels=3; out_channels=4; kernel_size=3; stride=2?; padding=1?", "Conv2d", "Conv2D"),
    "torch.nn.functional.conv2d": ("input>x=t; weight=w; bias=None?; stride=1?; padding=1?; dilation=1?; groups=3", {
        "pre": "w = torch.tensor(np.cos(np.arange(54)).reshape(6, 1, 3, 3).astype('float32'))",
        "pd_pre": "w = paddle.to_tensor(np.cos(np.arange(54)).reshape(6, 1, 3, 3).astype('float32'))"}),
    "torch.nn.BatchNorm2d": _layer("num_features=3; eps>epsilon=1e-5?; momentum=0.1 | 0.9?", "BatchNorm2d", "BatchNorm2D",
                                   pd_pos=1),
    "torch.nn.functional.batch_norm": ("input>x=t; running_mean=m; running_var=v; weight=g; bias=b; training=False?; "
                                       "momentum=0.1 | 0.9?; eps>epsilon=1e-5?", {
        "pre": "g, b, m, v = [torch.tensor(np.cos(np.arange(3) + k).astype('float32') + k // 3) for k in range(4)]",
        "pd_pre": "g, b, m, v = [paddle.to_tensor(np.cos(np.arange(3) + k).astype('float32') + k // 3) for k in range(4)]"}),
    "torch.nn.LayerNorm": _layer("normalized_shape=4; eps>epsilon=1e-5?", "LayerNorm", "LayerNorm"),
    "torch.nn.functional.layer_norm": "input>x=t; normalized_shape=[3, 4]; weight=None?; bias=None?; eps>epsilon=1e-5?",
    "torch.nn.GroupNorm": _layer("num_groups=2; num_channels=4; eps>epsilon=1e-5?", "GroupNorm", "GroupNorm"),
    "torch.nn.LSTM": _layer("input_size=3; hidden_size=5; num_layers=1?; bias>-=True?; batch_first>time_major=True | False",
                            "LSTM", "LSTM", ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"), pd_pos=3),
    "torch.nn.MaxPool2d": _layer("kernel_size=3; stride=2?; padding=1?", "MaxPool2d", "MaxPool2D", ()),
    "torch.nn.AvgPool2d": _layer("kernel_size=3; stride=2?; padding=1?; ceil_mode=False?; count_include_pad>exclusive=True | False?!False",
                                 "AvgPool2d", "AvgPool2D", ()),
    "torch.nn.AdaptiveAvgPool2d": _layer("output_size=(3, 2)", "AdaptiveAvgPool2d", "AdaptiveAvgPool2D", ()),
    "torch.nn.MaxPool3d": _layer("kernel_size=3; stride=2?; padding=1?", "MaxPool3d", "MaxPool3D", ()),
    "torch.nn.AvgPool3d": _layer("kernel_size=3; stride=2?; padding=1?; ceil_mode=False?; count_include_pad>exclusive=True | False?!False",
                                 "AvgPool3d", "AvgPool3D", ()),
    "torch.nn.functional.max_pool2d": "input>x=t; kernel_size=3; stride=2?; padding=1?",
    "torch.nn.functional.max_pool3d": "input>x=t; kernel_size=3; stride=2?; padding=1?",
    "torch.nn.functional.avg_pool3d": ("input>x=t; kernel_size=3; stride=2?; padding=1?; ceil_mode=False?; "
                                       "count_include_pad>exclusive=True | False?!False"),
})

# x.size(dim) reads one dim; Paddle reads the whole shape and indexes it.
TABLE.add_forms({"torch.Tensor.size": ("-<input=t; dim>-=1 # indexed: paddle.shape(x)[1]",
                                       {"src_fn": "t.size", "pd_then": "[1]",
                                        "pre": "t = torch.tensor(x)",
                                        "pd_pre": "t = paddle.to_tensor(x)"})})

# One call form only: the reason is checked against the signature by tests/test_api_diff.py.
TABLE.single_form({
    "torch.Tensor.item": "no-arguments",
    **{api: "no-arguments" for api in (
        "torch.nn.Sigmoid", "torch.nn.Tanh", "torch.nn.Softsign", "torch.nn.Tanhshrink", "torch.nn.LogSigmoid",
        "torch.nn.Identity", "torch.Tensor.t", "torch.Tensor.detach",
        *(f"torch.Tensor.{m}" for m in ("exp", "abs", "sqrt", "sigmoid", "tanh", "neg", "floor")))},
    **{api: "variadic" for api in ("torch.einsum", "torch.meshgrid", "torch.Tensor.view", "torch.Tensor.expand")},
    **{api: "operator" for api in ("torch.Tensor.T", "torch.Tensor.__getitem__ (slice)",
                                   "torch.Tensor.__getitem__ (tensor index)")},
})
