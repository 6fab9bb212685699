"""PyTorch frontend: a module spec, .pt2 or TorchScript -> the shared IR
(entry: capture.read_ir)."""
