"""Which statements change a tensor in place, and which tensor (shared by SC301 and SC302)."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from shapecheck.rules import torch_ops as ops
from shapecheck.rules.helpers.calls import is_name, keyword, method_call, positional, torch_name


def _base(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` for ``x[0]``, ``x[:, 1:][0]``: the tensor whose storage a subscript writes."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def inplace_call_targets(ctx, node: cst.Call) -> Iterator[tuple[cst.BaseExpression, str]]:
    """``(tensor, how)`` for each tensor that the call ``node`` modifies in place.

    Forms: ``x.add_(...)`` (every in-place Tensor method), ``torch.relu_(x)``,
    ``F.relu(x, inplace=True)``, ``F.relu_(x)``, and ``out=x``. ``torch.nn.init`` functions are
    not included: they run under ``no_grad`` and are meant for parameters.
    """
    call = method_call(node)
    name = torch_name(ctx, node.func)
    if name is None and call is not None and call[1] in ops.INPLACE_METHODS:
        yield call[0], f"`.{call[1]}()`"
        return
    if name is None:
        return
    if name.startswith("nn.init."):
        return
    short = name.split(".")[-1]
    args = positional(node)
    if name.startswith("nn.functional."):
        if args and (short in ops.FUNCTIONAL_INPLACE or (
            short in ops.FUNCTIONAL_INPLACE_KW and _kw_true(node, "inplace")
        )):
            yield args[0], f"`{short}(..., inplace=True)`" if short in ops.FUNCTIONAL_INPLACE_KW else f"`{short}()`"
    elif "." not in name and short in ops.INPLACE_METHODS and args:
        yield args[0], f"`torch.{short}()`"
    out = keyword(node, "out")
    if out is not None and not is_name(out.value, "None"):
        value = out.value
        if isinstance(value, (cst.Tuple, cst.List)):
            for element in value.elements:
                yield element.value, "`out=`"
        else:
            yield value, "`out=`"


def _kw_true(node: cst.Call, name: str) -> bool:
    arg = keyword(node, name)
    return arg is not None and is_name(arg.value, "True")


def augassign_target(node: cst.AugAssign) -> cst.BaseExpression:
    """The tensor that ``x += y`` (or ``x[i] += y``) modifies in place."""
    return _base(node.target)


def subscript_targets(node: cst.Assign) -> Iterator[cst.BaseExpression]:
    """The tensors that ``x[...] = v`` modifies in place."""
    for target in node.targets:
        if isinstance(target.target, cst.Subscript):
            yield _base(target.target)
