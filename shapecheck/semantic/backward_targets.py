"""Which tensor a method spelled ``.backward(...)`` back-propagates from.

``loss.backward()`` starts from ``loss``. Training libraries wrap it in a method of the same name
that takes the loss: ``accelerator.backward(loss)``, ``fabric.backward(loss)``, Lightning's
``self.manual_backward(loss)``. A ``.backward(...)`` given a positional argument is read as such a
wrapper, and the pass starts from that argument, unless its receiver is known to be a tensor whose
grad state is known (``y.backward(gradient)`` on a computed ``y``). Tensor-ness read from the uses
of a name alone does not do: ``accelerator.pad_across_processes(t, dim=1)`` looks like a tensor's.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.semantic.syntax import positional

#: methods that back-propagate from their first argument (Lightning's manual optimisation)
WRAPPER_ONLY = ("manual_backward",)


def method_backward_start(call: cst.Call, fact: Callable[[cst.BaseExpression], Fact]) -> Optional[cst.BaseExpression]:
    """The tensor the method call ``call`` back-propagates from: the receiver of
    ``t.backward(...)`` (a receiver of unknown kind when it is a call's result, or when nothing is
    passed), the argument of a wrapper's ``w.backward(loss)`` or ``self.manual_backward(loss)``;
    ``None`` when ``call`` is no such method call."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    args = positional(call)
    if func.attr.value in WRAPPER_ONLY:
        return args[0] if args else None
    if func.attr.value != "backward":
        return None
    receiver = fact(func.value)
    if not args or (receiver.kind == TENSOR and receiver.grad is not None):
        return func.value
    if type(func.value) is cst.Call:
        return func.value  # `Fn.apply(x).backward(grad)`: a wrapper is an object, not a call's result
    return args[0]

