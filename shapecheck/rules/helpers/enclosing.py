"""The compound statements around a statement, and the statements that ran before it.

The engine tells a hook its statement, function and loops; :func:`statement_path` finds the
way down from one of those (a function, a loop) to the statement, so a rule can read the ``if``
tests that guard it and the statements before it in each enclosing block. :func:`node_path` is
the way down to any node, every node on it included (an expression's parents, too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import libcst as cst

from shapecheck.semantic.syntax import sub_blocks


@dataclass(frozen=True)
class Step:
    """One level of the way down: ``compound``'s sub-block number ``block`` (0 is the body of an
    ``if``/loop/``with``, then ``else``/``elif``, handlers, ``finally``) holds, at ``index`` of
    ``stmts``, the statement the way goes through."""

    compound: cst.CSTNode
    block: int
    stmts: Sequence[cst.CSTNode]
    index: int


def statement_path(root: cst.CSTNode, target: cst.CSTNode) -> Optional[list[Step]]:
    """The steps from ``root`` (a function or compound statement) down to ``target`` (a small
    statement or a compound statement), outermost first; ``None`` when ``target`` is not in
    ``root`` outside nested definitions."""
    for number, block in enumerate(sub_blocks(root)):
        for index, stmt in enumerate(block):
            if stmt is target or type(stmt) is cst.SimpleStatementLine and any(s is target for s in stmt.body):
                return [Step(root, number, block, index)]
            if type(stmt) is cst.SimpleStatementLine or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            inner = statement_path(stmt, target)
            if inner is not None:
                return [Step(root, number, block, index), *inner]
    return None


def node_path(root: cst.CSTNode, target: cst.CSTNode) -> Optional[list[cst.CSTNode]]:
    """The nodes from ``root`` down to ``target`` (both included), or ``None``."""
    if root is target:
        return [root]
    for child in root.children:
        found = node_path(child, target)
        if found is not None:
            return [root] + found
    return None


def guarding_tests(path: Sequence[Step]) -> list[cst.BaseExpression]:
    """The tests that hold where the path ends: of each ``if``/``elif`` whose body it goes
    through, and of each ``while``."""
    tests = []
    for step in path:
        if type(step.compound) in (cst.If, cst.While) and step.block == 0:
            tests.append(step.compound.test)  # type: ignore[attr-defined]
    return tests


def earlier_statements(path: Sequence[Step]) -> list[cst.CSTNode]:
    """The statements before the path's, in each block it goes through (innermost last)."""
    return [stmt for step in path for stmt in step.stmts[:step.index]]
