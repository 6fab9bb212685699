"""TensorFlow's functional control flow with a condition known only at run
time: If/StatelessIf become the IR's `if`, Case/StatelessCase nested `if`s,
While/StatelessWhile its `loop`.
The direct reader (x2/frontends/tf/control.py) reads the branches, the
condition and the body from the function library as subgraphs."""
from __future__ import annotations

from x2.registry import tf_mapper

from .._control import emit_case, emit_if, emit_while


@tf_mapper("If", "StatelessIf")
def if_(ctx, op):
    """tf.cond: then_branch / else_branch on the operands."""
    emit_if(ctx, op, op.inputs[0], list(op.inputs[1:]), op.attrs["then_branch"],
            op.attrs["else_branch"])


@tf_mapper("Case", "StatelessCase")
def case(ctx, op):
    """tf.switch_case: nested ifs on index == k; an index out of range runs the last branch."""
    emit_case(ctx, op, op.inputs[0], list(op.inputs[1:]),
              [op.attrs[f"branch_{k}"] for k in range(op.attrs["branches"])])


@tf_mapper("While", "StatelessWhile")
def while_(ctx, op):
    """tf.while_loop: the state the body changes is carried, the rest passed in."""
    # v1 loops (x2/frontends/tf/v1_control.py) may also collect a TensorArray
    # written per step: body outputs after the carried state, node outputs too.
    count = op.attrs["carried"]
    emit_while(ctx, op, list(op.inputs[:count]), list(op.inputs[count:]),
               op.attrs["cond_graph"], op.attrs["body_graph"], op.outputs)
