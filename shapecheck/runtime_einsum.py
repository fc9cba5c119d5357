"""``shapecheck.einsum``: a checked einsum that is cheaper than ``torch.einsum``.

The first call with a given (spec, shapes, dtypes, devices) parses the spec with the shared
parser, validates the operands (count, ranks, index sizes, devices, dtypes), picks a contraction
order and compiles the plan (see :mod:`shapecheck.runtime_plan`). Every later call with the same
key is one dict lookup and the plan's torch calls: no parsing, no validation, no path search.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from shapecheck import einsum_parser
from shapecheck.errors import DeviceMismatchError, DtypeMismatchError, quote_spec
from shapecheck.runtime_plan import ELLIPSIS, build_source, compile_plan

_PLANS: dict = {}
_MAX_PLANS = 4096
_Tensor = torch.Tensor


def einsum(spec, *operands):
    """Einstein summation, checked before it runs, with the contraction plan cached.

    ``spec`` is torch's letter grammar (``"bij,bjk->bik"``, ``"...ij,...jk"``), the named-axis
    form (``"batch i d, batch j d -> batch i j"``), or the first operand of the sublist form
    (``einsum(a, [0, 1], b, [1, 2], [0, 2])``). The operands may also come as one list, as
    ``torch.einsum`` allows.

    Raises :class:`~shapecheck.errors.EinsumSyntaxError` (a ``ValueError``) for a spec that does
    not parse, :class:`~shapecheck.errors.EinsumOperandCountError` and
    :class:`~shapecheck.errors.EinsumShapeError` (``RuntimeError``) for operands that do not fit
    it, :class:`~shapecheck.errors.DeviceMismatchError` for operands on different devices and
    :class:`~shapecheck.errors.DtypeMismatchError` for operands of different dtypes. Returns
    what ``torch.einsum`` returns, computed with the same kernels.
    """
    try:
        if len(operands) == 2:
            a, b = operands
            run = _PLANS[(spec, a.shape, a.dtype, a.device, b.shape, b.dtype, b.device)]
        else:
            run = _PLANS[_key(spec, operands)]
    except (KeyError, AttributeError, TypeError):
        return _einsum_slow(spec, operands)
    return run(*operands)


def _key(text: str, operands: Sequence) -> tuple:
    """The cache key: the spec text then each operand's shape, dtype and device, flat."""
    key = [text]
    for op in operands:
        key.append(op.shape)
        key.append(op.dtype)
        key.append(op.device)
    return tuple(key)


def _einsum_slow(spec, operands: tuple):
    """The miss path: normalise the call form, validate, build and cache the plan, run it."""
    __tracebackhide__ = True  # pytest shows the caller's frame, not these
    if isinstance(spec, str):
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        parsed = einsum_parser.parse(spec, form="auto")
        text = spec
    else:
        parsed, operand_list = einsum_parser.parse_sublist((spec,) + tuple(operands))
        operands = tuple(operand_list)
        text = parsed.text
    _require_tensors(operands)
    key = _key(text, operands)
    run = _PLANS.get(key)
    if run is None:
        run = _build(parsed, operands)
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        _PLANS[key] = run
    return run(*operands)


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
    linter's); then devices and dtypes, which must agree across operands as ``torch.einsum``
    requires (a 0-d CPU tensor may join operands on another device, as torch allows).
    """
    __tracebackhide__ = True
    shapes = [tuple(op.shape) for op in operands]
    parsed.output_shape(*shapes)
    spec_text = quote_spec(parsed.text)
    devices = [op.device for op in operands]
    placed = [d for d, op in zip(devices, operands) if op.dim() or d.type != "cpu"]
    if any(d != placed[0] for d in placed[1:]):
        listing = ", ".join("operand %d on %s" % (i, d) for i, d in enumerate(devices))
        raise DeviceMismatchError(
            "einsum %s: operands are on different devices: %s" % (spec_text, listing),
            [("operand %d (%s)" % (i, _term_text(parsed, i)), str(d)) for i, d in enumerate(devices)],
        )
    dtypes = [op.dtype for op in operands]
    if any(d != dtypes[0] for d in dtypes[1:]):
        listing = ", ".join(
            "operand %d is %s" % (i, str(d).replace("torch.", "")) for i, d in enumerate(dtypes))
        raise DtypeMismatchError(
            "einsum %s: operands have different dtypes (%s); cast them to one dtype first"
            % (spec_text, listing),
            "\n".join(
                "    operand %d (%s)  %s" % (i, _term_text(parsed, i), str(d).replace("torch.", ""))
                for i, d in enumerate(dtypes)
            ),
        )
    return shapes




def _build(parsed, operands: Sequence) -> Callable:
    __tracebackhide__ = True
    shapes = validate(parsed, operands)
    path = contraction_path(parsed, shapes) if len(operands) > 2 else None
    return compile_plan(build_source(parsed.inputs, parsed.output, shapes, path))


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
    strategy = getattr(torch.backends.opt_einsum, "strategy", None) or "auto"
    path, _ = opt_einsum.contract_path(equation, *shapes, shapes=True, optimize=strategy)
    return [tuple(step) for step in path]


def plan_source(spec, *operands) -> str:
    """The Python source of the plan ``einsum(spec, *operands)`` runs (after validating)."""
    if isinstance(spec, str):
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
        parsed = einsum_parser.parse(spec, form="auto")
    else:
        parsed, operand_list = einsum_parser.parse_sublist((spec,) + tuple(operands))
        operands = tuple(operand_list)
    _require_tensors(operands)
    shapes = validate(parsed, operands)
    path = contraction_path(parsed, shapes) if len(operands) > 2 else None
    return build_source(parsed.inputs, parsed.output, shapes, path)


def clear_cache() -> None:
    """Forget every compiled einsum plan."""
    _PLANS.clear()


def cache_size() -> int:
    """How many plans are cached."""
    return len(_PLANS)
