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


def seq2seq_interface(encoder: tuple[list[dict], list[str]],
                      decoder: tuple[list[dict], list[str]]) -> dict:
    """What the encoder-decoder loop needs from its two models' interfaces
    ((report.json inputs, output names) of each; x2/frontends/torch/
    seq2seq_cache.py names them); a clear error naming what is missing."""
    enc_inputs = [i["name"] for i in encoder[0]]
    dec_inputs = [i["name"] for i in decoder[0]]
    past = [n for n in dec_inputs if n.startswith("past_key_values.")]
    present = {n: n.replace("past_key_values.", "present.", 1) for n in past}
    if enc_inputs != ["input_ids", "attention_mask"] or \
            dec_inputs[:2] != ["input_ids", "encoder_attention_mask"] or not past or \
            encoder[1][0] != "logits" or decoder[1][0] != "logits" or \
            any(p not in encoder[1] for p in present.values()) or \
            any(p not in decoder[1] for n, p in present.items() if ".decoder." in n):
        raise SelectionError(
            "x2 check --generate --encoder: needs the two models `x2 convert --with-cache "
            "--part encoder|decoder` writes (encoder: input_ids, attention_mask -> logits, "
            "present.N.decoder/encoder.key/value; decoder: input_ids, encoder_attention_mask, "
            f"past_key_values.N.decoder/encoder.key/value -> logits, present.N.decoder.key/"
            f"value); these have inputs {enc_inputs} and {dec_inputs}")
    return {"seq2seq": True, "inputs": dec_inputs,
            "first": {n: encoder[1].index(p) for n, p in present.items()},
            "present": {n: decoder[1].index(p) for n, p in present.items()
                        if ".decoder." in n}}


def greedy_seq2seq(encode, decode, spec: dict, ids: np.ndarray, mask: np.ndarray,
                   new_tokens: int) -> dict:
    """Generate `new_tokens` target tokens greedily: the encoder model gives
    the first token's logits and both caches, the decoder model each later
    token's, the cross-attention cache unchanged. Returns what `greedy` does."""
    outputs = encode([ids, mask])
    cache = {n: np.asarray(outputs[i]) for n, i in spec["first"].items()}
    logits = [np.asarray(outputs[0])[:, -1]]
    for _ in range(new_tokens - 1):
        new = logits[-1].argmax(axis=-1).astype(np.int64)[:, None]
        feed = {"input_ids": new, "encoder_attention_mask": mask, **cache}
        outputs = decode([feed[n] for n in spec["inputs"]])
        logits.append(np.asarray(outputs[0])[:, -1])
        cache.update({n: np.asarray(outputs[i]) for n, i in spec["present"].items()})
    logits = np.stack(logits)
    return {"tokens": logits.argmax(axis=-1).T.astype(np.int64), "logits": logits}


def run(args: dict, steps, native=None) -> dict:
    """Worker side: greedy generation from each prompts file of a run task
    (`args["generate"]`: the interface and how many tokens), saved as tokens
    and logits. `steps(part)` gives the model's step function (part:
    "encoder" or "decoder" for an encoder-decoder's two models, None for a
    decoder); `native(ids, mask, n)`, where the source framework has its own
    generation, gives its tokens, saved too."""
    from .compare import each_run
    what = args["generate"]
    spec = what["spec"]
    if spec.get("seq2seq"):
        encode, decode = steps("encoder"), steps("decoder")
    else:
        step = steps(None)
    for (ids, mask), out in each_run(args):
        if spec.get("seq2seq"):
            result = greedy_seq2seq(encode, decode, spec, ids, mask, what["new_tokens"])
        else:
            result = greedy(step, spec, ids, mask, what["new_tokens"], what["cache_dtype"])
        if native is not None:
            result["native_tokens"] = native(ids, mask, what["new_tokens"])
        np.savez(out, **result)
    return {}
