"""How often a statement inside a loop runs, and whether the loop trains.

A statement under ``if i % 100 == 0`` (``if step % log_every == 0``, ``if not i % k``) inside
the loop runs on one iteration in many: a logging guard. A loop *trains* when its body runs a
backward pass itself (``loss.backward()``, ``accelerator.backward(loss)``,
``scaler.scale(loss).backward()``, ``torch.autograd.backward``).
"""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.enclosing import guarding_tests, statement_path
from shapecheck.semantic.walk import walk


def under_modulo_guard(ctx) -> bool:
    """The statement being analysed sits, inside its innermost loop, in the body of an ``if``
    whose test holds on one iteration in many (``i % n == k``, ``not i % n``, in a conjunction)."""
    loop = ctx.loop
    statement = ctx.statement
    if loop is None or statement is None:
        return False
    path = statement_path(loop, statement)
    return path is not None and any(_modulo_test(test) for test in guarding_tests(path))


def _modulo_test(test: cst.BaseExpression) -> bool:
    """``test`` holds on one value in every ``n`` of a counter: ``i % n == k``, ``not i % n``,
    a conjunction with one such part, a disjunction of such parts."""
    if isinstance(test, cst.Comparison):
        return _is_modulo(test.left) and all(type(c.operator) is cst.Equal for c in test.comparisons) \
            or any(type(c.operator) is cst.Equal and _is_modulo(c.comparator) for c in test.comparisons)
    if isinstance(test, cst.UnaryOperation) and type(test.operator) is cst.Not:
        return _is_modulo(test.expression)
    if isinstance(test, cst.BooleanOperation):
        if type(test.operator) is cst.And:
            return _modulo_test(test.left) or _modulo_test(test.right)
        return _modulo_test(test.left) and _modulo_test(test.right)
    return False


def _is_modulo(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Modulo


def loop_trains(ctx, loop: cst.CSTNode) -> bool:
    """The body of ``loop`` runs a backward pass itself (a loop that only calls a function that
    trains, once per epoch, syncs once per epoch)."""
    for node in walk(loop):
        if type(node) is not cst.Call:
            continue
        call = method_call(node)
        if call is not None and call[1] == "backward":
            return True
        if backward_root(ctx, node) is not None:
            return True
    return False
