"""SC602 item-on-non-scalar: `.item()`, `float()` or `int()` on a tensor with more than one element."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import method_call, positional
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import multi_element, tensor_fact


def _numel_words(fact) -> str:
    """``"6 elements"`` when the count is known, else ``"more than one element"``."""
    n = fact.shape.numel() if fact.shape is not None else None
    if n is not None and n.bit_length() <= 64:
        return f"{n} elements"
    return "more than one element (or none)"


@register
class ItemOnNonScalar(Rule):
    """SC602: `.item()`, `float()` or `int()` on a tensor with more than one element."""
    code = "SC602"
    name = "item-on-non-scalar"
    severity = "error"
    summary = "`.item()`, `float()` or `int()` on a tensor with more than one element"
    doc = """\
## What it does
Flags `t.item()`, `float(t)` and `int(t)` where `t` is a tensor known to hold more than one
element.

## Why is this bad?
They convert a one-element tensor to a Python number. On any other tensor they raise
`RuntimeError: a Tensor with 6 elements cannot be converted to Scalar`.

## Example
```python
x = torch.randn(2, 3)
value = x.item()              # RuntimeError
```

## Use instead
```python
value = x[0, 0].item()        # pick one element
values = x.tolist()           # or convert them all
total = x.sum().item()        # or reduce first
```
"""
    valid = (
        "import torch\nx = torch.randn(2, 3)\nv = x.sum().item()\n",
        "import torch\nx = torch.randn(2, 3)\nv = x[0, 0].item()\n",
        "import torch\nx = torch.tensor([3.14])\nv = x.item()\n",
        "import torch\nx = torch.randn(2, 3)\nvalues = x.tolist()\n",
        "import torch\nx = torch.randn(1, 1)\nv = float(x)\n",
        "import numpy as np\na = np.zeros(3)\nv = a.item(0)\n",
    )
    invalid = (
        "import torch\nx = torch.randn(2, 3)\nv = x.item()  # <--\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nv = t.item()  # <--\n",
        "import torch\nx = torch.ones(4)\nv = float(x)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.item()``, ``float(t)`` and ``int(t)`` on a tensor of more than one element."""
        target: Optional[cst.BaseExpression] = None
        call = method_call(node)
        if call is not None and call[1] == "item" and not node.args:
            target, how = call[0], "`.item()`"
        elif isinstance(node.func, cst.Name) and node.func.value in ("float", "int"):
            args = positional(node)
            if len(args) == 1 and len(node.args) == 1:
                target, how = args[0], f"`{node.func.value}()`"
        if target is None:
            return
        fact = tensor_fact(ctx, target)
        if fact is None:
            return
        described = multi_element(fact)
        if described is None:
            return
        ctx.report(
            node,
            f"{how} on `{short(ctx, target)}`, a tensor of {described}, raises RuntimeError "
            f"(a Tensor with {_numel_words(fact)} cannot be converted to Scalar); index one "
            f"element, reduce first, or use `.tolist()`",
        )
