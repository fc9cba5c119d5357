"""SC603 item-in-loop: `.item()` inside a loop forces a GPU synchronisation on every iteration."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.scopes import scope_of
from shapecheck.rules.pitfall.loop_iterations import loop_trains, retry_loop, under_modulo_guard
from shapecheck.semantic.facts import CPU, CUDA, TENSOR


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
Flags `.item()` called inside a `for` or `while` loop that trains (its body runs a backward
pass), on a tensor that is not known to live on the CPU, and inside any loop on a tensor known
to live on the GPU. A call under a logging guard (`if i % 100 == 0:`, `if step % log_every ==
0:`, `if i == 0 or (i + 1) % n == 0:`) runs on one iteration in many and is not flagged; neither
is a retry loop whose body ends in `return`, `break` or `raise` (it runs again only after a
`continue`, an out-of-memory retry with a smaller batch), nor a loop of library code that
evaluates or converts (no backward pass), nor an epoch loop that calls a training function or
holds the batch loop that trains (its own statements run once per epoch), on a tensor of unknown
device. Opt-in: a performance hint, not a bug.

## Why is this bad?
`.item()` copies the value to the host. For a CUDA tensor it waits until every queued kernel has
finished, so the GPU idles while Python catches up, once per iteration. A training loop that
logs `loss.item()` every step can run noticeably slower than one that accumulates on the device.

## Example
```python
total = 0.0
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss.item()      # host sync every step
```

## Use instead
```python
total = torch.zeros((), device=device)
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss.detach()    # stays on the device
print(total.item())           # one sync at the end
```
"""
    valid = (
        "import torch\nx = torch.randn(3)\nprint(x.sum().item())\n",
        # once per epoch, after the batch loop that trains
        "import torch.nn.functional as F\ndef train(model, opt, loader, epochs):\n    for epoch in range(epochs):\n"
        "        for x, y in loader:\n            loss = F.cross_entropy(model(x), y)\n"
        "            opt.zero_grad()\n            loss.backward()\n            opt.step()\n"
        "        print(epoch, loss.item())\n",
        "import torch\nfor i in range(3):\n    x = torch.randn(3)\n    print(x.sum().item())\n",
        "import torch\nlosses = []\nfor i in range(3):\n    losses.append(torch.randn(()).cuda())\n"
        "print(torch.stack(losses).mean().item())\n",
        # a logging guard: one iteration in a hundred
        "import torch\ndef train(model, loader, loss_fn, opt):\n    for i, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        if i % 100 == 0:\n            print(i, loss.item())\n",
        "import torch\ndef train(model, loader, loss_fn, opt, log_every):\n    for step, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        if (step + 1) % log_every == 0 and step > 0:\n            print(step, loss.item())\n",
        # the first step, then one in `log_every`
        "import torch\ndef train(model, loader, loss_fn, opt, log_every):\n    for i, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        if (i == 0) or ((i + 1) % log_every == 0):\n            print(i, loss.item())\n",
        # an out-of-memory retry: the body ends in `return`, it runs again only after `continue`
        "import torch\ndef warm_up(model, batch, opt, size):\n    while True:\n        try:\n"
        "            loss = model(batch[:size]).sum()\n            loss.backward()\n"
        "            if not torch.isfinite(loss).item():\n                raise RuntimeError('diverged')\n"
        "        except torch.cuda.OutOfMemoryError:\n            size //= 2\n            continue\n"
        "        opt.step()\n        return\n",
        # a tensor known to live on the CPU: no device to wait for
        "import torch\ndef train(model, loader, loss_fn, opt):\n    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        print(torch.tensor(x.shape).prod().item())\n",
        # library code: a loop that evaluates, with no backward pass and no step()
        "import torch\ndef accuracy(model, loader):\n    correct = 0\n    for x, y in loader:\n"
        "        correct += (model(x).argmax(1) == y).sum().item()\n    return correct\n",
    )
    invalid = (
        # gradient accumulation: the backward runs in the inner loop, the step in this one
        "def train(model, opt, batches, accumulate):\n    for i in range(1000):\n"
        "        for _ in range(accumulate):\n            loss = model(next(batches))\n"
        "            (loss / accumulate).backward()\n        print(i, loss.item())  # <--\n"
        "        opt.step()\n        opt.zero_grad()\n",
        "import torch\ndef train(model, loader, loss_fn, opt):\n    total = 0.0\n    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        total += loss.item()  # <--\n    return total\n",
        "import torch\nx = torch.randn(3).cuda()\nwhile True:\n    if x.sum().item() > 0:  # <--\n        break\n",
        # a guard that holds on most iterations is no logging guard
        "import torch\ndef train(model, loader, loss_fn, opt):\n    for i, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        if i % 100 != 0:\n            print(i, loss.item())  # <--\n",
        "import torch\ndef train(model, loader, loss_fn, opt, verbose):\n    for i, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        opt.step()\n"
        "        if (i == 0) or verbose:\n            print(i, loss.item())  # <--\n",
        # a loop that leaves only on a condition runs its body on every step
        "import torch\ndef train(model, batches, opt, max_steps):\n    step, total = 0, 0.0\n    while True:\n"
        "        loss = model(next(batches)).sum()\n        loss.backward()\n        opt.step()\n"
        "        total += loss.item()  # <--\n        step += 1\n        if step >= max_steps:\n            break\n"
        "    return total\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``.item()`` inside a training loop on a tensor not known to live on the CPU, or inside
        any loop on a tensor known to live on the GPU; not under a logging guard."""
        call = method_call(node)
        if call is None or call[1] != "item" or node.args:
            return
        loop = scope_of(ctx, node).loop
        if loop is None:
            return
        fact = ctx.fact(call[0])
        if fact.kind is not None and fact.kind != TENSOR:
            return
        if fact.device == CPU or under_modulo_guard(ctx) or retry_loop(loop):
            return
        if fact.device != CUDA and not loop_trains(ctx, loop):
            return
        ctx.report(
            node,
            f"`{short(ctx, node)}` inside a loop copies the value to the host on every "
            f"iteration; on a CUDA tensor each call waits for the GPU to finish; keep the "
            f"value on the device and call `.item()` once after the loop",
        )
