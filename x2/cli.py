"""`x2` command line. Imports no framework: every framework step runs in a
worker process (x2/process/isolation.py)."""
from __future__ import annotations

import copy
import dataclasses
import json
import os
import sys
import traceback

import click
from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .contracts import Report
from .errors import X2Error
from .check.input_ranges import parse_input_ranges, parse_input_values
from .check.runtime import NHWC_ON_ONEDNN
from .text import printable

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
        shapes[name] = [_dim(value, d.strip()) for d in dims.split(",")]
    return shapes or None


def _dim(option: str, text: str) -> int | str:
    """An int fixes the dim; a name keeps it dynamic ("seq", or "seq=16" with
    the example size): the same name is the same size in every input."""
    from .ir.symbols import is_symbol
    symbol, eq, size = text.partition("=")
    try:
        if not eq and not is_symbol(text):
            value = int(text)
            if value >= 0:
                return value
        elif is_symbol(symbol) and (not eq or int(size) > 0):
            return text
    except ValueError:
        pass
    raise X2Error(f"--input-shape {option!r}: each dimension is a size (16), a name for a "
                  f"dynamic dim (seq) or a name with its example size (seq=16); "
                  f"{text!r} is none of these")


def _fail(exc: BaseException, debug: bool, hint: bool = True) -> None:
    if debug:
        console.print("".join(traceback.format_exception(exc)), markup=False, highlight=False)
        worker_tb = getattr(exc, "worker_traceback", None)
        if worker_tb:
            console.print("--- worker traceback ---\n" + worker_tb, markup=False, highlight=False)
    message = exc.message if isinstance(exc, X2Error) else f"{type(exc).__name__}: {exc}"
    if getattr(exc, "one_line", True):
        message = message.strip().replace("\n", "\\n")
    # Messages carry names and paths from the model: no markup, no control
    # characters, and no line breaks added by wrapping (one line stays one line).
    console.print(f"[bold red]error:[/] {escape(printable(message))}", highlight=False,
                  soft_wrap=True)
    if not debug and hint:
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


_TEXT_MIN = 12  # a text cell (a name, a path) may fold down to this width; numbers never do


def _fill(ranges: list[tuple[int, int]], room: int) -> list[int]:
    """Column widths within room: each column starts at its least width and the narrowest
    grow first (water-filling), each up to its natural width."""
    level = 0
    while level < max((natural for _, natural in ranges), default=0) and sum(
            min(natural, max(least, level + 1)) for least, natural in ranges) <= room:
        level += 1
    widths = [min(natural, max(least, level)) for least, natural in ranges]
    spare = room - sum(widths)
    for i, (_, natural) in enumerate(ranges):  # what is left: one more to the first ones
        if spare > 0 and widths[i] < natural:
            widths[i], spare = widths[i] + 1, spare - 1
    return widths


def _plain(cell) -> Text:
    return Text.from_markup(cell) if isinstance(cell, str) else cell


class FitTable(Table):
    """A rich Table that never cuts a cell with "…" and never breaks a number. Columns
    added with numeric=True keep their content on one line (only their header wraps);
    other columns wrap at spaces, and fold a long name, down to a minimum width. The
    column widths are chosen here, not by rich: boxed when that fits the console, else
    with a light box, else every row prints as "column: value" lines."""

    def add_column(self, header="", *, numeric: bool = False, **kwargs) -> None:
        kwargs.setdefault("overflow", "fold")
        super().add_column(header, **kwargs)
        self.columns[-1].numeric = numeric  # type: ignore[attr-defined]

    def _ranges(self) -> list[tuple[int, int]]:
        """Per column: (least width that breaks no number, width with nothing wrapped)."""
        out = []
        for column in self.columns:
            texts = [_plain(c) for c in column.cells]
            header = _plain(column.header)
            natural = max([t.cell_len for t in texts] + [header.cell_len])
            header_word = max([cell_len(w) for w in header.plain.split()] or [0])
            if column.no_wrap:
                least = natural
            elif getattr(column, "numeric", False):
                least = max([t.cell_len for t in texts] + [header_word])
            else:
                words = [cell_len(w) for t in texts for w in t.plain.split()] + [header_word]
                least = min(max(words), _TEXT_MIN)
            out.append((least, natural))
        return out

    def _variant(self, boxed: bool, max_width: int) -> Table | None:
        """This table with every column's width set so that it fits max_width, or None."""
        table = copy.copy(self)
        if not boxed:
            table.box, table.show_edge, table.pad_edge = box.SIMPLE_HEAD, False, False
            table.padding = (0, 0)
        ranges = self._ranges()
        room = max_width - self._overhead(table)
        if sum(least for least, _ in ranges) > room:
            return None
        # Text cells get their room first; whole headers over numbers come second.
        numeric = [getattr(c, "numeric", False) for c in self.columns]
        widths = _fill([(least, least if num else natural)
                        for (least, natural), num in zip(ranges, numeric)], room)
        widths = _fill([(w, natural) for w, (_, natural) in zip(widths, ranges)], room)
        table.columns = [dataclasses.replace(c, width=w) for c, w in zip(self.columns, widths)]
        return table

    @staticmethod
    def _overhead(table: Table) -> int:
        """Columns of the table's width taken by padding and box lines."""
        n = len(table.columns)
        _, right, _, left = table.padding
        width = (left + right) * n - (0 if table.pad_edge else left + right)
        if table.box:
            width += (n - 1) + (2 if table.show_edge else 0)
        return width

    def natural_width(self) -> int:
        """Width of the boxed table when no cell has to wrap."""
        return sum(natural for _, natural in self._ranges()) + self._overhead(self)

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        for boxed in (True, False):
            table = self._variant(boxed, options.max_width)
            if table is not None:
                yield from Table.__rich_console__(table, console, options)
                return
        yield from self._vertical(options.max_width)

    def _vertical(self, width: int):
        if self.title:
            yield _plain(self.title).copy()
            yield Text("")
        columns, ranges = self.columns, self._ranges()
        rows = list(zip(*(list(c.cells) for c in columns)))
        if self.show_header:
            blocks = [[(_plain(c.header), _plain(v)) for c, v in zip(columns, row)]
                      for row in rows]
        else:  # already key/value rows: one block
            blocks = [[(_plain(row[0]), Text(" ").join(_plain(v) for v in row[1:]))
                       for row in rows]]
            ranges = ranges[1:]
        value_width = max((least for least, _ in ranges), default=0)
        key_width = max((k.cell_len for block in blocks for k, _ in block), default=0)
        for i, block in enumerate(blocks):
            if i:
                yield Text("")
            if key_width + 2 + value_width <= width:
                grid = Table.grid(padding=(0, 1, 0, 0))
                grid.add_column(no_wrap=True, style="bold")
                grid.add_column(overflow="fold")
                for key, value in block:
                    grid.add_row(key + ":", value)
                yield grid
            else:  # key on its own line, value indented below
                for key, value in block:
                    yield Text.assemble(key, ":", style="bold")
                    yield Padding(value, (0, 0, 0, 2))
        if self.caption:
            yield _plain(self.caption).copy()


def print_table(table: FitTable, stderr: bool = False) -> Console:
    """Print a table and return the console used, for the lines that follow it. On a
    terminal (or with COLUMNS set) the table fits that width; piped output has no width,
    so the table prints at its natural width instead of rich's default of 80 columns."""
    out = Console(stderr=stderr)
    if not out.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
        out = Console(stderr=stderr, width=max(80, table.natural_width()))
    out.print(table)
    return out


def _summary(report: Report) -> FitTable:
    table = FitTable(title="conversion summary", show_header=False)
    table.add_column("what", no_wrap=True)
    table.add_column("value")
    table.add_row("source", escape(f"{report.source['framework']}: "
                                   f"{report.source['model']}"))
    table.add_row("target", report.target)
    reader = report.source.get("reader")
    if reader:
        table.add_row("read by", "x2 directly (no TensorFlow import)" if reader["name"] == "direct"
                      else escape(f"TensorFlow ({reader.get('why')})"))
    table.add_row("inputs", escape(", ".join(f"{i['name']} {i['shape']}"
                                             for i in report.inputs)))
    table.add_row("outputs", escape(", ".join(f"{o['name']} {o.get('shape')}"
                                              for o in report.outputs)))
    precision = report.target_details.get("precision") or {}
    if precision:
        table.add_row("precision", escape(f"{precision['precision']} "
                                          f"({precision.get('chosen', '--precision')})"))
    table.add_row("source ops mapped", f"{report.ops_mapped} "
                  f"({len(report.ops_seen)} op types)")
    table.add_row("IR nodes before → after passes",
                  f"{report.nodes_before_passes} → {report.nodes_after_passes}")
    table.add_row("Transposes before → left",
                  f"{report.transposes_before_passes} → {report.transposes_left}")
    for item in report.transposes_where:
        table.add_row("  Transpose left", escape(f"{item['where']}: {item['why']}"))
    table.add_row("verified against the source", escape(_verify_line(
        report.target_details.get("verify") or {})))
    table.add_row("total time", f"{sum(report.timings_s.values()):.2f} s")
    return table


def _verify_line(record: dict) -> str:
    if not record.get("verified"):
        return f"no ({record.get('skipped', 'not run')})"
    shapes = "; ".join(" ".join(f"{k}={v}" for k, v in s["dims"].items()) or "static shapes"
                       for s in record.get("shapes", []))
    worst = max((rel for per in record.get("max_rel", {}).values() for rel in per.values()),
                default=0.0)
    return (f"yes: {', '.join(record.get('runners', []))} at {shapes}, largest relative "
            f"error {worst:.3g} ({record.get('seconds', 0):.2f} s)")


def parity_table(result: dict) -> FitTable:
    devices = result.get("devices", {})
    rows = result["outputs"]
    batches = {(r.get("batch", 0), r.get("seed")) for r in rows}
    tols = [f"{r.get('rtol', result['rtol']):g}/{r.get('atol', result['atol']):g}" for r in rows]
    # Columns that would repeat one value on every row go to the title instead.
    show_batch = len(batches) > 1
    show_tol = any(t != f"{result['rtol']:g}/{result['atol']:g}" for t in tols)
    seed = next(iter(batches))[1] if batches and not show_batch else None
    title = escape(f"parity (rtol={result['rtol']:g}, atol={result['atol']:g}, "
                   f"precision={result.get('precision', 'fp32')}, "
                   f"devices source={devices.get('source', 'cpu')} "
                   f"converted={devices.get('target', 'cpu')}, inputs {result['input_shapes']}"
                   + (f", seed {seed}" if seed is not None else "") + ")")
    table = FitTable(title=title)
    shapes = [b.get("dims") or {} for b in result.get("batches", [])]
    show_dims = len({repr(d) for d in shapes}) > 1
    if show_batch:
        table.add_column("batch", numeric=True)
    if show_dims:
        table.add_column("dynamic dims")
    table.add_column("runner")
    table.add_column("output")
    for col in ("max abs err", "max rel err", "ref scale") + (("tol",) if show_tol else ()):
        table.add_column(col, numeric=True)
    table.add_column("result")
    for r, tol in zip(rows, tols):
        verdict = "[green]pass[/]" if r["passed"] else "[red]FAIL[/]"
        if r["ref_constant"]:
            verdict += " [yellow](reference output is constant)[/]"
        elif r.get("input_independent"):
            verdict += " [yellow](reference does not depend on the input)[/]"
        batch = f"{r.get('batch', 0)}" + (f" (seed {r['seed']})" if r.get("seed") is not None
                                          else "")
        dims = shapes[r.get("batch", 0)] if r.get("batch", 0) < len(shapes) else {}
        dims = " ".join(f"{k}={v}" for k, v in dims.items())
        table.add_row(*((batch,) if show_batch else ()), *((escape(dims),) if show_dims else ()),
                      escape(r["runner"]), escape(r["name"]),
                      f"{r['max_abs']:.3e}", f"{r['max_rel']:.3e}", f"{r['ref_scale']:.3g}",
                      *((tol,) if show_tol else ()), verdict)
    return table


def bisect_table(bisect: dict) -> FitTable:
    first = bisect.get("first_divergence")
    title = (f"bisect ({bisect['runner']}, batch {bisect.get('batch', 0)}): "
             f"{bisect['compared']} mapped points compared, "
             f"{bisect['skipped']} without a source counterpart")
    table = FitTable(title=escape(title))
    for col in ("converted var", "IR op", "source op", "source node"):
        table.add_column(col)
    table.add_column("max rel err", numeric=True)
    table.add_column("layout")
    table.add_column("result")
    for p in bisect["points"]:
        table.add_row(escape(p["var"]), escape(p["ir_op"]), escape(p["source_op"] or ""),
                      escape(p["source_name"] or ""), f"{p['max_rel']:.3e}", escape(p["layout"]),
                      "[green]match[/]" if p["passed"] else "[red]FIRST DIVERGENCE[/]")
    if first is None:
        table.caption = escape(bisect.get("why", ""))
    return table


def print_parity(result: dict) -> None:
    out = print_table(parity_table(result))
    for line in result.get("warnings", []):
        console.print(f"[yellow]warning:[/] {escape(line)}", highlight=False)
    for line in result.get("notes", []):
        out.print(f"[dim]note: {escape(line)}[/]", highlight=False)
    out.print(escape(f"tolerance: {result.get('tolerance_note', '')}"), highlight=False)
    for runner, why in (result.get("runner_errors") or {}).items():
        out.print(f"[bold red]runner failed:[/] {escape(runner)}: {escape(why)}",
                  highlight=False)
    if result.get("input_independent"):
        out.print("[bold red]vacuous reference:[/] " + escape(result["input_independent"]),
                  highlight=False)
    bisect = result.get("bisect")
    if bisect and bisect.get("ran"):
        print_table(bisect_table(bisect))
        first = bisect.get("first_divergence")
        if first:
            out.print("[bold red]first diverging op:[/] " + escape(
                f"{first['source_op']} '{first['source_name']}' (IR {first['ir_op']}, mapper "
                f"{first['mapper']}, converted variable {first['var']}): max rel err "
                f"{first['max_rel']:.3e}"), highlight=False)
            for u in bisect.get("unmatched_before", []):
                out.print(escape(f"  also unchecked just before it: {u['source_op']} "
                                 f"'{u['source_name']}' (IR {u['ir_op']}, {u['var']})"),
                          highlight=False)
    elif bisect:
        out.print(escape(f"bisect: {bisect.get('why')}"), highlight=False)


def generation_table(result: dict) -> FitTable:
    """x2 check --generate: one row per runner of the converted model."""
    table = FitTable(title=escape(
        f"greedy generation, {result['new_tokens']} tokens from prompts of lengths "
        f"{', '.join(map(str, result['prompt_lengths']))} (left padded; rtol="
        f"{result['rtol']:g}, atol={result['atol']:g} on each step's logits)"))
    table.add_column("runner")
    table.add_column("tokens")
    for col in ("steps compared", "max rel err"):
        table.add_column(col, numeric=True)
    table.add_column("result")
    native = result.get("source_generate")
    for r in result["runners"] + ([native] if native else []):
        tokens = "equal" if r["tokens_equal"] else f"differ from step {r['first_different_step']}" \
            + (" (a near tie in the source)" if r.get("near_tie") else "")
        compared = (str(r["steps_compared"]), f"{r['max_rel']:.3e}") if "max_rel" in r \
            else ("-", "-")   # the source's own generate(): tokens only
        table.add_row(escape(r["runner"]), tokens, *compared,
                      "[green]pass[/]" if r["passed"] else "[red]FAIL[/]")
    table.caption = escape("; ".join(result["notes"]))
    return table


def grad_table(result: dict) -> FitTable:
    """x2 check --grad: one row per source weight, the worst first."""
    table = FitTable(title=escape(
        f"gradient parity (rtol={result['rtol']:g}, atol={result['atol']:g}, seed "
        f"{result['seed']}, batch {result['batch']}; loss source {result['loss']['source']:.6g}"
        f", converted {result['loss']['converted']:.6g})"))
    table.add_column("converted parameter")
    table.add_column("source weight")
    for col in ("max abs err", "max rel err", "grad scale"):
        table.add_column(col, numeric=True)
    table.add_column("result")
    rows = sorted(result["parameters"], key=lambda r: (r["passed"], -(r["max_rel"] or 0.0)))
    for r in rows:
        verdict = "[green]pass[/]" if r["passed"] else "[red]FAIL[/]" + (
            f" ({escape(r['why'])})" if r.get("why") else "")
        table.add_row(escape(r["parameter"] or "-"), escape(r["source"] or "-"),
                      "-" if r["max_abs"] is None else f"{r['max_abs']:.3e}",
                      "-" if r["max_rel"] is None else f"{r['max_rel']:.3e}",
                      "-" if r.get("scale") is None else f"{r['scale']:.3g}", verdict)
    worst = result.get("worst")
    if worst:
        table.caption = escape(f"worst: {worst['parameter']} ({worst['source']}), max rel err "
                               f"{worst['max_rel']:.3e}; {result['source_weights']} source "
                               f"weights, {result['converted_parameters']} converted parameters")
    return table


class _Group(click.Group):
    """`x2 --help` lists each command with its whole first sentence (click would cut it at
    the terminal width with "..."); write_dl wraps it instead."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.short_help or _first_sentence(cmd.help or "")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _first_sentence(text: str) -> str:
    text = " ".join(text.split("\n\n")[0].split())
    end = text.find(". ")
    return text if end < 0 else text[:end + 1]


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="x2")
def main() -> None:
    """x2: convert models between deep-learning frameworks."""


# The choices come from the pipeline tables (x2/convert.py, x2/check/parity.py);
# reading them imports no framework.
from .convert import EMITTERS, FRONTENDS  # noqa: E402
from .check.parity import SOURCE_RUNS, TARGET_RUNS  # noqa: E402


@main.command()
@click.option("--from", "source", required=True, type=click.Choice(sorted(FRONTENDS)),
              help="Source framework.")
@click.option("--to", "target", required=True, type=click.Choice(sorted(EMITTERS)),
              help="Target framework.")
@click.option("--model", required=True,
              help="Source model (tf: SavedModel dir, frozen .pb, checkpoint .meta/prefix, "
                   ".keras/.h5; torch: file.py:factory, .pt2, TorchScript, a Hugging Face "
                   "folder with config.json and safetensors weights; onnx: .onnx).")
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
              help="[NAME:]DTYPE of the inputs (--from torch; default float32), e.g. "
                   "input_ids:int64.")
@click.option("--input-range", multiple=True, metavar="NAME:LOW,HIGH",
              help="Integer input values x2 check draws from, [LOW, HIGH) (e.g. "
                   "input_ids:0,30522); default: the rows of the embedding it indexes, 0/1 "
                   "for a mask, else 0..9.")
@click.option("--input-value", multiple=True, metavar="NAME=VALUE",
              help="Fix an input to a value at conversion (a sample rate, a flag: "
                   "sr=16000; a list as 1,2,3): a constant of the converted model, not an "
                   "input; branches on it keep the branch taken. x2 check feeds it to the "
                   "source.")
@click.option("--with-cache", is_flag=True,
              help="--from torch, a transformers causal LM: convert one decoding step with "
                   "its KV cache as inputs and outputs (input_ids, attention_mask, "
                   "position_ids, past_key_values.N.key/value -> logits, present.N.key/"
                   "value), for generation (x2 check --generate N; model.py's generate). "
                   "An encoder-decoder converts as two models: see --part.")
@click.option("--part", type=click.Choice(["encoder", "decoder"]),
              help="--with-cache, an encoder-decoder (T5, BART): encoder (input_ids, "
                   "attention_mask -> the first token's logits, present.N.decoder/encoder."
                   "key/value) or decoder (each later step: input_ids, "
                   "encoder_attention_mask, past_key_values.N.decoder/encoder.key/value -> "
                   "logits, present.N.decoder.key/value).")
@click.option("--trust-pickle", is_flag=True,
              help="Allow torch.load to unpickle arbitrary objects (runs code from the file).")
@click.option("--dynamic-batch", is_flag=True,
              help="--from torch: export with dim 0 of every input dynamic; the converted "
                   "model takes any batch size.")
@click.option("--model-def", help="--from tf, TF2 checkpoint: package.module:factory or "
              "file.py:factory returning the Keras model / tf.Module to restore into.")
@click.option("--trust-code", is_flag=True,
              help="--from tf, Keras files: allow Lambda layers (runs Python code from the file).")
@click.option("--tags", help="--from tf, TF1 SavedModel: comma-separated meta graph tags "
              "(default: serve).")
@click.option("--channels-last", is_flag=True,
              help="--to torch: the model runs in torch.channels_last memory format.")
@click.option("--tf-reader", type=click.Choice(["auto", "direct", "tensorflow"]),
              default="auto", show_default=True,
              help="--from tf, SavedModel: read it without TensorFlow (direct), with "
                   "TensorFlow, or direct where possible (auto).")
@click.option("--unroll-loops", is_flag=True,
              help="--from tf, SavedModel: convert While loops whose trip count is static "
                   "(Keras LSTM/GRU over a fixed sequence length) as one copy of the loop "
                   "body per iteration.")
@click.option("--precision", type=click.Choice(["fp32", "fp16", "bf16", "mixed"]),
              help="Write the model in this precision: weights and compute in fp16/bf16, "
                   "sensitive ops (--keep-fp32) and ops that would overflow fp16 in fp32; "
                   "mixed: fp32 weights with fp16 autocast (paddle, torch; onnx: as fp16). "
                   "Default: the dtype the source's weights are stored in (--from torch: "
                   "a bf16 or fp16 checkpoint converts in bf16 or fp16), else fp32.")
@click.option("--keep-fp32", metavar="OPS",
              help="IR ops kept in float32 with --precision (comma-separated; 'default' for "
                   "the default list, 'none' for none), e.g. default,tanh.")
@click.option("--io-dtype", type=click.Choice(["half", "fp32"]),
              help="With --precision fp16/bf16: float inputs/outputs in the half dtype "
                   "(default) or in float32 (a cast at the interface).")
@click.option("--for", "purpose", type=click.Choice(["inference", "training"]),
              default="inference", show_default=True,
              help="inference: fold BatchNorm into convolutions and arithmetic on weights "
                   "into constants; training: keep the source's parameter set (BatchNorm "
                   "layers with their running statistics, every learned weight a trainable "
                   "parameter) for fine-tuning.")
@click.option("--exportable", is_flag=True,
              help="--to torch: write conditionals and loops as torch.cond / while_loop "
                   "calls, which torch.export keeps as control flow (default: Python "
                   "if/while).")
@click.option("--flat", is_flag=True,
              help="--to torch/paddle from a torch model: write one flat Model class with a "
                   "comment naming the source node on every line (default: a class per "
                   "source module class, as the source's modeling code has them).")
@click.option("--no-verify", is_flag=True,
              help="Write the model without running it against the source model (by default "
                   "the source framework and every runner of the target run the same inputs, "
                   "and a model that disagrees, crashes or hangs is not written).")
@click.option("--dim", "verify_dims", multiple=True, metavar="NAME=S1,S2",
              help="Sizes the verify runs a dynamic dim at (repeatable), for dims that must "
                   "agree, e.g. --dim past=5,2 --dim seq=3,1 --dim total=8,3. Default: its "
                   "example size, then 1.")
@click.option("--verify-timeout", type=float, metavar="SECONDS",
              help="Seconds each verify runner (the source's, each of the target's) may take "
                   "before it counts as hung (default 600).")
@click.option("--quiet", is_flag=True, help="No progress or summary (for scripts).")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def convert(source, target, model, out, inputs, outputs, input_shape, signature, layout,
            io_layout, opset, input_dtype, input_range, input_value, with_cache, part,
            trust_pickle,
            dynamic_batch, model_def, trust_code, tags, channels_last, tf_reader, unroll_loops, precision, keep_fp32,
            io_dtype, purpose, exportable, flat, no_verify, verify_dims, verify_timeout, quiet,
            debug):
    """Convert MODEL from one framework to another."""
    from .check.shapes import parse_dim_sizes
    from .convert import convert as run_convert
    from .contracts import EmitOptions, ReadOptions
    from .passes.precision import parse_keep_fp32
    try:
        emit_options = EmitOptions(opset=opset, channels_last=bool(channels_last),
                                   precision=precision, keep_fp32=parse_keep_fp32(keep_fp32),
                                   io_dtype=io_dtype, verify=not no_verify,
                                   verify_timeout=verify_timeout,
                                   verify_dims=parse_dim_sizes(verify_dims) or None,
                                   purpose=purpose, exportable=bool(exportable),
                                   flat=bool(flat))
    except Exception as exc:
        _fail(exc, debug)
        return
    # "NAME:DTYPE" for one input, a bare "DTYPE" for all ("*").
    options = ReadOptions(
        input_dtypes={(v.rpartition(":")[0] or "*"): v.rpartition(":")[2] for v in input_dtype},
        trust_pickle=bool(trust_pickle), dynamic_batch=bool(dynamic_batch),
        model_def=model_def or None, trust_code=bool(trust_code),
        tags=_split(tags) if tags else None, tf_reader=tf_reader,
        unroll_loops=bool(unroll_loops), with_cache=bool(with_cache), cache_part=part)
    try:
        options.input_ranges = parse_input_ranges(input_range)
        options.input_values = parse_input_values(input_value)
    except Exception as exc:
        _fail(exc, debug)
        return
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
        print_table(_summary(report), stderr=True)
        top = sorted({f.split("/")[0] + ("/" if "/" in f else "") for f in report.files})
        console.print(f"written to [bold]{out}[/]: {', '.join(top + ['report.json'])}")
        for note in report.source.get("notes") or []:
            console.print(f"note: {escape(printable(note))}", highlight=False, soft_wrap=True)
    if target == "paddle" and report.layout.get("inside") == "nhwc":
        console.print(f"[yellow]warning:[/] {NHWC_ON_ONEDNN}", highlight=False)
    fixed = report.source.get("specialized_dims")
    if fixed:   # dims asked dynamic that the model's code fixes (torch.export)
        dims = ", ".join(f"{d['input']} dim {d['axis']} = {d['size']}" for d in fixed)
        console.print(f"[yellow]warning:[/] kept static, as the model's code fixes them "
                      f"(report.json source.specialized_dims says where): {escape(dims)}",
                      highlight=False, soft_wrap=True)
    bounded = report.source.get("bounded_dims")
    if bounded:   # dims the model's code bounds: the converted model holds within only
        dims = ", ".join(f"{d['input']} dim {d['axis']} in [{d['min'] or 1}, "
                         f"{d['max'] or 'any'}]" for d in bounded)
        console.print(f"[yellow]warning:[/] the model's code bounds these dims (the "
                      f"converted model takes those sizes only; verified within): "
                      f"{escape(dims)}", highlight=False, soft_wrap=True)
    record = report.target_details.get("verify") or {}
    if not record.get("verified") and record.get("skipped") != "--no-verify":
        console.print(f"[yellow]warning:[/] written without verify against the source: "
                      f"{escape(str(record.get('skipped')))}", highlight=False)
    constant = record.get("input_independent")
    if constant and not quiet:
        console.print(f"[yellow]warning:[/] the source's output "
                      f"{escape(', '.join(repr(n) for n in constant))} did not change with the "
                      f"inputs verify fed it, so matching it proves little; check with real "
                      f"inputs: x2 check --inputs-file", highlight=False)


@main.command()
@click.option("--from", "source", required=True, type=click.Choice(sorted(SOURCE_RUNS)),
              help="Source framework.")
@click.option("--to", "target", required=True, type=click.Choice(sorted(TARGET_RUNS)),
              help="Target framework of the conversion.")
@click.option("--model", required=True, help="The source model that was converted.")
@click.option("--converted", required=True, help="The x2 output directory.")
@click.option("--signature", help="SavedModel signature (default: the one converted).")
@click.option("--inputs-file", type=click.Path(),
              help="Real inputs instead of seeded random ones: a .npy (one input) or a .npz "
                   "with arrays named after the inputs (or arr_0, arr_1, ...), in the "
                   "converted model's input layout.")
@click.option("--batches", default=1, show_default=True, type=int,
              help="Number of random batches, seeds SEED, SEED+1, ...")
@click.option("--dim", "dims", multiple=True, metavar="NAME=S1,S2,...",
              help="Sizes to check a dynamic dim at (repeatable), e.g. --dim seq=1,16,33. "
                   "Default: its example size, 1 and a larger odd size.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--batch", default=2, show_default=True, type=int,
              help="Batch size used for dynamic batch dimensions.")
@click.option("--rtol", type=float,
              help="Relative tolerance (of the output's max |value|). Default by precision: "
                   "fp32 1e-4, fp16 1e-2, bf16 5e-2.")
@click.option("--atol", type=float,
              help="Absolute tolerance. Default by precision: fp32 1e-6, fp16 1e-3, bf16 1e-2.")
@click.option("--tol", "tols", multiple=True, metavar="NAME:RTOL[:ATOL]",
              help="Tolerance for one output (repeatable), e.g. --tol logits:1e-3:1e-5.")
@click.option("--device", default="cpu", show_default=True,
              help="cpu, gpu or gpu:N for both sides; a device the frameworks do not report "
                   "is an error listing the available ones. On GPU no framework takes all "
                   "memory (TF memory growth, Paddle auto_growth, onnxruntime arena limit).")
@click.option("--source-device", help="Device of the source model only (overrides --device).")
@click.option("--target-device", help="Device of the converted model only (overrides --device).")
@click.option("--soft-placement", is_flag=True,
              help="Fall back to cpu, with a warning, when the requested device is missing.")
@click.option("--precision", type=click.Choice(["fp32", "fp16", "bf16"]),
              help="Run an fp32 conversion in this precision (torch: model.to(dtype); paddle: "
                   "amp auto_cast on GPU, weights/inputs rounded on CPU; onnxruntime: "
                   "weights/inputs rounded, computed in fp32); the error is measured against "
                   "the fp32 source. Default: the precision it was converted with "
                   "(x2 convert --precision), which runs as written.")
@click.option("--bisect", is_flag=True,
              help="On a mismatch, compare intermediate tensors at points mapped between "
                   "source and converted model and name the first op that diverges "
                   "(TF sources; paddle, torch and onnx targets).")
@click.option("--allow-input-independent", is_flag=True,
              help="A source output that does not change with the input is a warning, not a "
                   "failure (parity against it proves nothing).")
@click.option("--serving/--no-serving", default=True, show_default=True,
              help="Also run the target's serving runtime: for --to paddle, inference/ in "
                   "Paddle Inference with its default config (oneDNN on for CPU), as "
                   "deployed; a crash or mismatch there fails the check.")
@click.option("--grad", is_flag=True,
              help="Compare gradients instead of outputs: one forward and backward pass of "
                   "sum(outputs * fixed random weights) in both models; every source weight's "
                   "gradient against the converted parameter holding it (default rtol 1e-4).")
@click.option("--generate", "new_tokens", type=int, default=0, metavar="N",
              help="For a decoder with its cache at the interface (past_key_values.N.key/"
                   "value in, logits and present.N.key/value out): generate N tokens greedily "
                   "with the source and with the converted model from 3 left-padded prompts "
                   "(lengths 3, 9, 17); the tokens must be equal and each step's logits "
                   "within the tolerance. An encoder-decoder: CONVERTED is its decoder, "
                   "--encoder its encoder.")
@click.option("--encoder", "encoder_out", metavar="DIR",
              help="With --generate: the encoder-decoder's encoder, converted with "
                   "--with-cache --part encoder (CONVERTED: --part decoder).")
@click.option("--json", "json_path", help="Also write the parity report as JSON here.")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
def check(source, target, model, converted, signature, inputs_file, batches, dims, seed, batch,
          rtol, atol, tols, device, source_device, target_device, soft_placement, precision, bisect,
          allow_input_independent, serving, grad, new_tokens, encoder_out, json_path, debug):
    """Run source and converted model on the same inputs and compare outputs.

    An output passes when max|converted - source| <= atol + rtol * max|source|.
    Exit status: 0 all outputs match, 1 a mismatch (or a source output that does not depend
    on the input), 2 bad input (or a missing device)."""
    from .check.parity import check as run_check, parse_tolerances
    from .check.shapes import parse_dim_sizes
    if grad:
        from .check.gradcheck import check_grad
        try:
            result = check_grad(model, converted, source=source, target=target,
                                signature=signature, seed=seed, batch=batch,
                                rtol=1e-4 if rtol is None else rtol,
                                atol=1e-6 if atol is None else atol)
        except Exception as exc:
            _fail(exc, debug)
            return
        print_table(grad_table(result))
        if json_path:
            with open(json_path, "w") as fh:
                json.dump(result, fh, indent=2)
        sys.exit(0 if result["passed"] else 1)
    if new_tokens:
        from .check.generation import check_generation
        try:
            result = check_generation(model, converted, source=source, target=target,
                                      new_tokens=new_tokens, rtol=rtol, atol=atol, seed=seed,
                                      serving=serving, signature=signature,
                                      encoder=encoder_out)
        except Exception as exc:
            _fail(exc, debug)
            return
        print_table(generation_table(result))
        if json_path:
            with open(json_path, "w") as fh:
                json.dump(result, fh, indent=2)
        sys.exit(0 if result["passed"] else 1)
    try:
        result = run_check(model, converted, source=source, target=target, signature=signature,
                           rtol=rtol, atol=atol, seed=seed, batch=batch,
                           inputs_file=inputs_file, batches=batches,
                           tolerances=parse_tolerances(tols), device=device,
                           source_device=source_device, target_device=target_device,
                           soft_placement=soft_placement, precision=precision, bisect=bisect,
                           allow_input_independent=allow_input_independent,
                           serving=serving, dim_sizes=parse_dim_sizes(dims))
    except Exception as exc:
        _fail(exc, debug)
        return
    print_parity(result)
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(result, fh, indent=2)
    sys.exit(0 if result["passed"] else 1)


@main.command("convert-many")
@click.option("--from", "source", required=True, type=click.Choice(sorted(FRONTENDS)))
@click.option("--to", "targets", required=True, multiple=True,
              type=click.Choice(sorted(EMITTERS)),
              help="Target framework; repeat for several (each model goes to "
                   "OUT_DIR/<name>/<target>/ then).")
@click.option("--out-dir", required=True, help="Each model goes to OUT_DIR/<name>/.")
@click.option("--jobs", "-j", default=2, show_default=True,
              help="Pairs at once (--executor ray without an address: the CPUs of the local "
                   "Ray instance).")
@click.option("--layout", type=click.Choice(["nchw", "nhwc"]), default="nchw")
@click.option("--io-layout", type=click.Choice(["source", "nchw"]), default="source")
@click.option("--check", "check", is_flag=True,
              help="Run x2 check on each converted model, in the same task.")
@click.option("--no-verify", is_flag=True,
              help="Write each model without convert's verify against its source (x2 convert "
                   "--no-verify).")
@click.option("--rtol", type=float, help="--check: relative tolerance (x2 check's default).")
@click.option("--device", default="cpu", show_default=True,
              help="--check: device of both models (gpu: each Ray task asks for one GPU).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local",
              show_default=True,
              help="Run the pairs as processes on this machine, or as Ray tasks.")
@click.option("--ray-address", help="--executor ray: the cluster (ray://HOST:10001, auto); "
              "default RAY_ADDRESS, else a local Ray instance. OUT_DIR and the models must "
              "be on a filesystem every node shares.")
@click.option("--retries", default=2, show_default=True,
              help="--executor ray: times a pair is run again when its worker is lost (never "
                   "for the model's own error).")
@click.option("--resume", is_flag=True,
              help="Skip pairs that an earlier run into OUT_DIR finished (their output and "
                   "report.json complete and valid); run the rest.")
@click.argument("models", nargs=-1, required=True)
def convert_many_command(source, targets, out_dir, jobs, layout, io_layout, check, no_verify,
                         rtol, device, executor, ray_address, retries, resume, models):
    """Convert MODELS (paths, directories of models, or @list files) in parallel."""
    from pathlib import Path

    from .process.batch import convert_many, expand_models, plan
    from .process.executors import make_executor
    targets = list(dict.fromkeys(targets))
    check_args = None
    if check:
        check_args = ["--device", device] + (["--rtol", str(rtol)] if rtol is not None else [])
    try:
        pairs = plan(expand_models(list(models)), targets, Path(out_dir), source,
                     ["--layout", layout, "--io-layout", io_layout]
                     + (["--no-verify"] if no_verify else []), check_args)
        runner = make_executor(executor, jobs, ray_address, retries)
    except Exception as exc:
        _fail(exc, False, hint=False)
        return
    where = "on Ray" if executor == "ray" else f"with {jobs} job(s)"
    console.print(f"converting {len(pairs)} (model, target) pair(s) {where} ...")
    done = []

    def progress(row, kept):
        done.append(row)
        mark = ("[dim]=[/]" if kept else "[green]✓[/]" if _row_ok(row) else "[red]✗[/]")
        seconds = "" if row["seconds"] is None else f" ({row['seconds']} s)"
        console.print(f"{mark} [{len(done)}/{len(pairs)}] "
                      f"{escape(printable(row['model'] + ' -> ' + row['target'] + _verdict(row)))}"
                      + (" (done before: --resume)" if kept else seconds), highlight=False,
                      soft_wrap=True)

    try:
        rows = convert_many(pairs, Path(out_dir), runner, resume=resume,
                            gpu=device.startswith("gpu"), on_done=progress)
    except KeyboardInterrupt:
        console.print(f"interrupted: {len(done)} of {len(pairs)} pair(s) finished; run the "
                      f"same command with --resume to do the rest")
        sys.exit(130)
    except X2Error as exc:
        _fail(exc, False, hint=False)
        return
    passed = sum(r.get("check") == "pass" for r in rows)
    table = FitTable(title=f"convert-many: {sum(r['status'] == 'ok' for r in rows)} of "
                           f"{len(rows)} converted"
                           + (f", {passed} pass the check" if check else ""))
    columns = ["model", "target", "status"] + (["check"] if check else []) + [
        "seconds", "Transposes left", "error"]
    for col in columns:
        table.add_column(col, numeric=col in ("seconds", "Transposes left"))
    for r in rows:
        table.add_row(escape(printable(r["model"])), r["target"], r["status"],
                      *([r.get("check", "")] if check else []),
                      "" if r["seconds"] is None else str(r["seconds"]),
                      str(r.get("transposes_left", "")),
                      escape(printable(r.get("error") or r.get("check_error", ""))))
    print_table(table)
    sys.exit(0 if all(_row_ok(r) for r in rows) else 1)


def _row_ok(row: dict) -> bool:
    return row["status"] == "ok" and row.get("check", "pass") == "pass"


def _verdict(row: dict) -> str:
    if row["status"] != "ok":
        return f": {row['error']}"
    return f": check {row['check']}" if "check" in row else ""


if __name__ == "__main__":
    main()
