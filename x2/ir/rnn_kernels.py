"""Numpy reference kernels of the recurrent IR ops (`lstm`, `gru`, `rnn`).

They follow the ONNX operators (LSTM, GRU, RNN with their default
activations) in weights and gate order, and PyTorch's time-major output:
`y` is [seq, batch, directions * hidden] (forward half first), the final
states are [directions, batch, hidden]. With `seq_lens`, steps at or past a
sequence's length give zeros in `y` and leave the state alone, so the final
state is the one at the sequence's last step (forward) or its first
(reverse), as ONNX, `pack_padded_sequence` and Paddle's `sequence_length` do.

Gate orders in the weights (rows of `w`, `r`, and of each half of `b`):
  lstm: i, o, f, c      gru: z, r, h      rnn: one block
"""
from __future__ import annotations

import numpy as np

GATES = {"lstm": 4, "gru": 3, "rnn": 1}


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _lstm_cell(x_gates, h, c, r, rb, a):
    gates = x_gates + h @ r.T + rb
    i, o, f, g = np.split(gates, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c), c


def _gru_cell(x_gates, h, c, r, rb, a):
    xz, xr, xh = np.split(x_gates, 3, axis=-1)
    rz, rr, rh = np.split(r, 3, axis=0)
    bz, br, bh = np.split(rb, 3, axis=-1)
    z = _sigmoid(xz + h @ rz.T + bz)
    reset = _sigmoid(xr + h @ rr.T + br)
    if a["linear_before_reset"]:
        candidate = np.tanh(xh + reset * (h @ rh.T + bh))
    else:
        candidate = np.tanh(xh + (reset * h) @ rh.T + bh)
    return (1.0 - z) * candidate + z * h, c


def _rnn_cell(x_gates, h, c, r, rb, a):
    pre = x_gates + h @ r.T + rb
    return (np.tanh(pre) if a["activation"] == "tanh" else np.maximum(pre, 0.0)), c


_CELLS = {"lstm": _lstm_cell, "gru": _gru_cell, "rnn": _rnn_cell}


def recurrent(kind: str):
    """The kernel of IR op `kind`: inputs x w r b? seq_lens? h0? (c0? for lstm)."""
    cell = _CELLS[kind]

    def kernel(xs, a):
        x, w, r = xs[0], xs[1], xs[2]
        b, lens, h0 = (xs + [None] * 6)[3:6]
        c0 = xs[6] if kind == "lstm" and len(xs) > 6 else None
        if a["batch_first"]:
            x = np.swapaxes(x, 0, 1)
        steps, batch = x.shape[:2]
        hidden = a["hidden_size"]
        dirs = w.shape[0]
        lens = np.full(batch, steps) if lens is None else np.asarray(lens).astype(np.int64)
        reverse_flags = {"forward": [False], "reverse": [True],
                         "bidirectional": [False, True]}[a["direction"]]
        ys, hs, cs = [], [], []
        for d, reverse in enumerate(reverse_flags):
            gates = GATES[kind] * hidden
            wb, rb = (np.zeros(gates, x.dtype),) * 2 if b is None else np.split(b[d], 2)
            h = np.zeros((batch, hidden), x.dtype) if h0 is None else h0[d]
            c = np.zeros((batch, hidden), x.dtype) if c0 is None else c0[d]
            y = np.zeros((steps, batch, hidden), x.dtype)
            for t in (reversed(range(steps)) if reverse else range(steps)):
                h_new, c_new = cell(x[t] @ w[d].T + wb, h, c, r[d], rb, a)
                live = (t < lens)[:, None]
                h, c = np.where(live, h_new, h), np.where(live, c_new, c)
                y[t] = np.where(live, h_new, 0.0)
            ys.append(y)
            hs.append(h)
            cs.append(c)
        assert len(ys) == dirs
        y = np.concatenate(ys, axis=-1)
        if a["batch_first"]:
            y = np.swapaxes(y, 0, 1)
        out = [y.astype(x.dtype), np.stack(hs).astype(x.dtype)]
        return out + ([np.stack(cs).astype(x.dtype)] if kind == "lstm" else [])

    return kernel
