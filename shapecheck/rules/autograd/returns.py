"""What a function returns, read from its statements."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.syntax import sub_blocks

#: statements whose bodies belong to another scope
_SCOPES = (cst.FunctionDef, cst.ClassDef)


def return_values(fn: cst.FunctionDef) -> Optional[list[cst.BaseExpression]]:
    """The expression of every ``return`` of ``fn`` (not of the functions nested in it); ``None``
    when one returns nothing, when ``fn`` is a generator, or when control may fall off its end
    (an implicit ``None``)."""
    found: list[cst.BaseExpression] = []
    if not _collect(fn.body.body, found) or not _ends_in_return(fn.body.body):
        return None
    return found


def _collect(block, found: list[cst.BaseExpression]) -> bool:
    """Add the values returned in ``block`` to ``found``; False on a bare return or a yield."""
    for stmt in block:
        if isinstance(stmt, _SCOPES):
            continue
        if type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Return:
                    if small.value is None:
                        return False
                    found.append(small.value)
                elif type(small) is cst.Expr and isinstance(small.value, (cst.Yield, cst.Await)):
                    return False
            continue
        if any(not _collect(sub, found) for sub in sub_blocks(stmt)):
            return False
    return True


def _ends_in_return(block) -> bool:
    """The last statement of ``block`` is a ``return`` or a ``raise`` (what follows never runs)."""
    if not block:
        return False
    last = block[-1]
    return type(last) is cst.SimpleStatementLine and type(last.body[-1]) in (cst.Return, cst.Raise)
