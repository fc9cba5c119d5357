"""NumPy functions given a list of tensors that require grad: ``np.sum([a, b], 0)``.

NumPy turns a list into an array element by element, through each tensor's ``__array__``
(``Tensor.numpy()``), which raises on a tensor that requires grad (verified on torch 2.13 for
``sum``, ``mean``, ``max``, ``stack``, ``concatenate``). The list is a literal, or a local list made
from a list display (``[]``, ``[t]``) that only ``append`` changes, with a tensor that requires grad
among the first elements or appended on every pass.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import positional
from shapecheck.rules.pitfall.appended_lists import local_append, only_extended, plain_append

#: NumPy functions that convert a list argument into one array
LIST_READERS = frozenset({
    "numpy.sum", "numpy.mean", "numpy.max", "numpy.min", "numpy.prod", "numpy.std", "numpy.var",
    "numpy.average", "numpy.median", "numpy.stack", "numpy.vstack", "numpy.hstack", "numpy.concatenate",
    "numpy.array", "numpy.asarray",
})


class GradAppends:
    """The appends of tensors that require grad seen so far, per function and list name."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, str], list[cst.Call]] = {}
        #: per list display ``[a, b]`` assigned to a name: an element that requires grad
        self._first: dict[int, cst.BaseExpression] = {}

    def record_display(self, node: cst.Assign, ctx) -> None:
        """Remember ``xs = [t, ...]`` when ``t`` requires grad (its fact here, before later rebindings)."""
        value = node.value
        if type(value) is not cst.List or ctx.function is None:
            return
        for e in value.elements:
            fact = ctx.fact(e.value)
            if fact.is_tensor and fact.requires_grad is True:
                self._first[id(value)] = e.value
                return

    def record(self, node: cst.Call, ctx) -> None:
        """Remember ``xs.append(t)`` in a function when ``t`` requires grad."""
        append = local_append(node, ctx)
        if append is None:
            return
        fact = ctx.fact(append[1])
        if fact.is_tensor and fact.requires_grad is True:
            self._seen.setdefault((id(ctx.function), append[0]), []).append(node)

    def grad_item(self, arg: cst.BaseExpression, ctx) -> Optional[cst.BaseExpression]:
        """A tensor that requires grad which the list ``arg`` holds, when it surely holds one."""
        if isinstance(arg, (cst.List, cst.Tuple)):
            for e in arg.elements:
                if type(e) is cst.Element:
                    fact = ctx.fact(e.value)
                    if fact.is_tensor and fact.requires_grad is True:
                        return e.value
            return None
        if type(arg) is not cst.Name or ctx.function is None:
            return None
        made = only_extended(ctx.function, arg.value)
        if made is None:
            return None
        first = self._first.get(id(made))
        if first is not None:
            return first
        appends = self._seen.get((id(ctx.function), arg.value), [])
        for append in appends:
            if plain_append(ctx.function, append):
                return append.args[0].value
        return None


def list_argument(node: cst.Call, ctx) -> Optional[cst.BaseExpression]:
    """The list argument of a NumPy function of :data:`LIST_READERS`, else ``None``."""
    if ctx.qualname(node.func) not in LIST_READERS:
        return None
    args = positional(node)
    return args[0] if args and isinstance(args[0], (cst.List, cst.Tuple, cst.Name)) else None
