"""Tensors that a guard proves to require grad: the branch of ``if t.requires_grad`` runs only
when ``t`` does.

``a if t.requires_grad else b`` and ``if t.requires_grad: ...`` (the ``if`` branch, with ``t``
not rebound in it; an ``and`` of tests counts too) guard ``t``. Ops that keep the autograd
history (``t.cpu()``, ``t.float()``, ``t.view(...)``) keep the requirement while grad mode is
known to be on (under ``no_grad`` a copy made by ``.cpu()`` of a CUDA tensor would not
require grad).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.enclosing import node_path

#: methods whose result requires grad when their receiver does (with grad mode on)
_KEEP_HISTORY = frozenset({"cpu", "cuda", "to", "float", "double", "half", "contiguous", "clone", "view",
                           "reshape", "squeeze", "unsqueeze", "permute", "transpose", "flatten", "t"})


def guarded_requires_grad(ctx, expr: cst.BaseExpression, node: cst.CSTNode) -> Optional[str]:
    """The name ``t`` when ``expr`` (read at ``node``) is ``t``, or ``t`` through ops that keep
    its history, and ``node`` lies in a branch that runs only when ``t.requires_grad``."""
    root = expr
    chained = False
    while type(root) is cst.Call and type(root.func) is cst.Attribute and root.func.attr.value in _KEEP_HISTORY:
        root, chained = root.func.value, True
    if type(root) is not cst.Name or (chained and ctx.grad_enabled is not True):
        return None
    name = root.value
    scope = ctx.function if ctx.function is not None else ctx.module
    path = node_path(scope, node)
    if path is None:
        return None
    for parent, child in zip(path, path[1:]):
        if type(parent) is cst.IfExp and child is parent.body and _tests(parent.test, name):
            return name
        if type(parent) is cst.If and child is parent.body and _tests(parent.test, name) \
                and not _rebinds(parent.body, name):
            return name
        if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) and parent is not scope:
            return None
    return None


def _tests(test: cst.BaseExpression, name: str) -> bool:
    """``test`` is true only when ``name.requires_grad`` is (alone, or a side of ``and``)."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return _tests(test.left, name) or _tests(test.right, name)
    return type(test) is cst.Attribute and test.attr.value == "requires_grad" \
        and type(test.value) is cst.Name and test.value.value == name


def _rebinds(block: cst.CSTNode, name: str) -> bool:
    """Some statement of ``block`` binds ``name`` (an assignment, a loop or ``with`` target...)."""
    stack: list[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        targets: list[cst.CSTNode] = []
        if type(node) is cst.Assign:
            targets = [t.target for t in node.targets]
        elif type(node) in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor):
            targets = [node.target]  # type: ignore[attr-defined]
        elif type(node) is cst.AsName:
            targets = [node.name]
        elif type(node) is cst.Del:
            targets = [node.target]
        for target in targets:
            inner = [target]
            while inner:
                t = inner.pop()
                if type(t) is cst.Name and t.value == name:
                    return True
                inner.extend(t.children)
        stack.extend(node.children)
    return False

