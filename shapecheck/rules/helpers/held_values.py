"""What an expression a rule reads holds: the expression itself when it is already of the kind the
rule looks for, else the values its name was bound to on every path to here."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.syntax import dotted_name


def held_values(ctx, expr: cst.BaseExpression, kinds: tuple[type, ...] = (cst.Call,)) -> tuple[cst.BaseExpression, ...]:
    """``(expr,)`` when ``expr`` is one of ``kinds`` (a call unless told); else the values the
    name or dotted name ``expr`` was assigned, one per path that bound it differently (see
    ``ctx.assigned_values``); ``()`` when ``expr`` is no name or a path bound it otherwise."""
    if isinstance(expr, kinds):
        return (expr,)
    dotted = dotted_name(expr)
    return ctx.assigned_values(dotted) if dotted is not None else ()
