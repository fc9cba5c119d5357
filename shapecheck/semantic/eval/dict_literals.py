"""Dict displays: ``{}`` and ``{k: v, ...}`` hold the values written in them
(:mod:`~shapecheck.semantic.dict_values` says when item reads may rely on it)."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.dict_values import dict_display, stored
from shapecheck.semantic.eval.registry import Eval, expression
from shapecheck.semantic.facts import UNKNOWN, Fact

__all__ = ["dict_literal"]


@expression(cst.Dict)
def dict_literal(ev: Eval, expr: cst.Dict) -> Fact:
    """A dict whose values are those written (``mapped``); unknown with ``**`` unpacking."""
    if not dict_display(expr):
        return UNKNOWN
    mapped: tuple[Fact, ...] = ()
    for element in expr.elements:
        mapped = stored(mapped, ev.fact(element.value))
    return Fact(mapped=mapped)
