"""IR pass scaling: time per node of the full pass pipeline on synthetic
NHWC conv nets of growing size (frontend-style Transpose pairs around each
conv, residual adds, BN as mul/add, a flatten -> dense head).

    python tools/bench_passes.py [--sizes 1000,2000,5000,10000,20000]

Linear passes show a roughly constant time per node across sizes."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from x2.ir import Graph, TensorInfo  # noqa: E402
from x2.passes import run_pipeline  # noqa: E402


def synthetic(nodes: int, channels: int = 8, size: int = 8) -> Graph:
    """About `nodes` IR nodes: blocks of 7 (Transpose, conv, Transpose, mul, add, relu, add)."""
    rng = np.random.default_rng(0)
    g = Graph()
    g.meta.source_layout = "NHWC"
    x = g.add_input("x", "float32", (None, size, size, channels))
    nhwc = TensorInfo("float32", (None, size, size, channels))
    nchw = TensorInfo("float32", (None, channels, size, size))
    weight = rng.normal(0, 0.1, (channels, channels, 3, 3)).astype("float32")
    scale = rng.uniform(0.5, 1.5, channels).astype("float32")
    shift = rng.normal(0, 0.1, channels).astype("float32")
    for block in range(max(1, nodes // 7)):
        def emit(op, inputs, info, **attrs):
            node = g.add_node(op, inputs, attrs=attrs, name=f"b{block}/{op}{len(g.nodes)}")
            g.info[node.outputs[0]] = info
            return node.outputs[0]
        t = emit("transpose", [x], nchw, perm=[0, 3, 1, 2])
        w = g.add_constant(f"b{block}/w", weight)
        c = emit("conv2d", [t, w], nchw, strides=[1, 1], dilations=[1, 1], pads=[1, 1, 1, 1],
                 groups=1)
        y = emit("transpose", [c], nhwc, perm=[0, 2, 3, 1])
        y = emit("mul", [y, g.add_constant(f"b{block}/s", scale)], nhwc)
        y = emit("add", [y, g.add_constant(f"b{block}/t", shift)], nhwc)
        y = emit("relu", [y], nhwc)
        x = emit("add", [x, y], nhwc)
    g.outputs = [x]
    return g


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000,10000,20000")
    args = parser.parse_args()
    from x2.cli import FitTable, print_table
    table = FitTable(title="IR pass pipeline scaling")
    for col in ("nodes in", "nodes out", "Transposes left", "seconds", "µs per node"):
        table.add_column(col, numeric=col not in ("target", "ok"))
    for size in (int(s) for s in args.sizes.split(",")):
        graph = synthetic(size)
        count = len(graph.nodes)
        start = time.perf_counter()
        graph, _ = run_pipeline(graph)
        seconds = time.perf_counter() - start
        table.add_row(str(count), str(len(graph.nodes)), str(graph.count("transpose")),
                      f"{seconds:.2f}", f"{seconds / count * 1e6:.0f}")
    print_table(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
