"""Values of unknown kind that the code declares to be Python numbers, and the names a function
binds again.

``def f(x, eps=1e-6)`` says by its default that ``eps`` is a number, and so does an ``__init__``
that sets ``self.eps = eps`` (or ``= 1e-6``) and a class body's ``eps = 1e-6``, when nothing
else in the class assigns it. Only the rules about a reduction kept through arithmetic read this
(``torch.sum(x ** 2, 1) + eps`` is still that reduction): a caller that passes a tensor there is
outside what the function was written for.
"""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.syntax import (
    all_params, dotted_name, is_number, self_attribute_targets, target_names,
)
from shapecheck.semantic.walk import walk
from shapecheck.semantic.node_memo import NodeMemo

__all__ = ["declared_number"]

_CLASS_NUMBERS: NodeMemo[frozenset[str]] = NodeMemo()


def number_param(func: cst.FunctionDef, name: str) -> bool:
    """``name`` is a parameter of ``func`` with a number literal default that the body never
    binds again."""
    for p in all_params(func.params):
        if p.name.value == name:
            return p.default is not None and is_number(p.default) and name not in rebound_names(func)
    return False


def _method_assignments(func: cst.FunctionDef) -> tuple[dict[str, bool], set[str]]:
    """For one method: each ``self.<attr>`` it assigns, with whether every assignment gives a
    number (a literal, or a parameter of the method with a number default); and the attributes
    it may change in other ways (augmented assignment, tuple targets, ``setattr``)."""
    params = all_params(func.params)
    if not params:
        return {}, set()
    self_name = params[0].name.value
    numbers: dict[str, bool] = {}
    other: set[str] = set()
    for node in walk(func.body, into_defs=True):
        if type(node) is cst.Assign:
            for t in node.targets:
                if type(t.target) is cst.Attribute:
                    for attr in self_attribute_targets(t.target, self_name):
                        value = node.value
                        ok = is_number(value) or (type(value) is cst.Name and func.name.value == "__init__"
                                                   and number_param(func, value.value))
                        numbers[attr] = numbers.get(attr, True) and ok
                else:
                    other.update(self_attribute_targets(t.target, self_name))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            other.update(self_attribute_targets(node.target, self_name))
        elif type(node) is cst.Call and dotted_name(node.func) in ("setattr", "object.__setattr__"):
            other.add("*")
    return numbers, other


def class_numbers(class_def: cst.ClassDef) -> frozenset[str]:
    """The attributes of instances of ``class_def`` that only ever hold a number: set in the
    class body or in ``__init__`` from number literals or number-default parameters of
    ``__init__``, and assigned nowhere else in the class."""
    cached = _CLASS_NUMBERS.get(class_def)
    if cached is not None:
        return cached
    numbers: dict[str, bool] = {}
    other: set[str] = set()
    for stmt in class_def.body.body:
        if type(stmt) is cst.FunctionDef:
            found, changed = _method_assignments(stmt)
            for attr, ok in found.items():
                numbers[attr] = numbers.get(attr, True) and ok and stmt.name.value == "__init__"
            other |= changed
        elif type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Assign and len(small.targets) == 1 \
                        and type(small.targets[0].target) is cst.Name:
                    attr = small.targets[0].target.value
                    numbers[attr] = numbers.get(attr, True) and is_number(small.value)
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign, cst.Assign)):
                    for t in ([small.target] if not isinstance(small, cst.Assign)
                              else [t.target for t in small.targets]):
                        other.update(target_names(t))
    found_set = frozenset(a for a, ok in numbers.items() if ok and a not in other) if "*" not in other \
        else frozenset()
    return _CLASS_NUMBERS.put(class_def, found_set)


def declared_number(ev: Eval, expr: cst.BaseExpression) -> bool:
    """True when ``expr``, whose kind is unknown, is declared a number by the code: a parameter
    of the function being analysed with a number default, or ``self.<attr>`` of a class whose
    instances only ever hold a number there (see the module docstring)."""
    func = ev.model.scopes.analysed_function()
    if func is None:
        return False
    if type(expr) is cst.Name:
        return number_param(func, expr.value)
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
        class_def = ev.model.class_def
        params = all_params(func.params)
        if class_def is None or not params or params[0].name.value != expr.value.value \
                or func.decorators:
            return False
        return expr.attr.value in class_numbers(class_def)
    return False
