"""SC302 inplace-on-saved-tensor: a tensor that autograd saved for backward is changed in place before
`backward()`."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_calls import BACKWARD_WORDS, backward_root
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short


@register
class InplaceOnSavedTensor(Rule):
    """SC302: a tensor that autograd saved for backward is changed in place before `backward()`."""
    code = "SC302"
    needs = BACKWARD_WORDS
    name = "inplace-on-saved-tensor"
    severity = "error"
    summary = "a tensor that autograd saved for backward is changed in place before `backward()`"
    doc = """\
## What it does
Flags an in-place change (`y.add_(1)`, `y += 1`, `y[0] = 0`, `out=y`) of a tensor that an
earlier op saved for its backward pass, when a `backward()` (or `torch.autograd.grad`) through
that op follows in the same function. Which ops save what is read from torch: `exp`, `sigmoid`,
`tanh`, `relu`, `sqrt`, `softmax` save their output; `mul`, `div`, `matmul`, `pow`, `log`,
`sin` save inputs (`x * w` saves `w` when `x` requires grad, and `x` when `w` does); `add`,
`sub` and a product with a Python number save nothing, and are not flagged. A change made on one
path only (one branch of an `if`, a loop body that may not run, a `try` body that may stop early)
is not flagged.

## Why is this bad?
Every tensor has a version counter that in-place ops bump. At `backward()`, autograd checks that
each saved tensor still has the version it had when it was saved, and raises `RuntimeError: one
of the variables needed for gradient computation has been modified by an inplace operation`.

## Example
```python
x = torch.randn(3, requires_grad=True)
y = x.exp()                   # exp saves its output y
y.add_(1)
y.sum().backward()            # RuntimeError
```

## Use instead
```python
y = x.exp()
y = y + 1                     # a new tensor; the saved one is untouched
y.sum().backward()
```
"""
    valid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny = y + 1\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 1\ny = h * 2\nh.add_(1)\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x + 1\ny.add_(1)\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.sum().backward()\ny.add_(1)\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = x.exp()\ny.add_(1)\n"
        "z = (x * 2).sum()\nz.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\nz = x.sin().sum()\ny.add_(1)\n"
        "z.backward()\n",
        # changed on one path only: unknown at the join, never flagged
        "import torch\ndef f(flag):\n    x = torch.randn(3, requires_grad=True)\n    y = x.exp()\n    if flag:\n"
        "        y.add_(1)\n    y.sum().backward()\n",
    )
    invalid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)  # <--\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nc = torch.randn(3)\ny = x * c\nc.mul_(0)  # <--\n"
        "y.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = torch.sigmoid(x)\nloss = (h * 2).sum()\n"
        "h[0] = 0.0  # <--\nloss.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.randn(3)\nz = x @ y\ny += 1  # <--\n"
        "z.backward()\n",
    )

    def __init__(self) -> None:
        self._reported: set[int] = set()

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """A backward call reports the saved tensors of its graph changed in place before it (the
        model keeps what each op saved, and the changes, statement by statement)."""
        root = backward_root(ctx, node)
        if root is None:
            return
        for record, changed in ctx.changed_saves(root):
            if id(changed) in self._reported:
                continue
            self._reported.add(id(changed))
            what = "its output" if record.role == "result" else f"`{record.binding[0]}`"
            ctx.report(
                changed,
                f"`{record.binding[0]}` is changed in place here, but `{record.op}` saved "
                f"{what} for backward: `{short(ctx, node)}` then raises RuntimeError (one of "
                f"the variables needed for gradient computation has been modified by an "
                f"inplace operation); assign a new tensor instead (`{record.binding[0]} = ...`)",
            )
