"""``optimizer.zero_grad()`` placed between ``loss.backward()`` and ``optimizer.step()``.

Read on one block of statements, in order (the bodies of ``with`` statements in it count as
part of it, since they run straight through). The receiver needs no type: calling both
``.zero_grad()`` and ``.step()`` on one name, after a ``backward()``, is what an optimizer is
used for (``scaler.step(optimizer)`` steps ``optimizer`` too).
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.helpers.calls import dotted_name, method_call, positional, torch_name
from shapecheck.semantic.walk import walk


def _flat(stmts: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """The statements of a block, with the bodies of its ``with`` statements spliced in."""
    out: list[cst.BaseStatement] = []
    for s in stmts:
        if type(s) is cst.With and type(s.body) is cst.IndentedBlock:
            out.extend(_flat(s.body.body))
        else:
            out.append(s)
    return out


def _expression_call(stmt: cst.BaseStatement) -> Optional[cst.Call]:
    """The call of a statement line that is one call expression (``optimizer.step()``)."""
    if type(stmt) is cst.SimpleStatementLine and len(stmt.body) == 1:
        small = stmt.body[0]
        if type(small) is cst.Expr and type(small.value) is cst.Call:
            return small.value
    return None


def _stepped(call: cst.Call) -> Optional[str]:
    """The optimizer that ``call`` steps: ``opt.step()`` (no closure), ``scaler.step(opt)``."""
    found = method_call(call)
    if found is None or found[1] != "step":
        return None
    args = positional(call)
    if not call.args:
        return dotted_name(found[0])
    if len(call.args) == 1 and len(args) == 1:
        return dotted_name(args[0])
    return None


def _zeroed(call: cst.Call) -> Optional[str]:
    """The receiver of ``r.zero_grad(...)``."""
    found = method_call(call)
    return dotted_name(found[0]) if found is not None and found[1] == "zero_grad" else None


def _runs_backward(ctx, stmt: cst.CSTNode) -> bool:
    """``stmt`` calls ``backward()`` (directly, or through a helper of the run that does)."""
    for node in walk(stmt):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if type(node) is cst.Call:
            if backward_root(ctx, node) is not None and torch_name(ctx, node.func) != "autograd.grad":
                return True
            effects = ctx.call_effects(node)
            if effects is not None and effects.backward:
                return True
    return False


def zeroed_before_step(ctx, stmts: Sequence[cst.BaseStatement]) -> Iterator[tuple[cst.Call, cst.Call, str]]:
    """``(zero_grad call, step call, optimizer)`` for each ``opt.zero_grad()`` of the block that
    runs after a ``backward()`` of the block and before ``opt.step()``, with no ``backward()``
    between it and the step."""
    flat = _flat(stmts)
    if not any(call is not None and _zeroed(call) is not None for call in map(_expression_call, flat)):
        return  # no `zero_grad()` line: nothing to find, and no need to look for `backward()`
    backward_seen = False
    pending: dict[str, cst.Call] = {}
    for stmt in flat:
        call = _expression_call(stmt)
        zeroed = _zeroed(call) if call is not None else None
        if zeroed is not None:
            if backward_seen:
                pending[zeroed] = call  # type: ignore[assignment]
            continue
        stepped = _stepped(call) if call is not None else None
        if stepped is not None:
            if stepped in pending:
                yield pending.pop(stepped), call, stepped  # type: ignore[misc]
            backward_seen = False
            pending.clear()
            continue
        if _runs_backward(ctx, stmt):
            backward_seen = True
            pending.clear()
