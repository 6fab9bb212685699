"""Two recurrent layers over the same sequence, one forward and one reverse,
whose outputs are only concatenated on the feature axis (what Keras'
Bidirectional wrapper and hand-written bidirectional models give), become
one bidirectional layer: one nn.LSTM(bidirectional=True) in the output,
with the two weight sets stacked on the directions axis."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, TensorInfo

RECURRENT = ("lstm", "gru", "rnn")


def merge_bidirectional(graph: Graph) -> Graph:
    for concat in list(graph.nodes):
        if concat.op != "concat" or len(concat.inputs) != 2:
            continue
        pair = [graph.producer(v) for v in concat.inputs]
        if not _mergeable(graph, concat, *pair):
            continue
        forward, backward = pair
        weights = [graph.add_constant(f"{forward.name}/bidirectional_{part}", np.concatenate(
            [graph.constants[forward.inputs[i]], graph.constants[backward.inputs[i]]]))
            for i, part in ((1, "w"), (2, "r"), (3, "b"))]
        states = [graph.fresh_name(f"{forward.name}/state") for _ in forward.outputs[1:]]
        attrs = {**forward.attrs, "direction": "bidirectional"}
        graph.remove_node(concat)
        graph.remove_node(forward)
        graph.remove_node(backward)
        graph.add_node(forward.op, [forward.inputs[0], *weights], attrs=attrs, name=forward.name,
                       outputs=[concat.outputs[0], *states], source=concat.source)
        shape = graph.shape(forward.outputs[1])
        for state in states:
            graph.info[state] = TensorInfo(graph.dtype(forward.outputs[1]),
                                           None if shape is None else (2, *shape[1:]))
        for value in (*forward.outputs, *backward.outputs):
            graph.forget(value)
    return graph.toposort()


def _mergeable(graph: Graph, concat, forward, backward) -> bool:
    if forward is None or backward is None or forward.op not in RECURRENT or \
            forward.op != backward.op or forward is backward:
        return False
    rank = len(graph.shape(concat.outputs[0]) or ())
    if not rank or concat.attrs["axis"] not in (-1, rank - 1):
        return False
    same = {k: v for k, v in forward.attrs.items() if k != "direction"} == \
        {k: v for k, v in backward.attrs.items() if k != "direction"}
    if not same or (forward.attrs["direction"], backward.attrs["direction"]) != \
            ("forward", "reverse"):
        return False
    # No lengths or initial states, constant weights, the same sequence in.
    if len(forward.inputs) != 4 or len(backward.inputs) != 4 or \
            forward.inputs[0] != backward.inputs[0] or \
            not all(graph.is_constant(v) for v in (*forward.inputs[1:], *backward.inputs[1:])):
        return False
    # Only the concat reads the two sequences; nothing reads their final states.
    return all(graph.users(node.outputs[0]) == [concat] and node.outputs[0] not in graph.outputs
               for node in (forward, backward)) and \
        not any(graph.users(v) or v in graph.outputs
                for node in (forward, backward) for v in node.outputs[1:])
