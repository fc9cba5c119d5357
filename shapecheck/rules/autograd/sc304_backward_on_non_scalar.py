"""SC304 backward-on-non-scalar: `backward()` without a gradient on a tensor with more than one
element."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_calls import BACKWARD_WORDS
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.element_count import several_elements
from shapecheck.rules.helpers.tensors import tensor_fact


@register
class BackwardOnNonScalar(Rule):
    """SC304: `backward()` without a gradient on a tensor with more than one element."""
    code = "SC304"
    needs = BACKWARD_WORDS
    name = "backward-on-non-scalar"
    severity = "error"
    summary = "`backward()` without a gradient on a tensor with more than one element"
    doc = """\
## What it does
Flags `y.backward()` (and `torch.autograd.backward(y)`, `torch.autograd.grad(y, x)`) without a
gradient argument, when `y` is known to hold more than one element.

## Why is this bad?
Without a gradient, autograd assumes `dy = 1`, which only makes sense for a single number. For
anything else it raises `RuntimeError: grad can be implicitly created only for scalar outputs`.

## Example
```python
x = torch.randn(3, requires_grad=True)
y = x * 2
y.backward()                  # RuntimeError
```

## Use instead
```python
y.sum().backward()                    # reduce to a scalar loss
y.backward(torch.ones_like(y))        # or pass the vector of dy
```
"""
    valid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones_like(y))\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(gradient=torch.ones(3))\n",
        "import torch\nx = torch.randn(1, requires_grad=True)\ny = x * 2\ny.backward()\n",
        "import torch\ndef step(loss):\n    loss.backward()\n",
        # the default reduction of a loss gives a 0-dim tensor
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    loss.backward()\n",
        # evidence of a tensor, but not of its rank: one element is possible
        "def step(out):\n    out = out.contiguous()\n    out.backward()\n",
    )
    invalid = (
        "import torch\ny = torch.tensor([1., 2., 3.], requires_grad=True)\ny.backward()  # <--\n",
        "import torch\nx = torch.randn(4, 2, requires_grad=True)\nout = x.mean(dim=1)\nout.backward()  # <--\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ntorch.autograd.backward(y)  # <--\n",
        # `output` is the prediction F.nll_loss takes: at least one dim, more than one element
        # unless that dim is 1
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    output.backward()  # <--\n",
        "def step(x):\n    y = x.permute(0, 2, 1)\n    y.backward()  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``y.backward()``, ``torch.autograd.backward(y)`` and ``autograd.grad(y, x)`` without a
        gradient, on a tensor of more than one element."""
        name = torch_name(ctx, node.func)
        if name in ("autograd.backward", "autograd.grad"):
            args = positional(node)
            given = len(args) >= (2 if name == "autograd.backward" else 3) or keyword(
                node, "grad_tensors" if name == "autograd.backward" else "grad_outputs"
            )
            root = args[0] if args else None
        else:
            call = method_call(node)
            if name is not None or call is None or call[1] != "backward":
                return
            given = bool(positional(node)) or keyword(node, "gradient")
            root = call[0]
        if given or root is None:
            return
        fact = tensor_fact(ctx, root)
        name = short(ctx, root)
        found = several_elements(fact, name) if fact is not None else None
        if found is None:
            return
        described, condition = found
        unless = f" unless {condition}" if condition is not None else ""
        ctx.report(
            node,
            f"`{short(ctx, node)}` without a gradient, but `{name}` has {described}: "
            f"autograd raises RuntimeError{unless} (grad can be implicitly created only for scalar "
            f"outputs); reduce it first (`.sum()`, `.mean()`) or pass `gradient=`",
            condition=condition,
        )
