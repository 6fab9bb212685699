"""ONNX op mappers, one module per op family, versioned by opset where ONNX
changed an op (attributes that became inputs, new defaults)."""
