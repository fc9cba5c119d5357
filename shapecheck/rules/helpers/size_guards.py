"""Exceptions that the code around a finding guarantees.

A finding that holds for generic sizes names its exception (``condition``): "`kernel` is 1",
"`T` equals `C//nh`", "`T` is 1 or `B` is 1", "`t` has one element". Code written for exactly that case tests it first::

    chout, chin, kernel = conv.weight.shape
    if kernel == 1:
        w = conv.weight.view(chout, chin)   # raises unless `kernel` is 1: here it is

:func:`guaranteed` reads the tests that hold at the finding: of the ``if``/``elif``/``while``
around it (each part of an ``and``), the negation of the test of an ``if`` whose ``else`` it is
in (each part of an ``or``), the ``assert`` statements before it in the blocks around it, the
negation of an earlier ``if`` whose body leaves the block (``if t.numel() > 1: return t``), and
the test of a conditional expression it is a side of (``t if t.numel() > 1 else float(t)``). A
condition one of whose alternatives they state (``kernel == 1``, ``1 == kernel``, ``T == C //
nh``; for one element, ``t.numel() == 1`` or a first dim of 1, ``t.size(0) == 1``) is
guaranteed; a size stated at most 1 (``n <= 1``, ``n < 2``, the negation of ``n > 1``) counts
as 1, the case such code is written for.
Sizes are compared as written, spaces aside; a name rebound between the test and the statement is
not followed (the walk has no such facts for tests).
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

import libcst as cst

from shapecheck.rules.helpers.enclosing import earlier_statements, guarding_tests, statement_path

__all__ = ["guaranteed"]

_NAMES = re.compile(r"`([^`]+)`")
_ONES = re.compile(r"^`[^`]+`(?:(?:, | and )`[^`]+`)* (?:is|are) 1$")
_EQUALS = re.compile(r"^`([^`]+)` equals `([^`]+)`$")
_ONE_ELEMENT = re.compile(r"^`([^`]+)` has one element$")
#: how a test says that a tensor has one element (``{}``: the tensor, as written)
_ONE_ELEMENT_TESTS = ("{}.numel()", "{}.nelement()")
#: ... and how it says that its first dim has size 1: one element too when the tensor has one dim,
#: which code that branches on it is written for, unless the facts give it more
_FIRST_DIM_TESTS = ("{}.size(0)", "{}.shape[0]", "len({})")


def guaranteed(ctx, condition: str, node: Optional[cst.CSTNode] = None) -> bool:
    """Whether the tests and asserts that hold at the statement being analysed (and at ``node``,
    the finding's node, within it) state one of the alternatives of ``condition`` (see the
    module docstring)."""
    function, statement = ctx.function, ctx.statement
    if function is None or statement is None:
        return False
    path = statement_path(function, statement)
    if path is None:
        return False
    tests: list[tuple[cst.BaseExpression, bool]] = [(test, True) for test in guarding_tests(path)]
    for step in path:
        if type(step.compound) is cst.If and step.block == 1:
            tests.append((step.compound.test, False))
    for stmt in earlier_statements(path):
        if type(stmt) is cst.SimpleStatementLine:
            tests.extend((small.test, True) for small in stmt.body if type(small) is cst.Assert)
        elif type(stmt) is cst.If and stmt.orelse is None and _leaves(stmt):
            tests.append((stmt.test, False))
    if node is not None:
        tests.extend(_conditional_sides(ctx, node))
    if not tests:
        return False
    stated = {pair for test, truth in tests for pair in _holding(ctx, test, truth)}
    for alternative in condition.split(" or "):
        if _ONES.match(alternative):
            if all(frozenset((name.replace(" ", ""), "1")) in stated for name in _NAMES.findall(alternative)):
                return True
            continue
        equal = _EQUALS.match(alternative)
        if equal is not None and frozenset(side.replace(" ", "") for side in equal.groups()) in stated:
            return True
        one = _ONE_ELEMENT.match(alternative)
        if one is not None:
            tensor = one.group(1).replace(" ", "")
            if any(frozenset((test.format(tensor), "1")) in stated for test in _ONE_ELEMENT_TESTS):
                return True
            if any(frozenset((test.format(tensor), "1")) in stated for test in _FIRST_DIM_TESTS) \
                    and not _several_dims(ctx, tensor):
                return True
    return False


def _several_dims(ctx, tensor: str) -> bool:
    """The facts give the name ``tensor`` (an expression as written: not followed) two dims or more."""
    if not tensor.isidentifier():
        return True
    bound = ctx.bindings.get(tensor)
    shape = bound.shape if bound is not None else None
    return shape is not None and (len(shape.dims) >= 2 if shape.rank is None else shape.rank >= 2)


def _leaves(stmt: cst.If) -> bool:
    """The body of ``stmt`` ends in ``return``, ``raise``, ``continue`` or ``break``."""
    body = stmt.body.body
    last = body[-1] if body else None
    small = last.body[-1] if type(last) is cst.SimpleStatementLine and last.body else \
        last if isinstance(last, cst.BaseSmallStatement) else None
    return type(small) in (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _conditional_sides(ctx, node: cst.CSTNode) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """The tests of the conditional expressions ``node`` is on a side of: true for the body,
    false for the ``else`` side."""
    path = [*ctx.ancestors, node]
    for index, above in enumerate(path[:-1]):
        if type(above) is cst.IfExp:
            below = path[index + 1]
            if below is above.body:
                yield above.test, True
            elif below is above.orelse:
                yield above.test, False


#: comparisons with 1 (or 2) that leave a size at most 1: (operator, the constant's side) when
#: the test is true, and when it is false
_AT_MOST_ONE_TRUE = {(cst.LessThanEqual, "1", 1), (cst.LessThan, "2", 1), (cst.GreaterThanEqual, "1", 0),
                     (cst.GreaterThan, "2", 0)}
_AT_MOST_ONE_FALSE = {(cst.GreaterThan, "1", 1), (cst.GreaterThanEqual, "2", 1), (cst.NotEqual, "1", 1),
                      (cst.LessThan, "1", 0), (cst.LessThanEqual, "2", 0), (cst.NotEqual, "1", 0)}


def _holding(ctx, test: cst.BaseExpression, truth: bool) -> Iterator[frozenset[str]]:
    """The pairs that ``test`` states equal when it is ``truth``, as written without spaces:
    ``a == b``, every two sides of ``a == b == c``, each part of an ``and`` (true) or of an ``or``
    (false), through ``not``; a size stated at most 1 is paired with ``1``."""
    tp = type(test)
    if tp is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
        yield from _holding(ctx, test.expression, not truth)  # type: ignore[attr-defined]
    elif tp is cst.BooleanOperation and type(test.operator) is (cst.And if truth else cst.Or):  # type: ignore[attr-defined]
        yield from _holding(ctx, test.left, truth)  # type: ignore[attr-defined]
        yield from _holding(ctx, test.right, truth)  # type: ignore[attr-defined]
    elif type(test) is cst.Comparison:
        sides = ["".join(ctx.source(e).split()) for e in (test.left, *(c.comparator for c in test.comparisons))]
        if truth and all(type(c.operator) is cst.Equal for c in test.comparisons):
            for i, one in enumerate(sides):  # `C == chunk_size == C_`: every two of them are equal
                for other in sides[i + 1:]:
                    yield frozenset((one, other))
        elif len(sides) == 2:
            table = _AT_MOST_ONE_TRUE if truth else _AT_MOST_ONE_FALSE
            op = type(test.comparisons[0].operator)
            if not truth and op is cst.NotEqual:
                yield frozenset(sides)
            for constant, at in (("1", 1), ("2", 1), ("1", 0), ("2", 0)):
                if sides[at] == constant and (op, constant, at) in table:
                    yield frozenset((sides[1 - at], "1"))
