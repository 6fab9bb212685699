"""Fusions that make the emitted model read like hand-written code and run
like a native one:
  * conv2d followed by a per-channel add/mul of constants (bias, and Keras'
    inference-time batch norm, which TF exports as mul+add) folds into the
    convolution's weight and bias;
  * matmul by a constant 2-D weight (+ a constant bias) becomes `dense`,
    which emitters write as a Linear layer;
  * a zero pad of the spatial dims feeding only a convolution (Keras'
    ZeroPadding2D before a VALID conv) becomes the convolution's own pads,
    saving a copy of the padded activation.
"""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Origin, recipes


def _channel_vector(graph: Graph, value: str, channels: int, rank: int,
                    axis: int = 1) -> np.ndarray | None:
    """The constant as a length-C vector if it broadcasts along `axis` only."""
    const = graph.constants.get(value)
    if const is None:
        return None
    if const.size == 1:
        return np.full(channels, const.reshape(()), dtype=const.dtype)
    if const.ndim > rank:
        return None
    full = const.reshape((1,) * (rank - const.ndim) + const.shape)
    if full.shape[axis] != channels or any(d != 1 for i, d in enumerate(full.shape)
                                           if i != axis):
        return None
    return full.reshape(channels)


def _fold_recipes(graph: Graph, op: str, inputs: list[str], other: str, weight: str,
                  bias: str) -> None:
    """The recipes of a convolution's weight and bias after `op` by the
    per-channel constant `other` folded into them (fold_affine_into_conv)."""
    channels = graph.constants[bias].shape[0]
    size = graph.constants[other].size
    part = recipes.recipe_of(graph, other)
    if part is None:
        return
    vector = ["r", [channels] if size != 1 else [1], part]
    old_bias = recipes.recipe_of(graph, inputs[2]) if len(inputs) > 2 else None
    if len(inputs) > 2 and old_bias is None:
        return
    zero = ["c", [0.0], str(graph.constants[bias].dtype)]
    if op == "mul":
        old_weight = recipes.recipe_of(graph, inputs[1])
        if old_weight is not None:
            recipes.note(graph, weight, ["mul", old_weight, ["r", [-1, 1, 1, 1], vector]])
        recipes.note(graph, bias, ["mul", old_bias or zero, vector])
    else:
        recipes.note(graph, bias, [op, old_bias or zero, vector])


def _vector_origin(graph: Graph, value: str, vector: str) -> bool:
    """`vector` (C values) is the constant `value` flattened: it keeps the
    origin of `value` where flattening undoes every axis permutation the
    origin records (only axes of size 1 moved)."""
    origin = graph.origin.get(value)
    if origin is None or not origin.param:
        return False
    shape = graph.constants[value].shape
    if origin.perm is not None:
        moved = [p for i, p in enumerate(origin.perm) if shape[i] != 1]
        if moved != sorted(moved):
            return False
    graph.origin[vector] = Origin(origin.tensor, None, origin.param, origin.trainable)
    return True


def single_user(graph: Graph, value: str) -> Node | None:
    users = graph.users(value)
    if len(users) != 1 or value in graph.outputs:
        return None
    return users[0]


def fold_affine_into_conv(graph: Graph) -> Graph:
    changed = True
    while changed:
        changed = False
        for conv in list(graph.nodes):
            if conv.graph is not graph or conv.op != "conv2d" or \
                    conv.inputs[1] not in graph.constants:
                continue
            user = single_user(graph, conv.outputs[0])
            if user is None or user.op not in ("add", "mul", "sub"):
                continue
            other = user.inputs[1] if user.inputs[0] == conv.outputs[0] else user.inputs[0]
            if user.op == "sub" and user.inputs[0] != conv.outputs[0]:
                continue
            weight = graph.constants[conv.inputs[1]]
            axis = 3 if conv.attrs.get("data_format") == "NHWC" else 1
            vector = _channel_vector(graph, other, weight.shape[0], 4, axis)
            if vector is None or user.inputs.count(conv.outputs[0]) != 1:
                continue
            had_bias = len(conv.inputs) > 2
            bias = (graph.constants[conv.inputs[2]] if had_bias
                    else np.zeros(weight.shape[0], weight.dtype))
            new_weight = conv.inputs[1]   # a bias added: the weight (and its origin) stays
            if user.op == "mul":
                weight = weight * vector.reshape(-1, 1, 1, 1)
                bias = bias * vector
                new_weight = graph.add_constant(conv.name + "/weight", weight.astype(weight.dtype))
            else:
                bias = bias + vector if user.op == "add" else bias - vector
            new_bias = graph.add_constant(conv.name + "/bias", bias.astype(weight.dtype))
            if user.op == "add" and not had_bias and vector.dtype == weight.dtype and \
                    _vector_origin(graph, other, new_bias):
                pass   # the source's bias itself (Keras adds it as [1, 1, 1, C])
            elif graph.meta.source_state:   # a Keras weight folded in: how (recipes.py)
                _fold_recipes(graph, user.op, conv.inputs, other, new_weight, new_bias)
            conv.inputs = [conv.inputs[0], new_weight, new_bias]
            graph.remove_node(user)
            conv.outputs = user.outputs
            changed = True
    return graph.remove_unused()


def matmul_to_dense(graph: Graph) -> Graph:
    biases: dict[tuple, str] = {}  # one constant per source bias (an unrolled loop's steps)
    for node in list(graph.nodes):
        if node.graph is not graph or node.op != "matmul" or \
                node.inputs[1] not in graph.constants:
            continue
        weight = graph.constants[node.inputs[1]]
        if weight.ndim != 2:
            continue
        node.op = "dense"
        user = single_user(graph, node.outputs[0])
        if user is None or user.op != "add":
            continue
        other = user.inputs[1] if user.inputs[0] == node.outputs[0] else user.inputs[0]
        bias = graph.constants.get(other)
        if bias is None or bias.size != weight.shape[1] or bias.ndim > 1 and \
                any(d != 1 for d in bias.shape[:-1]):
            continue
        key = (other, str(weight.dtype))
        if key not in biases:
            biases[key] = graph.add_constant(node.name + "/bias",
                                             bias.reshape(-1).astype(weight.dtype))
            # the source's bias laid out anew (a row vector flattened) is still
            # that bias: it keeps its origin (the emitters name the layer's bias
            # after it); a cast one is another array
            origin = graph.origin.get(other)
            if origin is not None and origin.perm is None and bias.dtype == weight.dtype:
                graph.origin[biases[key]] = origin
        node.inputs = [*node.inputs, biases[key]]
        graph.remove_node(user)
        node.outputs = user.outputs
    return graph.remove_unused()


def _zero_pad_4d(node: Node) -> bool:
    return node.op == "pad" and node.attrs.get("mode", "constant") == "constant" and \
        node.attrs.get("value", 0) == 0 and len(node.attrs.get("pads", [])) == 8


def _transpose_before_pad(graph: Graph) -> None:
    """pad -> transpose -> conv2d becomes transpose -> pad -> conv2d (pads
    permuted), so the pad meets the convolution: at an NHWC graph input the
    layout pass leaves the interface Transpose after Keras' ZeroPadding2D."""
    for pad in list(graph.nodes):
        if not _zero_pad_4d(pad):
            continue
        transpose = single_user(graph, pad.outputs[0])
        if transpose is None or transpose.op != "transpose":
            continue
        conv = single_user(graph, transpose.outputs[0])
        if conv is None or conv.op != "conv2d":
            continue
        perm, pads = transpose.attrs["perm"], pad.attrs["pads"]
        padded = pad.outputs[0]
        # pad's output now holds the transposed input; keep value infos honest
        source_info = graph.info.get(pad.inputs[0])
        transpose.inputs, pad.inputs = [pad.inputs[0]], [padded]
        transpose.outputs, pad.outputs = [padded], transpose.outputs
        graph.origin.pop(padded, None)
        graph.derive_origin(padded, transpose.inputs[0], perm)
        pad.attrs = {**pad.attrs, "pads": [pads[p] for p in perm] + [pads[4 + p] for p in perm]}
        if source_info is not None and source_info.shape is not None:
            graph.info[padded] = type(source_info)(
                source_info.dtype, tuple(source_info.shape[p] for p in perm))
        i, j = graph.nodes.index(pad), graph.nodes.index(transpose)
        graph.nodes[i], graph.nodes[j] = transpose, pad


# Ops whose output is never negative: a zero pad before a max-pool of it
# never wins the max, so it is the pool's own padding.
_NON_NEGATIVE = {"relu", "relu6", "sigmoid", "softmax", "exp", "abs"}


def _non_negative(graph: Graph, value: str) -> bool:
    producer = graph.producer(value)
    if producer is None:
        return False
    if producer.op == "clip":
        return producer.attrs.get("min") is not None and producer.attrs["min"] >= 0
    return producer.op in _NON_NEGATIVE


def _takes_pad(graph: Graph, pad: Node, window: Node | None) -> bool:
    """Whether `window` (the pad's one user) can take the pad as its padding:
    a convolution always (zeros are its padding), a max-pool when the padded
    values are never negative and the pads fit in half its window (torch's
    and paddle's limit)."""
    if window is None or window.inputs[0] != pad.outputs[0] or \
            window.inputs.count(pad.outputs[0]) != 1:
        return False
    if window.attrs.get("auto_pad", "NOTSET") != "NOTSET":
        return False  # its pads are computed at run time: nothing to add a pad to
    if window.op == "conv2d":
        return True
    if window.op != "max_pool2d" or not _non_negative(graph, pad.inputs[0]):
        return False
    h, w = (1, 2) if window.attrs.get("data_format") == "NHWC" else (2, 3)
    pads, kernel = pad.attrs["pads"], window.attrs["kernel"]
    extra = [pads[h], pads[w], pads[h + 4], pads[w + 4]]
    total = [a + b for a, b in zip(window.attrs.get("pads") or [0] * 4, extra)]
    return all(p <= k // 2 for p, k in zip(total, [kernel[0], kernel[1]] * 2))


def fold_pad_into_conv(graph: Graph) -> Graph:
    """A zero Pad before a conv2d (or a max-pool of non-negative values, as
    ResNet's stem has it) becomes the window op's padding: one op, which the
    targets' runtimes fuse (an explicit 8-value pad also crashes Paddle
    Inference's oneDNN pad kernel)."""
    _transpose_before_pad(graph)
    for pad in list(graph.nodes):
        if not _zero_pad_4d(pad):
            continue
        window = single_user(graph, pad.outputs[0])
        if not _takes_pad(graph, pad, window):
            continue
        pads = pad.attrs["pads"]
        spatial = (1, 2) if window.attrs.get("data_format") == "NHWC" else (2, 3)
        if any(pads[i] or pads[i + 4] for i in range(4) if i not in spatial) or \
                any(p < 0 for p in pads) or len(window.attrs.get("pads", [])) != 4:
            continue
        top, left, bottom, right = window.attrs["pads"]
        h, w = spatial
        window.attrs = {**window.attrs, "pads": [top + pads[h], left + pads[w],
                                                 bottom + pads[h + 4], right + pads[w + 4]]}
        window.inputs = [pad.inputs[0], *window.inputs[1:]]
        graph.remove_node(pad)
    return graph.remove_unused()
