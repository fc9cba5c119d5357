"""The dims a reduction's ``dim`` argument may hold when it is a name or an attribute that the
code only ever sets from int literals.

Library code passes the reduced dims through a local (``dim = (1, 2, 3) if self.channels_last
else (2, 3, 4)``) or an attribute set in ``__init__`` (``self.spatial_dim = (1, 2)``). Every
assignment the function (for a local) or the class (for ``self.<attr>``) makes is read; each
must be an int, a tuple or list of ints, or a conditional expression of such values. The
result lists every value the dim may hold; control flow is not guessed, so a rule that reads it
must hold for each of them.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.rebinding import rebound_names
from shapecheck.semantic.eval.registry import Eval
from shapecheck.semantic.syntax import all_params, int_literal, self_attribute_targets, target_names, with_targets
from shapecheck.semantic.walk import walk

__all__ = ["dim_choices"]

Choice = tuple[int, ...]


def _literal_choices(expr: cst.BaseExpression) -> Optional[list[Choice]]:
    """The values of an int, a tuple/list of ints, or ``a if c else b`` of such values."""
    if type(expr) is cst.IfExp:
        body, orelse = _literal_choices(expr.body), _literal_choices(expr.orelse)
        if body is None or orelse is None:
            return None
        return body + [c for c in orelse if c not in body]
    if isinstance(expr, (cst.Tuple, cst.List)):
        if not expr.elements or any(type(e) is cst.StarredElement for e in expr.elements):
            return None
        vals = [int_literal(e.value) for e in expr.elements]
        if any(v is None for v in vals):
            return None
        return [tuple(v for v in vals if v is not None)]
    one = int_literal(expr)
    return [(one,)] if one is not None else None


def _merge(choices: list[Choice], more: Optional[list[Choice]]) -> Optional[list[Choice]]:
    if more is None:
        return None
    return choices + [c for c in more if c not in choices]


def _local_choices(func: cst.FunctionDef, name: str) -> Optional[list[Choice]]:
    """Every value the local ``name`` of ``func`` is assigned, when each assignment is a plain
    ``name = <literal choice>`` and ``name`` is not a parameter."""
    if any(p.name.value == name for p in all_params(func.params)):
        return None
    choices: list[Choice] = []
    for node in walk(func.body, into_defs=True):
        if type(node) is cst.Assign:
            hits = [t for t in node.targets if name in target_names(t.target)]
            if not hits:
                continue
            if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
                return None
            found = _merge(choices, _literal_choices(node.value))
            if found is None:
                return None
            choices = found
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)) \
                and name in target_names(node.target):
            return None
        elif any(name in target_names(t) for t in with_targets(node)):
            return None
        elif isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return None
    return choices or None


def _attribute_choices(class_def: cst.ClassDef, attr: str) -> Optional[list[Choice]]:
    """Every value ``self.<attr>`` is assigned in the methods of ``class_def`` (and its body),
    when each is a plain assignment of a literal choice and nothing else may set it."""
    choices: list[Choice] = []
    for stmt in class_def.body.body:
        if type(stmt) is cst.FunctionDef:
            params = all_params(stmt.params)
            self_name = params[0].name.value if params else None
            for node in walk(stmt.body, into_defs=True):
                if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "setattr":
                    return None
                if self_name is None:
                    continue
                if type(node) is cst.Assign:
                    if not any(attr in self_attribute_targets(t.target, self_name) for t in node.targets):
                        continue
                    target = node.targets[0].target
                    if len(node.targets) != 1 or type(target) is not cst.Attribute:
                        return None
                    found = _merge(choices, _literal_choices(node.value))
                    if found is None:
                        return None
                    choices = found
                elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) \
                        and attr in self_attribute_targets(node.target, self_name):
                    return None
        elif type(stmt) is cst.SimpleStatementLine:
            for small in stmt.body:
                if type(small) is cst.Assign and any(attr in target_names(t.target) for t in small.targets):
                    found = _merge(choices, _literal_choices(small.value) if len(small.targets) == 1 else None)
                    if found is None:
                        return None
                    choices = found
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)) and attr in target_names(small.target):
                    return None
    return choices or None


#: id of a function -> (the function, the parameter, the values its calls pass it or None)
_PASSED: dict[int, tuple[cst.FunctionDef, str, Optional[list[Choice]]]] = {}


def _parameter_choices(ev: Eval, func: cst.FunctionDef, name: str) -> Optional[list[Choice]]:
    """Every value the parameter ``name`` of the module-level function ``func`` gets from the
    calls of this file, when the function is only ever called by its name (never passed on as a
    value), at least once, the function never rebinds ``name``, and each call passes it a literal
    choice, or leaves it to a literal default."""
    defs, tree = ev.model.callees, ev.model.tree
    if defs is None or tree is None or defs.functions.get(func.name.value) is not func \
            or name in rebound_names(func):
        return None
    cached = _PASSED.get(id(func))
    if cached is not None and cached[0] is func and cached[1] == name:
        return cached[2]
    found = _passed_values(tree, func, name)
    if len(_PASSED) > 256:
        _PASSED.clear()
    _PASSED[id(func)] = (func, name, found)
    return found


def _passed_values(tree: cst.Module, func: cst.FunctionDef, name: str) -> Optional[list[Choice]]:
    """The literal choices the calls of ``func`` in ``tree`` pass its parameter ``name``."""
    params = func.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    param = next((p for p in all_params(params) if p.name.value == name), None)
    if param is None or params.star_kwarg is not None and name not in positional:
        return None
    index = positional.index(name) if name in positional else None
    callee = func.name.value
    calls: set[int] = set()
    choices: list[Choice] = []
    for node in walk(tree, into_defs=True):
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == callee:
            calls.add(id(node.func))
            value = _argument(node, name, index, param.default)
            found = _merge(choices, _literal_choices(value)) if value is not None else None
            if found is None:
                return None
            choices = found
    for node in walk(tree, into_defs=True):
        if type(node) is cst.Name and node.value == callee and id(node) not in calls and node is not func.name:
            return None  # passed on, rebound or imported under that name: other calls may exist
    return choices or None


def _argument(call: cst.Call, name: str, index: Optional[int],
              default: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """What ``call`` passes the parameter ``name`` (at position ``index``): its argument, the
    default when it passes none, ``None`` when starred arguments hide it."""
    if any(a.star for a in call.args):
        return None
    for position, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
        if arg.keyword is None and position == index:
            return arg.value
    return default


def dim_choices(ev: Eval, dim_expr: cst.BaseExpression) -> Optional[list[Choice]]:
    """Every value a ``dim`` argument may hold, when it is a local of the function being analysed
    or ``self.<attr>`` of its class that the code only ever sets from int literals (conditional
    expressions give each branch's value); ``None`` when unknown."""
    func = ev.model.scopes.analysed_function()
    if func is None:
        return None
    if type(dim_expr) is cst.Name:
        if any(p.name.value == dim_expr.value for p in all_params(func.params)):
            return _parameter_choices(ev, func, dim_expr.value)
        return _local_choices(func, dim_expr.value)
    if type(dim_expr) is cst.Attribute and type(dim_expr.value) is cst.Name:
        params = all_params(func.params)
        class_def = ev.model.class_def
        if class_def is None or not params or params[0].name.value != dim_expr.value.value or func.decorators:
            return None
        return _attribute_choices(class_def, dim_expr.attr.value)
    return None
