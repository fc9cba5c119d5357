"""Which expression a call passes to a parameter of the function it runs.

The walk of a function with the facts of its call sites (:mod:`shapecheck.engine.contexts`) knows
what its parameters hold; some rules also ask how the caller made the value: ``mse(out[:, None],
y)`` makes a column on purpose, ``mse(torch.tensor([[1.0], [2.0]]), y)`` does not.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.summaries import Callee

__all__ = ["passed_argument"]


def passed_argument(callee: Callee, call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    """The expression ``call`` passes to the parameter ``name`` of ``callee``, by position or by
    keyword; ``None`` when it passes none explicitly (a default) or the call unpacks ``*args`` or
    ``**kwargs``."""
    if any(a.star for a in call.args):
        return None
    params = list(callee.node.params.posonly_params) + list(callee.node.params.params)
    if callee.class_name is not None and not callee.is_static and params:
        params = params[1:]  # `self` is the receiver, not an argument
    positional = [a.value for a in call.args if a.keyword is None]
    for i, p in enumerate(params):
        if p.name.value == name:
            if i < len(positional):
                return positional[i]
            break
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
