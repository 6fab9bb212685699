"""Recurrent layers x2 writes into model.py itself, where the framework has no
layer computing what the IR op does. Source text of x2's own (no model
string reaches it); each class is defined once, before `Model`.

GRUResetBefore is the IR `gru` with linear_before_reset=0 (ONNX's default,
Keras GRU(reset_after=False)): the reset gate scales the state before the
recurrent matmul, where torch's and Paddle's nn.GRU scale the matmul's
result. It follows x2/ir/rnn_kernels.py step for step. One template serves
both frameworks; the `{...}` fields are their spellings (spelling.py). In
Paddle, jit.save traces the loop over time with the number of steps known
(paddle_ops.py refuses a dynamic one)."""
from __future__ import annotations

from .spelling import FRAGMENTS, KEYWORDS, spelling

_GRU_RESET_BEFORE = '''class GRUResetBefore({Module}):
    """A GRU whose reset gate scales the state before the recurrent matmul
    (ONNX GRU linear_before_reset=0, Keras GRU(reset_after=False)); nn.GRU
    scales the matmul's result instead. Weights keep ONNX's layout and gate
    order z, r, h: weight_ih [directions, 3 * hidden, input], weight_hh
    [directions, 3 * hidden, hidden], bias [directions, 6 * hidden] (input
    half, then recurrent half). Returns y [steps, batch, directions * hidden]
    (batch first if batch_first) and the final states [directions, batch,
    hidden]. With `lengths`, a sequence's steps from its length on give zeros
    and leave its state alone (a reverse direction starts at its last step)."""

    def __init__(self, input_size, hidden_size, directions=1, reverse=False, bias=True,
                 batch_first=False):
        super().__init__()
        self.hidden_size = hidden_size
        self.batch_first = batch_first
        self.reverse = [True] if reverse else [False, True][:directions]
        self.weight_ih = {weight_ih}
        self.weight_hh = {weight_hh}
        self.bias = {bias} if bias else None

    def forward(self, x, h0=None, lengths=None):
        if self.batch_first:
            x = x{swap_first_axes}
        hidden = self.hidden_size
        ys, finals = [], []
        for d, reverse in enumerate(self.reverse):
            gates = x @ self.weight_ih[d].T  # every step's input gates at once
            w_zr, w_h = self.weight_hh[d].split([2 * hidden, hidden])
            if self.bias is not None:
                b_ih, b_hh = self.bias[d].chunk(2)
                gates = gates + b_ih
            else:
                b_hh = {zeros_like}(self.weight_hh[d, :, 0])
            b_zr, b_h = b_hh.split([2 * hidden, hidden])
            h = {zeros_like}(gates[0, :, :hidden]) if h0 is None else h0[d]
            steps = [None] * x.shape[0]
            order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
            for t in order:
                x_zr, x_h = gates[t].split([2 * hidden, hidden], {axis}=-1)
                z, r = {sigmoid}(x_zr + h @ w_zr.T + b_zr).chunk(2, {axis}=-1)
                candidate = {tanh}(x_h + (r * h) @ w_h.T + b_h)
                new = (1 - z) * candidate + z * h
                if lengths is None:
                    h, steps[t] = new, new
                else:
                    # one shape for where: Paddle's saved where broadcasts by adding zeros.
                    # Paddle Inference's where writes its result over its second operand:
                    # that is never `new`, which both read.
                    done = (t >= lengths).unsqueeze(-1).expand_as(new)
                    steps[t] = {where}(done, {zeros_like}(new), new)
                    h = {where}(done, h, new)
            ys.append({stack}(steps))
            finals.append(h)
        y = {concat}(ys, {axis}=-1)
        if self.batch_first:
            y = y{swap_first_axes}
        return y, {stack}(finals)'''


def gru_reset_before(framework: str) -> str:
    """The GRUResetBefore class in `framework`'s spelling."""
    names = {key: spelling(framework, key)[0]
             for key in ("Module", "zeros_like", "sigmoid", "tanh", "where", "stack", "concat")}
    fragments = FRAGMENTS[framework]
    parameter = fragments["parameter"]
    return _GRU_RESET_BEFORE.format(
        **names, axis=KEYWORDS[framework].get("axis", "axis"),
        swap_first_axes=fragments["swap_first_axes"],
        weight_ih=parameter.format(shape="directions, 3 * hidden_size, input_size"),
        weight_hh=parameter.format(shape="directions, 3 * hidden_size, hidden_size"),
        bias=parameter.format(shape="directions, 6 * hidden_size"))
