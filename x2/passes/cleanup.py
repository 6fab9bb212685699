"""Remove identities and dead code."""
from __future__ import annotations

from ..ir import Graph


def remove_identities(graph: Graph) -> Graph:
    producers = graph.producers()
    outputs = set(graph.outputs)
    kept = []
    renames: dict[str, str] = {}

    def resolve(v: str) -> str:
        seen = set()
        while v in renames and v not in seen:
            seen.add(v)
            v = renames[v]
        return v

    for node in graph.nodes:
        if node.op != "identity":
            kept.append(node)
            continue
        src, dst = resolve(node.inputs[0]), node.outputs[0]
        if dst not in outputs:
            renames[dst] = src
            continue
        producer = producers.get(src)
        if producer is not None and src not in outputs and src not in graph.inputs:
            # Let the producer write the graph output directly.
            producer.outputs = [dst if o == src else o for o in producer.outputs]
            renames[src] = dst
            continue
        node.inputs = [src]
        kept.append(node)
    graph.nodes = kept
    for node in graph.nodes:
        node.inputs = [resolve(v) for v in node.inputs]
    graph.outputs = [resolve(v) for v in graph.outputs]
    return graph.toposort()


def remove_dead(graph: Graph) -> Graph:
    return graph.remove_unused()
