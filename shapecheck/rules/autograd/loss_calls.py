"""Calls that compute a loss, and the prediction each one takes."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.unreduced_loss import class_assignments
from shapecheck.rules.helpers.calls import dotted_name, keyword, positional, torch_name
from shapecheck.semantic.torch_api import FUNCTIONAL_LOSSES, NN_LOSS_MODULES


def _loss_module(ctx, func: cst.BaseExpression) -> bool:
    """``func`` is an ``nn.*Loss`` instance (a name bound to one, or the constructor call)."""
    qual = ctx.fact(func).qual
    if qual is not None and qual.startswith("torch.nn.") and qual.split(".")[-1] in NN_LOSS_MODULES:
        return True
    if type(func) is cst.Call:
        return _constructs_loss(ctx, func)
    dotted = dotted_name(func)
    values = class_assignments(ctx, dotted) if dotted is not None and ctx.fact(func).kind is None else ()
    return bool(values) and all(type(v) is cst.Call and _constructs_loss(ctx, v) for v in values)


def _constructs_loss(ctx, call: cst.Call) -> bool:
    """``call`` is ``nn.<X>Loss(...)``."""
    name = torch_name(ctx, call.func)
    return name is not None and name.startswith("nn.") and name[3:] in NN_LOSS_MODULES


def loss_prediction(ctx, call: cst.Call) -> Optional[cst.BaseExpression]:
    """The prediction argument of ``F.<loss>(pred, target)`` or ``criterion(pred, target)`` with
    ``criterion`` an ``nn.*Loss``; ``None`` when ``call`` is not known to compute a loss."""
    name = torch_name(ctx, call.func)
    args = positional(call)
    if name is not None:
        if name.startswith("nn.functional.") and name.split(".")[-1] in FUNCTIONAL_LOSSES:
            arg = keyword(call, "input")
            return args[0] if args else (arg.value if arg is not None else None)
        return None
    if args and _loss_module(ctx, call.func):
        return args[0]
    return None
