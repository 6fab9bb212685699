"""ONNX frontend: a .onnx file (with external data) -> SourceGraph.
Runs in a worker that imports onnx only. Shapes missing from the file are
filled in by onnx shape inference; mappers are chosen by the model's opset."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ModelLoadError
from ..ir import TensorInfo
from .common import SourceGraph, SourceOp

MIN_OPSET = 7


def _dtype(elem_type: int) -> str:
    from onnx import helper
    return str(np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)))


def _shape(type_proto):
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else None
                 for d in type_proto.tensor_type.shape.dim)


def load_onnx(path: str):
    import onnx
    from google.protobuf.message import DecodeError

    p = Path(path)
    if not p.exists():
        raise ModelLoadError(f"{path}: no such file")
    if p.is_dir():
        raise ModelLoadError(f"{path}: is a directory; --from onnx expects a .onnx file")
    try:
        model = onnx.load(str(p), load_external_data=False)
    except (DecodeError, ValueError, RuntimeError, OSError) as exc:
        raise ModelLoadError(f"{path}: not a readable ONNX model (truncated or not ONNX): "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                             ) from exc
    if not model.graph.node and not model.graph.output:
        raise ModelLoadError(f"{path}: not an ONNX model (no graph found in the file)")
    return model


def external_array(init, base: Path) -> np.ndarray:
    """A read-only memory map of an initializer kept in an external data file:
    weights are not read into memory until a step touches them."""
    from onnx import helper
    entries = {e.key: e.value for e in init.external_data}
    location = base / entries.get("location", "")
    if not entries.get("location") or not location.is_file():
        raise ModelLoadError(f"{base}: initializer '{init.name}' refers to external data "
                             f"'{entries.get('location')}', which does not exist")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(init.data_type))
    shape = tuple(init.dims)
    offset = int(entries.get("offset", 0))
    count = int(np.prod(shape, dtype=np.int64))
    length = int(entries.get("length", count * dtype.itemsize))
    if length != count * dtype.itemsize or offset + length > location.stat().st_size:
        raise ModelLoadError(f"{location}: external data for '{init.name}' is truncated or "
                             f"does not match its shape {list(shape)} ({dtype})")
    if count == 0:
        return np.zeros(shape, dtype)
    return np.memmap(location, dtype=dtype, mode="r", offset=offset, shape=shape)


def read_onnx(path: str) -> SourceGraph:
    import onnx
    from onnx import numpy_helper, shape_inference

    model = load_onnx(path)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise ModelLoadError(f"{path}: the model imports no default-domain opset")
    if opset < MIN_OPSET:
        raise ModelLoadError(f"{path}: opset {opset} is older than x2 supports "
                             f"({MIN_OPSET}+); upgrade it with onnx.version_converter")
    try:
        # data_prop follows shape values through Shape -> Gather -> Concat -> Reshape.
        inferred = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception:  # shapes are a help, not a requirement
        inferred = model
    graph = inferred.graph
    info: dict[str, TensorInfo] = {}
    for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
        if vi.type.HasField("tensor_type"):
            info[vi.name] = TensorInfo(_dtype(vi.type.tensor_type.elem_type), _shape(vi.type))
    ops: list[SourceOp] = []
    initializer_names = set()
    for init in graph.initializer:
        if init.data_location == init.EXTERNAL:
            array = external_array(init, Path(path).parent)
        else:
            array = numpy_helper.to_array(init)
        initializer_names.add(init.name)
        info[init.name] = TensorInfo(str(array.dtype), tuple(array.shape))
        ops.append(SourceOp("Initializer", init.name, [], [init.name], {}, array))
    produced = set(initializer_names) | {i.name for i in graph.input}
    for index, node in enumerate(graph.node):
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        op_type = f"{domain}.{node.op_type}" if domain else node.op_type
        attrs = {a.name: _attr(a) for a in node.attribute}
        name = node.name or f"{node.op_type}_{index}"
        for value in node.input:
            if value and value not in produced:
                raise ModelLoadError(f"{path}: node '{name}' ({node.op_type}) reads '{value}', "
                                     f"which no node, input or initializer defines")
        produced.update(o for o in node.output if o)
        if node.op_type == "Constant" and not domain:
            ops.append(SourceOp("Constant", name, [], list(node.output), {},
                                _constant_value(attrs)))
            continue
        ops.append(SourceOp(op_type, name, list(node.input), list(node.output), attrs))
    inputs = [i.name for i in graph.input if i.name not in initializer_names]
    outputs = [o.name for o in graph.output]
    for value in outputs:
        if value not in produced:
            raise ModelLoadError(f"{path}: graph output '{value}' is never computed")
    del onnx
    return SourceGraph("onnx", ops, inputs, outputs, info, version=opset)


def _constant_value(attrs: dict) -> np.ndarray:
    for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
        if key in attrs:
            value = attrs[key]
            if key == "value_float":
                return np.array(value, np.float32)
            if key == "value_floats":
                return np.array(value, np.float32)
            if key in ("value_int", "value_ints"):
                return np.array(value, np.int64)
            return value
    raise ModelLoadError(f"Constant node with unsupported attribute(s) {sorted(attrs)}")


def _attr(attribute):
    from onnx import helper, numpy_helper
    value = helper.get_attribute_value(attribute)
    if attribute.type == attribute.TENSOR:
        return numpy_helper.to_array(value)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [v.decode() if isinstance(v, bytes) else v for v in value]
    return value


def run_onnx_source(path: str, names: list[str], inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run the source .onnx in onnxruntime (the parity reference)."""
    import onnxruntime as ort
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip(names, inputs)))
