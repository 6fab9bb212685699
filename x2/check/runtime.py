"""Worker-side half of the parity check (see x2/check/parity.py): devices, GPU
memory settings, reduced precision, and capturing intermediate tensors for
`--bisect`.

Every function here runs inside a worker process that imports exactly one
framework (x2/process/worker.py registers the tasks at the bottom of this module).
Device strings are "cpu" or "gpu:N".
"""
from __future__ import annotations

import ast
import json
import os
import types
from pathlib import Path

import numpy as np

from ..errors import HostCannotRun, X2Error
from ..process.phase import phase

# How each precision is realised where the framework has no kernels for it.
EMULATED = ("weights and inputs rounded to {p}, computed in float32 (emulated: "
            "{why})")


def gpu_index(device: str | None) -> int | None:
    if not device or device == "cpu":
        return None
    return int(device.split(":")[1]) if ":" in device else 0


def configure_env(framework: str, device: str | None) -> None:
    """Settings that must be in place before the framework is imported (the
    worker calls this first). Only the chosen card is visible, so inside the
    worker it is always GPU 0; "cpu" hides every card. Two frameworks share
    the card during a check, so none may grab all of its memory."""
    if device is None:
        return
    index = gpu_index(device)
    os.environ["CUDA_VISIBLE_DEVICES"] = "" if index is None else str(index)
    if index is None:
        return
    if framework == "tf":
        os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    elif framework == "paddle":
        os.environ.setdefault("FLAGS_allocator_strategy", "auto_growth")
        os.environ.setdefault("FLAGS_fraction_of_gpu_memory_to_use", "0.4")
    elif framework == "torch":
        os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def on_gpu(device: str | None) -> bool:
    return gpu_index(device) is not None


def round_to(array: np.ndarray, precision: str) -> np.ndarray:
    """Round a float32 array to fp16/bf16 and back (storage precision)."""
    if precision == "fp32" or array.dtype.kind != "f":
        return array
    if precision == "fp16":
        return array.astype(np.float16).astype(array.dtype)
    bits = np.array(array, dtype=np.float32, order="C").view(np.uint32)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return rounded.view(np.float32).astype(array.dtype)


# ---------------------------------------------------------------- devices

def list_devices(framework: str) -> dict:
    """The devices a framework can use here, asked of the framework itself."""
    if framework == "torch":
        import torch
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        how = "torch.cuda.device_count()"
    elif framework == "paddle":
        import paddle
        n = paddle.device.cuda.device_count() if paddle.is_compiled_with_cuda() else 0
        how = "paddle.device.cuda.device_count()"
    elif framework == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf
        n = len(tf.config.list_physical_devices("GPU"))
        how = 'tf.config.list_physical_devices("GPU")'
    elif framework == "onnx":
        import onnxruntime as ort
        providers = ort.get_available_providers()
        n = 0
        if "CUDAExecutionProvider" in providers:
            try:
                import ctypes
                cuda = ctypes.CDLL("libcudart.so")
                count = ctypes.c_int()
                n = count.value if cuda.cudaGetDeviceCount(ctypes.byref(count)) == 0 else 0
            except OSError:
                n = 1  # the provider is there; assume one card
        how = f"onnxruntime.get_available_providers() = {providers}"
    else:
        raise X2Error(f"no device query for {framework}")
    return {"devices": ["cpu"] + [f"gpu:{i}" for i in range(n)], "how": how}


# ------------------------------------------------------- capturing forward

class _Recorder(ast.NodeTransformer):
    """forward(): after every `a, b = expr`, store a and b in __x2_record__."""

    def visit_FunctionDef(self, node):
        node.body = self._record(node.body)
        return node

    def _record(self, statements):
        body = []
        for stmt in statements:
            if isinstance(stmt, ast.With):   # forward under autocast (--precision mixed)
                stmt.body = self._record(stmt.body)
            body.append(stmt)
            if isinstance(stmt, ast.Assign):
                names = []
                for target in stmt.targets:
                    elts = target.elts if isinstance(target, ast.Tuple) else [target]
                    names += [e.id for e in elts if isinstance(e, ast.Name)]
                for name in names:
                    body.append(ast.parse(f"__x2_record__[{name!r}] = {name}").body[0])
        return body


def traced_forward(module, model) -> dict:
    """Bind a recording copy of Model.forward (parsed from model.py, which is
    left as it is) to `model`; return the dict it fills on every call."""
    tree = ast.parse(Path(module.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    forward = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    forward = _Recorder().visit(forward)
    record: dict = {}
    namespace = dict(vars(module))
    namespace["__x2_record__"] = record
    code = compile(ast.fix_missing_locations(ast.Module([forward], [])), module.__file__, "exec")
    exec(code, namespace)
    model.forward = types.MethodType(namespace["forward"], model)
    return record


def traced_run(module, run, tensor_type) -> dict:
    """Every assignment of forward, as numpy arrays, on a fresh model that
    `run(model)` calls, up to where it fails (an emitter's check shows how
    far it got); `tensor_type`: the framework's tensor class."""
    model = module.load_model()
    record = traced_forward(module, model)
    try:
        run(model)
    except Exception:  # noqa: BLE001 - the record shows how far it got
        pass
    return {k: np.asarray(v.numpy()) for k, v in record.items() if isinstance(v, tensor_type)}


# ------------------------------------------------------------- runners

# Within one run() (one runner, every input set): what an earlier input set
# loaded, so that the model is loaded once, not once per set (a large model's
# second load would land beside what the allocator kept of the first).
_LOADED: dict | None = None


def load_once(key: tuple, load):
    """`load()`, or what it gave for `key` earlier in this run()."""
    if _LOADED is None:
        return load()
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = load()
    return _LOADED[key]


def run_paddle(args: dict, inputs: list[np.ndarray]) -> tuple[list, dict, list[str]]:
    import paddle

    notes: list[str] = []
    device, precision, mode = args.get("device"), args.get("precision", "fp32"), args["mode"]
    index = 0 if on_gpu(device) else None  # the only visible card
    paddle.set_device("gpu:0" if index is not None else "cpu")
    out = Path(args["out"])
    if index is None and args.get("written") in ("fp16", "bf16"):
        raise HostCannotRun(f"{out} holds a {args['written']} Paddle model, and Paddle "
                      f"{paddle.__version__} has no CPU {args['written']} kernels for conv2d, "
                      f"matmul/linear, add, relu, softmax (only casts and pooling), so it "
                      f"cannot run on this CPU; check it on a GPU (--device gpu)")
    if index is None and args.get("written") == "mixed":
        notes.append(f"paddle ({mode}): the model's paddle.amp.auto_cast is a no-op on CPU "
                     f"(no CPU fp16 kernels), so this run computed in float32")
    if mode == "inference":
        return run_paddle_inference(out / "inference", inputs, args, index, notes)
    record: dict = {}
    if mode == "python":
        module, model = load_once(("paddle", str(out), mode), lambda: _paddle_python(out))
        if args.get("trace"):
            record = traced_forward(module, model)
    else:
        model = load_once(("paddle", str(out), mode),
                          lambda: paddle.jit.load(str(out / "inference" / "model")))
        model.eval()
    if precision == "fp64":   # verify's second opinion: the same model in float64
        model.to(dtype="float64")
        inputs = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in inputs]
    amp = precision not in ("fp32", "fp64") and index is not None
    if precision not in ("fp32", "fp64") and not amp:
        # Paddle's CPU conv2d/matmul kernels have no float16/bfloat16 variant and
        # paddle.amp.auto_cast leaves CPU ops in float32.
        p = {"fp16": "float16", "bf16": "bfloat16"}[precision]
        notes.append(f"paddle ({mode}): " + EMULATED.format(
            p=p, why="Paddle has no CPU fp16/bf16 conv/matmul kernels; on GPU paddle.amp "
                     "auto_cast O1 is used"))
        with paddle.no_grad():
            for param in list(model.parameters()) + list(model.buffers()):
                if param.dtype == paddle.float32:
                    param.set_value(round_to(param.numpy(), precision))
        inputs = [round_to(x, precision) for x in inputs]
    dtypes = args.get("input_dtypes") or [None] * len(inputs)
    tensors = [paddle.to_tensor(x) if d in (None, str(x.dtype)) else
               paddle.to_tensor(x).astype(d) for x, d in zip(inputs, dtypes)]
    with paddle.no_grad():
        if amp:
            dtype = {"fp16": "float16", "bf16": "bfloat16"}[precision]
            notes.append(f"paddle ({mode}): paddle.amp.auto_cast(level='O1', dtype='{dtype}')")
            with paddle.amp.auto_cast(level="O1", dtype=dtype):
                result = model(*tensors)
        else:
            result = model(*tensors)
    if not isinstance(result, (list, tuple)):
        result = [result]

    def host(t):
        return np.asarray(t.astype("float32").numpy() if t.dtype in (
            paddle.float16, paddle.bfloat16) else t.numpy())
    traced = {k: host(v) for k, v in record.items() if isinstance(v, paddle.Tensor)}
    return [host(r) for r in result], traced, notes


def _paddle_python(out: Path):
    from ..emitters.codegen import import_generated
    module = import_generated(out / "model.py")
    return module, module.load_model()


NHWC_ON_ONEDNN = ("this model was converted with --layout nhwc, and Paddle Inference "
                   "(paddle 3.3, oneDNN on) runs an NHWC convolution fused with the "
                   "activation after it as NCHW: to serve on CPU, convert with --layout nchw "
                   "(the default) or turn oneDNN off (config.disable_mkldnn())")


def _layout_inside(out: Path) -> str | None:
    try:
        return json.loads((out / "report.json").read_text())["layout"]["inside"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


# What a Paddle Inference input handle's copy_from_cpu takes (paddle 3.3).
PADDLE_INFERENCE_INPUT_DTYPES = ("float32", "float64", "float16", "int64", "int32", "int8",
                                 "uint8", "bool")


def untaken_by_paddle_inference(dtypes) -> list[str]:
    """The input dtypes among `dtypes` that Paddle Inference cannot be fed."""
    return sorted({str(d) for d in dtypes} - set(PADDLE_INFERENCE_INPUT_DTYPES))


def paddle_predictor(folder: Path, gpu: int | None = None):
    """A Paddle Inference predictor over the saved program with its default
    config: on CPU that turns oneDNN on and applies its graph passes, as a
    deployment does."""
    from paddle import inference
    program = next((folder / name for name in ("model.json", "model.pdmodel")
                    if (folder / name).exists()), None)
    if program is None:
        raise X2Error(f"{folder}: no model.json or model.pdmodel to load with Paddle Inference")
    config = inference.Config(str(program), str(folder / "model.pdiparams"))
    if gpu is not None:
        config.enable_use_gpu(256, gpu)
    with phase(f"loading {folder} into Paddle Inference"):
        return inference.create_predictor(config)


def predict(predictor, inputs: list[np.ndarray], dtypes: list) -> list[np.ndarray]:
    """One run of `predictor` on `inputs` (cast to `dtypes` where given)."""
    for name, x, dtype in zip(predictor.get_input_names(), inputs, dtypes):
        handle = predictor.get_input_handle(name)
        array = np.ascontiguousarray(x if dtype in (None, str(x.dtype)) else x.astype(dtype))
        handle.reshape(list(array.shape))
        handle.copy_from_cpu(array)
    with phase("running the saved program through Paddle Inference (default config)"):
        predictor.run()
    return [predictor.get_output_handle(name).copy_to_cpu()
            for name in predictor.get_output_names()]


def run_paddle_inference(folder: Path, inputs: list[np.ndarray], args: dict, gpu: int | None,
                         notes: list[str]) -> tuple[list, dict, list[str]]:
    """The saved program through Paddle Inference with its default config
    (`paddle_predictor`); float16 outputs come back as float32, as the
    parity check compares them."""
    dtypes = args.get("input_dtypes") or [None] * len(inputs)
    untaken = untaken_by_paddle_inference(dtype or x.dtype for x, dtype in zip(inputs, dtypes))
    if untaken:
        taken = ", ".join(PADDLE_INFERENCE_INPUT_DTYPES)
        raise HostCannotRun(f"Paddle Inference cannot feed {folder} its {', '.join(untaken)} "
                            f"inputs: its input handles take {taken}")
    precision = args.get("precision", "fp32")
    if precision != "fp32":
        inputs = [round_to(x, precision) for x in inputs]
        notes.append(f"paddle (inference): Paddle Inference runs the saved program as "
                     f"written; inputs rounded to {precision}, weights as saved")
    notes.append("paddle (inference): Paddle Inference, default config"
                 + (" on GPU" if gpu is not None else " (oneDNN on for CPU)"))
    nhwc = gpu is None and _layout_inside(folder.parent) == "nhwc"
    if nhwc:
        notes.append(f"paddle (inference): {NHWC_ON_ONEDNN}")
    try:
        predictor = load_once(("inference", str(folder), gpu),
                              lambda: paddle_predictor(folder, gpu))
        outputs = predict(predictor, inputs, dtypes)
    except X2Error:
        raise
    except Exception as exc:
        # Paddle Inference refusing (or failing on) a program paddle itself
        # saved is that runner's failure, not a bug in x2's checking.
        first = next((ln.strip() for ln in str(exc).splitlines() if "Error" in ln), str(exc))
        first = " ".join(first.split()).rstrip(".")[:600]
        why = f" {NHWC_ON_ONEDNN}" if nhwc else ""
        raise X2Error(f"Paddle Inference (default config) failed on {folder}: "
                      f"{type(exc).__name__}: {first}.{why}") from exc
    return [o.astype(np.float32) if o.dtype == np.float16 else o for o in outputs], {}, notes


def run_torch(args: dict, inputs: list[np.ndarray]) -> tuple[list, dict, list[str]]:
    import torch
    from ..emitters.codegen import import_generated

    notes: list[str] = []
    device, precision = args.get("device"), args.get("precision", "fp32")
    dev = torch.device("cuda:0" if on_gpu(device) else "cpu")
    def load():
        module = import_generated(Path(args["out"]) / "model.py")
        return module, module.load_model().to(dev)
    module, model = load_once(("torch", args["out"], str(dev)), load)
    record = traced_forward(module, model) if args.get("trace") else {}
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
             "fp64": torch.float64}[precision]
    if precision != "fp32":
        model = model.to(dtype)
        notes.append(f"torch: model.to({dtype}) and float inputs cast to {dtype} on {dev} "
                     f"(every op computes in {str(dtype).split('.')[-1]})")
    tensors = []
    for x, written in zip(inputs, args.get("input_dtypes") or [None] * len(inputs)):
        t = torch.from_numpy(np.array(x, order="C")).to(dev)
        if written is not None:  # a model converted to reduced precision: its own dtypes
            tensors.append(t.to(getattr(torch, written)) if t.is_floating_point() else t)
        else:
            tensors.append(t.to(dtype) if t.is_floating_point() else t)
    with torch.no_grad():
        result = model(*tensors)
    if not isinstance(result, (list, tuple)):
        result = [result]

    def host(t):
        t = t.detach().cpu()
        keep = precision == "fp64" and t.dtype == torch.float64   # verify's second opinion
        return (t.float() if t.is_floating_point() and not keep else t).numpy()
    traced = {k: host(v) for k, v in record.items() if isinstance(v, torch.Tensor)}
    return [host(r) for r in result], traced, notes


def run_onnx(args: dict, inputs: list[np.ndarray]) -> tuple[list, dict, list[str]]:
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    notes: list[str] = []
    device, precision = args.get("device"), args.get("precision", "fp32")
    if precision == "fp64":   # onnxruntime has no float64 run of a float32 model
        return run_onnx_float64(Path(args["out"]) / "model.onnx", inputs), {}, []
    index = 0 if on_gpu(device) else None
    path = Path(args["out"]) / "model.onnx"
    trace = args.get("trace") or []
    model_bytes = None
    n_outputs = None
    if precision != "fp32" or trace:
        model = onnx.load(str(path))
        if precision != "fp32":
            p = {"fp16": "float16", "bf16": "bfloat16"}[precision]
            notes.append("onnxruntime: " + EMULATED.format(
                p=p, why="onnxruntime's CPU provider has no float16/bfloat16 kernels for most "
                         "ops, and converting the graph to fp16 needs casts x2 does not write"))
            for init in model.graph.initializer:
                array = numpy_helper.to_array(init)
                if array.dtype == np.float32:
                    init.CopyFrom(numpy_helper.from_array(round_to(array, precision),
                                                          init.name))
            inputs = [round_to(x, precision) for x in inputs]
        n_outputs = len(model.graph.output)
        known = {o.name for o in model.graph.output} | {i.name for i in model.graph.input}
        for name, dtype in trace:
            if name not in known:
                model.graph.output.append(onnx.helper.make_tensor_value_info(
                    name, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), None))
        model_bytes = model.SerializeToString()
    if index is not None:
        providers = [("CUDAExecutionProvider", {"device_id": index,
                                                "arena_extend_strategy": "kSameAsRequested",
                                                "gpu_mem_limit": 4 * 1024 ** 3}),
                     "CPUExecutionProvider"]
    else:
        providers = ["CPUExecutionProvider"]
    try:
        session = load_once(("onnx", str(path), index), lambda: ort.InferenceSession(
            str(path), providers=providers)) if model_bytes is None else \
            ort.InferenceSession(model_bytes, providers=providers)
    except Exception as exc:
        if args.get("written") != "bf16":
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        raise HostCannotRun(f"{path} is a bf16 ONNX model and onnxruntime {ort.__version__} "
                      f"{'CUDA' if index is not None else 'CPU'} cannot run it ({first}): its "
                      f"CPU provider has no bfloat16 kernels (not even Add or MatMul); it is "
                      f"checker-clean, so run it with a runtime that has them (onnxruntime "
                      f"CUDA, --device gpu), or convert with --precision fp16") from None
    feed = {i.name: _onnx_input(x, i.type) for i, x in zip(session.get_inputs(), inputs)}
    if args.get("written") and index is None:
        notes.append(f"onnxruntime CPU ran the {args['written']} model; "
                     + fallback_note(model_bytes or path.read_bytes()))
    names = [o.name for o in session.get_outputs()]
    values = session.run(None, feed)
    n_outputs = len(values) if n_outputs is None else n_outputs
    outputs, traced = values[:n_outputs], dict(zip(names[n_outputs:], values[n_outputs:]))
    return outputs, traced, notes


def run_onnx_float64(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """verify's and x2 check's second opinion on an ONNX target: the written
    model.onnx read by x2's ONNX frontend and computed in float64 by the IR's
    numpy kernels (x2/ir/float64.py). The file, not the IR x2 wrote it from:
    the opinion is on what the user gets and onnxruntime runs, as torch's and
    paddle's are on model.py, and x2 check has only the written folder. An op
    without a float64 kernel is an X2Error: no opinion, never a float32 one."""
    from ..contracts import ReadRequest
    from ..frontends.onnx.reader import read_ir
    from ..ir.float64 import NoFloat64Run, interpret_float64
    graph = load_once(("onnx-float64", str(path)), lambda: read_ir(ReadRequest(str(path)))[0])
    try:
        return interpret_float64(graph, inputs)
    except NoFloat64Run as exc:
        raise X2Error(f"{path} has no float64 run: {exc}") from None


def _onnx_input(x: np.ndarray, type_str: str) -> np.ndarray:
    """x in the element type the session declares (float32 values for an fp16 input)."""
    if type_str == "tensor(float16)" and x.dtype != np.float16:
        return x.astype(np.float16)
    return x


def fallback_note(model_bytes: bytes) -> str:
    """Which ops of an fp16 model onnxruntime's CPU provider computes in
    float32 (its InsertCastTransformer wraps ops without fp16 kernels in
    Casts): read from the session's optimized graph."""
    import tempfile

    import onnx
    import onnxruntime as ort
    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.optimized_model_filepath = str(Path(tmp) / "optimized.onnx")
        ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
        optimized = onnx.load(options.optimized_model_filepath)
    made = {o for n in optimized.graph.node if n.op_type == "Cast" and "InsertedPrecisionFreeCast"
            in n.name for o in n.output}
    ops = sorted({n.op_type for n in optimized.graph.node
                  if n.op_type != "Cast" and any(i in made for i in n.input)})
    return ("ops it computes in float32 (no CPU fp16 kernel; casts inserted by onnxruntime): "
            + (", ".join(ops) if ops else "none"))


def run_tf(args: dict, inputs: list[np.ndarray]) -> tuple[list, dict, list[str]]:
    """The SavedModel's outputs, plus the frozen graph's tensors named in
    args["trace"] (IR value names are TF tensor names for values the mappers
    kept)."""
    from ..frontends.tf import savedmodel

    tf, _loaded, _sig, fn = savedmodel.load_signature(args["model"], args.get("signature"))
    where = "/GPU:0" if on_gpu(args.get("device")) else "/CPU:0"
    named = dict(zip(args["names"], inputs))
    with tf.device(where):
        result = fn(**{k: tf.constant(v) for k, v in named.items()})
    outputs = [np.asarray(result[k]) for k in sorted(result)]
    traced: dict = {}
    wanted = args.get("trace") or []
    if wanted:
        from tensorflow.python.framework.convert_to_constants import (
            convert_variables_to_constants_v2)
        input_names = list(fn.structured_input_signature[1])
        # Freeze exactly as the conversion did, so tensor names match IR values.
        from ..frontends.common import split_input_shapes
        shapes = split_input_shapes(args.get("input_shapes"))[0]
        fn2 = savedmodel.retrace(tf, fn, shapes) if shapes else fn
        frozen = convert_variables_to_constants_v2(fn2)
        graph_def = frozen.graph.as_graph_def()
        placeholders = [t.name for t in frozen.inputs if t.dtype != tf.resource]
        graph = tf.Graph()
        with graph.as_default():
            tf.graph_util.import_graph_def(graph_def, name="")
        feed = {}
        for tensor_name, key in zip(placeholders, sorted(input_names)):
            feed[graph.get_tensor_by_name(tensor_name)] = named[key]
        fetch = {}
        for name in wanted:
            tensor_name = name if (":" in name and name.rsplit(":", 1)[1].isdigit()) \
                else name + ":0"
            try:
                t = graph.get_tensor_by_name(tensor_name)
            except (KeyError, ValueError):
                continue
            if t.dtype in (tf.resource, tf.variant) or t.op.type == "Const":
                continue
            fetch[name] = t
        if fetch:
            with tf.compat.v1.Session(graph=graph) as sess:
                with tf.device(where):
                    values = sess.run(list(fetch.values()), feed_dict=feed)
            traced = {k: np.asarray(v) for k, v in zip(fetch, values)}
    return outputs, traced, []


RUNNERS = {"paddle": run_paddle, "torch": run_torch, "onnx": run_onnx, "tf": run_tf}


def run(framework: str, args: dict) -> dict:
    """Task body: configure the device, run, save outputs (+ traced tensors)."""
    from .compare import each_run
    notes: list[str] = []
    if args.get("generate"):
        from .generate import run as generate

        def steps(part):
            # an encoder-decoder's first step is the model in args["encoder"]
            model = {**args, "out": args["encoder"]} if part == "encoder" else args

            def step(inputs):
                outputs, _, more = RUNNERS[framework](model, inputs)
                notes.extend(n for n in more if n not in notes)
                return outputs
            return step
        return {**generate(args, steps), "notes": notes}
    global _LOADED
    _LOADED = None if args.get("trace") else {}   # (a traced run patches its model)
    try:
        for inputs, out in each_run(args):
            outputs, traced, more = RUNNERS[framework](args, inputs)
            np.savez(out, *outputs)
            notes += [n for n in more if n not in notes]
    finally:
        _LOADED = None
    if args.get("trace_out"):
        np.savez(args["trace_out"], **{f"t{i}": v for i, v in enumerate(traced.values())})
        return {"notes": notes, "traced": list(traced)}
    return {"notes": notes}
