"""Grad provenance: whether a computed value requires grad, given its inputs and the grad mode."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.facts import (
    BOOL, FLOAT, INT, LEAF_REQUIRES_GRAD, NO_GRAD, NON_LEAF, STR, TENSOR, Fact, Grad,
)


def grad_of(ev: Eval, inputs: Sequence[Fact], differentiable: bool) -> Optional[Grad]:
    """The grad state of a result computed from ``inputs``: ``NON_LEAF`` when one of them
    requires grad with grad mode on, ``NO_GRAD`` when none may, else unknown."""
    grad_enabled = ev.model.grad_enabled
    if not differentiable or grad_enabled is False:
        return NO_GRAD
    any_unknown = False
    for f in inputs:
        if f.kind in (INT, FLOAT, BOOL, STR):
            continue
        if f.kind == TENSOR and f.grad == NO_GRAD:
            continue
        if f.kind == TENSOR and f.grad in (LEAF_REQUIRES_GRAD, NON_LEAF):
            return NON_LEAF if grad_enabled else None
        any_unknown = True
    return None if any_unknown else NO_GRAD


def requested_grad(ev: Eval, flag: Optional[cst.BaseExpression], default: Optional[Grad]) -> Optional[Grad]:
    """The grad of a new tensor built with ``requires_grad=flag``: a leaf that requires grad for
    ``True``, ``NO_GRAD`` for ``False``, unknown for anything else; ``default`` without a flag."""
    if flag is None:
        return default
    v = ev.fact(flag).value
    return LEAF_REQUIRES_GRAD if v is True else (NO_GRAD if v is False else None)


#: what :func:`grad_mode_of` answers for a context manager or decorator that sets no grad mode
NOT_A_GRAD_MODE = object()


def grad_mode_of(ev: Eval, expr: cst.BaseExpression) -> object:
    """The grad mode a context manager or decorator sets (True, False, None when unknown), or
    :data:`NOT_A_GRAD_MODE`: ``torch.no_grad()``, ``torch.enable_grad()``,
    ``torch.inference_mode(mode)``, ``torch.set_grad_enabled(mode)``."""
    func = expr.func if type(expr) is cst.Call else expr
    qual = ev.model.imports.resolve(func)
    if qual is None:
        return NOT_A_GRAD_MODE
    if qual in ("torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"):
        return False
    if qual in ("torch.enable_grad", "torch.autograd.enable_grad"):
        return True
    if qual in ("torch.inference_mode", "torch.autograd.inference_mode"):
        if type(expr) is cst.Call and expr.args:
            v = ev.fact(expr.args[0].value).value
            return False if v is True else (True if v is False else None)
        return False
    if qual in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
        if type(expr) is cst.Call and expr.args:
            v = ev.fact(expr.args[0].value).value
            return v if isinstance(v, bool) else None
        return None
    return NOT_A_GRAD_MODE
