"""Exceptions that the code around a finding guarantees.

A finding that holds for generic sizes names its exception (``condition``): "`kernel` is 1",
"`T` equals `C//nh`", "`T` is 1 or `B` is 1", "`t` has one element". Code written for exactly that case tests it first::

    chout, chin, kernel = conv.weight.shape
    if kernel == 1:
        w = conv.weight.view(chout, chin)   # raises unless `kernel` is 1: here it is

:func:`guaranteed` reads the ``if``/``elif``/``while`` tests that hold at the statement (each part
of an ``and``) and the ``assert`` statements before it in the blocks around it; a condition one of
whose alternatives they state (``kernel == 1``, ``1 == kernel``, ``T == C // nh``; for one element,
``t.numel() == 1`` or a first dim of 1, ``t.size(0) == 1``) is guaranteed.
Sizes are compared as written, spaces aside; a name rebound between the test and the statement is
not followed (the walk has no such facts for tests).
"""

from __future__ import annotations

import re
from typing import Iterator

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


def guaranteed(ctx, condition: str) -> bool:
    """Whether the tests and asserts that hold at the statement being analysed state one of the
    alternatives of ``condition`` (see the module docstring)."""
    function, statement = ctx.function, ctx.statement
    if function is None or statement is None:
        return False
    path = statement_path(function, statement)
    if path is None:
        return False
    tests = guarding_tests(path) + [
        small.test for stmt in earlier_statements(path) if type(stmt) is cst.SimpleStatementLine
        for small in stmt.body if type(small) is cst.Assert]
    if not tests:
        return False
    stated = {pair for test in tests for pair in _equalities(ctx, test)}
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


def _equalities(ctx, test: cst.BaseExpression) -> Iterator[frozenset[str]]:
    """The pairs ``test`` states equal, as written without spaces: ``a == b``, every two sides of
    ``a == b == c``, and each part of an ``and``."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        yield from _equalities(ctx, test.left)
        yield from _equalities(ctx, test.right)
    elif type(test) is cst.Comparison and all(type(c.operator) is cst.Equal for c in test.comparisons):
        sides = ["".join(ctx.source(e).split()) for e in (test.left, *(c.comparator for c in test.comparisons))]
        for i, one in enumerate(sides):  # `C == chunk_size == C_`: every two of them are equal
            for other in sides[i + 1:]:
                yield frozenset((one, other))
