"""SC206 return-shape-mismatch: returned tensor whose inferred shape contradicts the jaxtyping return
annotation."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.shape.dims import dims_differ
from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.facts import TENSOR
from shapecheck.shapes import Shape, format_shape


@register
class ReturnShapeMismatch(Rule):
    """SC206: returned tensor whose inferred shape contradicts the jaxtyping return annotation."""
    code = "SC206"
    name = "return-shape-mismatch"
    severity = "error"
    summary = "returned tensor whose inferred shape contradicts the jaxtyping return annotation"
    doc = """\
## What it does
Compares the shape inferred for a returned tensor with the function's jaxtyping return
annotation (`-> Float[Tensor, "b c"]`): a different rank, two different sizes, or two different
annotation names at the same axis are flagged.

## Why is this bad?
The annotation is a promise to every caller (and, under `@shapecheck.check` or jaxtyping's
runtime checking, a check that fails at run time). A function that returns something else
breaks the callers that trust it.

## Example
```python
def pool(x: Float[Tensor, "b t c"]) -> Float[Tensor, "b c"]:
    return x.mean(dim=2)     # shape (b, t)
```

## Use instead
```python
def pool(x: Float[Tensor, "b t c"]) -> Float[Tensor, "b c"]:
    return x.mean(dim=1)
```
"""
    valid = (
        "from jaxtyping import Float\nfrom torch import Tensor\n\n"
        "def pool(x: Float[Tensor, 'b t c']) -> Float[Tensor, 'b c']:\n    return x.mean(dim=1)\n",
        "from jaxtyping import Float\nfrom torch import Tensor\n\n"
        "def f(x: Float[Tensor, 'b c']) -> Float[Tensor, '*batch c']:\n    return x\n",
        "from jaxtyping import Float\nfrom torch import Tensor\n\n"
        "def f(x) -> Float[Tensor, 'b c']:\n    return x.sum(0)\n",
    )
    invalid = (
        "from jaxtyping import Float\nfrom torch import Tensor\n\n"
        "def pool(x: Float[Tensor, 'b t c']) -> Float[Tensor, 'b c']:\n    return x.mean(dim=2)  # <--\n",
        "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n\n"
        "def make() -> Float[Tensor, '3 4']:\n    return torch.zeros(4, 3)  # <--\n",
    )

    def visit_Return(self, node: cst.Return, ctx) -> None:
        """A returned tensor against the return annotation."""
        fn = ctx.function
        if fn is None or node.value is None or fn.returns is None:
            return
        want = annotation_fact(fn.returns.annotation, ctx.imports)
        if want is None or want.shape is None:
            return
        got = ctx.fact(node.value)
        if got.kind != TENSOR or got.shape is None:
            return
        problem = _shape_conflict(want.shape, got.shape)
        if problem is None:
            return
        ctx.report(node, f"`{short(ctx, node.value)}` has shape {format_shape(got.shape)} but "
                         f"`{fn.name.value}` promises {format_shape(want.shape)}: {problem}")


def _shape_conflict(want: Shape, got: Shape) -> Optional[str]:
    """Why ``got`` cannot be ``want``, or ``None`` when it might be."""
    if got.rank is None:
        return None
    if want.rest_at is None:
        if want.rank != got.rank:
            return f"rank {got.rank} instead of {want.rank}"
        pairs = list(enumerate(zip(want.dims, got.dims)))
    else:
        lead, tail = want.dims[: want.rest_at], want.dims[want.rest_at:]
        if len(lead) + len(tail) > got.rank:
            return f"rank {got.rank} is less than the {len(lead) + len(tail)} named axes"
        pairs = list(enumerate(zip(lead, got.dims[: len(lead)])))
        if tail:
            pairs += [(got.rank - len(tail) + i, p) for i, p in enumerate(zip(tail, got.dims[-len(tail):]))]
    for axis, (w, g) in pairs:
        if dims_differ(w, g):
            return f"axis {axis} is {g}, not {w}"
    return None
