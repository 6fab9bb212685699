"""The `generate` method of a converted decoder that carries its cache
(x2/ir/cache.py): greedy decoding written out in model.py, so that a user
generates with the converted model as they would with the source.

Prompts are left padded (attention_mask 0 on the padding); each step feeds
the new tokens, the mask over cached and new tokens, position ids counting
only the kept tokens, and the cache the step before returned. The cache
starts as one slot the mask hides: a masked key changes no logit, and
Paddle Inference's oneDNN kernels (3.3) crash on a zero-length cache."""
from __future__ import annotations

from ..ir.cache import cache_pairs

_FEEDS = {"input_ids": "new_ids", "attention_mask": "attention_mask",
          "position_ids": "position_ids"}

# framework -> the code of each step, filled in with the model's interface
_TEMPLATES = {
    "PyTorch": '''    @torch.no_grad()
    def generate(self, input_ids, attention_mask, max_new_tokens):
        """Greedy decoding with the cache: the new tokens [batch, max_new_tokens]
        after each prompt (prompts left padded, attention_mask 0 on the padding)."""
        batch = input_ids.shape[0]
        # One cache slot the mask hides to start with: it changes no logit.
        past = [{zeros}]
        hidden = torch.zeros_like(attention_mask[:, :1])
        attention_mask = torch.cat([hidden, attention_mask], dim=1)
        new_ids, tokens = input_ids, []
        for _ in range(max_new_tokens):
            kept = attention_mask.cumsum(1) - 1
            position_ids = kept.clamp(min=0)[:, -new_ids.shape[1]:].to(torch.int64)
            outputs = self({call})
            new_ids = outputs[0][:, -1].argmax(-1, keepdim=True)
            tokens.append(new_ids)
            attention_mask = torch.cat([attention_mask, torch.ones_like(hidden)], dim=1)
            past = {presents}
        return torch.cat(tokens, dim=1)''',
    "Paddle": '''    @paddle.no_grad()
    def generate(self, input_ids, attention_mask, max_new_tokens):
        """Greedy decoding with the cache: the new tokens [batch, max_new_tokens]
        after each prompt (prompts left padded, attention_mask 0 on the padding)."""
        batch = input_ids.shape[0]
        # One cache slot the mask hides to start with: it changes no logit.
        past = [{zeros}]
        hidden = paddle.zeros_like(attention_mask[:, :1])
        attention_mask = paddle.concat([hidden, attention_mask], axis=1)
        new_ids, tokens = input_ids, []
        for _ in range(max_new_tokens):
            kept = paddle.cumsum(attention_mask, axis=1) - 1
            kept = paddle.clip(kept, min=0)[:, -new_ids.shape[1]:]
            position_ids = paddle.cast(kept, 'int64')
            outputs = self({call})
            new_ids = paddle.argmax(outputs[0][:, -1], axis=-1, keepdim=True)
            tokens.append(new_ids)
            attention_mask = paddle.concat([attention_mask, paddle.ones_like(hidden)], axis=1)
            past = {presents}
        return paddle.concat(tokens, axis=1)''',
}
_ZEROS = {"PyTorch": "torch.zeros([batch, {heads}, 1, {dim}], dtype=torch.{dtype})",
          "Paddle": "paddle.zeros([batch, {heads}, 1, {dim}], dtype='{dtype}')"}


def generate_method(graph, framework: str) -> str | None:
    """The method's text for `graph`'s interface, or None when it is not a
    decoder with its cache (or takes inputs the loop cannot fill)."""
    pairs = cache_pairs(list(graph.inputs), list(graph.outputs))
    if pairs is None or framework not in _TEMPLATES:
        return None
    past = list(pairs)
    shapes = {n: graph.shape(n) for n in past}
    if any(s is None or len(s) != 4 or not all(isinstance(d, int) for d in (s[1], s[3]))
           for s in shapes.values()) or \
            any(n not in _FEEDS and n not in pairs for n in graph.inputs):
        return None
    zeros = [_ZEROS[framework].format(heads=shapes[n][1], dim=shapes[n][3],
                                      dtype=graph.dtype(n)) for n in past]
    zeros = f"{zeros[0]} for _ in range({len(zeros)})" if len(set(zeros)) == 1 \
        else ", ".join(zeros)
    inputs, outputs = list(graph.inputs), list(graph.outputs)
    head = inputs[:len(inputs) - len(past)]
    if inputs[len(head):] == past:  # the cache last, in order: `*past`
        call = [_FEEDS[n] for n in head] + ["*past"]
    else:
        call = [_FEEDS[n] if n in _FEEDS else f"past[{past.index(n)}]" for n in inputs]
    at = [outputs.index(pairs[n]) for n in past]
    presents = f"list(outputs[{at[0]}:])" if at == list(range(at[0], len(outputs))) else \
        "[" + ", ".join(f"outputs[{i}]" for i in at) + "]"
    return _TEMPLATES[framework].format(zeros=zeros, call=", ".join(call), presents=presents)
