"""`x2 check --generate N`: greedy generation with the source framework and
with every runner of the converted model (x2/check/generate.py runs the loop
in each one's worker), from a batch of left-padded prompts of different
lengths. A runner passes when it chooses the same tokens at every step and
its logits at each step lie within the tolerance of the source's (compared
up to the first step whose token differs: after it the two decode different
text). Where the source framework generates by itself (transformers'
`generate`), its greedy tokens must equal the loop's on the source too.

An encoder-decoder converts as two models (x2 convert --with-cache --part
encoder|decoder): `converted` is the decoder, `encoder` the other one."""
from __future__ import annotations

import shutil

import numpy as np

from ..contracts import ReadOptions, ReadRequest, Report
from ..errors import SelectionError, X2Error
from ..process.isolation import run_step
from ..process.scratch import make_dir
from .compare import compare, precision_args
from .generate import PROMPT_LENGTHS, interface, prompts, seq2seq_interface
from .parity import PRECISION_TOLERANCES, SERVING_RUNS, SOURCE_RUNS, TARGET_RUNS


def check_generation(model: str, converted: str, *, source: str, target: str, new_tokens: int,
                     rtol: float | None = None, atol: float | None = None, seed: int = 0,
                     serving: bool = False, signature: str | None = None,
                     encoder: str | None = None) -> dict:
    if source not in SOURCE_RUNS or target not in TARGET_RUNS:
        raise X2Error(f"--from {source} --to {target}: generation is not supported")
    if new_tokens < 1:
        raise X2Error(f"--generate {new_tokens}: must be at least 1")
    report = Report.load(converted)
    if report.layout.get("io_transposes"):
        raise SelectionError("x2 check --generate: the converted model's inputs or outputs are "
                             "transposed (--io-layout); convert the decoder without it")
    outputs = [o["name"] for o in report.outputs]
    if encoder is not None:
        encoder_report = Report.load(encoder)
        spec = seq2seq_interface(
            (encoder_report.inputs, [o["name"] for o in encoder_report.outputs]),
            (report.inputs, outputs))
    else:
        spec = interface(report.inputs, outputs)
    dtypes = {i["name"]: i["dtype"] for i in report.inputs}
    vocab = (report.outputs[0].get("shape") or [None])[-1]
    if not isinstance(vocab, int):
        raise SelectionError("x2 check --generate: the vocabulary size (the last dim of "
                             "'logits') is unknown")
    written = (report.target_details.get("precision") or {}).get("precision", "fp32")
    default_rtol, default_atol = PRECISION_TOLERANCES[written]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    ids, mask = prompts(vocab, seed)
    cache = next(n for n in spec["inputs"] if n.startswith("past_key_values."))
    # A half-precision cache is fed as float32 (the source takes float32; the
    # runner casts to the dtype the model declares), as every other input is.
    half = dtypes[cache] in ("float16", "bfloat16")
    what = {"spec": spec, "new_tokens": new_tokens,
            "cache_dtype": "float32" if half else dtypes[cache]}
    work = make_dir("x2-generate-")
    try:
        np.savez(work / "prompts.npz", ids, mask)
        common = {"inputs": [str(work / "prompts.npz")], "generate": what, "device": "cpu",
                  "encoder": encoder}
        request = ReadRequest(model, signature=signature or report.source.get("signature"),
                              options=ReadOptions.from_json(report.source.get("options") or {}))
        run_step(SOURCE_RUNS[source], {**common, "request": request.to_json(),
                                       "names": spec["inputs"], "source": report.source,
                                       "outputs": [str(work / "source.npz")]})
        reference = dict(np.load(work / "source.npz"))
        native = _native_row(source, reference)
        rows, notes = [], []
        for task, mode in TARGET_RUNS[target] + (SERVING_RUNS.get(target, []) if serving
                                                  else []):
            if mode in ("jit.load", "inference") and not any(
                    f.startswith("inference/") for f in report.files):
                notes.append(f"{target} ({mode}) not run: no inference/ was written")
                continue
            result = run_step(task, {**common, "out": converted, "mode": mode,
                                     "outputs": [str(work / f"{mode}.npz")],
                                     **precision_args(report, "fp32")})
            notes.extend(result.get("notes", []))
            rows.append(_compare(f"{target}:{mode}", reference, dict(np.load(work / f"{mode}.npz")),
                                 rtol, atol, half=written != "fp32"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"passed": all(r["passed"] for r in rows) and (native is None or native["passed"]),
            "new_tokens": new_tokens, "source_generate": native,
            "prompt_lengths": list(PROMPT_LENGTHS), "rtol": rtol, "atol": atol, "seed": seed,
            "source_tokens": reference["tokens"].tolist(), "runners": rows,
            "notes": sorted(set(notes))}


def _compare(runner: str, reference: dict, got: dict, rtol: float, atol: float,
             half: bool = False) -> dict:
    """Tokens equal at every step, and each step's logits within tolerance up
    to the first step whose tokens differ (that step included). A model
    written in half precision (`half`) may part from the source where the
    source's top two tokens are tied within the tolerance (a near tie)."""
    ref_tokens, tokens = reference["tokens"], got["tokens"]
    differs = np.nonzero((ref_tokens != tokens).any(axis=0))[0]
    first = int(differs[0]) if differs.size else None
    compared = ref_tokens.shape[1] if first is None else first + 1
    worst, logits_ok = 0.0, True
    for s in range(compared):
        _, max_rel, _, _, ok = compare(reference["logits"][s], got["logits"][s], rtol, atol)
        worst, logits_ok = max(worst, max_rel), logits_ok and ok
    tie = first is not None and half and _near_tie(reference, got, first, rtol, atol)
    return {"runner": runner, "tokens_equal": first is None, "first_different_step": first,
            "steps_compared": compared, "max_rel": worst, "logits_passed": logits_ok,
            **({"near_tie": True} if tie else {}),
            "passed": (first is None or tie) and logits_ok}


def _near_tie(reference: dict, got: dict, step: int, rtol: float, atol: float) -> bool:
    """Whether every row whose token differs at `step` took one whose logit
    the source puts within the tolerance (of the step's largest |logit|) of
    its own top token's: rounding to half precision may pick either."""
    logits = np.asarray(reference["logits"][step], dtype=np.float64)   # [batch, vocab]
    want, have = reference["tokens"][:, step], got["tokens"][:, step]
    margin = atol + rtol * float(np.abs(logits).max())
    return all(logits[row, want[row]] - logits[row, have[row]] <= margin
               for row in np.nonzero(want != have)[0])


def _native_row(source: str, reference: dict) -> dict | None:
    """The source framework's own generation against the loop run on the
    source: the same tokens (its logits are the loop's own, not compared)."""
    if "native_tokens" not in reference:
        return None
    differs = np.nonzero((reference["native_tokens"] != reference["tokens"]).any(axis=0))[0]
    first = int(differs[0]) if differs.size else None
    return {"runner": f"{source}: transformers generate()", "tokens_equal": first is None,
            "first_different_step": first, "passed": first is None}
