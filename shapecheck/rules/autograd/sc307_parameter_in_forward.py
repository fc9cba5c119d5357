"""SC307 parameter-in-forward: a parameter or `requires_grad=True` tensor created inside `forward`."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import is_name, keyword, torch_name
from shapecheck.rules.helpers.scopes import scope_of
from shapecheck.semantic.torch_api import FACTORIES, PARAMETER_CLASSES


@register
class ParameterInForward(Rule):
    """SC307: a parameter or `requires_grad=True` tensor created inside `forward`."""
    code = "SC307"
    needs = ("requires_grad", "Parameter")
    name = "parameter-in-forward"
    severity = "error"
    summary = "a parameter or `requires_grad=True` tensor created inside `forward`"
    doc = """\
## What it does
Flags `nn.Parameter(...)` and factories with `requires_grad=True` inside the `forward` method
of an `nn.Module` subclass.

## Why is this bad?
`forward` runs on every call: the tensor is a fresh leaf each time, initialised anew, and it is
not registered when the optimizer is built from `model.parameters()`. It never trains, and
`model.to(device)` does not move it.

## Example
```python
class Net(nn.Module):
    def forward(self, x):
        w = torch.randn(x.shape[-1], 4, requires_grad=True)   # new every call
        return x @ w
```

## Use instead
```python
class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 4))
    def forward(self, x):
        return x @ self.w
```
"""
    valid = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(3, 4))\n    def forward(self, x):\n        return x @ self.w\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x @ torch.randn(3, 4)\n",
        "import torch\nclass Helper:\n    def forward(self, x):\n        w = torch.randn(3, requires_grad=True)\n"
        "        return x * w\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        w = torch.randn(3, 4, requires_grad=True)  # <--\n        return x @ w\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        self.scale = nn.Parameter(torch.ones(1))  # <--\n        return x * self.scale\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``nn.Parameter(...)`` or a factory with ``requires_grad=True`` inside ``forward`` of an
        ``nn.Module``."""
        name = torch_name(ctx, node.func)
        if name is None:
            return
        if name in PARAMETER_CLASSES:
            what = "`nn.Parameter(...)`"
        elif name in FACTORIES:
            rg = keyword(node, "requires_grad")
            if rg is None or not is_name(rg.value, "True"):
                return
            what = f"`torch.{name}(..., requires_grad=True)`"
        else:
            return
        scope = scope_of(ctx, node)
        if scope.function is None or scope.function.name.value != "forward" or not scope.module_class:
            return
        cls = scope.class_def.name.value if scope.class_def is not None else "the module"
        ctx.report(
            node,
            f"{what} inside `{cls}.forward` makes a new leaf tensor on every call: it is not a "
            f"registered parameter, so the optimizer never updates it and `.to(device)` never "
            f"moves it; create it once in `__init__` as `nn.Parameter`",
        )
