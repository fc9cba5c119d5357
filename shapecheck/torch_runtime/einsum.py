"""``shapecheck.einsum``: a checked einsum that is cheaper than ``torch.einsum``.

The first call with a given (spec, shapes, strides, dtypes, devices) parses the spec with the
shared parser, validates the operands (count, ranks, index sizes, devices, dtypes), picks a
contraction order and binds the structure's plan to these shapes; the plan is compiled once per
structure (see :mod:`shapecheck.torch_runtime.layout`), so a new shape of a known structure
costs a few size compares and a bind. Every later call with the same key is one lookup in an
LRU cache and the plan's torch calls: no parsing, no validation, no path search. The result
has ``torch.einsum``'s strides.

The result is ``torch.einsum``'s for every call torch accepts: operands of one floating or
complex dtype run the compiled plan (the same kernels, the same dtype); integer, bool and
mixed-dtype operands run ``torch.einsum`` itself, whose result dtype there depends on its path.
A string spec read as named axes that also reads as different valid letters, with operand ranks
that fit the letters, is ambiguous (:func:`reject_ambiguous`). While ``torch.compile`` traces,
the call is ``torch.einsum`` on the letters equation.
"""

from __future__ import annotations

import itertools
import re
from typing import Callable, Optional, Sequence

import torch

from shapecheck import einsum_parser
from shapecheck.errors import (
    DeviceMismatchError, DtypeMismatchError, EinsumSyntaxError, ShapeCheckError, quote_spec,
)
from shapecheck.torch_runtime.layout import (
    NO_ONES, cached_structure, clear_structures, plan_for_structure, structure_key,
)
from shapecheck.torch_runtime.opt_path import search_path
from shapecheck.torch_runtime.plan import ELLIPSIS

_PLANS: dict = {}  # key (see _key) -> [run, the tick of its last use]
_MAX_PLANS = 4096
_tick = itertools.count().__next__
_SUBLISTS: dict = {}
_PLAIN: dict = {}  # (spec, form, size-1 dims, dtypes, devices) -> Structure, two row-major operands
_Tensor = torch.Tensor
_TORCH_EINSUM = torch.einsum
_FORMS = (None, "letters", "named")
_compiling = torch.compiler.is_compiling


def einsum(spec, *operands, form=None):
    """Einstein summation, checked before it runs, with the contraction plan cached.

    ``spec`` is torch's letter grammar (``"bij,bjk->bik"``, ``"...ij,...jk"``), the named-axis
    form (``"batch i d, batch j d -> batch i j"``), or the first operand of the sublist form
    (``einsum(a, [0, 1], b, [1, 2], [0, 2])``). The operands may also come as one list, as
    ``torch.einsum`` allows. A string spec is read as named axes when some term has whitespace
    between two axes, as letters otherwise; ``form="letters"`` or ``form="named"`` says which.
    A spec that reads validly both ways with different meanings, where the operands' ranks fit
    the letters (what ``torch.einsum`` would compute), is ambiguous and raises unless ``form``
    is given.

    Raises :class:`~shapecheck.errors.EinsumSyntaxError` (a ``ValueError``) for a spec that does
    not parse or is ambiguous, :class:`~shapecheck.errors.EinsumOperandCountError` and
    :class:`~shapecheck.errors.EinsumShapeError` (``RuntimeError``) for operands that do not fit
    it, :class:`~shapecheck.errors.DeviceMismatchError` for operands on different devices,
    :class:`~shapecheck.errors.DtypeMismatchError` for operands of dtypes ``torch.einsum``
    rejects together, and ``TypeError`` for an operand or spec of the wrong type. Returns what
    ``torch.einsum`` returns (value, shape and dtype): same-dtype floating and complex operands
    run a compiled plan of the same kernels, other dtypes and mixed dtypes run
    ``torch.einsum`` itself. Inside ``torch.compile`` the call is ``torch.einsum`` on the
    letters equation (checked by torch, not here).
    """
    try:
        if len(operands) == 2:
            a, b = operands
            if form is None and a.is_cpu and b.is_cpu:  # the cheapest key: see _key
                key = (spec, a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype)
            else:
                key = (spec, a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device, form)
        else:
            key = _key(spec, operands, form)
        entry = _PLANS.get(key)  # a miss is not an exception: raising one costs ~1 us
    except (AttributeError, TypeError):
        if len(operands) == 1 and type(operands[0]) in (list, tuple) and type(spec) is str:
            return einsum(spec, *operands[0], form=form)
        if type(spec) is _Tensor or isinstance(spec, _Tensor):
            text = _SUBLISTS.get(_sublist_key(spec, operands))
            if text is not None:
                return einsum(text, *_sublist_tensors(spec, operands), form="letters")
    else:
        if entry is not None:
            entry[1] = _tick()
            return entry[0](*operands)
        if len(operands) == 2:
            run = _new_shape(spec, a, b, form, key)
            if run is not None:
                return run(a, b)
    try:
        return _einsum_slow(spec, operands, form)
    except ShapeCheckError as err:  # the user's frame is where it went wrong, not ours
        raise err.with_traceback(None) from err.__cause__


def _new_shape(spec, a, b, form, key: tuple) -> Optional[Callable]:
    """The plan for two contiguous operands whose structure was compiled before, bound to their
    new shapes (after checking that the sizes agree); else ``None``. A size-1 dim takes part in
    the structure, so operands with one must have row-major strides (see :func:`_ones`).

    ``key`` is the call's cache key (see :func:`_key`), whose shapes, strides and dtypes are
    read again from it: reading ``Tensor.shape`` makes a new ``torch.Size`` each time."""
    short = len(key) == 7  # two CPU operands, no form: no devices in either key
    sa, sb = key[1], key[4 if short else 5]
    try:
        # an operand with a size-1 dim: its test checks the row-major strides themselves
        if 1 in sa:
            ones_a = (_ONES_TESTS.get(len(sa)) or _ones_test(len(sa)))(sa, key[2])
        else:
            ones_a = NO_ONES[len(sa)] if a.is_contiguous() else None
        if 1 in sb:
            ones_b = (_ONES_TESTS.get(len(sb)) or _ones_test(len(sb)))(sb, key[5 if short else 6])
        else:
            ones_b = NO_ONES[len(sb)] if b.is_contiguous() else None
    except IndexError:  # a rank beyond the table: the general path
        return None
    if ones_a is None or ones_b is None:
        return None
    if short:
        entry = _PLAIN.get((spec, ones_a, ones_b, key[3], key[6]))
    else:
        entry = _PLAIN.get((spec, form, ones_a, ones_b, key[3], key[7], key[4], key[8]))
    if entry is None or _compiling():
        return None
    shapes = (sa, sb)
    if not entry.fits(shapes):
        return None
    run = entry.bind(shapes)
    _remember(key, run)
    return run


def _remember(key: tuple, run: Callable) -> None:
    """Cache ``run`` under ``key``; a full cache first drops its least recently used quarter.

    A least-recently-used cache whose hits cost one store: each entry keeps the tick of its
    last use, and eviction sorts the ticks. ``OrderedDict.move_to_end`` on every hit would
    hash the key a second time (0.3 us of a 10 us call, torch 2.13, measured); sorting 4,096
    ticks once per 1,024 misses costs well under a microsecond per miss."""
    if len(_PLANS) >= _MAX_PLANS > 0:
        ticks = sorted(held[1] for held in _PLANS.values())
        cutoff = ticks[max(1, len(ticks) // 4) - 1]
        for old in [old for old, held in _PLANS.items() if held[1] <= cutoff]:
            del _PLANS[old]
    _PLANS[key] = [run, _tick()]


def _ones(shape, strides) -> Optional[tuple]:
    """Which dims of a contiguous operand have size 1, as a structure key has it, or ``None``
    when a size-1 (or size-0) dim's stride is not the row-major one: the structure's memory
    signature depends on those strides, and with row-major strides it depends on the size-1
    dims alone."""
    if 1 not in shape:
        return NO_ONES[len(shape)] if len(shape) < len(NO_ONES) else (False,) * len(shape)
    return (_ONES_TESTS.get(len(shape)) or _ones_test(len(shape)))(shape, strides)


_ONES_TESTS: dict = {}  # rank -> the function _ones_test builds


def _ones_test(rank: int) -> Callable:
    """``test(shape, strides)``: :func:`_ones` for one rank, unrolled (the loop costs about 2 us
    a call, this 0.4 us; torch 2.13, CPU, measured): the strides are row-major when the last is
    1 and each other is the next one's times the next size."""
    rows = ["t[%d] == 1" % (rank - 1)] + ["t[%d] == t[%d] * s[%d]" % (d, d + 1, d + 1) for d in range(rank - 1)]
    flags = "".join("s[%d] == 1, " % d for d in range(rank))
    test = eval("lambda s, t: (%s) if %s else None" % (flags, " and ".join(rows)))  # noqa: S307
    _ONES_TESTS[rank] = test
    return test


def _key(text, operands: Sequence, form=None) -> tuple:
    """The cache key: the spec then each operand's shape, strides, dtype and device, flat, then
    the form. Two CPU operands with no ``form`` (the common call) leave out the devices and the
    form: reading and hashing two ``torch.device`` objects costs about 0.5 us of a 10 us call
    (torch 2.13, measured), and ``is_cpu`` tells the device alone there (a CPU device has no
    index). That key has 7 entries, which no other key has (2 + 4 per operand, then the form)."""
    if len(operands) == 2 and form is None:
        a, b = operands
        if a.is_cpu and b.is_cpu:
            return (text, a.shape, a.stride(), a.dtype, b.shape, b.stride(), b.dtype)
    key = [text]
    for op in operands:
        key.append(op.shape)
        key.append(op.stride())
        key.append(op.dtype)
        key.append(op.device)
    key.append(form)
    return tuple(key)


def _sublist_key(first, rest: tuple):
    """A hashable key for the sublist call form's subscripts, or ``None`` when they are not
    lists of ints and ``...``."""
    try:
        output = (tuple(rest[-1]),) if len(rest) % 2 == 0 else ()
        return (len(rest) % 2,) + tuple(tuple(sub) for sub in rest[0::2]) + output
    except TypeError:
        return None


def _sublist_tensors(first, rest: tuple) -> tuple:
    """The operands of a sublist call (``a, [0, 1], b, [1, 2], [0, 2]``)."""
    args = (first,) + rest
    return args[:-1:2] if len(args) % 2 else args[0::2]


def _prepare(spec, operands: tuple, form) -> tuple:
    """Normalise the call form: ``(parsed spec, operands, cache text)``; checks types and, for
    a spec read as named axes by default, that the letters do not also fit (ambiguity)."""
    __tracebackhide__ = True
    if form not in _FORMS:
        raise ValueError("shapecheck.einsum(): form must be 'letters' or 'named', not %r" % (form,))
    text = spec
    if isinstance(spec, bytes):  # torch.einsum takes a bytes equation too
        spec = spec.decode("latin-1")
    if isinstance(spec, str):
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        parsed = einsum_parser.parse(spec, form=form or "auto")
    elif isinstance(spec, _Tensor):
        parsed, operand_list = einsum_parser.parse_sublist((spec,) + tuple(operands))
        sublists = _sublist_key(spec, operands)
        if sublists is not None and parsed.form == "letters" and len(_SUBLISTS) < _MAX_PLANS:
            _SUBLISTS[sublists] = parsed.text
        operands = tuple(operand_list)
        text = parsed.text
    else:
        raise TypeError(
            "shapecheck.einsum(): the spec must be a str (or a tensor, for the sublist form), "
            "not %s" % type(spec).__name__)
    _require_tensors(operands)
    if form is None and parsed.form == "named":
        reject_ambiguous(spec, parsed, [op.dim() for op in operands])
    return parsed, operands, text


def reject_ambiguous(spec: str, named, ranks: Sequence[int]) -> None:
    """Raise :class:`EinsumSyntaxError` when ``spec``, read as named axes, also reads validly as
    torch's letters with another meaning and the operands' ranks fit the letters: then
    ``torch.einsum`` would compute the letters' contraction, and guessing could silently give
    another value. A spec whose ranks fit only the named reading is not ambiguous."""
    __tracebackhide__ = True
    try:
        letters = einsum_parser.parse(spec, form="letters")
    except EinsumSyntaxError:
        return
    if letters == named or not _ranks_fit(letters, ranks):
        return
    long_names = [label for label in named.labels if len(label) > 1]
    position = None
    if long_names:
        found = re.search(r"(?<![\w.])%s(?![\w.])" % re.escape(long_names[0]), spec)
        position = found.start() if found else None
    axes = ", ".join(long_names)
    hint = "\n".join([
        "    read as torch's letters (what torch.einsum computes): %s" % quote_spec(letters.canonical()),
        "    read as named axes (%s %s): %s" % (
            axes, "is one axis" if len(long_names) == 1 else "are axes", quote_spec(named.canonical())),
        "    the operands' ranks fit both; for the letters write the terms without spaces (%s),"
        " for named axes pass form=\"named\"" % quote_spec(letters.canonical()),
    ])
    raise EinsumSyntaxError(
        "einsum %s is ambiguous: it reads validly both as torch's letters and as named axes, "
        "with different meanings" % quote_spec(spec),
        spec, position, hint, len(long_names[0]) if long_names else 1,
    )


def _ranks_fit(parsed, ranks: Sequence[int]) -> bool:
    """True when operands of these ranks fit the spec's terms (count and ranks only)."""
    if len(ranks) != len(parsed.inputs):
        return False
    for term, rank in zip(parsed.inputs, ranks):
        if ELLIPSIS in term:
            if len(term) - 1 > rank:
                return False
        elif len(term) != rank:
            return False
    return True


def _einsum_slow(spec, operands: tuple, form=None):
    """The miss path: normalise the call form, validate, build and cache the plan, run it."""
    __tracebackhide__ = True  # pytest shows the caller's frame, not these
    if _compiling():
        return _einsum_traced(spec, operands, form)
    parsed, operands, text = _prepare(spec, operands, form)
    key = _key(text, operands, form)
    entry = _PLANS.get(key)
    if entry is not None:
        entry[1] = _tick()
        return entry[0](*operands)
    run, result = _build(parsed, operands, text, form)
    _remember(key, run)
    return result


def _first_run(parsed, operands: Sequence, shapes: list) -> tuple:
    """Pick the plan for these operands, run it once: ``(plan, result)``.

    The compiled plan when every operand has one floating or complex dtype (then its kernels
    give torch's dtype); ``torch.einsum`` itself otherwise, since torch's result dtype for
    integer, bool and mixed operands depends on the path it takes. A compiled plan that fails
    gives way to ``torch.einsum`` too. Nothing is cached when torch rejects the call, whose
    error is raised (a dtype mismatch explained)."""
    __tracebackhide__ = True
    dtypes = {op.dtype for op in operands}
    dtype = next(iter(dtypes)) if len(dtypes) == 1 else None
    if dtype is not None and (dtype.is_floating_point or dtype.is_complex):
        run = plan_for_structure(parsed, operands, shapes, _torch_path(parsed, shapes)).bind(shapes)
        try:
            return run, run(*operands)
        except Exception:
            pass
    run = _torch_plan(_torch_equation(parsed))
    try:
        return run, run(*operands)
    except Exception as err:
        if dtype is None and type(err) is RuntimeError:
            raise _dtype_error(parsed, operands) from err
        raise


def _torch_path(parsed, shapes: list) -> Optional[list]:
    """The pairwise order ``torch.einsum`` takes: opt_einsum's for three or more operands when
    torch uses opt_einsum, else ``None`` (left to right)."""
    if len(shapes) < 3 or not torch.backends.opt_einsum.enabled:
        return None
    try:
        import opt_einsum  # noqa: F401
    except ImportError:
        return None
    return contraction_path(parsed, shapes)


def _torch_equation(parsed) -> str:
    """The spec as torch.einsum's letters equation."""
    return parsed.text if parsed.form == "letters" else parsed.letters()


def _torch_plan(equation: str) -> Callable:
    """A plan that hands the operands to ``torch.einsum`` with ``equation``."""
    def run(*operands):
        return _TORCH_EINSUM(equation, *operands)
    return run


def _traced_equation(spec, form, ranks: tuple) -> str:
    """The letters equation of a string spec, for ``torch.einsum`` under ``torch.compile``: the
    spec is parsed (and checked for ambiguity) at trace time, where this is a constant."""
    parsed = einsum_parser.parse(spec, form=form or "auto")
    if form is None and parsed.form == "named":
        reject_ambiguous(spec, parsed, ranks)
    return _torch_equation(parsed)


_traced_equation_constant = torch.compiler.assume_constant_result(_traced_equation)


def _einsum_traced(spec, operands: tuple, form):
    """``shapecheck.einsum`` while ``torch.compile`` traces: ``torch.einsum`` on the letters
    equation, so the graph holds torch's own op (no plan, no cache: neither traces)."""
    if isinstance(spec, bytes):
        spec = spec.decode("latin-1")
    if isinstance(spec, str):
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        ranks = tuple(op.dim() for op in operands)
        return _TORCH_EINSUM(_traced_equation_constant(spec, form, ranks), *operands)
    return _TORCH_EINSUM(spec, *operands)


def _einsum_for_dynamo(spec, *operands, form=None):
    return _einsum_traced(spec, operands, form)


# torch.compile traces this stand-in for a call of ``einsum``, so the plan cache (a global dict
# that eager calls keep changing) never becomes part of a compiled graph's guards
einsum._torchdynamo_inline = _einsum_for_dynamo  # type: ignore[attr-defined]


def _require_tensors(operands: Sequence) -> None:
    for i, op in enumerate(operands):
        if not isinstance(op, _Tensor):
            raise TypeError(
                "shapecheck.einsum(): operand %d is a %s, not a torch.Tensor" % (i, type(op).__name__)
            )


def _term_text(parsed, i: int) -> str:
    """How operand ``i``'s term reads in the spec, for messages."""
    term = parsed.inputs[i] if i < len(parsed.inputs) else ()
    if any(len(label) > 1 and label != ELLIPSIS for label in term):
        return " ".join(term)
    return "".join(term)


def validate(parsed, operands: Sequence) -> list:
    """Check operands against a parsed spec; return their shapes as tuples of ints.

    Count, ranks and index sizes go through ``EinsumSpec.output_shape`` (so the words are the
    linter's); then devices, which must agree across operands as ``torch.einsum`` requires (a
    0-d CPU tensor may join operands on another device, as torch allows). Dtypes are left to
    torch's own promotion rules (see :func:`_first_run`).
    """
    __tracebackhide__ = True
    shapes = [tuple(op.shape) for op in operands]
    parsed.output_shape(*shapes)
    devices = [op.device for op in operands]
    placed = [d for d, op in zip(devices, operands) if op.dim() or d.type != "cpu"]
    if any(d != placed[0] for d in placed[1:]):
        listing = ", ".join("operand %d on %s" % (i, d) for i, d in enumerate(devices))
        raise DeviceMismatchError(
            "einsum %s: operands are on different devices: %s" % (quote_spec(parsed.text), listing),
            [("operand %d (%s)" % (i, _term_text(parsed, i)), str(d)) for i, d in enumerate(devices)],
        )
    return shapes


def _dtype_error(parsed, operands: Sequence) -> DtypeMismatchError:
    """The error for operands whose dtypes torch.einsum will not combine."""
    dtypes = [str(op.dtype).replace("torch.", "") for op in operands]
    listing = ", ".join("operand %d is %s" % (i, d) for i, d in enumerate(dtypes))
    return DtypeMismatchError(
        "einsum %s: torch.einsum cannot combine these dtypes (%s); cast the operands to one "
        "dtype first" % (quote_spec(parsed.text), listing),
        "\n".join("    operand %d (%s)  %s" % (i, _term_text(parsed, i), d) for i, d in enumerate(dtypes)),
    )


def _build(parsed, operands: Sequence, text=None, form=None) -> tuple:
    """Validate, pick and run the plan once: ``(plan, result)``; ``text`` and ``form`` (the
    call's) let a structure of two plain operands be found again from the call alone."""
    __tracebackhide__ = True
    if len(operands) <= 2:  # a known structure checks a new shape with a few int compares
        shapes = [op.shape for op in operands]
        try:
            key = structure_key(parsed, operands, shapes, None)
        except IndexError:  # a rank beyond the tables: the general path
            key = None
        entry = cached_structure(key) if key is not None else None
        if entry is not None and entry.fits(shapes):
            run = entry.bind(shapes)
            return run, run(*operands)
    shapes = validate(parsed, operands)
    run, result = _first_run(parsed, operands, shapes)
    if text is not None and len(operands) == 2 and len(_PLAIN) < _MAX_PLANS:
        a, b = operands
        if a.is_contiguous() and b.is_contiguous():
            ones_a, ones_b = _ones(a.shape, a.stride()), _ones(b.shape, b.stride())
            entry = cached_structure(structure_key(parsed, operands, shapes, None))
            if entry is None or ones_a is None or ones_b is None:
                pass
            elif form is None and a.is_cpu and b.is_cpu:  # the key _new_shape builds from a short key
                _PLAIN[(text, ones_a, ones_b, a.dtype, b.dtype)] = entry
            else:
                _PLAIN[(text, form, ones_a, ones_b, a.dtype, b.dtype, a.device, b.device)] = entry
    return run, result


def contraction_path(parsed, shapes: Sequence[Sequence[int]]) -> list:
    """The pairwise order for three or more operands, in opt_einsum's format.

    opt_einsum's ``contract_path`` with torch's strategy (``torch.backends.opt_einsum``) when
    opt_einsum is importable, so the order is the one ``torch.einsum`` would use; otherwise the
    algebra's greedy ``contraction_order``.
    """
    try:
        import opt_einsum
    except ImportError:
        return list(parsed.contraction_order(*shapes).path)
    strategy = getattr(torch.backends.opt_einsum, "strategy", None) or "auto"
    found = search_path(opt_einsum, parsed, shapes, strategy)
    if found is not None:  # the search alone, without contract_path's report (see opt_path)
        return found
    symbols: dict = {}
    terms = []
    for term in parsed.inputs:
        parts = []
        for label in term:
            if label == ELLIPSIS:
                parts.append(ELLIPSIS)
            else:
                parts.append(symbols.setdefault(label, opt_einsum.get_symbol(len(symbols))))
        terms.append("".join(parts))
    out = "".join(ELLIPSIS if label == ELLIPSIS else symbols[label] for label in parsed.output)
    equation = ",".join(terms) + "->" + out
    path, _ = opt_einsum.contract_path(equation, *shapes, shapes=True, optimize=strategy)
    return [tuple(step) for step in path]


def plan_source(spec, *operands, form=None) -> str:
    """The Python source of the plan ``einsum(spec, *operands)`` runs (after validating); for
    operands that go to ``torch.einsum`` (integer, bool or mixed dtypes), that call."""
    parsed, operands, _ = _prepare(spec, tuple(operands), form)
    shapes = validate(parsed, operands)
    args = ", ".join("x%d" % i for i in range(len(operands)))
    dtypes = {op.dtype for op in operands}
    dtype = next(iter(dtypes)) if len(dtypes) == 1 else None
    if dtype is None or not (dtype.is_floating_point or dtype.is_complex):
        return "def run(%s):\n    return torch.einsum(%r, %s)\n" % (args, _torch_equation(parsed), args)
    entry = plan_for_structure(parsed, operands, shapes, _torch_path(parsed, shapes))
    pick = getattr(entry.bind, "source_for", None)  # two orders weighed by the kernel cost model
    return pick(shapes) if pick is not None else entry.source


def clear_cache() -> None:
    """Forget every compiled einsum plan."""
    _PLANS.clear()
    _SUBLISTS.clear()
    _PLAIN.clear()
    clear_structures()


def cache_size() -> int:
    """How many plans are cached."""
    return len(_PLANS)
