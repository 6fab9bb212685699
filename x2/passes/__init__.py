"""Graph passes: plain functions Graph -> Graph, run in this order."""
from __future__ import annotations

import gc
import os
import time

from ..ir import Graph
from ..ir.control_flow import GRAPH_ATTRS
from .affine import affine_after_transpose
from .cleanup import (merge_reshapes, merge_size_computations, remove_dead, remove_dropout,
                      remove_identities)
from .fold import fold_constants, fold_constants_for_training
from .dense_rewrites import dense_on_leading_dims
from .dims import reshapes_from_dims
from .fuse import fold_affine_into_conv, fold_pad_into_conv, matmul_to_dense
from .fusions import fuse_patterns
from .layout import eliminate_transposes, transposes_to_reshapes
from .layout_modes import nchw_interface, nhwc_ops
from .pools import whole_window_pools
from .recurrent import merge_bidirectional
from .training import batch_norm_from_affine, conv_bias_from_add, matmul_to_dense_keeping_bias

PIPELINE = [
    ("remove_dropout", remove_dropout),
    ("remove_identities", remove_identities),
    ("fold_constants", fold_constants),
    ("merge_size_computations", merge_size_computations),
    ("fuse_patterns", fuse_patterns),
    ("eliminate_transposes", eliminate_transposes),
    ("transposes_to_reshapes", transposes_to_reshapes),
    ("fold_constants_after_layout", fold_constants),
    ("remove_identities_after_layout", remove_identities),
    ("reshapes_from_dims", reshapes_from_dims),
    ("merge_reshapes", merge_reshapes),
    ("fold_affine_into_conv", fold_affine_into_conv),
    ("fold_pad_into_conv", fold_pad_into_conv),
    ("whole_window_pools", whole_window_pools),
    ("affine_after_transpose", affine_after_transpose),
    ("matmul_to_dense", matmul_to_dense),
    ("dense_on_leading_dims", dense_on_leading_dims),
    ("merge_reshapes_after_dense", merge_reshapes),
    ("merge_bidirectional", merge_bidirectional),
    ("remove_dead", remove_dead),
]


# Passes that keep a graph's interface (its inputs and the meaning of each
# output, by position) also run inside the subgraphs of control-flow nodes,
# innermost first. The others change the interface (nchw_interface) or decide
# for the whole model (nhwc_ops); a subgraph's interface stays as its node uses it.
_SUBGRAPH_PASSES = {remove_dropout, remove_identities, fold_constants, fold_constants_for_training,
                    merge_size_computations, reshapes_from_dims,
                    fuse_patterns, eliminate_transposes,
                    transposes_to_reshapes, merge_reshapes, fold_affine_into_conv,
                    fold_pad_into_conv, whole_window_pools, affine_after_transpose, matmul_to_dense, dense_on_leading_dims,
                    merge_bidirectional, remove_dead}


def in_subgraphs(fn, graph: Graph) -> Graph:
    """Run pass `fn` over every subgraph of `graph` (recursively), then over `graph`."""
    for node in graph.nodes:
        for attr in GRAPH_ATTRS.get(node.op, ()):
            node.attrs[attr] = in_subgraphs(fn, node.attrs[attr])
    return fn(graph)


# x2 convert --for: "inference" folds BatchNorm and arithmetic on weights into
# new constants; "training" keeps the source's parameter set (x2/passes/fold.py).
PURPOSES = ("inference", "training")
# Passes that change the parameter set: left out --for training.
_INFERENCE_ONLY = {"fold_affine_into_conv", "affine_after_transpose", "remove_dropout"}


def pipeline_for(layout: str = "nchw", io_layout: str = "source",
                 purpose: str = "inference") -> list:
    """The passes for a layout choice: --io-layout nchw renames the interface
    first; --layout nhwc moves layout-sensitive ops back to NHWC after the
    NCHW cleanup, then eliminates the Transposes that creates. --for training
    folds nothing computed from a learned weight and keeps BatchNorm apart."""
    passes = list(PIPELINE)
    if purpose == "training":
        passes = [(name, fold_constants_for_training if fn is fold_constants else fn)
                  for name, fn in passes if name not in _INFERENCE_ONLY]
        at = [name for name, _ in passes].index("fold_constants") + 1
        passes.insert(at, ("batch_norm_from_affine", batch_norm_from_affine))
        at = [name for name, _ in passes].index("merge_reshapes") + 1
        passes.insert(at, ("conv_bias_from_add", conv_bias_from_add))
        passes = [(name, matmul_to_dense_keeping_bias if fn is matmul_to_dense else fn)
                  for name, fn in passes]
    if io_layout == "nchw":
        passes.insert(1, ("nchw_interface", nchw_interface))
    if layout == "nhwc":
        at = [name for name, _ in passes].index("remove_identities_after_layout") + 1
        passes[at:at] = [("nhwc_ops", nhwc_ops),
                         ("eliminate_transposes_nhwc", eliminate_transposes),
                         ("fold_constants_nhwc", fold_constants if purpose != "training"
                          else fold_constants_for_training),
                         ("remove_identities_nhwc", remove_identities)]
    return passes


def run_pipeline(graph: Graph, pipeline=PIPELINE) -> tuple[Graph, list[dict]]:
    """Run the passes; return the graph and one record per pass."""
    # Passes allocate many small objects and free few: the cyclic GC would
    # rescan the whole (growing) heap again and again, which made pass time
    # per node grow with graph size. Nothing here creates reference cycles.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run(graph, pipeline)
    finally:
        if was_enabled:
            gc.enable()


def lint_enabled() -> bool:
    """X2_LINT=1 lints the graph the frontend made and the graph after every
    pass; conversions do not pay for it. The test suite sets it
    (tests/conftest.py), so every graph a test converts is linted."""
    return os.environ.get("X2_LINT", "") not in ("", "0")


def _run(graph: Graph, pipeline) -> tuple[Graph, list[dict]]:
    lint = lint_enabled()
    if lint:
        graph.lint("of the frontend's graph")
    records = []
    for name, fn in pipeline:
        before = len(graph.nodes)
        start = time.perf_counter()
        graph = in_subgraphs(fn, graph) if fn in _SUBGRAPH_PASSES else fn(graph)
        records.append({"pass": name, "nodes_before": before, "nodes_after": len(graph.nodes),
                        "transposes_after": graph.count("transpose"),
                        "seconds": round(time.perf_counter() - start, 4), "linted": lint})
        if lint:
            graph.lint(f"after pass {name}")
    graph.validate()
    return graph, records
