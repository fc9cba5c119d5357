"""SC309 numpy-on-grad-tensor: `.numpy()` on a tensor that requires grad."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.parameters import guessed_parameter
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import tensor_fact


@register
class NumpyOnGradTensor(Rule):
    """SC309: `.numpy()` on a tensor that requires grad."""
    code = "SC309"
    needs = ("numpy",)
    name = "numpy-on-grad-tensor"
    severity = "error"
    summary = "`.numpy()` on a tensor that requires grad"
    fixable = True
    doc = """\
## What it does
Flags `t.numpy()` where `t` requires grad: a leaf created with `requires_grad=True` or an
`nn.Parameter` (even under `torch.no_grad()`), or a result computed from one with grad mode on.

## Why is this bad?
A NumPy array cannot carry an autograd history, and torch refuses to drop it silently:
`RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy()
instead.`

## Example
```python
w = torch.randn(3, requires_grad=True)
a = (w * 2).numpy()           # RuntimeError
```

## Use instead
```python
a = (w * 2).detach().numpy()
```
The fix inserts `.detach()` before `.numpy()`: safe, since the call raised before, and on a
tensor that does not require grad `.detach().numpy()` gives the same array. It is unsafe (`--unsafe-fixes`) on the
variable of a loop over `.parameters()` of an object not known to be a module.
"""
    valid = (
        "import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().numpy()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = w * 2\na = y.numpy()\n",
        "import torch\nx = torch.randn(3)\na = x.numpy()\n",
        # F.nll_loss of a tensor whose grad is unknown: whether the loss requires grad is unknown
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    value = loss.numpy()\n",
        "import torch\nimport torch.nn.functional as F\nw = torch.randn(3, 3, requires_grad=True)\n"
        "def predict(x):\n    with torch.no_grad():\n        y = F.linear(x, w)\n    return y.numpy()\n",
    )
    invalid = (
        # F.linear takes a tensor: `x` is one, and the result requires grad through `w`
        Example(
            "import torch\nimport torch.nn.functional as F\nw = torch.randn(3, 3, requires_grad=True)\n"
            "def predict(x):\n    return F.linear(x, w).numpy()  # <--\n",
            fixed="import torch\nimport torch.nn.functional as F\nw = torch.randn(3, 3, requires_grad=True)\n"
            "def predict(x):\n    return F.linear(x, w).detach().numpy()  # <--\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\na = w.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().numpy()  # <--\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\na = y.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\na = y.detach().numpy()  # <--\n",
        ),
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.numpy()`` on a tensor that requires grad."""
        call = method_call(node)
        if call is None or call[1] != "numpy" or node.args:
            return
        receiver = call[0]
        fact = tensor_fact(ctx, receiver)
        if fact is None or fact.requires_grad is not True:
            return
        detached = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("detach")))
        # Unsafe on a loop over `.parameters()` of an object not known to be a module: another
        # library's tensor may have `.numpy()` and no `.detach()`.
        fix = Fix(node.func, node.func.with_changes(value=detached),
                  safe=not guessed_parameter(receiver, ctx))
        name = short(ctx, receiver)
        ctx.report(
            node,
            f"`{name}` requires grad, so `{name}.numpy()` raises RuntimeError (Can't call "
            f"numpy() on Tensor that requires grad); use `{name}.detach().numpy()`",
            fix=fix,
        )
