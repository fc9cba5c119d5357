"""What a module-level name read inside a function may hold: the values the module assigns it.

``criterion = nn.MSELoss(reduction="none")`` at module level, read as ``criterion(out, y)``
inside ``def train():``, holds that value whenever ``train`` runs, provided the function does
not bind ``criterion`` itself, no function rebinds it through ``global``, and every binding of it
at module level is a plain assignment (then it holds one of those values).
"""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.helpers.fix_safety import FREE, name_scope, place_of
from shapecheck.rules.shape.bound_values import declared_globals
from shapecheck.semantic.syntax import sub_blocks, target_names

#: module-level statements that bind a name without a value the linter can read
_OTHER_BINDINGS = (cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.Import, cst.ImportFrom,
                   cst.FunctionDef, cst.ClassDef, cst.Del, cst.Try)


def global_values(ctx, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, ...]:
    """The values the module assigns to the name ``expr`` read in a top-level function or a
    method of a top-level class, when those are all the values it can hold there; else ``()``."""
    func = ctx.function
    if type(expr) is not cst.Name or func is None or not _top_level(ctx.module, func):
        return ()
    place = place_of(ctx, expr)
    if place is None or place.in_inner_scope or name_scope(place, expr.value) != FREE:
        return ()
    return _module_assignments(ctx.module, expr.value)


def _top_level(module: cst.Module, func: cst.FunctionDef) -> bool:
    """``func`` is a function of the module's body or a method of one of its classes."""
    for stmt in module.body:
        if stmt is func:
            return True
        if type(stmt) is cst.ClassDef and type(stmt.body) is cst.IndentedBlock \
                and any(m is func for m in stmt.body.body):
            return True
    return False


def _module_assignments(module: cst.Module, name: str) -> tuple[cst.BaseExpression, ...]:
    """The values of every ``name = value`` at module level (in ``if`` blocks too), when those are
    its only bindings there and no ``global name`` appears anywhere; else ``()``."""
    values: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = list(module.body)
    while stack:
        stmt = stack.pop()
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Assign:
                    hits = [t for t in small.targets if name in target_names(t.target)]
                    if any(type(t.target) is not cst.Name for t in hits):
                        return ()
                    if hits:
                        values.append(small.value)
                elif isinstance(small, _OTHER_BINDINGS) and name in _names_in(small):
                    return ()
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            if stmt.name.value == name or name in declared_globals(stmt):
                return ()
        elif isinstance(stmt, _OTHER_BINDINGS) and name in _names_in(stmt):
            return ()
        else:
            for block in sub_blocks(stmt):
                stack.extend(block)
    return tuple(values)


def _names_in(node: cst.CSTNode) -> set[str]:
    """Every name written in ``node`` (a superset of the names it binds)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.add(current.value)
        stack.extend(current.children)
    return found
