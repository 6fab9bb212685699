"""ONNX emitter: IR graph -> DIR/model.onnx (+ DIR/model.onnx.data when the
weights exceed EXTERNAL_ABOVE). Runs in a worker that imports onnx.

Weights above that size are streamed from the IR's memory-mapped weights into
the external data file and referenced by offset, so they are never held in
memory twice (a protobuf holding them is: its tensors, then its serialized
bytes, then again in every reader: the checker, onnxruntime)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..contracts import EmitRequest
from ..errors import ConversionError, X2Error
from ..ir import Graph
from ..ir.serialize import copy_file_range_of
from ..passes.attention_masks import attention_masks_once
from ..ir.symbols import value_dims
from .onnx_ops import ONNX_OPS

DEFAULT_OPSET = 17
MIN_OPSET = 13
EXTERNAL_DATA = "model.onnx.data"
# Weights over this go to model.onnx.data: the size over which convert keeps
# every step's memory to one copy of the weights (x2/check/verify.py
# LARGE_WEIGHTS), well below protobuf's 2 GiB limit.
EXTERNAL_ABOVE = 512 << 20


class OnnxContext:
    def __init__(self, graph: Graph, opset: int):
        from onnx import helper
        self.helper = helper
        self.graph = graph
        self.opset = opset
        self.nodes: list = []
        self.extra: dict[str, np.ndarray] = {}
        self.unwritten: set[str] = set()   # IR constants the model reads another way
        self._const_cache: dict = {}
        self._names = set(graph.info) | set(graph.constants)
        self._counter = 0
        self._node_names: set[str] = set()
        self.current = None
        self.ops = ONNX_OPS  # the op table, for subgraphs (x2/emitters/onnx_control.py)

    def fresh(self, node, hint: str) -> str:
        while True:
            self._counter += 1
            name = f"{node.name}/{hint}_{self._counter}"
            if name not in self._names:
                self._names.add(name)
                return name

    def node(self, op_type: str, inputs: list[str], outputs: list[str], **attrs) -> str:
        src = self.current.source if self.current is not None else {}
        doc = f"{src.get('op')} {src.get('name')}" if src.get("name") else ""
        self.nodes.append(self.helper.make_node(
            op_type, list(inputs), list(outputs), name=self._node_name(op_type), doc_string=doc,
            **attrs))
        return outputs[0]

    def _node_name(self, op_type: str) -> str:
        """Unique: one IR node may become several ONNX nodes of the same type."""
        return self.unique_node_name(
            f"{self.current.name}/{op_type}" if self.current is not None else op_type)

    def unique_node_name(self, base: str) -> str:
        name, n = base, 0
        while name in self._node_names:
            n += 1
            name = f"{base}_{n}"
        self._node_names.add(name)
        return name

    def const(self, array: np.ndarray, hint: str = "const") -> str:
        array = np.asarray(array)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._const_cache:
            name = self.fresh(self.current, hint) if self.current is not None else hint
            self.extra[name] = array
            self._const_cache[key] = name
        return self._const_cache[key]

    def ints(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64), "ints")

    def scalar(self, value, dtype: str) -> str:
        return self.const(np.asarray(value, dtype=dtype), "scalar")

    def dtype(self, value: str) -> str:
        dtype = self.graph.dtype(value)
        if dtype is None:
            raise ConversionError(f"the ONNX emitter needs the dtype of '{value}'")
        return dtype

    def onnx_dtype(self, dtype: str) -> int:
        from onnx import helper
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def unsupported(self, node, why: str) -> ConversionError:
        return ConversionError(f"the ONNX emitter cannot write {node.op} node '{node.name}': {why}")


def _value_info(helper, graph: Graph, name: str):
    info = graph.info.get(name)
    if info is None:
        return helper.make_empty_tensor_value_info(name)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(info.dtype))
    if info.shape is None:
        return helper.make_tensor_value_info(name, elem, None)
    # An output's dynamic dims keep the source's names; x2 does not carry
    # symbols through the graph, so an unnamed one is left unnamed.
    symbols = value_dims(graph, name, unnamed=name in graph.inputs)
    dims = [d if d is not None else symbol for d, symbol in zip(info.shape, symbols)]
    return helper.make_tensor_value_info(name, elem, dims)


def build_model(graph: Graph, opset: int, out_dir: Path | None = None,
                external: bool | None = None):
    """Build the ModelProto. Weights go to out_dir/EXTERNAL_DATA when
    `external` (default: when they would not fit in one protobuf)."""
    from onnx import TensorProto, helper, numpy_helper

    from ..ir.control_flow import walk_graphs
    for each in walk_graphs(graph):
        ONNX_OPS.check(each)
    e = OnnxContext(graph, opset)
    for node in graph.nodes:
        e.current = node
        ONNX_OPS[node.op](e, node)
    e.current = None

    tensors = {k: v for k, v in {**graph.constants, **e.extra}.items() if k not in e.unwritten}
    total = sum(int(a.nbytes) for a in tensors.values())
    if external is None:
        external = total > EXTERNAL_ABOVE
    initializers = []
    data_file = None
    offset = 0
    if external:
        data_file = open(out_dir / EXTERNAL_DATA, "wb")
    try:
        for name, array in tensors.items():
            if data_file is None or array.nbytes < 1024:
                initializers.append(numpy_helper.from_array(np.asarray(array), name))
                continue
            pad = (-offset) % 4096
            data_file.write(b"\0" * pad)
            offset += pad
            if not copy_file_range_of(array, data_file):
                contiguous = np.ascontiguousarray(array)
                data_file.write(memoryview(contiguous.reshape(-1).view(np.uint8)))
            tensor = TensorProto()
            tensor.name = name
            tensor.data_type = helper.np_dtype_to_tensor_dtype(array.dtype)
            tensor.dims.extend(array.shape)
            tensor.data_location = TensorProto.EXTERNAL
            for key, value in (("location", EXTERNAL_DATA), ("offset", str(offset)),
                               ("length", str(array.nbytes))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
            initializers.append(tensor)
            offset += array.nbytes
    finally:
        if data_file is not None:
            data_file.close()

    onnx_graph = helper.make_graph(
        e.nodes, "x2_model",
        inputs=[_value_info(helper, graph, v) for v in graph.inputs],
        outputs=[_value_info(helper, graph, v) for v in graph.outputs],
        initializer=initializers)
    model = helper.make_model(onnx_graph, producer_name="x2", producer_version="0.1.0",
                              opset_imports=[helper.make_opsetid("", opset)])
    # The oldest IR version that carries this opset: runtimes lag behind onnx's newest.
    model.ir_version = helper.find_min_ir_version_for(list(model.opset_import))
    return model, bool(external)


def emit(graph: Graph, request: EmitRequest) -> dict:
    graph = attention_masks_once(graph)  # (softmax makes an unseen row NaN)
    import onnx

    opset = request.options.opset or DEFAULT_OPSET
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise X2Error(f"--opset {opset}: x2 writes ONNX opsets {MIN_OPSET} to {newest}")
    out = Path(request.out)
    model, external = build_model(graph, opset, out)
    details = {}
    if request.options.precision == "bf16":
        from .onnx_precision import fit_bf16
        details["onnx_ops_in_fp32"] = fit_bf16(model, opset)
        details["onnx_ops_in_fp32_why"] = f"their schema takes no bfloat16 at opset {opset}"
    path = out / "model.onnx"
    onnx.save_model(model, str(path))
    del model
    # full_check runs ONNX shape inference too; by path so external data works.
    onnx.checker.check_model(str(path), full_check=True)
    files = ["model.onnx"] + ([EXTERNAL_DATA] if external else [])
    return {"files": files, "opset": opset, "external_data": external,
            **({"precision": details} if details else {})}
