"""SC307 parameter-in-forward: a parameter or `requires_grad=True` tensor created inside `forward`."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.running_totals import added_into
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name, is_name, keyword, torch_name
from shapecheck.rules.helpers.name_uses import read_only_as
from shapecheck.rules.helpers.scopes import scope_of
from shapecheck.semantic.facts import MODULE
from shapecheck.semantic.torch_api import FACTORIES, PARAMETER_CLASSES


@register
class ParameterInForward(Rule):
    """SC307: a parameter or `requires_grad=True` tensor created inside `forward`."""
    code = "SC307"
    needs = ("forward",)
    name = "parameter-in-forward"
    severity = "error"
    summary = "a parameter or `requires_grad=True` tensor created inside `forward`"
    doc = """\
## What it does
Flags `nn.Parameter(...)` and factories with `requires_grad=True` inside the `forward` method
of an `nn.Module` subclass, and a layer that holds parameters (`nn.Linear`, `nn.Conv2d`,
`nn.BatchNorm1d`...) built there and applied there (`fc = nn.Linear(...); fc(x)`,
`nn.BatchNorm1d(c)(x)`). A layer built under an `if` (built once, lazily) is not flagged, nor
is a layer without parameters (`nn.ReLU()`, `nn.Dropout(p)`), nor a `requires_grad=True` tensor
that is only returned (`return torch.tensor(0.0, requires_grad=True)`, a placeholder loss for an
empty batch) or only summed into (the start of a running total of auxiliary losses).

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
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return nn.ReLU()(nn.Dropout(0.1)(x))\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = None\n    def forward(self, x):\n"
        "        if self.fc is None:\n            self.fc = nn.Linear(x.shape[-1], 4)\n        return self.fc(x)\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return nn.BatchNorm1d(4, affine=False)(x)\n",
        "import torch.nn as nn\nclass Net(nn.Module):\n    def build(self, x):\n        fc = nn.Linear(4, 4)\n"
        "        return fc(x)\n",
        # a zero that starts a running total of auxiliary losses is an accumulator, not a weight
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x, parts):\n"
        "        total = torch.tensor(0.0, requires_grad=True)\n        for p in parts:\n"
        "            total = total + (p(x) ** 2).mean()\n        aux = torch.zeros(1, requires_grad=True)\n"
        "        aux += x.mean()\n        return x, total + aux\n",
        # a placeholder loss for an empty batch is a result, not a weight
        "import torch\nimport torch.nn as nn\nclass PairLoss(nn.Module):\n    def forward(self, pairs, labels):\n"
        "        if not pairs:\n            return torch.tensor(0.0, device=labels.device, requires_grad=True)\n"
        "        return (pairs[0] - labels).pow(2).mean()\n",
        "import torch\nimport torch.nn as nn\nclass PairLoss(nn.Module):\n    def forward(self, pairs):\n"
        "        if not pairs:\n            loss = torch.zeros((), requires_grad=True)\n            return loss\n"
        "        return pairs[0].mean()\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        w = torch.randn(3, 4, requires_grad=True)  # <--\n        return x @ w\n",
        # returned, but also used as a weight
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        w = torch.ones(4, requires_grad=True)  # <--\n        if x is None:\n            return w\n"
        "        return x * w\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        self.scale = nn.Parameter(torch.ones(1))  # <--\n        return x * self.scale\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        fc = nn.Linear(x.shape[-1], 4)  # <--\n        return fc(x)\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return nn.BatchNorm1d(4)(x)  # <--\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        self.conv = nn.Conv2d(3, 8, 3)  # <--\n        return self.conv(x)\n",
        # the total is summed into, not the new leaf
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        b = torch.zeros(4, requires_grad=True)  # <--\n        out = x + b\n        out = out + 1\n"
        "        return out\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``nn.Parameter(...)``, a factory with ``requires_grad=True``, or a layer with parameters
        built and applied, inside ``forward`` of an ``nn.Module``."""
        name = torch_name(ctx, node.func)
        if name is None:
            return
        if name.startswith("nn.") and name not in PARAMETER_CLASSES:
            self._layer(node, name, ctx)
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
        statement = ctx.statement
        if name in FACTORIES and type(statement) is cst.Return and statement.value is node:
            return  # a placeholder result (`return torch.tensor(0.0, requires_grad=True)`), not a weight
        if name in FACTORIES and type(statement) is cst.Assign and statement.value is node \
                and len(statement.targets) == 1 and type(statement.targets[0].target) is cst.Name \
                and (added_into(scope.function, statement.targets[0].target.value)
                     or _only_returned(scope.function, statement.targets[0].target.value)):
            return  # the start of a running total (an auxiliary loss), or a placeholder result
        cls = scope.class_def.name.value if scope.class_def is not None else "the module"
        ctx.report(
            node,
            f"{what} inside `{cls}.forward` makes a new leaf tensor on every call: it is not a "
            f"registered parameter, so the optimizer never updates it and `.to(device)` never "
            f"moves it; create it once in `__init__` as `nn.Parameter`",
        )

    def _layer(self, node: cst.Call, name: str, ctx) -> None:
        """``nn.Linear(...)`` (a layer that holds parameters) built on every call of ``forward``
        (not under an ``if``, which may build it once) and applied there."""
        scope = scope_of(ctx, node)
        function = scope.function
        if function is None or function.name.value != "forward" or not scope.module_class:
            return
        fact = ctx.fact(node)
        if fact.kind != MODULE or not fact.params:
            return
        statement = ctx.statement
        if statement is None or _under_if(function, statement):
            return
        parent = ctx.parent
        applied = type(parent) is cst.Call and parent.func is node
        if not applied and type(statement) is cst.Assign and statement.value is node \
                and len(statement.targets) == 1:
            target = dotted_name(statement.targets[0].target)
            applied = target is not None and _called(function, target)
        if not applied:
            return
        cls = scope.class_def.name.value if scope.class_def is not None else "the module"
        layer = name.split(".")[-1]
        ctx.report(
            node,
            f"`nn.{layer}(...)` is built inside `{cls}.forward`: every call makes a new layer with "
            f"freshly initialised parameters that the optimizer (built from `model.parameters()`) "
            f"never updates and `.to(device)` never moves; build it once in `__init__`",
        )


def _under_if(function: cst.FunctionDef, statement: cst.CSTNode) -> bool:
    """``statement`` sits (at any depth) in an ``if`` of ``function``."""
    found: list[bool] = []

    class _Find(cst.CSTVisitor):
        def __init__(self) -> None:
            self.ifs = 0

        def visit_If(self, node: cst.If) -> None:
            self.ifs += 1

        def leave_If(self, original_node: cst.If) -> None:
            self.ifs -= 1

        def on_visit(self, node: cst.CSTNode) -> bool:
            if node is statement:
                found.append(self.ifs > 0)
                return False
            return super().on_visit(node)

    function.body.visit(_Find())
    return bool(found) and found[0]


def _only_returned(function: cst.FunctionDef, name: str) -> bool:
    """``function`` binds the local ``name`` with plain assignments and reads it only as the
    value of a ``return`` (``loss = torch.zeros((), requires_grad=True)`` ... ``return loss``)."""
    return read_only_as(function, name, _returns)


def _returns(node: cst.CSTNode, name: str) -> bool:
    return type(node) is cst.Return and type(node.value) is cst.Name and node.value.value == name


def _called(function: cst.FunctionDef, target: str) -> bool:
    """``function`` calls the value named ``target`` (``fc(x)``, ``self.fc(x)``)."""
    calls: list[bool] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if dotted_name(node.func) == target:
                calls.append(True)

    function.body.visit(_Find())
    return bool(calls)
