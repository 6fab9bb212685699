"""Save an IR graph to a directory and load it back, losslessly.

Layout of the directory:
  graph.json   nodes, values, inputs/outputs, meta, each value's origin, and
               for each constant its dtype, shape and byte offset into weights.bin;
               the subgraph of a control-flow node is its attribute value, a
               nested graph of the same form whose constants are in weights.bin too
  weights.bin  every constant's bytes, C order, each aligned to 64 bytes

Loading memory-maps weights.bin, so a graph with gigabytes of weights is not
read into memory until a step touches those bytes.
"""
from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import numpy as np

from .graph import Graph, GraphMeta, Node, Origin, TensorInfo
from .schema import numpy_dtype

FORMAT_VERSION = 2
_ALIGN = 64


def mapped_root(array: np.ndarray) -> np.memmap | None:
    """The np.memmap a view's memory belongs to (through the plain ndarray
    views numpy functions return of a map, a transpose or a reshape), or None."""
    root = None
    while isinstance(array, np.ndarray):
        if isinstance(array, np.memmap) and getattr(array, "_mmap", None) is not None:
            root = array
        array = array.base
    return root


def copy_file_range_of(array: np.ndarray, out) -> bool:
    """Copy a memory-mapped array's bytes file-to-file (kernel copy), so big
    weights pass through without becoming resident in this process."""
    root = mapped_root(array)
    if root is None or root.filename is None or not array.flags["C_CONTIGUOUS"] or \
            array.nbytes == 0:
        return False
    # The root map's data starts at file offset root.offset; views sit after it.
    start = root.offset + (array.__array_interface__["data"][0] -
                           root.__array_interface__["data"][0])
    out.flush()
    with open(root.filename, "rb") as src:
        remaining, position = array.nbytes, start
        while remaining:
            sent = os.sendfile(out.fileno(), src.fileno(), position, min(remaining, 1 << 30))
            if sent == 0:
                raise OSError(f"{root.filename}: ended early while copying weights")
            position += sent
            remaining -= sent
    return True


def release_pages(array: np.ndarray) -> None:
    """Let the kernel drop the resident pages behind a memory-mapped array
    (they are re-read from the file if touched again), so streaming through
    big weights does not pile them up in this process's memory."""
    root = mapped_root(array)
    if root is None or array.nbytes == 0:
        return
    mm = root._mmap
    begin = np.frombuffer(mm, dtype=np.uint8).__array_interface__["data"][0]
    # (a transposed view's lowest address is its first element's)
    start = array.__array_interface__["data"][0] - begin
    page = mmap.PAGESIZE
    extent = sum((n - 1) * abs(st) for n, st in zip(array.shape, array.strides)) + \
        array.itemsize
    first, last = (start // page) * page, start + extent
    length = ((last - first + page - 1) // page) * page
    mm.madvise(mmap.MADV_DONTNEED, first, min(length, len(mm) - first))


def release_constants(graph: Graph) -> None:
    """release_pages for every memory-mapped constant of `graph` (subgraphs
    too): what the passes read of the weights leaves this process."""
    from .control_flow import walk_graphs
    for each in walk_graphs(graph):
        for array in each.constants.values():
            release_pages(array)


def save_graph(graph: Graph, directory: str | os.PathLike) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    offset = 0
    with open(directory / "weights.bin", "wb") as blob:
        def write(array) -> dict:
            nonlocal offset
            array = np.asanyarray(array)  # keeps np.memmap, for the file-to-file copy
            pad = (-offset) % _ALIGN
            blob.write(b"\0" * pad)
            offset += pad
            if not copy_file_range_of(array, blob):
                data = np.ascontiguousarray(array)
                blob.write(memoryview(data.reshape(-1).view(np.uint8)) if data.size else b"")
                del data
                release_pages(array)   # (a transposed weight read from a map)
            entry = {"dtype": str(array.dtype), "shape": list(array.shape), "offset": offset}
            offset += array.nbytes
            return entry

        doc = {"format": "x2-ir", "version": FORMAT_VERSION, "meta": graph.meta.to_json(),
               **_graph_doc(graph, write)}
    (directory / "graph.json").write_text(json.dumps(doc, indent=1))
    return directory


def _graph_doc(graph: Graph, write) -> dict:
    """A graph as JSON; subgraphs of control-flow nodes nest as attribute values."""
    nodes = []
    for node in graph.nodes:
        entry = node.to_json()
        entry["attrs"] = {k: {_SUBGRAPH: _graph_doc(v, write)} if isinstance(v, Graph) else v
                          for k, v in node.attrs.items()}
        nodes.append(entry)
    return {
        "inputs": graph.inputs,
        "outputs": graph.outputs,
        "origin": {k: v.to_json() for k, v in graph.origin.items()},
        "info": {k: v.to_json() for k, v in graph.info.items()},
        "constants": {name: write(array) for name, array in graph.constants.items()},
        "nodes": nodes,
    }


_SUBGRAPH = "x2-subgraph"


def load_graph(directory: str | os.PathLike) -> Graph:
    directory = Path(directory)
    doc = json.loads((directory / "graph.json").read_text())
    if doc.get("format") != "x2-ir" or doc.get("version") != FORMAT_VERSION:
        raise ValueError(f"{directory} is not an x2 IR directory of version {FORMAT_VERSION}")
    blob_path = directory / "weights.bin"
    blob = None
    if blob_path.exists() and blob_path.stat().st_size:
        blob = np.memmap(blob_path, dtype=np.uint8, mode="r")
    graph = _graph_from_doc(doc, blob)
    graph.meta = GraphMeta.from_json(doc["meta"])
    return graph


def _graph_from_doc(doc: dict, blob) -> Graph:
    graph = Graph()
    graph.inputs = list(doc["inputs"])
    graph.outputs = list(doc["outputs"])
    graph.origin = {k: Origin.from_json(v) for k, v in doc["origin"].items()}
    graph.info = {k: TensorInfo.from_json(v) for k, v in doc["info"].items()}
    nodes = []
    for entry in doc["nodes"]:
        entry = dict(entry)
        entry["attrs"] = {k: _graph_from_doc(v[_SUBGRAPH], blob)
                          if isinstance(v, dict) and _SUBGRAPH in v else v
                          for k, v in entry["attrs"].items()}
        nodes.append(Node.from_json(entry))
    graph.nodes = nodes
    for name, entry in doc["constants"].items():
        dtype = numpy_dtype(entry["dtype"])
        shape = tuple(entry["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if count == 0 or blob is None:
            graph.constants[name] = np.zeros(shape, dtype)
            continue
        start = entry["offset"]
        raw = blob[start:start + count * dtype.itemsize]
        graph.constants[name] = raw.view(dtype).reshape(shape)
    return graph
