"""Calls that run a backward pass, and the words that show a file has one."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.helpers.calls import keyword, positional, torch_name
from shapecheck.semantic.backward_saves import BACKWARD_WORDS as SEMANTIC_BACKWARD_WORDS
from shapecheck.semantic.backward_targets import method_backward_start
from shapecheck.semantic.torch_api import BACKWARD_FUNCTIONS


def backward_root(ctx, node: cst.Call) -> Optional[cst.BaseExpression]:
    """The tensor a ``.backward()``/``torch.autograd.backward``/``autograd.grad`` call starts from
    (the loss of a wrapper's ``accelerator.backward(loss)``/``self.manual_backward(loss)``)."""
    name = torch_name(ctx, node.func)
    if name in BACKWARD_FUNCTIONS:
        args = positional(node)
        if args:
            return args[0]
        for kw in ("tensors", "outputs"):
            arg = keyword(node, kw)
            if arg is not None:
                return arg.value
        return None
    return method_backward_start(node, ctx.fact) if name is None else None


#: A backward pass is written `.backward(`, `torch.autograd.backward/grad` (however imported) or
#: reads `.grad`: the rules that need one skip files with none of these words.
BACKWARD_WORDS = SEMANTIC_BACKWARD_WORDS
