"""SC301 inplace-on-leaf: in-place change of a leaf tensor that requires grad, outside
`torch.no_grad()`."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.layer_narrowing import narrowed_layer
from shapecheck.rules.autograd.inplace import augassign_target, inplace_call_targets, subscript_targets
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.scopes import grad_enabled
from shapecheck.semantic.facts import INT, LEAF_REQUIRES_GRAD
from shapecheck.semantic.inplace import view_base
from shapecheck.semantic.syntax import is_number

_LEAF_FIX_HINT = "do it under `with torch.no_grad():`, or work on a non-leaf copy"


@register
class InplaceOnLeaf(Rule):
    """SC301: in-place change of a leaf tensor that requires grad, outside `torch.no_grad()`."""
    code = "SC301"
    name = "inplace-on-leaf"
    severity = "error"
    summary = "in-place change of a leaf tensor that requires grad, outside `torch.no_grad()`"
    doc = """\
## What it does
Flags an in-place change of a leaf tensor that requires grad (`requires_grad=True`,
`nn.Parameter`, `.requires_grad_()`): every in-place method (`add_`, `mul_`, `zero_`,
`fill_`, `clamp_`, `relu_`, `copy_`, `normal_`, `masked_fill_`, `index_add_`, `scatter_`...),
augmented assignment (`w += 1`), item and slice assignment (`w[0] = 1`), `out=w`, and
`F.relu(w, inplace=True)`, when grad mode is on. Under `torch.no_grad()`,
`torch.inference_mode()`, `torch.set_grad_enabled(False)` and in functions decorated with them
it stays silent, and so it does for `nn.init.*_` functions. An in-place method on a slice of
such a leaf (`w[:, 0::2].copy_(...)`) is flagged too (a view of a leaf). Inside `if
isinstance(m, nn.Linear):` (the usual weight-init function run by `model.apply`), `m.weight` and
`m.bias` are parameters: `m.weight.normal_(0, 0.02)` is flagged, unless a `with torch.no_grad()`
block of the file names the function (its caller may run it with grad mode off). A file that
turns `requires_grad` off somewhere leaves parameters unknown wherever the freeze may already
have run, but a layer built in a function is new there until a statement that may freeze it
(see `shapecheck.semantic.freeze_flow`): a freeze after the write does not excuse it.

## Why is this bad?
Autograd accumulates the gradient of a leaf into `.grad`; it cannot record an in-place change
of the leaf itself, so torch raises `RuntimeError: a leaf Variable that requires grad is being
used in an in-place operation` (for `out=`: functions with out=... arguments don't support
automatic differentiation).

## Example
```python
w = torch.randn(3, requires_grad=True)
w.add_(1)                     # RuntimeError
```

## Use instead
```python
with torch.no_grad():         # an update that autograd must not see (init, SGD step)
    w.add_(1)
v = w + 1                     # or a new, non-leaf tensor that autograd tracks
```
"""
    valid = (
        # the caller turns grad mode off; `.data`; `nn.init`; the `else` of the test
        "import torch\nimport torch.nn as nn\ndef init_weights(m):\n    if isinstance(m, nn.Linear):\n"
        "        m.weight.normal_(mean=0.0, std=0.02)\nnet = nn.Sequential(nn.Linear(2, 2))\n"
        "with torch.no_grad():\n    net.apply(init_weights)\n",
        "import torch.nn as nn\ndef init_weights(m):\n    if isinstance(m, (nn.Linear, nn.Conv2d)):\n"
        "        m.weight.data.normal_(mean=0.0, std=0.02)\n        nn.init.zeros_(m.bias)\n",
        "import torch.nn as nn\ndef init_weights(m):\n    if isinstance(m, nn.Linear):\n        pass\n"
        "    else:\n        m.weight.fill_(1.0)\n",
        "import torch\nimport torch.nn as nn\nE = nn.Parameter(torch.zeros(6, 4))\nwith torch.no_grad():\n"
        "    E[:, 0::2].copy_(torch.ones(6, 2))\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w.add_(1)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.inference_mode():\n    w.zero_()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.set_grad_enabled(False):\n    w.mul_(2)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\ny.add_(1)\n",
        "import torch\nimport torch.nn as nn\nw = nn.Parameter(torch.empty(3, 3))\nnn.init.xavier_uniform_(w)\n",
        "import torch\n\n@torch.no_grad()\ndef reset(p):\n    p.zero_()\n\nw = torch.randn(3, requires_grad=True)\n"
        "reset(w)\n",
        "import torch\nx = torch.randn(3)\nx.add_(1)\nx[0] = 5.0\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nw = w + 1\nw.add_(1)\n",
        # frozen before the write: by the statement itself, by a method the constructor calls first
        "import torch.nn as nn\nclass T(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.pos = nn.Embedding(8, 4)\n        self.pos.weight.requires_grad = False\n"
        "        self.pos.weight[:, 0] = 1.0\n",
        "import torch.nn as nn\nclass T(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.pos = nn.Embedding(8, 4)\n        self.freeze()\n        self.fill(self.pos.weight)\n"
        "    def fill(self, out):\n        out[:, 0] = 1.0\n    def freeze(self):\n"
        "        for p in self.parameters():\n            p.requires_grad = False\n",
        "import torch.nn as nn\ndef build(freeze):\n    m = nn.Linear(2, 2)\n    for p in m.parameters():\n"
        "        p.requires_grad = False\n    m.weight.mul_(2)\n    n = nn.Linear(2, 2)\n    freeze(n)\n"
        "    n.weight.mul_(2)\n",
    )
    invalid = (
        # `isinstance` makes `m.weight` a parameter of an `nn.Linear`
        "import torch.nn as nn\ndef init_weights(m):\n    if isinstance(m, nn.Linear):\n"
        "        m.weight.normal_(mean=0.0, std=0.02)  # <--\nnet = nn.Sequential(nn.Linear(2, 2))\n"
        "net.apply(init_weights)\n",
        # the slices of a parameter written by one unpacking assignment
        "import torch\nimport torch.nn as nn\nE = nn.Parameter(torch.zeros(6, 4))\n"
        "E[:, 0::2], E[:, 1::2] = torch.zeros(6, 2), torch.ones(6, 2)  # <--\n",
        # a slice of a parameter is a view of a leaf
        "import torch\nimport torch.nn as nn\nE = nn.Parameter(torch.zeros(6, 4))\n"
        "E[:, 0::2].copy_(torch.ones(6, 2))  # <--\n",
        "import torch\nx = torch.tensor([1.0], requires_grad=True)\nx.add_(1)  # <--\n",
        "import torch\nx = torch.randn(10, requires_grad=True)\ny = x * x\nx.relu_()  # <--\nloss = y.sum()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nw += 1  # <--\n",
        "import torch\nimport torch.nn as nn\nw = nn.Parameter(torch.zeros(4))\nw[0] = 1.0  # <--\n",
        "import torch\nw = torch.zeros(2, requires_grad=True)\ntorch.add(torch.ones(2), 1, out=w)  # <--\n",
        "import torch\nw = torch.zeros(3).requires_grad_()\nw.uniform_(-1, 1)  # <--\n",
        # a freeze that runs after the write does not excuse it: the write raises first
        "import torch\nimport torch.nn as nn\nclass T(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(8, 4)\n        self.fill(self.pos.weight)\n"
        "    def fill(self, out):\n        out[:, 0::2] = torch.ones(8, 2)  # <--\n        out.requires_grad = False\n",
    )

    def _check(self, target: cst.BaseExpression, how: str, node: cst.CSTNode, ctx, view: bool = False) -> None:
        fact = ctx.fact(target)
        if grad_enabled(ctx, node) is not True:
            return
        layer = narrowed_layer(ctx, target) if fact.grad is None else None
        if fact.grad != LEAF_REQUIRES_GRAD and layer is None:
            return
        name = short(ctx, target)
        if layer is not None:
            ctx.report(
                node,
                f"{how} changes `{name}` in place, but `{short(ctx, target.value)}` is an `{layer}` here "  # type: ignore[attr-defined]
                f"(`isinstance`), so `{name}` is an `nn.Parameter`, a leaf tensor that requires grad: "
                f"torch raises RuntimeError (a leaf Variable that requires grad is being used in an "
                f"in-place operation); use `torch.nn.init` (`nn.init.normal_({name}, ...)`), or {_LEAF_FIX_HINT}",
            )
            return
        error = (
            "functions with out=... arguments don't support automatic differentiation"
            if how == "`out=`"
            else f"a {'view of a ' if view else ''}leaf Variable that requires grad is being used in an "
            "in-place operation"
        )
        ctx.report(
            node,
            f"{how} changes {'a slice of ' if view else ''}`{name}` in place, but `{name}` is a leaf tensor "
            f"that requires grad: "
            f"torch raises RuntimeError ({error}); {_LEAF_FIX_HINT}",
        )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """In-place calls (``w.add_()``, ``torch.relu_(w)``, ``inplace=True``, ``out=w``) on a leaf
        that requires grad."""
        for target, how in inplace_call_targets(ctx, node):
            base = view_base(target, lambda index: is_number(index) or ctx.fact(index).kind == INT)
            if base is not None and ctx.fact(base).grad == LEAF_REQUIRES_GRAD:
                self._check(base, how, node, ctx, view=True)
            else:
                self._check(target, how, node, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        """``w += 1`` on a leaf that requires grad."""
        op = ctx.source(node.operator).strip()
        self._check(augassign_target(node), f"`{op}`", node, ctx)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """``w[0] = 1`` on a leaf that requires grad."""
        for target in subscript_targets(node):
            self._check(target, "item assignment", node, ctx)
