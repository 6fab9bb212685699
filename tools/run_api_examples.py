"""Run every API-difference example of one side in this process and save the outputs.

    python tools/run_api_examples.py tf     OUT.npz   # source side of the TensorFlow entries
    python tools/run_api_examples.py torch  OUT.npz   # source side of the PyTorch entries
    python tools/run_api_examples.py paddle OUT.npz   # Paddle side of every entry

Imports exactly one framework (TensorFlow and Paddle must not share a process).
Outputs are saved as `<api>::<i>`; an example that raises is recorded as
`<api>::error` (its traceback) so the test names it instead of stopping.
"""
from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

from x2.api_diff import run_example, tables  # noqa: E402


def modules_for(side: str) -> dict:
    if side == "tf":
        import tensorflow as tf
        return {"tf": tf, "keras": tf.keras, "to_tensor": tf.constant}
    if side == "torch":
        import torch
        torch.manual_seed(0)
        return {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "to_tensor": torch.tensor}
    if side == "paddle":
        import paddle
        paddle.seed(0)
        return {"paddle": paddle, "nn": paddle.nn, "F": paddle.nn.functional, "to_tensor": paddle.to_tensor}
    raise SystemExit(f"unknown side {side!r}")


def main(side: str, out_path: str) -> int:
    modules = modules_for(side)
    all_tables = tables()
    if side == "paddle":
        jobs = [(e, "paddle") for t in all_tables.values() for e in t.entries]
    else:
        jobs = [(e, "source") for e in all_tables[side].entries]
    saved: dict[str, np.ndarray] = {}
    for entry, which in jobs:
        # a native abort kills the process: the last name printed tells the test which API did it
        print(f"running {entry.api}", file=sys.stderr, flush=True)
        try:
            for i, value in enumerate(run_example(entry, which, modules)):
                saved[f"{entry.api}::{i}"] = value
        except Exception:  # noqa: BLE001 - recorded and reported per API by the test
            saved[f"{entry.api}::error"] = np.array(traceback.format_exc())
    np.savez(out_path, **saved)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
