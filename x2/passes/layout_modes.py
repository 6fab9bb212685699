"""Layout choices on top of transpose elimination (x2/passes/layout.py).

* `nchw_interface`: the converted model takes and returns NCHW tensors where
  the source had NHWC ones (--io-layout nchw). Done by renaming each NHWC
  input/output behind a Transpose; elimination then cancels these against the
  ones the frontend put around the first/last convolution, so no Transpose is
  left at all.
* `nhwc_ops`: keep the source's NHWC layout inside the model (--layout nhwc,
  for targets whose convolutions take data_format="NHWC", e.g. Paddle). Each
  layout-sensitive op is rewrapped as Transpose(to NHWC) -> op[NHWC] ->
  Transpose(to NCHW) and elimination removes the pairs, as in the NCHW case.
* `explain_transposes`: where each remaining Transpose sits and why it stays.
"""
from __future__ import annotations

from ..ir import Graph, TensorInfo

TO_NCHW = [0, 3, 1, 2]
TO_NHWC = [0, 2, 3, 1]
LAYOUT_SENSITIVE = ("conv2d", "batch_norm", "max_pool2d", "avg_pool2d")


def _permuted(shape, perm):
    return None if shape is None else tuple(shape[i] for i in perm)


def nchw_interface(graph: Graph) -> Graph:
    """Make the NHWC (rank-4) inputs and outputs of a source-NHWC graph NCHW."""
    if graph.meta.source_layout != "NHWC":
        return graph
    changes = graph.meta.io_transposes
    for name in list(graph.inputs):
        info = graph.info[name]
        if info.shape is None or len(info.shape) != 4:
            continue
        inner = graph.fresh_name(name + "_nhwc")
        graph.replace_uses(name, inner)
        graph.add_node("transpose", [name], attrs={"perm": TO_NHWC}, name=inner, outputs=[inner],
                       source={"op": "io-layout", "name": name}, position=0)
        graph.derive_origin(inner, name)
        graph.derive_origin(name, inner, TO_NCHW)
        graph.info[inner] = info
        graph.info[name] = TensorInfo(info.dtype, _permuted(info.shape, TO_NCHW))
        if name in graph.meta.dims:
            graph.meta.dims[name] = list(_permuted(graph.meta.dims[name], TO_NCHW))
        # Feed the converted model x.transpose(TO_NCHW) for a source input x.
        changes[name] = {"role": "input", "perm": TO_NCHW}
    for name in list(graph.outputs):
        info = graph.info.get(name)
        if info is None or info.shape is None or len(info.shape) != 4:
            continue
        producer = graph.producer(name)
        inner = graph.fresh_name(name + "_nhwc")
        producer.outputs = [inner if o == name else o for o in producer.outputs]
        graph.replace_uses(name, inner, graph_outputs=False)
        graph.add_node("transpose", [inner], attrs={"perm": TO_NCHW}, name=name,
                       outputs=[name], source={"op": "io-layout", "name": name})
        graph.derive_origin(inner, name)
        graph.derive_origin(name, inner, TO_NCHW)
        graph.info[inner] = info
        graph.info[name] = TensorInfo(info.dtype, _permuted(info.shape, TO_NCHW))
        if name in graph.meta.dims:
            graph.meta.dims[name] = list(_permuted(graph.meta.dims[name], TO_NCHW))
        changes[name] = {"role": "output", "perm": TO_NCHW}
    graph.meta.io_layout = "nchw"
    return graph.toposort()


def nhwc_ops(graph: Graph) -> Graph:
    """Rewrite NCHW layout-sensitive ops to run on NHWC data (data_format attr)."""
    for node in list(graph.nodes):
        if node.op not in LAYOUT_SENSITIVE or node.attrs.get("data_format") == "NHWC":
            continue
        x, out = node.inputs[0], node.outputs[0]
        x_info, out_info = graph.info.get(x), graph.info.get(out)
        to_nhwc = graph.add_node("transpose", [x], attrs={"perm": TO_NHWC},
                                 name=graph.fresh_name(x + "_to_nhwc"), source=node.source)
        graph.derive_origin(to_nhwc.outputs[0], x, TO_NHWC)
        if x_info is not None:
            graph.info[to_nhwc.outputs[0]] = TensorInfo(x_info.dtype,
                                                        _permuted(x_info.shape, TO_NHWC))
        nhwc_out = graph.fresh_name(out + "_nhwc")
        node.inputs = [to_nhwc.outputs[0], *node.inputs[1:]]
        node.outputs = [nhwc_out]
        graph.derive_origin(nhwc_out, out, TO_NHWC)
        node.attrs = {**node.attrs, "data_format": "NHWC"}
        if out_info is not None:
            graph.info[nhwc_out] = TensorInfo(out_info.dtype, _permuted(out_info.shape, TO_NHWC))
        graph.add_node("transpose", [nhwc_out], attrs={"perm": TO_NCHW},
                       name=graph.fresh_name(out + "_to_nchw"), outputs=[out],
                       source=node.source)
    graph.meta.layout = "nhwc"
    return graph.toposort()


def _preprocessed_input(graph: Graph, value: str) -> str | None:
    """The graph input `value` is, or is computed from by elementwise ops with
    constants only (Keras Rescaling/Normalization): then a Transpose on it is
    the input's own interface Transpose."""
    from ..ir.ops import OPS
    while value not in graph.inputs:
        producer = graph.producer(value)
        if producer is None or producer.op not in OPS or \
                OPS[producer.op].layout != "elementwise":
            return None
        computed = [v for v in producer.inputs if v not in graph.constants]
        if len(computed) != 1:
            return None
        value = computed[0]
    return value


def explain_transposes(graph: Graph) -> list[dict]:
    """One record per Transpose left: where it sits and why it could not go."""
    records = []
    for node in graph.nodes:
        if node.op != "transpose":
            continue
        src = node.inputs[0]
        users = graph.users(node.outputs[0])
        user_ops = sorted({u.op for u in users})
        nchw_io = graph.meta.io_layout == "nchw"
        nhwc_inside = graph.meta.layout == "nhwc"
        origin = _preprocessed_input(graph, src)
        if origin or node.outputs[0] in graph.outputs:
            where = (f"at graph input '{origin}'" if origin
                     else f"at graph output '{node.outputs[0]}'")
            if origin and origin != src:
                where += " (after its elementwise preprocessing)"
            if nchw_io and nhwc_inside:
                why = ("the interface is NCHW (--io-layout nchw) but the model computes in "
                       "NHWC (--layout nhwc); drop one of the two to remove it")
            elif nhwc_inside or not nchw_io:
                why = ("the converted model keeps the source's layout at its interface and "
                       "computes in the other one; --io-layout nchw (with --layout nchw) "
                       "removes it")
            else:
                why = "a rank-4 interface tensor whose layout the graph could not absorb"
        else:
            producer = graph.producer(src)
            where = f"after {producer.op if producer else src!r} before {', '.join(user_ops)}"
            blockers = [op for op in user_ops if op not in ("transpose",)]
            why = (f"{', '.join(blockers) or 'its consumers'} has no layout rule to absorb it "
                   f"(x2/ir/ops.py) and the producer is layout-sensitive")
        records.append({"node": node.name, "perm": node.attrs["perm"],
                        "source": node.source.get("name", ""), "where": where, "why": why})
    return records
