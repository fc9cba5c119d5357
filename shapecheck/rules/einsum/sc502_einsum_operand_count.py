"""SC502 einsum-operand-count: einsum called with a different number of operands than its spec has
terms."""

from __future__ import annotations

import libcst as cst

from shapecheck.errors import EinsumOperandCountError, EinsumShapeError
from shapecheck.rules.base import Rule, register
from shapecheck.rules.einsum.literal_specs import literal_offset, parse_spec, spec_site
from shapecheck.shapes import Shape


@register
class EinsumOperandCount(Rule):
    """SC502: einsum called with a different number of operands than its spec has terms."""
    code = "SC502"
    needs = ("einsum",)
    name = "einsum-operand-count"
    severity = "error"
    summary = "einsum called with a different number of operands than its spec has terms"
    doc = """\
## What it does
Counts the input terms of a literal einsum spec and the operands passed, and flags a mismatch.

## Why is this bad?
torch raises `RuntimeError: einsum(): more operands were provided than specified in the
equation` (or fewer).

## Example
```python
c = torch.einsum("ij,jk->ik", a)       # two terms, one operand
```

## Use instead
```python
c = torch.einsum("ij,jk->ik", a, b)
```
"""
    valid = (
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\nc = torch.einsum('ij,jk->ik', a, b)\n",
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\nc = torch.einsum('ij,jk->ik', [a, b])\n",
        "import torch\nops = [torch.randn(2, 3), torch.randn(3, 4)]\nc = torch.einsum('ij,jk->ik', *ops)\n",
    )
    invalid = (
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ij,jk->ik', a)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ij->ji', a, a)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """A literal spec with another number of terms than operands."""
        site = spec_site(node, ctx)
        if site is None or not site.countable:
            return
        spec, _err = parse_spec(site)
        if spec is None:
            return
        expected, given = len(spec.inputs), len(site.operands)
        if expected == given:
            return
        try:
            spec.output_shape(*[Shape.unknown() for _ in site.operands])
        except EinsumOperandCountError as err:
            ctx.report(site.literal, err.reason, offset=literal_offset(site.literal, err.position))
            return
        except EinsumShapeError:
            return
        ctx.report(site.literal, f'einsum "{site.spec}": the spec has {expected} input terms but '
                                 f"{given} operands were given")
