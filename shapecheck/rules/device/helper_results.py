"""Where a CPU value made by a helper of the file comes from: the factory calls without
``device=`` whose results a function returns (``def init_hidden(self, b): return torch.zeros(...)``).

A module on a GPU that is given such a value raises in the layer that meets it; the fix belongs
where the value is made, in the helper, which is where a finding about it is most useful.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.device.placement import factory_root
from shapecheck.rules.helpers.calls import torch_name
from shapecheck.semantic.syntax import all_params, is_name, target_names
from shapecheck.semantic.torch_api import FACTORIES, LIKE_FACTORIES, NEW_TENSOR_METHODS
from shapecheck.semantic.walk import walk


def _bound_once(function: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """The value of the one assignment ``name = value`` of ``function``, when the name is bound by
    nothing else there (a parameter, a loop target, ``+=``...)."""
    if name in {p.name.value for p in all_params(function.params)}:
        return None
    values: list[cst.BaseExpression] = []
    for node in walk(function.body):
        if type(node) is cst.Assign:
            for target in node.targets:
                if name in target_names(target.target):
                    if type(target.target) is not cst.Name:
                        return None
                    values.append(node.value)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)) \
                and name in target_names(node.target):
            return None
        elif type(node) is cst.WithItem and node.asname is not None and name in target_names(node.asname.name):
            return None
    return values[0] if len(values) == 1 else None


def returned_factories(ctx, function: cst.FunctionDef) -> list[cst.Call]:
    """The factory calls without ``device=`` (or method chains on one that keep its device) whose
    results ``function`` returns: ``return torch.zeros(...)``, the elements of a returned tuple or
    list, and names bound once in the function to such a call, in source order."""
    found: list[cst.Call] = []
    for node in walk(function.body):
        if type(node) is not cst.Return or node.value is None:
            continue
        for item in returned_items(node):
            if type(item) is cst.Name:
                bound = _bound_once(function, item.value)
                if bound is None:
                    continue
                item = bound
            made = factory_root(ctx, item)
            if made is not None and not any(made is f for f in found):
                found.append(made)
    return found


def returned_items(ret: cst.Return) -> list[cst.BaseExpression]:
    """The values a ``return`` gives back: the elements of a returned tuple or list, else the value."""
    value = ret.value
    if value is None:
        return []
    if isinstance(value, (cst.Tuple, cst.List)):
        return [e.value for e in value.elements if type(e) is cst.Element]
    return [value]


def placing_tensor(ctx, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The tensor whose device ``expr`` is made on: ``w`` for ``w.new_zeros(...)``,
    ``torch.zeros_like(w)`` and ``torch.zeros(..., device=w.device)``; else ``None``."""
    if type(expr) is not cst.Call:
        return None
    func = expr.func
    if type(func) is cst.Attribute and func.attr.value in NEW_TENSOR_METHODS and torch_name(ctx, func) is None:
        return func.value
    name = torch_name(ctx, func)
    if name in LIKE_FACTORIES and expr.args and not expr.args[0].keyword and not expr.args[0].star:
        return expr.args[0].value if all(a.keyword is None or a.keyword.value != "device" for a in expr.args) \
            else None
    device = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "device"), None)
    if name in FACTORIES and type(device) is cst.Attribute and device.attr.value == "device":
        return device.value
    return None


def tested(function: cst.FunctionDef, name: str) -> bool:
    """True when ``function`` tests what ``name`` holds (``name is None``, ``isinstance(name, ...)``,
    ``if name:``, ``not name``, ``name or ...``): a path may have no tensor there."""
    for node in walk(function.body):
        if isinstance(node, cst.Comparison):
            sides = [node.left, *(c.comparator for c in node.comparisons)]
            if any(is_name(s, name) for s in sides) and any(is_name(s, "None") for s in sides):
                return True
        elif isinstance(node, cst.Call) and is_name(node.func, "isinstance") and node.args \
                and is_name(node.args[0].value, name):
            return True
        elif isinstance(node, (cst.If, cst.While, cst.IfExp)) and is_name(node.test, name):
            return True
        elif isinstance(node, cst.UnaryOperation) and type(node.operator) is cst.Not \
                and is_name(node.expression, name):
            return True
        elif isinstance(node, cst.BooleanOperation) and (is_name(node.left, name) or is_name(node.right, name)):
            return True
    return False
