"""Read a TensorFlow checkpoint bundle (`variables/variables.index` plus its
`.data-NNNNN-of-NNNNN` shards) without TensorFlow.

The index is a LevelDB-format table: sorted keys (tensor names) mapping to
BundleEntryProto records that say where each tensor's bytes lie in which
shard. TensorFlow writes it uncompressed; a snappy-compressed block (never
seen from TF) is refused so the caller can fall back to TensorFlow."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from ...errors import ModelLoadError
from .protos import dtype_name, messages

_MAGIC = 0xDB4775248B80FB57
_FOOTER = 48


class UnreadableBundle(ModelLoadError):
    """The bundle uses a feature this reader does not implement."""


def _varint(data, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _block(data: bytes, offset: int, size: int, where: str) -> list[tuple[bytes, bytes]]:
    """The (key, value) entries of one table block."""
    if offset + size + 5 > len(data):
        raise ModelLoadError(f"{where}: truncated (a block runs past the end of the file)")
    if data[offset + size] != 0:
        raise UnreadableBundle(f"{where}: compressed table blocks are not supported")
    block = memoryview(data)[offset:offset + size]
    restarts = struct.unpack_from("<I", block, size - 4)[0]
    end = size - 4 - 4 * restarts
    entries, pos, key = [], 0, b""
    while pos < end:
        shared, pos = _varint(block, pos)
        unshared, pos = _varint(block, pos)
        value_len, pos = _varint(block, pos)
        key = key[:shared] + bytes(block[pos:pos + unshared])
        pos += unshared
        entries.append((key, bytes(block[pos:pos + value_len])))
        pos += value_len
    return entries


def read_index(index_path: Path) -> dict[str, object]:
    """Tensor name -> BundleEntryProto, for every tensor of the bundle."""
    data = index_path.read_bytes()
    where = str(index_path)
    if len(data) < _FOOTER or struct.unpack_from("<Q", data, len(data) - 8)[0] != _MAGIC:
        raise ModelLoadError(f"{where}: not a TensorFlow checkpoint index (bad magic number; "
                             f"the file is truncated or not a checkpoint)")
    footer = memoryview(data)[len(data) - _FOOTER:]
    _meta_offset, pos = _varint(footer, 0)
    _meta_size, pos = _varint(footer, pos)
    index_offset, pos = _varint(footer, pos)
    index_size, pos = _varint(footer, pos)
    entry_cls = messages().BundleEntryProto
    entries: dict[str, object] = {}
    for _last_key, handle in _block(data, index_offset, index_size, where):
        offset, pos = _varint(handle, 0)
        size, _ = _varint(handle, pos)
        for key, value in _block(data, offset, size, where):
            if key:  # the empty key holds the BundleHeaderProto
                entries[key.decode()] = entry_cls.FromString(value)
    return entries


class Bundle:
    """Tensors of a checkpoint bundle, read on demand from memory-mapped shards."""

    def __init__(self, prefix: Path):
        self.prefix = prefix
        self.entries = read_index(Path(str(prefix) + ".index"))
        self._shards: dict[int, np.ndarray] = {}

    def _shard(self, shard_id: int) -> np.ndarray:
        if shard_id not in self._shards:
            count = 1 + max(e.shard_id for e in self.entries.values())
            path = Path(f"{self.prefix}.data-{shard_id:05d}-of-{count:05d}")
            if not path.exists():
                raise ModelLoadError(f"{path}: missing; the checkpoint's weights are incomplete")
            self._shards[shard_id] = np.memmap(path, dtype=np.uint8, mode="r")
        return self._shards[shard_id]

    def _bytes(self, entry, name: str) -> np.ndarray:
        shard = self._shard(entry.shard_id)
        if entry.offset + entry.size > shard.size:
            raise ModelLoadError(f"{self.prefix}: tensor '{name}' runs past the end of its "
                                 f"data file (the file is truncated)")
        return shard[entry.offset:entry.offset + entry.size]

    def read(self, name: str) -> np.ndarray:
        entry = self.entries.get(name)
        if entry is None:
            raise ModelLoadError(f"{self.prefix}: the checkpoint has no tensor '{name}'")
        if len(entry.slices):
            raise UnreadableBundle(f"{self.prefix}: tensor '{name}' is stored in slices")
        shape = tuple(d.size for d in entry.shape.dim)
        dtype = dtype_name(entry.dtype)
        raw = self._bytes(entry, name)
        if dtype == "string":
            return _strings(bytes(raw), shape, name)
        if dtype == "bfloat16":
            raise UnreadableBundle(f"{self.prefix}: bfloat16 tensor '{name}'")
        array = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder("<"))
        if array.size != int(np.prod(shape)):
            raise ModelLoadError(f"{self.prefix}: tensor '{name}' has {array.size} values, "
                                 f"its shape {list(shape)} needs {int(np.prod(shape))}")
        return array.reshape(shape).astype(dtype, copy=True)


def _strings(raw: bytes, shape: tuple, name: str) -> np.ndarray:
    """String tensors: every element's length as a varint, a 4-byte checksum of
    those lengths, then the elements' bytes back to back."""
    count = int(np.prod(shape)) if shape else 1
    lengths, pos = [], 0
    for _ in range(count):
        length, pos = _varint(raw, pos)
        lengths.append(length)
    pos += 4
    values = []
    for length in lengths:
        values.append(raw[pos:pos + length])
        pos += length
    if pos != len(raw):
        raise ModelLoadError(f"string tensor '{name}' is malformed in the checkpoint")
    return np.array(values, dtype=object).reshape(shape)
