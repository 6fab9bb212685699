"""Greedy generation with a decoder that carries its cache at its interface
(`x2 check --generate N`): the same loop drives the source framework and
every runner of the converted model, each in its own worker, and the tokens
and each step's logits are compared.

The interface is the one exported decoders have (x2/ir/cache.py). Prompts
are left padded, as batched generation pads them: the first step feeds
every prompt token with an empty cache (one masked slot, see `greedy`), each
later step the token chosen last, position ids counting only the tokens the
mask keeps. Pure numpy: each worker passes its framework's
`step(inputs) -> outputs`."""
from __future__ import annotations

import numpy as np

from ..errors import SelectionError
from ..ir.cache import cache_pairs

PROMPT_LENGTHS = (3, 9, 17)


def interface(inputs: list[dict], outputs: list[str]) -> dict:
    """What the loop needs from a model's interface (report.json inputs and
    output names); a clear error naming what is missing otherwise."""
    names = [i["name"] for i in inputs]
    pairs = cache_pairs(names, outputs)
    if pairs is None:
        raise SelectionError(
            "x2 check --generate needs a decoder with its cache at the interface: inputs "
            "input_ids, attention_mask, past_key_values.N.key/value (position_ids optional), "
            f"outputs logits then present.N.key/value; this model has inputs {names} and "
            f"outputs {outputs}")
    shapes = {i["name"]: i["shape"] for i in inputs}
    for name in pairs:
        shape = shapes[name]
        if len(shape) != 4 or not all(isinstance(d, int) for d in (shape[1], shape[3])):
            raise SelectionError(f"x2 check --generate: cache input '{name}' has shape {shape}; "
                                 "expected [batch, heads, cached, dim] with heads and dim known")
    return {"inputs": names, "outputs": outputs, "past": list(pairs),
            "present": {n: outputs.index(p) for n, p in pairs.items()},
            "cache_shape": {n: [shapes[n][1], shapes[n][3]] for n in pairs}}


def prompts(vocab: int, seed: int, lengths=PROMPT_LENGTHS) -> tuple[np.ndarray, np.ndarray]:
    """Token ids [batch, longest] and their mask, each prompt left padded."""
    rng = np.random.default_rng(seed)
    longest = max(lengths)
    ids = np.zeros((len(lengths), longest), np.int64)
    mask = np.zeros((len(lengths), longest), np.int64)
    for row, length in enumerate(lengths):
        ids[row, longest - length:] = rng.integers(0, vocab, length)
        mask[row, longest - length:] = 1
    return ids, mask


def greedy(step, spec: dict, ids: np.ndarray, mask: np.ndarray, new_tokens: int,
           dtype: str = "float32") -> dict:
    """Generate `new_tokens` tokens greedily; returns the tokens [batch, new]
    and the last position's logits of every step [steps, batch, vocab]."""
    batch = ids.shape[0]
    # The first step's cache is one slot the mask hides, not an empty one:
    # Paddle Inference's oneDNN kernels (3.3) crash on a zero-length cache, and
    # a masked key changes no logit.
    cache = {n: np.zeros((batch, heads, 1, dim), dtype)
             for n, (heads, dim) in spec["cache_shape"].items()}
    mask = np.concatenate([np.zeros((batch, 1), mask.dtype), mask], axis=1)
    tokens, logits = [], []
    new = ids
    for _ in range(new_tokens):
        positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0)[:, -new.shape[1]:]
        feed = {"input_ids": new, "attention_mask": mask, "position_ids": positions, **cache}
        outputs = step([feed[n] for n in spec["inputs"]])
        last = np.asarray(outputs[0])[:, -1]
        logits.append(last)
        new = last.argmax(axis=-1).astype(np.int64)[:, None]
        tokens.append(new[:, 0])
        mask = np.concatenate([mask, np.ones((batch, 1), mask.dtype)], axis=1)
        cache = {n: np.asarray(outputs[i]) for n, i in spec["present"].items()}
    return {"tokens": np.stack(tokens, axis=1), "logits": np.stack(logits)}


def run(args: dict, step) -> dict:
    """Worker side: greedy generation from each prompts file of a run task
    (`args["generate"]`: the interface and how many tokens), saved as
    tokens and logits."""
    from .compare import each_run
    what = args["generate"]
    for (ids, mask), out in each_run(args):
        result = greedy(step, what["spec"], ids, mask, what["new_tokens"], what["cache_dtype"])
        np.savez(out, **result)
    return {}
