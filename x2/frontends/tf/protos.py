"""The parts of TensorFlow's protobuf schema that a SavedModel reader needs,
declared here so reading does not import TensorFlow (2-3 s, and order-
sensitive with paddle).

Only the fields x2 reads are declared; protobuf skips the others. Field
numbers are those of TensorFlow's .proto files (the wire format), which have
been stable since TF 1.x. Parsing runs in protobuf's C implementation.

    from x2.frontends.tf.protos import messages
    saved_model = messages().SavedModel.FromString(data)
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

# message -> [(field name, number, type, label)]; type is a scalar type name,
# "map<key,Value>", or another message's name. label: "" optional, "*" repeated.
_SCHEMA: dict[str, list[tuple]] = {
    "SavedModel": [("saved_model_schema_version", 1, "int64"),
                   ("meta_graphs", 2, "MetaGraphDef", "*")],
    "MetaGraphDef": [("meta_info_def", 1, "MetaInfoDef"), ("graph_def", 2, "GraphDef"),
                     ("signature_def", 5, "map<string,SignatureDef>"),
                     ("object_graph_def", 7, "SavedObjectGraph")],
    "MetaInfoDef": [("tags", 4, "string", "*")],
    "SignatureDef": [("inputs", 1, "map<string,TensorInfo>"),
                     ("outputs", 2, "map<string,TensorInfo>"), ("method_name", 3, "string")],
    "TensorInfo": [("name", 1, "string"), ("dtype", 2, "enum"),
                   ("tensor_shape", 3, "TensorShapeProto")],
    "GraphDef": [("node", 1, "NodeDef", "*"), ("library", 2, "FunctionDefLibrary")],
    "FunctionDefLibrary": [("function", 1, "FunctionDef", "*")],
    "FunctionDef": [("signature", 1, "OpDef"), ("node_def", 3, "NodeDef", "*"),
                    ("ret", 4, "map<string,string>"), ("attr", 5, "map<string,AttrValue>"),
                    ("arg_attr", 7, "map<uint32,ArgAttrs>")],
    "ArgAttrs": [("attr", 1, "map<string,AttrValue>")],
    "OpDef": [("name", 1, "string"), ("input_arg", 2, "ArgDef", "*"),
              ("output_arg", 3, "ArgDef", "*")],
    "ArgDef": [("name", 1, "string"), ("type", 3, "enum"), ("type_attr", 4, "string"),
               ("number_attr", 5, "string"), ("type_list_attr", 6, "string")],
    "NodeDef": [("name", 1, "string"), ("op", 2, "string"), ("input", 3, "string", "*"),
                ("device", 4, "string"), ("attr", 5, "map<string,AttrValue>")],
    "AttrValue": [("list", 1, "ListValue"), ("s", 2, "bytes"), ("i", 3, "int64"),
                  ("f", 4, "float"), ("b", 5, "bool"), ("type", 6, "enum"),
                  ("shape", 7, "TensorShapeProto"), ("tensor", 8, "TensorProto"),
                  ("placeholder", 9, "string"), ("func", 10, "NameAttrList")],
    "ListValue": [("s", 2, "bytes", "*"), ("i", 3, "int64", "*"), ("f", 4, "float", "*"),
                  ("b", 5, "bool", "*"), ("type", 6, "enum", "*"),
                  ("shape", 7, "TensorShapeProto", "*"), ("tensor", 8, "TensorProto", "*"),
                  ("func", 9, "NameAttrList", "*")],
    "NameAttrList": [("name", 1, "string"), ("attr", 2, "map<string,AttrValue>")],
    "TensorShapeProto": [("dim", 2, "Dim", "*"), ("unknown_rank", 3, "bool")],
    "Dim": [("size", 1, "int64"), ("name", 2, "string")],
    "TensorProto": [("dtype", 1, "enum"), ("tensor_shape", 2, "TensorShapeProto"),
                    ("tensor_content", 4, "bytes"), ("float_val", 5, "float", "*"),
                    ("double_val", 6, "double", "*"), ("int_val", 7, "int32", "*"),
                    ("string_val", 8, "bytes", "*"), ("int64_val", 10, "int64", "*"),
                    ("bool_val", 11, "bool", "*"), ("half_val", 13, "int32", "*"),
                    ("uint32_val", 16, "uint32", "*"), ("uint64_val", 17, "uint64", "*")],
    "SavedObjectGraph": [("nodes", 1, "SavedObject", "*"),
                         ("concrete_functions", 2, "map<string,SavedConcreteFunction>")],
    "SavedObject": [("children", 1, "ObjectReference", "*"),
                    ("user_object", 4, "SavedUserObject"), ("function", 6, "SavedFunction"),
                    ("variable", 7, "SavedVariable"),
                    ("bare_concrete_function", 8, "SavedBareConcreteFunction"),
                    ("constant", 9, "SavedConstant"), ("resource", 10, "SavedResource"),
                    ("captured_tensor", 12, "CapturedTensor")],
    "ObjectReference": [("node_id", 1, "int32"), ("local_name", 2, "string")],
    "SavedUserObject": [("identifier", 1, "string")],
    "SavedFunction": [("concrete_functions", 1, "string", "*")],
    "SavedBareConcreteFunction": [("concrete_function_name", 1, "string")],
    "SavedConcreteFunction": [("bound_inputs", 2, "int32", "*"),
                              ("canonicalized_input_signature", 3, "StructuredValue")],
    # (args, kwargs) of a function; x2 reads the kwargs' order.
    "StructuredValue": [("tuple_value", 52, "TupleValue"), ("dict_value", 53, "DictValue")],
    "TupleValue": [("values", 1, "StructuredValue", "*")],
    "DictValue": [("fields", 1, "map<string,StructuredValue>")],
    "SavedVariable": [("dtype", 1, "enum"), ("shape", 2, "TensorShapeProto"),
                      ("trainable", 3, "bool"), ("name", 6, "string")],
    "SavedConstant": [("operation", 1, "string")],
    "SavedResource": [("device", 1, "string")],
    "CapturedTensor": [("name", 1, "string"), ("concrete_function", 2, "string")],
    # The checkpoint side (variables/variables.index).
    "BundleHeaderProto": [("num_shards", 1, "int32"), ("endianness", 2, "enum")],
    "BundleEntryProto": [("dtype", 1, "enum"), ("shape", 2, "TensorShapeProto"),
                         ("shard_id", 3, "int32"), ("offset", 4, "int64"),
                         ("size", 5, "int64"), ("crc32c", 6, "fixed32"),
                         ("slices", 7, "TensorSliceProto", "*")],
    "TensorSliceProto": [("extent", 1, "Extent", "*")],
    "Extent": [("start", 1, "int64"), ("length", 2, "int64")],
    "TrackableObjectGraph": [("nodes", 1, "TrackableObject", "*")],
    "TrackableObject": [("children", 1, "ObjectReference", "*"),
                        ("attributes", 2, "SerializedTensor", "*")],
    "SerializedTensor": [("name", 1, "string"), ("full_name", 2, "string"),
                         ("checkpoint_key", 3, "string")],
}

# message -> (oneof name, its fields): lets WhichOneof tell which value is set.
_ONEOFS = {"AttrValue": ("value", {"list", "s", "i", "f", "b", "type", "shape", "tensor",
                                   "placeholder", "func"})}

# enums are read as plain integers (DataType values, see tf_dtypes below).
_SCALARS = {"string": 9, "bytes": 12, "int64": 3, "int32": 5, "uint32": 13, "uint64": 4,
            "float": 2, "double": 1, "bool": 8, "enum": 5, "fixed32": 7}
_PACKAGE = "x2tf"


def _build_file():
    from google.protobuf import descriptor_pb2
    FieldProto = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="x2_tf_subset.proto", package=_PACKAGE,
                                              syntax="proto3")

    def set_type(field, type_name: str) -> None:
        if type_name in _SCALARS:
            field.type = _SCALARS[type_name]
        else:
            field.type = FieldProto.TYPE_MESSAGE
            field.type_name = f".{_PACKAGE}.{type_name}"

    for name, fields in _SCHEMA.items():
        message = file.message_type.add(name=name)
        oneof_name, oneof_fields = _ONEOFS.get(name, ("", set()))
        if oneof_name:
            message.oneof_decl.add(name=oneof_name)
        for spec in fields:
            field_name, number, type_name = spec[:3]
            repeated = len(spec) > 3 and spec[3] == "*"
            field = message.field.add(name=field_name, number=number)
            if type_name.startswith("map<"):
                key, value = type_name[4:-1].split(",")
                entry_name = "".join(p.title() for p in field_name.split("_")) + "Entry"
                entry = message.nested_type.add(name=entry_name)
                entry.options.map_entry = True
                set_type(entry.field.add(name="key", number=1, label=FieldProto.LABEL_OPTIONAL),
                         key)
                set_type(entry.field.add(name="value", number=2,
                                         label=FieldProto.LABEL_OPTIONAL), value)
                field.label = FieldProto.LABEL_REPEATED
                field.type = FieldProto.TYPE_MESSAGE
                field.type_name = f".{_PACKAGE}.{name}.{entry_name}"
                continue
            field.label = FieldProto.LABEL_REPEATED if repeated else FieldProto.LABEL_OPTIONAL
            set_type(field, type_name)
            if field_name in oneof_fields:
                field.oneof_index = 0
    return file


@functools.cache
def messages() -> SimpleNamespace:
    """Message classes by name (SavedModel, GraphDef, BundleEntryProto, ...)."""
    from google.protobuf import descriptor_pool, message_factory
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_build_file())
    return SimpleNamespace(**{
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{name}"))
        for name in _SCHEMA})


# DataType enum value -> numpy dtype name (reference types are value + 100).
TF_DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
             7: "string", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16",
             19: "float16", 22: "uint32", 23: "uint64"}
DT_RESOURCE, DT_VARIANT = 20, 21


def dtype_name(enum: int) -> str:
    enum = enum - 100 if enum > 100 else enum
    if enum == DT_RESOURCE:
        return "resource"
    if enum == DT_VARIANT:
        return "variant"
    if enum not in TF_DTYPES:
        raise KeyError(enum)
    return TF_DTYPES[enum]
