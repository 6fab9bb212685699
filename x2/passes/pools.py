"""A 2-D pool whose one window covers its whole input is a reduction over
the image dims. transformers' EfficientNet ends in AvgPool2d(kernel = the
hidden size, ceil_mode=True) over a 2x2 map; written as a pool, the torch
code padded it by 318 rows and columns and averaged a 320x320 window (340 ms
against the source's 3.3 ms), where a mean is one small op on every target."""
from __future__ import annotations

from ..ir import Graph, Node

_REDUCTION = {"avg_pool2d": "reduce_mean", "max_pool2d": "reduce_max"}


def whole_window_pools(graph: Graph) -> Graph:
    for pool in [n for n in graph.nodes if n.op in _REDUCTION]:
        axes = _whole_window_axes(graph, pool)
        if axes is None:
            continue
        position = graph.nodes.index(pool)
        graph.remove_node(pool)
        graph.add_node(_REDUCTION[pool.op], pool.inputs[:1], name=pool.name,
                       attrs={"axes": axes, "keepdims": True}, outputs=pool.outputs,
                       source=pool.source, position=position)
    return graph


def _whole_window_axes(graph: Graph, pool: Node) -> list[int] | None:
    """The image axes when the pool's first window holds every input element
    and it has no other; an average that counts padding is not a mean, so
    it must then have none."""
    shape = graph.shape(pool.inputs[0]) or ()
    axes = [1, 2] if pool.attrs.get("data_format") == "NHWC" else [2, 3]
    sizes = [shape[a] for a in axes] if len(shape) == 4 else [None]
    if not all(isinstance(s, int) and s > 0 for s in sizes):
        return None
    top, left, bottom, right = pool.attrs["pads"]
    kernel, strides = pool.attrs["kernel"], pool.attrs["strides"]
    for size, k, stride, before, after in zip(sizes, kernel, strides, (top, left), (bottom, right)):
        if min(before, after) < 0 or k - before < size or size + before + after - k >= stride:
            return None
    counts_padding = pool.op == "avg_pool2d" and pool.attrs.get("count_include_pad")
    if counts_padding and (any((top, left, bottom, right)) or list(kernel) != sizes):
        return None
    return axes
