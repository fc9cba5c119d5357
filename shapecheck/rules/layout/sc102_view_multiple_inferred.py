"""SC102 view-multiple-inferred: `view`/`reshape` with more than one `-1`."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.layout.view_calls import call_text, negative_view_size, view_request


@register
class ViewMultipleInferred(Rule):
    """SC102: `view`/`reshape` with more than one `-1`."""
    code = "SC102"
    name = "view-multiple-inferred"
    severity = "error"
    summary = "`view`/`reshape` with more than one `-1`"
    doc = """\
## What it does
Flags `view(...)` and `reshape(...)` calls that pass `-1` for more than one dimension.

## Why is this bad?
`-1` asks torch to infer that one size from the element count; with two unknowns the answer is
not unique, and torch raises `RuntimeError: only one dimension can be inferred`.

## Example
```python
x = torch.arange(12)
y = x.view(-1, -1)     # RuntimeError
```

## Use instead
```python
y = x.view(3, -1)      # give every size but one
```
"""
    valid = (
        "import torch\nx = torch.arange(12)\ny = x.view(3, -1)\n",
        "import torch\nx = torch.arange(12)\ny = x.reshape(-1)\n",
        "def f(x, n):\n    return x.view(n, -1)\n",
    )
    invalid = (
        "import torch\nx = torch.arange(12)\ny = x.view(-1, -1)  # <--\n",
        "import torch\nx = torch.arange(12)\ny = x.reshape((-1, 2, -1))  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``view``/``reshape`` with two or more ``-1``."""
        request = view_request(node, ctx)
        if request is None:
            return
        method, recv, target = request
        count = sum(1 for d in target if d == -1)
        torch_stops_first = (method == "view" or recv.kind == "tensor") and \
            negative_view_size(target) is not None
        if count > 1 and not torch_stops_first:  # else SC103 reports the size torch rejects first
            ctx.report(
                node,
                f"`{call_text(ctx, node, method, target)}` passes -1 for {count} dims; torch can infer "
                f"only one size and raises `only one dimension can be inferred`",
            )
