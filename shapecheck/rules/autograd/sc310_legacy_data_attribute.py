"""SC310 legacy-data-attribute: `.data` on a tensor that requires grad, the legacy idiom (opt-in)."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.data_uses import (
    DETACH_SAFE,
    changes_values,
    cut_from_loss,
    graph_waiting,
    harmless_use,
    is_data_attr,
    requires_grad_evidence,
)
from shapecheck.rules.autograd.parameters import guessed_parameter
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.messages import short


@register
class LegacyDataAttribute(Rule):
    """SC310: `.data` on a tensor that requires grad, the legacy idiom (opt-in)."""
    code = "SC310"
    needs = ("data",)
    name = "legacy-data-attribute"
    severity = "warning"
    summary = "`.data` on a tensor that requires grad: the legacy idiom, without autograd's version check"
    default_enabled = False
    fixable = True
    doc = """\
## What it does
Flags `t.data` on a tensor that requires grad or a parameter (`self.weight.data`, `p.data`
for `p` in `model.parameters()`) where no autograd graph is known to be waiting for it: weight
initialisation (`m.bias.data.zero_()`), `reset_parameters`, fusing or merging weights, loading,
conversion, copies, updates after the backward pass. Opt-in: select `SC310` to modernise such
code. The change made where a graph can be waiting (inside `forward`, between a forward pass and
its `backward()`) is SC303, on by default. Metadata (`w.data.shape`,
`w.data.untyped_storage().data_ptr()`), a new tensor of its dtype and device
(`w.data.new_zeros(n)`, `torch.zeros_like(w.data)`), a storage swap (`w.data = new`), a gradient
(`p.grad.data`), a buffer (`register_buffer`) and an argument of a function of the run that only
reads it are never flagged.

## Why is this bad?
`.data` is the pre-0.4 way to step around autograd: it shares the storage but not the version
counter, so a change made through it (or through a tensor that shares it) is invisible to
autograd. Where no graph holds the tensor nothing goes wrong today; the code breaks silently the
day it runs between a forward pass and its backward. `torch.no_grad()` (to change) and
`.detach()` (to read) do the same with the check kept.

## Example
```python
def init_weights(m):
    m.weight.data.normal_(0.0, 0.02)
    m.bias.data.zero_()

values = w.data.numpy()
```

## Use instead
```python
@torch.no_grad()
def init_weights(m):
    m.weight.normal_(0.0, 0.02)
    m.bias.zero_()

values = w.detach().numpy()
```
The fix rewrites `t.data` to `t.detach()` where the value is only read and converted
(`.numpy()`, `.cpu()`, `.clone()`, `.tolist()`, `.item()`): the same values, and a later
in-place change of a shared result now makes autograd raise instead of computing a wrong
gradient. It is safe where `t` is known to be a tensor that requires grad, and unsafe
(`--unsafe-fixes`) where only a name says it is a parameter (`.weight`, a loop over
`.parameters()`): another object's `.data` has no `.detach()`.
"""
    valid = (
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w.mul_(0.5)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nv = w.detach().numpy()\n",
        "import torch\nclass Batch:\n    data = [1, 2]\nb = Batch()\nprint(b.data)\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nn = layer.weight.data.shape[0]\n"
        "layer.weight.data = torch.zeros(4, 3)\n",
        "import torch\ndef clear(model):\n    for p in model.parameters():\n        p.grad.data.zero_()\n",
        # a function of the file that only reads what it is given
        "import torch\ndef accuracy(output, target):\n    return (output.argmax(1) == target).float().mean()\n"
        "def check(x, y):\n    out = torch.nn.Linear(3, 7)(x)\n    return accuracy(out.data, y)\n",
        # a buffer called `weight` does not require grad
        "import torch\nimport torch.nn as nn\nclass Frozen(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.register_buffer('weight', torch.ones(n))\n"
        "    def reset(self):\n        self.weight.data.fill_(1.0)\n",
        # only the dtype, device or address of the tensor is used
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nz = torch.zeros_like(layer.weight.data)\n"
        "m = layer.weight.data.new_zeros(4)\n"
        "ptrs = {p.data.untyped_storage().data_ptr() for p in layer.parameters()}\n",
        # where a graph can be waiting, the change is SC303's
        "import torch\nimport torch.nn as nn\nclass Clipped(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.randn(3, 3))\n"
        "    def forward(self, x):\n        self.w.data.clamp_(-1, 1)\n        return x @ self.w\n",
    )
    invalid = (
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\nv = w.data.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\nv = w.detach().numpy()  # <--\n",
        ),
        "import torch\nw = torch.randn(3, requires_grad=True)\nw.data.mul_(0.5)  # <--\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nlayer.weight.data[0] = torch.zeros(3)  # <--\n",
        "import torch.nn as nn\ndef init_weights(m):\n    if isinstance(m, nn.Linear):\n"
        "        m.bias.data.zero_()  # <--\n",
        # a pure read: the message says it reads, never that it changes
        "import torch\nimport torch.nn as nn\ndef fuse(a, b):\n    merged = nn.Linear(3, 6)\n"
        "    w = torch.cat([a.weight.data, b.weight.detach()])  # <--\n    return merged, w\n",
        # a function of the file that changes what it is given in place
        "import torch\ndef scale(t):\n    t.mul_(2)\n    return t\n"
        "def check(x):\n    out = torch.nn.Linear(3, 7)(x)\n    return scale(out.data)  # <--\n",
        "import torch\ndef shrink(model):\n    for p in model.parameters():\n        p.data.mul_(0.9)  # <--\n",
        Example(
            "import torch\ndef snapshot(model):\n    for p in model.parameters():\n"
            "        print(p.data.clone())  # <--\n",
            unsafe_fixed="import torch\ndef snapshot(model):\n    for p in model.parameters():\n"
            "        print(p.detach().clone())  # <--\n",
        ),
    )

    def __init__(self) -> None:
        self._done: set[int] = set()
        self._graphs: dict = {}

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.data.numpy()`` and the other conversions of ``t.data``, with the ``.detach()`` fix."""
        call = method_call(node)
        if call is None or call[1] not in DETACH_SAFE or not is_data_attr(call[0]):
            return
        attr = call[0]
        assert type(attr) is cst.Attribute
        if not requires_grad_evidence(attr.value, ctx):
            return
        self._done.add(id(attr))
        # Safe where the facts show a tensor that requires grad; a parameter known only by its
        # name (`.weight`, a loop over `.parameters()`) may be something else with a `.data`
        # (a NumPy array's is a memoryview, with `.tolist()`), which has no `.detach()`.
        proven = ctx.fact(attr.value).requires_grad is True and not guessed_parameter(attr.value, ctx)
        fix = Fix(attr, cst.Call(func=cst.Attribute(value=attr.value, attr=cst.Name("detach"))), safe=proven)
        name = short(ctx, attr.value)
        ctx.report(
            attr,
            f"`{name}.data` reads `{name}` behind autograd's back (no version check); "
            f"use `{name}.detach()`",
            fix=fix,
        )

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """Any other ``t.data`` on a tensor that requires grad, unless SC303 reports it."""
        if node.attr.value != "data" or id(node) in self._done or harmless_use(node, ctx):
            return
        if not requires_grad_evidence(node.value, ctx):
            return
        name = short(ctx, node.value)
        if changes_values(node, ctx):
            if graph_waiting(node, ctx, self._graphs) is not None:
                return  # SC303's finding
            ctx.report(
                node,
                f"`{name}.data` changes `{name}` behind autograd's back (legacy idiom): no graph is "
                f"known to wait for `{name}` here, but the change skips the version check that "
                f"would catch one; change `{name}` under `torch.no_grad()`",
            )
            return
        if cut_from_loss(node, ctx, self._graphs) is not None:
            return  # SC303's finding
        ctx.report(
            node,
            f"`{name}.data` reads `{name}` without autograd's version check (legacy idiom); "
            f"`{name}.detach()` gives the same values and keeps the check",
        )
