"""Values Paddle Inference would overwrite: in paddle 3.3 its default CPU
config (oneDNN) runs an in-place pass that lets an op write its output over
its first input even where a later op still reads that input. Ops with a
oneDNN kernel (conv, matmul, add/sub/mul of floats, exp, relu, softmax, ...)
are left alone; the ops below are not, nor is almost any op on integers.
dygraph, paddle.jit.load and Paddle Inference with the pass deleted
(config.delete_pass("inplace_pass")) all compute the right values.

So the generated code gives such an op a copy of the value to overwrite
(`paddle.concat([x])`, which has no in-place form and which the pass keeps)
wherever the value is read again later or returned. Measured op by op
(tests/test_real_ops.py: test_values_read_again_survive_paddle_inference)."""
from __future__ import annotations

# IR ops whose float kernel Paddle Inference runs in place over their input.
FLOAT_IN_PLACE = frozenset({
    "div", "floor_div", "mod", "floor", "ceil", "cumsum", "log", "square", "reciprocal",
    "silu", "erf", "trilu",
    # where(cond, x, y) writes over x when the three come at one shape, as
    # the Paddle emitter writes them (a broadcast would have made a new x)
    "where",
    # the trigonometric family (sin, atan and asinh measured)
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"})
# IR ops that never write over an integer input there (no in-place form,
# or a kernel that does not use it); every other op on integers does.
INT_KEPT = frozenset({
    "cast", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "gather", "gather_elements", "gather_nd", "transpose", "slice", "strided_slice",
    "slice_dynamic", "maximum", "minimum", "sign", "pow", "shape", "concat", "stack", "split",
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_mean", "reduce_any",
    "topk", "range", "full", "expand", "expand_dynamic", "tile", "tile_dynamic", "repeat_interleave",
    "if", "loop"})
# The input an op writes over, where it is not input 0 (where(cond, x, y): x).
WRITTEN_INPUT = {"where": 1}


def _written(node) -> str | None:
    index = WRITTEN_INPUT.get(node.op, 0)
    return node.inputs[index] if len(node.inputs) > index else None


def _overwrites(graph, node, value) -> bool:
    dtype = graph.dtype(value) or ""
    if dtype.startswith(("int", "uint")):
        return node.op not in INT_KEPT
    if node.op == "where" and graph.shape(value) != graph.shape(node.outputs[0]):
        return False  # expanded first (paddle_ops.broadcast_operands): a new tensor
    return dtype.startswith(("float", "bfloat")) and node.op in FLOAT_IN_PLACE


def overwritten_value(graph, node, skip=frozenset()) -> str | None:
    """The value computed by another node that `node` would overwrite in
    place under Paddle Inference, whoever reads it later (module_tree.py
    keeps such a node in the forward that computes and reads the value)."""
    value = _written(node)
    if value is None or value in skip or graph.producer(value) is None or \
            not graph.shape(value):
        return None
    return value if _overwrites(graph, node, value) else None


def overwritten_inputs(graph, nodes, skip=frozenset()) -> dict[int, str]:
    """{index of a node in `nodes`: the input it writes over} where Paddle
    Inference would overwrite a value computed by an earlier node of `nodes`
    that a later node reads or the graph returns. `skip`: values not written
    as tensors."""
    last_read: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for value in node.inputs:
            last_read[value] = i
    computed = {value for node in nodes for value in node.outputs}
    returned = set(graph.outputs)
    found = {}
    for i, node in enumerate(nodes):
        value = None if node.op == "module_call" else _written(node)
        if value is None or value not in computed or value in skip:
            continue
        if not graph.shape(value):  # paddle.concat takes no 0-D tensor
            continue
        if (last_read[value] > i or value in returned) and _overwrites(graph, node, value):
            found[i] = value
    return found
