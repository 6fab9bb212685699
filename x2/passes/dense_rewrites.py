"""Linear layers seen through the reshapes exporters wrap around them, as
patterns (x2/passes/patterns.py).

TF's Tensordot (Keras Dense on a 3-D input) flattens the leading axes, does
a 2-D matmul and restores them; Keras's EinsumDense (MultiHeadAttention's
projections) splits the output into heads and then adds a [heads, dim] bias.
Both are one linear layer with its bias: written as such, `matmul_to_dense`
makes them one `nn.Linear` each, holding the bias the source learned.
"""
from __future__ import annotations

from ..ir import Graph, TensorInfo
from .patterns import Match, Op, Rewrite, Var

_x = Var("x")
_weight = Var("w", lambda graph, v: graph.is_constant(v) and graph.constants[v].ndim == 2)
_bias = Var("b", lambda graph, v: graph.is_constant(v))


def _same_dims(a, b) -> bool:
    """Shapes that agree, an unknown dim only where the other is unknown too."""
    return a is not None and b is not None and len(a) == len(b) and all(
        p == q for p, q in zip(a, b))


def _matmul(graph: Graph, x: str, w: str) -> str:
    node = graph.add_node("matmul", [x, w], name=graph.fresh_name("matmul"))
    shape = graph.shape(x)
    graph.info[node.outputs[0]] = TensorInfo(graph.dtype(x), (*shape[:-1],
                                                             graph.constants[w].shape[1]))
    return node.outputs[0]


def _unflatten(graph: Graph, m: Match) -> str | None:
    """reshape(reshape(x, [-1, K]) @ w, x.shape[:-1] + [N]) -> x @ w."""
    x, w = m.values["x"], m.values["w"]
    shape = graph.shape(x)
    k, n = graph.constants[w].shape
    if shape is None or len(shape) < 3 or shape[-1] != k:
        return None
    flat = graph.shape(m.nodes["flat"].outputs[0])
    if flat is None or len(flat) != 2 or flat[1] != k:
        return None
    if not _same_dims(graph.shape(m.root.outputs[0]), (*shape[:-1], n)):
        return None
    return _matmul(graph, x, w)


TENSORDOT = Rewrite("dense_through_reshape",
                    Op("reshape", Op("matmul", Op("reshape", _x, name="flat"), _weight)),
                    _unflatten)


def _bias_before_split(graph: Graph, m: Match) -> str | None:
    """reshape(x @ w, [..., heads, dim]) + b[heads, dim] -> reshape(x @ w + b.flat):
    the reshape only splits the last axis, so the bias is one per output column."""
    x, w, b = m.values["x"], m.values["w"], m.values["b"]
    shape, split = graph.shape(x), graph.shape(m.root.outputs[0])
    n = graph.constants[w].shape[1]
    bias = graph.constants[b]
    if shape is None or split is None or len(split) != len(shape) + 1 or \
            not _same_dims(split[:-2], shape[:-1]) or split[-2:] != tuple(bias.shape) or \
            bias.size != n or graph.dtype(b) != graph.dtype(x):
        return None
    flat_bias = graph.add_constant(b + "/flat", bias.reshape(n))
    origin = graph.origin.get(b)
    if origin is not None and origin.perm is None:
        graph.origin[flat_bias] = origin   # the same learned bias, laid out anew
    product = _matmul(graph, x, w)
    added = graph.add_node("add", [product, flat_bias], name=graph.fresh_name("add"))
    graph.info[added.outputs[0]] = graph.info[product]
    reshape = m.nodes["split"]
    node = graph.add_node("reshape", [added.outputs[0]], attrs=dict(reshape.attrs),
                          name=graph.fresh_name("reshape"))
    graph.info[node.outputs[0]] = graph.info[m.root.outputs[0]]
    return node.outputs[0]


BIAS_AFTER_SPLIT = Rewrite("dense_bias_after_split",
                           Op("add", Op("reshape", Op("matmul", _x, _weight), name="split"),
                              _bias),
                           _bias_before_split)

REWRITES = [TENSORDOT, BIAS_AFTER_SPLIT]
