"""A query that sees no key, ruled out once per mask instead of per layer.

The IR's attention gives 0 for a query whose every key is masked (torch's
scaled_dot_product_attention), where a softmax gives NaN (or, in Paddle
Inference's oneDNN, a uniform row). Paddle and ONNX outputs write a test of
every row of the scores for it, in each layer: five ops per layer on Paddle,
a tenth of a decoding step at GPT-2's width. Every layer of a decoder reads
the same additive mask, and a row of the scores is all -inf where that row
of the mask is (for finite queries and keys). So the test is made once, on
the mask: its all -inf rows become zeros (every layer's softmax is then
finite) and each layer's weights are multiplied by 1 where the query sees
a key, 0 where it sees none: the attention's `seen` input, which also says
that no row needs the test. The emitters of targets whose softmax makes
such rows NaN run it (Paddle, ONNX); torch's own attention needs none.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph, TensorInfo


def attention_masks_once(graph: Graph) -> Graph:
    by_mask: dict[str, list] = {}
    for node in graph.nodes:
        if node.op == "attention" and len(node.inputs) == 4 and node.inputs[3] and \
                not node.attrs.get("causal"):
            by_mask.setdefault(node.inputs[3], []).append(node)
    for mask, nodes in by_mask.items():
        shape = graph.shape(mask)
        if len(nodes) < 2 or not shape or graph.dtype(mask) not in ("float32", "float16",
                                                                    "float64"):
            continue
        _test_once(graph, mask, nodes)
    return graph.toposort()


def _test_once(graph: Graph, mask: str, nodes: list) -> None:
    producer = graph.producer(mask)
    source = dict(producer.source) if producer is not None else {}
    dtype, shape = graph.dtype(mask), graph.shape(mask)
    rows = (*shape[:-1], 1)

    def add(name, op, inputs, out_dtype, out_shape, **attrs):
        node = graph.add_node(op, inputs, attrs=attrs, name=graph.fresh_name(name),
                              source=source)
        graph.info[node.outputs[0]] = TensorInfo(out_dtype, out_shape)
        return node.outputs[0]

    minus_inf = graph.add_constant(graph.fresh_name(f"{mask}/minus_inf"),
                                   np.array(-np.inf, dtype))
    zero = graph.add_constant(graph.fresh_name(f"{mask}/zero"), np.array(0, dtype))
    seen = add("key_seen", "not_equal", [mask, minus_inf], "bool", shape)
    any_seen = add("query_sees_a_key", "reduce_any", [seen], "bool", rows,
                   axes=[len(shape) - 1], keepdims=True)
    finite_mask = add("finite_mask", "where", [any_seen, mask, zero], dtype, shape)
    kept = add("sees_a_key", "cast", [any_seen], dtype, rows, dtype=dtype)
    for node in nodes:
        node.inputs = (*node.inputs[:3], finite_mask, kept)
