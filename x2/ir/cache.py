"""The interface of a decoder that carries its cache, as exported decoders
name it (optimum's ONNX names): inputs `input_ids`, `attention_mask` (over
cached and new tokens), optional `position_ids`, and `past_key_values.N.key`
/ `.value` [batch, heads, cached, dim]; outputs `logits` [batch, new, vocab]
first, then `present.N.key` / `.value`, the cache after the new tokens.
x2 check --generate drives such a model, and the Python emitters give it a
`generate` method."""
from __future__ import annotations

import re

_PAST = re.compile(r"past_key_values\.(\d+)\.(key|value)\Z")
_PRESENT = re.compile(r"present\.(\d+)\.(key|value)\Z")


def _key(name: str) -> tuple:
    found = _PAST.match(name) or _PRESENT.match(name)
    return int(found.group(1)), found.group(2)


def cache_pairs(inputs: list[str], outputs: list[str]) -> dict[str, str] | None:
    """Each past input -> the present output that replaces it (in input
    order), or None when the names are not a decoder with its cache."""
    past = [n for n in inputs if _PAST.match(n)]
    present = {_key(n): n for n in outputs if _PRESENT.match(n)}
    if not past or "input_ids" not in inputs or "attention_mask" not in inputs or \
            not outputs or outputs[0] != "logits" or \
            sorted(_key(n) for n in past) != sorted(present):
        return None
    return {n: present[_key(n)] for n in past}
