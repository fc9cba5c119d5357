"""Which modules' parameters an optimizer updates, read from its construction.

``optim.Adam(D.parameters())`` updates the parameters of ``D``: its ``step()`` changes them in
place (under ``no_grad``), which bumps their version counters. The ``params`` argument is read
as written: ``M.parameters()``, ``list(...)``/``tuple(...)`` of it, ``filter(f, ...)``,
``itertools.chain(...)``, lists joined with ``+``, starred into a list, and parameter groups
(``[{"params": M.parameters(), "lr": ...}, ...]``). Anything else (a name bound earlier, a
comprehension, a helper's result) leaves the modules unknown.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.syntax import dotted_name

__all__ = ["updated_modules", "is_parameters_call", "covers"]

#: calls that pass the parameters of their iterable arguments through
_WRAPPERS = frozenset({"list", "tuple", "chain", "itertools.chain"})


def is_parameters_call(expr: cst.BaseExpression) -> Optional[str]:
    """The dotted name of ``M`` for ``M.parameters()`` (with no argument or ``recurse=True``)."""
    if type(expr) is not cst.Call or type(expr.func) is not cst.Attribute or expr.func.attr.value != "parameters":
        return None
    for arg in expr.args:
        value = arg.value
        if arg.keyword is None or arg.keyword.value != "recurse" or type(value) is not cst.Name \
                or value.value != "True":
            return None
    return dotted_name(expr.func.value)


def updated_modules(params: Optional[cst.BaseExpression]) -> Optional[frozenset[str]]:
    """The dotted names of the modules whose parameters ``params`` (an optimizer's first
    argument) holds, when every part of it is one of the forms the module doc lists."""
    if params is None:
        return None
    found: set[str] = set()
    return frozenset(found) if _collect(params, found) and found else None


def _collect(expr: cst.BaseExpression, found: set[str]) -> bool:
    owner = is_parameters_call(expr)
    if owner is not None:
        found.add(owner)
        return True
    tp = type(expr)
    if tp is cst.BinaryOperation and type(expr.operator) is cst.Add:  # type: ignore[attr-defined]
        return _collect(expr.left, found) and _collect(expr.right, found)  # type: ignore[attr-defined]
    if tp is cst.List or tp is cst.Tuple:
        return bool(expr.elements) and all(_element(e, found) for e in expr.elements)  # type: ignore[attr-defined]
    if tp is cst.Call:
        name = dotted_name(expr.func)  # type: ignore[attr-defined]
        args = expr.args  # type: ignore[attr-defined]
        if any(a.keyword is not None or a.star for a in args) or not args:
            return False
        if name in _WRAPPERS:
            return all(_collect(a.value, found) for a in args)
        if name == "filter" and len(args) == 2:
            return _collect(args[1].value, found)
    return False


def _element(element: cst.BaseElement, found: set[str]) -> bool:
    """One element of a list of parameters: a starred iterable or a parameter group."""
    value = element.value
    if type(element) is cst.StarredElement:
        return _collect(value, found)
    if type(value) is cst.Dict:
        groups = [e.value for e in value.elements if type(e) is cst.DictElement
                  and type(e.key) is cst.SimpleString and e.key.raw_value == "params"]
        return len(groups) == 1 and _collect(groups[0], found)
    return False



def covers(updated: str, module: str) -> bool:
    """An optimizer over the parameters of the module named ``updated`` updates every parameter
    of the module named ``module``: the same module, or ``module`` is a submodule of it
    (``model`` covers ``model.encoder``, not the other way round)."""
    return module == updated or module.startswith(updated + ".")
