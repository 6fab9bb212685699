"""What crosses a process boundary, stated as dataclasses.

The CLI process asks a frontend worker to read a model (`ReadRequest`, answered
by `ReadResult`) and an emitter worker to write one (`EmitRequest`); every
conversion leaves a `Report` (report.json) that `x2 check`, `convert-many` and
the CLI read back. Each travels as JSON with a contract version: a file or
message of another version is refused with both versions named, never
half-read.

This module imports nothing from x2 but errors, and no framework.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from importlib import metadata
from pathlib import Path
from typing import Any

from .errors import X2Error

# Bumped whenever a field below changes meaning or a required one is added.
CONTRACT_VERSION = 1


def x2_version() -> str:
    """The installed x2's version, from the package metadata."""
    try:
        return metadata.version("x2")
    except metadata.PackageNotFoundError:  # run from a source tree without installing
        return "0+unknown"


def _from_json(cls, d: dict, what: str):
    if not isinstance(d, dict):
        raise X2Error(f"{what}: expected an object, got {type(d).__name__}")
    version = d.get("version", CONTRACT_VERSION)
    if version != CONTRACT_VERSION:
        raise X2Error(f"{what}: contract version {version!r}, but this x2 "
                      f"({x2_version()}) reads version {CONTRACT_VERSION}")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise X2Error(f"{what}: unknown fields {unknown}")
    return cls(**d)


@dataclass
class ReadOptions:
    """Frontend settings from the CLI (each named after its flag)."""
    input_dtypes: dict[str, str] = field(default_factory=dict)  # input (or "*") -> dtype
    trust_pickle: bool = False       # --trust-pickle
    trust_code: bool = False         # --trust-code (Keras custom objects, Lambda layers)
    dynamic_batch: bool = False      # --dynamic-batch (torch)
    model_def: str | None = None     # --model-def FILE.py:factory (TF2 checkpoints)
    tags: list[str] | None = None    # --tags (TF1 SavedModel)
    tf_reader: str = "auto"          # --tf-reader auto|direct|tensorflow
    unroll_loops: bool = False       # --unroll-loops (TF While loops with a static trip count)
    keep_trainable: bool = False     # --for training: no arithmetic on learned weights folded
    # --input-range: integer input -> [low, high) that `x2 check` draws from
    input_ranges: dict[str, list[int]] = field(default_factory=dict)
    # --input-value: an input fixed at conversion (a sample rate, a flag): a
    # constant of the converted model, not one of its inputs; x2 check feeds
    # it to the source
    input_values: dict[str, float | int | list] = field(default_factory=dict)
    # --with-cache: a transformers causal LM read as one decoding step with its
    # KV cache at the interface (x2/frontends/torch/cache.py)
    with_cache: bool = False
    # --part: which of an encoder-decoder's two models --with-cache reads,
    # "encoder" or "decoder" (x2/frontends/torch/seq2seq_cache.py)
    cache_part: str | None = None
    # torch modules: the forward() arguments the converted model's inputs are
    # passed to, by name (set by the frontend when --inputs chose them)
    forward_args: list[str] | None = None

    @staticmethod
    def from_json(d: dict) -> "ReadOptions":
        return _from_json(ReadOptions, d, "read options")


@dataclass
class ReadRequest:
    """Read `model` (into the IR directory `ir`; run it, when `ir` is "")."""
    model: str
    ir: str = ""
    signature: str | None = None
    # NAME -> dims: an int fixes one, a symbol ("seq", "seq=16") names a dynamic one
    input_shapes: dict[str, list[int | str]] | None = None
    inputs: list[str] | None = None     # --inputs: prune to start here
    outputs: list[str] | None = None    # --outputs: prune to end here
    options: ReadOptions = field(default_factory=ReadOptions)
    version: int = CONTRACT_VERSION

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "ReadRequest":
        d = dict(d)
        d["options"] = ReadOptions.from_json(d.get("options") or {})
        return _from_json(ReadRequest, d, "read request")


@dataclass
class ReadResult:
    source_ops: dict[str, int]          # source op type -> count
    nodes: int                          # IR nodes the frontend produced
    # TF: format, reader, feeds/fetches (the source tensors the converted
    # model spans), pruned, tags: what `x2 check` needs to run the source.
    source: dict[str, Any] = field(default_factory=dict)
    version: int = CONTRACT_VERSION

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "ReadResult":
        return _from_json(ReadResult, d, "read result")


@dataclass
class EmitOptions:
    """Target settings from the CLI."""
    opset: int | None = None         # --opset (ONNX)
    channels_last: bool = False      # --layout nhwc for torch: NHWC in the memory format
    # --precision fp32|fp16|bf16|mixed (x2/passes/precision.py); None: the source's
    # stored dtype (choose_precision), which convert sets before the model is written
    precision: str | None = None
    keep_fp32: list[str] | None = None   # --keep-fp32: IR ops kept in float32 (None: default)
    io_dtype: str | None = None      # --io-dtype fp32: float32 interface of a half model
    verify: bool = True              # judge the written model by its source (--no-verify)
    verify_timeout: float | None = None  # seconds per verify runner (--verify-timeout)
    verify_dims: dict[str, list[int]] | None = None  # --dim NAME=S1,S2: verify's sizes
    purpose: str = "inference"       # --for inference|training (x2/passes/__init__.py PURPOSES)
    exportable: bool = False         # --exportable: torch control flow as torch.cond/while_loop
    flat: bool = False               # --flat: one Model class, provenance on every line

    @staticmethod
    def from_json(d: dict) -> "EmitOptions":
        return _from_json(EmitOptions, d, "emit options")


@dataclass
class EmitRequest:
    """Write the IR directory `ir` as a model into `out`."""
    ir: str
    out: str
    source_desc: str = "a model"     # named in the generated docstring
    options: EmitOptions = field(default_factory=EmitOptions)
    version: int = CONTRACT_VERSION

    def to_json(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_json(d: dict) -> "EmitRequest":
        d = dict(d)
        d["options"] = EmitOptions.from_json(d.get("options") or {})
        return _from_json(EmitRequest, d, "emit request")


@dataclass
class Report:
    """report.json: what a conversion did, and what re-running the source needs."""
    # framework, model, signature, input_shapes, options (ReadOptions as JSON),
    # plus the frontend's ReadResult.source fields
    source: dict[str, Any]
    target: str
    target_details: dict[str, Any]
    inputs: list[dict]                  # {name, dtype, shape, dims} of the converted model
    outputs: list[dict]
    ops_seen: dict[str, int]
    ops_mapped: int
    ir_ops: dict[str, int]
    nodes_before_passes: int
    nodes_after_passes: int
    transposes_before_passes: int
    transposes_left: int
    transposes_where: list[dict]        # why each Transpose left stays
    layout: dict[str, Any]              # inside, io, io_transposes
    passes: list[dict]
    timings_s: dict[str, float]
    files: list[str]
    # converted-model name -> IR value -> source node and origin, in execution
    # order: what `x2 check --bisect` compares
    values: list[dict]
    # symbol -> the example size the source gave it (x2/ir/symbols.py)
    dim_examples: dict[str, int] = field(default_factory=dict)
    x2_version: str = field(default_factory=x2_version)
    version: int = CONTRACT_VERSION

    def to_json(self) -> dict:
        return asdict(self)

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2))

    @staticmethod
    def load(directory: str | Path) -> "Report":
        """The report of an x2 output directory, or an error saying why not."""
        path = Path(directory) / "report.json"
        if not path.exists():
            raise X2Error(f"{directory}: not an x2 output directory (report.json is missing)")
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise X2Error(f"{path}: unreadable ({exc}); convert again") from exc
        if isinstance(doc, dict) and "version" not in doc:
            raise X2Error(f"{path}: written by x2 {doc.get('x2_version', '?')} before reports "
                          f"had a contract version; convert again")
        try:
            return _from_json(Report, doc, str(path))
        except TypeError as exc:  # a required field is missing
            raise X2Error(f"{path}: {exc}; convert again") from exc
