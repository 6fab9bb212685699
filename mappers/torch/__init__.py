"""PyTorch op mappers keyed on ATen op targets ("aten.convolution.default"),
one module per op family. A SourceOp's attrs["args"] / attrs["kwargs"] hold
the FX call's arguments; tensor arguments are value names (TensorRef)."""
