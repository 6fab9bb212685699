"""Scale check: a synthetic ONNX model with more than 2 GB of weights
(external data, written without holding it in memory) converted to ONNX and
to Paddle, with the peak RSS of each conversion's whole process tree.

    python tools/bench_scale.py [--work build/scale] [--cols 540000] [--targets onnx,paddle]

Prints a table and JSON; the ratio column is peak RSS / weight bytes."""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ROWS = 1024


def weight_value(i: int) -> float:
    return (i % 7 - 3) * 1e-3


def build_source(path: Path, cols: int) -> int:
    """x [N, 1024] @ W [1024, cols]; W lives in path.data, written row by row."""
    from onnx import TensorProto, helper
    data = path.with_suffix(".onnx.data")
    weights = np.memmap(data, dtype=np.float32, mode="w+", shape=(ROWS, cols))
    for i in range(ROWS):
        weights[i] = weight_value(i)
    weights.flush()
    del weights
    init = TensorProto()
    init.name, init.data_type = "W", TensorProto.FLOAT
    init.dims.extend([ROWS, cols])
    init.data_location = TensorProto.EXTERNAL
    for key, value in (("location", data.name), ("offset", "0"),
                       ("length", str(ROWS * cols * 4))):
        entry = init.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["y"])], "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", ROWS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", cols])], [init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return ROWS * cols * 4


def convert(source: Path, target: str, out: Path) -> dict:
    subprocess.run(["rm", "-rf", str(out)])
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "x2", "convert", "--from", "onnx", "--to",
                           target, "--model", str(source), "--out", str(out), "--quiet"],
                          capture_output=True, text=True, cwd=ROOT)
    return {"rc": proc.returncode, "wall_s": round(time.perf_counter() - start, 1),
            "peak_rss": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
            "stderr": proc.stderr[-1500:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=str(ROOT / "build" / "scale"))
    parser.add_argument("--cols", type=int, default=540_000)
    parser.add_argument("--targets", default="onnx,paddle")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # child: one conversion, so RUSAGE_CHILDREN covers only it
        print(json.dumps(convert(Path(args.one[0]), args.one[1], Path(args.one[2]))))
        return 0
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    source = work / "big.onnx"
    weights = build_source(source, args.cols)
    rows = {}
    for target in args.targets.split(","):
        proc = subprocess.run([sys.executable, __file__, "--one", str(source), target,
                               str(work / f"out_{target}")], capture_output=True, text=True)
        rows[target] = json.loads(proc.stdout.strip().splitlines()[-1])
        rows[target]["rss_ratio"] = round(rows[target]["peak_rss"] / weights, 2)
    from x2.cli import FitTable, print_table
    table = FitTable(title=f"{weights / 2**30:.2f} GiB of weights, ONNX (external data) in")
    for col in ("target", "ok", "wall s", "peak RSS GiB", "RSS / weights"):
        table.add_column(col, numeric=col not in ("target", "ok"))
    for target, r in rows.items():
        table.add_row(target, "yes" if r["rc"] == 0 else "NO: " + r["stderr"][-200:],
                      str(r["wall_s"]), f"{r['peak_rss'] / 2**30:.2f}", f"{r['rss_ratio']:.2f}")
    print_table(table)
    print(json.dumps({"weights": weights, "targets": rows}, indent=2))
    return 0 if all(r["rc"] == 0 for r in rows.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
