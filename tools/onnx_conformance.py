"""ONNX conformance of x2: the ONNX project's own node test suite
(`onnx.backend.test`, ~1,900 small models with expected outputs) run through
x2's ONNX backend (x2/onnx_backend.py) for each target.

    python tools/onnx_conformance.py                 # whole suite, torch and paddle
    python tools/onnx_conformance.py --target torch --sample 200 --seed 0

Each case is one of:
  pass     converted, ran, outputs equal the expected ones (onnx's tolerance)
  refused  x2 refused it with a clear error (an X2Error, not an internal one)
  wrong    converted and ran, but the outputs differ
  broken   converted, then failed to load or run, or x2 failed internally

Writes docs/onnx_conformance.json (every case's status) and
docs/onnx_conformance.md (generated from the JSON; tests/test_onnx_conformance.py
checks the two agree).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSON = ROOT / "docs" / "onnx_conformance.json"
MD = ROOT / "docs" / "onnx_conformance.md"
STATUSES = ("pass", "refused", "wrong", "broken")
TARGETS = ("torch", "paddle")
# The numeric element types the target question is about ("float/int cases").
NUMERIC = {"float", "double", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "bool"}
MAX_OPSET = 21  # the bar: cases of opsets up to 21


# As in the test suite: lint the IR, so that an IR x2 should not have made
# counts as broken here too.
os.environ.setdefault("X2_LINT", "1")


def node_cases():
    """onnx's node test cases, in a fixed order."""
    from onnx.backend.test.loader import load_model_tests
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sorted(load_model_tests(kind="node"), key=lambda c: c.name)


def sample(cases, size: int | None, seed: int):
    if size is None or size >= len(cases):
        return cases
    return sorted(random.Random(seed).sample(cases, size), key=lambda c: c.name)


def _elem_types(model) -> set[str]:
    from onnx import TensorProto
    found = set()
    for vi in list(model.graph.input) + list(model.graph.output):
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            found.add(kind or "unknown")
            continue
        found.add(TensorProto.DataType.Name(vi.type.tensor_type.elem_type).lower())
    return found


def describe(case) -> dict:
    """The op a case tests, its opset, and whether it counts toward the bar."""
    model = case.model
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    domains = {n.domain for n in model.graph.node} - {"", "ai.onnx"}
    ops = [n.op_type for n in model.graph.node if n.op_type != "Constant"] or ["Constant"]
    return {"op": ops[0] if len(set(ops)) == 1 else None, "ops": sorted(set(ops)),
            "opset": opset, "expanded": "_expanded" in case.name,
            "counted": not domains and opset <= MAX_OPSET and
            _elem_types(model) <= NUMERIC}


def _op_names(cases) -> dict[str, str]:
    """case name -> the op it tests: the one op of its graph, or (for
    expanded function bodies and multi-op graphs) that of the case it expands,
    else the graph's ops joined."""
    info = {c.name: describe(c) for c in cases}
    names = {}
    for name, d in info.items():
        base = name.split("_expanded")[0]
        op = d["op"] or (info.get(base) or {}).get("op") or "+".join(d["ops"])
        names[name] = op
    return names


def run_case(backend, case) -> tuple[str, str]:
    """(status, one-line detail) of one case."""
    import numpy as np
    from onnx.backend.test.runner import _normalize_tensor
    from x2.errors import InternalError, StepCrashed, X2Error
    try:
        rep = backend.prepare(case.model, "CPU")
    except (InternalError, StepCrashed) as exc:
        return "broken", _line(exc)
    except X2Error as exc:
        return "refused", _line(exc)
    except Exception as exc:  # noqa: BLE001 - loading the generated model failed
        return "broken", f"{type(exc).__name__}: {_line(exc)}"
    for inputs, expected in case.data_sets:
        try:
            with np.errstate(all="ignore"):
                outputs = list(rep.run([_normalize_tensor(i) for i in inputs]))
        except (InternalError, StepCrashed) as exc:
            return "broken", f"run: {_line(exc)}"
        except X2Error as exc:  # converted at run (inputs x2 needs as constants): refused
            return "refused", _line(exc)
        except Exception as exc:  # noqa: BLE001
            return "broken", f"run: {type(exc).__name__}: {_line(exc)}"
        try:
            assert_similar([_normalize_tensor(e) for e in expected], outputs, case.rtol,
                           case.atol)
        except AssertionError as exc:
            return "wrong", _line(exc)
        except Exception as exc:  # noqa: BLE001
            return "wrong", f"{type(exc).__name__}: {_line(exc)}"
    return "pass", ""


# A float16 output computed in another valid order (torch accumulates a half
# softmax or matmul in float32 and rounds once; the suite's reference rounds
# after every op) differs by a rounding or two: in the node suite's
# test_attention_4d_causal_fp16_expanded, x2's torch output is 2 units in the
# last place from the suite's expected values and closer to the float64 result
# than they are. The suite's rtol 1e-3 is about one unit of float16, so such a
# case also passes within 2 units in the last place of each expected value.
FLOAT16_ULPS = 2


def assert_similar(expected, outputs, rtol: float, atol: float) -> None:
    """onnx's comparison, with FLOAT16_ULPS for float16 outputs."""
    import numpy as np
    from onnx.backend.test.runner import Runner
    try:
        Runner.assert_similar_outputs(expected, outputs, rtol=rtol, atol=atol)
    except AssertionError:
        if len(expected) != len(outputs) or not all(
                isinstance(e, np.ndarray) and e.dtype == np.float16 for e in expected):
            raise
        for want, got in zip(expected, outputs):
            got = np.asarray(got)
            if got.shape != want.shape or got.dtype != want.dtype:
                raise
            room = atol + FLOAT16_ULPS * np.spacing(np.abs(want)).astype(np.float64)
            error = np.abs(got.astype(np.float64) - want.astype(np.float64))
            if not np.all((error <= room) | (np.isnan(got) & np.isnan(want))):
                raise


def _line(exc: BaseException) -> str:
    # Without the backend's temporary folder: the JSON stays the same run to run.
    text = re.sub(r"\S*x2-onnx-backend-\w+/", "", " ".join(str(exc).split()))
    return text[:200]


def run_target(target: str, cases, progress=None) -> dict[str, dict]:
    from x2.onnx_backend import X2Backend
    backend = X2Backend.for_target(target)
    names = _op_names(cases)
    results = {}
    for index, case in enumerate(cases):
        status, detail = run_case(backend, case)
        results[case.name] = {"status": status, "detail": detail, "op": names[case.name],
                              **{k: v for k, v in describe(case).items()
                                 if k in ("opset", "counted")}}
        if progress:
            progress(index, case.name, status, detail)
    return results


def summary(results: dict[str, dict]) -> dict:
    counted = [r for r in results.values() if r["counted"]]
    total = Counter(r["status"] for r in results.values())
    bar = Counter(r["status"] for r in counted)
    return {"cases": len(results), **{s: total[s] for s in STATUSES},
            "counted_cases": len(counted), "counted_pass": bar["pass"],
            "counted_pass_rate": round(bar["pass"] / max(1, len(counted)), 4)}


def render(data: dict) -> str:
    """docs/onnx_conformance.md from the JSON."""
    lines = ["# ONNX conformance (generated)", "",
             "x2 run as an ONNX backend (`x2/onnx_backend.py`) over the ONNX project's own node "
             "test suite (`onnx.backend.test`, onnx " + data["onnx"] + "). Each case converts a "
             "small ONNX model with x2 to the target, loads the generated model as a user "
             "would, runs it and compares with the expected outputs (onnx's tolerances).", "",
             "- **pass**: equal outputs; **refused**: x2 refused with a clear error; "
             "**wrong**: ran, outputs differ; **broken**: converted, then failed to load or run "
             "(or x2 failed internally).",
             f"- *Counted*: the cases of default-domain ops at opsets <= {MAX_OPSET} whose inputs "
             "and outputs are float/int/bool tensors (the issue's bar).",
             "- Where a suite case passes axes, pads, repeats, k, bounds or scales as a graph "
             "input, which x2 needs constant at conversion time (ReduceMean, Slice, Pad, Tile, "
             "Trilu, Clip, Resize...), the backend converts at `run` with those inputs' values "
             "frozen in, one conversion per distinct set of values (`X2DeferredRep` in "
             "x2/onnx_backend.py); `x2 convert` refuses such a model.", "",
             f"Regenerate: `{data['command']}` (tests/test_onnx_conformance.py checks this page "
             "against docs/onnx_conformance.json, and that no case is wrong or broken).", "", "## Summary", "",
             "| target | cases | pass | refused | wrong | broken | counted | counted pass |",
             "|---|---|---|---|---|---|---|---|"]
    targets = sorted(data["targets"], key=TARGETS.index)  # the JSON's keys are sorted
    for target in targets:
        s = data["targets"][target]["summary"]
        lines.append(f"| {target} | {s['cases']} | {s['pass']} | {s['refused']} | {s['wrong']} "
                     f"| {s['broken']} | {s['counted_cases']} | {s['counted_pass']} "
                     f"({100 * s['counted_pass_rate']:.1f}%) |")
    lines += ["", "## Per op and opset", "",
              "Statuses as pass/refused/wrong/broken counts of the op's cases.", "",
              "| op | opset | " + " | ".join(targets) + " |",
              "|---|---|" + "---|" * len(targets)]
    rows: dict[tuple, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for target in targets:
        for r in data["targets"][target]["cases"].values():
            rows[(r["op"], r["opset"])][target][r["status"]] += 1
    for (op, opset), per in sorted(rows.items()):
        cells = ["/".join(str(per[t][s]) for s in STATUSES) if t in per else "-"
                 for t in targets]
        lines.append(f"| {op} | {opset} | " + " | ".join(cells) + " |")
    lines += ["", "## Ops with no passing case", "",
              "Every case of these ops is refused; "
              "the per-op table shows ops refused in part (an unsupported dtype, a runtime "
              "input). `--verbose` prints each refusal's message.", ""]
    for target in targets:
        by_op: dict[str, set] = defaultdict(set)
        for r in data["targets"][target]["cases"].values():
            by_op[r["op"]].add(r["status"])
        refused = sorted(op for op, seen in by_op.items() if "pass" not in seen)
        lines.append(f"- {target} ({len(refused)}): {', '.join(refused) or 'none'}")
    return "\n".join(lines) + "\n"


def backend_test(target: str, names: set[str] | None = None,
                 suite_name: str = "OnnxBackendNodeModelTest") -> dict[str, str]:
    """Run onnx's own `BackendTest` runner over the node suite (or the cases
    named; or another of its suites: OnnxBackendPyTorchConvertedModelTest,
    the onnx wheel's opset-6 models) with x2's backend for `target`: case
    name -> pass / refused / failed: MESSAGE (converted, then crashed or
    gave wrong numbers)."""
    import unittest
    from onnx.backend.test import BackendTest
    from x2.errors import InternalError, StepCrashed, X2Error
    from x2.onnx_backend import X2Backend
    base = X2Backend.for_target(target)

    class Refusing(base):
        @classmethod
        def prepare(cls, model, device="CPU", **kwargs):
            try:
                rep = base.prepare(model, device, **kwargs)
            except (InternalError, StepCrashed):
                raise
            except X2Error as exc:  # a clear refusal: counted, not a failure
                raise unittest.SkipTest(f"refused: {_line(exc)}") from None
            return RefusingRep(rep)

    class RefusingRep:
        """A model converted at `run` (X2DeferredRep) can refuse there."""

        def __init__(self, rep):
            self.rep = rep

        def run(self, inputs, **kwargs):
            try:
                return self.rep.run(inputs, **kwargs)
            except (InternalError, StepCrashed):
                raise
            except X2Error as exc:
                raise unittest.SkipTest(f"refused: {_line(exc)}") from None

    class Suite(BackendTest):
        @classmethod
        def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):
            assert_similar(list(ref_outputs), list(outputs), rtol, atol)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner = Suite(Refusing, __name__)
    suite = unittest.TestSuite()
    for test in unittest.TestLoader().loadTestsFromTestCase(
            runner.test_cases[suite_name]):
        name = test._testMethodName.removesuffix("_cpu")
        if names is None or name in names:
            suite.addTest(test)
    # Named before running: a suite lets go of each test once it has run.
    statuses = {t._testMethodName.removesuffix("_cpu"): "pass" for t in suite}
    result = unittest.TestResult()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        suite.run(result)
    for test, reason in result.skipped:
        statuses[test._testMethodName.removesuffix("_cpu")] = "refused"
    for test, trace in result.failures + result.errors:
        last = [line for line in trace.strip().splitlines() if line.strip()][-1]
        statuses[test._testMethodName.removesuffix("_cpu")] = f"failed: {last[:300]}"
    return statuses


# Cases per process in --backend-test: paddle 3.3 crashes inside PIR
# (pir::Value::attribute, SIGSEGV or SIGFPE) after some 1500 converted models
# have run in one process, whichever case comes last; and now and then
# earlier, in a case that passes when run again.
BACKEND_TEST_CHUNK = 500


def _backend_test_in_chunks(target: str, names: list[str]) -> dict[str, str]:
    """backend_test over `names`, BACKEND_TEST_CHUNK cases per child process."""
    statuses: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as work:
        for start in range(0, len(names), BACKEND_TEST_CHUNK):
            statuses.update(_backend_test_chunk(target, names[start:start + BACKEND_TEST_CHUNK],
                                                Path(work), str(start)))
    return statuses


def _backend_test_chunk(target: str, names: list[str], work: Path, tag: str) -> dict[str, str]:
    """backend_test over `names` in a child process. A child the framework
    kills (a signal) is run again in halves, down to one case: a crash that
    does not come back is the framework's state, not a case's; one that does
    is that case's failure. A case whose conversion failed inside x2's worker
    (an internal error) is run again alone the same way."""
    chunk, out = work / f"{tag}.txt", work / f"{tag}.json"
    chunk.write_text("\n".join(names))
    proc = subprocess.run([sys.executable, __file__, "--target", target, "--backend-test",
                           str(out), "--names-file", str(chunk)])
    if proc.returncode == 0:
        statuses = json.loads(out.read_text())
        internal = [n for n, v in statuses.items()
                    if v.startswith("failed") and "internal error in x2 step" in v]
        if internal and len(names) > 1:
            # paddle's state after hundreds of conversions in one process (its
            # dy2static names, eager_tmp_N, clash now and then): each again alone
            for name in internal:
                statuses.update(_backend_test_chunk(target, [name], work, f"{tag}-{name}"))
        return statuses
    if proc.returncode > 0:
        raise SystemExit(f"--backend-test {target}: a child process failed ({proc.returncode})")
    if len(names) == 1:
        return {names[0]: f"failed: the process died with signal {-proc.returncode}"}
    half = len(names) // 2
    print(f"--backend-test {target}: a child died with signal {-proc.returncode}; running its "
          f"{len(names)} cases again in two halves", file=sys.stderr, flush=True)
    return {**_backend_test_chunk(target, names[:half], work, tag + "a"),
            **_backend_test_chunk(target, names[half:], work, tag + "b")}


def _child(args) -> None:
    cases = sample(node_cases(), args.sample, args.seed)

    def progress(index, name, status, detail):
        if args.verbose or status in ("wrong", "broken"):
            print(f"[{index + 1}/{len(cases)}] {name}: {status} {detail}", file=sys.stderr,
                  flush=True)
    Path(args.child).write_text(json.dumps(run_target(args.target[0], cases, progress)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=TARGETS, action="append")
    parser.add_argument("--sample", type=int, help="run a seeded sample of this many cases")
    parser.add_argument("--paddle-sample", type=int,
                        help="for the paddle target only: a seeded sample of this many cases "
                             "(paddle's jit.save makes each conversion slower)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="print, write no docs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--backend-test", metavar="OUT.json",
                        help="run onnx's BackendTest runner (one --target, the --sample) and "
                             "write case -> status to OUT.json (what the tests run)")
    parser.add_argument("--names-file", help=argparse.SUPPRESS)
    parser.add_argument("--pytorch-converted", action="store_true",
                        help="with --backend-test: the onnx wheel's pytorch-converted models "
                             "(opset 6) instead of the node suite")
    args = parser.parse_args(argv)
    if args.backend_test:
        if args.pytorch_converted:
            statuses = backend_test(args.target[0], None, "OnnxBackendPyTorchConvertedModelTest")
        elif args.names_file:
            statuses = backend_test(args.target[0],
                                    set(Path(args.names_file).read_text().split()))
        else:
            names = sorted(c.name for c in sample(node_cases(), args.sample, args.seed))
            statuses = _backend_test_in_chunks(args.target[0], names)
        Path(args.backend_test).write_text(json.dumps(statuses))
        return 0
    if args.child:
        _child(args)
        return 0
    import onnx
    targets = args.target or list(TARGETS)
    data = {"onnx": onnx.__version__, "command": " ".join(
        ["python tools/onnx_conformance.py"] + (argv if argv is not None else sys.argv[1:])),
        "targets": {}}
    for target in targets:
        # One process per target: paddle and torch never share one here.
        out = Path(tempfile.gettempdir()) / f"x2-onnx-conformance-{target}.json"
        size = args.paddle_sample if target == "paddle" and args.paddle_sample else args.sample
        cmd = [sys.executable, __file__, "--child", str(out), "--target", target,
               "--seed", str(args.seed)] + (["--sample", str(size)] if size else []) + \
            (["--verbose"] if args.verbose else [])
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        cases = json.loads(out.read_text())  # with each refusal's message, for --verbose
        cases = {name: {k: v for k, v in case.items() if k != "detail"}
                 for name, case in cases.items()}
        data["targets"][target] = {"summary": summary(cases), "cases": cases}
        print(target, data["targets"][target]["summary"],
              f"{round(time.perf_counter() - start)} s", flush=True)
    if not args.no_write:
        JSON.write_text(json.dumps(data, sort_keys=True) + "\n")
        MD.write_text(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
