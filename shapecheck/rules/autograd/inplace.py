"""Which statements change a tensor in place, and which tensor (shared by SC301 and SC302): the
semantic model's reading (:mod:`shapecheck.semantic.inplace`), asked through a rule's context."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from shapecheck.semantic import inplace
from shapecheck.semantic.inplace import augassign_target, subscript_targets

__all__ = ["augassign_target", "inplace_call_targets", "subscript_targets"]


def inplace_call_targets(ctx, node: cst.Call) -> Iterator[tuple[cst.BaseExpression, str]]:
    """``(tensor, how)`` for each tensor that the call ``node`` modifies in place (see
    :func:`shapecheck.semantic.inplace.inplace_call_targets`)."""
    return inplace.inplace_call_targets(ctx.qualname, node)
