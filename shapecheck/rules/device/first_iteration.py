"""The value a name has on the first iteration of a loop, where the joined facts of the loop lost it.

``input_ids = torch.tensor([ids])`` before ``for _ in range(n): logits = model(input_ids); ...;
input_ids = torch.cat([input_ids, nxt], 1)``: the facts at the loop head join the CPU tensor with
what the body rebinds it to, and say nothing. The first iteration, though, reads the value bound
before the loop: if that fails, the loop fails the first time it runs its body.

The value read is the first iteration's only where the statement surely runs then with the name
as the loop found it: the statement lies in the loop body itself or in ``with`` blocks of it (no
``if``, inner loop or ``try`` on the way), no statement before it on the way rebinds the name or
holds a ``continue`` (which would leave the statement to a later iteration), and the statement
itself binds it with no walrus.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.enclosing import earlier_statements, statement_path
from shapecheck.semantic.facts import Fact
from shapecheck.semantic.syntax import target_names
from shapecheck.semantic.walk import walk


def _binds(node: cst.CSTNode, name: str) -> bool:
    """True when ``node`` (a statement) binds ``name`` anywhere, or holds a ``continue``."""
    for inner in (node, *walk(node, into_defs=False)):
        tp = type(inner)
        if tp is cst.Continue:
            return True
        if tp is cst.Assign and any(name in target_names(t.target) for t in inner.targets):  # type: ignore[attr-defined]
            return True
        if isinstance(inner, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)) \
                and name in target_names(inner.target):
            return True
        if tp is cst.WithItem and inner.asname is not None and name in target_names(inner.asname.name):  # type: ignore[attr-defined]
            return True
        if tp is cst.Del or isinstance(inner, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal)):
            return True  # conservative: these may unbind or rebind it
        if isinstance(inner, (cst.FunctionDef, cst.ClassDef)) and inner.name.value == name:
            return True
    return False


def first_iteration_fact(ctx, expr: cst.BaseExpression) -> Optional[Fact]:
    """The fact of the name ``expr`` on the first iteration of the innermost loop around the hook's
    statement, when the statement surely reads the value the loop was entered with (see the
    module); ``None`` otherwise."""
    loop, statement = ctx.loop, ctx.statement
    if type(expr) is not cst.Name or loop is None or statement is None:
        return None
    name = expr.value
    if type(loop) is cst.For and name in target_names(loop.target):
        return None
    path = statement_path(loop, statement)
    if not path or path[0].block != 0:
        return None
    if any(type(step.compound) is not cst.With for step in path[1:]):
        return None
    if any(_binds(stmt, name) for stmt in earlier_statements(path)):
        return None
    if any(type(n) is cst.NamedExpr for n in walk(statement)):
        return None
    if any(type(step.compound) is cst.With and _binds_in_items(step.compound, name) for step in path[1:]):
        return None
    return ctx.loop_entry_fact(name)


def _binds_in_items(node: cst.With, name: str) -> bool:
    """True when an item of the ``with`` binds ``name`` (``with open(p) as name:``)."""
    return any(item.asname is not None and name in target_names(item.asname.name) for item in node.items)
