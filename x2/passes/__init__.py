"""Graph passes: plain functions Graph -> Graph, run in this order."""
from __future__ import annotations

import time

from ..ir import Graph
from .cleanup import remove_dead, remove_identities
from .fold import fold_constants
from .fuse import fold_affine_into_conv, matmul_to_dense
from .layout import eliminate_transposes

PIPELINE = [
    ("remove_identities", remove_identities),
    ("fold_constants", fold_constants),
    ("eliminate_transposes", eliminate_transposes),
    ("fold_constants_after_layout", fold_constants),
    ("remove_identities_after_layout", remove_identities),
    ("fold_affine_into_conv", fold_affine_into_conv),
    ("matmul_to_dense", matmul_to_dense),
    ("remove_dead", remove_dead),
]


def run_pipeline(graph: Graph, pipeline=PIPELINE) -> tuple[Graph, list[dict]]:
    """Run the passes; return the graph and one record per pass."""
    records = []
    for name, fn in pipeline:
        before = len(graph.nodes)
        start = time.perf_counter()
        graph = fn(graph)
        records.append({"pass": name, "nodes_before": before, "nodes_after": len(graph.nodes),
                        "transposes_after": graph.count("transpose"),
                        "seconds": round(time.perf_counter() - start, 4)})
    graph.validate()
    return graph, records
