"""Einsum rules (SC5xx): literal specs checked by the shared parser (``einsum_parser``).

``torch.einsum``/``torch.functional.einsum`` use torch's letter grammar, ``shapecheck.einsum``
the automatic choice, ``einops.einsum`` the named-axis form with the pattern last. Diagnostics
point at the offending character inside the string literal.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.einsum_parser import parse
from shapecheck.errors import EinsumOperandCountError, EinsumShapeError, EinsumSyntaxError
from shapecheck.semantic.facts import TENSOR
from shapecheck.rules.base import Rule, register
from shapecheck.shapes import Shape

#: qualified name -> (grammar, spec is the last argument)
_EINSUM_FUNCS = {
    "torch.einsum": ("letters", False),
    "torch.functional.einsum": ("letters", False),
    "shapecheck.einsum": ("auto", False),
    "einops.einsum": ("named", True),
}


class _Site:
    """One einsum call with a literal spec: the literal node, the spec text, the operands."""

    __slots__ = ("literal", "spec", "operands", "form", "countable")

    def __init__(self, literal, spec, operands, form, countable) -> None:
        self.literal = literal
        self.spec = spec
        self.operands = operands
        self.form = form
        self.countable = countable


def _site(node: cst.Call, ctx) -> Optional[_Site]:
    qual = ctx.qualname(node.func)
    entry = _EINSUM_FUNCS.get(qual) if qual is not None else None
    if entry is None:
        return None
    form, spec_last = entry
    if qual == "shapecheck.einsum":
        form = _form_keyword(node, form)
        if form is None:
            return None
    args = [a for a in node.args if a.keyword is None]
    if not args or (args[-1] if spec_last else args[0]).star:
        return None
    literal = (args[-1] if spec_last else args[0]).value
    if not isinstance(literal, cst.SimpleString):
        return None
    try:
        spec = literal.evaluated_value
    except Exception:
        return None
    if not isinstance(spec, str):
        return None
    rest = args[:-1] if spec_last else args[1:]
    countable = not any(a.star for a in rest)
    operands = [a.value for a in rest]
    if qual.startswith("torch") and len(operands) == 1 and isinstance(operands[0], (cst.List, cst.Tuple)):
        elements = operands[0].elements
        if any(isinstance(e, cst.StarredElement) for e in elements):
            countable = False
        operands = [e.value for e in elements]
    elif qual.startswith("torch") and len(operands) == 1 and ctx.fact(operands[0]).kind != TENSOR:
        countable = False  # torch.einsum(spec, ops) with a list of operands
    return _Site(literal, spec, operands, form, countable)


def _form_keyword(node: cst.Call, default: str) -> Optional[str]:
    """The grammar a ``form=`` keyword of ``shapecheck.einsum`` asks for; ``None`` when it is
    not a literal the runtime accepts (the call is then not checked)."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "form":
            if isinstance(arg.value, cst.Name) and arg.value.value == "None":
                return default
            if isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value in ("letters", "named"):
                return arg.value.evaluated_value
            return None
    return default


def _offset(literal: cst.SimpleString, position: Optional[int]) -> Optional[tuple[int, int]]:
    """``(0, column)`` of ``spec[position]`` inside the literal, when the source maps 1:1."""
    if position is None:
        return None
    raw = literal.value
    prefix = len(literal.prefix)
    quote = len(literal.quote)
    body = raw[prefix + quote: len(raw) - quote]
    if "\\" in body or "\n" in body:
        return None
    position = min(position, len(body))
    return (0, prefix + quote + position)


def _parse(site: _Site):
    try:
        return parse(site.spec, site.form), None
    except EinsumSyntaxError as err:
        return None, err


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
        site = _site(node, ctx)
        if site is None:
            return
        _spec, err = _parse(site)
        if err is None or isinstance(err, EinsumOperandCountError):
            return
        ctx.report(site.literal, err.reason, offset=_offset(site.literal, err.position))


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
        site = _site(node, ctx)
        if site is None or not site.countable:
            return
        spec, _err = _parse(site)
        if spec is None:
            return
        expected, given = len(spec.inputs), len(site.operands)
        if expected == given:
            return
        try:
            spec.output_shape(*[Shape.unknown() for _ in site.operands])
        except EinsumOperandCountError as err:
            ctx.report(site.literal, err.reason, offset=_offset(site.literal, err.position))
            return
        except EinsumShapeError:
            return
        ctx.report(site.literal, f'einsum "{site.spec}": the spec has {expected} input terms but '
                                 f"{given} operands were given")


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
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 5, 6)\nc = torch.einsum('bij,bjk->bik', a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ijk->k', a)  # <--\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(q: Float[torch.Tensor, 'b n d'], k: Float[torch.Tensor, 'b m e']):\n"
        "    return torch.einsum('bnd,bmd->bnm', q, k)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Operand shapes against the terms of a literal spec."""
        site = _site(node, ctx)
        if site is None or not site.countable:
            return
        spec, _err = _parse(site)
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
            ctx.report(site.literal, err.reason, offset=_offset(site.literal, _position(spec, err)))
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
