"""ONNX frontend: an .onnx file -> the shared IR (entry: reader.read_ir)."""
