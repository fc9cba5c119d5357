"""SC404 numpy-on-cuda: `.numpy()` on a CUDA tensor."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.device.placement import DEVICE_WORDS, known_device
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import CUDA, MAYBE_CUDA, TENSOR


@register
class NumpyOnCuda(Rule):
    """SC404: `.numpy()` on a CUDA tensor."""
    code = "SC404"
    needs = ("numpy",)
    name = "numpy-on-cuda"
    severity = "error"
    summary = "`.numpy()` on a CUDA tensor"
    fixable = True
    doc = """\
## What it does
Flags `t.numpy()` where `t` is known to live on CUDA (`.cuda()`, `.to("cuda")`,
`device="cuda"`), or on a `device` that is CUDA when available.

## Why is this bad?
A NumPy array lives in host memory and cannot view GPU memory: torch raises `TypeError: can't
convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory
first.`

## Example
```python
x = torch.randn(3).cuda()
a = x.numpy()                 # TypeError
```

## Use instead
```python
a = x.cpu().numpy()
```
The fix inserts `.cpu()` before `.numpy()`; on a CPU tensor `.cpu()` returns the tensor itself.
"""
    valid = (
        "import torch\nx = torch.randn(3).cuda()\na = x.cpu().numpy()\n",
        "import torch\nx = torch.randn(3)\na = x.numpy()\n",
        "import torch\nx = torch.randn(3).cuda()\nx = x.cpu()\na = x.numpy()\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 3).to('cuda')\ndef predict(x):\n"
        "    out = model(x.to('cuda'))\n    return out.detach().cpu().numpy()\n",
    )
    invalid = (
        Example(
            "import torch\nx = torch.randn(3).cuda()\na = x.numpy()  # <--\n",
            fixed="import torch\nx = torch.randn(3).cuda()\na = x.cpu().numpy()  # <--\n",
        ),
        Example(
            "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "x = torch.randn(3, device=device)\na = x.numpy()  # <--\n",
            fixed="import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "x = torch.randn(3, device=device)\na = x.cpu().numpy()  # <--\n",
        ),
        # a layer computes where its input is: the input was moved to CUDA
        Example(
            "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 3).to('cuda')\ndef predict(x):\n"
            "    x = x.to('cuda')\n    out = model(x)\n    return out.detach().numpy()  # <--\n",
            fixed="import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 3).to('cuda')\ndef predict(x):\n"
            "    x = x.to('cuda')\n    out = model(x)\n    return out.detach().cpu().numpy()  # <--\n",
        ),
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.numpy()`` on a tensor that lives on CUDA, or on CUDA when it is available."""
        call = method_call(node)
        if call is None or call[1] != "numpy" or node.args:
            return
        receiver = call[0]
        fact = ctx.fact(receiver)
        device = known_device(fact)
        if fact.kind != TENSOR or device not in (CUDA, MAYBE_CUDA):
            return
        moved = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("cpu")))
        fix = Fix(node.func, node.func.with_changes(value=moved))
        name = short(ctx, receiver)
        when = "" if device == CUDA else " when CUDA is available"
        ctx.report(
            node,
            f"`{name}` is on {DEVICE_WORDS[device]}, so `{name}.numpy()` raises TypeError{when} "
            f"(can't convert cuda:0 device type tensor to numpy); use `{name}.cpu().numpy()`",
            fix=fix,
        )
