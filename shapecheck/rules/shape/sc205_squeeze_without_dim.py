"""SC205 squeeze-without-dim: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.data_uses import registered_buffer
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.enclosing import earlier_statements, guarding_tests, statement_path
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.evidence import may_be_numpy
from shapecheck.semantic.facts import TENSOR, Grad
from shapecheck.semantic.walk import walk
from shapecheck.shapes import is_generic

#: what reads a tensor's shape: ``x.shape``, ``x.ndim``, ``x.size()``, ``x.dim()``, ``x.numel()``
_SHAPE_READS = frozenset({"shape", "ndim", "size", "dim", "numel", "nelement"})


@register
class SqueezeWithoutDim(Rule):
    """SC205: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""
    code = "SC205"
    name = "squeeze-without-dim"
    severity = "warning"
    summary = "`squeeze()` without a dim drops every size-1 axis, the batch axis too"
    default_enabled = False
    doc = """\
## What it does
Flags `x.squeeze()` and `torch.squeeze(x)` called without a `dim`, unless the tensor's shape is
known and has no size-1 axis. Not flagged: a receiver that may be a NumPy array (`.astype(...)`,
`np.*`, `.numpy()`), a squeeze guarded by a test of the receiver's shape (`if x.numel() == 1:`,
`if x.shape[0] == 1:`, after `if x.ndim != 3: raise ...` or `assert x.dim() == 2`), and a
parameter or buffer whose size-1 axes are known (a `(C, C, 1, 1)` kernel has no batch axis),
and two tensors squeezed alike for one call (`loss_fct(logits.squeeze(), labels.squeeze())`: a
batch of one leaves both, and they still match). Opt-in: select `SC205` to enable it.

## Why is this bad?
Without a dim, `squeeze` removes every axis of size 1. Code written for a `(batch, 1)` tensor
silently gets a 0-d tensor when the batch has one element, and later shape logic breaks (or,
worse, broadcasts) only on that input.

## Example
```python
logits = model(x)          # (batch, 1)
probs = logits.squeeze()   # (batch,), but () when batch == 1
```

## Use instead
```python
probs = logits.squeeze(-1)
```
"""
    valid = (
        "import torch\nx = torch.randn(8, 1)\ny = x.squeeze(-1)\n",
        "import torch\nx = torch.randn(8, 3)\ny = x.squeeze()\n",
        "import numpy as np\ndef f(a):\n    return np.squeeze(a)\n",
        # NumPy receivers
        "import numpy as np\ndef f(a):\n    return a.astype(np.float32).squeeze()\n",
        "import numpy as np\ndef f(a):\n    b = np.asarray(a)\n    return b.squeeze()\n",
        "def f(t):\n    arr = t.cpu().numpy()\n    return arr.squeeze()\n",
        # a guard that proves the shape
        "def f(x):\n    if x.numel() == 1:\n        return x.squeeze()\n    return x\n",
        "def f(x):\n    if x.shape[0] == 1:\n        x = x.squeeze()\n    return x\n",
        "def f(x):\n    if x.ndim != 3:\n        raise ValueError('expected (B, 1, T)')\n    return x.squeeze()\n",
        "import torch\ndef as_scalar(x):\n    if isinstance(x, torch.Tensor) and x.dim() != 0:\n"
        "        return x.squeeze()\n    return x\n",
        # squeezed alike for the loss: a batch of one leaves both sides
        "import torch.nn as nn\ndef regression_loss(logits, labels):\n"
        "    return nn.MSELoss()(logits.squeeze(), labels.squeeze())\n",
        # a parameter whose size-1 axes are known: no batch axis to lose
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self, c):\n"
        "        super().__init__()\n        self.gamma = nn.Parameter(torch.ones(c, 1, 1))\n"
        "    def fuse(self, bias):\n        return torch.squeeze(self.gamma) * bias\n",
    )
    invalid = (
        "def f(logits):\n    return logits.squeeze()  # <--\n",
        "import torch\nx = torch.randn(8, 1)\ny = torch.squeeze(x)  # <--\n",
        # a guard about another tensor proves nothing about this one
        "def f(x, y):\n    if y.numel() == 1:\n        return x.squeeze()  # <--\n    return x\n",
        # a (B, 1) model output: the batch axis goes too when B is 1
        "import torch.nn as nn\ndef predict(x):\n    head = nn.Linear(8, 1)\n    return head(x).squeeze()  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``x.squeeze()`` and ``torch.squeeze(x)`` without a dim."""
        func = node.func
        qual = ctx.qualname(func)
        if qual == "torch.squeeze":
            if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
                return
            target = node.args[0].value
        elif qual is None and type(func) is cst.Attribute and func.attr.value == "squeeze" and not node.args:
            target = func.value
        else:
            return
        f = ctx.fact(target)
        if f.kind not in (TENSOR, None):
            return
        if f.shape is not None and f.shape.rank is not None and all(
                isinstance(d, int) and d != 1 or isinstance(d, str) and not is_generic(d) for d in f.shape.dims):
            return
        if f.kind is None and self._may_be_numpy(target, ctx):
            return
        if f.shape is not None and f.shape.rank is not None and 1 in f.shape.dims \
                and (f.grad == Grad.LEAF_REQUIRES_GRAD or registered_buffer(target, ctx)):
            return  # a parameter's (C, C, 1, 1): its size-1 axes are known, it has no batch axis
        if self._shape_checked(target, ctx) or self._squeezed_alike(node, ctx):
            return
        ctx.report(node, f"`{short(ctx, node)}` drops every size-1 axis, including a batch of one; "
                         f"pass the dim to squeeze")

    @staticmethod
    def _may_be_numpy(target: cst.BaseExpression, ctx) -> bool:
        """The receiver may be a NumPy array: made by ``numpy``, ``.numpy()``, ``.astype(...)``,
        itself or in an assignment of its name in the function."""
        if may_be_numpy(target, ctx.qualname):
            return True
        dotted = dotted_name(target)
        scope = ctx.function
        if dotted is None or scope is None:
            return False
        for node in walk(scope.body):
            if type(node) is cst.Assign and any(dotted_name(t.target) == dotted for t in node.targets) \
                    and may_be_numpy(node.value, ctx.qualname):
                return True
        return False

    @staticmethod
    def _squeezed_alike(node: cst.Call, ctx) -> bool:
        """The squeeze is an argument of a call whose other argument is squeezed the same way
        (``loss_fct(logits.squeeze(), labels.squeeze())``): a batch of one leaves both sides,
        and they still match."""
        ancestors = ctx.ancestors
        if len(ancestors) < 2 or type(ctx.parent) is not cst.Arg or type(ancestors[-2]) is not cst.Call:
            return False
        others = [a.value for a in ancestors[-2].args if a is not ctx.parent and a.keyword is None]
        return any(_bare_squeeze(v, ctx) for v in others)

    @staticmethod
    def _shape_checked(target: cst.BaseExpression, ctx) -> bool:
        """The code tests the receiver's shape before the squeeze: an ``if``/``while`` around it,
        or an earlier ``assert`` or ``if ...: raise``/``return`` in a block around it."""
        dotted = dotted_name(target)
        function = ctx.function
        statement = ctx.statement
        if dotted is None or function is None or statement is None:
            return False
        path = statement_path(function, statement)
        if path is None:
            return False
        tests = guarding_tests(path)
        for stmt in earlier_statements(path):
            if type(stmt) is cst.If and _exits(stmt):
                tests.append(stmt.test)
            elif type(stmt) is cst.SimpleStatementLine:
                tests.extend(s.test for s in stmt.body if type(s) is cst.Assert)
        return any(_reads_shape_of(test, dotted) for test in tests)


def _exits(stmt: cst.If) -> bool:
    """The body of ``stmt`` ends in ``raise``, ``return``, ``continue`` or ``break``."""
    body = stmt.body.body
    last = body[-1] if body else None
    if type(last) is cst.SimpleStatementLine and last.body:
        return type(last.body[-1]) in (cst.Raise, cst.Return, cst.Continue, cst.Break)
    return False


def _reads_shape_of(test: cst.BaseExpression, dotted: str) -> bool:
    """``test`` reads the shape of ``dotted``: ``x.shape``, ``x.ndim``, ``x.size(...)``,
    ``x.dim()``, ``x.numel()``, ``len(x)``."""
    for node in (test, *walk(test)):
        if type(node) is cst.Attribute and node.attr.value in _SHAPE_READS and dotted_name(node.value) == dotted:
            return True
        if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "len" \
                and node.args and dotted_name(node.args[0].value) == dotted:
            return True
    return False


def _bare_squeeze(expr: cst.BaseExpression, ctx) -> bool:
    """``x.squeeze()`` or ``torch.squeeze(x)``, without a dim."""
    if type(expr) is not cst.Call:
        return False
    if ctx.qualname(expr.func) == "torch.squeeze":
        return len(expr.args) == 1 and expr.args[0].keyword is None
    return type(expr.func) is cst.Attribute and expr.func.attr.value == "squeeze" and not expr.args
