"""PyTorch frontend entry (read_ir, torch_runner). Runs inside a worker process
that imports torch only.

The model is loaded by loading.py. A module is traced first (trace.py),
which costs a fraction of torch.export's first call; where the trace cannot
be trusted it is captured with `torch.export` (TorchScript through
torch._export.converter.TS2EPConverter), ops without a mapper decomposed,
and the program described as a SourceGraph (describe.py).

With options.dynamic_batch (--dynamic-batch), dim 0 of every input is a
torch.export.Dim: tensor shapes then hold None there."""
from __future__ import annotations

import inspect
import operator
import re
from dataclasses import asdict, replace
import numpy as np
from ...contracts import ReadOptions, ReadRequest
from ...errors import ModelLoadError, SelectionError
from ..common import SourceGraph, name_dims, split_input_shapes
from .describe import _CONTROL_FLOW, describe_program, evaluate_aten
from . import hf_folder, script_loops, specialize
from .loading import _first_line, _torch, load_model, load_model_and_dtype




def forward_arguments(module) -> list[tuple[str, bool]]:
    """forward()'s tensor-capable arguments in order, each with whether it has
    a default (Hugging Face models give every argument a default of None)."""
    torch = _torch()
    if isinstance(module, torch.jit.ScriptModule):
        return [(a.name, a.default_value is not None) for a in module.forward.schema.arguments[1:]
                if not a.kwarg_only]
    return [(p.name, p.default is not inspect.Parameter.empty)
            for p in inspect.signature(module.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def select_arguments(module, wanted: list[str] | None, input_shapes: dict | None) -> list[str]:
    """The forward() arguments that become inputs: every one without a default,
    plus the defaulted ones named in --inputs or --input-shape, in signature order."""
    arguments = forward_arguments(module)
    names = [name for name, _ in arguments]
    module_name = getattr(module, "original_name", None) or type(module).__name__
    for name in list(wanted or []) + list(input_shapes or {}):
        if name not in names:
            listing = ", ".join(f"{n}{'=...' if d else ''}" for n, d in arguments) or "none"
            raise SelectionError(f"'{name}' is not an argument of {module_name}.forward; its "
                                 f"arguments are {listing}")
    chosen = set(wanted or []) | set(input_shapes or {})
    return [n for n, has_default in arguments if not has_default or n in chosen]


def example_inputs(module, input_shapes: dict | None, input_dtypes: dict | None,
                   names: list[str] | None = None, lowest_int: int = 0,
                   fixed: dict | None = None) -> dict:
    """Random example inputs for the chosen forward() arguments, by name in
    signature order. Integers are 0 or 1 (token ids, masks and indices any
    model takes); `lowest_int=1` makes them all 1, for models that reject a
    0 (a sequence length). `fixed` (--input-value) arguments get their
    value as the Python number or list given: torch.export makes it a
    constant of the program."""
    torch = _torch()
    fixed = fixed or {}
    names = names if names is not None else select_arguments(module, None, input_shapes)
    module_name = getattr(module, "original_name", None) or type(module).__name__
    shapes = dict(input_shapes or {})
    dtypes = dict(input_dtypes or {})
    for name in [d for d in dtypes if d != "*"]:
        if name not in names:
            raise SelectionError(f"--input-dtype {name}: not an input of {module_name}.forward; "
                                 f"its inputs are {', '.join(names) or 'none'} (name defaulted "
                                 f"arguments in --inputs to make them inputs)")
    missing = [n for n in names if n not in shapes and n not in fixed]
    if missing:
        raise SelectionError(
            f"give the shape of every input with --input-shape NAME:D1,D2,...; missing: "
            f"{', '.join(missing)} (forward({', '.join(names)}))")
    for name in fixed:
        if name not in names:
            raise SelectionError(f"--input-value {name}: not an argument of "
                                 f"{module_name}.forward (its arguments are "
                                 f"{', '.join(names) or 'none'})")
    static, named, _ = split_input_shapes(shapes)
    examples = symbol_examples(shapes)
    shapes = {name: [examples[symbol] if symbol else d
                     for d, symbol in zip(dims, named.get(name) or [None] * len(dims))]
              for name, dims in static.items()}
    gen = torch.Generator().manual_seed(0)
    args = {}
    for name in names:
        if name in fixed:
            args[name] = fixed[name]
            continue
        wanted = dtypes.get(name, dtypes.get("*", "float32"))
        dtype = getattr(torch, wanted, None)
        if not isinstance(dtype, torch.dtype):
            raise SelectionError(f"--input-dtype {name}: unknown dtype {wanted!r}")
        if dtype.is_floating_point:
            args[name] = torch.randn(shapes[name], generator=gen).to(dtype)
        else:
            # Small non-negative integers: valid token ids, masks and indices.
            args[name] = torch.randint(lowest_int, 2, shapes[name], generator=gen).to(dtype)
    return args


def _example_sets(module, input_shapes, input_dtypes, names, fixed=None):
    """The example inputs capture tries, in order: integers 0 and 1, then,
    where there are integer inputs, all 1 (lengths of 0 or a 0 index the
    model rejects: pack_padded_sequence, `lengths - 1`)."""
    first = example_inputs(module, input_shapes, input_dtypes, names, fixed=fixed)
    yield first
    if any(not (v.dtype.is_floating_point or v.dtype.is_complex)
           for v in first.values() if hasattr(v, "dtype")):
        yield example_inputs(module, input_shapes, input_dtypes, names, lowest_int=1,
                             fixed=fixed)




# The size a dim named in --input-shape is captured at when no "name=size" gives
# one: sizes no config is likely to share, so torch.export does not take the
# dim for a model constant (the batch: 2, which a batch of pairs needs anyway).
EXAMPLE_SIZES = {"batch": 2}
EXAMPLE_SIZE = 7


def symbol_examples(input_shapes: dict | None) -> dict[str, int]:
    """Symbol -> the size its dims are captured at ("seq=16", else the default)."""
    _, named, examples = split_input_shapes(input_shapes)
    for symbols in named.values():
        for symbol in filter(None, symbols):
            examples.setdefault(symbol, EXAMPLE_SIZES.get(symbol, EXAMPLE_SIZE))
    return examples


def _dynamic_shapes(torch, input_shapes: dict | None, names: list[str], dynamic_batch: bool):
    """torch.export dynamic_shapes for the dims named in --input-shape and
    --dynamic-batch. Dim.DYNAMIC lets export take the model's own bounds (a
    length at most the position table's) and relations (the mask as long as
    the ids) instead of failing on them; a dim the model fixes is an error."""
    out: dict[str, dict] = {}
    for name in names:
        spec = {axis: torch.export.Dim.DYNAMIC
                for axis, dim in enumerate((input_shapes or {}).get(name) or ())
                if isinstance(dim, str)}
        if dynamic_batch:
            spec.setdefault(0, torch.export.Dim.DYNAMIC)
        if spec:
            out[name] = spec
    return out or None


def export(kind: str, obj, input_shapes=None, input_dtypes=None, dynamic_batch=False,
           arguments: list[str] | None = None, fixed: dict | None = None):
    """(A decomposed torch.export program of `obj`, what its code does to the
    dims asked dynamic: specialize.py); `arguments` are the forward() arguments
    that become inputs (default: those without a default value)."""
    torch = _torch()
    if kind == "program":
        if input_shapes:
            raise SelectionError("--input-shape does not apply to a .pt2 program: its input "
                                 "shapes were fixed when it was exported")
        if dynamic_batch:
            raise SelectionError("--dynamic-batch does not apply to a .pt2 program: its "
                                 "dynamic dims were chosen when it was exported")
        return _decompose(obj), {}
    first_error = None
    for kwargs in _example_sets(obj, input_shapes, input_dtypes, arguments, fixed):
        try:
            return _export(torch, kind, obj, kwargs, input_shapes, dynamic_batch)
        except ModelLoadError as exc:
            first_error = first_error or exc
    raise first_error


def _export(torch, kind, obj, kwargs, input_shapes, dynamic_batch):
    if kind == "script":
        import warnings
        from torch._export.converter import TS2EPConverter
        try:
            with torch.no_grad(), warnings.catch_warnings(), \
                    script_loops.loops_as_while_loop() as loops:
                warnings.simplefilter("ignore")
                program = TS2EPConverter(obj, tuple(kwargs.values())).convert()
        except Exception as exc:
            if loops:
                raise ModelLoadError(script_loops.refusal(loops, exc)) from exc
            flow = re.search(r"prim::(If|Loop)", str(exc))
            if flow:
                cause = exc.__cause__ or exc.__context__ or exc
                raise ModelLoadError(
                    f"the TorchScript module's control flow (prim::{flow[1]}) could not be "
                    f"read as torch.cond/while_loop ({type(cause).__name__}: "
                    f"{_first_line(cause)}); give x2 the nn.Module (file.py:factory), a "
                    f"torch.jit.trace of it, or an ONNX export of it (torch.onnx), fixing "
                    f"mode arguments with --input-value") from exc
            raise ModelLoadError(f"could not convert the TorchScript module to a torch.export "
                                 f"program: {type(exc).__name__}: {_first_line(exc)}") from exc
        # The converter's own dynamic dims are its guess: export again with ours.
        obj = program.module()
    if dynamic_batch and any(a.dim() == 0 for a in kwargs.values() if hasattr(a, "dim")):
        raise SelectionError("--dynamic-batch: every input needs a batch dim (dim 0)")
    dynamic = _dynamic_shapes(torch, input_shapes,
                              [n for n, v in kwargs.items() if hasattr(v, "dim")], dynamic_batch)
    if dynamic is not None:
        dynamic = {name: dynamic.get(name) for name in kwargs}
    # A module by keyword: a defaulted argument chosen with --inputs may follow
    # others left at their defaults. The converted TorchScript program takes
    # its (all required) arguments by position.
    names = kwargs.keys()
    args, kwargs = ((tuple(kwargs.values()), {}) if kind == "script" else ((), kwargs))
    if dynamic is not None and kind == "script":
        dynamic = tuple(dynamic.values())
    specialized = []
    try:
        try:
            with torch.no_grad():
                program = torch.export.export(obj, args, kwargs=kwargs, dynamic_shapes=dynamic)
        except Exception as exc:
            if not specialize.is_specialization(exc):
                raise
            # The code fixes a dim asked dynamic: keep dynamic what torch can.
            program, specialized = specialize.export_auto(
                torch, obj, args, kwargs, dynamic, list(names))
    except Exception as exc:
        named = sorted(symbol_examples(input_shapes))
        hint = (" with a dynamic batch (the model may fix or constrain its batch size; "
                "give an example batch of 2 or more in --input-shape, or convert without "
                "--dynamic-batch)" if dynamic_batch else "")
        if named:
            hint = (f" with the dims named {', '.join(named)} dynamic (the model may fix "
                    f"or constrain them: give such a dim as a number, or its example size "
                    f"as NAME=SIZE)")
        data_dependent = _data_dependent(exc) or _packed_sequence(exc)
        if data_dependent:
            raise ModelLoadError(data_dependent) from exc
        raise ModelLoadError(f"torch.export could not capture the model{hint}: "
                             f"{type(exc).__name__}: {_first_line(exc)}") from exc
    facts = {"specialized_dims": specialized,
             "bounded_dims": specialize.bounds(program, list(names), dynamic),
             # the ops no mapper takes as captured, which make x2 decompose the
             # program (seconds to minutes for a large model): report.json says
             "decomposed_for": unmapped_ops(program)}
    return _decompose(program), {k: v for k, v in facts.items() if v}


def _packed_sequence(exc: Exception) -> str | None:
    """What to tell a user whose model runs an RNN over packed sequences
    (their sizes come from the lengths' values, which torch.export cannot
    hold); None for other capture errors."""
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_filename.replace("\\", "/").endswith(("torch/nn/utils/rnn.py",
                                                                  "torch/nn/modules/rnn.py")) \
                and (frame.f_code.co_name.startswith(("pack", "pad_packed")) or any(
                    type(v).__name__ == "PackedSequence" for v in frame.f_locals.values())):
            return ("torch.export cannot capture an RNN over packed sequences "
                    "(torch.nn.utils.rnn.pack_padded_sequence): their sizes come from the "
                    "values of the lengths. Export the module to ONNX with "
                    "torch.onnx.export(..., dynamo=False), which writes the packed RNN as an "
                    "LSTM/GRU with sequence lengths, and convert the .onnx file; or run the "
                    "RNN on the padded batch")
        tb = tb.tb_next
    return None


_RAISED_AT = re.compile(r'The following call raised this error:\s*\n\s*File "([^"\n]+)", '
                        r'line (\d+), in (\w+)\n\s*([^\n]*)')


def _data_dependent(exc: Exception) -> str | None:
    """What to tell a user whose model decides something from a value its
    input computes (`if x.sum() > 0`, `x[: n.item()]`): where, and what to
    do about it. None for other capture errors."""
    text = str(exc)
    if "data-dependent" not in text and "GuardOnDataDependent" not in type(exc).__name__:
        return None
    found = _RAISED_AT.search(text)
    where = (f"{found[1]}, line {found[2]}, in {found[3]}: `{found[4].strip()}`" if found
             else "a line of the model")
    return (f"torch.export cannot capture the model at {where}: it branches on, or sizes "
            f"a tensor by, a value computed from its input, and a captured graph holds no "
            f"such Python decision. Write that step with torch.where (both sides computed) "
            f"or torch.cond, or make the value a constant of the model")


def _decompose(program):
    """The program decomposed to core ATen, its `view`s read as `reshape`s.

    torch.export records strides at capture time, then decomposes ops whose
    decomposition returns another memory layout: scaled_dot_product_attention
    captured contiguous comes back as a transposed layout once decomposed, so
    a `.contiguous()` that was a no-op at capture (and so left out of the
    graph) is missing, and a later `view` of it fails (pytorch/pytorch#136543:
    "Cannot view a tensor with shape ... and strides ..."). A view and a
    reshape give the same values whenever the view is valid, and the IR has
    no strides (x2 maps both to `reshape`), so each view becomes a reshape,
    which copies when the layout needs it."""
    torch = _torch()
    view, reshape = torch.ops.aten.view.default, torch.ops.aten.reshape.default
    changed = False
    for node in program.graph_module.graph.nodes:
        if node.op == "call_function" and node.target is view:
            node.target = reshape
            changed = True
    if changed:
        program.graph_module.recompile()
    if not unmapped_ops(program):
        # Decomposing would change nothing x2 reads, and costs seconds.
        return program
    dropouts = {node.name: node.args for node in program.graph_module.graph.nodes
                if node.op == "call_function" and node.target is torch.ops.aten.dropout.default}
    return _restore_dropouts(program.run_decompositions(_decomposition_table()), dropouts)


def _restore_dropouts(program, dropouts: dict):
    """Eval-mode dropout decomposes to a clone whatever the table says, and
    --for training writes it back as a dropout layer: each clone made from a
    dropout node (its `from_node` provenance) is that dropout again."""
    torch = _torch()
    changed = False
    for node in program.graph_module.graph.nodes if dropouts else ():
        if node.op != "call_function" or node.target is not torch.ops.aten.clone.default:
            continue
        names = [getattr(s, "name", None) for s in node.meta.get("from_node") or ()]
        found = next((dropouts[n] for n in names if n in dropouts), None)
        if found is not None and len(found) >= 2 and node.args[0] is not None:
            node.target = torch.ops.aten.dropout.default
            node.args, node.kwargs = (node.args[0], *found[1:]), {}
            changed = True
    if changed:
        program.graph_module.recompile()
    return program


def unmapped_ops(program) -> list[str]:
    """The ops of the program (and its subgraphs) that no mapper takes as
    they are (in-place and other non-core ops), left for the decompositions;
    none: the program is read as captured."""
    from ...registry import TORCH
    found = set()
    for module in program.graph_module.modules():
        graph = getattr(module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op == "call_function" and node.target is not operator.getitem and \
                    str(node.target) not in _CONTROL_FLOW and TORCH.lookup(str(node.target)) is None:
                found.add(str(node.target))
    return sorted(found)


def _decomposition_table() -> dict:
    """Core ATen's decompositions less those of ops a mapper takes as they
    are: linear, gelu, scaled_dot_product_attention... stay one op (and one
    call in the generated model) instead of becoming the arithmetic the
    fusions would have to find again."""
    torch = _torch()
    from ...registry import TORCH
    table = torch.export.default_decompositions()
    for op in list(table):
        if TORCH.lookup(str(op)) is not None:
            del table[op]
    return table


def _is_module(kind: str) -> bool:
    return kind in ("module", "script")


def read_torch(spec: str, input_shapes=None, options: ReadOptions | None = None,
               inputs: list[str] | None = None, loaded=None
               ) -> tuple[SourceGraph, list[str] | None]:
    """The model (`loaded`: load_model's result, if already loaded) as a
    SourceGraph, and the forward() arguments it takes (None for a .pt2
    program). --inputs that are all forward() arguments choose the arguments
    (defaulted ones included); other names prune the graph."""
    options = options or ReadOptions()
    kind, obj = loaded or load_model(spec, options.trust_pickle)
    if options.cache_part and not options.with_cache:
        raise SelectionError(f"--part {options.cache_part} chooses a part of an "
                             "encoder-decoder converted with its cache: add --with-cache")
    if options.with_cache:
        return _read_with_cache(kind, obj, input_shapes, inputs, options.cache_part)
    arguments = None
    if _is_module(kind):
        arguments = select_arguments(obj, _argument_inputs(obj, inputs), input_shapes)
    fixed = options.input_values
    program, facts = export(kind, obj, input_shapes, options.input_dtypes,
                            options.dynamic_batch, arguments, fixed)
    if arguments is not None:
        arguments = [a for a in arguments if a not in fixed]
    source = describe_program(program)
    source.dim_facts = facts
    if kind == "script" and len(source.inputs) == len(arguments or ()):
        # the converted TorchScript program names its inputs after the graph's
        # values (xs_1): the IR takes the forward() arguments' names
        source.input_aliases = dict(zip(source.inputs, arguments))
    return source, arguments


def _read_with_cache(kind: str, obj, input_shapes, inputs, part: str | None
                     ) -> tuple[SourceGraph, list[str]]:
    """--with-cache: one decoding step of a transformers causal LM (cache.py),
    or one of an encoder-decoder's two models (seq2seq_cache.py), the cache
    as tensors named as optimum names them."""
    from . import cache, seq2seq_cache
    if kind != "module":
        raise SelectionError("--with-cache takes a module (file.py:factory or "
                             "package.module:factory returning a transformers causal LM "
                             "or encoder-decoder)")
    if input_shapes or inputs:
        raise SelectionError("--with-cache sets the inputs itself (the tokens, their masks and "
                             "the cache of every layer, every length dynamic): leave out "
                             "--input-shape and --inputs")
    seq2seq = seq2seq_cache.is_encoder_decoder(obj)
    if part and not seq2seq:
        raise SelectionError(f"--part {part}: {type(obj).__name__} is not an encoder-decoder; "
                             "a causal LM converts as one model (leave out --part)")
    try:
        if seq2seq:
            program, (names, outputs, dims) = seq2seq_cache.export(obj, part)
        else:
            program = cache.export(obj)
            names, outputs, dims = cache.input_names(obj), cache.output_names(obj), \
                cache.input_dims(obj)
    except SelectionError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"torch.export could not capture one decoding step with the "
                             f"cache: {type(exc).__name__}: {_first_line(exc)}") from exc
    # named as the source names its weights and modules, not as the step holds them
    source = describe_program(_decompose(program), root=cache.SOURCE_AT)
    if len(source.inputs) != len(names) or len(source.outputs) != len(outputs):
        raise ModelLoadError(f"--with-cache: the captured step takes {len(source.inputs)} "
                             f"inputs and gives {len(source.outputs)} outputs, not the "
                             f"{len(names)} and {len(outputs)} of its cache's layers")
    source.input_aliases = dict(zip(source.inputs, names))
    source.output_aliases = dict(zip(source.outputs, outputs))
    source.dims = {value: [d if isinstance(d, str) else None for d in dims[name]]
                   for value, name in zip(source.inputs, names)}
    return source, names


def _argument_inputs(module, inputs: list[str] | None) -> list[str] | None:
    """--inputs when they all name forward() arguments (then they choose the
    arguments), else None (other names prune the graph)."""
    names = {n for n, _ in forward_arguments(module)}
    return inputs if inputs and all(n in names for n in inputs) else None


def read_ir(request: ReadRequest):
    """(IR graph, source record): the model captured, pruned to
    --inputs/--outputs and mapped. When --inputs named forward() arguments,
    the record's options name them, so `x2 check` passes its inputs there.
    A module is traced first (trace.py: seconds faster) and exported
    when the trace cannot be trusted; the record says which ("capture")."""
    from ...registry import TORCH
    from ..common import map_graph, select_subgraph
    from .cache import cache_note
    loaded, stored_dtype = load_model_and_dtype(request.model, request.options.trust_pickle)
    notes = []
    if hf_folder.is_hf_model(request.model) and not request.options.with_cache:
        request = _with_task_inputs(request, loaded[1])
    if not request.options.with_cache:
        notes += filter(None, [cache_note(loaded[1])])
    inputs = request.inputs
    traced, why = _read_traced(request, *loaded)
    if traced is not None:
        graph, arguments = traced
        record = {"capture": "torch.jit.trace"}
    else:
        source, arguments = read_torch(request.model, request.input_shapes, request.options,
                                       inputs, loaded)
        if arguments is not None and inputs and all(n in arguments for n in inputs):
            inputs = None  # they chose forward() arguments, not a subgraph
        facts = source.dim_facts
        source = select_subgraph(source, inputs, request.outputs)
        graph = map_graph(source, TORCH, evaluate_aten, request.options.keep_trainable)
        record = {"capture": "torch.export", **({"not_traced": why} if why else {})}
        record.update(facts)
        sizes = _bounded_sizes(facts.get("bounded_dims"), request.input_shapes)
        if sizes:   # verify's and x2 check's sizes where --dim gives none
            record["dim_sizes"] = sizes
    graph.meta.source_model = request.model
    if _is_module(loaded[0]):
        _record_source_names(graph.meta, loaded[1])
    if hf_folder.is_hf_model(request.model):  # the task's dims (the worker names the user's)
        name_dims(graph, *split_input_shapes(request.input_shapes)[1:])
    graph.meta.dim_examples.update(symbol_examples(request.input_shapes))
    if request.options.with_cache:
        from . import cache, seq2seq_cache
        graph.meta.dim_examples.update(seq2seq_cache.EXAMPLES if request.options.cache_part
                                       else cache.EXAMPLES)
        together = cache.DIM_SIZES if not request.options.cache_part else \
            seq2seq_cache.DECODER_DIM_SIZES if request.options.cache_part == "decoder" else None
        if together:   # verify's and x2 check's sizes where --dim gives none
            record["dim_sizes"] = together
    if request.options.dynamic_batch and request.input_shapes:
        sizes = [dims[0] for dims in request.input_shapes.values()
                 if dims and isinstance(dims[0], int)]
        if sizes:
            graph.meta.dim_examples.setdefault("batch", sizes[0])
    if arguments is not None:
        record["options"] = {**asdict(request.options), "forward_args": arguments}
    token_ids = _special_token_ids(loaded[1])
    if token_ids:
        record["token_ids"] = token_ids
    if notes:
        record["notes"] = notes
    if stored_dtype:   # the default --precision (x2/passes/precision.py choose_precision)
        record["stored_dtype"] = stored_dtype
    return graph, record


def _bounded_sizes(bounded: list[dict] | None, input_shapes) -> dict[str, list[int]]:
    """Sizes to verify and check a dim the model's code bounds at (its
    example size, its lowest, a larger one within its bound), by symbol."""
    from ...check.shapes import larger
    named = split_input_shapes(input_shapes)[1]
    examples = symbol_examples(input_shapes)
    sizes = {}
    for dim in bounded or ():
        symbol = (named.get(dim["input"]) or [None] * (dim["axis"] + 1))[dim["axis"]]
        if symbol is None or symbol not in examples:
            continue
        example, low, high = examples[symbol], dim["min"] or 1, dim["max"]
        low = 1 if low <= 2 else low   # torch's own lower bound is 2 (see bounds())
        big = larger(example) if high is None else min(larger(example), high)
        sizes[symbol] = list(dict.fromkeys([example, low, big]))
    return sizes


def _record_source_names(meta, module) -> None:
    """The module's state_dict keys (with the shape and the first key of each
    tensor: tied weights share one) and its modules' classes, which the
    emitters name the converted model's weights and layers after
    (x2/emitters/source_paths.py)."""
    first: dict[int, str] = {}
    for key, tensor in module.state_dict(keep_vars=True).items():
        tied = first.setdefault(id(tensor), key)
        meta.source_state[key] = {"shape": list(tensor.shape), "tied": tied}
    meta.source_modules = {path: type(child).__name__
                           for path, child in module.named_modules() if path}
    meta.source_class = f"{type(module).__module__}.{type(module).__qualname__}"


def _with_task_inputs(request: ReadRequest, model) -> ReadRequest:
    """The request with a Hugging Face folder's inputs, dims and dtypes from
    its task (hf_folder.default_inputs) where the user gave none."""
    shapes, dtypes = hf_folder.default_inputs(
        model, _argument_inputs(model, request.inputs), request.input_shapes,
        request.options.input_dtypes)
    return replace(request, input_shapes=shapes,
                   options=replace(request.options, input_dtypes=dtypes))


def _special_token_ids(model) -> list[int]:
    """The pad, bos, eos, unk and decoder-start ids a transformers model's
    config names: token ids convert's verify feeds (x2/check/verify.py)."""
    config = getattr(model, "config", None)
    ids: list[int] = []
    for key in ("pad_token_id", "bos_token_id", "eos_token_id", "unk_token_id",
                "decoder_start_token_id"):
        value = getattr(config, key, None) if config is not None else None
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, int) and not isinstance(item, bool) and item not in ids:
                ids.append(item)
    return ids


def _read_traced(request: ReadRequest, kind: str, obj):
    """((IR graph, forward arguments), None) from a trace of a module, or
    (None, why not) when only torch.export will do: a .pt2 or TorchScript
    file, --dynamic-batch, a pruned graph, or a trace that is not the model
    (its ops unmapped, or its IR disagreeing with the module on the example)."""
    from ...errors import X2Error
    from ...ir.interpret import interpret
    from ...registry import TORCH
    from . import trace
    from ..common import map_graph
    options = request.options
    named = any(isinstance(d, str) for dims in (request.input_shapes or {}).values()
                for d in dims)
    if request.outputs or options.dynamic_batch or named or kind != "module" or \
            options.input_values or options.with_cache:
        return None, None  # a trace is frozen at its example shapes
    chosen = _argument_inputs(obj, request.inputs)
    if request.inputs and chosen is None:
        return None, None
    arguments = select_arguments(obj, chosen, request.input_shapes)
    why = None
    for kwargs in _example_sets(obj, request.input_shapes, options.input_dtypes, arguments):
        try:
            traced = trace.trace(obj, kwargs)
            break
        except trace.Untraceable as exc:
            why = why or str(exc)
    else:
        return None, why
    try:
        source = trace.describe_trace(traced, obj, arguments)
        graph = map_graph(source, TORCH, evaluate_aten, options.keep_trainable)
    except trace.Untraceable as exc:
        return None, str(exc)
    except X2Error as exc:
        return None, f"the traced graph does not map: {_first_line(exc)}"
    torch = _torch()
    try:
        got = interpret(graph, [kwargs[n].numpy() for n in arguments])
        with torch.no_grad():
            want = _output_arrays(obj(**kwargs))
    except Exception as exc:  # torch.export may still capture what the check could not run
        return None, f"checking the trace failed: {type(exc).__name__}: {_first_line(exc)}"
    if not _agree(want, got):
        return None, "the traced graph disagrees with the module on the example input"
    return (graph, arguments), None


def _agree(want: list, got: list) -> bool:
    """Same outputs: same shapes and dtypes, integers equal, floats within
    rtol 1e-4 of each output's scale by x2 check's measure (x2/check/compare.py)."""
    from ...check.compare import compare
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        g = np.asarray(g)
        if w.shape != g.shape or w.dtype != g.dtype:
            return False
        if not (compare(w, g, rtol=1e-4, atol=1e-6)[-1] if w.dtype.kind in "fc"
                else np.array_equal(g, w)):
            return False
    return True


def torch_runner(spec: str, options: ReadOptions | None = None, loaded=None):
    """The source model loaded once (`loaded`: load_model's result, if
    already loaded), as a function numpy inputs -> numpy outputs (eval mode,
    no grad); a module's inputs go to the forward() arguments chosen at
    conversion, by name."""
    torch = _torch()
    options = options or ReadOptions()
    kind, obj = loaded or load_model(spec, options.trust_pickle)
    model = obj.module() if kind == "program" else obj
    arguments = options.forward_args
    if options.with_cache:
        from . import cache, seq2seq_cache
        model = seq2seq_cache.wrap(model, options.cache_part) \
            if seq2seq_cache.is_encoder_decoder(model) else cache.wrap(model)
        arguments = None   # the step takes the interface in order

    def run(inputs: list[np.ndarray]) -> list[np.ndarray]:
        # (ascontiguousarray makes 0-d 1-d)
        tensors = [torch.from_numpy(np.array(x, order="C")) for x in inputs]
        with torch.no_grad():
            if arguments and (kind == "module" or options.input_values):
                result = model(**dict(zip(arguments, tensors)), **options.input_values)
            else:
                result = model(*tensors)
        return _output_arrays(result)
    return run


def _output_arrays(result) -> list[np.ndarray]:
    """A module's result flattened as torch.export flattens its outputs
    (ModelOutput and dicts included)."""
    torch = _torch()
    from torch.utils import _pytree
    return [t.detach().cpu().numpy() for t in _pytree.tree_leaves(result)
            if isinstance(t, torch.Tensor)]

