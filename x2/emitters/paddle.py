"""Paddle emitter: IR graph -> model.py + model.pdparams + inference/ (jit.save).

Runs in a worker process that imports paddle only."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from ..contracts import EmitRequest
from ..errors import ConversionError
from ..ir import Graph
from ..ir.serialize import release_pages
from ..passes.attention_masks import attention_masks_once
from .codegen import call, generate_module, import_generated
from .module_tree import plan as module_tree_plan
from .paddle_ops import PADDLE_OPS, PaddleContext
from .paddle_params import stored_keys, write_keys
from .locate import locate_written

_GUARD = '''if "tensorflow" in sys.modules and "paddle" not in sys.modules:
    # Importing paddle after tensorflow segfaults in one process (a known clash
    # of their native libraries); fail with a message instead of a crash.
    raise ImportError("import paddle before tensorflow, or run this model in a process "
                      "without tensorflow (x2 check does that for you)")'''

_LOAD = '''def load_model(path=None):
    """The converted model with its weights, in eval mode: those of `path`
    (a state dict paddle.save wrote, e.g. after fine-tuning), else {default}.{why}"""
{build}
    if path is None:
{default_load}
    state = paddle.load(path, return_numpy=True)
    expected = model.state_dict()
    wrong = [k for k in expected if k not in state or list(state[k].shape) != expected[k].shape]
    if wrong:
        raise ValueError(f"{{path}} does not fit this Model: missing or misshapen {{wrong[:5]}}")
    for key, tensor in expected.items():
        tensor.set_value(state.pop(key))
    model.eval()
    return model'''

_FROM_PDPARAMS = """        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model.pdparams")"""

_FROM_INFERENCE = """        return _read_inference_weights(model)"""

# One copy of the weights: model.py reads the file Paddle Inference serves.
_READ_INFERENCE = '''def _read_inference_weights(model):
    """Fill the model from inference/model.pdiparams, whose tensors
    inference/state_dict_keys.json names in order, the way paddle.jit.load
    reads that file: each becomes its parameter's data, without a copy."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "inference")
    with open(os.path.join(folder, "state_dict_keys.json")) as fh:
        keys = json.load(fh)
    state = model.state_dict()
    shapes = {key: list(tensor.shape) for key, tensor in state.items()}
    tensors = [state[key] for key in keys]
    unfilled = {id(t) for t in state.values()} - {id(t) for t in tensors}
    if unfilled:
        raise ValueError(f"{folder} does not hold every weight of this Model")
    paddle.base.core.load_combine_func(
        os.path.join(folder, "model.pdiparams"), [t.name for t in tensors],
        [t.get_tensor() for t in tensors], False, paddle.framework._current_expected_place())
    wrong = [key for key, tensor in state.items() if list(tensor.shape) != shapes[key]]
    if wrong:
        raise ValueError(f"{folder} does not fit this Model: misshapen {wrong[:5]}")
    model.eval()
    return model'''


def load_code(lazy: bool, from_inference: bool) -> str:
    """load_model (and what it calls). `lazy`: the parameters are created
    empty (paddle.LazyGuard) and each takes its weight as it is read, so the
    weights are in memory once, not twice; a half-precision model casts its
    layers in __init__, which needs their parameters made. `from_inference`:
    the weights are read from inference/ (written once), else from
    model.pdparams."""
    build = ("    with paddle.LazyGuard():\n        model = Model()" if lazy
             else "    model = Model()")
    why = ("\n\n    Its parameters are created empty and each takes its weight as it is "
           "read:\n    the weights are in memory once, not twice." if lazy else "")
    text = _LOAD.format(
        default=("those x2\n    wrote once, in inference/model.pdiparams, beside the program "
                 "Paddle\n    Inference serves" if from_inference
                 else "those of\n    model.pdparams beside this file"),
        why=why, build=build,
        default_load=_FROM_INFERENCE if from_inference else _FROM_PDPARAMS)
    return text + ("\n\n\n" + _READ_INFERENCE if from_inference else "")


def _recurrent(graph: Graph) -> bool:
    """Whether the model has recurrent layers: Paddle's LSTM/GRU made under
    paddle.LazyGuard fail on their first call (their flattened weights,
    "concated_ranks"), so such a model's parameters are made as usual."""
    from ..ir.control_flow import walk_graphs
    return any(n.op in ("lstm", "gru", "rnn") for each in walk_graphs(graph) for n in each.nodes)


def auto_cast(keep_fp32: list[str] | None):
    """--precision mixed: fp32 weights, forward under paddle.amp.auto_cast O1
    with the --keep-fp32 ops on its black list."""
    from ..passes.precision import paddle_black_list
    return lambda e: call("paddle.amp.auto_cast", level="O1", dtype="float16",
                          custom_black_list=paddle_black_list(keep_fp32))


# Paddle's tensors have no uint16/32/64 element type (its uint16 holds bfloat16 bits).
_NO_PADDLE_DTYPES = ("uint16", "uint32", "uint64")


def _refuse_wide_unsigned(graph: Graph) -> None:
    """A model whose values are uint16/32/64 cannot keep its dtypes in Paddle:
    refused rather than converted with other dtypes at its inputs and outputs."""
    from ..ir.control_flow import walk_graphs
    for each in walk_graphs(graph):
        for value, info in each.info.items():
            if info.dtype in _NO_PADDLE_DTYPES:
                raise ConversionError(
                    f"the Paddle emitter cannot write value '{value}': it is {info.dtype}, and "
                    f"Paddle has no {info.dtype} tensors (uint8 is its only unsigned type); "
                    f"convert to torch or onnx, or cast the model's {info.dtype} values to "
                    f"int64 in the source")


def generate(graph: Graph, source_desc: str, names: dict | None = None,
             forward_context=None, parameters: dict | None = None, for_training: bool = False,
             source_names: dict | None = None, module_tree: dict | None = None,
             flat: bool = False, lazy: bool = True, from_inference: bool = False
             ) -> tuple[str, dict[str, np.ndarray]]:
    """Return (model.py text, state dict as numpy arrays); `names`, when given,
    receives IR value -> generated variable name (for `x2 check --bisect`),
    `parameters` each trainable parameter's source weight (`x2 check --grad`),
    `source_names` how the weights' names match the source's (report.json)."""
    import paddle
    _refuse_wide_unsigned(graph)
    e = PaddleContext(graph, dir(paddle.nn.Layer))
    e.for_training = for_training
    result = generate_module(
        e, PADDLE_OPS,
        docstring=[f"Paddle model generated by x2 from {source_desc}.", "",
                   "Readable and editable; load_model() gives it with its weights."],
        header=[*(["import json"] if from_inference else []), "import os", "import sys", "",
                _GUARD, "", "import paddle",
                "import paddle.nn as nn", "import paddle.nn.functional as F"],
        footer=[load_code(lazy, from_inference)], forward_context=forward_context,
        planner=None if flat else module_tree_plan)
    if names is not None:
        names.update(e.namer.names)
    if parameters is not None:
        parameters.update(e.parameters)
    if module_tree is not None and e.plan is not None:
        module_tree.update(e.plan.report())
    if source_names is not None and e.tree.active:
        source_names.update(e.tree.report(result[1]))
    return result


def write_pdparams(state: dict[str, np.ndarray], path: Path) -> None:
    """model.pdparams as paddle.load reads it: a pickled dict of arrays. Pickle
    protocol 5 writes each array's buffer straight to the file, without the
    in-memory copies paddle.save makes."""
    import pickle
    with open(path, "wb") as fh:
        # (np.ascontiguousarray would make a 0-d array 1-d)
        # (one object per array, so that pickle's memo writes a tied weight once)
        kept: dict[int, np.ndarray] = {}
        pickle.dump({k: kept.setdefault(id(v), np.ascontiguousarray(v) if v.ndim
                                        else np.array(v))
                     for k, v in state.items()}, fh, protocol=5)


def fill_tensor(tensor, array: np.ndarray, chunk_bytes: int = 64 << 20) -> None:
    """Copy weights into a paddle tensor in place, chunk by chunk, releasing
    each chunk of a memory-mapped source as it goes."""
    if tuple(tensor.shape) != tuple(array.shape):
        raise ConversionError(f"internal: weight shape {array.shape} does not fit "
                              f"{list(tensor.shape)}")
    if str(array.dtype) == "bfloat16":  # no bfloat16 in dlpack; paddle takes its bits as uint16
        tensor.set_value(np.array(array).view(np.uint16))  # (ascontiguousarray makes 0-d 1-d)
        return
    # detach() shares memory: writes through the view land in the parameter.
    target = np.from_dlpack(tensor.detach()).reshape(-1)
    # Keep np.memmap (ascontiguousarray would drop the subclass) so chunks can be released.
    source = (array if array.flags["C_CONTIGUOUS"] else np.ascontiguousarray(array)).reshape(-1)
    step = max(1, chunk_bytes // max(1, source.itemsize))
    for start in range(0, source.size, step):
        target[start:start + step] = source[start:start + step]
        release_pages(source[start:start + step])


def emit(graph: Graph, request: EmitRequest) -> dict:
    graph = attention_masks_once(graph)  # (softmax makes an unseen row NaN)
    out = Path(request.out)
    value_names: dict[str, str] = {}
    precision = request.options.precision
    mixed = precision == "mixed"
    parameters: dict[str, dict] = {}
    source_names: dict = {}
    module_tree: dict = {}
    lazy = precision not in ("fp16", "bf16") and not _recurrent(graph)

    def write_code(from_inference: bool) -> dict[str, np.ndarray]:
        text, state = generate(graph, request.source_desc, value_names,
                               auto_cast(request.options.keep_fp32) if mixed else None,
                               parameters, for_training=request.options.purpose == "training",
                               source_names=source_names, module_tree=module_tree,
                               flat=request.options.flat, lazy=lazy,
                               from_inference=from_inference)
        (out / "model.py").write_text(text)
        return state

    state = write_code(from_inference=True)
    # Fill the model straight from the IR's memory-mapped weights, chunk by
    # chunk: the weights are in memory once.
    model = import_generated(out / "model.py").Model()
    for key, tensor in model.state_dict().items():
        fill_tensor(tensor, state[key])
    model.eval()
    del state
    details = {}
    saved = _save_inference(model, graph, out, precision, details)
    # One copy of the weights on disk: model.py reads inference/model.pdiparams
    # where every weight is found there bit for bit; else model.pdparams.
    # (a model without weights has no .pdiparams: its empty model.pdparams is as short)
    weights = {key: (t.name, _host_array(t)) for key, t in model.state_dict().items()}
    stored = out / "inference" / "model.pdiparams"
    keys = saved and weights and stored.is_file() and stored_keys(stored, weights)
    del weights
    if keys:
        write_keys(out / "inference", keys)
    else:
        write_code(from_inference=False)
        # A tied weight's keys hold one array object, which pickle writes once.
        arrays: dict[int, np.ndarray] = {}
        write_pdparams({k: arrays.setdefault(id(t), _host_array(t))
                        for k, t in model.state_dict().items()}, out / "model.pdparams")
        del arrays
        if saved and model.state_dict():
            details["weights"] = ("model.pdparams written beside inference/ (the saved "
                                  "program's weights could not be matched to the model's)")
    return {"files": sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()),
            "value_names": value_names, "parameters": parameters,
            **({"source_names": source_names} if source_names else {}),
            **({"module_tree": module_tree} if module_tree else {}),
            **({"precision": {k: v for k, v in details.items() if k == "inference"}}
               if precision != "fp32" else {}),
            **({"weights": details["weights"]} if "weights" in details else {})}


def _host_array(tensor) -> np.ndarray:
    """A parameter's values without a copy (bfloat16, which dlpack lacks, copied)."""
    import paddle
    return tensor.numpy() if tensor.dtype == paddle.bfloat16 else np.from_dlpack(
        tensor.detach())


def _save_inference(model, graph: Graph, out: Path, precision: str, details: dict) -> bool:
    """inference/ (paddle.jit.save) of the filled model; False where a
    CPU-only paddle cannot trace the model's half precision (said in
    `details`); refused with a ConversionError where paddle cannot save an
    fp32 model."""
    import paddle
    # stop_gradient: an inference program needs no gradients, and paddle's static
    # expand refuses a bool tensor that might carry one (a mask cast from an input).
    specs = [paddle.static.InputSpec(
        shape=[d if d is not None else None for d in (graph.shape(v) or [])],
        dtype=graph.dtype(v), name=v, stop_gradient=True) for v in graph.inputs]
    mixed = precision == "mixed"
    try:
        static = paddle.jit.to_static(model, input_spec=specs, full_graph=True)
        paddle.jit.save(static, str(out / "inference" / "model"))
        details["inference"] = f"inference/ saved in {precision}" + (
            " (fp32 weights; auto_cast recorded where the program was traced)" if mixed else "")
        return True
    except (TypeError, ValueError, RuntimeError, AssertionError) as exc:
        if precision == "fp32" or paddle.is_compiled_with_cuda():
            # paddle's static export refuses what its dygraph runs: an input no
            # output depends on, an empty program, a kernel's static shape rule.
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            causes = [line for line in lines if "Error:" in line or "(InvalidArgument)" in line]
            raise ConversionError(f"paddle cannot save the generated model as an inference "
                                  f"program (paddle.jit.save): "
                                  f"{(causes or lines or [''])[-1][:300]}") from exc
        # A CPU-only paddle build checks kernel dtypes while tracing, and has no
        # CPU float16 conv2d/matmul, and its bf16 scalars do not survive jit.save:
        # the static program cannot be built here.
        shutil.rmtree(out / "inference", ignore_errors=True)
        what = "fp32 weights, forward under auto_cast" if mixed else f"{precision} weights"
        first = (str(exc).strip().splitlines() or [""])[-1][:160]
        details["inference"] = (f"inference/ not written: paddle {paddle.__version__} is a "
                                f"CPU-only build and cannot trace a {precision} program "
                                f"({first.strip()}); model.py and model.pdparams are "
                                f"written ({what}). "
                                f"Convert with a CUDA build of paddle for inference/")
        return False


def locate(graph: Graph, out: Path, names: dict[str, str], inputs: list[np.ndarray]
           ) -> str | None:
    """The first IR op whose value the written model.py gets wrong on
    `inputs` (x2/emitters/locate.py), or None."""
    return locate_written(graph, out, names, inputs, _run, _trace)


def _run(model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    import paddle
    with paddle.no_grad():
        result = model(*[paddle.to_tensor(a) for a in inputs])
    result = result if isinstance(result, (tuple, list)) else [result]
    return [np.asarray(r.numpy()) if isinstance(r, paddle.Tensor) else r for r in result]


def _trace(module, inputs: list[np.ndarray]) -> dict:
    """Every assignment of forward on `inputs`, up to where it fails."""
    import paddle
    from ..check.runtime import traced_run
    return traced_run(module, lambda model: _run(model, inputs), paddle.Tensor)
