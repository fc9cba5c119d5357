"""SC201 reduction-without-keepdim: a reduction over a non-leading dim, without `keepdim=True`,
combined with its source."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, COMPARISON_OPERATORS
from shapecheck.shapes import Shape, format_shape

# the joins whose dim argument this rule reads: its choice, not a table of torch
_CONCAT_FUNCS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack"}


def _known_rank(shape: Optional[Shape]) -> Optional[int]:
    return shape.rank if shape is not None else None


def _leading(axes: Sequence[int], rank: Optional[int]) -> Optional[bool]:
    """True when the reduced axes are exactly the leading ones (0..k-1); None when unknowable."""
    norm = []
    for a in axes:
        if a < 0:
            if rank is None:
                return None
            a += rank
        norm.append(a)
    return sorted(set(norm)) == list(range(len(set(norm))))


def _reduction_pair(ctx, source_expr: cst.BaseExpression, reduced_expr: cst.BaseExpression):
    """The reduction of ``source_expr`` that ``reduced_expr`` holds, if any."""
    red_fact = ctx.fact(reduced_expr)
    red = red_fact.reduction
    if red is None:
        return None
    src_fact = ctx.fact(source_expr)
    if red.source is not src_fact:
        return None
    name = dotted_name(source_expr)
    if name is None or name != red.source_name:
        return None
    return red_fact, src_fact, red


def _align_message(src: Shape, out: Shape) -> Optional[str]:
    """``they align as 8 vs 16``: the rightmost column where the two shapes differ."""
    if src.rank is None or out.rank is None:
        return None
    for i in range(1, min(src.rank, out.rank) + 1):
        a, b = src.dims[-i], out.dims[-i]
        if a != b:
            return f"{a if a is not None else '?'} vs {b if b is not None else '?'}"
    return None


@register
class ReductionWithoutKeepdim(Rule):
    """SC201: a reduction over a non-leading dim, without `keepdim=True`, combined with its source."""
    code = "SC201"
    name = "reduction-without-keepdim"
    severity = "error"
    summary = "a reduction over a non-leading dim, without `keepdim=True`, combined with its source"
    doc = """\
## What it does
Flags a reduction (`sum`, `mean`, `prod`, `std`, `var`, `norm`, `logsumexp`, `amax`, `amin`,
`max`, `min`, `median`, in function or method form; `.values`/`[0]` of `max`/`min`/`median`)
over a dim that is not a leading one, without `keepdim=True`, whose result is then combined
with the tensor it was computed from: elementwise (`+ - * / ** == < >`, `torch.where`,
`maximum`, `minimum`) or in `torch.cat`/`torch.stack`.

## Why is this bad?
Without `keepdim` the reduced axis disappears, and broadcasting aligns shapes from the right. For
an `(N, C)` tensor, `x.mean(dim=1)` has shape `(N,)`, which lines up with the `C` axis of `x`,
not with `N`: the code raises when `N != C` and silently computes the wrong thing when `N == C`.
Reducing leading dims is fine (`x - x.mean(dim=0)` centers the columns), and so is the rule's
silence there. `cat`/`stack` need equal ranks, so any reduced dim breaks them.

## Example
```python
x = torch.randn(16, 8)
centered = x - x.mean(dim=1)        # RuntimeError: 8 vs 16
```

## Use instead
```python
centered = x - x.mean(dim=1, keepdim=True)
```
"""
    valid = (
        "import torch\nx = torch.randn(16, 8)\ny = x - x.mean(dim=1, keepdim=True)\n",
        "import torch\nx = torch.randn(16, 8)\ny = x - x.mean(dim=0)\n",
        "import torch\nx = torch.randn(16, 8)\ny = x - x.mean(0)\n",
        "import torch\nx = torch.randn(16, 8)\ny = x / x.sum(dim=1).unsqueeze(1)\n",
        "import torch\nx = torch.randn(16, 8)\nm = x.mean(dim=1)\nx = torch.randn(3, 16)\ny = x - m\n",
        "import torch\nx = torch.randn(8)\ny = x - x.mean(dim=-1)\n",
        "import torch\nx = torch.randn(4, 5, 6)\ny = x - x.sum(dim=(0, 1))\n",
        "import torch\nx = torch.randn(2, 3)\nv, i = torch.max(x, dim=1, keepdim=True)\ny = x - v\n",
    )
    invalid = (
        "import torch\nx = torch.randn(16, 8)\ny = x - x.mean(dim=1)  # <--\n",
        "import torch\nx = torch.randn(16, 8)\ny = x - torch.mean(x, dim=-1)  # <--\n",
        "import torch\nx = torch.randn(8, 8)\ns = x.sum(1)\ny = x / s  # <--\n",
        "import torch\nx = torch.randn(2, 3)\ns = torch.sum(x, dim=1)\nz = torch.cat([x, s], dim=1)  # <--\n",
        "import torch\nx = torch.randn(4, 4)\ny = x - x.max(dim=1).values  # <--\n",
        "def f(x):\n    return x - x.amax(dim=2)  # <--\n",
    )

    def _check(self, node, ctx, source_expr, reduced_expr, how: str) -> bool:
        pair = _reduction_pair(ctx, source_expr, reduced_expr)
        if pair is None:
            return False
        red_fact, src_fact, red = pair
        if how != "concat":
            leading = _leading(red.axes, _known_rank(src_fact.shape))
            if leading is None or leading:
                return False
        subject = short(ctx, source_expr)
        red_text = short(ctx, red.node) if red.node is not None else "the reduction"
        axes = ", ".join(str(a) for a in red.axes)
        plural = "axes" if len(red.axes) > 1 else "axis"
        if how == "concat":
            tail = f"it dropped {plural} {axes} (no keepdim=True), so its rank differs from `{subject}`'s"
        else:
            tail = (f"it dropped {plural} {axes} (no keepdim=True), so broadcasting lines it up "
                    f"with the trailing axes of `{subject}`")
        known = (src_fact.shape is not None and red_fact.shape is not None
                 and src_fact.shape.rank is not None and red_fact.shape.rank is not None)
        if known:
            align = _align_message(src_fact.shape, red_fact.shape) if how != "concat" else None
            head = (f"`{subject}` has shape {format_shape(src_fact.shape)}; `{red_text}` has shape "
                    f"{format_shape(red_fact.shape)}" + (f"; they align as {align}" if align else ""))
            message = f"{head}: {tail}; pass keepdim=True"
        else:
            message = f"`{red_text}` is combined with `{subject}`, but {tail}; pass keepdim=True"
        ctx.report(node, message)
        return True

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Arithmetic between a tensor and its own reduction."""
        if not isinstance(node.operator, ARITHMETIC_OPERATORS):
            return
        if not self._check(node, ctx, node.left, node.right, "elementwise"):
            self._check(node, ctx, node.right, node.left, "elementwise")

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        """Comparisons between a tensor and its own reduction."""
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
            return
        right = node.comparisons[0].comparator
        if not self._check(node, ctx, node.left, right, "elementwise"):
            self._check(node, ctx, right, node.left, "elementwise")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """torch.where/maximum/minimum/cat/stack with a tensor and its reduction."""
        qual = ctx.qualname(node.func)
        if qual is None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("maximum", "minimum", "where"):
                args = [a.value for a in node.args if a.keyword is None and not a.star]
                operands = [func.value] + args
                self._pairs(node, ctx, operands, "elementwise")
            return
        if qual in _CONCAT_FUNCS:
            if not node.args or not isinstance(node.args[0].value, (cst.List, cst.Tuple)):
                return
            elems = [e.value for e in node.args[0].value.elements if not isinstance(e, cst.StarredElement)]
            self._pairs(node, ctx, elems, "concat")
        elif qual in ("torch.where", "torch.maximum", "torch.minimum"):
            operands = [a.value for a in node.args if a.keyword is None and not a.star]
            if qual == "torch.where":
                operands = operands[1:]
            self._pairs(node, ctx, operands, "elementwise")

    def _pairs(self, node, ctx, operands, how) -> None:
        for a in operands:
            for b in operands:
                if a is not b and self._check(node, ctx, a, b, how):
                    return
