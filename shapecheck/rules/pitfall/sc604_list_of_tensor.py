"""SC604 list-of-tensor: `list(t)` on a 1-D tensor gives 0-dim tensors, not numbers."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import tensor_fact


@register
class ListOfTensor(Rule):
    """SC604: `list(t)` on a 1-D tensor gives 0-dim tensors, not numbers."""
    code = "SC604"
    needs = ("list",)
    name = "list-of-tensor"
    severity = "warning"
    summary = "`list(t)` on a 1-D tensor gives 0-dim tensors, not numbers"
    doc = """\
## What it does
Flags `list(t)` where `t` is a tensor known to be 1-D.

## Why is this bad?
`list()` iterates over the first dim, so a 1-D tensor becomes a list of 0-dim tensors
(`[tensor(1), tensor(2)]`), not of Python numbers. Each element still carries a device, a dtype
and an autograd history; comparing, hashing, printing or JSON-encoding them behaves differently
from numbers, and building the list is slow.

## Example
```python
t = torch.tensor([1, 2, 3])
ids = list(t)                 # [tensor(1), tensor(2), tensor(3)]
```

## Use instead
```python
ids = t.tolist()              # [1, 2, 3]
rows = t.unbind(0)            # when you do want tensors
```
"""
    valid = (
        "import torch\nt = torch.tensor([1, 2, 3])\nids = t.tolist()\n",
        "import torch\nt = torch.randn(2, 3)\nrows = list(t)\n",
        "import torch\nshape = list(torch.randn(2, 3).shape)\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nparts = list(t.split(1))\n",
    )
    invalid = (
        "import torch\nt = torch.tensor([1, 2, 3])\nids = list(t)  # <--\n",
        "import torch\nids = list(torch.arange(5))  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``list(t)`` on a 1-D tensor."""
        if not (isinstance(node.func, cst.Name) and node.func.value == "list"):
            return
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        if ctx.qualname(node.func) not in (None, "list"):
            return
        target = node.args[0].value
        fact = tensor_fact(ctx, target)
        if fact is None or fact.shape is None or fact.shape.rank != 1:
            return
        ctx.report(
            node,
            f"`list({short(ctx, target)})` turns a 1-D tensor into a list of 0-dim tensors, not "
            f"Python numbers; use `{short(ctx, target)}.tolist()` for numbers "
            f"(or `.unbind(0)` when you want tensors)",
        )
