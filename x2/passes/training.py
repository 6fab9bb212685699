"""Passes of `x2 convert --for training`: give back the layers a source
framework wrote as arithmetic, keeping the source's parameter set.

Keras 3 writes BatchNormalization at inference as x * m + (beta - mean * m)
with m = rsqrt(moving_variance + eps) * gamma; with the variables left
unfolded (x2/passes/fold.py keep_trainable) that arithmetic becomes one
`batch_norm` node again, which the emitters write as nn.BatchNorm2D /
nn.BatchNorm2d with its running statistics. A learned bias added after a
convolution without one becomes the convolution's bias."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from .fuse import matmul_to_dense

NHWC_TO_NCHW = [0, 3, 1, 2]
NCHW_TO_NHWC = [0, 2, 3, 1]


def _producer(graph: Graph, value: str, op: str) -> Node | None:
    node = graph.producer(value)
    return node if node is not None and node.op == op else None


def _variable(graph: Graph, value: str) -> str | None:
    """The source-variable constant behind `value` (through a same-dtype cast)."""
    cast = _producer(graph, value, "cast")
    if cast is not None and graph.dtype(cast.inputs[0]) == graph.dtype(value):
        value = cast.inputs[0]
    origin = graph.origin.get(value)
    return value if value in graph.constants and origin is not None and origin.param else None


def _scale_of(graph: Graph, m: str):
    """(gamma, variance, eps) when m = rsqrt(variance + eps) * gamma."""
    node = _producer(graph, m, "mul")
    if node is None:
        return None
    for r, gamma in (node.inputs, node.inputs[::-1]):
        rsqrt = _producer(graph, r, "rsqrt")
        gamma = _variable(graph, gamma)
        if rsqrt is None or gamma is None:
            continue
        add = _producer(graph, rsqrt.inputs[0], "add")
        if add is None:
            continue
        for var, eps in (add.inputs, add.inputs[::-1]):
            var = _variable(graph, var)
            if var is not None and eps in graph.constants and graph.constants[eps].size == 1:
                return gamma, var, float(graph.constants[eps].reshape(()))
    return None


def batch_norm_from_affine(graph: Graph) -> Graph:
    """x * m + (beta - mean * m), m = rsqrt(var + eps) * gamma, over the last
    axis of an NHWC image or a [N, C] batch -> batch_norm."""
    for out in list(graph.nodes):
        if out.graph is not graph or out.op != "add":
            continue
        for scaled, shift in (out.inputs, out.inputs[::-1]):
            mul = _producer(graph, scaled, "mul")
            sub = _producer(graph, shift, "sub")
            if mul is None or sub is None:
                continue
            beta, mean_m = sub.inputs
            beta = _variable(graph, beta)
            mean_mul = _producer(graph, mean_m, "mul")
            if beta is None or mean_mul is None:
                continue
            for x, m in (mul.inputs, mul.inputs[::-1]):
                if m not in mean_mul.inputs:
                    continue
                mean = _variable(graph, mean_mul.inputs[1 - list(mean_mul.inputs).index(m)])
                found = _scale_of(graph, m)
                shape = graph.shape(x)
                if mean is None or found is None or shape is None or len(shape) not in (2, 4):
                    continue
                gamma, var, eps = found
                channels = graph.constants[gamma].shape
                if len(channels) != 1 or shape[-1] != channels[0] or any(
                        graph.constants[v].shape != channels for v in (beta, mean, var)):
                    continue
                _replace(graph, out, x, [gamma, beta, mean, var], eps, len(shape))
                break
            else:
                continue
            break
    return graph.toposort().remove_unused()


def _replace(graph: Graph, out: Node, x: str, params: list[str], eps: float, rank: int) -> None:
    source = dict(out.source)
    y = out.outputs[0]
    graph.remove_node(out)
    if rank == 2:
        graph.add_node("batch_norm", [x, *params], attrs={"epsilon": eps}, name=f"{y}/bn",
                       outputs=[y], source=source)
        return
    shape = graph.shape(x)
    nchw = graph.fresh_name(f"{y}/to_nchw")
    graph.add_node("transpose", [x], attrs={"perm": NHWC_TO_NCHW}, name=nchw, outputs=[nchw],
                   source=source)
    graph.info[nchw] = type(graph.info[x])(graph.dtype(x), tuple(shape[i] for i in NHWC_TO_NCHW))
    bn = graph.fresh_name(f"{y}/bn")
    graph.add_node("batch_norm", [nchw, *params], attrs={"epsilon": eps}, name=bn, outputs=[bn],
                   source=source)
    graph.info[bn] = graph.info[nchw]
    graph.add_node("transpose", [bn], attrs={"perm": NCHW_TO_NHWC}, name=f"{y}/to_nhwc",
                   outputs=[y], source=source)


def conv_bias_from_add(graph: Graph) -> Graph:
    """conv2d(x, w) + b, b a learned per-channel vector -> conv2d(x, w, b)."""
    for conv in list(graph.nodes):
        if conv.graph is not graph or conv.op != "conv2d" or len(conv.inputs) > 2:
            continue
        users = graph.users(conv.outputs[0])
        if len(users) != 1 or users[0].op != "add" or conv.outputs[0] in graph.outputs:
            continue
        add = users[0]
        other = add.inputs[1] if add.inputs[0] == conv.outputs[0] else add.inputs[0]
        origin = graph.origin.get(other)
        if other not in graph.constants or origin is None or not origin.trainable \
                or origin.perm is not None:
            continue
        array = graph.constants[other]
        axis = 3 if conv.attrs.get("data_format") == "NHWC" else 1
        channels = graph.shape(conv.outputs[0])[axis]
        full = array.reshape((1,) * (4 - array.ndim) + array.shape) if array.ndim <= 4 else None
        if full is None or full.shape[axis] != channels or \
                any(d != 1 for i, d in enumerate(full.shape) if i != axis):
            continue
        bias = graph.add_constant(f"{conv.name}/bias", np.ascontiguousarray(array.reshape(-1)))
        graph.derive_origin(bias, other)
        graph.remove_node(add)
        conv.inputs = [*conv.inputs, bias]
        conv.outputs = add.outputs
    return graph.toposort().remove_unused()


def matmul_to_dense_keeping_bias(graph: Graph) -> Graph:
    """matmul_to_dense, with the learned bias it moves into the dense node
    still known as that source weight (flattened; same order)."""
    biases = {}
    for node in graph.nodes:
        users = graph.users(node.outputs[0]) if node.op == "matmul" else []
        if len(users) == 1 and users[0].op == "add":
            other = [v for v in users[0].inputs if v != node.outputs[0]]
            origin = graph.origin.get(other[0]) if other else None
            if origin is not None and origin.trainable and origin.perm is None:
                biases[node.name] = origin
    graph = matmul_to_dense(graph)
    for node in graph.nodes:
        if node.op == "dense" and len(node.inputs) == 3 and node.name in biases \
                and node.inputs[2] not in graph.origin:
            graph.origin[node.inputs[2]] = biases[node.name]
    return graph
