"""ONNX frontend: a .onnx file (with external data) -> SourceGraph.
Runs in a worker that imports onnx only. Shapes missing from the file are
filled in by onnx shape inference; mappers are chosen by the model's opset.

A model file is untrusted input: external data is read only from files inside
the model's folder (onnx.checker's rules), every tensor's data is checked
against its declared shape before it is used, and the graph is validated by
onnx shape inference (strict) so an invalid model is refused with the node
named instead of converting into a model that fails when run."""
from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np

from ...contracts import ReadRequest
from ...errors import ModelLoadError, X2Error
from ...ir import TensorInfo
from ..common import SourceGraph, SourceOp, one_line
from .scopes import hoist_shared, read_scopes, weight_claims

MIN_OPSET = 7
# External initializers up to this many elements are read for shape inference
# (shape tensors of Reshape/Expand...); bigger ones are only declared.
_INFER_DATA_ELEMENTS = 1 << 16


def _np_dtype(elem_type: int) -> np.dtype:
    from onnx import TensorProto, helper
    if elem_type in (TensorProto.UNDEFINED, TensorProto.STRING):
        raise ValueError(f"element type {TensorProto.DataType.Name(elem_type)}")
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"element type {elem_type}") from None
    if dtype.kind not in "biuf" or dtype.type not in _IR_TYPES:
        # bfloat16, float8, int4 (ml_dtypes types): not in x2's IR
        raise ValueError(f"element type {TensorProto.DataType.Name(elem_type)}")
    return dtype


_IR_TYPES = {np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
             np.uint64, np.float16, np.float32, np.float64}


def _dtype(elem_type: int) -> str:
    return str(_np_dtype(elem_type))


def _shape(type_proto):
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
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
                             f"{one_line(exc) if str(exc) else type(exc).__name__}") from exc
    if not model.graph.node and not model.graph.output:
        raise ModelLoadError(f"{path}: not an ONNX model (no graph found in the file)")
    return model


# -- tensors -------------------------------------------------------------------

def _external_file(tensor, base: Path, path: str, what: str) -> tuple[Path, dict]:
    """The file holding a tensor's external data, by onnx.checker's rules: a
    relative path without '..', that after resolving symbolic links is a
    regular file inside the model's folder. Nothing else is ever opened."""
    entries = {e.key: e.value for e in tensor.external_data}
    location = entries.get("location", "")
    refer = f"{path}: {what} refers to external data {location!r}"
    if not location:
        raise ModelLoadError(f"{path}: {what} is stored as external data but names no file "
                             f"(no 'location')")
    if "\0" in location:
        raise ModelLoadError(f"{refer}, which is not a valid file name")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or \
            re.match(r"^[A-Za-z]:", location):
        raise ModelLoadError(f"{refer}: an absolute path; external data must be a relative "
                             f"path inside the model's folder")
    if ".." in re.split(r"[\\/]", location):
        raise ModelLoadError(f"{refer}, which is outside the model's folder ('..'); external "
                             f"data must be inside the model's folder")
    root = Path(os.path.realpath(base))
    target = Path(os.path.realpath(base / location))
    if target == root or not target.is_relative_to(root):
        raise ModelLoadError(f"{refer}, which resolves (through a symbolic link) to a file "
                             f"outside the model's folder; external data must be inside it")
    if not target.is_file():
        raise ModelLoadError(f"{refer}, which does not exist in {base or '.'} "
                             f"(or is not a regular file)")
    return target, entries


def external_array(init, base: Path, path: str | None = None,
                   what: str | None = None) -> np.ndarray:
    """A read-only memory map of a tensor kept in an external data file:
    weights are not read into memory until a step touches them."""
    path = str(path if path is not None else base)
    what = what or f"initializer '{init.name}'"
    target, entries = _external_file(init, base, path, what)
    dtype, shape, count = _checked_layout(init, path, what)
    try:
        offset = int(entries.get("offset", 0))
        length = int(entries.get("length", count * dtype.itemsize))
    except ValueError:
        raise ModelLoadError(f"{path}: {what}: external data offset/length are not "
                             f"integers ({entries.get('offset')!r}, "
                             f"{entries.get('length')!r})") from None
    with open(target, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if offset < 0 or length != count * dtype.itemsize or offset + length > size:
            raise ModelLoadError(
                f"{path}: external data of {what} in {entries['location']!r} is truncated or "
                f"does not match its shape {list(shape)} ({dtype}): {length} bytes at offset "
                f"{offset} of a {size}-byte file, {count * dtype.itemsize} needed")
        if count == 0:
            return np.zeros(shape, dtype)
        return np.memmap(fh, dtype=dtype, mode="r", offset=offset, shape=shape)


def _checked_layout(tensor, path: str, what: str):
    from onnx import TensorProto
    if tensor.data_type == TensorProto.STRING:
        raise ModelLoadError(f"{path}: {what} is a string tensor; x2 converts numeric "
                             f"tensors only")
    try:
        dtype = _np_dtype(tensor.data_type)
    except ValueError as exc:
        raise ModelLoadError(f"{path}: {what} has an unsupported {exc}") from None
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise ModelLoadError(f"{path}: {what} has a negative dimension in its shape "
                             f"{list(shape)}")
    return dtype, shape, math.prod(shape)


_PACKED = {"int4": 2, "uint4": 2, "float4_e2m1fn": 2, "int2": 4, "uint2": 4}


def tensor_array(tensor, base: Path, path: str, what: str) -> np.ndarray:
    """The value of a TensorProto (initializer or tensor attribute), its data
    checked against its declared shape first: a short or missing buffer is an
    error naming the tensor, never a numpy reshape error or a huge allocation."""
    from onnx import TensorProto, helper, numpy_helper
    if tensor.HasField("segment"):
        raise ModelLoadError(f"{path}: {what} is stored in segments, which x2 does not read")
    if tensor.data_location == TensorProto.EXTERNAL:
        return external_array(tensor, base, path, what)
    dtype, shape, count = _checked_layout(tensor, path, what)
    per_byte = _PACKED.get(dtype.name)
    if tensor.HasField("raw_data"):
        have = len(tensor.raw_data)
        need = -(-count // per_byte) if per_byte else count * dtype.itemsize
        unit = "bytes"
    else:
        field = helper.tensor_dtype_to_field(tensor.data_type)
        have = len(getattr(tensor, field))
        need = None if per_byte else count * (2 if dtype.kind == "c" else 1)
        unit = "values"
    if need is not None and have != need:
        raise ModelLoadError(f"{path}: {what} declares shape {list(shape)} ({dtype}), which "
                             f"needs {need} {unit} of data, but it holds {have}")
    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:  # a malformed tensor numpy_helper cannot decode
        raise ModelLoadError(f"{path}: {what} cannot be decoded: {type(exc).__name__}: "
                             f"{one_line(exc)}") from None


# -- validation ----------------------------------------------------------------

def _check_initializer_inputs(graph, arrays: dict[str, np.ndarray], path: str) -> None:
    """An initializer that is also a graph input must match the input's declared type."""
    for vi in graph.input:
        if vi.name not in arrays or not vi.type.HasField("tensor_type"):
            continue
        array = arrays[vi.name]
        declared_type = vi.type.tensor_type.elem_type
        try:
            declared = _dtype(declared_type) if declared_type else None
        except ValueError:
            declared = f"element type {declared_type}"
        shape = _shape(vi.type)
        if (declared is not None and declared != str(array.dtype)) or (shape is not None and (
                len(shape) != array.ndim or any(d is not None and d != a
                                                for d, a in zip(shape, array.shape)))):
            want = list(shape) if shape is not None else "any shape"
            raise ModelLoadError(
                f"{path}: initializer '{vi.name}' is {array.dtype} {list(array.shape)}, but the "
                f"graph input of that name is declared {declared or 'any type'} {want}")


def _schema(node, opsets: dict[str, int]):
    from onnx import defs
    domain = node.domain if node.domain != "ai.onnx" else ""
    version = opsets.get(domain)
    if version is None:
        return None
    try:
        return defs.get_schema(node.op_type, version, domain)
    except Exception:  # no schema: a custom or unknown op (reported by the mapping step)
        return None


def _node_label(node, index: int) -> str:
    return f"node '{node.name or f'{node.op_type}_{index}'}' ({node.op_type})"


def _check_nodes(model, path: str, opsets: dict[str, int]) -> None:
    """onnx's type and shape inference, one node at a time, for the nodes
    whose op has a schema and whose inputs' types are known: finds the node
    a strict whole-graph inference stopped at, and checks the nodes around
    custom ops that whole-graph inference cannot pass."""
    from onnx import TypeProto, helper, shape_inference
    graph = model.graph
    types: dict[str, TypeProto] = {}
    data: dict = {}
    for init in graph.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
        if init.data_location != init.EXTERNAL and math.prod(init.dims) <= _INFER_DATA_ELEMENTS:
            data[init.name] = init
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types.setdefault(vi.name, vi.type)
    opset_imports = list(model.opset_import)
    for index, node in enumerate(graph.node):
        schema = _schema(node, opsets)
        inputs = [v for v in node.input if v]
        if schema is None or any(v not in types for v in inputs):
            continue
        if node.op_type == "Constant" and not node.domain:
            for attr in node.attribute:
                if attr.name == "value" and attr.t.data_location != attr.t.EXTERNAL and \
                        math.prod(attr.t.dims) <= _INFER_DATA_ELEMENTS:
                    data[node.output[0]] = attr.t
        try:
            out = shape_inference.infer_node_outputs(
                schema, node, {v: types[v] for v in inputs},
                {v: data[v] for v in inputs if v in data}, None, opset_imports,
                model.ir_version or 3)
        except shape_inference.InferenceError as exc:
            raise ModelLoadError(f"{path}: {_node_label(node, index)} is invalid: "
                                 f"{_strip_tags(str(exc))}") from None
        except Exception:  # the per-node API itself failed: whole-graph inference decides
            continue
        for name, value in out.items():
            if value.HasField("tensor_type") and value.tensor_type.elem_type:
                types.setdefault(name, value)


def _check_node_specs(model, path: str, opsets: dict[str, int]) -> None:
    """onnx.checker's node check (what onnxruntime applies when it loads a
    model): input and output counts, known attributes of the right types,
    required attributes. Nodes without a schema are the mapping step's to
    report; nodes with subgraphs or external tensors are left to inference."""
    from onnx import AttributeProto, checker
    ctx = checker.C.CheckerContext()
    ctx.ir_version = max(model.ir_version, 3)
    ctx.opset_imports = dict(opsets)
    skip = (AttributeProto.GRAPH, AttributeProto.GRAPHS)
    for index, node in enumerate(model.graph.node):
        if _schema(node, opsets) is None or any(
                a.type in skip or (a.type == AttributeProto.TENSOR
                                   and a.t.data_location == a.t.EXTERNAL)
                for a in node.attribute):
            continue
        try:
            checker.check_node(node, ctx)
        except checker.ValidationError as exc:
            detail = str(exc).split("==> Context:")[0]
            raise ModelLoadError(f"{path}: {_node_label(node, index)} is invalid: "
                                 f"{_strip_tags(detail)}") from None


def _strip_tags(text: str) -> str:
    return one_line(re.sub(r"\[\w+Error\]\s*", "", text).replace("Inference error(s):", ""))


def _inference_message(path: str, exc: Exception) -> str:
    text = str(exc)
    found = re.search(r"\(op_type:([^,]*), node name: ([^)]*)\):\s*(.*)", text)
    if found:
        op_type, name, detail = found.groups()
        node = f"node '{name}'" if name else "an unnamed node"
        more = len(re.findall(r"\(op_type:", text)) - 1
        return (f"{path}: {node} ({op_type}) is invalid: {_strip_tags(detail)}"
                + (f" (and {more} more error(s))" if more > 0 else ""))
    return f"{path}: the model is invalid (ONNX shape inference): {_strip_tags(text)}"


def _infer(model, path: str, opsets: dict[str, int], external: dict[str, np.ndarray]):
    """Strict onnx shape inference (with type checks and data propagation): an
    invalid model is refused with the node named. Whole-graph inference does
    not check past an op onnx does not know (a custom domain): in a graph
    with one, each node with a schema is also checked on its own."""
    from onnx import helper, numpy_helper, shape_inference
    graph = model.graph
    if external:
        # Inference cannot read external data: small tensors (shapes) are put
        # inline, big ones only declared (type and shape are all it needs).
        declared = {vi.name for vi in graph.input}
        keep = []
        for init in graph.initializer:
            if init.name not in external:
                keep.append(init)
            elif external[init.name].size <= _INFER_DATA_ELEMENTS:
                keep.append(numpy_helper.from_array(np.asarray(external[init.name]), init.name))
            elif init.name not in declared:
                graph.input.append(helper.make_tensor_value_info(
                    init.name, init.data_type, list(init.dims)))
        del graph.initializer[:]
        graph.initializer.extend(keep)
    # A node onnx has no schema for (a custom op) makes whole-graph inference
    # skip checks (strict mode passes a mismatched MatMul next to one).
    unknown = any(_schema(node, opsets) is None for node in graph.node)
    strict_error = None
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                                data_prop=True)
    except shape_inference.InferenceError as exc:
        strict_error = exc
        inferred = None
    except Exception:  # e.g. a model too big to serialize: shapes are a help
        inferred = None
    if inferred is None:
        try:
            inferred = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
        except Exception:
            inferred = model
    if strict_error is not None or unknown:
        _check_nodes(inferred, path, opsets)
    if strict_error is not None and not unknown:
        raise ModelLoadError(_inference_message(path, strict_error))
    return inferred


# -- reading -------------------------------------------------------------------

def _input_info(vi, path: str) -> TensorInfo:
    if not vi.type.HasField("tensor_type"):
        raise ModelLoadError(f"{path}: graph input '{vi.name}' is not a tensor (sequence, "
                             f"map and optional inputs are not supported)")
    try:
        dtype = _dtype(vi.type.tensor_type.elem_type)
    except ValueError as exc:
        raise ModelLoadError(f"{path}: graph input '{vi.name}' has an unsupported "
                             f"{exc}") from None
    return TensorInfo(dtype, _shape(vi.type))


def _dim_names(type_proto) -> list[str | None] | None:
    """The dim_param of each axis (None where it has none): the exporter's
    names for the dynamic axes ("batch", "sequence", "s0")."""
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    from ...ir.symbols import is_symbol
    return [d.dim_param if d.HasField("dim_param") and is_symbol(d.dim_param) else None
            for d in type_proto.tensor_type.shape.dim]


def _fix_input_shapes(model, input_shapes: dict[str, list] | None) -> None:
    """--input-shape written into the model's inputs, so shape inference runs
    through the whole graph with it (a None dim stays dynamic)."""
    for vi in model.graph.input:
        dims = (input_shapes or {}).get(vi.name)
        if dims is None or not vi.type.HasField("tensor_type"):
            continue
        shape = vi.type.tensor_type.shape
        if len(shape.dim) != len(dims):
            continue  # apply_input_shapes names the contradiction
        for dim, size in zip(shape.dim, dims):
            if size is not None and not (dim.HasField("dim_value") and dim.dim_value >= 0):
                dim.dim_value = int(size)  # a fixed dim it contradicts is named later


# Models older than MIN_OPSET are upgraded to this opset by onnx's own
# version converter (the adapters exist for every step from opset 1 to it).
UPGRADE_OPSET = 13


def _opsets(model) -> dict[str, int]:
    return {(e.domain if e.domain != "ai.onnx" else ""): e.version for e in model.opset_import}


def _upgrade(model, path: str, opset: int):
    from onnx import version_converter
    try:
        return version_converter.convert_version(model, UPGRADE_OPSET)
    except Exception as exc:  # noqa: BLE001 - the converter's errors are C++ strings
        raise ModelLoadError(f"{path}: opset {opset} is older than x2 reads ({MIN_OPSET}+) and "
                             f"onnx.version_converter could not upgrade it to "
                             f"{UPGRADE_OPSET}: {one_line(exc, 200)}") from None


def read_onnx(path: str, input_shapes: dict[str, list] | None = None) -> SourceGraph:
    import onnx
    from onnx import numpy_helper

    model = load_onnx(path)
    _fix_input_shapes(model, input_shapes)
    base = Path(path).parent
    opset = _opsets(model).get("")
    if opset is None:
        raise ModelLoadError(f"{path}: the model imports no default-domain opset")
    newest = onnx.defs.onnx_opset_version()
    if opset < MIN_OPSET:
        model = _upgrade(model, path, opset)
    opsets = _opsets(model)
    opset = opsets[""]
    if opset > newest:
        raise ModelLoadError(f"{path}: opset {opset} is newer than x2 reads (opsets "
                             f"{MIN_OPSET} to {newest}, those of the installed onnx "
                             f"{onnx.__version__})")

    # Every initializer is read (external ones memory-mapped) and checked
    # before inference, so inference never sees a tensor that lies.
    arrays: dict[str, np.ndarray] = {}
    external: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        if init.name in arrays:
            raise ModelLoadError(f"{path}: two initializers are named '{init.name}'")
        arrays[init.name] = tensor_array(init, base, path, f"initializer '{init.name}'")
        if init.data_location == init.EXTERNAL:
            external[init.name] = arrays[init.name]
    _check_initializer_inputs(model.graph, arrays, path)
    initializer_names = set(arrays)
    inputs = [i.name for i in model.graph.input if i.name not in initializer_names]
    input_info = {vi.name: _input_info(vi, path) for vi in model.graph.input
                  if vi.name not in initializer_names}

    # The graph's structure and every attribute (tensors checked like
    # initializers) before inference looks at it.
    produced = set(initializer_names) | set(inputs)
    node_attrs = []
    for index, node in enumerate(model.graph.node):
        name = node.name or f"{node.op_type}_{index}"
        label = f"node '{name}' ({node.op_type})"
        attrs = {a.name: _attr(a, base, path, label) for a in node.attribute
                 if a.type not in (a.GRAPH, a.GRAPHS)}
        node_attrs.append(attrs)
        for attribute in node.attribute:
            if attribute.type == attribute.TENSOR and \
                    attribute.t.data_location == attribute.t.EXTERNAL and \
                    attrs[attribute.name].size <= _INFER_DATA_ELEMENTS:
                # Inference cannot read external data: give it the (checked) values.
                attribute.t.CopyFrom(numpy_helper.from_array(
                    np.asarray(attrs[attribute.name]), attribute.t.name))
        for value in [*node.input, *_captures(node)]:
            if value and value not in produced:
                raise ModelLoadError(f"{path}: node '{name}' ({node.op_type}) reads '{value}', "
                                     f"which no node, input or initializer defines")
        for value in node.output:
            if value and value in produced:
                raise ModelLoadError(f"{path}: {label} writes '{value}', which is already "
                                     f"defined (every value must have one producer)")
        produced.update(o for o in node.output if o)
    outputs = [o.name for o in model.graph.output]
    for value in outputs:
        if value not in produced:
            raise ModelLoadError(f"{path}: graph output '{value}' is never computed")
    _check_node_specs(model, path, opsets)
    scopes = read_scopes(model)

    graph = _infer(model, path, opsets, external).graph
    info: dict[str, TensorInfo] = {}
    for vi in list(graph.value_info) + list(graph.output):
        if vi.type.HasField("tensor_type"):
            try:
                info[vi.name] = TensorInfo(_dtype(vi.type.tensor_type.elem_type),
                                           _shape(vi.type))
            except ValueError:
                pass  # an unusable declaration: the mappers see an unknown dtype
    info.update(input_info)
    ops: list[SourceOp] = []
    for name, array in arrays.items():
        info[name] = TensorInfo(str(array.dtype), tuple(array.shape))
        ops.append(SourceOp("Initializer", name, [], [name], {}, array, param=name))
    claims = _claimed_weights(model, scopes, arrays, ops, info)
    for index, (node, attrs) in enumerate(zip(graph.node, node_attrs)):
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        op_type = f"{domain}.{node.op_type}" if domain else node.op_type
        name = node.name or f"{node.op_type}_{index}"
        if node.op_type == "Constant" and not domain:
            ops.append(SourceOp("Constant", name, [], list(node.output), {},
                                _constant_value(attrs, path, f"node '{name}' (Constant)")))
            continue
        copied = _copied_weight(node, arrays, scopes, outputs)
        if copied is not None:
            info[copied.name] = info[node.input[0]]
            ops.append(copied)
            continue
        ops.append(_source_op(node, op_type, name, attrs, base, path, opset))
        if scopes is not None:
            ops[-1].scope = scopes.chains[index]
        for slot, key in claims.get(index, {}).items():
            ops[-1].inputs[slot] = key
    del onnx
    dims = {vi.name: _dim_names(vi.type) for vi in [*model.graph.input, *model.graph.output]
            if vi.name in inputs or vi.name in outputs}
    source = SourceGraph("onnx", ops, inputs, outputs, info, version=opset, path=str(path),
                         dims={k: v for k, v in dims.items() if v and any(v)})
    if scopes is not None:
        hoist_shared(ops)
        source.source_modules, source.source_class = scopes.modules, scopes.root_class
        source.source_state = {op.param: {"shape": _source_shape(op), "tied": op.param}
                               for op in ops if op.type == "Initializer"
                               and _state_key(op.param, scopes.modules)}
    return source


def _claimed_weights(model, scopes, arrays: dict, ops: list, info: dict) -> dict:
    """Initializers torch.onnx renamed or shared, as the source's weights
    they hold (scopes.weight_claims): one constant per key, which the
    claiming node reads. Returns node index -> {input slot: key}."""
    if scopes is None:
        return {}
    keys = {name for name in arrays if _state_key(name, scopes.modules)}
    shapes = {name: tuple(array.shape) for name, array in arrays.items()}
    out: dict[int, dict] = {}
    for claim in weight_claims(model, scopes, shapes, keys):
        value = model.graph.node[claim.node].input[claim.slot]
        array = arrays[value]
        info[claim.key] = info[value]
        ops.append(SourceOp("Initializer", claim.key, [], [claim.key], {}, array,
                            param=claim.key, param_perm=claim.perm))
        out.setdefault(claim.node, {})[claim.slot] = claim.key
    return out


def _source_shape(op: SourceOp) -> list:
    """The shape of the source's weight an initializer holds (transposed by
    its param_perm)."""
    shape = list(op.const_value.shape)
    if op.param_perm is None:
        return shape
    out = [0] * len(shape)
    for axis, source_axis in enumerate(op.param_perm):
        out[source_axis] = shape[axis]
    return out


def _state_key(name: str, modules: dict) -> bool:
    """Whether an initializer's name is a state_dict key of the source: a
    parameter or buffer name under one of its modules (not torch.onnx's own
    `onnx::MatMul_12`, `val_3`)."""
    owner, _, leaf = name.rpartition(".")
    return owner in modules and leaf.isidentifier()


def _copied_weight(node, arrays: dict, scopes, outputs: list) -> SourceOp | None:
    """The TorchScript exporter keeps one initializer of weights with equal
    values (two RMSNorm weights of ones) and copies it to the others' keys
    with an Identity: such a copy is the source's weight at its own key."""
    if scopes is None or node.op_type != "Identity" or node.domain not in ("", "ai.onnx") or \
            len(node.input) != 1 or node.input[0] not in arrays or \
            node.output[0] in outputs or not _state_key(node.output[0], scopes.modules):
        return None
    key = node.output[0]
    return SourceOp("Initializer", key, [], [key], {}, arrays[node.input[0]], param=key)


# -- subgraphs (If, Loop, Scan) --------------------------------------------------

def _graph_attributes(node) -> list:
    from onnx import AttributeProto
    out = []
    for attribute in node.attribute:
        if attribute.type == AttributeProto.GRAPHS:
            raise ModelLoadError(f"node '{node.name}' ({node.op_type}): attribute "
                                 f"'{attribute.name}' holds a list of graphs, which x2 does "
                                 f"not read")
        if attribute.type == AttributeProto.GRAPH:
            out.append(attribute)
    return out


def _captures(node) -> list[str]:
    """The outer values the subgraphs of `node` read by name, in first-use order."""
    seen: dict[str, None] = {}
    for attribute in _graph_attributes(node):
        for value in _free_values(attribute.g):
            seen.setdefault(value, None)
    return [v for v in seen if v not in node.input]


def _free_values(graph) -> list[str]:
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer} | {""}
    free: dict[str, None] = {}
    for node in graph.node:
        for value in [*node.input, *_captures(node)]:
            if value not in defined:
                free.setdefault(value, None)
        defined.update(node.output)
    for vi in graph.output:
        if vi.name not in defined:
            free.setdefault(vi.name, None)
    return list(free)


def _source_op(node, op_type: str, name: str, attrs: dict, base: Path, path: str,
               opset: int) -> SourceOp:
    """A node as a SourceOp; a subgraph attribute becomes a SourceGraph and
    the values it captures follow the node's own inputs."""
    graphs = _graph_attributes(node)
    if not graphs:
        return SourceOp(op_type, name, list(node.input), list(node.output), attrs)
    for attribute in graphs:
        attrs[attribute.name] = _read_subgraph(attribute.g, base, path, opset,
                                               f"node '{name}' ({node.op_type}) attribute "
                                               f"'{attribute.name}'")
    captures = _captures(node)
    attrs["x2_captures"] = captures
    return SourceOp(op_type, name, [*node.input, *captures], list(node.output), attrs)


def _read_subgraph(graph, base: Path, path: str, opset: int, where: str) -> SourceGraph:
    """A subgraph as a SourceGraph, its tensors checked like the model's."""
    info: dict[str, TensorInfo] = {}
    for vi in list(graph.value_info) + list(graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            try:
                info[vi.name] = TensorInfo(_dtype(vi.type.tensor_type.elem_type),
                                           _shape(vi.type))
            except ValueError:
                pass
    inputs = []
    for vi in graph.input:
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.elem_type:
            raise ModelLoadError(f"{path}: {where}: subgraph input '{vi.name}' is not a typed "
                                 f"tensor (sequence and optional values are not supported)")
        info[vi.name] = _input_info(vi, path)
        inputs.append(vi.name)
    ops: list[SourceOp] = []
    for init in graph.initializer:
        array = tensor_array(init, base, path, f"{where}: initializer '{init.name}'")
        info[init.name] = TensorInfo(str(array.dtype), tuple(array.shape))
        ops.append(SourceOp("Initializer", init.name, [], [init.name], {}, array))
    for index, node in enumerate(graph.node):
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        op_type = f"{domain}.{node.op_type}" if domain else node.op_type
        name = node.name or f"{node.op_type}_{index}"
        label = f"{where}: node '{name}' ({node.op_type})"
        attrs = {a.name: _attr(a, base, path, label) for a in node.attribute
                 if a.type not in (a.GRAPH, a.GRAPHS)}
        if node.op_type == "Constant" and not domain:
            ops.append(SourceOp("Constant", name, [], list(node.output), {},
                                _constant_value(attrs, path, label)))
            continue
        ops.append(_source_op(node, op_type, name, attrs, base, path, opset))
    return SourceGraph("onnx", ops, inputs, [vi.name for vi in graph.output], info,
                       version=opset, path=path, captures=_free_values(graph))


def _constant_value(attrs: dict, path: str = "", label: str = "Constant node") -> np.ndarray:
    for key in ("value", "value_float", "value_int", "value_floats", "value_ints"):
        if key in attrs:
            value = attrs[key]
            if key in ("value_float", "value_floats"):
                return np.array(value, np.float32)
            if key in ("value_int", "value_ints"):
                return np.array(value, np.int64)
            if not isinstance(value, np.ndarray):
                break
            return value
    where = f"{path}: " if path else ""
    raise ModelLoadError(f"{where}{label}: unsupported Constant attribute(s) {sorted(attrs)} "
                         f"(value, value_float(s) and value_int(s) are supported)")


def _attr(attribute, base: Path | None = None, path: str = "", label: str = "a node"):
    from onnx import helper
    where = f"{path}: {label}: attribute '{attribute.name}'"
    if attribute.type == attribute.TENSOR:
        return tensor_array(attribute.t, base if base is not None else Path("."), path,
                            f"{label}: attribute '{attribute.name}'")
    try:
        value = helper.get_attribute_value(attribute)
    except Exception as exc:
        raise ModelLoadError(f"{where} cannot be read: {one_line(exc)}") from None
    try:
        if isinstance(value, bytes):
            return value.decode("utf-8")
        if isinstance(value, list):
            return [v.decode("utf-8") if isinstance(v, bytes) else v for v in value]
    except UnicodeDecodeError:
        raise ModelLoadError(f"{where} is not valid UTF-8 text") from None
    return value


def evaluate_onnx_node(op: SourceOp, arrays: list, opset: int) -> list[np.ndarray] | None:
    """Run one default-domain node with onnx.reference, ONNX's own semantics
    (source-graph constant folding, x2/frontends/source_fold.py)."""
    if "." in op.type:
        return None
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(arrays)]
    outs = [f"out{i}" if o else "" for i, o in enumerate(op.outputs)]
    attrs = {k: numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v
             for k, v in op.attrs.items()}
    node = helper.make_node(op.type, names, outs, **attrs)
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in zip(names, arrays) if n]
    graph = helper.make_graph([node], "fold", inputs,
                              [helper.make_empty_tensor_value_info(o) for o in outs if o])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    results = ReferenceEvaluator(model).run(None, {n: a for n, a in zip(names, arrays) if n})
    return [np.asarray(r) for r in results]


def read_ir(request: ReadRequest):
    """(IR graph, source record): the model read, given its --input-shape,
    pruned to --inputs/--outputs and mapped."""
    from ...registry import ONNX
    from ..common import apply_input_shapes, fix_input_values, map_graph, select_subgraph
    try:
        source = read_onnx(request.model, request.input_shapes)
    except (X2Error, OSError):
        raise
    except Exception as exc:  # a malformed file the reader did not anticipate: name it
        raise ModelLoadError(f"{request.model}: cannot read the model "
                             f"({type(exc).__name__}: {one_line(exc, 200)})") from exc
    apply_input_shapes(source, request.input_shapes)
    fix_input_values(source, request.options.input_values)
    source = select_subgraph(source, request.inputs, request.outputs)
    graph = map_graph(source, ONNX,
                      lambda op, arrays: evaluate_onnx_node(op, arrays, source.version))
    # an ONNX file from torch: its modules and state_dict keys name the
    # converted model's classes and weights, as a torch source's do
    graph.meta.source_modules = dict(source.source_modules)
    graph.meta.source_state = dict(source.source_state)
    graph.meta.source_class = source.source_class
    graph.meta.source_model = request.model
    graph.meta.opset = source.version
    # x2 check feeds the fixed inputs to the source model
    fixed = request.options.input_values
    return graph, ({"options": {"input_values": fixed}} if fixed else {})


def run_onnx_source(path: str, names: list[str], inputs: list[np.ndarray],
                    fixed: dict | None = None) -> list[np.ndarray]:
    """Run the source .onnx in onnxruntime (the parity reference); `fixed`:
    the --input-value inputs, in their declared dtype."""
    import onnxruntime as ort
    feed = dict(zip(names, inputs))
    try:
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - a type or op onnxruntime has no CPU kernel for
        return _reference_run(path, feed, fixed, exc)
    for i in session.get_inputs():
        if i.name in (fixed or {}):
            dtype = ort_dtype(i.type)
            feed[i.name] = np.array(fixed[i.name], dtype=dtype)
    return session.run(None, feed)


def _reference_run(path: str, feed: dict, fixed: dict | None, ort_error: Exception
                   ) -> list[np.ndarray]:
    """The model run by ONNX's own reference evaluator, where onnxruntime has
    no kernel for it (a uint16 Add): the standard's semantics, slowly."""
    import onnx
    from onnx.reference import ReferenceEvaluator
    model = onnx.load(path)
    for i in model.graph.input:
        if i.name in (fixed or {}):
            dtype = onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
            feed[i.name] = np.array(fixed[i.name], dtype=dtype)
    try:
        return list(ReferenceEvaluator(model).run(None, feed))
    except Exception:  # noqa: BLE001 - neither can run it: onnxruntime's reason is the clearer
        raise ort_error from None


def ort_dtype(type_name: str) -> str:
    """numpy's name for an onnxruntime type string ("tensor(int64)")."""
    name = type_name.removeprefix("tensor(").removesuffix(")")
    return {"float": "float32", "double": "float64", "float16": "float16"}.get(name, name)
