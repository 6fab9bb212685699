"""Keras recurrent layers that the direct SavedModel reader recognised in
their While loops (x2/frontends/tf/recurrent.py): one IR `lstm`/`gru`/`rnn`."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.frontends.tf.recurrent import RECURRENT_OP
from x2.registry import tf_mapper


@tf_mapper(RECURRENT_OP)
def keras_recurrent(ctx, op):
    """A Keras LSTM, GRU or SimpleRNN layer: the IR op of its kind, weights
    already in ONNX gate order; the loop's initial states become [1, batch, H]."""
    a = op.attrs
    kind = a.get("kind")
    if kind not in ("lstm", "gru", "rnn"):
        raise ConversionError(f"{op.type} '{op.name}': unknown recurrent kind {kind!r}")
    x, w, r, b, *states = op.inputs
    for value, what in ((w, "kernel"), (r, "recurrent kernel"), (b, "bias")):
        ctx.require_const(value, what)
    given = list(a.get("initial_states", []))
    if len(given) != len(states):
        raise ConversionError(f"{op.type} '{op.name}': {len(states)} initial states for "
                              f"positions {given}")
    slots = ["", ""]
    for position, state in zip(given, states):
        shape = ctx.shape(state)
        slots[position] = ctx.emit("unsqueeze", [state], {"axes": [0]},
                                   shape=None if shape is None else (1, *shape))
    inputs = [x, w, r, b, ""] + slots[:2 if kind == "lstm" else 1]
    while inputs[-1] == "":
        inputs.pop()
    attrs = {k: a[k] for k in ("hidden_size", "direction", "batch_first") if k in a}
    if kind == "gru":
        attrs["linear_before_reset"] = bool(a.get("linear_before_reset", True))
    if kind == "rnn":
        attrs["activation"] = a.get("activation", "tanh")
    ctx.emit(kind, inputs, attrs, outputs=op.outputs)
