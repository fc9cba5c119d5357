"""Which values come from an op that gives its input no useful gradient (the ``no_gradient_from``
fact): the ops of the torch table's ``NON_DIFFERENTIABLE_OPS`` (``argmax``/``argmin``/``argsort``,
boolean tests such as ``isnan``/``any``/``logical_and``, the step functions
``round``/``floor``/``ceil``/``trunc``/``sign``...), the indices of ``VALUES_INDICES_OPS``
(``max``/``min``/``topk``/``sort``/``cummax``...), and comparisons, directly or through the casts,
moves and views of :data:`KEEPING_METHODS`.

The evaluator settles the field on the fact of every expression it computes
(:func:`settle`): names and dotted names carry what their binding carries, so at ``if``/``try``
joins a value without gradient on one path only is unknown (the engine's join rule).
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from shapecheck.semantic.facts import NON_LEAF, Fact
from shapecheck.semantic.imports import torch_name
from shapecheck.semantic.syntax import dotted_name
from shapecheck.semantic.torch_api import CAST_METHODS, NON_DIFFERENTIABLE_OPS, VALUES_INDICES_OPS

#: tensor methods whose result keeps where its receiver's values came from: the casts, and the
#: moves and views this analysis follows
KEEPING_METHODS = CAST_METHODS.keys() | {
    "to", "type", "detach", "view", "reshape", "squeeze", "unsqueeze", "flatten", "cpu", "cuda", "clone",
}
_NAMED_METHODS = NON_DIFFERENTIABLE_OPS | KEEPING_METHODS
#: the words that name a new tensor copied out of the graph (``torch.tensor(loss)``)
DETACHED = "detached from the graph"
#: what ``.item()`` gives, whatever its receiver (a tensor or a NumPy value): a Python number
PYTHON_NUMBER = f"`.item()`, a Python number {DETACHED}"
#: reductions whose result has no gradient when their input has none (``(pred == y).float().mean()``)
_REDUCTIONS = frozenset({"sum", "mean"})
#: legacy constructors that copy Python numbers into a new tensor (``torch.Tensor([loss.item()])``)
_NUMBER_CONSTRUCTORS = frozenset({"Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor"})
_COMPARISON_OPERATORS = frozenset({cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                                   cst.GreaterThanEqual})


def _torch_name(ev: Any, expr: cst.BaseExpression) -> Optional[str]:
    return torch_name(ev.model.imports.resolve, expr)


def _index_pair_source(ev: Any, expr: cst.BaseExpression) -> Optional[str]:
    """``"the indices of `max`"`` for ``x.max(dim=1).indices`` or ``torch.topk(x, 3)[1]``."""
    if type(expr) is cst.Attribute and expr.attr.value == "indices":
        inner = expr.value
    elif (
        type(expr) is cst.Subscript
        and len(expr.slice) == 1
        and type(expr.slice[0].slice) is cst.Index
        and type(expr.slice[0].slice.value) is cst.Integer
        and expr.slice[0].slice.value.value == "1"
    ):
        inner = expr.value
    else:
        return None
    if type(inner) is not cst.Call or not inner.args:
        return None
    name = _torch_name(ev, inner.func)
    if name is not None:
        op: Optional[str] = name if "." not in name else None
    else:
        op = inner.func.attr.value if type(inner.func) is cst.Attribute else None
    if op in VALUES_INDICES_OPS:
        return f"the indices of `{op}`"
    return None


def no_gradient_source(ev: Any, expr: cst.BaseExpression) -> Optional[str]:
    """What made ``expr`` non-differentiable (``"`torch.argmax`"``), or ``None``. A name or
    dotted name answers what its binding carries."""
    while True:
        tp = type(expr)
        if tp is cst.Attribute or tp is cst.Subscript:
            index_pair = _index_pair_source(ev, expr)
            if index_pair is not None:
                return index_pair
        if tp is cst.Comparison:
            if any(type(t.operator) in _COMPARISON_OPERATORS for t in expr.comparisons):  # type: ignore[attr-defined]
                return "a comparison"
            return None
        if tp is cst.BinaryOperation:
            return _arithmetic_source(ev, expr)  # type: ignore[arg-type]
        if tp is cst.UnaryOperation and type(expr.operator) is cst.Minus:  # type: ignore[attr-defined]
            expr = expr.expression  # type: ignore[attr-defined]
            continue
        if tp is cst.Call:
            func = expr.func  # type: ignore[attr-defined]
            detached = _detached_copy(ev, expr)  # type: ignore[arg-type]
            if detached is not None:
                return detached
            if _torch_name(ev, func) in _REDUCTIONS:
                if not expr.args or expr.args[0].keyword is not None:  # type: ignore[attr-defined]
                    return None
                expr = expr.args[0].value  # type: ignore[attr-defined]
                continue
            if type(func) is cst.Attribute and func.attr.value in _REDUCTIONS:
                expr = func.value
                continue
            if type(func) is cst.Attribute and func.attr.value == "item" and not expr.args:  # type: ignore[attr-defined]
                return PYTHON_NUMBER
            if type(func) is cst.Attribute and func.attr.value not in _NAMED_METHODS:
                return None  # neither such a method nor `torch.<such an op>`
            name = _torch_name(ev, func)
            if name is not None:
                return f"`torch.{name}`" if "." not in name and name in NON_DIFFERENTIABLE_OPS else None
            if type(func) is not cst.Attribute:
                return None
            method = func.attr.value
            if method in NON_DIFFERENTIABLE_OPS:
                return f"`.{method}()`"
            if method in KEEPING_METHODS:
                expr = func.value
                continue
            return None
        if tp is cst.Name or tp is cst.Attribute:
            dotted = dotted_name(expr)
            if dotted is None:
                return None
            bound = ev.model.env.get(dotted)
            return bound.no_gradient_from if bound is not None else None
        return None


def _arithmetic_source(ev: Any, expr: cst.BinaryOperation) -> Optional[str]:
    """``1 - acc``, ``acc * 100``, ``wrong_a + wrong_b``: what made the operands non-differentiable,
    when every operand that is not a number literal is."""
    numbers = [type(side) is cst.Integer or type(side) is cst.Float for side in (expr.left, expr.right)]
    sources = [None if number else no_gradient_source(ev, side)
               for side, number in zip((expr.left, expr.right), numbers)]
    if all(src is not None or number for src, number in zip(sources, numbers)) and not all(numbers):
        return next(src for src in sources if src is not None)
    return None


def _detached_copy(ev: Any, call: cst.Call) -> Optional[str]:
    """``torch.tensor(loss)``, ``torch.tensor(loss.item())``, ``torch.Tensor([loss.item()])``:
    a new tensor copied from a value computed in the graph (a tensor that requires grad as a
    result of ops, or a Python number taken out of one), cut from that graph."""
    name = _torch_name(ev, call.func)
    if name not in _NUMBER_CONSTRUCTORS and name != "tensor":
        return None
    args = [a.value for a in call.args if a.keyword is None]
    if len(args) != 1:
        return None
    data = args[0]
    if name == "tensor" and _in_graph(ev, data):
        return f"`torch.tensor(...)`, a copy {DETACHED}"
    items = [e.value for e in data.elements] if isinstance(data, (cst.List, cst.Tuple)) else [data] \
        if name == "tensor" else []
    if items and all(_number_from_graph(ev, item) for item in items):
        return f"`torch.{name}(...)`, a copy of Python numbers {DETACHED}"
    return None


def _in_graph(ev: Any, expr: cst.BaseExpression) -> bool:
    """``expr`` is a tensor computed by ops from a tensor that requires grad."""
    return ev.fact(expr).grad == NON_LEAF


def _number_from_graph(ev: Any, expr: cst.BaseExpression) -> bool:
    """``loss.item()``, ``float(loss)``: a Python number taken out of a tensor of the graph (or
    out of anything by ``.item()``), or a name bound to one."""
    if type(expr) is cst.Name:
        bound = ev.model.env.get(expr.value)
        return bound is not None and bound.no_gradient_from == PYTHON_NUMBER
    if type(expr) is not cst.Call or len(expr.args) > 1:
        return False
    func = expr.func
    if type(func) is cst.Attribute and func.attr.value == "item" and not expr.args:
        return True  # a Python number: the copy has no history, whatever the number came from
    if type(func) is cst.Attribute and func.attr.value == "tolist" and not expr.args:
        return _in_graph(ev, func.value)
    if type(func) is cst.Name and func.value == "float" and len(expr.args) == 1:
        return _in_graph(ev, expr.args[0].value)
    return False


def settle(ev: Any, expr: cst.CSTNode, f: Fact) -> Fact:
    """``f`` (the fact of ``expr``) with ``no_gradient_from`` set to what ``expr`` says."""
    tp = type(expr)
    if tp is cst.Name:
        return f  # the binding's fact carries the field
    if tp is cst.Call or tp is cst.Attribute or tp is cst.Subscript or tp is cst.Comparison \
            or tp is cst.BinaryOperation or tp is cst.UnaryOperation:
        source = no_gradient_source(ev, expr)  # type: ignore[arg-type]
    else:
        source = None
    if f.no_gradient_from != source:
        return f.with_(no_gradient_from=source)
    return f
