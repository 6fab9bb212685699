"""v1 TensorArrays (dynamic_rnn's) read as tensors, for v1_control.py,
which rebuilds the loops around them.

A TensorArray's flow value is read as the array's contents stacked on axis
0. An unstacked (scattered at 0, 1, ...) array is its value, so
TensorArrayReadV3 is a gather; one written at the loop's counter once per
iteration is a scan output of the loop, so the TensorArrayGatherV3 (stack)
after the loop is a gather from it and TensorArraySizeV3 its first dim. A
stack (a gather at range(0, n)) is read as all the elements written: x2
assumes the array's size is the loop's trip count, as in dynamic_rnn
(TensorFlow would give zeros for elements never written). Other TensorArray
uses are refused.

The functions take tf_v1_control's graph state `g` (its nodes, producer,
info, const and through_identity) and make nodes as changed copies of the
TensorArray nodes they replace."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...errors import ConversionError
from ...ir import TensorInfo
from ..common import SourceOp, SourceGraph

TENSOR_ARRAY_OPS = {"TensorArrayV3", "TensorArrayScatterV3", "TensorArrayReadV3",
                    "TensorArrayWriteV3", "TensorArrayGatherV3", "TensorArraySizeV3"}
UNCONVERTED = ("in a way x2 does not convert (it converts unstack + read, and write at a "
               "loop's counter + stack)")


def refuse(node, why: str) -> ConversionError:
    """The error for a v1 node x2 cannot convert (tf_v1_control's too)."""
    return ConversionError(f"{node.type} node '{node.name}' {why}",
                           details={"node": node.name, "op": node.type})


def rewrite(g) -> list:
    """g's nodes with the scatters gone (their flow is the scattered value)
    and reads, stacks and sizes as gathers and shapes of the flow."""
    alias: dict[str, str] = {}
    kept = []
    for n in g.nodes:
        if n.type == "TensorArrayScatterV3":
            _handle, indices, value, _flow = n.inputs
            if not _counting(g, indices):
                raise refuse(n, "scatters at indices other than range(0, n) (unstack); "
                                "x2 converts only unstacked TensorArrays")
            alias[n.outputs[0]] = value
            continue
        kept.append(n)
    for n in kept:
        n.inputs = [alias.get(v, v) for v in n.inputs]
    out = []
    for n in kept:
        if n.type == "TensorArrayGatherV3" and _counting(g, n.inputs[1]):
            # stack(): gather(range(0, size)), every element the array holds.
            out.append(replace(n, type="Identity", inputs=[n.inputs[2]], attrs={}))
        elif n.type in ("TensorArrayReadV3", "TensorArrayGatherV3"):
            _handle, index, flow = n.inputs
            # The contents (flow) gathered at the index; attrs of the v3 op don't apply.
            out.append(replace(n, type="GatherV2", inputs=[flow, index], attrs={}))
        elif n.type == "TensorArraySizeV3":
            shape = f"{n.name}/x2_shape"
            zero = f"{n.name}/x2_first"
            g.info[shape] = TensorInfo("int32", (None,))
            g.info[zero] = TensorInfo("int32", ())
            out += [replace(n, type="Shape", name=shape, inputs=[n.inputs[1]], outputs=[shape],
                            attrs={"out_type": "int32"}),
                    replace(n, type="Const", name=zero, inputs=[], outputs=[zero], attrs={},
                            const_value=np.array(0, np.int32)),
                    replace(n, type="GatherV2", inputs=[shape, zero], attrs={})]
        else:
            out.append(n)
    return out


def scan_value(g, loop: str, writer, body_in: str, carried: list) -> str:
    """The value a TensorArrayWriteV3 writes, checked to be written at the
    loop's counter (a variable from 0 stepping by 1) into the array the
    loop carries. `carried`: the loop's (init, cond input, body input, body
    output, exit) values."""
    _handle, index, value, flow = writer.inputs
    if g.through_identity(flow) != body_in:
        raise refuse(writer, f"writes a TensorArray that while loop '{loop}' does not "
                             f"carry; x2 converts one write per iteration")
    index = g.through_identity(index)
    for init, _cond_in, inside, nxt, _exit in carried:
        step = g.producer.get(nxt)
        if inside == index and _is(g.const(init), 0) and step is not None and \
                step.type in ("Add", "AddV2") and \
                sorted([g.through_identity(v) == index for v in step.inputs]) == \
                [False, True] and any(_is(g.const(v), 1) for v in step.inputs):
            return value
    raise refuse(writer, f"writes a TensorArray at an index that is not while loop "
                         f"'{loop}''s counter (0, 1, 2, ...); x2 converts such a write "
                         f"as the loop's scan output only")


def handles(nodes: list):
    """(names of the TensorArrayV3 nodes and the Enters of their handles, a
    test of whether a value is one of their outputs): they carry no data once
    reads and writes are rewritten."""
    arrays = {n.name for n in nodes if n.type == "TensorArrayV3"}
    values = {v for n in nodes if n.name in arrays for v in n.outputs}
    enters = {n.name for n in nodes if n.type == "Enter" and n.inputs[0] in values
              and ":" not in n.inputs[0].rsplit("/", 1)[-1]}
    return arrays | enters, lambda value: value in values or value.split(":")[0] in enters


def refuse_handle_reads(ops: list[SourceOp], is_handle) -> None:
    """Anything still reading a handle after the rewrite is a use x2 does not convert."""
    for op, value in _all_inputs(ops):
        if is_handle(value):
            raise ConversionError(f"{op.type} node '{op.name}' reads a TensorArray {UNCONVERTED}",
                                  details={"node": op.name, "op": op.type})


def for_shape_inference(tf, copy) -> None:
    """Rewrites a GraphDef `copy` for TF's shape inference as rewrite() reads
    it: an unstacked TensorArray's flow is its contents, a read a gather."""
    from tensorflow.core.framework import node_def_pb2
    axis = node_def_pb2.NodeDef(name="x2_shape_axis0", op="Const")
    axis.attr["dtype"].type = tf.int32.as_datatype_enum
    axis.attr["value"].tensor.CopyFrom(tf.make_tensor_proto(0, tf.int32))
    copy.node.append(axis)
    for node in copy.node:
        data = [i for i in node.input if not i.startswith("^")]
        if node.op == "TensorArrayScatterV3":
            type_attr = node.attr["T"].type
            node.op = "Identity"
            del node.input[:]
            node.input.append(data[2])
            node.ClearField("attr")
            node.attr["T"].type = type_attr
        elif node.op == "TensorArrayReadV3":
            dtype = node.attr["dtype"].type
            node.op = "GatherV2"
            del node.input[:]
            node.input.extend([data[2], data[1], axis.name])
            node.ClearField("attr")
            node.attr["Tparams"].type = dtype
            node.attr["Tindices"].type = tf.int32.as_datatype_enum
            node.attr["Taxis"].type = tf.int32.as_datatype_enum


def _counting(g, indices: str) -> bool:
    """Whether `indices` is range(0, n)."""
    r = g.producer.get(indices)
    return r is not None and r.type == "Range" and _is(g.const(r.inputs[0]), 0) and \
        _is(g.const(r.inputs[2]), 1)


def _is(array, number) -> bool:
    return array is not None and np.size(array) == 1 and float(np.asarray(array).ravel()[0]) \
        == number


def _all_inputs(ops: list[SourceOp]):
    for op in ops:
        for v in op.inputs:
            yield op, v
        for attr in op.attrs.values():
            if isinstance(attr, SourceGraph):
                yield from _all_inputs(attr.ops)
