"""Losses computed with ``reduction="none"``: one value per element of the batch, not a scalar.

``F.mse_loss(a, b, reduction="none")``, ``nn.CrossEntropyLoss(reduction="none")(out, y)`` and a
name bound only to such a call (on every path to the read) hold the per-element losses: more
than one value unless the batch holds a single element (torch documents the output shape as the
input's, or the input's without its class dim).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.global_values import global_values
from shapecheck.rules.helpers.calls import dotted_name, torch_name
from shapecheck.rules.shape.bound_values import value_before
from shapecheck.semantic.eval.nn_modules import reduction_off
from shapecheck.semantic.syntax import CallArgs
from shapecheck.semantic.torch_api import FUNCTIONAL_LOSSES, NN_LOSS_MODULES
from shapecheck.semantic.walk import walk


def _says_none(ctx, call: cst.Call) -> Optional[str]:
    """How ``call`` turns the reduction off (:func:`~shapecheck.semantic.eval.nn_modules.reduction_off`)."""
    return reduction_off(ctx.fact, CallArgs(call))


def _unreduced_module(ctx, expr: cst.BaseExpression) -> Optional[str]:
    """How ``expr`` is written when it is an ``nn.*Loss(reduction="none")`` instance: the
    constructor call itself, a name bound only to one, or a value whose facts say it is one (a
    parameter given one at every call of the function)."""
    values: tuple[cst.BaseExpression, ...] = (expr,)
    if type(expr) is not cst.Call:
        dotted = dotted_name(expr)
        if dotted is None:
            return None
        values = ctx.assigned_values(dotted) or _value_before(ctx, expr) or class_assignments(ctx, dotted) \
            or global_values(ctx, expr)
    if not values:
        built = ctx.fact(expr).unreduced
        return f"`{built}`" if built is not None else None
    spelled = None
    for value in values:
        if type(value) is not cst.Call:
            return None
        name = torch_name(ctx, value.func)
        spelled = _says_none(ctx, value)
        if name is None or not name.startswith("nn.") or name[3:] not in NN_LOSS_MODULES or spelled is None:
            return None
    return f"`{name}({spelled})`"


def class_assignments(ctx, dotted: str) -> tuple[cst.BaseExpression, ...]:
    """The values every method of the enclosing class assigns to ``self.<attr>`` (``dotted``),
    when it has no other binding there (no augmented, tuple or deleted assignment)."""
    cls = ctx.class_def
    if cls is None or not dotted.startswith("self.") or dotted.count(".") != 1:
        return ()
    attr = dotted[len("self."):]
    values: list[cst.BaseExpression] = []
    methods = [m for m in cls.body.body if type(m) is cst.FunctionDef] \
        if type(cls.body) is cst.IndentedBlock else []
    for node in (n for m in methods for n in walk(m.body)):
        if type(node) is cst.Assign:
            for target in node.targets:
                if _writes(target.target, attr):
                    if type(target.target) is not cst.Attribute:
                        return ()
                    values.append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and _writes(node.target, attr):
            return ()
        elif type(node) is cst.Del and _writes(node.target, attr):
            return ()
    return tuple(values)


def _writes(target: cst.BaseExpression, attr: str) -> bool:
    """``target`` (an assignment target) binds ``self.<attr>``, alone or in a tuple."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_writes(e.value, attr) for e in target.elements)
    return type(target) is cst.Attribute and target.attr.value == attr and dotted_name(target) == f"self.{attr}"


def _value_before(ctx, expr: cst.BaseExpression) -> tuple[cst.BaseExpression, ...]:
    """The value the plain assignment before ``expr`` (a local name) gave it in straight-line
    code, for scopes that record no assignments (no backward pass in them)."""
    if type(expr) is not cst.Name:
        return ()
    value = value_before(ctx, expr.value, expr)
    return (value,) if value is not None else ()


def _unreduced_call(ctx, call: cst.Call) -> Optional[str]:
    """What makes ``call`` an unreduced loss: ``F.<loss>(..., reduction="none")`` or a call of
    an ``nn.*Loss(reduction="none")`` instance."""
    name = torch_name(ctx, call.func)
    if name is not None and name.startswith("nn.functional.") and name.split(".")[-1] in FUNCTIONAL_LOSSES:
        spelled = _says_none(ctx, call)
        return f"`F.{name.split('.')[-1]}(..., {spelled})`" if spelled is not None else None
    if name is not None:
        return None
    return _unreduced_module(ctx, call.func)


def unreduced_loss(ctx, expr: cst.BaseExpression) -> Optional[str]:
    """How the loss ``expr`` was computed without reduction (for messages), when it is such a
    call or a name bound to one on every path here; else ``None``."""
    if type(expr) is cst.Call:
        return _unreduced_call(ctx, expr)
    dotted = dotted_name(expr)
    if dotted is None:
        return None
    values = ctx.assigned_values(dotted) or _value_before(ctx, expr)
    if not values:
        return None
    found = [_unreduced_call(ctx, v) if type(v) is cst.Call else None for v in values]
    if any(f is None for f in found):
        return None
    return found[0]


def unreduced_elements(ctx, expr: cst.BaseExpression, name: str) -> Optional[tuple[str, Optional[str]]]:
    """``(description, condition)`` for a loss ``expr`` (written ``name``) computed with
    ``reduction="none"`` that is not known to hold a single element: one value per element, more
    than one unless the batch has one."""
    how = unreduced_loss(ctx, expr)
    if how is None:
        return None
    shape = ctx.fact(expr).shape
    if shape is not None and shape.rest_at is None and all(d == 1 for d in shape.dims):
        return None
    return f"one value per element (it comes from {how})", f"`{name}` has one element"
