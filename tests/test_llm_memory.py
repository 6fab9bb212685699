"""Convert within memory (issue 48, item 2): the pieces that keep a large
model's conversion at about one copy of its weights. The 0.5B measurement
itself is a tool (tools/llm_memory.py), not a test: it takes minutes.

- IR weights that are views of the memory-mapped file (numpy functions
  return plain ndarray views of a map) are copied file to file and their
  pages released, as the map itself is;
- a transpose of a constant is folded whatever its size (a view): a tied
  head over a large vocabulary stays the embedding's table;
- one_job(single_use=True): a worker ends with its step;
- the ONNX output holds a tied head's table once (the head reads it
  through a Transpose).

Cost: about 30 s (an onnx worker started twice; numpy on a 64 MiB file; a
tiny GPT-2 converted to ONNX)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import ROOT
from x2.convert import convert

from x2.ir import Graph, load_graph, save_graph
from x2.ir.bounds import MAX_FOLD_ELEMENTS, foldable
from x2.ir.graph import TensorInfo
from x2.ir.serialize import copy_file_range_of, mapped_root, release_pages
from x2.process import isolation
from x2.process.isolation import one_job, run_step

ROWS, COLS = 4096, 4096   # 64 MiB of float32


def _resident_mib() -> float:
    with open("/proc/self/smaps_rollup") as f:
        fields = dict(line.split(":", 1) for line in f if ":" in line)
    return int(fields["Rss"].split()[0]) / 1024


@pytest.fixture
def mapped(tmp_path):
    """A 64 MiB float32 matrix as save_graph / load_graph leave it: memory-mapped."""
    graph = Graph()
    graph.constants["w"] = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS)
    graph.info["w"] = TensorInfo("float32", (ROWS, COLS))
    save_graph(graph, tmp_path / "source")
    return load_graph(tmp_path / "source").constants["w"]


def test_views_of_a_map_are_copied_file_to_file_and_their_pages_released(mapped, tmp_path):
    plain = np.asarray(mapped)[1:]     # what numpy functions return: an ndarray, not a memmap
    assert not isinstance(plain, np.memmap) and mapped_root(plain) is not None
    assert mapped_root(np.ones(3)) is None
    with open(tmp_path / "copy.bin", "wb") as out:
        assert copy_file_range_of(plain, out)
    assert np.array_equal(np.fromfile(tmp_path / "copy.bin", np.float32).reshape(ROWS - 1, COLS),
                          plain)
    # A transposed view (a dense weight laid out for nn.Linear) is read in full,
    # then its pages leave this process.
    release_pages(mapped)   # (what the comparison above read)
    before = _resident_mib()
    transposed = plain.T
    assert float(transposed.sum(dtype=np.float64)) > 0
    assert _resident_mib() - before > 48
    release_pages(transposed)
    assert _resident_mib() - before < 16


def test_save_graph_streams_views_of_a_map_and_keeps_their_values(mapped, tmp_path):
    graph = Graph()
    graph.constants = {"rows": np.asarray(mapped)[:8], "t": np.asarray(mapped).T}
    graph.info = {k: TensorInfo("float32", v.shape) for k, v in graph.constants.items()}
    before = _resident_mib()
    save_graph(graph, tmp_path / "ir")
    assert _resident_mib() - before < 32   # the transposed copy comes and goes
    back = load_graph(tmp_path / "ir").constants
    assert np.array_equal(back["rows"], mapped[:8]) and np.array_equal(back["t"], mapped.T)


def test_a_transpose_folds_at_any_size_and_arithmetic_stays_bounded():
    # (broadcast_to: the shape of a large vocabulary's table without its memory)
    table = np.broadcast_to(np.float32(1), (151936, 896))
    assert table.size > MAX_FOLD_ELEMENTS
    assert foldable("transpose", [table], {"perm": [1, 0]})
    assert foldable("identity", [table], {})
    assert not foldable("add", [table, table], {})


def test_single_use_workers_end_with_their_step(monkeypatch):
    monkeypatch.setattr(isolation, "_REUSE", [False])   # as in x2 convert (the suite pools)
    isolation._POOL.close()
    with one_job(single_use=True):
        run_step("onnx.devices", {})
        assert isolation._POOL.idle.get(("onnx",), []) == []
    with one_job():
        run_step("onnx.devices", {})
        (server,) = isolation._POOL.idle[("onnx",)]
        assert server.alive()
    assert not server.alive()   # the job's pool is emptied when it ends


def test_a_tied_head_is_one_table_in_the_onnx_output(tmp_path):
    import onnx
    report = convert(f"{ROOT / 'tests' / 'dynamic_models.py'}:gpt2_logits", str(tmp_path / "o"),
                     source="torch", target="onnx",
                     input_shapes={"input_ids": ["batch", "seq=16"],
                                   "attention_mask": ["batch", "seq=16"]},
                     options={"input_dtypes": {"*": "int64"}})
    assert report.target_details["verify"]["verified"]
    model = onnx.load(str(tmp_path / "o" / "model.onnx"))
    tables = [i.name for i in model.graph.initializer if sorted(i.dims) == [32, 100]]
    assert len(tables) == 1, tables   # (an untied copy: the table again, transposed)
    readers = {n.op_type for n in model.graph.node if tables[0] in n.input}
    assert readers == {"Gather", "Transpose"}
