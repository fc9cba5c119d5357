"""A name the function back-propagates through: evidence that its tensor requires grad.

``loss.backward()`` raises unless ``loss`` requires grad. When a function binds ``loss`` once
(or only receives it as a parameter) and calls ``loss.backward()``, every read of ``loss`` in
it sees a tensor that requires grad, or the function is broken at that ``backward()`` anyway.
``x.backward(y)`` with a positional argument is no such evidence: it may be a wrapper's
(``accelerator.backward(loss)``).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.semantic.saved_tensors import names_read
from shapecheck.semantic.syntax import with_targets
from shapecheck.semantic.walk import walk


def _bindings(function: cst.FunctionDef, name: str) -> Optional[int]:
    """How many statements of ``function`` bind ``name`` (its parameters count as one);
    ``None`` when one changes it in a way this does not follow (``+=``, ``del``, walrus)."""
    count = int(any(p.name.value == name for p in (
        *function.params.params, *function.params.posonly_params, *function.params.kwonly_params)))
    for node in walk(function.body):
        if type(node) is cst.Assign:
            count += sum(name in names_read(t.target) for t in node.targets)
        elif isinstance(node, (cst.AnnAssign, cst.For)) and name in names_read(node.target):
            count += 1
        elif any(name in names_read(t) for t in with_targets(node)):
            count += 1
        elif isinstance(node, (cst.AugAssign, cst.Del)) and name in names_read(node.target):
            return None
        elif type(node) is cst.NamedExpr and name in names_read(node.target):
            return None
    return count


def backpropagated(ctx, expr: cst.BaseExpression) -> bool:
    """The enclosing function binds the name ``expr`` once and calls ``<name>.backward()``."""
    function = ctx.function
    name = dotted_name(expr) if type(expr) is cst.Name else None
    if function is None or name is None or _bindings(function, name) != 1:
        return False
    for node in walk(function.body):
        if type(node) is cst.Call:
            if any(a.keyword is None for a in node.args) and type(node.func) is cst.Attribute \
                    and node.func.attr.value == "backward":
                continue  # `x.backward(loss)`: perhaps a wrapper's backward (accelerate, fabric)
            root = backward_root(ctx, node)
            if root is not None and type(root) is cst.Name and root.value == name:
                return True
    return False
