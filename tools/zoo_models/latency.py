"""Latency of one model on saved inputs, one thread, median of timed runs:

    python tools/zoo_models/latency.py FRAMEWORK MODEL INPUTS.npz [FORWARD_ARGS]
    python tools/zoo_models/latency.py --together '[[FRAMEWORK, MODEL, INPUTS.npz, ARGS], ...]'

FRAMEWORK is tf (a SavedModel's serving signature; FORWARD_ARGS: the input
names in the order of the arrays), torch-spec (a module spec, its forward()
called with FORWARD_ARGS by keyword), torch-step (a transformers causal LM's
module spec, one decoding step with its cache as tensors, as x2 convert
--with-cache reads it: transformers' own eager step), onnx (an .onnx
file, onnxruntime), paddle/torch (an x2 output folder: its model.py's
load_model()), or paddle-inference (an x2 output folder: its inference/
program through Paddle Inference, default config but one thread, as
served; X2Paddle's inference_model/ too), or paddleformers-step
(PaddleFormers' own Llama of a transformers Llama's config, found on
X2_PADDLEFORMERS). X2_LATENCY_RUNS: timed runs (default 10);
X2_LATENCY_CLOCK=cpu times CPU, not wall. Prints {"median_ms": ...}.
Imports one framework: a process of its own, as every framework step: the
tools call `in_own_process`.
--together loads several models and runs them in turn (`in_one_process`;
frameworks that can share a process: not TensorFlow with Paddle): their
ratio, free of the drift between processes."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

WARMUP, BUDGET_S = 2, 3.0
RUNS = int(os.environ.get("X2_LATENCY_RUNS", "10"))
# X2_LATENCY_CLOCK=cpu: the CPU time of the thread that runs the model
# (time.thread_time), not the wall clock: a one-thread runner computes in the
# calling thread, and loses less to other work on the machine. (The process's
# CPU time would also count threads a framework leaves spinning.)
CLOCK = time.thread_time if os.environ.get("X2_LATENCY_CLOCK") == "cpu" else time.perf_counter
ROOT = Path(__file__).resolve().parents[2]


def in_own_process(framework: str, model: str, inputs, names: list[str],
                   runs: int | None = None, timeout: float = 1800) -> float:
    """The median ms of `measure`, run by this script in a new process with
    x2's checkout on its path; RuntimeError with the process's last error line."""
    return _in_new_process([framework, model, str(inputs), json.dumps(names)],
                           f"{framework} {model}", runs, timeout)


def in_one_process(entries: list[tuple], runs: int | None = None,
                   timeout: float = 1800) -> list[float]:
    """`measure_together` on [(framework, model, inputs.npz, names)], in a new
    process (one framework: paddle-inference models, onnx files, torch modules)."""
    return _in_new_process(
        ["--together", json.dumps([[f, m, str(i), n] for f, m, i, n in entries])],
        str([m for _, m, _, _ in entries]), runs, timeout)


def _in_new_process(argv: list[str], label: str, runs: int | None, timeout: float):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    if runs is not None:
        env["X2_LATENCY_RUNS"] = str(runs)
    proc = subprocess.run([sys.executable, __file__, *argv], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()] or ["no message"]
        raise RuntimeError(f"latency of {label}: {lines[-1][-300:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["median_ms"]


def _generated(framework: str, folder: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location("x2_zoo_converted",
                                                  os.path.join(folder, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_model()


def measure(framework: str, model: str, arrays: list[np.ndarray], forward_args) -> float:
    return measure_together([(framework, model, arrays, forward_args)])[0]


def measure_together(entries: list[tuple]) -> list[float]:
    """Median ms of each (framework, model, arrays, forward_args), all loaded
    in this process and run in turn, one call each per turn: drift in the
    machine's speed, and whatever a process's first model pays, hits them alike."""
    calls = [runner(*entry) for entry in entries]
    for call in calls:
        for _ in range(WARMUP):
            call()
    times: list[list[float]] = [[] for _ in calls]
    deadline = time.perf_counter() + BUDGET_S * len(calls)
    while len(times[0]) < RUNS and (len(times[0]) < 3 or time.perf_counter() < deadline):
        for call, timed in zip(calls, times):
            start = CLOCK()
            call()
            timed.append(CLOCK() - start)
    return [statistics.median(t) * 1000 for t in times]


def runner(framework: str, model: str, arrays: list[np.ndarray], forward_args):
    """One forward of the model as served, as a call of no arguments."""
    if framework == "onnx":
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        feed = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
        return lambda: session.run(None, feed)
    if framework in ("torch", "torch-spec", "torch-step"):
        import torch
        torch.set_num_threads(1)
        tensors = [torch.from_numpy(a) for a in arrays]
        if framework == "torch":
            net = _generated("torch", model)
        else:
            from x2.frontends.torch.capture import load_model
            net = load_model(model)[1]
        if framework == "torch-step":
            from x2.frontends.torch.cache import wrap
            net = wrap(net)
        kwargs = dict(zip(forward_args, tensors)) if forward_args else {}
        positional = [] if forward_args else tensors

        def run():
            with torch.no_grad():
                return net(*positional, **kwargs)
        return run
    if framework == "paddleformers-step":
        return _paddleformers_step(model, arrays)
    if framework == "paddle":
        import paddle
        paddle.set_device("cpu")
        net = _generated("paddle", model)
        tensors = [paddle.to_tensor(a) for a in arrays]

        def run():
            with paddle.no_grad():
                return net(*tensors)
        return run
    if framework == "paddle-inference":
        from paddle import inference
        # x2's folder keeps it in inference/, X2Paddle's in inference_model/
        program = next(os.path.join(model, d, f) for d in ("inference", "inference_model")
                       for f in ("model.json", "model.pdmodel")
                       if os.path.exists(os.path.join(model, d, f)))
        config = inference.Config(program, os.path.join(os.path.dirname(program),
                                                        "model.pdiparams"))
        config.set_cpu_math_library_num_threads(1)
        config.disable_glog_info()
        predictor = inference.create_predictor(config)
        for name, array in zip(predictor.get_input_names(), arrays):
            handle = predictor.get_input_handle(name)
            handle.reshape(list(array.shape))
            handle.copy_from_cpu(np.ascontiguousarray(array))
        outputs = [predictor.get_output_handle(n) for n in predictor.get_output_names()]

        def run():
            predictor.run()
            return [o.copy_to_cpu() for o in outputs]
        return run
    if framework == "tf":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        signature = tf.saved_model.load(model).signatures["serving_default"]
        names = list(signature.structured_input_signature[1])
        if forward_args and sorted(forward_args) == sorted(names):
            names = forward_args  # the converted model's input order
        tensors = {n: tf.constant(a) for n, a in zip(names, arrays)}
        return lambda: signature(**tensors)
    raise SystemExit(f"unknown framework {framework}")


def _paddleformers_step(spec: str, arrays: list[np.ndarray]):
    """PaddleFormers' hand-written Llama (found on X2_PADDLEFORMERS, a path
    list) of the same config as the transformers causal LM `spec`, random
    weights: one decoding step after as many cached tokens as `arrays`' cache
    holds (its cache grows by one token per run: a dozen in all)."""
    names = ["hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
             "num_key_value_heads", "vocab_size", "max_position_embeddings", "rms_norm_eps",
             "tie_word_embeddings"]
    # (the source's transformers, in a process of its own: PaddleFormers pins another)
    read = ("import json, sys; from x2.frontends.torch.capture import load_model; "
            "c = load_model(sys.argv[1])[1].config; "
            "print(json.dumps({n: getattr(c, n) for n in json.loads(sys.argv[2])}))")
    shape = json.loads(subprocess.run(
        [sys.executable, "-c", read, spec, json.dumps(names)], capture_output=True, text=True,
        check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout)
    sys.path[:0] = os.environ.get("X2_PADDLEFORMERS", "").split(os.pathsep)
    import paddle
    from paddleformers.transformers import LlamaConfig, LlamaForCausalLM
    paddle.set_device("cpu")
    config = LlamaConfig(**shape, fuse_rms_norm=False)  # (its fused kernel is GPU only)
    paddle.seed(0)
    net = LlamaForCausalLM(config)
    net.eval()
    cached = arrays[3].shape[2]
    with paddle.no_grad():   # (outputs as a tuple: logits, cache)
        cache = net(input_ids=paddle.randint(0, config.vocab_size, [1, cached]),
                    use_cache=True, return_dict=False)[1]
    new_ids, positions = paddle.to_tensor(arrays[0]), paddle.to_tensor(arrays[2])

    def run():
        with paddle.no_grad():
            return net(input_ids=new_ids, position_ids=positions, past_key_values=cache,
                       use_cache=True, return_dict=False)[0]
    return run


def _arrays(path: str) -> list[np.ndarray]:
    with np.load(path) as data:
        return [data[f"arr_{i}"] for i in range(len(data.files))]


if __name__ == "__main__":
    if sys.argv[1] == "--together":
        entries = [(f, m, _arrays(i), names) for f, m, i, names in json.loads(sys.argv[2])]
        print(json.dumps({"median_ms": measure_together(entries)}))
    else:
        framework, model, inputs = sys.argv[1:4]
        forward_args = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
        print(json.dumps({"median_ms": measure(framework, model, _arrays(inputs),
                                               forward_args)}))
