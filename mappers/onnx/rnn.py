"""Recurrent layers: LSTM, GRU and RNN, each one IR op (`lstm`, `gru`, `rnn`)
that the emitters write as the target's own recurrent layer.

The IR ops keep ONNX's weights and gate order; their `y` is time-major
[seq, batch, dirs*hidden] like torch's, so ONNX's Y [seq, dirs, batch, hidden]
is a reshape and a transpose of it (which cancel against the Transpose and
Reshape torch.onnx.export writes after every LSTM)."""
from __future__ import annotations

from x2.errors import ConversionError
from x2.registry import onnx_mapper

from ._util import choice

_DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}


def _refuse(op, what: str):
    raise ConversionError(f"{op.type} '{op.name}': {what} is not supported (x2 writes the "
                          f"target's own recurrent layer, which has no such option)")


def _activation(op, directions: int) -> str | None:
    """The RNN's activation, or None for LSTM/GRU (whose defaults are checked)."""
    given = [a.decode() if isinstance(a, bytes) else a for a in op.attrs.get("activations", [])]
    if op.type == "RNN":
        given = given or ["Tanh"] * directions
        if len(set(given)) != 1 or given[0] not in ("Tanh", "Relu"):
            _refuse(op, f"activations={given}")
        return given[0].lower()
    default = _DEFAULT_ACTIVATIONS[op.type]
    if given and given != default * (len(given) // len(default)):
        _refuse(op, f"activations={given}")
    return None


def _present(op, index: int) -> str:
    return op.inputs[index] if len(op.inputs) > index and op.inputs[index] else ""


def _recurrent(ctx, op, kind: str, n_states: int):
    direction = choice(op, "direction", "forward", ("forward", "reverse", "bidirectional"))
    directions = 2 if direction == "bidirectional" else 1
    if "hidden_size" not in op.attrs:
        raise ConversionError(f"{op.type} '{op.name}': attribute hidden_size is missing")
    hidden = int(op.attrs["hidden_size"])
    if op.attrs.get("clip") is not None:
        _refuse(op, "clip")
    if op.attrs.get("input_forget", 0):
        _refuse(op, "input_forget=1")
    if kind == "lstm" and _present(op, 7):
        _refuse(op, "the peephole input P")
    layout = choice(op, "layout", 0, (0, 1))
    attrs = {"hidden_size": hidden, "direction": direction, "batch_first": bool(layout)}
    activation = _activation(op, directions)
    if kind == "rnn":
        attrs["activation"] = activation
    if kind == "gru":
        attrs["linear_before_reset"] = bool(op.attrs.get("linear_before_reset", 0))
    x_shape = ctx.shape(op.inputs[0])
    if x_shape is not None and len(x_shape) != 3:
        raise ConversionError(f"{op.type} '{op.name}': X has rank {len(x_shape)}, not 3")
    w_shape = ctx.shape(op.inputs[1])
    if w_shape is not None and w_shape[0] != directions:
        raise ConversionError(f"{op.type} '{op.name}': W holds {w_shape[0]} directions, "
                              f"direction={direction!r} needs {directions}")

    inputs = [op.inputs[0], op.inputs[1], op.inputs[2]] + \
        [_present(op, i) for i in range(3, 5 + n_states)]
    for i in range(5, len(inputs)):
        # Zero initial states are the default; a constant one also fixes the batch size
        # (torch.onnx.export writes zeros of the example's batch).
        state = ctx.graph.constants.get(inputs[i]) if inputs[i] else None
        if state is not None and not state.any():
            inputs[i] = ""
    while inputs[-1] == "":
        inputs.pop()
    batch = steps = None
    if x_shape is not None:
        steps, batch = (x_shape[1], x_shape[0]) if layout else (x_shape[0], x_shape[1])
    if layout:   # ONNX initial states are [batch, dirs, hidden] in layout 1
        for i in range(5, len(inputs)):
            if inputs[i]:
                inputs[i] = ctx.emit("transpose", [inputs[i]], {"perm": [1, 0, 2]},
                                     shape=(directions, batch, hidden))
    dtype = ctx.dtype(op.inputs[0])
    state_shape = (directions, batch, hidden)
    y_shape = (batch, steps, directions * hidden) if layout else \
        (steps, batch, directions * hidden)
    base = ctx.graph.fresh_name(f"{op.name}/{kind}")
    outs = [f"{base}:y"] + [f"{base}:state{i}" for i in range(n_states)]
    ctx.emit(kind, inputs, attrs, outputs=outs, dtype=dtype, shape=y_shape)
    for state in outs[1:]:
        ctx.graph.info[state] = type(ctx.graph.info[outs[0]])(dtype, state_shape)

    wanted = list(op.outputs) + [""] * (1 + n_states - len(op.outputs))
    if wanted[0]:
        # ONNX Y: [seq, dirs, batch, hidden] (layout 0) or [batch, seq, dirs, hidden].
        split_shape = (y_shape[0], y_shape[1], directions, hidden)
        if layout:
            ctx.emit("reshape", [outs[0]], {"shape": [0, 0, directions, hidden]},
                     outputs=[wanted[0]], shape=split_shape)
        else:
            split = ctx.emit("reshape", [outs[0]], {"shape": [0, 0, directions, hidden]},
                             shape=split_shape)
            ctx.emit("transpose", [split], {"perm": [0, 2, 1, 3]}, outputs=[wanted[0]],
                     shape=(steps, directions, batch, hidden))
    for mine, theirs in zip(outs[1:], wanted[1:]):
        if not theirs:
            continue
        if layout:   # ONNX Y_h/Y_c: [batch, dirs, hidden]
            ctx.emit("transpose", [mine], {"perm": [1, 0, 2]}, outputs=[theirs],
                     shape=(batch, directions, hidden))
        else:
            ctx.alias(theirs, mine)


@onnx_mapper("LSTM")
def lstm(ctx, op):
    """One IR `lstm` (gates i, o, f, c as ONNX; default activations, no
    peepholes, clip or input_forget)."""
    _recurrent(ctx, op, "lstm", 2)


@onnx_mapper("GRU")
def gru(ctx, op):
    """One IR `gru` (gates z, r, h as ONNX; `linear_before_reset` kept)."""
    _recurrent(ctx, op, "gru", 1)


@onnx_mapper("RNN")
def rnn(ctx, op):
    """One IR `rnn` with tanh or relu."""
    _recurrent(ctx, op, "rnn", 1)
