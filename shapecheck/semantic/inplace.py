"""Which statements change a tensor in place, and which tensor (read by the backward-save state
and by SC301/SC302)."""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst

from shapecheck.semantic.syntax import is_name, keyword, positional
from shapecheck.semantic.torch_api import FUNCTIONAL_INPLACE, FUNCTIONAL_INPLACE_KW, INPLACE_METHODS

Resolve = Callable[[cst.CSTNode], Optional[str]]


def written_base(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x`` for ``x[0]``, ``x[:, 1:][0]``: the tensor whose storage a subscript writes (or the
    list whose element it is)."""
    while type(expr) is cst.Subscript:
        expr = expr.value
    return expr


_base = written_base


def view_base(expr: cst.BaseExpression, is_int: Callable[[cst.BaseExpression], bool]) -> Optional[cst.BaseExpression]:
    """``x`` for ``x[0]``, ``x[:, t - 1]``: a subscript by ints and slices only (``is_int`` tells
    an int index), a view that shares ``x``'s storage and version counter (an index tensor would
    make a copy); ``None`` for anything else."""
    if type(expr) is not cst.Subscript:
        return None
    while type(expr) is cst.Subscript:
        for element in expr.slice:
            inner = element.slice
            if type(inner) is cst.Index and not is_int(inner.value):
                return None
        expr = expr.value
    return expr


def inplace_call_targets(resolve: Resolve, node: cst.Call) -> Iterator[tuple[cst.BaseExpression, str]]:
    """``(tensor, how)`` for each tensor that the call ``node`` modifies in place (``resolve``
    gives the import-resolved dotted name of an expression).

    Forms: ``x.add_(...)`` (every in-place Tensor method), ``torch.relu_(x)``,
    ``F.relu(x, inplace=True)``, ``F.relu_(x)``, and ``out=x``. ``torch.nn.init`` functions are
    not included: they run under ``no_grad`` and are meant for parameters.
    """
    qual = resolve(node.func)
    name = qual[len("torch."):] if qual is not None and qual.startswith("torch.") else None
    func = node.func
    if name is None and type(func) is cst.Attribute and func.attr.value in INPLACE_METHODS:
        yield func.value, f"`.{func.attr.value}()`"
        return
    if name is None:
        return
    if name.startswith("nn.init."):
        return
    short = name.split(".")[-1]
    args = positional(node)
    if name.startswith("nn.functional."):
        if args and (short in FUNCTIONAL_INPLACE or (
            short in FUNCTIONAL_INPLACE_KW and _kw_true(node, "inplace")
        )):
            yield args[0], f"`{short}(..., inplace=True)`" if short in FUNCTIONAL_INPLACE_KW else f"`{short}()`"
    elif "." not in name and short in INPLACE_METHODS and args:
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
    for target, _whole in subscript_writes(node):
        yield target


def subscript_writes(node: cst.Assign) -> Iterator[tuple[cst.BaseExpression, bool]]:
    """``(x, whole_element)`` for each ``x[...] = v`` of ``node``: ``whole_element`` for one level
    of indexing (``x[i] = v``), which on a list replaces an element and changes no tensor;
    ``x[i][j] = v`` writes into what ``x[i]`` holds."""
    for target in node.targets:
        for element in _unpacked(target.target):
            if type(element) is cst.Subscript:
                yield _base(element), type(element.value) is not cst.Subscript


def _unpacked(target: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The targets of ``a, b[0] = ...`` (nested tuples and lists flattened), or ``target`` itself."""
    if type(target) is cst.Tuple or type(target) is cst.List:
        for element in target.elements:
            yield from _unpacked(element.value)
    else:
        yield target
