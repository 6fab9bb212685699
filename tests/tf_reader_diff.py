"""Read one SavedModel signature with both TF readers (direct and TensorFlow)
and print, as JSON, which reader the direct path used and every difference
between the two SourceGraphs: names, op types, attributes, dtypes, shapes,
constant values. Run in a subprocess (it imports TensorFlow).

    python tests/tf_reader_diff.py SAVEDMODEL [SIGNATURE]
"""
from __future__ import annotations

import json
import sys

import numpy as np


def _public(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if not k.startswith("_")}


def diff(path: str, signature: str | None) -> dict:
    from x2.frontends.common import select_subgraph
    from x2.frontends.tf import savedmodel
    from x2.contracts import ReadRequest
    from x2.frontends.tf.direct import NeedsTensorFlow, read_savedmodel_direct
    from x2.frontends.tf.opdefs import OUTPUTS
    try:
        direct = read_savedmodel_direct(path, signature)
    except NeedsTensorFlow as exc:
        return {"reader": "tensorflow", "why": str(exc)}
    ref, _ = savedmodel.read(path, ReadRequest(path, signature=signature))
    problems = []
    for what in ("inputs", "outputs", "input_aliases", "output_aliases"):
        if getattr(direct, what) != getattr(ref, what):
            problems.append(f"{what}: {getattr(direct, what)} != {getattr(ref, what)}")
    # The TF reader keeps ReadVariableOp as Identity(Const); the direct one folds it.
    ref_ops = {op.name: op for op in ref.ops}
    needed = {op.name for op in select_subgraph(ref, None, None).ops}
    for op in direct.ops:
        other = ref_ops.get(op.name)
        if other is None:
            problems.append(f"{op.name}: only the direct reader has it")
            continue
        if op.const_value is not None:
            value = other.const_value if other.const_value is not None else \
                _const_behind(ref, ref_ops, other)
            if value is None or value.dtype != op.const_value.dtype or \
                    not np.array_equal(value, op.const_value):
                problems.append(f"{op.name}: constant differs")
            continue
        if op.type != other.type:
            problems.append(f"{op.name}: type {op.type} != {other.type}")
        # Ops x2 does not map lack their defaults (they are only reported).
        if op.type in OUTPUTS and _public(op.attrs) != _public(other.attrs):
            problems.append(f"{op.name}: attrs {_public(op.attrs)} != {_public(other.attrs)}")
        if op.inputs != other.inputs and [_through_identity(ref_ops, v) for v in other.inputs] \
                != op.inputs:
            problems.append(f"{op.name}: inputs {op.inputs} != {other.inputs}")
        for value in op.outputs:
            if not _same_or_finer(direct.info.get(value), ref.info.get(value)):
                problems.append(f"{value}: {direct.info.get(value)} != {ref.info.get(value)}")
    missing = sorted(n for n in needed if n not in {op.name for op in direct.ops}
                     and ref_ops[n].type != "Identity" and ref_ops[n].const_value is None)
    problems += [f"{n}: only the TensorFlow reader has it" for n in missing]
    return {"reader": "direct", "ops": len(direct.ops), "problems": problems}


def _same_or_finer(mine, theirs) -> bool:
    """Equal, or the direct reader knows dims that TF's re-import lost: functions
    record the shapes TF inferred when tracing, before freezing."""
    if mine is None or theirs is None or mine.dtype != theirs.dtype:
        return mine == theirs
    if theirs.shape is None:
        return True
    return mine.shape is not None and len(mine.shape) == len(theirs.shape) and all(
        b is None or a == b for a, b in zip(mine.shape, theirs.shape))


def _through_identity(ops: dict, value: str) -> str:
    """Inputs the TF reader routes through function-boundary Identity nodes."""
    while value in ops and ops[value].type == "Identity" and value.startswith("Func/"):
        value = ops[value].inputs[0]
    return value


def _const_behind(source, ops: dict, op):
    while op is not None and op.type == "Identity":
        op = ops.get(op.inputs[0])
    return None if op is None else op.const_value


if __name__ == "__main__":
    print(json.dumps(diff(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
