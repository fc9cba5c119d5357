"""SC303 data-attribute: `.data` reads or writes a tensor behind autograd's back."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.loss_calls import loss_prediction
from shapecheck.rules.autograd.parameters import guessed_parameter, parameter_by_loop
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.helpers.calls import dotted_name, method_call
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.torch_api import LAYER_PARAMETER_NAMES, TENSOR_METADATA_ATTRIBUTES, TENSOR_METADATA_METHODS


def _is_data_attr(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Attribute and expr.attr.value == "data"


def _swaps_storage(statement: Optional[cst.CSTNode]) -> bool:
    """True for ``x.data = ...`` (also ``x.data, meta = ...``): the statement replaces a
    tensor's storage."""
    if type(statement) is not cst.Assign:
        return False
    for target in statement.targets:
        elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else ()
        if _is_data_attr(target.target) or any(_is_data_attr(e.value) for e in elements):
            return True
    return False


# the reads of `.data` this rule lets pass as copies: its choice, not a table of torch
_DETACH_SAFE = {"numpy", "cpu", "clone", "tolist", "item"}
_METADATA = TENSOR_METADATA_ATTRIBUTES | TENSOR_METADATA_METHODS


@register
class DataAttribute(Rule):
    """SC303: `.data` reads or writes a tensor behind autograd's back."""
    code = "SC303"
    needs = ("data",)
    name = "data-attribute"
    severity = "warning"
    summary = "`.data` reads or writes a tensor behind autograd's back"
    fixable = True
    doc = """\
## What it does
Flags `t.data` on a tensor that requires grad or a parameter (`self.weight.data`, `p.data`
for `p` in `model.parameters()`) whose values are read or changed through it. On tensors that
do not require grad (`p.grad.data`, plain data) `.data` is harmless and not flagged. Reading only metadata
(`w.data.shape`, `w.data.size()`) and replacing the whole storage (`w.data = new`, `w.data = f(w.data)`,
the one use with no plain replacement) are not flagged. A loss computed on `out.data`
(`criterion(out.data, y)`, `F.mse_loss(out.data, y)`) whose `backward()` runs is flagged at
the `backward()`, whatever `out` is: `.data` never requires grad.

## Why is this bad?
`.data` returns the same storage with autograd switched off *and* without the version
counter: a change made through it is invisible to autograd, so a gradient that needed the old
values is silently computed from the new ones, with no error. `.detach()` shares the version
counter and lets autograd raise instead; `torch.no_grad()` is the supported way to change a
parameter.

## Example
```python
w = torch.randn(3, requires_grad=True)
w.data.mul_(0.5)              # autograd never hears of it
values = w.data.numpy()
```

## Use instead
```python
with torch.no_grad():
    w.mul_(0.5)
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
        "import torch\ndef load(dataset):\n    return dataset.data\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nn = layer.weight.data.shape[0]\n"
        "layer.weight.data = torch.zeros(4, 3)\n",
        # a metric on `out.data`, and the loss on `out` itself
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n    out = model(x)\n"
        "    loss = criterion(out, y)\n    loss.backward()\n    err = criterion(out.data, y)\n    return err\n",
        "def train(model, x, y, criterion):\n    out = model(x)\n    loss = criterion(out.data, y)\n"
        "    loss.backward()\n",
        # a function of the file that only reads what it is given
        "import torch\ndef accuracy(output, target):\n    return (output.argmax(1) == target).float().mean()\n"
        "def check(x, y):\n    out = torch.nn.Linear(3, 7)(x)\n    return accuracy(out.data, y)\n",
    )
    invalid = (
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\nv = w.data.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\nv = w.detach().numpy()  # <--\n",
        ),
        "import torch\nw = torch.randn(3, requires_grad=True)\nw.data.mul_(0.5)  # <--\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nlayer.weight.data[0] = torch.zeros(3)  # <--\n",
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
        # the loss never sees the graph of `out`
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n    out = model(x)\n"
        "    loss = criterion(out.data, y)\n    loss.backward()  # <--\n",
        "import torch.nn.functional as F\ndef train(model, x, y):\n"
        "    F.mse_loss(model(x).data, y).backward()  # <--\n",
        "import torch.nn as nn\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n"
        "        self.criterion = nn.CrossEntropyLoss()\n    def step(self, x, y):\n        out = self.model(x)\n"
        "        loss = self.criterion(out.data, y)\n        loss.backward()  # <--\n",
    )

    def __init__(self) -> None:
        self._done: set[int] = set()

    @staticmethod
    def _is_tensor(expr: cst.BaseExpression, ctx) -> bool:
        """True when ``expr`` is a tensor that requires grad, or a parameter by its name."""
        if type(expr) is cst.Attribute and expr.attr.value == "grad":
            return False  # `p.grad.data`: a gradient does not require grad itself
        fact = ctx.fact(expr)
        if fact.requires_grad is not None:
            return fact.requires_grad
        if type(expr) is cst.Attribute and expr.attr.value in LAYER_PARAMETER_NAMES:
            return True
        return parameter_by_loop(expr, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.data.numpy()`` and the other conversions of ``t.data``, with the ``.detach()`` fix;
        ``backward()`` of a loss computed on ``out.data``."""
        call = method_call(node)
        if call is not None and call[1] == "backward":
            self._backward_of_data(node, call[0], ctx)
            return
        if call is None or call[1] not in _DETACH_SAFE or not _is_data_attr(call[0]):
            return
        attr = call[0]
        if type(attr) is not cst.Attribute:
            return
        if not self._is_tensor(attr.value, ctx):
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
        """Any other ``t.data`` that reads or changes the values of a tensor that requires grad."""
        if node.attr.value != "data" or id(node) in self._done:
            return
        parent = ctx.parent
        if type(parent) is cst.Attribute and parent.value is node and parent.attr.value in _METADATA:
            return  # `w.data.shape`, `w.data.size()`: metadata, the values are not touched
        if type(parent) is cst.AssignTarget or _swaps_storage(ctx.statement):
            return  # `w.data = f(w.data)`: swaps the storage, the one use with no plain replacement
        ancestors = ctx.ancestors
        if len(ancestors) >= 2 and type(parent) is cst.Arg and type(ancestors[-2]) is cst.Call:
            if dotted_name(ancestors[-2].func) in ("isinstance", "type"):
                return  # `isinstance(w.data, DTensor)`: a type check
            if ctx.only_reads(ancestors[-2], node):
                return  # `accuracy(out.data, y)`: a function of the run that only reads it
        if not self._is_tensor(node.value, ctx):
            return
        self._done.add(id(node))
        name = short(ctx, node.value)
        ctx.report(
            node,
            f"`{name}.data` bypasses autograd: a change made through it is invisible to "
            f"autograd and to its version check, so gradients that needed the old values are "
            f"silently wrong; change `{name}` under `torch.no_grad()`, or read it with "
            f"`{name}.detach()`",
        )

    def _backward_of_data(self, node: cst.Call, root: cst.BaseExpression, ctx) -> None:
        """``loss.backward()`` where ``loss`` is a loss computed on ``out.data`` (the call itself,
        or a name bound to it on every path here)."""
        values: tuple[cst.BaseExpression, ...] = (root,)
        if type(root) is not cst.Call:
            dotted = dotted_name(root)
            values = ctx.assigned_values(dotted) if dotted is not None else ()
        found = []
        for value in values:
            pred = loss_prediction(ctx, value) if type(value) is cst.Call else None
            if pred is None or not _is_data_attr(pred):
                return
            found.append(pred)
        if not found or any(id(p) in self._done for p in found):
            return
        pred = found[0]
        assert type(pred) is cst.Attribute
        name = short(ctx, pred.value)
        ctx.report(
            node,
            f"`{short(ctx, root)}` is computed from `{name}.data`, which autograd does not see: "
            f"no gradient reaches `{name}`, and `{short(ctx, node)}` raises RuntimeError (element 0 "
            f"of tensors does not require grad) unless the target requires grad; compute the loss "
            f"on `{name}`",
        )
