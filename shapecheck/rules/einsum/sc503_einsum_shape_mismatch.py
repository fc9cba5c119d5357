"""SC503 einsum-shape-mismatch: einsum term that does not fit its operand's rank, or an index bound to
two sizes."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.errors import EinsumOperandCountError, EinsumShapeError
from shapecheck.rules.base import Rule, register
from shapecheck.rules.einsum.literal_specs import literal_offset, parse_spec, spec_site
from shapecheck.semantic.facts import TENSOR
from shapecheck.shapes import Shape


@register
class EinsumShapeMismatch(Rule):
    """SC503: einsum term that does not fit its operand's rank, or an index bound to two sizes."""
    code = "SC503"
    needs = ("einsum",)
    name = "einsum-shape-mismatch"
    severity = "error"
    summary = "einsum term that does not fit its operand's rank, or an index bound to two sizes"
    doc = """\
## What it does
Checks each operand's known shape against its term of a literal einsum spec: the term must have
one index per dim (an ellipsis covering the rest), and an index must have one size everywhere
it appears (a size of 1 broadcasts). Sizes come from literal factories and jaxtyping
annotations; two different annotation names for one index are flagged too.

## Why is this bad?
torch raises `RuntimeError: einsum(): the number of subscripts in the equation (2) does not
match the number of dimensions (3) for operand 0` or `subscript j has size 5 for operand 1
which does not broadcast with previously seen size 4`.

## Example
```python
a = torch.randn(2, 3, 4)
b = torch.randn(2, 5, 6)
c = torch.einsum("bij,bjk->bik", a, b)   # j is 4 in a but 5 in b
```

## Use instead
```python
b = torch.randn(2, 4, 6)
c = torch.einsum("bij,bjk->bik", a, b)
```
"""
    valid = (
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 4, 6)\nc = torch.einsum('bij,bjk->bik', a, b)\n",
        "import torch\na = torch.randn(2, 3, 4)\nc = torch.einsum('b...->b', a)\n",
        "import torch\na = torch.randn(1, 4)\nb = torch.randn(3, 4)\nc = torch.einsum('ij,ij->ij', a, b)\n",
        "def f(a, b):\n    import torch\n    return torch.einsum('bij,bjk->bik', a, b)\n",
    )
    invalid = (
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 5, 6)\n"
        "c = torch.einsum('bij,bjk->bik', a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ijk->k', a)  # <--\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(q: Float[torch.Tensor, 'b n d'], k: Float[torch.Tensor, 'b m e']):\n"
        "    return torch.einsum('bnd,bmd->bnm', q, k)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Operand shapes against the terms of a literal spec."""
        site = spec_site(node, ctx)
        if site is None or not site.countable:
            return
        spec, _err = parse_spec(site)
        if spec is None or len(spec.inputs) != len(site.operands):
            return
        facts = [ctx.fact(o) for o in site.operands]
        shapes = [f.shape if f.kind == TENSOR and f.shape is not None else Shape.unknown() for f in facts]
        if all(s.rank is None and not s.dims for s in shapes):
            return
        try:
            spec.output_shape(*shapes)
        except EinsumShapeError as err:
            if not err.certain and not all(isinstance(s, str) for s in err.sizes):
                return
            ctx.report(site.literal, err.reason, offset=literal_offset(site.literal, _position(spec, err)))
        except EinsumOperandCountError:
            return


def _position(spec, err: EinsumShapeError) -> Optional[int]:
    """Where in the spec the fault shows: the index in the last operand's term, or that term."""
    if not err.operands or not spec.spans:
        return None
    k = err.operands[-1]
    if k >= len(spec.spans):
        return None
    start, end = spec.spans[k]
    if err.index and err.index != "...":
        found = spec.text.find(err.index, start, end) if spec.form == "letters" else -1
        if spec.form != "letters":
            for pos in range(start, end):
                if spec.text.startswith(err.index, pos) and (pos == start or not spec.text[pos - 1].isalnum()):
                    found = pos
                    break
        if found >= 0:
            return found
    return start
