"""The shared IR. Documented in docs/IR.md."""
from .graph import DTYPES, Graph, GraphMeta, Node, Origin, TensorInfo
from .lint import LintError
from .serialize import load_graph, save_graph

__all__ = ["DTYPES", "Graph", "GraphMeta", "LintError", "Node", "Origin", "TensorInfo",
           "load_graph", "save_graph"]
