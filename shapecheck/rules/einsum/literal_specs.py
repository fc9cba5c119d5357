"""Einsum calls with a literal spec: which call forms count, the spec, its operands, and where a
character of the spec sits in the source. ``torch.einsum``/``torch.functional.einsum`` use torch's
letter grammar, ``shapecheck.einsum`` the automatic choice, ``einops.einsum`` the named-axis form
with the pattern last."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.einsum_parser import parse
from shapecheck.errors import EinsumSyntaxError
from shapecheck.semantic.facts import TENSOR
from shapecheck.semantic.torch_api import EINSUM_FUNCTIONS

#: qualified name -> (grammar, spec is the last argument): which grammar each call form parses
_EINSUM_FUNCS = {
    **dict.fromkeys(EINSUM_FUNCTIONS, ("letters", False)),
    "shapecheck.einsum": ("auto", False),
    "einops.einsum": ("named", True),
}


class SpecSite:
    """One einsum call with a literal spec: the literal node, the spec text, the operands."""

    __slots__ = ("literal", "spec", "operands", "form", "countable")

    def __init__(self, literal, spec, operands, form, countable) -> None:
        self.literal = literal
        self.spec = spec
        self.operands = operands
        self.form = form
        self.countable = countable


def spec_site(node: cst.Call, ctx) -> Optional[SpecSite]:
    """The einsum call ``node`` with its literal spec and operands; ``None`` for another call, a
    spec that is not a literal, or a ``form=`` the runtime does not accept."""
    qual = ctx.qualname(node.func)
    entry = _EINSUM_FUNCS.get(qual) if qual is not None else None
    if entry is None:
        return None
    form, spec_last = entry
    if qual == "shapecheck.einsum":
        keyword_form = _form_keyword(node, form)
        if keyword_form is None:
            return None
        form = keyword_form
    args = [a for a in node.args if a.keyword is None]
    if not args or (args[-1] if spec_last else args[0]).star:
        return None
    literal = (args[-1] if spec_last else args[0]).value
    if type(literal) is not cst.SimpleString:
        return None
    try:
        spec = literal.evaluated_value
    except Exception:
        return None
    if not isinstance(spec, str):
        return None
    rest = args[:-1] if spec_last else args[1:]
    countable = not any(a.star for a in rest)
    operands = [a.value for a in rest]
    if qual.startswith("torch") and len(operands) == 1 and isinstance(operands[0], (cst.List, cst.Tuple)):
        elements = operands[0].elements
        if any(type(e) is cst.StarredElement for e in elements):
            countable = False
        operands = [e.value for e in elements]
    elif qual.startswith("torch") and len(operands) == 1 and not _one_array(ctx.fact(operands[0])):
        countable = False  # torch.einsum(spec, ops) with a list of operands
    return SpecSite(literal, spec, operands, form, countable)


def _one_array(fact) -> bool:
    """True when ``fact`` is one array, not a list of operands: a tensor, or a value of unknown
    kind with a shape of known rank (a list has none: ``x.reshape(b, h, w, c)`` gave it)."""
    return fact.kind == TENSOR or (fact.kind is None and fact.shape is not None and fact.shape.rank is not None)


def _form_keyword(node: cst.Call, default: str) -> Optional[str]:
    """The grammar a ``form=`` keyword of ``shapecheck.einsum`` asks for; ``None`` when it is
    not a literal the runtime accepts (the call is then not checked)."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "form":
            if type(arg.value) is cst.Name and arg.value.value == "None":
                return default
            if type(arg.value) is cst.SimpleString and arg.value.evaluated_value in ("letters", "named"):
                return arg.value.evaluated_value
            return None
    return default


def literal_offset(literal: cst.SimpleString, position: Optional[int]) -> Optional[tuple[int, int]]:
    """``(0, column)`` of ``spec[position]`` inside the literal, when the source maps 1:1."""
    if position is None:
        return None
    raw = literal.value
    prefix = len(literal.prefix)
    quote = len(literal.quote)
    body = raw[prefix + quote: len(raw) - quote]
    if "\\" in body or "\n" in body:
        return None
    position = min(position, len(body))
    return (0, prefix + quote + position)


def parse_spec(site: SpecSite):
    """``(parsed spec, None)``, or ``(None, the syntax error)``."""
    try:
        return parse(site.spec, site.form), None
    except EinsumSyntaxError as err:
        return None, err
