"""SC201 reduction-without-keepdim: a reduction over a non-leading dim, without `keepdim=True`,
combined with its source."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.messages import reduced_here, report_unless, short
from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, COMPARISON_OPERATORS
from shapecheck.semantic.facts import FLOAT, INT, TENSOR, Fact, Reduction
from shapecheck.rules.shape.gram_norms import gram_norm
from shapecheck.rules.shape.index_drops import pair_values, python_number, without_numbers
from shapecheck.rules.shape.bound_values import branch_values, side_assignments, unchanged_between, value_before
from shapecheck.semantic.syntax import int_literal, is_number, sizes_of
from shapecheck.semantic.torch_api import BROADCASTING_FUNCTIONS, ELEMENTWISE_BINARY, ELEMENTWISE_UNARY
from shapecheck.semantic.walk import walk
from shapecheck.shapes import Shape, format_shape

# the joins whose dim argument this rule reads: its choice, not a table of torch
_CONCAT_FUNCS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack"}
# methods that broadcast their receiver to the shape of another tensor
_EXPAND_METHODS = {"expand_as", "expand", "broadcast_to"}
# the reductions whose keepdim result serves as a twin of the source's rank
_KEEPDIM_TWINS = frozenset({"sum", "mean", "amax", "amin", "std", "var", "norm", "logsumexp", "prod"})
# the reductions that return (values, indices): their `.values` (or `[0]`) with keepdim is such a twin
_TUPLE_REDUCTIONS = frozenset({"max", "min", "median", "nanmedian", "mode"})
# the calls whose result has their tensor operand's shape when every other argument is a number
_SHAPE_KEEPING_CALLS = ELEMENTWISE_UNARY | frozenset({"pow", "float", "double", "half", "bfloat16", "detach",
                                                      "clone", "contiguous"})
_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign, cst.PowerAssign,
              cst.FloorDivideAssign, cst.ModuloAssign)
# past this many dims the rank is not tried: a negative axis is then never among the leading ones
_RANKS_TRIED = 12


def _leading(axes: Sequence[int], rank: int) -> bool:
    """True when the reduced axes are exactly the leading ones (0..k-1) of a tensor of ``rank``."""
    norm = {a + rank if a < 0 else a for a in axes}
    return sorted(norm) == list(range(len(norm)))


def misaligned_unless(axes: Sequence[int], shape: Optional[Shape]) -> Optional[list[int]]:
    """``None`` when broadcasting the reduction of ``axes`` back against a tensor of ``shape`` is
    right (the reduced axes are the leading ones); else the ranks at which it would be right after
    all: ``[]`` when none, ``[1]`` for ``dim=-1`` on a tensor of unknown rank (right when 1-D)."""
    rank = shape.rank if shape is not None else None
    if rank is not None:
        return None if _leading(axes, rank) else []
    least = len(shape.dims) if shape is not None else 0
    least = max([least, 1] + [a + 1 if a >= 0 else -a for a in axes])
    exceptions = [r for r in range(least, least + _RANKS_TRIED) if _leading(axes, r)]
    if all(a >= 0 for a in axes) and exceptions:
        return None  # leading at every rank
    return exceptions


def _reduction_pair(ctx, source_expr: cst.BaseExpression, reduced_expr: cst.BaseExpression, red_fact=None,
                    side_source: Optional[Fact] = None):
    """The reduction of ``source_expr`` that ``reduced_expr`` holds, if any: of the named tensor
    itself, or of the tensor whose shape ``source_expr`` has (``x - x.mean(0)``, ``x * 2``).
    ``red_fact``: the fact ``reduced_expr`` has on one side of an ``if`` (else its fact here);
    ``side_source``: the fact the source's name has on that side."""
    if red_fact is None:
        red_fact = ctx.fact(reduced_expr)
    red = red_fact.reduction
    if red is None:
        held = _reduction_held(ctx, reduced_expr)
        return _reduction_pair(ctx, source_expr, held) if held is not None else None
    if red.source_name is None:
        return _unnamed_pair(ctx, source_expr, red_fact, red)
    root = _same_shape_root(ctx, source_expr, red.source_name)
    if root is None:
        return _twin_of_parent(ctx, source_expr, red_fact, red) or _temporary_of(ctx, source_expr, red_fact, red)
    src_fact = side_source if side_source is not None and dotted_name(root) == red.source_name else ctx.fact(root)
    if red.source is not src_fact:
        return None
    return red_fact, src_fact, red


def _reduction_held(ctx, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The name of a reduction that the name ``expr`` holds with its shape, bound just before
    to an op of it that keeps it and still holding the same value: ``x_g`` for ``x_n`` after
    ``x_n = x_g / (x_g.mean(dim=1, keepdim=True) + eps)`` (global response norm)."""
    if type(expr) is not cst.Name or not _other_name_holds_reduction(ctx, expr.value):
        return None
    bound = value_before(ctx, expr.value, expr)
    if bound is None:
        return None
    root = _reduced_root(ctx, bound)
    if type(root) is not cst.Name or root.value == expr.value or ctx.fact(root).reduction is None \
            or not unchanged_between(ctx, root.value, bound, expr):
        return None
    return root


def _other_name_holds_reduction(ctx, name: str) -> bool:
    """Whether a name bound now, other than ``name``, holds a reduction: the root that
    :func:`_reduction_held` looks for is such a name (the fact of a name is its binding's), and
    without one the costly search for the value ``name`` holds is not needed."""
    return any(f.reduction is not None and key != name for key, f in ctx.bindings.items())


def _twin_of_parent(ctx, other: cst.BaseExpression, red_fact, red: Reduction):
    """The pair for a reduction of a tensor bound just before to an elementwise function of
    another one (``e = torch.exp(x - m)``, ``m = x.amax(1, keepdim=True)``), combined with a
    keepdim reduction of that other one, which has its rank (log-sum-exp pooling's
    ``torch.log(e.mean(1)) + m``)."""
    if type(red.node) is not cst.Call or type(red.node.func) is not cst.Attribute or red.source_name is None:
        return None
    bound = value_before(ctx, red.source_name, red.node)
    parent = _strip_unary(ctx, bound) if bound is not None else None
    root = _reduced_root(ctx, parent) if parent is not None else None
    name = dotted_name(root) if root is not None else None
    if root is None or name is None:
        return None
    twin = _keepdim_twin(ctx, other, name)
    if twin is None or ctx.fact(twin) is not ctx.fact(root) or ctx.fact(red.node.func.value) is not red.source:
        return None
    return red_fact, red.source, red


def _temporary_of(ctx, source_expr: cst.BaseExpression, red_fact, red: Reduction):
    """The pair for a reduction of a name bound just before to an op that keeps the shape of a
    named tensor (``v = x.pow(2)``, then ``v = torch.mean(v, dim=1)``), combined with that tensor
    while it still holds the same value (``x * torch.rsqrt(v + eps)``)."""
    if red.source_name is None or red.node is None:
        return None
    bound = value_before(ctx, red.source_name, red.node)
    parent = _same_shape_parent(ctx, bound) if bound is not None else None
    name = dotted_name(parent) if parent is not None else None
    if parent is None or name is None or name == red.source_name or "." in name:
        return None
    root = _same_shape_root(ctx, source_expr, name)
    if root is None or not unchanged_between(ctx, name, parent, root):
        return None
    src_fact = ctx.fact(root)
    if src_fact.kind not in (TENSOR, None):
        return None
    return red_fact, src_fact, Reduction(src_fact, name, red.axes, red.node, red.default_of, red.alternatives)


def _same_shape_parent(ctx, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``x`` for an expression that has ``x``'s shape whatever its size: ``x ** 2``, ``x * 2``,
    ``x.pow(2)``, ``x.float()``, ``torch.exp(x)``, ``x.abs().square()``; else ``None``."""
    for _ in range(8):
        expr = without_numbers(ctx, expr)
        if dotted_name(expr) is not None:
            return expr
        if type(expr) is cst.BinaryOperation:
            return None
        if type(expr) is not cst.Call or any(a.star or a.keyword is not None for a in expr.args):
            return None
        qual = ctx.qualname(expr.func)
        if qual is not None and qual.startswith("torch.") and expr.args \
                and qual.rsplit(".", 1)[-1] in _SHAPE_KEEPING_CALLS:
            rest = [a.value for a in expr.args[1:]]
            operand = expr.args[0].value
        elif qual is None and type(expr.func) is cst.Attribute and expr.func.attr.value in _SHAPE_KEEPING_CALLS:
            rest = [a.value for a in expr.args]
            operand = expr.func.value
        else:
            return None
        if not all(is_number(a) for a in rest):
            return None
        expr = operand
    return None


def _strip_unary(ctx, expr: cst.BaseExpression) -> cst.BaseExpression:
    """``x - m`` for ``torch.exp(x - m)`` or ``(x - m).exp()``: through elementwise functions of
    one tensor."""
    for _ in range(8):
        if type(expr) is not cst.Call:
            break
        qual = ctx.qualname(expr.func)
        if qual is not None and qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in ELEMENTWISE_UNARY \
                and len(expr.args) == 1 and expr.args[0].keyword is None and not expr.args[0].star:
            expr = expr.args[0].value
        elif qual is None and type(expr.func) is cst.Attribute and expr.func.attr.value in ELEMENTWISE_UNARY \
                and not expr.args:
            expr = expr.func.value
        else:
            break
    return expr


def _unnamed_pair(ctx, source_expr: cst.BaseExpression, red_fact, red: Reduction):
    """The pair for a reduction of an expression that has the shape of a named tensor
    (``((x - mean) ** 2).mean(-1)`` with ``mean`` a keepdim mean of ``x``) combined with an
    expression whose trailing dims are that tensor's; the reduction then names it."""
    call = red.node
    if type(call) is not cst.Call or not call.args:
        return None
    if type(call.func) is cst.Attribute and ctx.qualname(call.func) is None:
        reduced = call.func.value
    elif call.args[0].keyword is None and (ctx.qualname(call.func) or "").startswith("torch."):
        reduced = call.args[0].value
    else:
        return None
    red_root = _reduced_root(ctx, reduced)
    name = dotted_name(red_root) if red_root is not None else None
    if red_root is None or name is None:
        return None
    root = _same_shape_root(ctx, source_expr, name)
    if root is None or ctx.fact(root) is not ctx.fact(red_root) or ctx.fact(root).kind not in (TENSOR, None):
        return None
    src_fact = ctx.fact(root)
    return red_fact, src_fact, Reduction(src_fact, name, red.axes, red.node, red.default_of, red.alternatives)


def _reduced_root(ctx, expr: cst.BaseExpression, depth: int = 0) -> Optional[cst.BaseExpression]:
    """The named tensor whose shape ``expr`` has exactly: the name, or an elementwise op of it
    with numbers, itself, or a reduction of it that broadcasts back (``x - x.mean(1, keepdim=True)``)."""
    if dotted_name(expr) is not None:
        return expr
    if depth > 8 or type(expr) is not cst.BinaryOperation or type(expr.operator) is cst.MatrixMultiply:
        return None
    for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
        root = _reduced_root(ctx, side, depth + 1)
        name = dotted_name(root) if root is not None else None
        if root is not None and name is not None and _keeps_shape_of(ctx, other, root, name):
            return root
    return None


def _same_shape_root(ctx, expr: cst.BaseExpression, name: str, depth: int = 0) -> Optional[cst.BaseExpression]:
    """The expression of the tensor called ``name`` when ``expr``'s trailing dims are its dims:
    the name itself, or an elementwise op of it with anything (broadcasting lines every operand
    up with the result's trailing dims, so a reduction of it is misaligned there as it is
    against it: ``self.g * (x - mean) / x.var(-1)``)."""
    if dotted_name(expr) == name:
        return expr
    twin = _keepdim_twin(ctx, expr, name)
    if twin is not None:
        return twin
    if depth > 8 or type(expr) is not cst.BinaryOperation or type(expr.operator) is cst.MatrixMultiply:
        return None
    for side, other in ((expr.left, expr.right), (expr.right, expr.left)):
        root = _same_shape_root(ctx, side, name, depth + 1)
        if root is not None and (ctx.fact(other).reduction is None or _keeps_shape_of(ctx, other, root, name)):
            return root  # a misaligned reduction there is its own finding
    return None


def _keepdim_twin(ctx, expr: cst.BaseExpression, name: str) -> Optional[cst.BaseExpression]:
    """The tensor called ``name`` (its expression inside the call) when ``expr`` is a reduction
    of it with ``keepdim=True`` over known axes that keep dim 0 (``x.amax((2, 3), keepdim=True)``,
    or a name bound to one just before): it has ``name``'s rank, so a reduction of ``name``
    without keepdim is misaligned against it as against ``name`` itself (CBAM's
    ``x.mean((2, 3)) + x.amax((2, 3), keepdim=True)``)."""
    if type(expr) is cst.Name:
        bound = value_before(ctx, expr.value, expr)
        if bound is None:
            return None
        expr = bound
    values = _values_of(expr)
    expr = values if values is not None else expr
    if not _keepdim_reduction_of(ctx, expr, name) or type(expr) is not cst.Call:
        return None
    method = type(expr.func) is cst.Attribute and ctx.qualname(expr.func) is None
    source = expr.func.value if method else expr.args[0].value  # type: ignore[attr-defined]
    if type(expr.func) is not cst.Attribute or expr.func.attr.value not in (
            _TUPLE_REDUCTIONS if values is not None else _KEEPDIM_TWINS):
        return None
    positional = [a.value for a in expr.args if a.keyword is None][0 if method else 1:]
    dim = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "dim"),
               positional[0] if positional else None)
    axes = _literal_axes(dim) if dim is not None else None
    if not axes or 0 in axes:
        return None
    return source


def _values_of(expr: cst.BaseExpression) -> Optional[cst.Call]:
    """The call for ``x.max(1, keepdim=True).values`` or ``...[0]``: the values of a reduction
    that returns ``(values, indices)``; else ``None``."""
    inner = pair_values(expr)
    if type(inner) is cst.Call and type(inner.func) is cst.Attribute and inner.func.attr.value in _TUPLE_REDUCTIONS:
        return inner
    return None


def _literal_axes(expr: cst.BaseExpression) -> Optional[list[int]]:
    """The ints of an int literal or a tuple/list of them (``-1``, ``(2, 3)``), else ``None``."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        vals = [int_literal(e.value) for e in expr.elements]
        return [v for v in vals if v is not None] if all(v is not None for v in vals) else None
    one = int_literal(expr)
    return [one] if one is not None else None


def _keeps_shape_of(ctx, other: cst.BaseExpression, root: cst.BaseExpression, name: str) -> bool:
    """Broadcasting ``other`` against the tensor ``root`` (called ``name``) keeps its shape."""
    if is_number(other) or ctx.fact(other).kind in (INT, FLOAT) or dotted_name(other) == name:
        return True
    if ctx.fact(other).kind == TENSOR and ctx.fact(other).shape == Shape(()):
        return True  # a 0-dim tensor (`self.r` made by `torch.tensor(r)`) broadcasts to any shape
    if type(other) is cst.BinaryOperation and type(other.operator) is not cst.MatrixMultiply:
        for side, number in ((other.left, other.right), (other.right, other.left)):
            if python_number(ctx, number) and _keeps_shape_of(ctx, side, root, name):
                return True  # `x.mean(1, keepdim=True) + eps`
    red = ctx.fact(other).reduction
    if red is not None and red.source is ctx.fact(root):
        return misaligned_unless(red.axes, ctx.fact(root).shape) is None
    if type(other) is cst.Name:
        bound = value_before(ctx, other.value, other)
        if bound is not None:
            other = bound
    return _keepdim_reduction_of(ctx, _values_of(other) or other, name)


def _keepdim_reduction_of(ctx, call: cst.BaseExpression, name: str) -> bool:
    """``call`` reduces the tensor called ``name`` with ``keepdim=True`` (``x.mean(1, keepdim=True)``,
    ``torch.mean(x, 1, keepdim=True)``)."""
    if type(call) is not cst.Call:
        return False
    if type(call.func) is cst.Attribute and dotted_name(call.func.value) == name:
        pass
    elif not (call.args and call.args[0].keyword is None and dotted_name(call.args[0].value) == name
              and (ctx.qualname(call.func) or "").startswith("torch.")):
        return False
    keep = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "keepdim"), None)
    return type(keep) is cst.Name and keep.value == "True"


def _align_message(src: Shape, out: Shape) -> Optional[str]:
    """``8 vs 16``: the rightmost column where the two shapes differ; ``""`` when every column
    is known and equal (the sizes happen to fit); ``None`` when an unknown size hides it."""
    if src.rank is None or out.rank is None:
        return None
    for i in range(1, min(src.rank, out.rank) + 1):
        a, b = src.dims[-i], out.dims[-i]
        if a is None or b is None:
            return None
        if a != b:
            return f"{a} vs {b}"
    return ""


def matrix_types_possible(ctx) -> bool:
    """The file may hold ``np.matrix`` or scipy sparse matrices, whose ``sum(1)`` is ``(N, 1)``
    (``a / a.sum(1)`` normalises rows there): it imports scipy or spells ``matrix(``."""
    text = ctx.text
    if text is not None and ("matrix(" in text or "asmatrix" in text or "np.mat(" in text):
        return True
    return any(q == "scipy" or q.startswith("scipy.") for q in ctx.imports.aliases.values())


@register
class ReductionWithoutKeepdim(Rule):
    """SC201: a reduction over a non-leading dim, without `keepdim=True`, combined with its source."""
    code = "SC201"
    name = "reduction-without-keepdim"
    severity = "error"
    summary = "a reduction over a non-leading dim, without `keepdim=True`, combined with its source"
    doc = """\
## What it does
Flags a reduction over a dim that is not a leading one, without `keepdim=True`, whose result is
then broadcast back against the tensor it was computed from. Every spelling counts:
- the reductions `sum`, `mean`, `prod`, `std`, `var`, `logsumexp`, `amax`, `amin`, `norm`
  (also `torch.linalg.norm`/`vector_norm`), and the pairs of `max`, `min`, `median`, `mode`,
  `kthvalue`, `aminmax`, `std_mean`, `var_mean` (through `.values`, `[0]` or unpacking), as
  methods or `torch.*` functions, with the dim positional, keyword (`dim=`, `axis=`), held in a
  variable, or left at a parameter's default (`def f(x, dim=-1)`);
- a dim held in a local or a `self.<attr>` that the code only ever sets from int literals
  (`dim = (1, 2, 3) if self.channels_last else (2, 3, 4)`, `self.spatial_dim = (1, 2)` in
  `__init__`): flagged only when every value it may hold is misaligned; a parameter of a
  module-level function that every call of the file passes as such a literal
  (`manual_var(x, dim=(2, 3, 4))`, never passed on as a value) reads the same way;
- a reduction of a temporary of the source (`v = x.pow(2)`, `v = torch.mean(v, dim=1)`, then
  `x * torch.rsqrt(v + eps)`), and a reduction divided by its own keepdim mean
  (`n = g / (g.mean(-1, keepdim=True) + eps)` with `g = x.norm(dim=(1, 2))`, then `x * n`);
- a name that holds the reduction on one side of an `if`/`else` only (the other side kept
  the dim): the message says on which side it is wrong;
- the source itself, an op that keeps its shape, or a `keepdim=True` reduction of it that keeps
  dim 0 (it has the source's rank: `x.mean((2, 3)) + x.amax((2, 3), keepdim=True)`) (`x ** 2`, `x.abs()`, `x.float()`);
- the reduction kept through numbers: literals, a parameter with a number default (`eps=1e-6`),
  `self.eps` when the class only ever sets it from such numbers, and `clamp`/`sqrt`/`pow`;
- combined by an operator (`+ - * / ** == < >`), augmented assignment (`x /= ...`), a method
  (`div`, `sub_`...), a function (`torch.div`, `torch.where`, `torch.maximum`...),
  `expand_as(x)`/`expand(x.shape)`, or joined in `torch.cat`/`torch.stack`.

A reduction of the left operand of a matrix product combined with the product (cosine
similarity `(a @ b.t()) / (a.norm(dim=1) * b.norm(dim=1))`) is flagged too: the product has
`a`'s rows on its next-to-last dim, and broadcasting lines the reduction up with its columns.

The leading-dims rule decides, not the sizes: `x - x.mean(1)` is flagged even for a square `x`,
where torch raises nothing. When the rank is unknown, `dim=-1` is leading only for a 1-D tensor:
the finding says so (`condition`: "`x` is 1-D"); `dim=1` is never leading. The hazard is the
same for NumPy arrays (`a / a.sum(1)`), so the rule does not need to know that the value is a
torch tensor, only which axes were reduced; `np.matrix` and scipy's sparse matrices keep the
reduced axis, so in a file that uses them (it imports scipy or spells `matrix(`) only values
known to be tensors are checked.

## Why is this bad?
Without `keepdim` the reduced axis disappears, and broadcasting aligns shapes from the right. For
an `(N, C)` tensor, `x.mean(dim=1)` has shape `(N,)`, which lines up with the `C` axis of `x`,
not with `N`: the code raises when `N != C` and silently computes the wrong thing when `N == C`
(a bigram model's `P /= P.sum(1)` on its square count matrix normalises every row by the wrong
sums). Reducing leading dims is fine (`x - x.mean(dim=0)` centers the columns), and so is the
rule's silence there. `cat`/`stack` need equal ranks, so any reduced dim breaks them.

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
        "def f(x):\n    return x - x.mean(1)[:, None]\n",
        "def f(x):\n    return x / x.sum(-1, keepdim=True)\n",
        "def f(x):\n    loss = x.sum(1).mean()\n    return loss\n",
        "import torch\ndef f(a, b):\n    return torch.max(a, b) - a\n",
        "def f(x, dim=0):\n    return x - x.mean(dim)\n",
        "def f(P):\n    P /= P.sum(0)\n",
        # scipy's sparse matrices (and np.matrix) keep the reduced axis: this normalises rows
        "import scipy.sparse as sp\ndef f(adj):\n    adj = sp.coo_matrix(adj)\n    return adj / adj.sum(1)\n",
        # a number parameter, an `unsqueeze`, keepdim: the reduction is broadcast back right
        "import torch\ndef l2(x, eps=1e-6):\n    n = torch.sqrt(torch.sum(x ** 2, 1, keepdim=True) + eps)\n"
        "    return torch.div(x, n)\n",
        "import torch\ndef l2(x, eps=1e-6):\n    n = torch.sqrt(torch.sum(x ** 2, 1) + eps)\n"
        "    return torch.div(x, n.unsqueeze(1))\n",
        # `eps` rebound to a tensor, `self.eps` set from outside `__init__`: not known to be numbers
        "import torch\ndef l2(x, eps=1e-6):\n    eps = torch.ones(x.shape[0], 1)\n    return x / (x.sum(1) + eps)\n",
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self, eps=1e-6):\n        super().__init__()\n"
        "        self.eps = eps\n    def set(self, t):\n        self.eps = t\n"
        "    def forward(self, x):\n        return x / (x.sum(1) + self.eps)\n",
        # cosine similarity done right: an outer product of the norms, or keepdim on the rows' norms
        "import torch\ndef cos(a, b, eps=1e-8):\n    g = torch.mm(a, b.t())\n"
        "    return g / torch.ger(a.norm(dim=1), b.norm(dim=1)).clamp(min=eps)\n",
        "def cos(a, b):\n    n1 = a.norm(dim=1, keepdim=True)\n    n2 = b.norm(dim=1)\n    g = a @ b.t()\n"
        "    return g / (n1 * n2)\n",
        "def cos(a, b):\n    n1 = a.norm(dim=1)\n    n2 = b.norm(dim=1)\n    g = a @ b.t()\n"
        "    return g / (n1[:, None] * n2[None, :])\n",
        # the right operand's norms line up with the columns; `x @ x.t() / n` scales the columns
        "def f(a, b):\n    g = a @ b.t()\n    return g / b.norm(dim=1)\n",
        "def f(x):\n    n = x.norm(dim=1)\n    g = x @ x.t()\n    return g / n\n",
        # keepdim twins; a dim chosen among literals where one choice is the leading dim
        "def pool(x):\n    return 0.5 * x.mean((2, 3), keepdim=True) + 0.5 * x.amax((2, 3), keepdim=True)\n",
        "import torch\ndef lse(x):\n    m = x.amax(dim=1, keepdim=True)\n    e = torch.exp(x - m)\n"
        "    s = e.mean(dim=1, keepdim=True)\n    return torch.log(s) + m\n",
        "import torch\ndef lse(x, y):\n    m = y.amax(dim=1, keepdim=True)\n    e = torch.exp(x - m)\n"
        "    s = e.mean(dim=1)\n    return torch.log(s) + m\n",
        "def f(x):\n    return x.mean(0) + x.amax((0, 1), keepdim=True)\n",
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self, first):\n        super().__init__()\n"
        "        self.first = first\n    def forward(self, x):\n        dim = 0 if self.first else 1\n"
        "        return x - x.mean(dim=dim)\n",
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n"
        "        self.dim = dim\n    def forward(self, x):\n        return x - x.mean(dim=self.dim)\n",
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.dims = (1, 2)\n    def forward(self, x):\n"
        "        return x - x.mean(dim=self.dims, keepdim=True)\n",
        # the temporary's reduction kept; a dim every caller passes as the leading one
        "import torch\ndef rms(x, eps=1e-5):\n    v = x.pow(2)\n    v = torch.mean(v, dim=1, keepdim=True)\n"
        "    return x * torch.rsqrt(v + eps)\n",
        "def center(x, dim):\n    return x - x.mean(dim)\ndef f(x):\n    return center(x, 0)\n",
        # the same pooling with both reductions keeping dim 1
        "import torch\nimport torch.nn as nn\nclass Lse(nn.Module):\n    def __init__(self, r=10.0):\n"
        "        super().__init__()\n        self.r = nn.Parameter(torch.tensor(r))\n    def forward(self, x):\n"
        "        m = x.max(dim=1, keepdim=True).values\n        e = torch.exp(self.r * (x - m))\n"
        "        s = e.mean(dim=1, keepdim=True)\n        return m + (1.0 / self.r) * torch.log(s)\n",
    )
    invalid = (
        "import torch\nx = torch.randn(16, 8)\ny = x - x.mean(dim=1)  # <--\n",
        "import torch\nx = torch.randn(16, 8)\ny = x - torch.mean(x, dim=-1)  # <--\n",
        "import torch\nx = torch.randn(8, 8)\ns = x.sum(1)\ny = x / s  # <--\n",
        "import torch\nx = torch.randn(2, 3)\ns = torch.sum(x, dim=1)\nz = torch.cat([x, s], dim=1)  # <--\n",
        "import torch\nx = torch.randn(4, 4)\ny = x - x.max(dim=1).values  # <--\n",
        "def f(x):\n    return x - x.amax(dim=2)  # <--\n",
        "def bigram(P):\n    P /= P.sum(1)  # <--\n",
        "def center(x):\n    mu = x.mean(-1)\n    return x - mu.expand_as(x)  # <--\n",
        "import torch\ndef norm(x):\n    return torch.div(x, torch.sum(x ** 2, 1))  # <--\n",
        "import torch\ndef mx(v):\n    m, _ = torch.max(v, dim=-1)\n    return v - m  # <--\n",
        "def f(x, dim=-1):\n    return x.sub_(x.mean(dim))  # <--\n",
        "import torch\ndef f(x):\n    return x / torch.linalg.vector_norm(x, dim=1)  # <--\n",
        # through `+ eps` with a number parameter, and `self.eps` set from one in `__init__`
        "import torch\ndef l2(x, eps=1e-6):\n    norm = torch.sqrt(torch.sum(x ** 2, 1) + eps)\n"
        "    return torch.div(x, norm)  # <--\n",
        "import torch\nimport torch.nn as nn\nclass L2Norm(nn.Module):\n    def __init__(self, eps=1e-6):\n"
        "        super().__init__()\n        self.eps = eps\n    def forward(self, x):\n"
        "        norm = torch.sqrt(torch.sum(x ** 2, 1) + self.eps)\n        return torch.div(x, norm)  # <--\n",
        # list dims; the mean has keepdim, the variance not
        "import torch\ndef bn(x, eps=1e-5):\n    mean = x.mean(dim=[0, 2], keepdim=True)\n"
        "    var = x.var(dim=[0, 2], unbiased=False)\n    return (x - mean) / torch.sqrt(var + eps)  # <--\n",
        "def normalize(x, eps=1e-8):\n    norms = x.norm(dim=1)\n    return x / norms.clamp(min=eps)  # <--\n",
        # cosine similarity: the left operand's norms line up with the columns of the product
        "def cos(a, b):\n    n1 = a.norm(dim=1)\n    n2 = b.norm(dim=1)\n    g = a @ b.t()\n"
        "    return g / (n1 * n2)  # <--\n",
        "import torch\ndef cos(x1, x2, eps=1e-8):\n    w12 = torch.mm(x1, x2.t())\n    w1 = torch.norm(x1, 2, 1)\n"
        "    w2 = torch.norm(x2, 2, 1)\n    return w12 / (w1 * w2).clamp(min=eps)  # <--\n",
        "def gram(x):\n    n = x.norm(dim=1)\n    g = x @ x.t()\n    return g / (n * n)  # <--\n",
        # two reductions of one tensor, one kept as its rank (CBAM's channel attention)
        "def pool(x):\n    return 0.5 * x.mean((2, 3)) + 0.5 * x.amax((2, 3), keepdim=True)  # <--\n",
        # log-sum-exp pooling: the mean of `exp(x - m)` against `m`, which has `x`'s rank
        "import torch\ndef lse(x):\n    m = x.amax(dim=1, keepdim=True)\n    e = torch.exp(x - m)\n"
        "    s = e.mean(dim=1)\n    return torch.log(s) + m  # <--\n",
        # dims through a local chosen among literals, or an attribute `__init__` sets from one
        "import torch.nn as nn\nclass GN(nn.Module):\n    def __init__(self, channels_last=False):\n"
        "        super().__init__()\n        self.channels_last = channels_last\n    def forward(self, x):\n"
        "        dim = (1, 2, 3) if self.channels_last else (2, 3, 4)\n        return x - x.mean(dim=dim)  # <--\n",
        "import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.spatial_dim = (1, 2)\n    def forward(self, x):\n"
        "        return x / x.norm(p=2, dim=self.spatial_dim)  # <--\n",
        # a reduction of a temporary of `x` (RMS norm); one normalised by its own keepdim mean (GRN)
        "import torch\ndef rms(x, eps=1e-5):\n    v = x.pow(2)\n    v = torch.mean(v, dim=1)\n"
        "    return x * torch.rsqrt(v + eps)  # <--\n",
        "def grn(x, eps=1e-6):\n    g = x.norm(p=2, dim=(1, 2))\n    n = g / (g.mean(dim=-1, keepdim=True) + eps)\n"
        "    return x * n  # <--\n",
        # a dim the file's callers all pass as a non-leading one
        "def center(x, dim):\n    return x - x.mean(dim)  # <--\ndef f(x):\n    return center(x, (1, 2))\n",
        # log-sum-exp pooling: the max's values kept with keepdim, the mean not, a 0-dim temperature
        "import torch\nimport torch.nn as nn\nclass Lse(nn.Module):\n    def __init__(self, r=10.0):\n"
        "        super().__init__()\n        self.r = nn.Parameter(torch.tensor(r))\n    def forward(self, x):\n"
        "        m = x.max(dim=1, keepdim=True).values\n        e = torch.exp(self.r * (x - m))\n"
        "        s = e.mean(dim=1)\n        return m + (1.0 / self.r) * torch.log(s)  # <--\n",
    )

    def __init__(self) -> None:
        #: id of a value bound to a name -> (the value, its fact), for the values that held a reduction
        self._reductions: dict[int, tuple[cst.BaseExpression, Fact]] = {}
        #: one of those values held a reduction (else no side of an `if` bound one)
        self._held_reduction = False

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """Remember a reduction bound to a name, for a use after an ``if`` whose one side bound it."""
        if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name \
                and ctx.function is not None and id(node) in side_assignments(ctx.function):
            f = ctx.fact(node.value)
            if f.kind in (TENSOR, None):
                if len(self._reductions) > 4096:
                    self._reductions.clear()
                    self._held_reduction = False
                self._reductions[id(node.value)] = (node.value, f)
                if f.reduction is not None:
                    self._held_reduction = True

    def _side_pair(self, ctx, source_expr, reduced_expr):
        """``(pair, side)`` for a name in ``reduced_expr`` (through ops that keep its shape) that
        holds a reduction of ``source_expr`` on one side of the ``if`` before it, else ``None``."""
        if not self._held_reduction:
            return None  # no side of an `if` bound a reduction
        name = _same_shape_parent(ctx, reduced_expr)
        if type(name) is not cst.Name or ctx.fact(name).reduction is not None:
            return None
        for value, side in branch_values(ctx, name.value, name):
            held = self._reductions.get(id(value))
            if held is None or held[0] is not value or held[1].reduction is None:
                continue
            pair = _reduction_pair(ctx, source_expr, name, held[1])
            if pair is None:  # the source rebound on that side too: its fact there
                pair = _reduction_pair(ctx, source_expr, name, held[1],
                                       self._side_fact(ctx, source_expr, held[1].reduction.source_name, side))
            if pair is not None:
                return pair, side
        return None

    def _side_fact(self, ctx, source_expr, name: Optional[str], side: str) -> Optional[Fact]:
        """The fact the name ``name`` (read in ``source_expr``) was bound to on ``side`` of the
        ``if`` before it, when that side binds it."""
        node = next((n for n in (source_expr, *walk(source_expr)) if type(n) is cst.Name and n.value == name), None)
        if node is None:
            return None
        for value, where in branch_values(ctx, node.value, node):
            held = self._reductions.get(id(value))
            if where == side and held is not None and held[0] is value:
                return held[1]
        return None

    def _check(self, node, ctx, source_expr, reduced_expr, how: str) -> bool:
        pair = _reduction_pair(ctx, source_expr, reduced_expr)
        side = None
        if pair is None:
            found = self._side_pair(ctx, source_expr, reduced_expr)
            if found is None:
                return False
            pair, side = found
        red_fact, src_fact, red = pair
        if src_fact.kind != TENSOR and matrix_types_possible(ctx):
            return False  # `np.matrix` and scipy's sparse matrices keep the reduced axis
        exceptions: list[int] = []
        choices = red.alternatives or (red.axes,)
        if how != "concat":
            for choice in choices:  # each value the dim may hold must misalign it
                unless = misaligned_unless(choice, src_fact.shape)
                if unless is None:
                    return False
                exceptions += [r for r in unless if r not in exceptions]
        subject = short(ctx, source_expr)
        red_text = short(ctx, red.node) if red.node is not None else "the reduction"
        axes = " or ".join(", ".join(str(a) for a in choice) for choice in choices)
        plural = "axes" if len(choices) > 1 or len(red.axes) > 1 else "axis"
        dropped = f"it dropped {plural} {axes} (no keepdim=True)"
        if red.default_of is not None:
            dropped = f"with `{red.default_of}` at its default {axes}, {dropped}"
        if how == "concat":
            tail = f"{dropped}, so its rank differs from `{subject}`'s"
        else:
            verb = "broadcasting lines it up" if how != "expand" else f"`.{how_method(node)}` lines it up"
            tail = f"{dropped}, so {verb} with the trailing axes of `{subject}`"
        known = (src_fact.shape is not None and red_fact.shape is not None
                 and src_fact.shape.rank is not None and red_fact.shape.rank is not None)
        if known:
            align = _align_message(src_fact.shape, red_fact.shape) if how != "concat" else None
            head = (f"`{subject}` has shape {format_shape(src_fact.shape)}; `{red_text}` has shape "
                    f"{format_shape(red_fact.shape)}" + (f"; they align as {align}" if align else ""))
            message = f"{head}: {tail}; pass keepdim=True"
            if align == "":
                message += " (the sizes happen to fit: torch raises nothing and the result is wrong)"
        else:
            message = f"`{red_text}` is combined with `{subject}`, but {tail}; pass keepdim=True"
        conditions = []
        if exceptions:
            ranks = " or ".join(f"{r}-D" for r in exceptions)
            conditions.append(f"`{red.source_name}` is {ranks}")
        if red.default_of is not None:
            conditions.append(f"a caller passes `{red.default_of}`")
        condition = " or ".join(conditions) if conditions else None
        if side is not None:
            message = f"where {side}, {message}"
        report_unless(ctx, node, message, condition, reduced_here(red))
        return True

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Arithmetic between a tensor and its own reduction."""
        if not isinstance(node.operator, ARITHMETIC_OPERATORS):
            return
        if self._check(node, ctx, node.left, node.right, "elementwise") \
                or self._check(node, ctx, node.right, node.left, "elementwise"):
            return
        if isinstance(node.operator, (cst.Divide, cst.Multiply)) and not self._gram(node, ctx, node.left, node.right) \
                and type(node.operator) is cst.Multiply:
            self._gram(node, ctx, node.right, node.left)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        """``x /= x.sum(1)``: the reduction broadcast back into its own source, in place."""
        if isinstance(node.operator, _AUGMENTED) and not self._check(node, ctx, node.target, node.value,
                                                                     "elementwise") \
                and isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign)):
            self._gram(node, ctx, node.target, node.value)

    def _gram(self, node, ctx, product: cst.BaseExpression, other: cst.BaseExpression) -> bool:
        """A reduction of a matrix product's left operand combined with the product
        (:mod:`~shapecheck.rules.shape.gram_norms`); True when it reported."""
        found = gram_norm(ctx, product, other)
        if found is None:
            return False
        red = found.reduction
        axis = red.axes[0]
        left = found.left
        src_rank = red.source.rank
        if src_rank is not None and src_rank < 2:
            return False
        condition = f"`{left}` is 1-D" if src_rank is None and axis in (0, -1) else None
        red_text = short(ctx, red.node) if red.node is not None else "the reduction"
        outcome = "torch raises nothing and" if found.same else \
            "torch raises unless the two row counts are equal, and when they are"
        message = (f"`{red_text}` holds one value per row of `{left}` (it dropped axis {axis}, no keepdim=True), "
                   f"but `{short(ctx, product)}` has `{left}`'s rows on its next-to-last dim: broadcasting lines the "
                   f"reduction up with the last dim (the columns), so {outcome} each column is scaled by the wrong "
                   f"row's value; pass keepdim=True "
                   f"(or index it `[:, None]`)")
        report_unless(ctx, node, message, condition, reduced_here(red))
        return True

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        """Comparisons between a tensor and its own reduction."""
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
            return
        right = node.comparisons[0].comparator
        if not self._check(node, ctx, node.left, right, "elementwise"):
            self._check(node, ctx, right, node.left, "elementwise")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """torch's broadcasting functions, the binary methods (``div``, ``sub_``...), ``expand_as``
        and ``cat``/``stack`` with a tensor and its reduction."""
        qual = ctx.qualname(node.func)
        if qual is None:
            func = node.func
            if type(func) is not cst.Attribute:
                return
            attr = func.attr.value
            if attr in _EXPAND_METHODS and len(node.args) == 1:
                source = node.args[0].value if attr == "expand_as" else sizes_of(node.args[0].value)
                if source is not None:
                    self._check(node, ctx, source, func.value, "expand")
                return
            if attr in BROADCASTING_FUNCTIONS or (attr.endswith("_") and attr[:-1] in ELEMENTWISE_BINARY):
                self._pairs(node, ctx, [func.value] + _positional(node), "elementwise")
            return
        if not qual.startswith("torch."):
            return  # every name below is torch's
        args = _positional(node)
        if qual in _CONCAT_FUNCS:
            if not node.args or not isinstance(node.args[0].value, (cst.List, cst.Tuple)):
                return
            elems = [e.value for e in node.args[0].value.elements if type(e) is not cst.StarredElement]
            self._pairs(node, ctx, elems, "concat")
        elif qual == "torch.broadcast_to" and len(args) == 2:
            source = sizes_of(args[1])
            if source is not None:
                self._check(node, ctx, source, args[0], "expand")
        elif qual.startswith("torch.") and qual[6:] in BROADCASTING_FUNCTIONS:
            if qual == "torch.where":
                args = args[1:]
            self._pairs(node, ctx, args, "elementwise")

    def _pairs(self, node, ctx, operands, how) -> None:
        for a in operands:
            for b in operands:
                if a is not b and self._check(node, ctx, a, b, how):
                    return


def _positional(node: cst.Call) -> list[cst.BaseExpression]:
    """The values of the positional arguments of ``node``, starred ones left out."""
    return [a.value for a in node.args if a.keyword is None and not a.star]


def how_method(node: cst.CSTNode) -> str:
    """The name of the method a call node calls (``expand_as``), for messages."""
    if type(node) is cst.Call and type(node.func) is cst.Attribute:
        return node.func.attr.value
    return "broadcast_to"
