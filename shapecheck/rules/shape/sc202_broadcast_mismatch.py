"""SC202 broadcast-mismatch: elementwise op on tensors whose known shapes cannot broadcast."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from shapecheck.broadcast import InvalidShapeError, broadcast_shapes
from shapecheck.errors import BroadcastError
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, COMPARISON_OPERATORS
from shapecheck.semantic.facts import TENSOR
from shapecheck.semantic.torch_api import BROADCASTING_FUNCTIONS
from shapecheck.shapes import Shape, format_shape



@register
class BroadcastMismatch(Rule):
    """SC202: elementwise op on tensors whose known shapes cannot broadcast."""
    code = "SC202"
    name = "broadcast-mismatch"
    severity = "error"
    summary = "elementwise op on tensors whose known shapes cannot broadcast"
    doc = """\
## What it does
Flags elementwise operations (`+ - * / // % **`, comparisons, `torch.add`/`mul`/`where`/
`maximum`/..., and the method forms) whose operand shapes are known (literal sizes, or jaxtyping
annotation names) and cannot broadcast. Two different annotation names (`n` vs `m`) count as a
mismatch: the annotations promise nothing that makes them equal.

## Why is this bad?
Broadcasting aligns shapes on the right; in each column the sizes must be equal or one of them
1. Otherwise torch raises `RuntimeError: The size of tensor a (3) must match the size of tensor
b (2) at non-singleton dimension 1`.

## Example
```python
a = torch.zeros(2, 3)
b = torch.zeros(2)
c = a + b           # 3 vs 2 in the last column
```

## Use instead
```python
c = a + b[:, None]  # (2, 3) + (2, 1)
```
"""
    valid = (
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(3)\nc = a + b\n",
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(2)\nc = a + b[:, None]\n",
        "import torch\na = torch.zeros(2, 1, 4)\nb = torch.zeros(5, 1)\nc = a * b\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(x: Float[torch.Tensor, 'b c'], y: Float[torch.Tensor, 'c']):\n    return x + y\n",
        "import torch\nfrom jaxtyping import Float\n\ndef f(x: Float[torch.Tensor, 'b c']):\n"
        "    return x + torch.zeros(3)\n",
    )
    invalid = (
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(2)\nc = a + b  # <--\n",
        "import torch\na = torch.ones(4, 5)\nb = torch.ones(4, 4)\nc = torch.where(a > 0, a, b)  # <--\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(x: Float[torch.Tensor, 'n d'], y: Float[torch.Tensor, 'm d']):\n    return x - y  # <--\n",
    )

    def _check(self, node, ctx, operands: Sequence[cst.BaseExpression]) -> None:
        facts = [ctx.fact(o) for o in operands]
        tensors = [(o, f) for o, f in zip(operands, facts) if f.kind == TENSOR and f.shape is not None]
        if len(tensors) < 2:
            return
        for _o, f in tensors:
            if f.reduction is not None:
                for _o2, g in tensors:
                    if g is f.reduction.source:
                        return
        try:
            broadcast_shapes(*[f.shape for _o, f in tensors])
        except InvalidShapeError:
            return  # a size torch rejects is SC103's finding (the inference drops such sizes)
        except BroadcastError as err:
            if not err.certain and not self._two_symbols(err, [f.shape for _o, f in tensors]):
                return
            names = ", ".join(f"`{short(ctx, o, 24)}` {format_shape(f.shape)}" for o, f in tensors)
            ctx.report(node, f"{names}: {err.reason}")

    @staticmethod
    def _two_symbols(err: BroadcastError, shapes: Sequence[Shape]) -> bool:
        axis = err.axis
        dims = []
        for s in shapes:
            tail = s.trailing()
            if len(tail) >= -axis:
                dims.append(tail[axis])
        syms = {d for d in dims if isinstance(d, str)}
        ints = [d for d in dims if isinstance(d, int) and d != 1]
        return len(syms) >= 2 and not ints

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Arithmetic operators."""
        if isinstance(node.operator, ARITHMETIC_OPERATORS):
            self._check(node, ctx, [node.left, node.right])

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        """Comparison operators."""
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
            self._check(node, ctx, [node.left, node.comparisons[0].comparator])

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """torch functions and tensor methods that broadcast."""
        qual = ctx.qualname(node.func)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual is not None and qual.startswith("torch.") and qual[6:] in BROADCASTING_FUNCTIONS:
            self._check(node, ctx, args)
        elif qual is None and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "add", "sub", "mul", "div", "maximum", "minimum", "add_", "sub_", "mul_", "div_") and args:
            if ctx.fact(node.func.value).kind == TENSOR:
                self._check(node, ctx, [node.func.value, args[0]])
