"""Remove identities and dead code."""
from __future__ import annotations

from ..ir import Graph


def remove_identities(graph: Graph) -> Graph:
    outputs = set(graph.outputs)
    for node in list(graph.nodes):
        if node.op != "identity":
            continue
        src, dst = node.inputs[0], node.outputs[0]
        if dst not in outputs:
            if src not in graph.origin:
                graph.derive_origin(src, dst)
            graph.remove_node(node)
            graph.replace_uses(dst, src)
            graph.forget(dst)
            continue
        producer = graph.producer(src)
        if producer is not None and src not in outputs and src not in graph.inputs:
            # Let the producer write the graph output directly.
            if dst not in graph.origin:
                graph.derive_origin(dst, src)
            graph.remove_node(node)
            producer.outputs = [dst if o == src else o for o in producer.outputs]
            graph.replace_uses(src, dst)
            graph.forget(src)
    return graph.toposort()


def remove_dead(graph: Graph) -> Graph:
    return graph.remove_unused()
