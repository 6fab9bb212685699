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


def dense_on_leading_dims(graph: Graph) -> Graph:
    """dense(reshape(x, [-1, K])) whose every use reshapes it again (torch's
    `view(-1, K)`, addmm, `view(batch, seq, N)`) is dense on x with only its
    trailing axes that make K merged: a linear layer acts on the last axis
    whatever the axes before it, and a reshape of its output reads the same
    elements in the same order. The reshapes left are identities where the
    shapes are known (merge_reshapes drops them); where they are computed, a
    cheap view. Besides being the code a person writes, it keeps Paddle
    Inference's fc fusion off a flatten it gets wrong (it fuses `reshape
    [26, 32]` of a [2, 13, 32] input as [2, 416])."""
    for node in list(graph.nodes):
        if node.op != "dense":
            continue
        flat = graph.producer(node.inputs[0])
        if flat is None or flat.op != "reshape" or len(flat.attrs["shape"]) != 2:
            continue
        x, k = flat.inputs[0], graph.constants[node.inputs[1]].shape[0]
        leading = _leading_dims(graph.shape(x), k)
        users = graph.users(node.outputs[0])
        if leading is None or flat.attrs["shape"][1] != k or not users or \
                node.outputs[0] in graph.outputs or not all(
                    u.op == "reshape_dynamic" and u.inputs[0] == node.outputs[0]
                    or u.op == "reshape" and 0 not in u.attrs["shape"] for u in users):
            continue
        if len(graph.shape(x)) > len(leading) + 1:  # merge the trailing axes that make K
            merged = graph.add_node("reshape", [x], attrs={"shape": [0] * len(leading) + [k]},
                                    name=graph.fresh_name(flat.name), source=flat.source,
                                    position=graph.nodes.index(node))
            graph.info[merged.outputs[0]] = TensorInfo(graph.dtype(x), (*leading, k))
            x = merged.outputs[0]
        node.inputs = [x, *node.inputs[1:]]
        out = graph.info[node.outputs[0]]
        graph.info[node.outputs[0]] = TensorInfo(out.dtype, (*leading, out.shape[-1]))
    return graph.remove_unused()


def _leading_dims(shape, k: int) -> tuple | None:
    """The axes of `shape` before the trailing ones whose sizes multiply to k
    (at least one axis before them), or None."""
    if shape is None:
        return None
    product = 1
    for cut in range(len(shape) - 1, 0, -1):
        if not isinstance(shape[cut], int):
            return None
        product *= shape[cut]
        if product == k:
            return tuple(shape[:cut])
        if product > k:
            return None
    return None

