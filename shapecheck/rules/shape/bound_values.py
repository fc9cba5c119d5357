"""The value a name of the function being checked holds at one place, read from straight-line code.

Rules that recognise a pattern across two statements (``out = self.conv(x)`` then ``out +
self.bias``; ``mean = x.mean(1, keepdim=True)`` then ``x - mean``) read the value the latest
plain assignment before that place gave the name, and nothing when control flow could have
given it another.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.semantic.syntax import sub_blocks, target_names, with_targets
from shapecheck.semantic.walk import walk

__all__ = ["value_before"]


def _binds(stmt: cst.CSTNode, name: str) -> bool:
    """``stmt`` (or a statement inside it) binds ``name``."""
    nodes = [stmt, *walk(stmt)]
    for node in nodes:
        if type(node) is cst.Assign and any(name in target_names(t.target) for t in node.targets):
            return True
        if isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)) \
                and name in target_names(node.target):
            return True
        if any(name in target_names(t) for t in with_targets(node)):
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name:
            return True
    return False


def _plain_value(stmt: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """The value of ``stmt`` when it is the one-statement line ``name = value``."""
    if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1 and type(stmt.body[0]) is cst.Assign:
        assign = stmt.body[0]
        if len(assign.targets) == 1 and type(assign.targets[0].target) is cst.Name \
                and assign.targets[0].target.value == name:
            return assign.value
    return None


def value_before(ctx, name: str, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The value ``name`` holds where ``node`` (an expression of the function being checked)
    runs, read from straight-line code: the latest statement before ``node``'s, in its block or
    an enclosing one, that binds ``name``, when that is a plain ``name = value`` line. ``None``
    when that binding is anything else, when a loop, ``try`` or ``with`` around ``node`` binds
    ``name`` (the value may come from a later iteration or a part that ran before), or when
    nothing binds it before (a parameter)."""
    func = ctx.function
    if func is None:
        return None
    path = _path(func.body.body if type(func.body) is cst.IndentedBlock else [], node)
    if path is None:
        return None
    for block, index in reversed(path):
        stmt = block[index]
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.If)) and _binds(stmt, name):
            return None  # a loop, `try` or `with` around it binds it too
        for prior in reversed(block[:index]):
            if _binds(prior, name):
                return _plain_value(prior, name)
    return None


def _path(block: Sequence[cst.CSTNode], node: cst.CSTNode, depth: int = 0) -> Optional[list[tuple[Sequence[cst.CSTNode],
                                                                                                    int]]]:
    """The ``(block, index)`` of each statement that holds ``node``, outermost first."""
    if depth > 30:
        return None
    for i, stmt in enumerate(block):
        if stmt is node or any(n is node for n in walk(stmt)):
            inner: list[tuple[Sequence[cst.CSTNode], int]] = [(block, i)]
            for sub in sub_blocks(stmt):
                found = _path(sub, node, depth + 1)
                if found is not None:
                    return inner + found
            return inner
    return None
