"""PyTorch modules with torch.export's higher-order control flow, for
tests/test_control_flow.py (loaded as FILE:factory)."""
import torch
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop


class Gate(torch.nn.Module):
    """torch.cond on a data-dependent predicate; both branches use layers."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.inp = torch.nn.Linear(4, 6)
        self.up = torch.nn.Linear(6, 6)
        self.out = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        h = torch.cond(h.mean() > 0, lambda h: torch.relu(self.up(h)) * 2.0,
                       lambda h: h - 1.0, (h,))
        return self.out(h)


class Doubling(torch.nn.Module):
    """while_loop with a trip count that depends on the input's values."""
    def forward(self, x, limit):
        def cond(i, y):
            return y.abs().sum() < limit.sum()
        def body(i, y):
            return i + 1, y * 2.0 + 0.5
        steps, y = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
        return y, steps


def gate():
    return Gate().eval()


def doubling():
    return Doubling().eval()


class Running(torch.nn.Module):
    """scan over time (dim 0 of a [T, 3] input): a carried state through a
    layer, stacked outputs; and a reverse scan over dim 1 of its transpose."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(1)
        self.cell = torch.nn.Linear(3, 3)
        self.h0 = torch.nn.Parameter(torch.randn(3) * 0.5)

    def forward(self, xs):
        def step(h, x):
            h = torch.tanh(self.cell(x) + h * 0.5)
            return h, h * 2.0 + x

        def suffix(total, x):
            total = total + x
            return total, total * x

        h, ys = scan(step, self.h0, xs)
        total, zs = scan(suffix, torch.zeros(3), xs.t(), dim=1, reverse=True)
        return h, ys, total, zs


def running():
    return Running().eval()


class ScriptedLoops(torch.nn.Module):
    """For torch.jit.script (tests/test_control_flow.py): a for loop over
    dim 0 of `xs` through a layer (its trip count the input's size) with a
    loop over dim 1 nested in it, a
    branch on a value (prim::If), then a while loop doubling the state
    until it passes `limit` (its trip count the input's values)."""
    def __init__(self):
        super().__init__()
        torch.manual_seed(2)
        self.cell = torch.nn.Linear(3, 3)

    def forward(self, xs, limit):
        h = torch.zeros(xs.size(1), 3)
        for i in range(xs.size(0)):
            h = torch.tanh(self.cell(xs[i]) + h)
            for j in range(xs.size(1)):   # nested: its trip count read inside the outer loop
                h = h * 0.75 + 0.125
        if bool(h.mean() > 0):
            y = h - 1.0
        else:
            y = h + 1.0
        while bool(y.abs().sum() < limit.abs().sum() * 8.0):
            y = y * 2.0 + 0.5
        return y, h


def save_scripted_loops(path) -> str:
    """ScriptedLoops scripted and saved as a TorchScript file at `path`."""
    torch.jit.save(torch.jit.script(ScriptedLoops().eval()), str(path))
    return str(path)
