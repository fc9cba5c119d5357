"""Loops over `.parameters()`: their variables are parameters by the loop alone."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.facts import ParamLoop


def parameter_by_loop(expr: cst.BaseExpression, ctx) -> bool:
    """True when ``expr`` is the variable of a loop over ``.parameters()`` (or
    ``.named_parameters()``) of any object."""
    return type(expr) is cst.Name and ctx.fact(expr).parameter_loop is not None


def guessed_parameter(expr: cst.BaseExpression, ctx) -> bool:
    """True when ``expr`` is the variable of a loop over ``.parameters()`` of an object not known
    to be a module: the facts call it a parameter by that method's name alone."""
    return type(expr) is cst.Name and ctx.fact(expr).parameter_loop == ParamLoop.GUESSED
