"""SC501 einsum-syntax: einsum spec that does not parse."""

from __future__ import annotations

import libcst as cst

from shapecheck.errors import EinsumOperandCountError
from shapecheck.rules.base import Rule, register
from shapecheck.rules.einsum.literal_specs import literal_offset, parse_spec, spec_site


@register
class EinsumSyntax(Rule):
    """SC501: einsum spec that does not parse."""
    code = "SC501"
    needs = ("einsum",)
    name = "einsum-syntax"
    severity = "error"
    summary = "einsum spec that does not parse"
    doc = """\
## What it does
Parses the literal spec of `torch.einsum`, `shapecheck.einsum` and `einops.einsum` with the
shared einsum grammar and flags a spec that torch (or einops) would reject: a character that is
not an index, an output index used twice, an output index that no input has, a misplaced `->`
or ellipsis. The diagnostic points at the offending character.

## Why is this bad?
torch raises `RuntimeError: einsum(): ...` (or einops an `EinsumError`) when the line runs, often
deep inside a training step.

## Example
```python
c = torch.einsum("ij,jk->ikk", a, b)   # k twice in the output
```

## Use instead
```python
c = torch.einsum("ij,jk->ik", a, b)
```
"""
    valid = (
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\nc = torch.einsum('ij,jk->ik', a, b)\n",
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ii', torch.randn(3, 3))\n",
        "import torch\nx = torch.randn(2, 3, 4)\nc = torch.einsum('...ij->...ji', x)\n",
        "import torch\nx = torch.randn(2, 3)\nc = torch.einsum('ij', x)\n",
        "import einops\nimport torch\nq = torch.randn(2, 4, 8)\nk = torch.randn(2, 5, 8)\n"
        "s = einops.einsum(q, k, 'b i d, b j d -> b i j')\n",
    )
    invalid = (
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\nc = torch.einsum('ij,jk->ikk', a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\nc = torch.einsum('ij,jk->il', a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ij->i1', a)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """A literal spec that does not parse."""
        site = spec_site(node, ctx)
        if site is None:
            return
        _spec, err = parse_spec(site)
        if err is None or isinstance(err, EinsumOperandCountError):
            return
        ctx.report(site.literal, err.reason, offset=literal_offset(site.literal, err.position))
