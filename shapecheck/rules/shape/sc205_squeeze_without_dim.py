"""SC205 squeeze-without-dim: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import TENSOR
from shapecheck.shapes import is_generic


@register
class SqueezeWithoutDim(Rule):
    """SC205: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""
    code = "SC205"
    name = "squeeze-without-dim"
    severity = "warning"
    summary = "`squeeze()` without a dim drops every size-1 axis, the batch axis too"
    default_enabled = False
    doc = """\
## What it does
Flags `x.squeeze()` and `torch.squeeze(x)` called without a `dim`, unless the tensor's shape is
known and has no size-1 axis. Opt-in: select `SC205` to enable it.

## Why is this bad?
Without a dim, `squeeze` removes every axis of size 1. Code written for a `(batch, 1)` tensor
silently gets a 0-d tensor when the batch has one element, and later shape logic breaks (or,
worse, broadcasts) only on that input.

## Example
```python
logits = model(x)          # (batch, 1)
probs = logits.squeeze()   # (batch,), but () when batch == 1
```

## Use instead
```python
probs = logits.squeeze(-1)
```
"""
    valid = (
        "import torch\nx = torch.randn(8, 1)\ny = x.squeeze(-1)\n",
        "import torch\nx = torch.randn(8, 3)\ny = x.squeeze()\n",
        "import numpy as np\ndef f(a):\n    return np.squeeze(a)\n",
    )
    invalid = (
        "def f(logits):\n    return logits.squeeze()  # <--\n",
        "import torch\nx = torch.randn(8, 1)\ny = torch.squeeze(x)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``x.squeeze()`` and ``torch.squeeze(x)`` without a dim."""
        func = node.func
        qual = ctx.qualname(func)
        if qual == "torch.squeeze":
            if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
                return
            target = node.args[0].value
        elif qual is None and type(func) is cst.Attribute and func.attr.value == "squeeze" and not node.args:
            target = func.value
        else:
            return
        f = ctx.fact(target)
        if f.kind not in (TENSOR, None):
            return
        if f.shape is not None and f.shape.rank is not None and all(
                isinstance(d, int) and d != 1 or isinstance(d, str) and not is_generic(d) for d in f.shape.dims):
            return
        ctx.report(node, f"`{short(ctx, node)}` drops every size-1 axis, including a batch of one; "
                         f"pass the dim to squeeze")
