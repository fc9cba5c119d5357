"""SC204 reduction-tuple-as-tensor: the (values, indices) pair of
max/min/median/mode/sort/topk/kthvalue used as a tensor."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.operators import COMPARISON_OPERATORS
from shapecheck.semantic.facts import TUPLE


@register
class ReductionTupleAsTensor(Rule):
    """SC204: the (values, indices) pair of max/min/median/mode/sort/topk/kthvalue used as a tensor."""
    code = "SC204"
    name = "reduction-tuple-as-tensor"
    severity = "error"
    summary = "the (values, indices) pair of max/min/median/mode/sort/topk/kthvalue used as a tensor"
    doc = """\
## What it does
Flags the result of `torch.max(x, dim=...)` (also `min`, `median`, `mode`, `sort`, `topk`,
`kthvalue`, and the method forms) used directly as a tensor: in arithmetic or comparisons, or
through a tensor attribute or method.

## Why is this bad?
With a `dim`, these ops return a named tuple `(values, indices)`, not a tensor. `pair + 1`
raises `TypeError`, `.shape`/`.sum()` raise `AttributeError`, and `pair * 2` silently repeats
the tuple instead of doubling the values.

## Example
```python
x = torch.randn(4, 5)
best = torch.max(x, dim=1)
scores = best * 2          # a 4-tuple, not doubled scores
```

## Use instead
```python
best, where = torch.max(x, dim=1)   # or torch.max(x, dim=1).values
scores = best * 2
```
"""
    valid = (
        "import torch\nx = torch.randn(4, 5)\nbest, idx = torch.max(x, dim=1)\ny = best * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, dim=1).values * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x) * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, dim=1)[0] + 1\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, torch.zeros(4, 5)) + 1\n",
    )
    invalid = (
        "import torch\nx = torch.randn(4, 5)\nbest = torch.max(x, dim=1)\ny = best * 2  # <--\n",
        "import torch\nx = torch.randn(4, 5)\nn = x.sort(dim=1).sum()  # <--\n",
        "import torch\nx = torch.randn(4, 5)\nt = torch.topk(x, 2)\nprint(t.shape)  # <--\n",
    )

    _OK_ATTRS = {"values", "indices", "count", "index", "_asdict", "_fields"}

    def _flag(self, node, ctx, expr) -> bool:
        f = ctx.fact(expr)
        if f.kind != TUPLE:
            return False
        ctx.report(node, f"`{short(ctx, expr)}` is the (values, indices) pair that a reduction with a "
                         f"dim returns, not a tensor; unpack it or use `.values`")
        return True

    def visit_BinaryOperation(self, node, ctx) -> None:
        """The pair as an operand of arithmetic."""
        if not self._flag(node, ctx, node.left):
            self._flag(node, ctx, node.right)

    def visit_Comparison(self, node, ctx) -> None:
        """The pair in a comparison."""
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
            if not self._flag(node, ctx, node.left):
                self._flag(node, ctx, node.comparisons[0].comparator)

    def visit_UnaryOperation(self, node, ctx) -> None:
        """The pair negated or inverted."""
        if not isinstance(node.operator, cst.Not):
            self._flag(node, ctx, node.expression)

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """A tensor attribute or method read on the pair."""
        if node.attr.value in self._OK_ATTRS:
            return
        self._flag(node, ctx, node.value)
