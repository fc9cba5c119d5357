"""SC601 python-bool-on-tensor: `and`/`or`/`not`/`if` on a tensor with more than one element."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.element_count import several_elements_of
from shapecheck.rules.helpers.tensors import tensor_fact


def _truth_tested(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The sub-expressions whose truth value Python computes when it tests ``expr``."""
    if type(expr) is cst.BooleanOperation:
        yield from _truth_tested(expr.left)
        yield from _truth_tested(expr.right)
    elif type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Not:
        yield from _truth_tested(expr.expression)
    else:
        yield expr


@register
class PythonBoolOnTensor(Rule):
    """SC601: `and`/`or`/`not`/`if` on a tensor with more than one element."""
    code = "SC601"
    name = "python-bool-on-tensor"
    severity = "error"
    summary = "`and`/`or`/`not`/`if` on a tensor with more than one element"
    doc = """\
## What it does
Flags a tensor known to hold more than one element used where Python needs a single truth
value: an `if`, `while` or `assert` test, a conditional expression, the operand of `not`, or
the left operand of `and`/`or`.

## Why is this bad?
Python calls `bool()` on the tensor, and `bool()` of a tensor with several elements raises
`RuntimeError: Boolean value of Tensor with more than one value is ambiguous`. `and`/`or` are
not elementwise: even when they do not raise, they pick one whole operand.

## Example
```python
mask_a = x > 0
mask_b = x < 1
both = mask_a and mask_b      # RuntimeError
if x > 0:                     # RuntimeError for more than one element
    ...
```

## Use instead
```python
both = mask_a & mask_b        # elementwise: & | ~
if (x > 0).all():             # or .any(): say which one you mean
    ...
```
"""
    valid = (
        "import torch\nx = torch.randn(2, 3)\nboth = (x > 0) & (x < 1)\n",
        "import torch\nx = torch.randn(2, 3)\nif (x > 0).all():\n    print('positive')\n",
        "import torch\nx = torch.randn(2, 3)\nif x.sum() > 0:\n    print('positive')\n",
        "import torch\nx = torch.tensor([1.0])\nif x > 0:\n    print('positive')\n",
        "import torch\nx = torch.randn(2, 3)\ny = x if x is not None else None\n",
        "import torch\ndef f(x):\n    if x:\n        return 1\n",
        "import torch\nx = torch.randn(2, 3)\nmask = torch.randn(2, 3) > 0\nkeep = mask is None or x\n",
        # a loss with the default reduction is 0-dim
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    if loss > 0.5:\n        print(loss)\n",
        # a value that may be a NumPy array is no evidence of a tensor
        "import numpy as np\ndef f(x):\n    y = np.asarray(x)\n    if x.transpose(1, 2) > 0:\n        return y\n",
        # `.type()` without a dtype returns the type's name, a string
        "import torch\nw = torch.zeros(3, 4)\nif w.type() == 'torch.cuda.HalfTensor':\n    w = w.float()\n",
        # full reductions and .item() values are single numbers
        "import torch.nn as nn\nfc = nn.Linear(8, 4)\ndef f(x, best):\n    y = fc(x)\n    acc = y.sum().item()\n"
        "    if y.mean() > 0 and acc > best:\n        return True\n"
        "    if y.max() > best or not y.any():\n        return False\n",
        # a reduction over the only dim of a 1-D tensor is 0-dim; the batch of a reduction over
        # dim 1 may be 1 by construction (greedy decoding of one sentence)
        "import torch\ndef f(x):\n    v = x.view(-1)\n    if v.sum(dim=0) > 0:\n        return 1\n",
        # a tensor compared with None (or an unknown value, perhaps None) by `==` is a Python bool
        "import torch.nn as nn\nfc = nn.Linear(8, 4)\ndef f(x, y):\n    a = fc(x)\n"
        "    if a == None or a == y:\n        return 1\n",
        "import torch\ndef decode(model, out, end):\n    prob = model.ff(out[:, -1])\n"
        "    _, next_word = torch.max(prob, dim=1)\n    if next_word == end:\n        return 1\n",
        # a check of every pair of coordinates, reduced with `.all()`
        "import torch\n""def giou(boxes1, boxes2):\n""    assert (boxes1[:, 2:] >= boxes1[:, :2]).all()\n"
        "    return torch.min(boxes1[:, None, :2], boxes2[:, :2])\n",
        # a mean per split, kept in a dict that a helper returns: 0-dim values
        "import torch\ndef estimate(n):\n    out = {}\n    for split in ['train', 'val']:\n"
        "        losses = torch.zeros(n)\n        out[split] = losses.mean()\n    return out\n"
        "losses = estimate(10)\nif losses['val'] < 1.0:\n    print('ok')\n",
        # a dict that something else may fill (`update`) says nothing about its values
        "import torch\ndef f(extra):\n    out = {'a': torch.zeros(4)}\n    out.update(extra)\n"
        "    if out['b'] > 0:\n        return 1\n",
        # squeeze() of a (B, 1) output is 0-dim when B is 1... and so is a (1, 1) one, always
        "import torch.nn as nn\nhead = nn.Linear(8, 1)\ndef f():\n"
        "    p = head(torch.zeros(1, 8)).squeeze()\n    if p > 0.5:\n        return 1\n",
    )
    invalid = (
        "import torch\nx = torch.randn(2, 3)\nmask_a = x > 0\nmask_b = x < 1\nboth = mask_a and mask_b  # <--\n",
        "import torch\nx = torch.randn(4)\nif x > 0:  # <--\n    print('positive')\n",
        "import torch\nx = torch.zeros(3)\nwhile not x:  # <--\n    break\n",
        "import torch\nx = torch.ones(2, 2)\nassert x == 1  # <--\n",
        # `output` is the prediction F.nll_loss takes: at least one dim
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    if output > 0.5:  # <--\n        print(loss)\n",
        # an nn.Linear(8, 4) output ends in 4 features, whatever its input
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(8, 4)\n    def forward(self, x, best):\n        a = self.fc(x)\n"
        "        return (a > best) or (a < 0)  # <--\n",
        # `torch.min` takes slices of `boxes1`: a tensor of at least 2 dims, whose comparison has many elements
        "import torch\n""def giou(boxes1, boxes2):\n""    assert boxes1[:, 2:] >= boxes1[:, :2]  # <--\n"
        "    return torch.min(boxes1[:, None, :2], boxes2[:, :2])\n",
        # the whole vector of losses kept per split (the `.mean()` forgotten), read back at the caller
        "import torch\ndef estimate(n):\n    out = {}\n    for split in ['train', 'val']:\n"
        "        losses = torch.zeros(n)\n        out[split] = losses\n    return out\n"
        "losses = estimate(10)\nif losses['val'] < 1.0:  # <--\n    print('ok')\n",
        # squeeze() of a (B, 1) output is (B,): one probability per pair of the batch
        "import torch\nimport torch.nn as nn\nhead = nn.Linear(8, 1)\ndef f(x):\n"
        "    p = head(x.view(-1, 8)).squeeze()\n    return 1 if p > 0.5 else 0  # <--\n",
    )

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def _check(self, expr: cst.BaseExpression, ctx, where: str) -> None:
        if id(expr) in self._seen:
            return
        fact = tensor_fact(ctx, expr)  # None for Python bools (`torch.equal(a, b)`, `x.is_contiguous()`)
        if fact is None:
            return
        name = short(ctx, expr)
        found = several_elements_of(ctx, expr, name)
        if found is None:
            return
        described, condition = found
        unless = f" unless {condition}" if condition is not None else ""
        self._seen.add(id(expr))
        ctx.report(
            expr,
            f"`{name}` is a tensor of {described}; {where} calls bool() on it, "
            f"which raises RuntimeError{unless} (Boolean value of Tensor with more than one value is "
            f"ambiguous); use `&`/`|`/`~` for elementwise logic, or `.any()`/`.all()`",
            condition=condition,
        )

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx) -> None:
        """The left operand of ``and``/``or``."""
        word = "`and`" if type(node.operator) is cst.And else "`or`"
        for expr in _truth_tested(node.left):
            self._check(expr, ctx, word)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx) -> None:
        """The operand of ``not``."""
        if type(node.operator) is cst.Not:
            for expr in _truth_tested(node.expression):
                self._check(expr, ctx, "`not`")

    def _test(self, test: cst.BaseExpression, ctx, where: str) -> None:
        for expr in _truth_tested(test):
            self._check(expr, ctx, where)

    def visit_If(self, node: cst.If, ctx) -> None:
        """The test of ``if``."""
        self._test(node.test, ctx, "`if`")

    def visit_While(self, node: cst.While, ctx) -> None:
        """The test of ``while``."""
        self._test(node.test, ctx, "`while`")

    def visit_Assert(self, node: cst.Assert, ctx) -> None:
        """The test of ``assert``."""
        self._test(node.test, ctx, "`assert`")

    def visit_IfExp(self, node: cst.IfExp, ctx) -> None:
        """The test of a conditional expression."""
        self._test(node.test, ctx, "the conditional expression")
