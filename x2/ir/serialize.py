"""Save an IR graph to a directory and load it back, losslessly.

Layout of the directory:
  graph.json   nodes, values, inputs/outputs, meta, and for each constant its
               dtype, shape and byte offset into weights.bin
  weights.bin  every constant's bytes, C order, each aligned to 64 bytes

Loading memory-maps weights.bin, so a graph with gigabytes of weights is not
read into memory until a step touches those bytes.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .graph import Graph, Node, TensorInfo

FORMAT_VERSION = 1
_ALIGN = 64


def save_graph(graph: Graph, directory: str | os.PathLike) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    table = {}
    offset = 0
    with open(directory / "weights.bin", "wb") as blob:
        for name, array in graph.constants.items():
            array = np.asarray(array)
            pad = (-offset) % _ALIGN
            blob.write(b"\0" * pad)
            offset += pad
            data = np.ascontiguousarray(array)
            blob.write(memoryview(data.reshape(-1).view(np.uint8)) if data.size else b"")
            table[name] = {"dtype": str(array.dtype), "shape": list(array.shape), "offset": offset}
            offset += data.nbytes
    doc = {
        "format": "x2-ir",
        "version": FORMAT_VERSION,
        "inputs": graph.inputs,
        "outputs": graph.outputs,
        "meta": graph.meta,
        "info": {k: v.to_json() for k, v in graph.info.items()},
        "constants": table,
        "nodes": [n.to_json() for n in graph.nodes],
    }
    (directory / "graph.json").write_text(json.dumps(doc, indent=1))
    return directory


def load_graph(directory: str | os.PathLike) -> Graph:
    directory = Path(directory)
    doc = json.loads((directory / "graph.json").read_text())
    if doc.get("format") != "x2-ir" or doc.get("version") != FORMAT_VERSION:
        raise ValueError(f"{directory} is not an x2 IR directory of version {FORMAT_VERSION}")
    graph = Graph()
    graph.inputs = list(doc["inputs"])
    graph.outputs = list(doc["outputs"])
    graph.meta = dict(doc["meta"])
    graph.info = {k: TensorInfo.from_json(v) for k, v in doc["info"].items()}
    graph.nodes = [Node.from_json(n) for n in doc["nodes"]]
    blob_path = directory / "weights.bin"
    blob = None
    if doc["constants"] and blob_path.stat().st_size:
        blob = np.memmap(blob_path, dtype=np.uint8, mode="r")
    for name, entry in doc["constants"].items():
        dtype = np.dtype(entry["dtype"])
        shape = tuple(entry["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        if count == 0 or blob is None:
            graph.constants[name] = np.zeros(shape, dtype)
            continue
        start = entry["offset"]
        raw = blob[start:start + count * dtype.itemsize]
        graph.constants[name] = raw.view(dtype).reshape(shape)
    return graph
