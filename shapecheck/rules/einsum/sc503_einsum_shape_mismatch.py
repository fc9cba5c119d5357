"""SC503 einsum-shape-mismatch: einsum term that does not fit its operand's rank, or an index bound to
two sizes."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.einsum_parser import ELLIPSIS
from shapecheck.errors import EinsumOperandCountError, EinsumShapeError
from shapecheck.generic_dims import broadcast_condition, independent
from shapecheck.rules.base import Rule, register
from shapecheck.rules.einsum.literal_specs import literal_offset, parse_spec, spec_site
from shapecheck.semantic.facts import TENSOR
from shapecheck.shapes import Dim, Shape, format_dim


#: heads of shape (B, n_head, T, C // n_head) in a function
_HEADS = (
    "import torch\ndef heads(x, n_head):\n    B, T, C = x.size()\n"
    "    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)\n"
)

#: q, k, v split into heads by a reshape of a projection: (B, num_heads, N, head_dim)
_TIMM = (
    "import torch\nimport torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, dim, num_heads):\n"
    "        super().__init__()\n        self.num_heads = num_heads\n        self.head_dim = dim // num_heads\n"
    "        self.qkv = nn.Linear(dim, dim * 3)\n    def forward(self, x):\n        B, N, C = x.shape\n"
    "        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)\n"
    "        q, k, v = qkv.unbind(0)\n"
)

#: q, k, v of (b, h, n, d) read by an einops pattern from a query and a key-value projection
_CAIT = (
    "import torch\nimport torch.nn as nn\nfrom einops import rearrange\nclass A(nn.Module):\n"
    "    def __init__(self, dim, heads):\n        super().__init__()\n        self.heads = heads\n"
    "        self.to_q = nn.Linear(dim, dim)\n        self.to_kv = nn.Linear(dim, dim * 2)\n"
    "    def forward(self, x):\n        qkv = (self.to_q(x), *self.to_kv(x).chunk(2, dim=-1))\n"
    "        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)\n"
)


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
annotations; two different annotation names for one index are flagged too. Two different sizes
read from one tensor (`T` and `C // self.n_head` of `B, T, C = x.size()`) are generic,
independent of each other, and so is a config value that a view splits off the last dim
(`self.head_dim` of `qkv.reshape(B, N, 3, self.num_heads, self.head_dim)`) from the sizes the
view keeps (`B`, `N`): one index bound to two of them is flagged, and the message names the
exception ("raises unless `T` equals `C//self.n_head` or one of them is 1"). Sizes from a
config, an attribute, a parameter or another tensor may be equal by construction: never flagged.
`q, k, v = qkv` binds the rows of `qkv` (its dims after the first), and an operand of unknown
kind counts with the shape its uses gave (einsum takes only tensors). The sizes a module class
takes in `__init__` are the ints every construction of the class in the file gives them
(`NodeProjection(65, 38)(torch.randn(2, 4, 65, 3))`) when its methods are checked with the
facts of their calls (see SC203), through helper methods (`self.mul(x_ft, self.weights)`) and
`torch.fft` transforms (`rfft` gives `n // 2 + 1` along its dim).

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
        _HEADS + "    return torch.einsum('bhtd,bhsd->bhts', q, q)\n",
        "import torch\ndef f(x, w):\n    B, T, C = x.size()\n    D, E = w.size()\n"
        "    return torch.einsum('btc,de->bte', x.contiguous(), w.contiguous())\n",
        # unpacking the stacked q, k, v along dim 0; the spec reads the key untransposed
        "import torch\nimport torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, c, h):\n"
        "        super().__init__()\n        self.h = h\n        self.qkv = nn.Linear(c, 3 * c)\n"
        "    def forward(self, x):\n        b, n, c = x.shape\n"
        "        q, k, v = self.qkv(x).reshape(b, n, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)\n"
        "        return torch.einsum('bhqd,bhkd->bhqk', q, k)\n",
        # heads read by an einops pattern from a query and the chunks of a key-value projection
        _CAIT + "        return torch.einsum('b h i d, b h j d -> b h i j', q, k)\n",
        # the heads split off the features of one read, read in the order that fits
        _TIMM + "        return torch.einsum('bhnd,bhmd->bhnm', q, k)\n",
        # one operand of unknown kind whose view gave its rank
        "import torch\ndef f(x, p):\n    x = x.reshape(shape=(x.shape[0], 4, 4, p, p, 3))\n"
        "    return torch.einsum('nhwpqc->nchpwq', x)\n",
        # the sizes every construction of the file gives `__init__`, read in the order that fits
        "import torch\nimport torch.nn as nn\nclass NodeProjection(nn.Module):\n"
        "    def __init__(self, n_in, n_out):\n        super().__init__()\n"
        "        self.A = nn.Parameter(torch.randn(n_in, n_out))\n    def forward(self, x):\n"
        "        return torch.einsum('ncvl,vw->ncwl', x, self.A)\n"
        "y = NodeProjection(65, 38)(torch.randn(2, 4, 65, 3))\n",
        "import torch\nimport torch.nn as nn\nclass Spectral(nn.Module):\n"
        "    def __init__(self, cin, cout, modes):\n        super().__init__()\n        self.modes = modes\n"
        "        self.w = nn.Parameter(torch.rand(cin, cout, modes, dtype=torch.cfloat))\n"
        "    def mul(self, a, w):\n        return torch.einsum('bix,iox->box', a, w)\n"
        "    def forward(self, x):\n        x_ft = torch.fft.rfft(x)\n"
        "        return self.mul(x_ft[:, :, :self.modes], self.w)\n"
        "y = Spectral(4, 8, 6)(torch.randn(2, 4, 32))\n",
    )
    invalid = (
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 5, 6)\n"
        "c = torch.einsum('bij,bjk->bik', a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ijk->k', a)  # <--\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(q: Float[torch.Tensor, 'b n d'], k: Float[torch.Tensor, 'b m e']):\n"
        "    return torch.einsum('bnd,bmd->bnm', q, k)  # <--\n",
        # the key's term not transposed: d (C // n_head) against t (T)
        _HEADS + "    return torch.einsum('bhtd,bhds->bhts', q, q)  # <--\n",
        # the key transposed and then read as if it were not: d is c//h in q but n in k_t
        "import torch\nimport torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, c, h):\n"
        "        super().__init__()\n        self.h = h\n        self.qkv = nn.Linear(c, 3 * c)\n"
        "    def forward(self, x):\n        b, n, c = x.shape\n"
        "        q, k, v = self.qkv(x).reshape(b, n, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)\n"
        "        k_t = k.transpose(-2, -1)\n        return torch.einsum('bhqd,bhkd->bhqk', q, k_t)  # <--\n",
        # the key read as if transposed: d is the head size in q but the length n in k
        _CAIT + "        return torch.einsum('b h i d, b h d j -> b h i j', q, k)  # <--\n",
        # the key read untransposed: d is self.head_dim in q but N in k
        _TIMM + "        return torch.einsum('bhnd,bhdm->bhnm', q, k)  # <--\n",
        # the patches reshaped to 4 dims for a 6-index term (keyword `shape=`)
        "import torch\ndef f(x, p):\n    x = x.reshape(shape=(x.shape[0], 4, 4, p * p * 3))\n"
        "    return torch.einsum('nhwpqc->nchpwq', x)  # <--\n",
        # a 2-D operand (of a parameter whose rank its unpacking gave) for a batched spec
        "import torch\ndef f(x, w):\n    b, n, d = x.shape\n    y = x.reshape(b * n, d)\n"
        "    return torch.einsum('bij,bjk->bik', y, w)  # <--\n",
        # with the sizes every construction of the file gives `__init__`: the adjacency stored (out, in)
        # but read (in, out), v is 65 against 38; the spectral weights stored (out, in, modes), i is 4 against 8
        "import torch\nimport torch.nn as nn\nclass NodeProjection(nn.Module):\n"
        "    def __init__(self, n_in, n_out):\n        super().__init__()\n"
        "        self.A = nn.Parameter(torch.randn(n_out, n_in))\n    def forward(self, x):\n"
        "        return torch.einsum('ncvl,vw->ncwl', x, self.A)  # <--\n"
        "y = NodeProjection(65, 38)(torch.randn(2, 4, 65, 3))\n",
        "import torch\nimport torch.nn as nn\nclass Spectral(nn.Module):\n"
        "    def __init__(self, cin, cout, modes):\n        super().__init__()\n        self.modes = modes\n"
        "        self.w = nn.Parameter(torch.rand(cout, cin, modes, dtype=torch.cfloat))\n"
        "    def mul(self, a, w):\n        return torch.einsum('bix,iox->box', a, w)  # <--\n"
        "    def forward(self, x):\n        x_ft = torch.fft.rfft(x)\n"
        "        return self.mul(x_ft[:, :, :self.modes], self.w)\n"
        "y = Spectral(4, 8, 6)(torch.randn(2, 4, 32))\n",
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
        # an operand of unknown kind is a tensor here (einsum takes nothing else): its shape counts
        shapes = [f.shape if f.kind in (TENSOR, None) and f.shape is not None else Shape.unknown() for f in facts]
        if all(s.rank is None and not s.dims for s in shapes):
            return
        try:
            spec.output_shape(*shapes)
        except EinsumShapeError as err:
            if not err.certain and not all(isinstance(s, str) for s in err.sizes):
                return
            offset = literal_offset(site.literal, _position(spec, err.operands, err.index))
            ctx.report(site.literal, err.reason, offset=offset)
            return
        except EinsumOperandCountError:
            return
        clash = _generic_clash(spec.inputs, shapes)
        if clash is None:
            return
        label, (a, i), (b, k) = clash
        condition = broadcast_condition(a, b)
        ctx.report(site.literal, f"index {label} is {format_dim(a)} in operand {i} but {format_dim(b)} in operand {k}, "
                                 f"sizes that differ for generic sizes: torch raises RuntimeError unless {condition}",
                   offset=literal_offset(site.literal, _position(spec, (i, k), label)), condition=condition)


def _label_dims(labels: tuple, shape: Shape) -> list[tuple[str, Dim]]:
    """``(label, dim)`` for each label of one term whose dim the shape of known rank gives
    (labels before an ellipsis from the front, those after it from the back)."""
    if shape.rest_at is not None:
        return []
    if ELLIPSIS not in labels:
        return list(zip(labels, shape.dims)) if len(labels) == len(shape.dims) else []
    cut = labels.index(ELLIPSIS)
    head, tail = labels[:cut], labels[cut + 1:]
    if len(head) + len(tail) > len(shape.dims):
        return []
    return list(zip(head, shape.dims)) + list(zip(tail, shape.dims[len(shape.dims) - len(tail):]))


def _generic_clash(inputs: tuple, shapes: list[Shape]) -> Optional[tuple[str, tuple[Dim, int], tuple[Dim, int]]]:
    """The first index bound to two independent sizes in two operands (``T`` and ``C//nh`` of
    one read, see :mod:`shapecheck.generic_dims`), with each size and its operand."""
    seen: dict[str, list[tuple[Dim, int]]] = {}
    for k, (labels, shape) in enumerate(zip(inputs, shapes)):
        for label, d in _label_dims(labels, shape):
            sizes = seen.setdefault(label, [])
            if d is not None and d != 1 and all(d != e for e, _i in sizes):
                sizes.append((d, k))
    for label, sizes in seen.items():
        if len(sizes) == 2 and sizes[0][1] != sizes[1][1] and independent(sizes[0][0], sizes[1][0]):
            return label, sizes[0], sizes[1]
    return None


def _position(spec, operands: tuple[int, ...], index: Optional[str]) -> Optional[int]:
    """Where in the spec the fault with the operands at ``operands`` and the label ``index``
    shows: the index in the last operand's term, or that term."""
    if not operands or not spec.spans:
        return None
    k = operands[-1]
    if k >= len(spec.spans):
        return None
    start, end = spec.spans[k]
    if index and index != "...":
        found = spec.text.find(index, start, end) if spec.form == "letters" else -1
        if spec.form != "letters":
            for pos in range(start, end):
                if spec.text.startswith(index, pos) and (pos == start or not spec.text[pos - 1].isalnum()):
                    found = pos
                    break
        if found >= 0:
            return found
    return start
