"""How often a statement inside a loop runs, and whether the loop trains.

A statement under ``if i % 100 == 0`` (``if step % log_every == 0``, ``if not i % k``) inside
the loop runs on one iteration in many: a logging guard. A loop *trains* when its body runs a
backward pass itself (``loss.backward()``, ``accelerator.backward(loss)``,
``scaler.scale(loss).backward()``, ``torch.autograd.backward``), not only in a loop nested in it
(an epoch loop around the batch loop runs its own statements once per epoch).
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.enclosing import guarding_tests, statement_path
from shapecheck.semantic.syntax import sub_blocks, target_names
from shapecheck.semantic.walk import walk


def under_modulo_guard(ctx) -> bool:
    """The statement being analysed sits, inside its innermost loop, in the body of an ``if``
    whose test holds on one iteration in many (``i % n == k``, ``not i % n``, in a conjunction;
    a disjunction of such tests and of the loop's counter equal to a value, ``i == 0``)."""
    loop = ctx.loop
    statement = ctx.statement
    if loop is None or statement is None:
        return False
    path = statement_path(loop, statement)
    if path is None:
        return False
    counters = frozenset(target_names(loop.target)) if type(loop) is cst.For else frozenset()
    return any(_modulo_test(test, counters) for test in guarding_tests(path))


def _modulo_test(test: cst.BaseExpression, counters: frozenset[str] = frozenset()) -> bool:
    """``test`` holds on one value in every ``n`` of a counter: ``i % n == k``, ``not i % n``,
    a conjunction with one such part, a disjunction of such parts or of a test that holds on one
    iteration (a loop ``counter`` equal to a value that does not involve it: ``i == 0``)."""
    if isinstance(test, cst.Comparison):
        return _is_modulo(test.left) and all(type(c.operator) is cst.Equal for c in test.comparisons) \
            or any(type(c.operator) is cst.Equal and _is_modulo(c.comparator) for c in test.comparisons)
    if isinstance(test, cst.UnaryOperation) and type(test.operator) is cst.Not:
        return _is_modulo(test.expression)
    if isinstance(test, cst.BooleanOperation):
        if type(test.operator) is cst.And:
            return _modulo_test(test.left, counters) or _modulo_test(test.right, counters)
        return all(_modulo_test(side, counters) or _counter_equals(side, counters) for side in (test.left, test.right))
    return False


def _counter_equals(test: cst.BaseExpression, counters: frozenset[str]) -> bool:
    """``i == k`` (or ``k == i``) for a loop counter ``i`` and a ``k`` that does not read a counter:
    it holds on one iteration of the loop."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 \
            or type(test.comparisons[0].operator) is not cst.Equal:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    for side, other in (sides, sides[::-1]):
        if type(side) is cst.Name and side.value in counters and not any(
                type(n) is cst.Name and n.value in counters for n in (other, *walk(other))):
            return True
    return False


def _is_modulo(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Modulo


def retry_loop(loop: cst.CSTNode) -> bool:
    """The body of ``loop`` ends by leaving it (``return``, ``break``, ``raise`` as its last
    statement): it runs once, and again only through a ``continue`` (an out-of-memory retry with
    a smaller batch), so a statement in it runs once per attempt, not once per step."""
    body = getattr(loop, "body", None)
    if type(body) is not cst.IndentedBlock or not body.body:
        return False
    last = body.body[-1]
    return type(last) is cst.SimpleStatementLine and bool(last.body) \
        and type(last.body[-1]) in (cst.Return, cst.Break, cst.Raise)


def loop_trains(ctx, loop: cst.CSTNode) -> bool:
    """The body of ``loop`` runs a backward pass itself, outside the loops nested in it, or a
    nested loop runs one while no nested loop calls ``step()`` (gradient accumulation: the step
    is here or around): it runs within each training step. A loop that only calls a function
    that trains, or holds a whole batch loop with its ``step()`` (an epoch loop), syncs once per
    epoch."""
    body = [stmt for block in sub_blocks(loop)[:1] for stmt in block]
    if any(_runs(ctx, stmt, _backward_in) for stmt in body):
        return True
    nested = [node for node in walk(loop) if isinstance(node, (cst.For, cst.While))]
    return bool(nested) and any(_backward_in(ctx, inner) for inner in nested) \
        and not any(_steps_in(ctx, inner) for inner in nested)


def _runs(ctx, stmt: cst.CSTNode, found: Callable[[Any, cst.CSTNode], bool]) -> bool:
    """``found`` holds of ``stmt``, not counting the loops and definitions nested in it."""
    if isinstance(stmt, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(stmt, cst.BaseSmallStatement):  # the body of a one-line suite
        return found(ctx, stmt)
    if type(stmt) is not cst.SimpleStatementLine:
        header = [getattr(stmt, "test", None), *(item.item for item in getattr(stmt, "items", ()))]
        return any(found(ctx, part) for part in header if part is not None) \
            or any(_runs(ctx, inner, found) for block in sub_blocks(stmt) for inner in block)
    return any(found(ctx, small) for small in stmt.body)


def _backward_in(ctx, node: cst.CSTNode) -> bool:
    for inner in (node, *walk(node)):
        if type(inner) is not cst.Call:
            continue
        call = method_call(inner)
        if call is not None and call[1] == "backward":
            return True
        if backward_root(ctx, inner) is not None:
            return True
    return False


def _steps_in(ctx, node: cst.CSTNode) -> bool:
    """``node`` calls a ``step()`` method (an optimizer's, a scaler's)."""
    for inner in (node, *walk(node)):
        if type(inner) is cst.Call:
            call = method_call(inner)
            if call is not None and call[1] == "step":
                return True
    return False
