"""The model zoo: real architectures with random weights, converted to every
target and checked for parity against their source framework.

    python tools/zoo.py [--models bert,vit] [--family hf-text,keras-app]
                        [--targets paddle,onnx,torch] [--jobs 1] [--force]
                        [--executor local|ray] [--ray-address ADDR]
                        [--work build/zoo] [--md docs/zoo.md] [--list]
    make zoo

Entries (tools/zoo_models/registry.py): Hugging Face `transformers` models
from small configs (text encoders, decoder-only LMs, encoder-decoders,
vision and speech), keras.applications, keras_hub backbones and Keras
sequence models, PyTorch models exported to ONNX by both exporters, and the
onnx wheel's "light" models with their weights re-drawn: nothing is downloaded;
every model is built from a config with a fixed seed, BatchNorm statistics
from data. The packaged family holds models whose trained weights ship
inside registry packages (PP-OCR, Magika, NudeNet, Silero VAD; `make install`
downloads the wheels), checked on realistic inputs.

Each source model is built once into WORK/models by a process of its own
framework (this driver imports none: x2.convert and x2.check.parity run every
framework step in worker processes). Each (model, target) is converted with
x2 and checked with x2 check at the entry's fp32 rtol; a conversion that
fails while reading the source fails the same way for every target, so it
is read once. Results are kept per entry in WORK/results/NAME.json: a run
resumes where the last one stopped (--force redoes the selection). The
table of every entry with a result is written to docs/zoo.md and
docs/zoo.json, with the x2 commit each result was measured at.

--executor ray runs each entry (build, every target's conversion and
check, latency) as one Ray task (x2/process/executors.py): on a local Ray instance
with --jobs CPUs, or on the cluster at --ray-address, whose nodes must see
this checkout and WORK at the same paths (a shared filesystem). A task
whose worker is lost is retried; an entry whose task still fails gets no
result file, so the next run does it again."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "zoo_models")]

import numpy as np  # noqa: E402
from rich.markup import escape  # noqa: E402

import packaged_models  # noqa: E402
import registry  # noqa: E402
from latency import in_own_process  # noqa: E402
from x2.cli import FitTable, console, print_table  # noqa: E402
from x2.contracts import Report  # noqa: E402
from x2.convert import convert  # noqa: E402
from x2.errors import UnsupportedOpsError, X2Error  # noqa: E402
from x2.process.executors import Task, make_executor  # noqa: E402
from x2.process.isolation import reuse_workers  # noqa: E402
from x2.check.generation import check_generation  # noqa: E402
from x2.check.parity import check, make_inputs  # noqa: E402

ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}
BUILD_TIMEOUT_S = 900


def one_line(text: str) -> str:
    """A reason as one line, whole: never cut."""
    return " ".join(str(text).split())


def reason_of(exc: BaseException) -> str:
    if isinstance(exc, UnsupportedOpsError):
        ops = sorted(exc.details.get("unsupported", {}))
        return f"unsupported {len(ops)} op type(s): {', '.join(ops)}"
    if isinstance(exc, X2Error):
        return one_line(exc.message)
    return one_line(f"{type(exc).__name__}: {exc}")


def build_source(entry: registry.Entry, models_dir: Path, dynamic: bool = False) -> str:
    """The entry's source model, built on first use (in its framework's process);
    `dynamic`: with the dims its users vary left dynamic where the build decides."""
    path = Path(entry.model_path(models_dir))
    staging = path.with_name(f".{path.name}.building-{os.getpid()}")
    command = entry.build_command(staging, dynamic)
    if command is None or path.exists():
        return str(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    error = run_build(command)
    if error is not None:
        last = [ln for ln in error.splitlines() if ln.strip()][-1:] or ["no message"]
        raise RuntimeError(f"building the source model failed: {last[0]}")
    os.replace(staging, path)
    return str(path)


def run_build(command: list[str]) -> str | None:
    """`python COMMAND` in a process of its own: None, or its stderr. (The
    test suite runs it in a warm builder process instead.)"""
    proc = subprocess.run([sys.executable, *command], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=BUILD_TIMEOUT_S)
    return None if proc.returncode == 0 else proc.stderr or "no message"


def run_target(entry: registry.Entry, model: str, target: str, out: Path,
               dynamic: bool = False) -> dict:
    """Convert and check one (model, target). Returns the result row; "stage"
    says where a failure happened (read: the source, for every target).
    `dynamic`: converted with the dims its source leaves dynamic kept, and
    checked at three sizes of each."""
    row = {"target": target, "passed": False}
    steps: list[str] = []
    start = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        args = dict(entry.dynamic_args if dynamic else entry.convert_args)
        if (dynamic or entry.generate) and entry.check_sizes:
            # convert's verify at the sizes the check runs: dims that must agree.
            args["emit_options"] = {**(args.get("emit_options") or {}),
                                    "verify_dims": entry.check_sizes}
        report = convert(model, str(out), source=entry.source, target=target,
                         progress=lambda step, state, s=None: steps.append(step)
                         if state == "start" else None, **args)
    except Exception as exc:  # the reason is the result
        stage = ("setup" if not steps else "read" if steps[-1].startswith("read ")
                 else "convert")
        row.update(stage=stage, reason=reason_of(exc),
                   error_kind=getattr(exc, "kind", "internal"),
                   unsupported=sorted(getattr(exc, "details", {}).get("unsupported", {})))
        return row
    row.update(convert_s=round(time.perf_counter() - start, 2),
               transposes_left=report.transposes_left)
    if (out / "model.py").is_file():
        row["structure"] = structure(report, out)
    verified = report.target_details.get("verify") or {}
    row.update(verified=bool(verified.get("verified")), verify_s=verified.get("seconds"),
               verify_runners=verified.get("runners", []))
    # A checkpoint stored in bf16/fp16 converts in its dtype by default: judged
    # at that precision's tolerance (x2/check/parity.py), not the entry's fp32 one.
    half = (report.target_details.get("precision") or {}).get("precision", "fp32") != "fp32"
    rtol = None if half else entry.rtol
    try:
        # Paddle also through Paddle Inference with its default config: how it is served.
        result = check(model, str(out), source=entry.source, target=target, rtol=rtol,
                       dim_sizes=entry.check_sizes if dynamic or entry.generate else None,
                       serving=target == "paddle",
                       inputs=packaged_models.inputs(entry.name) if entry.real_inputs else None)
        encoder = _convert_encoder(entry, model, target, out) if entry.encoder_args else None
        if entry.generate:
            generated = check_generation(model, str(out), source=entry.source, target=target,
                                         new_tokens=entry.generate, rtol=entry.rtol,
                                         serving=target == "paddle", encoder=encoder)
            row["generate"] = {"tokens": entry.generate, "passed": generated["passed"],
                               "runners": generated["runners"]}
    except Exception as exc:
        row.update(stage="check", reason=reason_of(exc), error_kind=getattr(exc, "kind", ""))
        return row
    rows = result["outputs"]
    row.update(max_rel=max((r["max_rel"] for r in rows), default=0.0), rtol=result["rtol"],
               passed=result["passed"], stage="check",
               shapes=[s["input_shapes"] for s in result["shapes_checked"]],
               runners=sorted({r["runner"] for r in rows}),
               dims=sorted({d for s in result["shapes_checked"] for d in s["dims"]}))
    if not result["passed"]:
        row["reason"] = check_failure(result)
    generated = row.get("generate")
    if generated and not generated["passed"]:
        row["passed"] = False
        worst = next(r for r in generated["runners"] if not r["passed"])
        row.setdefault("reason", f"generate: {worst['runner']} " + (
            f"tokens differ from step {worst['first_different_step']}"
            if not worst["tokens_equal"] else
            f"logits max rel err {worst['max_rel']:.3e} > rtol {entry.rtol:g}"))
    return row


def structure(report, out: Path) -> dict:
    """What model.py keeps of the source (issue 47): its classes and the
    instances of each, the modules left inline, how many of the source's
    state_dict keys the output has, and model.py's length."""
    tree = report.target_details.get("module_tree") or {}
    names = report.target_details.get("source_names") or {}
    classes = tree.get("classes") or {}
    return {"classes": len(classes),
            "instances": sum(len(c["instances"]) for c in classes.values()),
            "inlined": len(tree.get("inlined") or []),
            "source_keys": names.get("source_keys"), "matched": names.get("matched"),
            "lines": len((out / "model.py").read_text().splitlines())}


def _convert_encoder(entry: registry.Entry, model: str, target: str, out: Path) -> str:
    """An encoder-decoder's encoder, converted next to its decoder and
    checked at its sizes; raises when it fails (the row's check stage)."""
    encoder = out.with_name(out.name + "-encoder")
    convert(model, str(encoder), source=entry.source, target=target, **entry.encoder_args)
    # The first layer's self-attention cache of the start token is the same
    # whatever the source (it has not yet attended to it): a warning, while
    # the logits and every other cache must vary with the input.
    result = check(model, str(encoder), source=entry.source, target=target, rtol=entry.rtol,
                   dim_sizes=entry.encoder_check_sizes, serving=target == "paddle",
                   allow_input_independent=True)
    if not result["passed"]:
        raise RuntimeError(f"the encoder: {check_failure(result)}")
    return str(encoder)


# How each target is timed: the way it is served (tools/zoo_models/latency.py).
SERVED_BY = {"paddle": "paddle-inference", "torch": "torch", "onnx": "onnx"}


def measure_latency(entry: registry.Entry, model: str, result: dict, work: Path) -> None:
    """Latency of each converted model that passed, run as it is served
    (Paddle Inference with its default config, torch eager, onnxruntime),
    relative to the source framework's own serving path on the same inputs
    (a SavedModel's signature, the torch module in eager mode, onnxruntime),
    one thread each, median of runs. A failed measurement is recorded, never
    a failure of the pair."""
    for target, row in result["targets"].items():
        if not row.get("passed") or row.get("latency_ratio") is not None:
            continue
        out = work / "out" / entry.name / target
        try:
            report = Report.load(out)
            inputs = out.parent / "latency_inputs.npz"
            np.savez(inputs, *make_inputs({"inputs": report.inputs}, 0, 2))
            names = (report.source.get("options", {}).get("forward_args")
                     or [i["name"] for i in report.inputs])
            if result.get("source_ms") is None:
                source = {"torch": "torch-spec"}.get(entry.source, entry.source)
                result["source_ms"] = round(in_own_process(source, model, inputs, names), 3)
            converted = str(out / "model.onnx") if target == "onnx" else str(out)
            row["latency_ms"] = round(in_own_process(SERVED_BY[target], converted, inputs, names),
                                      3)
            row["latency_ratio"] = round(row["latency_ms"] / result["source_ms"], 3)
        except Exception as exc:  # recorded in the row
            row["latency_error"] = one_line(str(exc))


def check_failure(result: dict) -> str:
    if result.get("input_independent"):
        return one_line(result["input_independent"])
    worst = max(result["outputs"], key=lambda r: r["max_rel"])
    return (f"parity: output '{worst['name']}' ({worst['runner']}) max rel err "
            f"{worst['max_rel']:.3e} > rtol {worst['rtol']:g}")


def measured_at() -> str:
    """The x2 commit a result is measured at (`+changes` when the tracked
    files differ from it): a table records what it measured."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)
    head = git("rev-parse", "--short=12", "HEAD")
    if head.returncode != 0:
        return "unknown"
    dirty = git("diff", "--quiet", "HEAD", "--", "x2", "mappers", "tools").returncode != 0
    return head.stdout.strip() + ("+changes" if dirty else "")


def run_entry(entry: registry.Entry, work: Path, targets: list[str], report,
              latency: bool = True, dynamic: bool = False) -> dict:
    result = {"name": entry.name, "family": entry.family, "source": entry.source,
              "rtol": entry.rtol, "commit": measured_at(), "targets": {}}
    start = time.perf_counter()
    try:
        model = build_source(entry, work / "models", dynamic)
    except Exception as exc:
        for target in targets:
            result["targets"][target] = {"target": target, "passed": False, "stage": "build",
                                         "reason": one_line(str(exc))}
            report(entry, result["targets"][target])
        return result
    read_failure = None
    for target in targets:
        if read_failure is not None:
            row = {**read_failure, "target": target}
        else:
            row = run_target(entry, model, target, work / "out" / entry.name / target,
                             dynamic)
            if row.get("stage") == "read":
                read_failure = row
        result["targets"][target] = row
        report(entry, row)
    if latency:
        measure_latency(entry, model, result, work)
    result["seconds"] = round(time.perf_counter() - start, 1)
    return result


def entry_task(arg: tuple) -> dict:
    """One entry as an executor task, in whichever process runs it."""
    name, work, targets, latency, dynamic = arg
    return run_entry(registry.ENTRIES[name], Path(work), targets, lambda *_: None, latency,
                     dynamic)


def entry_lost(arg: tuple, message: str) -> dict:
    """The result of an entry whose task returned nothing (its worker lost)."""
    name, _, targets, _, _ = arg
    entry = registry.ENTRIES[name]
    return {"name": name, "family": entry.family, "source": entry.source, "rtol": entry.rtol,
            "lost": True, "targets": {t: {"target": t, "passed": False, "stage": "setup",
                                          "reason": message} for t in targets}}


def load_results(work: Path) -> dict[str, dict]:
    results = {}
    for path in sorted((work / "results").glob("*.json")):
        data = json.loads(path.read_text())
        if data["name"] in registry.ENTRIES:
            results[data["name"]] = data
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", help="comma-separated entry names")
    parser.add_argument("--family", help=f"comma-separated families: {registry.FAMILIES}")
    parser.add_argument("--targets", default=",".join(registry.TARGETS))
    parser.add_argument("--jobs", type=int, default=1, help="entries at once")
    parser.add_argument("--force", action="store_true", help="redo entries that have results")
    parser.add_argument("--executor", choices=["local", "ray"], default="local",
                        help="entries as threads here, or as Ray tasks")
    parser.add_argument("--ray-address", help="--executor ray: the cluster (ray://HOST:10001, "
                        "auto); default a local Ray instance with --jobs CPUs")
    parser.add_argument("--dynamic", action="store_true",
                        help="keep the dims each source leaves dynamic (batch, sequence "
                             "length) and check three sizes of each; results in "
                             "build/zoo-dynamic and docs/zoo_dynamic.md")
    parser.add_argument("--work", help="results folder (default build/zoo, or "
                                       "build/zoo-dynamic with --dynamic)")
    parser.add_argument("--md", help="the table written (default docs/zoo.md, or "
                                     "docs/zoo_dynamic.md with --dynamic)")
    parser.add_argument("--list", action="store_true", help="list the entries and exit")
    parser.add_argument("--no-latency", action="store_true",
                        help="skip measuring converted-model latency")
    parser.add_argument("--latency-only", action="store_true",
                        help="measure latency for passed pairs of existing results, then "
                             "rewrite the tables")
    args = parser.parse_args(argv)
    entries = select(args.models, args.family)
    if args.list:
        for e in entries:
            print(f"{e.name:28} {e.family:14} --from {e.source}")
        return 0
    targets = [t for t in args.targets.split(",") if t]
    suffix = "-dynamic" if args.dynamic else ""
    work = Path(args.work or ROOT / "build" / f"zoo{suffix}")
    args.md = args.md or str(ROOT / "docs" / f"zoo{suffix.replace('-', '_')}.md")
    for sub in ("models", "out", "results"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    done = load_results(work)
    if args.latency_only:
        for entry in entries:
            if entry.name in done:
                result = done[entry.name]
                measure_latency(entry, entry.model_path(work / "models"), result, work)
                (work / "results" / f"{entry.name}.json").write_text(json.dumps(result,
                                                                                indent=2))
                console.print(f"latency: {escape(entry.name)} done", highlight=False)
        todo = []
    else:
        todo = [e for e in entries if args.force or e.name not in done or
                set(targets) - set(done[e.name]["targets"])]
    console.print(f"zoo: {len(todo)} of {len(entries)} selected entries to run "
                  f"({len(entries) - len(todo)} have results in {work / 'results'}), "
                  f"targets {', '.join(targets)}, {args.jobs} job(s)", soft_wrap=True)
    finished = 0
    total = len(todo) * len(targets)
    # The Ray workers import this script's functions and the registry.
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tools" / "zoo_models")]),
           "X2_REUSE_WORKERS": "1"}
    try:
        executor = make_executor(args.executor if todo else "local", args.jobs,
                                 args.ray_address if todo else None, retries=2, env=env)
    except X2Error as exc:
        sys.exit(f"error: {exc.message}")
    tasks = [Task(key=e.name, arg=(e.name, str(work), targets, not args.no_latency,
                                   args.dynamic))
             for e in todo]
    with reuse_workers():   # one TensorFlow/Paddle/torch import per worker, not per step
        for i, result in executor.run(entry_task, tasks, entry_lost):
            _record(todo[i], result, targets, done, work, args.force, finished, total)
            finished += len(result["targets"])
    results = load_results(work)
    write_outputs(results, Path(args.md).with_suffix(".json"), Path(args.md))
    print_table(summary_table(results))
    return 0


def _record(entry, result: dict, targets: list[str], done: dict, work: Path, force: bool,
            finished: int, total: int) -> None:
    """Print an entry's rows and keep its result (merged with earlier targets)."""
    for row in result["targets"].values():
        finished += 1
        mark = "[green]pass[/]" if row["passed"] else "[red]FAIL[/]"
        detail = (f"max rel {row['max_rel']:.3e}" if row.get("max_rel") is not None
                  else "") + (f"  {row['reason']}" if row.get("reason") else "")
        console.print(f"[{finished}/{total}] {escape(entry.name)} -> {row['target']}: "
                      f"{mark} {escape(detail)}", highlight=False, soft_wrap=True)
    if result.get("lost"):
        return  # no result file: the next run does it again
    if entry.name in done and not force:
        result["targets"] = {**done[entry.name]["targets"], **result["targets"]}
    (work / "results" / f"{entry.name}.json").write_text(json.dumps(result, indent=2))


def _generates(result: dict) -> str:
    """'32 tokens: paddle, onnx, torch' (targets that generated the source's tokens)."""
    rows = [t for t in result["targets"].values() if t.get("generate")]
    if not rows:
        return "—"
    good = [t["target"] for t in rows if t["generate"]["passed"]]
    return f"{rows[0]['generate']['tokens']} tokens: {', '.join(good) or 'none'}"


def select(models: str | None, family: str | None) -> list[registry.Entry]:
    entries = list(registry.ENTRIES.values())
    if models:
        names = [n for n in models.split(",") if n]
        unknown = [n for n in names if n not in registry.ENTRIES]
        if unknown:
            sys.exit(f"--models: unknown {', '.join(unknown)}; see --list")
        entries = [registry.ENTRIES[n] for n in names]
    if family:
        families = [f for f in family.split(",") if f]
        unknown = [f for f in families if f not in registry.FAMILIES]
        if unknown:
            sys.exit(f"--family: unknown {', '.join(unknown)}; families are "
                     f"{', '.join(registry.FAMILIES)}")
        entries = [e for e in entries if e.family in families]
    return entries


def summary(results: dict[str, dict]) -> list[dict]:
    """Pass counts per family and target."""
    rows = {}
    for r in results.values():
        row = rows.setdefault(r["family"], {"family": r["family"], "models": 0,
                                            **{t: [0, 0] for t in registry.TARGETS}})
        row["models"] += 1
        for target, t in r["targets"].items():
            row[target][1] += 1
            row[target][0] += bool(t["passed"])
    return [rows[k] for k in sorted(rows)]


def cause_of(row: dict) -> str:
    """A failure's reason without what names one model: its path, node and
    output names, the numbers of a parity error."""
    reason = row.get("reason", "unknown")
    if row.get("stage") == "check" and reason.startswith("parity:"):
        return "parity error above the entry's rtol (fp32)"
    reason = re.sub(r"^\S+\.(onnx|py\S*): ", "", reason)
    reason = re.sub(r" on \S+(\.onnx|\.py:\w+|/\w+)(?=:)", "", reason)
    return re.sub(r"'[^']*'", "'…'", reason)


def failure_causes(results: dict[str, dict]) -> list[tuple[str, int, list[str]]]:
    """Failures grouped by cause: each missing op is one cause (a model
    missing three ops counts under each), other errors by their reason."""
    causes: dict[str, list[str]] = {}
    for r in results.values():
        for target, t in r["targets"].items():
            if t["passed"]:
                continue
            where = f"{r['name']}->{target}"
            keys = ([f"unsupported op {op}" for op in t["unsupported"]]
                    if t.get("unsupported") else [cause_of(t)])
            for key in keys:
                causes.setdefault(key, []).append(where)
    return sorted(((k, len(v), v) for k, v in causes.items()), key=lambda c: (-c[1], c[0]))


def _cell(t: dict | None) -> str:
    if t is None:
        return "not run"
    if t["passed"]:
        return "pass"
    return "FAIL (" + {"read": "read", "convert": "convert", "check": "parity",
                       "build": "build", "setup": "setup"}.get(t.get("stage"), "?") + ")"


def _verified_cell(t: dict | None) -> str:
    """Whether convert's verify proved the written model against the source
    (every runner of the target), and what it cost."""
    if not t or "verified" not in t:
        return ""
    return f"yes ({t['verify_s']:.1f})" if t["verified"] else "no"


def latency_summary(results: dict) -> list[str]:
    """Per target: the converted model's latency over the source's, as served,
    across the pairs timed (median, geometric mean, share at most 1.0x) and
    the slowest three."""
    lines = ["", "## Latency as served (converted / source)", ""]
    if not any(t.get("latency_ratio") for r in results.values() for t in r["targets"].values()):
        return lines + ["Not measured in this run (`python tools/zoo.py --latency-only` "
                        "measures the passing pairs of its results)."]
    lines += ["Over the passing pairs timed (one thread, same inputs; Paddle through Paddle "
              "Inference, default config).", "",
              "| target | pairs timed | median | geometric mean | at most 1.0x | slowest |",
              "|---|---:|---:|---:|---:|---|"]
    for target in registry.TARGETS:
        timed = sorted(((t["latency_ratio"], name) for name, r in results.items()
                        if (t := r["targets"].get(target)) and t.get("latency_ratio")),
                       reverse=True)
        if not timed:
            continue
        ratios = np.array([ratio for ratio, _ in timed])
        slowest = ", ".join(f"{name} {ratio:.2f}x" for ratio, name in timed[:3])
        lines.append(f"| {target} | {len(timed)} | {np.median(ratios):.2f}x | "
                     f"{np.exp(np.log(ratios).mean()):.2f}x | "
                     f"{(ratios <= 1.0).sum()} of {len(timed)} | {slowest} |")
    return lines


def _verify_summary(pairs: list[dict]) -> list[str]:
    """How many written models convert's own verify proved against the source."""
    written = [t for t in pairs if "verified" in t]
    if not written:
        return []
    proved = [t for t in written if t["verified"]]
    seconds = sorted(t["verify_s"] for t in proved)
    median = f", median verify {seconds[len(seconds) // 2]:.1f} s" if seconds else ""
    return [f"Convert's verify (the source against every runner of the written model, "
            f"before it is published) proved **{len(proved)} of {len(written)}** written "
            f"models{median}.", ""]


def write_outputs(results: dict[str, dict], json_path: Path, md_path: Path) -> None:
    commits = sorted({r.get("commit", "unknown") for r in results.values()})
    json_path.write_text(json.dumps({"commits": commits, "summary": summary(results),
                                     "models": results}, indent=2))
    pairs = [t for r in results.values() for t in r["targets"].values()]
    passed = sum(t["passed"] for t in pairs)
    if commits == ["unknown"]:
        measured = ("**Measured before the zoo recorded x2 commits and padded attention "
                    "masks: a stale table; rerun `make zoo ZOO_ARGS=--force`.**")
    elif len(commits) == 1:
        measured = (f"Token models get padded attention masks (right- and left-padded "
                    f"rows). Measured at x2 commit {commits[0]}.")
    else:
        measured = (f"**Measured at {len(commits)} different x2 commits "
                    f"({', '.join(commits)})**: rerun with `--force` for one table of one "
                    f"commit.")
    lines = ["# Model zoo", "",
             "Generated by `python tools/zoo.py` (`make zoo`); do not edit by hand. Real "
             "architectures with random weights from configs (seeded, BatchNorm statistics "
             "from data, no downloads), and (family packaged) models whose trained weights "
             "ship inside registry packages, checked on realistic inputs (text images, audio, "
             "a file's bytes; tools/zoo_models/packaged_models.py); converted by x2 to each "
             "target and checked with "
             "`x2 check` against the source framework on logits (fp32; rtol per model, "
             "error measured against the output's scale: 1e-4 for large nets, 1e-5 for small "
             "ones, and about 4x the model's own fp32-vs-fp64 error where that error is "
             "larger, see `RTOL_FP32_FLOOR` in tools/zoo_models/registry.py). A paddle "
             "result covers model.py, `paddle.jit.load` of inference/ and Paddle Inference "
             "with its default config (oneDNN on), each at every shape checked. " + measured,
             "",
             f"**{passed} of {len(pairs)} (model, target) pairs pass** over "
             f"{len(results)} models.", "", *_verify_summary(pairs),
             "## Summary (passed / run per target)", "",
             "| family | models | " + " | ".join(registry.TARGETS) + " |",
             "|---|---:|" + "---:|" * len(registry.TARGETS)]
    for row in summary(results):
        lines.append(f"| {row['family']} | {row['models']} | " + " | ".join(
            f"{row[t][0]}/{row[t][1]}" for t in registry.TARGETS) + " |")
    lines += latency_summary(results)
    lines += ["", "## Models", "",
              "Columns per target: result, max rel err, conversion time (s, its verify "
              "included), whether convert's verify proved the written model against the "
              "source on every runner of the target (and its seconds), Transposes "
              "left, and latency of the converted model relative to the source framework "
              "(x: converted / source, one thread each, median of runs on the same inputs; "
              "measured for pairs that pass). Each runs as it is served: Paddle through "
              "Paddle Inference with its default config (oneDNN on), torch eager, ONNX in "
              "onnxruntime; the source as its SavedModel signature, torch eager module or "
              "onnxruntime session.", "",
              "Dynamic dims: the dims the converted model keeps dynamic, and the input "
              "shapes `x2 check` ran (each dim at its example size, 1 and a larger odd "
              "size; static conversions run one shape).", "",
              "Generates: for decoders with their cache, the targets on which `x2 check "
              "--generate` decoded the source's tokens greedily from three left-padded "
              "prompts (lengths 3, 9, 17), each step's logits within the rtol; for "
              "transformers sources the source's tokens also equal transformers' own "
              "`generate(do_sample=False)`. An encoder-decoder (`with_cache_t5_lm`, "
              "`with_cache_bart_lm`) is two conversions, `--with-cache --part encoder` "
              "(checked at three source lengths) and `--part decoder` (the row's figures).",
              "",
              "| model | family | source | rtol | dynamic dims | shapes checked | generates | "
              + " | ".join(
                  f"{t} | {t} max rel | {t} convert s | {t} verified (s) | {t} Transposes | "
                  f"{t} latency" for t in registry.TARGETS) + " |",
              "|---|---|---|---:|---|---|---|"
              + "---|---:|---:|---:|---:|---:|" * len(registry.TARGETS)]
    for name in sorted(results, key=lambda n: (results[n]["family"], n)):
        r = results[name]
        cells = []
        for target in registry.TARGETS:
            t = r["targets"].get(target)
            rel = t.get("max_rel") if t else None
            cells += [_cell(t), "" if rel is None else f"{rel:.2e}",
                      "" if not t or t.get("convert_s") is None else f"{t['convert_s']:.1f}",
                      _verified_cell(t),
                      "" if not t or t.get("transposes_left") is None
                      else str(t["transposes_left"]),
                      "" if not t or t.get("latency_ratio") is None
                      else f"{t['latency_ratio']:.2f}x"]
        checked = next((t for t in r["targets"].values() if t.get("shapes")), {})
        shapes = "; ".join(" ".join("x".join(map(str, s)) for s in shape_set)
                           for shape_set in checked.get("shapes", []))
        lines.append(f"| {name} | {r['family']} | {r['source']} | {r['rtol']:g} | "
                     f"{', '.join(checked.get('dims', [])) or '—'} | {shapes} | "
                     f"{_generates(r)} | " + " | ".join(cells) + " |")
    lines += ["", "## Structure of the written model.py", "",
              "Per Python target: the classes written for the source's modules (their "
              "instances), the modules left inline in their parent (report.json "
              "`target_details.module_tree` says why), the source's state_dict keys the "
              "output holds, and model.py's length in lines.", "",
              "| model | target | classes (instances) | inlined | source keys matched | "
              "model.py lines |", "|---|---|---:|---:|---:|---:|"]
    for name in sorted(results, key=lambda n: (results[n]["family"], n)):
        for target, t in results[name]["targets"].items():
            shape = t.get("structure")
            if not shape:
                continue
            keys = ("—" if shape["source_keys"] is None
                    else f"{shape['matched']} of {shape['source_keys']}")
            lines.append(f"| {name} | {target} | {shape['classes']} ({shape['instances']}) | "
                         f"{shape['inlined']} | {keys} | {shape['lines']} |")
    lines += ["", "## Failure reasons", "", "| model | target | stage | reason |",
              "|---|---|---|---|"]
    for name in sorted(results, key=lambda n: (results[n]["family"], n)):
        for target, t in results[name]["targets"].items():
            if not t["passed"]:
                reason = t.get("reason", "").replace("|", "\\|")
                lines.append(f"| {name} | {target} | {t.get('stage', '')} | {reason} |")
    lines += ["", "## Failures grouped by cause", "",
              "Each missing op is its own cause (a model missing three ops is counted under "
              "each): the work list for the mappers.", "", "| cause | pairs | which |",
              "|---|---:|---|"]
    for cause, count, where in failure_causes(results):
        lines.append(f"| {cause.replace('|', chr(92) + '|')} | {count} | {', '.join(where)} |")
    md_path.write_text("\n".join(lines) + "\n")


def summary_table(results: dict[str, dict]) -> FitTable:
    pairs = [t for r in results.values() for t in r["targets"].values()]
    table = FitTable(title=f"zoo: {sum(t['passed'] for t in pairs)} of {len(pairs)} "
                           f"(model, target) pairs pass over {len(results)} models")
    table.add_column("family")
    table.add_column("models", numeric=True)
    for target in registry.TARGETS:
        table.add_column(target, numeric=True)
    for row in summary(results):
        table.add_row(row["family"], str(row["models"]),
                      *[f"{row[t][0]}/{row[t][1]}" for t in registry.TARGETS])
    return table


if __name__ == "__main__":
    sys.exit(main())
