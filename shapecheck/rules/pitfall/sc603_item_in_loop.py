"""SC603 item-in-loop: `.item()` inside a loop forces a GPU synchronisation on every iteration."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.scopes import scope_of
from shapecheck.semantic.facts import CPU, TENSOR


@register
class ItemInLoop(Rule):
    """SC603: `.item()` inside a loop forces a GPU synchronisation on every iteration."""
    code = "SC603"
    name = "item-in-loop"
    severity = "warning"
    summary = "`.item()` inside a loop forces a GPU synchronisation on every iteration"
    default_enabled = False
    doc = """\
## What it does
Flags `.item()` called inside a `for` or `while` loop on a tensor that is not known to live
on the CPU. Opt-in: a performance hint, not a bug.

## Why is this bad?
`.item()` copies the value to the host. For a CUDA tensor it waits until every queued kernel has
finished, so the GPU idles while Python catches up, once per iteration. A training loop that
logs `loss.item()` every step can run noticeably slower than one that accumulates on the device.

## Example
```python
total = 0.0
for x, y in loader:
    loss = loss_fn(model(x), y)
    total += loss.item()      # host sync every step
```

## Use instead
```python
total = torch.zeros((), device=device)
for x, y in loader:
    loss = loss_fn(model(x), y)
    total += loss.detach()    # stays on the device
print(total.item())           # one sync at the end
```
"""
    valid = (
        "import torch\nx = torch.randn(3)\nprint(x.sum().item())\n",
        "import torch\nfor i in range(3):\n    x = torch.randn(3)\n    print(x.sum().item())\n",
        "import torch\nlosses = []\nfor i in range(3):\n    losses.append(torch.randn(()).cuda())\n"
        "print(torch.stack(losses).mean().item())\n",
    )
    invalid = (
        "import torch\ndef train(model, loader, loss_fn):\n    total = 0.0\n    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n        total += loss.item()  # <--\n    return total\n",
        "import torch\nx = torch.randn(3).cuda()\nwhile True:\n    if x.sum().item() > 0:  # <--\n        break\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``.item()`` inside a loop, on a tensor not known to live on the CPU."""
        call = method_call(node)
        if call is None or call[1] != "item" or node.args:
            return
        if scope_of(ctx, node).loop is None:
            return
        fact = ctx.fact(call[0])
        if fact.kind is not None and fact.kind != TENSOR:
            return
        if fact.device == CPU:
            return
        ctx.report(
            node,
            f"`{short(ctx, node)}` inside a loop copies the value to the host on every "
            f"iteration; on a CUDA tensor each call waits for the GPU to finish; keep the "
            f"value on the device and call `.item()` once after the loop",
        )
