"""An optimizer built, in each iteration of a loop, over leaf tensors made in that iteration.

``x = x0.clone().requires_grad_(); opt = optim.Adam([x]); loss(x).backward(); opt.step()`` in a
loop: every iteration back-propagates into new tensors whose ``.grad`` starts empty, so nothing
accumulates and no ``zero_grad()`` is needed. Only spellings that certainly make a new tensor
count: a torch factory, ``nn.Parameter(...)``, a ``clone()``/``detach()``, and
``.requires_grad_()`` on one of those (``t.requires_grad_()`` alone returns ``t`` itself, which
may carry the gradients of the last iteration). The parameters of a module constructed in the
iteration (``m = nn.Linear(...)``, ``m = Net(...)``: a class called, not a function that may
return a module it keeps) are new leaves too, taken as ``m.parameters()``,
``m.named_parameters()``, a comprehension or ``filter``/``list`` over those, or the ``.values()``
of a dict built from them.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.optimizer_owners import optimizer_params
from shapecheck.rules.helpers.calls import dotted_name, method_call, torch_name
from shapecheck.semantic.facts import MODULE
from shapecheck.semantic.syntax import target_names
from shapecheck.semantic.torch_api import FACTORIES, PARAMETER_CLASSES
from shapecheck.semantic.walk import walk

_COPIES = ("clone", "detach")


def _bindings(body: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """The values ``body`` binds ``name`` to with ``name = value`` (``None`` when it binds it in
    another way: a loop target, an augmented assignment, unpacking)."""
    found: list[cst.BaseExpression] = []
    for node in walk(body):
        if type(node) is cst.Assign:
            for t in node.targets:
                if dotted_name(t.target) == name:
                    found.append(node.value)
                elif name in target_names(t.target):
                    return []
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and name in target_names(node.target):
            return []
    return found


def _new_tensor(ctx, value: cst.BaseExpression) -> bool:
    """``value`` makes a new tensor: a torch factory, or a ``clone()``/``detach()`` of anything."""
    if type(value) is not cst.Call:
        return False
    name = torch_name(ctx, value.func)
    if name is not None:
        return name in FACTORIES
    call = method_call(value)
    return call is not None and call[1] in _COPIES


def _fresh_leaf(ctx, value: cst.BaseExpression) -> bool:
    """``value`` makes a new tensor (its ``.grad`` starts empty, whether it requires grad now or
    is marked later with ``t.requires_grad = True``)."""
    if type(value) is not cst.Call:
        return False
    if torch_name(ctx, value.func) in PARAMETER_CLASSES or _new_tensor(ctx, value):
        return True
    call = method_call(value)
    return call is not None and call[1] == "requires_grad_" and _new_tensor(ctx, call[0])


def _new_module(ctx, value: cst.BaseExpression) -> bool:
    """``value`` constructs a module: a call of the module class it makes (``nn.Linear(...)``, a
    class of the file), not of a function that returns one."""
    if type(value) is not cst.Call:
        return False
    made = ctx.fact(value)
    return made.kind == MODULE and made.qual is not None \
        and made.qual in (ctx.qualname(value.func), dotted_name(value.func))


def _module_made_in(ctx, body: cst.CSTNode, module: cst.BaseExpression) -> bool:
    """``module`` is a name bound in ``body`` only to new modules."""
    name = dotted_name(module)
    values = _bindings(body, name) if name is not None else []
    return bool(values) and all(_new_module(ctx, v) for v in values)


def _iterated(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """What ``expr`` takes its elements from: the iterable of a one-``for`` comprehension, the
    argument of ``list``/``tuple``/``iter``, the second of ``filter``; else ``None``."""
    if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        return expr.for_in.iter if expr.for_in.inner_for_in is None else None
    if type(expr) is cst.Call and not any(a.keyword is not None or a.star for a in expr.args):
        func = dotted_name(expr.func)
        if func in ("list", "tuple", "iter") and len(expr.args) == 1:
            return expr.args[0].value
        if func == "filter" and len(expr.args) == 2:
            return expr.args[1].value
    return None


def _module_params(ctx, body: cst.CSTNode, params: cst.BaseExpression) -> bool:
    """``params`` holds only parameters of modules constructed in ``body``."""
    inner = _iterated(params)
    if inner is not None:
        return _module_params(ctx, body, inner)
    call = method_call(params) if type(params) is cst.Call else None
    if call is not None and call[1] in ("parameters", "named_parameters"):
        return _module_made_in(ctx, body, call[0])
    if call is not None and call[1] == "values" and not params.args:  # type: ignore[attr-defined]
        return _module_params(ctx, body, call[0])
    name = dotted_name(params)
    values = _bindings(body, name) if name is not None else []
    return bool(values) and all(_iterated(v) is not None and _module_params(ctx, body, v) for v in values)


def _params_made_in(ctx, body: cst.CSTNode, params: cst.BaseExpression) -> bool:
    """Every tensor of the optimizer's ``params`` (a list or tuple of names, or one name) is
    bound in ``body`` to a new leaf only."""
    if isinstance(params, (cst.List, cst.Tuple)):
        items = [e.value for e in params.elements]
        return bool(items) and all(type(e) is not cst.StarredElement for e in params.elements) \
            and all(_params_made_in(ctx, body, item) for item in items)
    if _module_params(ctx, body, params):
        return True
    name = dotted_name(params)
    if name is None:
        return False
    values = _bindings(body, name)
    if len(values) == 1 and isinstance(values[0], (cst.List, cst.Tuple)):
        return _params_made_in(ctx, body, values[0])
    return bool(values) and all(_fresh_leaf(ctx, v) for v in values)


def fresh_optimizer(ctx, body: cst.CSTNode, optimizer: Optional[cst.BaseExpression]) -> bool:
    """``optimizer`` is bound in ``body`` (a loop's body) only to ``optim.X(params)`` with every
    tensor of ``params`` a new leaf made in ``body``: its gradients start empty each iteration."""
    name = dotted_name(optimizer) if optimizer is not None else None
    if name is None:
        return False
    values = _bindings(body, name)
    if not values:
        return False
    for value in values:
        params = optimizer_params(ctx, value)
        if params is None or not _params_made_in(ctx, body, params):
            return False
    return True
