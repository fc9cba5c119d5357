"""SC605 inverse-then-matmul: `torch.inverse(A) @ b`: solve the system instead of forming the inverse."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.helpers import fix_safety
from shapecheck.rules.helpers.calls import method_call, positional, torch_name, torch_root
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import TENSOR
from shapecheck.semantic.torch_api import MATRIX_INVERSES

# the products this rule rewrites to a solve: its choice, not a table of torch
_MATMULS = {"matmul", "mm"}


def _inverse_operand(ctx, expr: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """For ``torch.inverse(A)``/``torch.linalg.inv(A)``/``A.inverse()``: ``(A, via_function)``."""
    if type(expr) is not cst.Call:
        return None
    name = torch_name(ctx, expr.func)
    args = positional(expr)
    if name in MATRIX_INVERSES and len(args) == 1 and len(expr.args) == 1:
        return args[0], True
    call = method_call(expr)
    if call is not None and call[1] == "inverse" and not expr.args and name is None:
        receiver_fact = ctx.fact(call[0])
        if receiver_fact.kind == TENSOR:
            return call[0], False
    return None


@register
class InverseThenMatmul(Rule):
    """SC605: `torch.inverse(A) @ b`: solve the system instead of forming the inverse."""
    code = "SC605"
    needs = ("inv",)
    name = "inverse-then-matmul"
    severity = "warning"
    summary = "`torch.inverse(A) @ b`: solve the system instead of forming the inverse"
    fixable = True
    doc = """\
## What it does
Flags a matrix product whose left operand is an explicit inverse: `torch.inverse(A) @ b`,
`torch.linalg.inv(A) @ b`, `A.inverse() @ b`, and the same with `torch.matmul`/`torch.mm`.

## Why is this bad?
Forming the inverse costs more than solving the system and loses accuracy when `A` is
ill-conditioned; the product then amplifies the error. `torch.linalg.solve(A, b)` factorises `A`
once and solves directly, faster and more accurately, and on a batch too.

## Example
```python
x = torch.inverse(A) @ b
```

## Use instead
```python
x = torch.linalg.solve(A, b)
```
The fix rewrites the product when the shapes are known and mean the same thing for both
(`A` a matrix and `b` a vector or matrix, or a batch of matrices of the same rank). It is
unsafe (`--unsafe-fixes`): `solve` rounds differently, so the values and their gradients change
in the last digits, which matters to a program that prints or compares them exactly.
"""
    valid = (
        "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.linalg.solve(A, b)\n",
        "import torch\nA = torch.randn(3, 3)\nA_inv = torch.inverse(A)\n",
        "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3, 3)\ny = b @ torch.inverse(A)\n",
        "import numpy as np\nA = np.eye(3)\nb = np.ones(3)\nx = np.linalg.inv(A) @ b\n",
    )
    invalid = (
        Example(
            "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.inverse(A) @ b  # <--\n",
            unsafe_fixed="import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\n"
                         "x = torch.linalg.solve(A, b)  # <--\n",
        ),
        Example(
            "import torch\nA = torch.randn(4, 4)\nB = torch.randn(4, 2)\n"
            "X = torch.matmul(torch.linalg.inv(A), B)  # <--\n",
            unsafe_fixed="import torch\nA = torch.randn(4, 4)\nB = torch.randn(4, 2)\n"
                         "X = torch.linalg.solve(A, B)  # <--\n",
        ),
        Example(
            "import torch\nA = torch.randn(2, 3, 3)\nb = torch.randn(2, 3, 1)\nx = A.inverse() @ b  # <--\n",
            unsafe_fixed="import torch\nA = torch.randn(2, 3, 3)\nb = torch.randn(2, 3, 1)\n"
                         "x = torch.linalg.solve(A, b)  # <--\n",
        ),
    )

    def _report(self, node, inverse, b, ctx) -> None:
        a, via_function = inverse
        fix = None
        root = torch_root(ctx)
        if root is not None and self._same_meaning(ctx.fact(a), ctx.fact(b)) and self._module_name(ctx, node, root):
            replacement = cst.parse_expression(f"{root}.linalg.solve(a, b)")
            replacement = replacement.with_changes(
                args=[cst.Arg(a), cst.Arg(b)],
            )
            # Unsafe: `solve` rounds differently from `inverse` then `@`, so the values (and
            # their gradients) change in the last digits, which a program may print or compare.
            fix = Fix(node, replacement, safe=False)
        ctx.report(
            node,
            f"`{short(ctx, node, 50)}` forms the explicit inverse of `{short(ctx, a)}` and then "
            f"multiplies: slower and less accurate than `torch.linalg.solve("
            f"{short(ctx, a)}, {short(ctx, b)})`, which solves the system directly",
            fix=fix,
        )

    @staticmethod
    def _module_name(ctx, node: cst.CSTNode, root: str) -> bool:
        """True when ``root`` (the module's ``import torch`` name) means the same at ``node``:
        not a parameter or local of the function (``def f(torch): ...``)."""
        place = fix_safety.place_of(ctx, node)
        if place is None:
            return False
        return fix_safety.name_scope(place, root) == (
            fix_safety.LOCAL if place.scope is None else fix_safety.FREE
        )

    @staticmethod
    def _same_meaning(a, b) -> bool:
        """True when ``inv(A) @ b`` and ``solve(A, b)`` agree for these shapes."""
        if a.kind != TENSOR or b.kind != TENSOR or a.shape is None or b.shape is None:
            return False
        ra, rb = a.shape.rank, b.shape.rank
        if ra is None or rb is None:
            return False
        if ra == 2:
            return rb in (1, 2)
        return ra > 2 and rb == ra

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """``torch.inverse(A) @ b``."""
        if type(node.operator) is not cst.MatrixMultiply:
            return
        inverse = _inverse_operand(ctx, node.left)
        if inverse is not None:
            self._report(node, inverse, node.right, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``torch.matmul(torch.inverse(A), b)``, ``torch.mm`` and the method forms."""
        name = torch_name(ctx, node.func)
        args = positional(node)
        if name in _MATMULS and len(args) == 2 and len(node.args) == 2:
            inverse = _inverse_operand(ctx, args[0])
            if inverse is not None:
                self._report(node, inverse, args[1], ctx)
            return
        call = method_call(node)
        if call is not None and call[1] in _MATMULS and len(args) == 1 and len(node.args) == 1 and name is None:
            inverse = _inverse_operand(ctx, call[0])
            if inverse is not None:
                self._report(node, inverse, args[0], ctx)
