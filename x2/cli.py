"""`x2` command line. Imports no framework: every framework step runs in a
worker process (x2/isolation.py)."""
from __future__ import annotations

import json
import sys
import traceback

import click
from rich.console import Console
from rich.table import Table

from .errors import X2Error

console = Console(stderr=True)


def _split(names: str | None) -> list[str] | None:
    return [n.strip() for n in names.split(",") if n.strip()] if names else None


def parse_input_shapes(values: tuple[str, ...]) -> dict[str, list[int]] | None:
    shapes = {}
    for value in values:
        name, sep, dims = value.rpartition(":")
        if not sep or not name:
            raise X2Error(f"--input-shape {value!r}: expected NAME:D1,D2,... e.g. "
                          f"input:1,224,224,3")
        try:
            shapes[name] = [int(d) for d in dims.split(",")]
        except ValueError:
            raise X2Error(f"--input-shape {value!r}: dimensions must be integers") from None
    return shapes or None


def _fail(exc: BaseException, debug: bool) -> None:
    if debug:
        console.print("".join(traceback.format_exception(exc)), markup=False, highlight=False)
        worker_tb = getattr(exc, "worker_traceback", None)
        if worker_tb:
            console.print("--- worker traceback ---\n" + worker_tb, markup=False, highlight=False)
    message = exc.message if isinstance(exc, X2Error) else f"{type(exc).__name__}: {exc}"
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    if not debug:
        console.print("[dim](run with --debug for the full trace)[/]")
    sys.exit(2 if isinstance(exc, X2Error) else 3)


class _Progress:
    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.status = None

    def __call__(self, step: str, state: str, seconds: float | None = None) -> None:
        if self.quiet:
            return
        if state == "start":
            self.status = console.status(f"{step} ...")
            self.status.start()
        else:
            if self.status:
                self.status.stop()
            console.print(f"[green]✓[/] {step} [dim]({seconds:.2f} s)[/]")


def _summary(report: dict) -> Table:
    table = Table(title="conversion summary", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("source", f"{report['source']['framework']}: {report['source']['model']}")
    table.add_row("target", report["target"])
    table.add_row("inputs", ", ".join(f"{i['name']} {i['shape']}" for i in report["inputs"]))
    table.add_row("outputs", ", ".join(f"{o['name']} {o.get('shape')}" for o in report["outputs"]))
    table.add_row("source ops mapped", f"{report['ops_mapped']} "
                  f"({len(report['ops_seen'])} op types)")
    table.add_row("IR nodes before → after passes",
                  f"{report['nodes_before_passes']} → {report['nodes_after_passes']}")
    table.add_row("Transposes before → left",
                  f"{report['transposes_before_passes']} → {report['transposes_left']}")
    for item in report.get("transposes_where", []):
        table.add_row("  Transpose left", f"{item['where']}: {item['why']}")
    table.add_row("total time", f"{sum(report['timings_s'].values()):.2f} s")
    return table


def parity_table(result: dict) -> Table:
    table = Table(title=f"parity (rtol={result['rtol']:g}, atol={result['atol']:g}, "
                        f"seed={result['seed']}, inputs {result['input_shapes']})")
    for col in ("runner", "output", "max abs err", "max rel err", "ref scale", "result"):
        table.add_column(col)
    for r in result["outputs"]:
        verdict = "[green]pass[/]" if r["passed"] else "[red]FAIL[/]"
        if r["ref_constant"]:
            verdict += " [yellow](reference output is constant)[/]"
        table.add_row(r["runner"], r["name"], f"{r['max_abs']:.3e}", f"{r['max_rel']:.3e}",
                      f"{r['ref_scale']:.3g}", verdict)
    return table


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="x2")
def main() -> None:
    """x2: convert models between deep-learning frameworks."""


# The choices come from the pipeline tables (x2/convert.py, x2/parity.py);
# reading them imports no framework.
from .convert import EMITTERS, FRONTENDS  # noqa: E402
from .parity import SOURCE_RUNS, TARGET_RUNS  # noqa: E402


@main.command()
@click.option("--from", "source", required=True, type=click.Choice(sorted(FRONTENDS)),
              help="Source framework.")
@click.option("--to", "target", required=True, type=click.Choice(sorted(EMITTERS)),
              help="Target framework.")
@click.option("--model", required=True, help="Source model (tf: SavedModel dir, frozen .pb, checkpoint .meta/prefix, .keras/.h5).")
@click.option("--out", required=True, help="Output directory (written atomically).")
@click.option("--inputs", help="Comma-separated tensor names to use as inputs (prunes the graph).")
@click.option("--outputs", help="Comma-separated tensor names to use as outputs (prunes).")
@click.option("--input-shape", multiple=True, help="NAME:D1,D2,... fixes an input's shape.")
@click.option("--signature", help="SavedModel signature (default: serving_default).")
@click.option("--layout", type=click.Choice(["nchw", "nhwc"]), default="nchw", show_default=True,
              help="Layout inside the converted model (nhwc keeps a TF model's layout: "
                   "data_format=NHWC for paddle, channels_last for torch).")
@click.option("--io-layout", type=click.Choice(["source", "nchw"]), default="source",
              show_default=True,
              help="Inputs/outputs keep the source layout, or become NCHW (no Transpose "
                   "at the boundary).")
@click.option("--opset", type=int, help="ONNX opset to write (--to onnx; default 17).")
@click.option("--input-dtype", multiple=True,
              help="[NAME:]DTYPE of the example inputs (--from torch; default float32).")
@click.option("--trust-pickle", is_flag=True,
              help="Allow torch.load to unpickle arbitrary objects (runs code from the file).")
@click.option("--model-def", help="--from tf, TF2 checkpoint: package.module:factory or "
              "file.py:factory returning the Keras model / tf.Module to restore into.")
@click.option("--trust-code", is_flag=True,
              help="--from tf, Keras files: allow Lambda layers (runs Python code from the file).")
@click.option("--tags", help="--from tf, TF1 SavedModel: comma-separated meta graph tags "
              "(default: serve).")
@click.option("--channels-last", is_flag=True,
              help="--to torch: the model runs in torch.channels_last memory format.")
@click.option("--quiet", is_flag=True, help="No progress or summary (for scripts).")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def convert(source, target, model, out, inputs, outputs, input_shape, signature, layout,
            io_layout, opset, input_dtype, trust_pickle, model_def, trust_code, tags,
            channels_last, quiet, debug):
    """Convert MODEL from one framework to another."""
    from .convert import convert as run_convert
    emit_options = {"opset": opset} if opset else {}
    if channels_last:
        emit_options["channels_last"] = True
    # "NAME:DTYPE" for one input, a bare "DTYPE" for all ("*").
    options = {"input_dtypes": {(v.rpartition(":")[0] or "*"): v.rpartition(":")[2]
                                for v in input_dtype}} if input_dtype else {}
    if trust_pickle:
        options["trust_pickle"] = True
    if model_def:
        options["model_def"] = model_def
    if trust_code:
        options["trust_code"] = True
    if tags:
        options["tags"] = _split(tags)
    try:
        report = run_convert(model, out, source=source, target=target, inputs=_split(inputs),
                             outputs=_split(outputs), input_shapes=parse_input_shapes(input_shape),
                             signature=signature, emit_options=emit_options,
                             options=options, layout=layout, io_layout=io_layout,
                             progress=_Progress(quiet))
    except Exception as exc:
        _fail(exc, debug)
        return
    if not quiet:
        console.print(_summary(report))
        top = sorted({f.split("/")[0] + ("/" if "/" in f else "") for f in report["files"]})
        console.print(f"written to [bold]{out}[/]: {', '.join(top + ['report.json'])}")


@main.command()
@click.option("--from", "source", required=True, type=click.Choice(sorted(SOURCE_RUNS)))
@click.option("--to", "target", required=True, type=click.Choice(sorted(TARGET_RUNS)))
@click.option("--model", required=True, help="The source model that was converted.")
@click.option("--converted", required=True, help="The x2 output directory.")
@click.option("--signature", help="SavedModel signature (default: the one converted).")
@click.option("--rtol", default=1e-4, show_default=True, type=float)
@click.option("--atol", default=1e-6, show_default=True, type=float)
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--batch", default=2, show_default=True, type=int,
              help="Batch size used for dynamic batch dimensions.")
@click.option("--json", "json_path", help="Also write the parity report as JSON here.")
@click.option("--debug", is_flag=True)
def check(source, target, model, converted, signature, rtol, atol, seed, batch, json_path,
          debug):
    """Run source and converted model on the same inputs and compare outputs."""
    from .parity import check as run_check
    try:
        result = run_check(model, converted, source=source, target=target, signature=signature,
                           rtol=rtol, atol=atol, seed=seed, batch=batch)
    except Exception as exc:
        _fail(exc, debug)
        return
    Console().print(parity_table(result))
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(result, fh, indent=2)
    sys.exit(0 if result["passed"] else 1)


if __name__ == "__main__":
    main()
