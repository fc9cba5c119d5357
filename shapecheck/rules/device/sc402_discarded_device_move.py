"""SC402 discarded-device-move: `x.cuda()`/`x.to(...)`/`x.float()` on a tensor as a statement: the
result is lost."""

from __future__ import annotations

from typing import Optional, cast

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.helpers import fix_safety
from shapecheck.rules.helpers.calls import dotted_name, method_call
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.shape.bound_values import value_before
from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, MODULE, TENSOR, Fact
from shapecheck.semantic.torch_api import CONVERTING_METHODS, TENSOR_PROPERTIES


@register
class DiscardedDeviceMove(Rule):
    """SC402: `x.cuda()`/`x.to(...)`/`x.float()` on a tensor as a statement: the result is lost."""
    code = "SC402"
    name = "discarded-device-move"
    severity = "error"
    summary = "`x.cuda()`/`x.to(...)`/`x.float()` on a tensor as a statement: the result is lost"
    fixable = True
    doc = """\
## What it does
Flags `x.cuda()`, `x.cpu()`, `x.to(...)`, `x.float()`, `x.half()`, `x.long()` and the like
used as a statement, when `x` is known to be a tensor (also an element of a batch of a
`DataLoader` over a `TensorDataset` or a `torchvision` dataset, with the default collate), or
when the call passes what only the tensor methods take (`x.cuda(gpu, non_blocking=True)`:
`nn.Module.cuda` has no `non_blocking`).
Modules are not flagged: `model.cuda()` moves a module in place and is correct; receivers of
unknown kind are not flagged either.

## Why is this bad?
On a tensor these methods return a new tensor and leave `x` where it was. The statement does the
copy and throws it away; `x` stays on the CPU (or keeps its dtype), and the next op that meets a
CUDA tensor fails.

## Example
```python
x = torch.randn(3)
x.cuda()                      # x is still on the CPU
```

## Use instead
```python
x = x.cuda()
```
The fix assigns the result back to the receiver. It is safe for a name local to its function
(or a module-level statement). It is unsafe (`--unsafe-fixes`) for a name declared `global` or
`nonlocal` (another scope sees the change), for a leaf that requires grad (the new binding is no
leaf: its `.grad` stays `None` and an optimizer refuses it), and for an attribute (a parameter
slot refuses a plain tensor). There is no fix for a name the function only reads (assigning it
would make it local: `UnboundLocalError`) nor for a parameter (`self.w.double()`: convert the
module, `self.double()`, which converts its parameters in place).
"""
    valid = (
        "import torch\nx = torch.randn(3)\nx = x.cuda()\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 3)\nmodel.cuda()\nmodel.to('cpu')\nmodel.float()\n",
        "def prepare(model):\n    model.cuda()\n",
        # an in-place update, then a discarded copy in the dtype the tensor already has
        "import torch.nn as nn\ndef merge(layer: nn.Linear, delta):\n    orig_dtype = layer.bias.data.dtype\n"
        "    layer.bias.data.add_(delta).to(orig_dtype)\n",
        # `nn.Module.to` takes `non_blocking` too: the receiver may be a module, moved in place
        "def prepare(model, device):\n    model.to(device, non_blocking=True)\n",
        # a loader with a collate function may yield anything (an object whose `.to` works in place)
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "loader = DataLoader(TensorDataset(torch.randn(8, 3)), batch_size=4, collate_fn=collate)\n"
        "for data, in loader:\n    data.to('cuda')\n",
        "import torch\nx = torch.randn(3)\ny = x.to(torch.float16)\n",
        # `data` is only given to the model: nothing says it is a tensor (it may be a module's input
        # of any kind, or a module itself)
        "import torch.nn.functional as F\ndef train(model, loader, device):\n    for data, target in loader:\n"
        "        data.to(device)\n        loss = F.nll_loss(model(data), target)\n",
    )
    invalid = (
        Example(
            "import torch\nx = torch.randn(3)\nx.cuda()  # <--\n",
            fixed="import torch\nx = torch.randn(3)\nx = x.cuda()  # <--\n",
        ),
        Example(
            "import torch\nx = torch.randn(3)\nx.to('cuda')  # <--\n",
            fixed="import torch\nx = torch.randn(3)\nx = x.to('cuda')  # <--\n",
        ),
        Example(
            "import torch\nidx = torch.tensor([1, 2])\nidx.float()  # <--\n",
            fixed="import torch\nidx = torch.tensor([1, 2])\nidx = idx.float()  # <--\n",
        ),
        Example(
            "import torch\ndef scale(n):\n    y = torch.ones(n)\n    y.double()  # <--\n    return y\n",
            fixed="import torch\ndef scale(n):\n    y = torch.ones(n)\n    y = y.double()  # <--\n    return y\n",
        ),
        # a module-level name read in a function: `x = x.double()` there raises UnboundLocalError
        "import torch\nx = torch.randn(3)\ndef show():\n    print(x.dtype)\n    x.double()  # <--\n",
        # a parameter slot refuses a plain tensor: no fix
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n"
        "    def forward(self, x):\n        self.w.double()  # <--\n        return x * self.w\n",
        Example(
            "import torch\nx = None\ndef make():\n    global x\n    x = torch.zeros(2)\n    x.double()  # <--\n",
            unsafe_fixed="import torch\nx = None\ndef make():\n    global x\n    x = torch.zeros(2)\n"
            "    x = x.double()  # <--\n",
        ),
        # `target` is given to F.nll_loss, which takes tensors only: a tensor by evidence
        Example(
            "import torch.nn.functional as F\ndef train(model, loader, device):\n    for data, target in loader:\n"
            "        target.to(device)  # <--\n        loss = F.nll_loss(model(data), target)\n",
            fixed="import torch.nn.functional as F\ndef train(model, loader, device):\n"
            "    for data, target in loader:\n        target = target.to(device)  # <--\n"
            "        loss = F.nll_loss(model(data), target)\n",
        ),
        # a batch of a DataLoader over a TensorDataset is a list of tensors
        Example(
            "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8)), batch_size=4)\n"
            "for data, target in loader:\n    data.to('cuda')  # <--\n",
            fixed="import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
            "loader = DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8)), batch_size=4)\n"
            "for data, target in loader:\n    data = data.to('cuda')  # <--\n",
        ),
        # `nn.Module.cuda` has no `non_blocking`: the receiver is a tensor
        Example(
            "def validate(loader, model, gpu):\n    for images, target in loader:\n"
            "        images.cuda(gpu, non_blocking=True)  # <--\n        output = model(images)\n",
            fixed="def validate(loader, model, gpu):\n    for images, target in loader:\n"
            "        images = images.cuda(gpu, non_blocking=True)  # <--\n        output = model(images)\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\nw.double()  # <--\n",
            unsafe_fixed="import torch\nw = torch.randn(3, requires_grad=True)\nw = w.double()  # <--\n",
        ),
    )

    def visit_Expr(self, node: cst.Expr, ctx) -> None:
        """``x.cuda()``, ``x.to(...)``, ``x.float()``... on a tensor, as a statement."""
        value = node.value
        call = method_call(value)
        if call is None or call[1] not in CONVERTING_METHODS or type(value) is not cst.Call:
            return
        receiver, method = call
        if method == "type" and not value.args:
            return
        if method == "to" and _own_dtype_after_inplace(ctx, receiver, value):
            return
        fact = ctx.fact(receiver)
        if fact.kind != TENSOR and not (fact.kind is None and _tensor_only_call(value, method)):
            return
        name = short(ctx, _written_by(receiver) or receiver)
        moved = short(ctx, node.value)
        safety, advice = _assign_back(ctx, node, receiver, fact)
        if advice is None:
            advice = f"write `{name} = {moved}`"
        fix = None
        if safety is not None:
            fix = Fix(node, cst.Assign(
                targets=[cst.AssignTarget(target=cast(cst.BaseAssignTargetExpression, receiver))],
                value=node.value, semicolon=node.semicolon,
            ), safe=safety)
        ctx.report(
            node,
            f"`{moved}` returns a new tensor and leaves `{name}` unchanged; "
            f"the result is thrown away, so `{name}` keeps its old device and dtype; {advice}",
            fix=fix,
        )


def _written_by(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """For ``w.add_(d)`` (an in-place method, which returns its receiver): ``w``; else ``None``."""
    call = method_call(expr)
    return call[0] if call is not None and call[1].endswith("_") and not call[1].startswith("_") else None


def _own_dtype_after_inplace(ctx, receiver: cst.BaseExpression, call: cst.Call) -> bool:
    """``w.add_(d).to(dtype)`` where ``dtype = w.dtype`` was read before: the in-place op has
    already written ``w``, and the discarded copy in its own dtype (or device) changes nothing."""
    written = _written_by(receiver)
    if written is None:
        return False
    if len(call.args) != 1 or call.args[0].keyword is not None or type(call.args[0].value) is not cst.Name:
        return False
    bound = value_before(ctx, call.args[0].value.value, call)
    return type(bound) is cst.Attribute and bound.attr.value in ("dtype", "device") \
        and ctx.source(bound.value) == ctx.source(written)


def _tensor_only_call(call: cst.Call, method: str) -> bool:
    """``x.cuda(..., non_blocking=True)``, ``x.cpu(memory_format=...)``: arguments that
    ``nn.Module.cuda``/``cpu`` do not take (a module given them raises TypeError), so ``x`` is a
    tensor (or another value these methods copy, never move in place)."""
    return method in ("cuda", "cpu") and any(
        a.keyword is not None and a.keyword.value in ("non_blocking", "memory_format") for a in call.args)


def _assign_back(ctx, node: cst.Expr, receiver: cst.BaseExpression, fact: Fact):
    """How safe ``receiver = receiver.move(...)`` is: ``(True, None)`` safe, ``(False, None)``
    unsafe, ``(None, advice)`` no fix, with the advice that replaces "write `x = x.cuda()`".

    Unsafe: a name declared ``global``/``nonlocal`` (another scope's name changes), a leaf that
    requires grad (the new binding is not a leaf: its ``.grad`` stays ``None`` and an optimizer
    refuses it), an attribute (it may be a ``nn.Parameter`` slot, which refuses a plain tensor
    with TypeError, or a property). No fix: a name the scope only reads (assigning it makes it
    local there: UnboundLocalError at every read), an attribute that requires grad (most likely a
    parameter), a tensor property, anything else than a dotted name.
    """
    keep = f"keep the result in a name (`y = {short(ctx, node.value)}`) and use that"
    if type(receiver) is cst.Attribute:
        if dotted_name(receiver) is None or receiver.attr.value in TENSOR_PROPERTIES:
            return None, keep  # `t.T = ...` raises; `t[0] = ...` copies back into t's dtype
        owner = ctx.fact(receiver.value)
        parameter = receiver.attr.value in (owner.params or ()) if owner.kind == MODULE else False
        if parameter or fact.grad == LEAF_REQUIRES_GRAD:
            moved = cast(cst.Call, node.value)
            on_module = moved.with_changes(func=moved.func.with_changes(value=receiver.value))
            return None, (f"`{short(ctx, receiver)}` is a leaf that requires grad, most likely a parameter, "
                          f"which refuses a plain tensor: if `{short(ctx, receiver.value)}` is a module, "
                          f"`{short(ctx, on_module)}` converts its parameters in place")
        return False, None
    if type(receiver) is not cst.Name:
        return None, keep
    place = fix_safety.place_of(ctx, node)
    scope = fix_safety.name_scope(place, receiver.value) if place is not None else None
    if scope == fix_safety.FREE:
        where = place.scope.name.value if place is not None and place.scope is not None else "here"
        call = short(ctx, node.value)
        return None, (f"assign the result where `{receiver.value}` is defined: `{receiver.value}` is "
                      f"not local to `{where}`, and `{receiver.value} = {call}` there would raise "
                      f"UnboundLocalError")
    if scope is None:
        return None, None
    return scope == fix_safety.LOCAL and fact.grad != LEAF_REQUIRES_GRAD, None
