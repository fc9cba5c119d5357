"""SC401 cross-device-operation: tensors (or a module and its input) on different devices meet in one
op."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.device.operands import same_device_operands
from shapecheck.rules.device.placement import DEVICE_WORDS, known_device
from shapecheck.rules.helpers.calls import positional
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import CPU, CUDA, MAYBE_CUDA, MODULE, TENSOR, Fact


def _conflict(a: str, b: str) -> Optional[str]:
    """``"always"``, ``"when CUDA is available"``, or ``None`` when the devices can agree."""
    if a == b or {a, b} == {CUDA, MAYBE_CUDA}:
        return None
    if MAYBE_CUDA in (a, b):
        return "when CUDA is available" if CPU in (a, b) else "always"
    return "always"


def _when(when: str) -> str:
    """`` when CUDA is available`` for messages; nothing for a failure on every machine."""
    return "" if when == "always" else f" {when}"


def _multi_dim_cpu(fact: Fact) -> bool:
    """A CPU tensor that is surely not 0-dim (0-dim CPU tensors mix with CUDA ones legally)."""
    return (
        fact.kind == TENSOR
        and not fact.is_scalar_cpu
        and fact.shape is not None
        and fact.shape.rank is not None
        and fact.shape.rank >= 1
    )


@register
class CrossDeviceOperation(Rule):
    """SC401: tensors (or a module and its input) on different devices meet in one op."""
    code = "SC401"
    name = "cross-device-operation"
    severity = "error"
    summary = "tensors (or a module and its input) on different devices meet in one op"
    doc = """\
## What it does
Flags two tensors known to live on different devices meeting in an arithmetic operator,
a torch function (`torch.cat`, `torch.stack`, `torch.matmul`, `torch.where`...) or a method
(`x.add(y)`), and a module moved with `.cuda()`/`.to(device)` called on a tensor left on the
CPU. A `device` chosen with `torch.device("cuda" if torch.cuda.is_available() else "cpu")` may
be CUDA: a tensor moved there that meets a fresh CPU tensor fails when CUDA is available.
0-dim CPU tensors and Python numbers mix with CUDA tensors legally and are not flagged.

## Why is this bad?
Kernels run on one device; torch does not copy operands for you and raises
`RuntimeError: Expected all tensors to be on the same device`. Code developed on a laptop
without a GPU passes every test and then fails on the first GPU machine.

## Example
```python
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(device)
x = torch.randn(8, 4)
out = model(x)                # fails on a GPU machine
```

## Use instead
```python
x = torch.randn(8, 4, device=device)
out = model(x)
```
"""
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.randn(3).to(device)\ny = torch.randn(3, device=device)\nz = x + y\n",
        "import torch\nx = torch.randn(3).cuda()\ns = torch.randn(5).sum()\nz = x * s\n",
        "import torch\nx = torch.randn(3).cuda()\nz = x * 2.0 + torch.tensor(1.0)\n",
        "import torch\nx = torch.randn(3).cuda()\ny = torch.zeros(3, device=x.device)\nz = x + y\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nmodel.cuda()\n"
        "out = model(torch.randn(8, 4).cuda())\n",
        "import torch\nx = torch.randn(3).cuda()\ny = torch.randn(3)\nz = x + y.cuda()\n",
    )
    invalid = (
        "import torch\nx = torch.tensor([1.0])\ny = torch.tensor([2.0]).cuda()\nz = x + y  # <--\n",
        "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nx = torch.randn(8, 4)\nout = model(x)  # <--\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nmodel.cuda()\n"
        "out = model(torch.randn(8, 4))  # <--\n",
        "import torch\na = torch.ones(2, 3).cuda()\nb = torch.ones(2, 3)\nc = torch.cat([a, b])  # <--\n",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Operators between tensors on different devices."""
        self._check(node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Torch functions and methods on tensors of different devices, and a module called on an
        input on another device."""
        if self._check(node, ctx):
            return
        callee = ctx.fact(node.func)
        args = positional(node)
        if callee.kind != MODULE or not args:
            return
        module_device = known_device(callee)
        if module_device is None:
            return
        if module_device == CPU and not (callee.qual or "").startswith("torch.nn."):
            return  # `forward` of a class of this file may move its input to the CPU itself
        for arg in args:
            fact = ctx.fact(arg)
            device = known_device(fact)
            if fact.kind != TENSOR or device is None:
                continue
            cpu_side = fact if device == CPU else None
            when = _conflict(module_device, device)
            if when is None or (cpu_side is not None and not _multi_dim_cpu(cpu_side)):
                continue
            module = short(ctx, node.func)
            ctx.report(
                node,
                f"module `{module}` is on {DEVICE_WORDS[module_device]} but its input "
                f"`{short(ctx, arg)}` is on {DEVICE_WORDS[device]}: the call raises RuntimeError "
                f"(Expected all tensors to be on the same device){_when(when)}; move the input "
                f"with `.to(device)`",
            )
            return

    def _check(self, node: cst.CSTNode, ctx) -> bool:
        found = same_device_operands(ctx, node)
        if found is None:
            return False
        what, operands = found
        placed = []
        for operand in operands:
            fact = ctx.fact(operand)
            device = known_device(fact)
            if fact.kind == TENSOR and device is not None:
                placed.append((operand, fact, device))
        for i, (a, fa, da) in enumerate(placed):
            for b, fb, db in placed[i + 1:]:
                when = _conflict(da, db)
                if when is None:
                    continue
                if (da == CPU and not _multi_dim_cpu(fa)) or (db == CPU and not _multi_dim_cpu(fb)):
                    continue
                ctx.report(
                    node,
                    f"`{short(ctx, a)}` is on {DEVICE_WORDS[da]} and `{short(ctx, b)}` is on "
                    f"{DEVICE_WORDS[db]}: `{what}` raises RuntimeError (Expected all tensors to be on "
                    f"the same device){_when(when)}; move one with "
                    f"`.to({short(ctx, b if da == CPU else a)}.device)`",
                )
                return True
        return True
