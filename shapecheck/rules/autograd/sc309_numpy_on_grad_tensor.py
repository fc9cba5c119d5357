"""SC309 numpy-on-grad-tensor: `.numpy()` on a tensor that requires grad."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_evidence import backpropagated
from shapecheck.rules.autograd.grad_guards import guarded_requires_grad
from shapecheck.rules.autograd.numpy_of_lists import GradAppends, list_argument
from shapecheck.rules.autograd.parameters import guessed_parameter
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.helpers.calls import method_call, positional
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import tensor_fact
from shapecheck.semantic.facts import NON_LEAF, TENSOR


@register
class NumpyOnGradTensor(Rule):
    """SC309: `.numpy()` on a tensor that requires grad."""
    code = "SC309"
    needs = ("numpy",)
    name = "numpy-on-grad-tensor"
    severity = "error"
    summary = "`.numpy()` on a tensor that requires grad"
    fixable = True
    doc = """\
## What it does
Flags `t.numpy()`, `np.asarray(t)` and `np.array(t)` where `t` requires grad: a leaf created
with `requires_grad=True` or an `nn.Parameter` (even under `torch.no_grad()`), or a result
computed from one with grad mode on (the output of a trained layer), or a tensor in a branch that
runs only when `t.requires_grad`. Also a NumPy function (`np.sum`, `np.stack`...) given a list
that holds such a tensor: NumPy converts each element with `.numpy()`.

## Why is this bad?
A NumPy array cannot carry an autograd history, and torch refuses to drop it silently:
`RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy()
instead.`

## Example
```python
w = torch.randn(3, requires_grad=True)
a = (w * 2).numpy()           # RuntimeError
```

## Use instead
```python
a = (w * 2).detach().numpy()
```
The fix inserts `.detach()` before `.numpy()`: safe, since the call raised before, and on a
tensor that does not require grad `.detach().numpy()` gives the same array. It is unsafe (`--unsafe-fixes`) on the
variable of a loop over `.parameters()` of an object not known to be a module.
"""
    valid = (
        "import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().numpy()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = w * 2\na = y.numpy()\n",
        "import torch\nx = torch.randn(3)\na = x.numpy()\n",
        # F.nll_loss of a tensor whose grad is unknown: whether the loss requires grad is unknown
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    value = loss.numpy()\n",
        "import torch\nimport torch.nn.functional as F\nw = torch.randn(3, 3, requires_grad=True)\n"
        "def predict(x):\n    with torch.no_grad():\n        y = F.linear(x, w)\n    return y.numpy()\n",
        "import numpy as np\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
        "        return np.asarray(self.fc(x).detach())\n",
        # rebound to a detached copy after the backward pass
        "import torch.nn.functional as F\ndef train(model, data, target):\n    loss = F.nll_loss(model(data), target)\n"
        "    loss.backward()\n    loss = loss.detach()\n    print(loss.numpy())\n",
        "import numpy as np\nimport torch\nimport torch.nn as nn\nclass E(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.embed = nn.Embedding(10, 4)\n"
        "def use(x):\n    model = E()\n    with torch.no_grad():\n        emb = model.embed(x).numpy()\n"
        "    return np.array(x)\n",
        # the branch that runs when the tensor requires grad detaches it
        "def to_numpy(tensor):\n"
        "    return tensor.detach().cpu().numpy() if tensor.requires_grad else tensor.cpu().numpy()\n",
        "def to_numpy(tensor):\n""    if tensor.requires_grad:\n""        tensor = tensor.detach()\n"
        "        return tensor.numpy()\n""    return tensor.numpy()\n",
        # the list starts with a detached copy and collects detached results; rebuilt before NumPy
        "import numpy as np\nimport torch.nn as nn\nclass G(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.emb = nn.Embedding(6, 4)\n        self.lin = nn.Linear(4, 4)\n"
        "    def forward(self, k):\n        h = self.emb.weight\n        hs = [h.detach()]\n"
        "        for _ in range(k):\n            h = self.lin(h)\n            hs.append(h.detach())\n"
        "        return np.sum(hs, 0)\n",
        "import numpy as np\nimport torch.nn as nn\nclass G(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.emb = nn.Embedding(6, 4)\n    def forward(self):\n"
        "        hs = [self.emb.weight]\n        hs = [h.detach().numpy() for h in hs]\n"
        "        return np.sum(hs, 0)\n",
    )
    invalid = (
        # a list that starts with a parameter, then collects layer outputs: NumPy converts each
        "import numpy as np\nimport torch\nimport torch.nn as nn\nclass G(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.emb = nn.Embedding(6, 4)\n        self.lin = nn.Linear(4, 4)\n"
        "    def forward(self, adj, k):\n        h = self.emb.weight\n        hs = [h]\n"
        "        for _ in range(k):\n            h = torch.sparse.mm(adj, self.lin(h))\n            hs.append(h)\n"
        "        return np.sum(hs, 0)  # <--\n",
        "import numpy as np\nimport torch\nimport torch.nn as nn\nclass G(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lin = nn.Linear(4, 4)\n"
        "    def forward(self, adj, h, k):\n        hs = [h]\n"
        "        for _ in range(k):\n            h = torch.sparse.mm(adj, self.lin(h))\n            hs.append(h)\n"
        "        return np.mean(hs, axis=0)  # <--\n",
        # F.linear takes a tensor: `x` is one, and the result requires grad through `w`
        Example(
            "import torch\nimport torch.nn.functional as F\nw = torch.randn(3, 3, requires_grad=True)\n"
            "def predict(x):\n    return F.linear(x, w).numpy()  # <--\n",
            fixed="import torch\nimport torch.nn.functional as F\nw = torch.randn(3, 3, requires_grad=True)\n"
            "def predict(x):\n    return F.linear(x, w).detach().numpy()  # <--\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\na = w.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().numpy()  # <--\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\na = y.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\na = y.detach().numpy()  # <--\n",
        ),
        # NumPy converts through `.numpy()`: the output of a trained layer requires grad
        Example(
            "import numpy as np\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
            "        h = self.fc(x)\n        return np.asarray(h)  # <--\n",
            fixed="import numpy as np\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
            "        h = self.fc(x)\n        return np.asarray(h.detach())  # <--\n",
        ),
        # `loss.backward()` in the same function: `loss` requires grad
        Example(
            "import torch.nn.functional as F\ndef train(model, loader, optimizer):\n    for data, target in loader:\n"
            "        loss = F.nll_loss(model(data), target)\n        loss.backward()\n        optimizer.step()\n"
            "        print(loss.numpy())  # <--\n",
            fixed="import torch.nn.functional as F\ndef train(model, loader, optimizer):\n"
            "    for data, target in loader:\n        loss = F.nll_loss(model(data), target)\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        print(loss.detach().numpy())  # <--\n",
        ),
        # a layer of a module of the file, called directly
        Example(
            "import torch.nn as nn\nclass E(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(10, 4)\n"
            "def use(x):\n    model = E()\n    emb = model.embed(x).numpy()  # <--\n",
            fixed="import torch.nn as nn\nclass E(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.embed = nn.Embedding(10, 4)\n"
            "def use(x):\n    model = E()\n    emb = model.embed(x).detach().numpy()  # <--\n",
        ),
        # `if tensor.requires_grad` proves the tensor requires grad
        Example(
            "def to_numpy(tensor):\n"
            "    return tensor.cpu().numpy() if tensor.requires_grad else tensor.numpy()  # <--\n",
            fixed="def to_numpy(tensor):\n"
            "    return tensor.cpu().detach().numpy() if tensor.requires_grad else tensor.numpy()  # <--\n",
        ),
        Example(
            "def to_numpy(tensor):\n    if tensor.requires_grad:\n        return tensor.numpy()  # <--\n"
            "    return tensor.numpy()\n",
            fixed="def to_numpy(tensor):\n    if tensor.requires_grad:\n        return tensor.detach().numpy()  # <--\n"
            "    return tensor.numpy()\n",
        ),
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.numpy()``, ``np.asarray(t)`` and ``np.array(t)`` on a tensor that requires grad."""
        self._appends.record(node, ctx)
        if self._list_of_grad_tensors(node, ctx):
            return
        if ctx.qualname(node.func) in _CONVERTERS:
            self._converted(node, ctx)
            return
        call = method_call(node)
        if call is None or call[1] != "numpy" or node.args:
            return
        receiver = call[0]
        fact = ctx.fact(receiver)
        because = ""
        if fact.requires_grad is None and fact.kind in (TENSOR, None) and backpropagated(ctx, receiver):
            fact = fact.with_(kind=TENSOR, grad=NON_LEAF)
            because = f" (this function calls `{short(ctx, receiver)}.backward()`)"
        if fact.requires_grad is None and fact.kind in (TENSOR, None):
            guard = guarded_requires_grad(ctx, receiver, node)
            if guard is not None:
                fact = fact.with_(kind=TENSOR, grad=NON_LEAF)
                because = f" (this branch runs only when `{guard}.requires_grad`)"
        if fact.kind != TENSOR or fact.requires_grad is not True:
            return
        detached = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("detach")))
        # Unsafe on a loop over `.parameters()` of an object not known to be a module: another
        # library's tensor may have `.numpy()` and no `.detach()`.
        fix = Fix(node.func, node.func.with_changes(value=detached),
                  safe=not guessed_parameter(receiver, ctx))
        name = short(ctx, receiver)
        ctx.report(
            node,
            f"`{name}` requires grad{because}, so `{name}.numpy()` raises RuntimeError (Can't call "
            f"numpy() on Tensor that requires grad); use `{name}.detach().numpy()`",
            fix=fix,
        )

    def __init__(self) -> None:
        self._appends = GradAppends()

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """``xs = [t]``: a list that starts with a tensor that requires grad."""
        self._appends.record_display(node, ctx)

    def _list_of_grad_tensors(self, node: cst.Call, ctx) -> bool:
        """``np.sum(xs, 0)`` (any NumPy function that reads a list) with ``xs`` holding a tensor
        that requires grad; True when reported."""
        arg = list_argument(node, ctx)
        item = self._appends.grad_item(arg, ctx) if arg is not None else None
        if arg is None or item is None:
            return False
        ctx.report(
            node,
            f"`{short(ctx, arg)}` holds `{short(ctx, item)}`, a tensor that requires grad: "
            f"`{short(ctx, node.func)}` converts each element with `.numpy()` and raises RuntimeError "
            f"(Can't call numpy() on Tensor that requires grad); join the tensors with `torch.stack` "
            f"(or `.detach()` them first)",
        )
        return True

    def _converted(self, node: cst.Call, ctx) -> None:
        """``np.asarray(t)``/``np.array(t)``: NumPy reads the tensor through ``t.numpy()``."""
        args = positional(node)
        if not args or len(args) != len(node.args):
            return
        fact = tensor_fact(ctx, args[0])
        if fact is None or fact.requires_grad is not True:
            return
        name = short(ctx, args[0])
        detached = cst.Call(func=cst.Attribute(value=args[0], attr=cst.Name("detach")))
        fix = Fix(args[0], detached, safe=not guessed_parameter(args[0], ctx))
        ctx.report(
            node,
            f"`{name}` requires grad, so `{short(ctx, node)}` raises RuntimeError (Can't call "
            f"numpy() on Tensor that requires grad: NumPy converts the tensor with `.numpy()`); "
            f"pass `{name}.detach()`",
            fix=fix,
        )


#: NumPy functions that convert a tensor through its ``__array__`` (``Tensor.numpy()``)
_CONVERTERS = frozenset({"numpy.asarray", "numpy.array", "numpy.asanyarray"})
