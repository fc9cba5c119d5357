"""A loss copied into a new tensor: ``torch.tensor(l1 + l2, requires_grad=True)``.

``torch.tensor(data)`` always copies its data into a fresh leaf with no history (torch warns
to use ``clone().detach()``), and so do the legacy ``torch.Tensor([...])`` constructors of a
list (``torch.Tensor(loss)`` of a tensor is an alias that keeps the history). With
``requires_grad=True`` the copy's ``backward()`` runs without error and fills the ``.grad`` of
that copy only: no gradient reaches the model that computed the loss. A loss here is the result
of a loss function (``F.mse_loss(...)``) or of an ``nn.*Loss`` instance, or the number
``.item()`` takes out of one, written in the call or bound to a name on every path. Any
computed data counts when the copy asks for ``requires_grad=True``: a leaf whose own
``backward()`` runs gets the gradient 1 and passes nothing on.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.loss_calls import loss_prediction
from shapecheck.rules.autograd.returns import return_values
from shapecheck.rules.helpers.calls import is_name, keyword, positional, torch_name
from shapecheck.rules.helpers.held_values import held_values

#: constructors that copy their data into a new tensor with no history
_COPYING = frozenset({"tensor", "Tensor", "FloatTensor", "DoubleTensor"})
#: methods that pass a tensor's history on (the result of a history-less leaf has none either)
_PASSING = frozenset({"to", "cuda", "cpu", "float", "double", "requires_grad_"})
#: the operators that combine losses into one
_COMBINING = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)


def _leaves(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of a sum or product of terms (``l1 + 0.5 * l2`` gives ``l1``, ``0.5``, ``l2``)."""
    if type(expr) is cst.BinaryOperation and isinstance(expr.operator, _COMBINING):
        return _leaves(expr.left) + _leaves(expr.right)
    return [expr]


def _is_loss(ctx, expr: cst.BaseExpression) -> bool:
    """``expr`` is a loss call or a Python number taken out of one (``l.item()``, ``float(l)``),
    or a name bound to such a value on every path here."""
    values = held_values(ctx, expr)
    return bool(values) and all(type(v) is cst.Call and _loss_value(ctx, v) for v in values)


def _loss_value(ctx, call: cst.Call) -> bool:
    """``call`` computes a loss, or takes the number out of one (``loss.item()``, ``float(loss)``)."""
    if loss_prediction(ctx, call) is not None:
        return True
    func = call.func
    if type(func) is cst.Attribute and func.attr.value == "item" and not call.args:
        return _is_loss(ctx, func.value)
    if type(func) is cst.Name and func.value == "float" and len(call.args) == 1 \
            and ctx.qualname(func) in (None, "float"):
        return _is_loss(ctx, call.args[0].value)
    return False


def copied_loss(ctx, root: cst.BaseExpression) -> Optional[tuple[cst.Call, cst.BaseExpression]]:
    """``(copy, loss)`` when ``root`` (the receiver of ``backward()``) is ``torch.tensor(...)`` of
    data that holds a loss (or a name bound to that call on every path here)."""
    call = _the_call(ctx, root)
    return _copy_of(ctx, call, local=True) if call is not None else None


def _the_call(ctx, root: cst.BaseExpression) -> Optional[cst.Call]:
    """``root`` when it is a call, or the one call a name ``root`` is bound to on every path here."""
    values = held_values(ctx, root)
    return values[0] if len(values) == 1 and type(values[0]) is cst.Call else None


def returned_copy(ctx, root: cst.BaseExpression) -> Optional[tuple[cst.Call, cst.BaseExpression, cst.Call]]:
    """``(copy, data, call)`` when ``root`` (the receiver of ``backward()``, or a name bound to it on
    every path here) is ``call``, a call of a function of this file whose every ``return`` gives
    a new leaf made to take a gradient from data it computed (``return torch.tensor(total,
    requires_grad=True)``); ``copy`` is the first of them."""
    call = _the_call(ctx, root)
    fn = ctx.local_callee(call) if call is not None else None
    if call is None or fn is None:
        return None
    returned = return_values(fn)
    if not returned or any(type(r) is not cst.Call for r in returned):
        return None
    copies = [_copy_of(ctx, r, local=False) for r in returned]  # type: ignore[arg-type]
    first = copies[0]
    if first is None or any(c is None for c in copies):
        return None
    return first[0], first[1], call


def _copy_of(ctx, copy: cst.Call, local: bool) -> Optional[tuple[cst.Call, cst.BaseExpression]]:
    """``(copy, loss)`` when ``copy`` is a copying constructor of data that holds a loss (only
    with ``local``: its names are bound in the scope of the hook) or of computed data with
    ``requires_grad=True``."""
    asked = False  # `.requires_grad_()` on the copy
    while type(copy.func) is cst.Attribute and copy.func.attr.value in _PASSING and torch_name(ctx, copy.func) is None \
            and type(copy.func.value) is cst.Call:
        asked = asked or copy.func.attr.value == "requires_grad_"
        copy = copy.func.value  # `torch.tensor(...).to(device)`: a copy of the copy
    if torch_name(ctx, copy.func) not in _COPYING:
        return None
    args = positional(copy)
    if len(args) != 1:
        return None
    data = args[0]
    if torch_name(ctx, copy.func) != "tensor" and not isinstance(data, (cst.List, cst.Tuple)):
        return None  # `torch.Tensor(loss)` of a tensor is an alias that keeps its history
    items = [e.value for e in data.elements] if isinstance(data, (cst.List, cst.Tuple)) else [data]
    for item in items if local else ():
        for leaf in _leaves(item):
            if _is_loss(ctx, leaf):
                return copy, leaf
    flag = keyword(copy, "requires_grad")
    if (asked or flag is not None and is_name(flag.value, "True")) and _computed(data):
        return copy, data  # a leaf made to take a gradient, from values the code computed
    return None


def _computed(data: cst.BaseExpression) -> bool:
    """``data`` reads a name or calls something (it is not a literal)."""
    stack: list[cst.CSTNode] = [data]
    while stack:
        node = stack.pop()
        if type(node) is cst.Name and node.value not in ("True", "False", "None"):
            return True
        if type(node) is cst.Call:
            return True
        stack.extend(node.children)
    return False
