"""TorchScript loops whose trip count or condition the input decides
(`for i in range(x.size(0))`, `while bool(y.sum() < limit)`), read as
torch.export's `while_loop` (issue 49).

torch's TorchScript-to-export converter (TS2EPConverter) unrolls a
prim::Loop whose trip count is a constant and refuses any other. While it
converts, `loops_as_while_loop()` gives its graph converter a prim::Loop
conversion that calls `_script_loop` instead: the loop's block (already an
FX GraphModule) becomes the body of a `while_loop` over (iteration,
keep going, loop-carried values...), which torch.export then captures like
any other, and x2 reads as the IR's `loop` (mappers/torch/control.py).
prim::If already converts (torch.cond)."""
from __future__ import annotations

import contextlib
import operator
import re

_NO_TRIP_COUNT = 2 ** 63 - 1
_WHERE = re.compile(r'File "([^"]+)", line (\d+)')


def _script_loop(body, trip, keep_going, carried: int, *values):
    """prim::Loop(trip, keep_going, values[:carried]) over `body`, a block
    taking (values read from outside..., iteration, carried values...) and
    giving (keep going, new carried values...)."""
    import torch
    from torch._higher_order_ops.while_loop import while_loop
    state, outside = values[:carried], values[carried:]
    # while_loop refuses a carried value that is also read from outside
    # (`y = x` then `y = y + x[i]`): the state starts from a copy
    state = [v.clone() if any(v is o for o in outside) else v for v in state]
    # TorchScript writes a while loop as a loop of at most 2**63 - 1 steps:
    # none is a loop on its condition alone.
    bounded = not (isinstance(trip, int) and trip == _NO_TRIP_COUNT)
    trip = _scalar(trip, torch.int64)

    def go_on(step, again, *state):
        # (a while_loop condition may not return its input itself)
        return again & (step < trip) if bounded else again.clone()

    def step_once(step, again, *state):
        # the block takes the iteration as a Python int (x[i] is aten::select.int)
        out = body(*outside, step.item(), *state)
        return (step + 1, _scalar(out[0], torch.bool), *out[1:1 + carried])

    start = (torch.zeros((), dtype=torch.int64), _scalar(keep_going, torch.bool))
    return tuple(while_loop(go_on, step_once, (*start, *state))[2:])


def _scalar(value, dtype):
    """A 0-d tensor of a number, a size or a tensor: made by an op (torch.full),
    not a constant torch.export would lift out of the loop's body."""
    import torch
    if isinstance(value, torch.Tensor):
        return value.reshape(()) if value.dtype == dtype else value.reshape(()).to(dtype)
    return torch.full((), value, dtype=dtype)


def _convert_loop(original, made: list):
    def convert_prim_Loop(self, node):
        try:
            self._check_prim_loop_support(node)
        except RuntimeError:
            pass   # a run-time trip count or condition: a while_loop below
        else:
            return original(self, node)   # a constant trip count: torch unrolls it
        inputs = list(node.inputs())
        trip = self.get_fx_value_by_ir_value(inputs[0])
        keep_going = self.get_fx_value_by_ir_value(inputs[1])
        carried = [value.debugName() for value in inputs[2:]]
        outside = self._identify_inputs_as_arguments(node)
        for block in node.blocks():
            outside = outside.union(self.blocks_to_lifted_attrs[block])
        outside = sorted(outside)
        blocks, converters = self._convert_block_to_subgraph(node, outside)
        written = sorted(converters[0].name_update_from_subblock_to_parent)
        if written:
            raise RuntimeError(f"prim::Loop writes in place to a value from outside the loop "
                               f"({', '.join(written)})")
        values = [self.get_fx_value_by_fqn(name) for name in carried + outside]
        found = _WHERE.search(node.sourceRange())
        made.append(f"{found[1].rsplit('/', 1)[-1]}, line {found[2]}" if found else "")
        loop = self.fx_graph.call_function(_script_loop, (blocks[0], trip, keep_going,
                                                          len(carried), *values))
        for i, out in enumerate(node.outputs()):
            self.name_to_node[out.debugName()] = self.fx_graph.call_function(
                operator.getitem, (loop, i))
    return convert_prim_Loop


@contextlib.contextmanager
def loops_as_while_loop():
    """TS2EPConverter, within, converts run-time loops (the worker runs one
    conversion at a time, so the class attribute is ours meanwhile). Yields
    the list of the loops it made while_loops of (where each is), for the
    error when torch.export then cannot capture one."""
    from torch._export import converter
    graph_converter = converter.TS2FXGraphConverter
    original = graph_converter.convert_prim_Loop
    made: list[str] = []
    graph_converter.convert_prim_Loop = _convert_loop(original, made)
    try:
        yield made
    finally:
        graph_converter.convert_prim_Loop = original


def refusal(made: list[str], exc: Exception) -> str:
    """Why a scripted model whose loops became while_loops did not capture."""
    where = f" (at {made[0]})" if made and made[0] else ""
    return (f"torch.export could not capture the TorchScript module's run-time loop{where} "
            f"as a while_loop: {type(exc).__name__}: "
            f"{(str(exc).strip().splitlines() or [''])[0].rstrip(':')}. x2 reads a scripted "
            f"loop whose loop-carried values are tensors of a fixed shape (not Python numbers "
            f"such as a counter `n += 1`, nor lists) and that writes no tensor from outside "
            f"it in place (`out[i] = ...`); else give x2 the nn.Module (file.py:factory), a "
            f"torch.jit.trace of it, or an ONNX export of it")
