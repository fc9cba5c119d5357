"""Loops over `.parameters()`: their variables are parameters by the loop alone."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.scopes import scope_of
from shapecheck.semantic.facts import MODULE


def parameter_loop(node: cst.For, ctx) -> Optional[tuple[tuple[int, str], bool]]:
    """For ``for p in m.parameters()`` (or ``for name, p in m.named_parameters()``):
    ``((id of the function, "p"), whether m is known to be a module)``, else ``None``."""
    call = method_call(node.iter)
    if call is None or call[1] not in ("parameters", "named_parameters"):
        return None
    target = node.target
    if call[1] == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    if not isinstance(target, cst.Name):
        return None
    return (id(scope_of(ctx, node).function), target.value), ctx.fact(call[0]).kind == MODULE


def guessed_parameter(guessed: set, expr: cst.BaseExpression, ctx, node: cst.CSTNode) -> bool:
    """True when ``expr`` is the name of a loop over ``.parameters()`` of an object not known to
    be a module: the facts call it a parameter by that method's name alone."""
    return isinstance(expr, cst.Name) and (id(scope_of(ctx, node).function), expr.value) in guessed

