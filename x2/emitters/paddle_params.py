"""The weights of a Paddle output, written once: inference/model.pdiparams
(what `paddle.jit.save` writes and Paddle Inference serves) is also what
model.py's `load_model` reads, through inference/state_dict_keys.json, the state
dict key of each tensor in the file's order.

The file is paddle's combined-parameters format (`save_combine`): per
tensor a version, its LoD levels, a second version, a TensorDesc protobuf
(data type, dims) and the raw data."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..ir.serialize import release_pages

# (paddle.jit.load reads every file of the folder whose name holds "model" as a program)
KEYS_FILE = "state_dict_keys.json"

# paddle's VarType.Type numbers of the dtypes a parameter can have
_DTYPES = {0: np.dtype(bool), 1: np.dtype(np.int16), 2: np.dtype(np.int32),
           3: np.dtype(np.int64), 4: np.dtype(np.float16), 5: np.dtype(np.float32),
           6: np.dtype(np.float64), 20: np.dtype(np.uint8), 21: np.dtype(np.int8),
           22: np.dtype(np.uint16),  # bfloat16's bits
           23: np.dtype(np.complex64), 24: np.dtype(np.complex128)}


class UnreadableParams(ValueError):
    """The file is not laid out as this reader expects."""


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise UnreadableParams("a truncated TensorDesc")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


def _tensor_desc(data: bytes) -> tuple[np.dtype, list[int]]:
    """(dtype, dims) of a TensorDesc message: field 1 the type, field 2 the
    dims (packed or not)."""
    dtype, dims, at = None, [], 0
    while at < len(data):
        tag, at = _varint(data, at)
        field, wire = tag >> 3, tag & 7
        if field == 1 and wire == 0:
            code, at = _varint(data, at)
            dtype = _DTYPES.get(code)
            if dtype is None:
                raise UnreadableParams(f"a tensor of paddle data type {code}")
        elif field == 2 and wire == 0:
            dim, at = _varint(data, at)
            dims.append(dim)
        elif field == 2 and wire == 2:
            length, at = _varint(data, at)
            end = at + length
            while at < end:
                dim, at = _varint(data, at)
                dims.append(dim)
        else:
            raise UnreadableParams(f"a TensorDesc field {field} of wire type {wire}")
    if dtype is None:
        raise UnreadableParams("a TensorDesc without a data type")
    return dtype, dims


def read_params(path: Path) -> list[np.ndarray]:
    """The tensors of a .pdiparams file, in its order, as read-only arrays
    mapped from it."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    arrays, at = [], 0

    def take(count: int) -> np.ndarray:
        nonlocal at
        if at + count > len(data):
            raise UnreadableParams(f"{path.name} ends inside a tensor")
        piece, at = data[at:at + count], at + count
        return piece

    while at < len(data):
        take(4)  # the LoD tensor's version
        for _ in range(int(take(8).view(np.uint64)[0])):  # LoD levels: a size, then offsets
            take(int(take(8).view(np.uint64)[0]))
        take(4)  # the tensor's version
        dtype, dims = _tensor_desc(bytes(take(int(take(4).view(np.int32)[0]))))
        count = int(np.prod(dims, dtype=np.int64))
        arrays.append(take(count * dtype.itemsize).view(dtype).reshape(dims))
    return arrays


def _same_bytes(stored: np.ndarray, tensor: np.ndarray, chunk: int = 16 << 20) -> bool:
    """Whether two arrays hold the same bits, compared chunk by chunk with
    each chunk of the mapped file released once read."""
    a, b = stored.reshape(-1).view(np.uint8), np.ascontiguousarray(tensor).reshape(-1)
    b = b.view(np.uint8)
    if a.size != b.size:
        return False
    for start in range(0, a.size, chunk):
        same = np.array_equal(a[start:start + chunk], b[start:start + chunk])
        release_pages(a[start:start + chunk])
        if not same:
            return False
    return True


def stored_keys(path: Path, state: dict[str, tuple[str, np.ndarray]]) -> list[str] | None:
    """The state dict key of each tensor of `path`, in the file's order, or
    None unless the file holds every weight of `state` (key -> (paddle's name
    of the tensor, its values); tied keys share a name), each once, bit for
    bit. paddle.jit.save writes them sorted by name; a tensor identical to
    another (two zero biases) may take either key, as the values agree."""
    try:
        stored = read_params(path)
    except ValueError:  # (UnreadableParams, or a size numpy cannot view)
        return None
    by_name: dict[str, tuple[str, np.ndarray]] = {}
    for key, (name, values) in state.items():
        by_name.setdefault(name, (key, values))
    waiting = [by_name[name] for name in sorted(by_name)]
    keys = []
    for array in stored:
        found = next((i for i, (_, values) in enumerate(waiting)
                      if values.shape == array.shape and values.dtype.itemsize ==
                      array.dtype.itemsize and _same_bytes(array, values)), None)
        if found is None:
            return None
        keys.append(waiting.pop(found)[0])
    return keys if not waiting else None


def write_keys(folder: Path, keys: list[str]) -> None:
    (folder / KEYS_FILE).write_text(json.dumps(keys, indent=0) + "\n")
