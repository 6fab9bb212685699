"""API-difference metadata: what a TensorFlow / PyTorch API is in Paddle.

Entries are declared next to the mappers (`mappers/tf/api_docs.py`,
`mappers/torch/api_docs.py`) with the `api()` helper and rendered into
`docs/api_diff/` by `tools/gen_api_diff.py`. Each entry names the op types /
ATen targets the API lowers to (checked against the registries: every
registered op must be covered by some entry, and every named op must have a
mapper), the argument differences (hand-written), notes, and a runnable
example on both sides that the tests execute and compare
(tests/test_api_diff.py).

Examples are code strings run with `np`, `x` (a fixed float32 input of
`shape`, seeded), `x2` (a second one, seed 2), `t` / `u` (`x` / `x2` as a
tensor of the side's framework) and `rng` (np.random.RandomState(1), fresh
per side) in scope, plus the framework module(s); each must bind `out` (a
tensor, array or a (nested) tuple/list of them). An entry may instead give a
call spec (`calls()`): the example is then generated in the four call forms
(all positional, all keyword, keywords reordered, defaults omitted), so one
spec line yields four executed, compared calls. A page whose API has one
call form only names why (`single`, a SINGLE_FORM key checked against its
signature). This module imports no framework.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Category(Enum):
    """The 12 difference categories (the set Paddle's PyTorch->Paddle mapping docs use)."""
    SAME = ("same", "API fully consistent: same name path, parameters, defaults and result")
    NAME = ("api-name", "only the API name / call path differs; parameters are the same")
    ARG_NAMES = ("arg-names", "only parameter names differ")
    DEFAULTS = ("defaults", "parameter default values differ: pass them explicitly")
    SOURCE_MORE = ("source-more", "the TF/torch API has more parameters (Paddle has no counterpart for some)")
    PADDLE_MORE = ("paddle-more", "Paddle has more parameters (extra ones have neutral defaults)")
    ARG_TYPES = ("arg-types", "input parameter types differ (e.g. string vs bool, int vs list, number vs tensor)")
    RETURN_TYPES = ("return-types", "return types differ (dtype, tuple vs tensor, extra outputs)")
    COMPOSITE = ("composite", "composite implementation: several Paddle calls replace one source call")
    USAGE = ("usage", "usage differs: weight layout, a parameter's meaning, a layer built differently, "
                      "or nothing to call (a no-op in Paddle)")
    MISSING = ("missing", "feature missing in Paddle: only a partial or manual equivalent exists")
    BEHAVIOUR = ("behaviour", "behaviour differs for some inputs (edge cases, NaN, unsupported modes)")

    def __init__(self, key: str, description: str):
        self.key = key
        self.description = description

    @classmethod
    def of(cls, key: str) -> "Category":
        for c in cls:
            if c.key == key:
                return c
        raise ValueError(f"unknown difference category {key!r}: one of {[c.key for c in cls]}")


KINDS = {
    "same": "same",
    "renamed": "renamed",
    "default": "different default",
    "semantics": "different semantics",
    "unsupported": "unsupported",
    "paddle-only": "Paddle only",
}


@dataclass(frozen=True)
class Arg:
    source: str   # source argument name ("—" when Paddle-only)
    paddle: str   # Paddle argument name ("—" when it has none)
    kind: str     # a key of KINDS
    note: str = ""


@dataclass(frozen=True)
class ApiDiff:
    api: str                  # "tf.nn.conv2d", "torch.nn.Conv2d"
    framework: str            # "tf" or "torch"
    family: str               # "conv", "activation", ...
    ops: tuple[str, ...]      # op types / ATen targets x2 maps; () = reference only
    paddle: str               # Paddle equivalent ("paddle.nn.functional.conv2d")
    source_sig: str
    paddle_sig: str
    args: tuple[Arg, ...]
    source_code: str          # example, binds `out`
    paddle_code: str          # example, binds `out`
    notes: tuple[str, ...] = ()
    shape: tuple[int, ...] = (2, 3, 4)
    atol: float = 1e-5
    rtol: float = 1e-5
    converted: bool = True    # False: reference only, x2 has no mapper for it
    category: str = ""        # a Category key; "" derives it from the argument table (see derived_category)
    forms: tuple = ()         # ((label, source call, paddle call), ...) when generated from a call spec
    check_dtype: bool = True  # False only where the page says the result dtype differs
    sig_from_spec: bool = False  # the signatures list the call spec's parameters, not the full API
    single: str = ""          # a SINGLE_FORM key: why the API has only one call form (forms < 2)

    @property
    def cat(self) -> Category:
        return Category.of(self.category) if self.category else derived_category(self)

    @property
    def slug(self) -> str:
        import re
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.api).strip("_")


def a(source: str, paddle: str, kind: str = "same", note: str = "") -> Arg:
    """One argument-table row."""
    if kind not in KINDS:
        raise ValueError(f"unknown argument kind {kind!r}")
    return Arg(source, paddle, kind, note)


@dataclass
class ApiTable:
    """The entries of one framework, filled with `table.api(...)`."""
    framework: str
    entries: list[ApiDiff] = field(default_factory=list)

    def api(self, api: str, family: str, ops, paddle: str, source_sig: str, paddle_sig: str,
            args, source_code: str, paddle_code: str, notes=(), **kw) -> ApiDiff:
        if isinstance(ops, str):
            ops = (ops,)
        if isinstance(notes, str):
            notes = (notes,)
        if kw.get("category"):
            Category.of(kw["category"])
        entry = ApiDiff(api, self.framework, family, tuple(ops), paddle, source_sig, paddle_sig,
                        tuple(args), _dedent(source_code), _dedent(paddle_code), tuple(notes),
                        converted=bool(ops), **kw)
        if any(e.api == api for e in self.entries):
            raise ValueError(f"duplicate API entry {api}")
        self.entries.append(entry)
        return entry

    def recategorize(self, categories: dict[str, str]) -> None:
        """Set the category of entries declared earlier ({api: category key})."""
        import dataclasses
        for api, key in categories.items():
            Category.of(key)
            (i,) = [i for i, e in enumerate(self.entries) if e.api == api]
            self.entries[i] = dataclasses.replace(self.entries[i], category=key)

    def single_form(self, reasons: dict[str, str]) -> None:
        """Say why entries declared earlier have one call form only ({api: SINGLE_FORM key})."""
        import dataclasses
        for api, key in reasons.items():
            if key not in SINGLE_FORM:
                raise ValueError(f"unknown single-form reason {key!r}: one of {sorted(SINGLE_FORM)}")
            (i,) = [i for i, e in enumerate(self.entries) if e.api == api]
            self.entries[i] = dataclasses.replace(self.entries[i], single=key)

    def add_forms(self, specs: dict) -> None:
        """Add generated call forms to entries declared earlier with a hand-written example.

        `specs` maps an API to its call spec, or to (spec, options) with the options of `call`
        (then, pd_then, src_fn, pd_fn, pd_pos, pre, pd_pre, post, pd_post). The forms run first,
        on the untouched inputs, then the hand-written example; both are compared. `post` can
        wrap a layer's constructor in a helper (defined by `pre`) that sets its weights.
        """
        import dataclasses
        for api, spec in specs.items():
            spec, opts = (spec, {}) if isinstance(spec, str) else spec
            (i,) = [i for i, e in enumerate(self.entries) if e.api == api]
            e = self.entries[i]
            then = opts.get("then", "")
            post = opts.get("post", "")
            forms = call_forms(opts.get("src_fn", api), opts.get("pd_fn", e.paddle), parse_spec(spec), then,
                               opts.get("pd_then", then), post, opts.get("pd_pos"), opts.get("pd_post", post))
            pre = opts.get("pre", "")
            src = _forms_code(pre, [(lbl, c) for lbl, c, _ in forms]).replace("out = [", "forms = [", 1)
            pd = _forms_code(opts.get("pd_pre", pre), [(lbl, c) for lbl, _, c in forms]).replace("out = [", "forms = [", 1)
            tail = "out = [forms, out]\n"
            self.entries[i] = dataclasses.replace(e, forms=tuple(forms), source_code=src + "\n" + e.source_code + tail,
                                                  paddle_code=pd + "\n" + e.paddle_code + tail)

    def call(self, api: str, family: str, ops, paddle: str, spec: str, *, then: str = "", pre: str = "",
             post: str = "", pd_then: str | None = None, pd_pre: str | None = None, src_fn: str | None = None,
             pd_fn: str | None = None, pd_pos: int | None = None, rows=(), notes=(), **kw) -> ApiDiff:
        """An entry whose example is generated in the four call forms from one call spec.

        `spec` lists the source parameters in signature order, `;`-separated (see `parse_spec`);
        `then` is appended to each call (`"(t)"` applies a layer built by the call), `pre` runs
        first on both sides, `post` wraps each call (`"{}.sum()"`). The argument table is derived
        from the spec; `rows` adds rows (e.g. for `out`). The signatures list the spec's parameters.
        """
        params = parse_spec(spec)
        src_fn, pd_fn = src_fn or api, pd_fn or paddle
        forms = call_forms(src_fn, pd_fn, params, then, then if pd_then is None else pd_then, post, pd_pos)
        pd_pre = pre if pd_pre is None else pd_pre
        src_code = _forms_code(pre, [(lbl, s) for lbl, s, _ in forms])
        pd_code = _forms_code(pd_pre, [(lbl, p) for lbl, _, p in forms])
        args = [spec_row(p) for p in params] + list(rows)
        src_sig = f"{src_fn}({', '.join(p.source_sig() for p in params if p.source != '-')})"
        pd_sig = f"{pd_fn}({', '.join(p.paddle_sig() for p in params if p.paddle != '-')})"
        derived = "source_sig" not in kw and "paddle_sig" not in kw
        return self.api(api, family, ops, paddle, kw.pop("source_sig", src_sig), kw.pop("paddle_sig", pd_sig),
                        args, src_code, pd_code, notes, forms=tuple(forms), sig_from_spec=derived, **kw)


@dataclass(frozen=True)
class Param:
    """One parameter of a call spec."""
    source: str            # source name; "-" when Paddle-only
    paddle: str            # Paddle name; "-" when the source parameter has no Paddle counterpart
    value: str             # source value used in the examples
    pd_value: str          # Paddle value (the same expression unless the types differ)
    optional: bool = False  # has a default: left out in the "defaults omitted" form
    kw_only: bool = False   # keyword-only on the source side
    pd_default: str = ""    # Paddle value to pass when the source default is used (defaults differ)
    note: str = ""

    def source_sig(self) -> str:
        return ("*, " if self.kw_only else "") + self.source + ("=…" if self.optional else "")

    def paddle_sig(self) -> str:
        return self.paddle + ("=…" if self.optional or self.source == "-" else "")


def parse_spec(spec: str) -> list[Param]:
    """Parse `name[>pdname]=value[ | pdvalue][?[!pddefault]][ # note]` items separated by `;`.

    `*name` marks a keyword-only source parameter; `>-` a source parameter Paddle lacks
    (its example value must be the default's behaviour); `-<pdname=value` a Paddle-only one.
    `?` marks a parameter with a default; `?!v` says Paddle needs `v` passed to match the
    source default.
    """
    params = []
    for item in filter(None, (i.strip() for i in spec.split(";"))):
        item, _, note = item.partition(" # ")
        head, _, value = item.partition("=")
        kw_only = head.startswith("*")
        head = head.lstrip("*")
        if head.startswith("-<"):
            source, paddle = "-", head[2:]
        else:
            source, _, paddle = head.partition(">")
            paddle = paddle or source
        optional, pd_default = False, ""
        if "?" in value:
            value, _, rest = value.rpartition("?")
            optional = True
            pd_default = rest[1:] if rest.startswith("!") else ""
        value, _, pd_value = value.partition(" | ")
        params.append(Param(source.strip(), paddle.strip(), value.strip(), (pd_value or value).strip(), optional,
                            kw_only, pd_default.strip(), note.strip()))
    return params


def spec_row(p: Param) -> Arg:
    if p.source == "-":
        return Arg("—", p.paddle, "paddle-only", p.note)
    if p.paddle == "-":
        return Arg(p.source, "—", "unsupported", p.note)
    if p.pd_default:
        return Arg(p.source, p.paddle, "default", p.note or f"pass {p.paddle}={p.pd_default} to match the default")
    if p.value != p.pd_value and _literal_type(p.value) != _literal_type(p.pd_value):
        # a literal of another type ('DESCENDING' vs True, a tuple vs a list); differing tensor
        # expressions are only each framework's spelling of the same example input
        return Arg(p.source, p.paddle, "semantics", p.note or f"`{p.value}` is `{p.pd_value}` in Paddle")
    return Arg(p.source, p.paddle, "same" if p.source == p.paddle else "renamed", p.note)


def _literal_type(code: str):
    import ast
    try:
        return type(ast.literal_eval(code))
    except (ValueError, SyntaxError):
        return None            # an expression (a tensor), not a literal


# Why a page has one call form only. Each key's check (on the source signature) keeps the
# reason honest: tests/test_api_diff.py asserts every page runs >= 2 forms or has a key whose
# check holds.
SINGLE_FORM = {
    "variadic": ("the API takes its tensors or sizes as `*args`: there is no keyword form and nothing to reorder",
                 lambda sig: "(*" in sig or ", *" in sig.replace(", *,", "")),
    "no-arguments": ("the API takes no arguments (a layer built without any, or a method on the tensor): "
                     "every call form is the same call", lambda sig: "()" in sig),
    "operator": ("operator or attribute syntax (`x[...]`, `x.T`), not a call with named parameters",
                 lambda sig: "(" not in sig),
}


FORM_LABELS = ("all positional", "all keyword", "keywords reordered", "defaults omitted")


def call_forms(src_fn: str, pd_fn: str, params: list[Param], then: str, pd_then: str, post: str = "",
               pd_pos: int | None = None, pd_post: str | None = None):
    """[(label, source call, paddle call)] for the four call forms, identical forms dropped.

    `pd_pos`: how many leading Paddle parameters may be passed positionally (the rest go by
    keyword, for signatures whose order differs from the source's)."""
    def render(fn, items, suffix, wrap):
        text = f"{fn}({', '.join(items)}){suffix}"
        return wrap.format(text) if wrap else text

    src_ps = [p for p in params if p.source != "-"]
    pd_ps = [p for p in params if p.paddle != "-"]
    limit = len(pd_ps) if pd_pos is None else pd_pos

    def pd_arg(i, p):
        positional = p.source != "-" and not p.kw_only and i < limit
        return p.pd_value if positional else f"{p.paddle}={p.pd_value}"

    out, seen = [], set()
    for label in FORM_LABELS:
        if label == "all positional":
            s = [p.value if not p.kw_only else f"{p.source}={p.value}" for p in src_ps]
            d = [pd_arg(i, p) for i, p in enumerate(pd_ps)]
        elif label in ("all keyword", "keywords reordered"):
            order = src_ps if label == "all keyword" else src_ps[::-1]
            pd_order = pd_ps if label == "all keyword" else pd_ps[::-1]
            s = [f"{p.source}={p.value}" for p in order]
            d = [f"{p.paddle}={p.pd_value}" for p in pd_order]
        else:
            if not any(p.optional for p in src_ps):
                continue
            # after a left-out parameter the later ones can only go by keyword
            first_gap = next(i for i, p in enumerate(src_ps) if p.optional)
            s = [p.value if not p.kw_only and i < first_gap else f"{p.source}={p.value}"
                 for i, p in enumerate(src_ps) if not p.optional]
            pd_gap = next((i for i, p in enumerate(pd_ps) if p.optional or p.source == "-"), len(pd_ps))
            d = [pd_arg(i, p) if i < pd_gap else f"{p.paddle}={p.pd_value}"
                 for i, p in enumerate(pd_ps) if not p.optional]
            d += [f"{p.paddle}={p.pd_default}" for p in pd_ps if p.optional and p.pd_default]
        call = render(src_fn, s, then, post)
        if call in seen:
            continue
        seen.add(call)
        out.append((label, call, render(pd_fn, d, pd_then, post if pd_post is None else pd_post)))
    return out


def _forms_code(pre: str, calls) -> str:
    body = "".join(f"    {c},  # {label}\n" for label, c in calls)
    return (_dedent(pre) if pre.strip() else "") + f"out = [\n{body}]"


def derived_category(entry: ApiDiff) -> Category:
    """The category the argument table implies (an entry's `category` overrides it)."""
    kinds = {r.kind for r in entry.args}
    if " " in entry.paddle.strip() or entry.paddle.startswith("(") or "+" in entry.paddle:
        return Category.COMPOSITE
    for kind, cat in (("semantics", Category.ARG_TYPES), ("unsupported", Category.SOURCE_MORE),
                      ("default", Category.DEFAULTS), ("paddle-only", Category.PADDLE_MORE),
                      ("renamed", Category.ARG_NAMES)):
        if kind in kinds:
            return cat
    leaf = entry.api.split(".")[-1].lower()
    pd_leaf = entry.paddle.split(".")[-1].lower()
    return Category.SAME if leaf == pd_leaf and entry.api.split(".")[1:-1] == entry.paddle.split(".")[1:-1] \
        else Category.NAME


def _dedent(code: str) -> str:
    import textwrap
    return textwrap.dedent(code).strip() + "\n"


# The metadata modules of each framework, in page order (each fills its framework's TABLE).
MODULES = {"tf": ("mappers.tf.api_docs", "mappers.tf.api_docs_nn", "mappers.tf.api_docs_ops", "mappers.tf.api_docs_keras",
                  "mappers.tf.api_docs_forms"),
           "torch": ("mappers.torch.api_docs", "mappers.torch.api_docs_ops", "mappers.torch.api_docs_nn",
                     "mappers.torch.api_docs_writes", "mappers.torch.api_docs_forms")}


def tables() -> dict[str, ApiTable]:
    import importlib
    out = {}
    for fw, names in MODULES.items():
        mods = [importlib.import_module(n) for n in names]
        out[fw] = mods[0].TABLE
    return out


def all_entries() -> list[ApiDiff]:
    return [e for t in tables().values() for e in t.entries]


def uncovered_ops(registry, entries) -> list[str]:
    """Registered op types / ATen targets that no entry names (every mapper needs docs)."""
    named = {op for e in entries for op in e.ops}
    return sorted(op for op in registry.supported() if op not in named)


def unknown_ops(registry, entries) -> list[tuple[str, str]]:
    """(api, op) pairs naming an op no mapper of the registry handles."""
    known = registry.supported()
    return sorted((e.api, op) for e in entries for op in e.ops if op not in known)


# --- example execution (run by tools/run_api_examples.py, one process per side) ---

def example_input(entry: ApiDiff):
    import numpy as np
    return np.random.RandomState(0).randn(*entry.shape).astype(np.float32)


def to_numpy(value):
    import numpy as np
    if isinstance(value, (tuple, list)):
        return [to_numpy(v) for v in value]
    if hasattr(value, "detach"):          # torch
        value = value.detach().cpu()
    if hasattr(value, "numpy"):           # tf, torch, paddle
        value = value.numpy()
    return np.asarray(value)


def _flatten(value) -> list:
    if isinstance(value, list):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def run_example(entry: ApiDiff, side: str, modules: dict):
    """Run one side ('source' or 'paddle') of an entry's example; returns a flat list of arrays.

    `modules["to_tensor"]` makes the side's tensor from a numpy array (for `t` and `u`)."""
    import numpy as np
    x = example_input(entry)
    x2 = np.random.RandomState(2).randn(*entry.shape).astype(np.float32)
    to_tensor = modules["to_tensor"]
    scope = {"np": np, "x": x, "x2": x2, "t": to_tensor(x), "u": to_tensor(x2),
             "rng": np.random.RandomState(1), **modules}
    exec(compile(entry.source_code if side == "source" else entry.paddle_code,
                 f"<{entry.api} {side} example>", "exec"), scope)
    return _flatten(to_numpy(scope["out"]))
