"""The shared IR. Documented in docs/IR.md."""
from .graph import DTYPES, Graph, Node, TensorInfo
from .lint import LintError
from .serialize import load_graph, save_graph

__all__ = ["DTYPES", "Graph", "LintError", "Node", "TensorInfo", "load_graph", "save_graph"]
