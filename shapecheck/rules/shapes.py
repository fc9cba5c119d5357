"""Shape rules (SC2xx): reductions, broadcasting, matmul, tuple results, squeeze, returns."""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from shapecheck.broadcast import InvalidShapeError, broadcast_shapes
from shapecheck.errors import BroadcastError
from shapecheck.semantic.facts import MODULE, TENSOR, TUPLE
from shapecheck.semantic.annotations import annotation_fact
from shapecheck.semantic.evaluator import dotted_name
from shapecheck.rules.base import Rule, register
from shapecheck.shapes import Shape, format_shape

_ARITH = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide, cst.Modulo)
_COMPARE = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
            cst.GreaterThanEqual)
#: torch functions that broadcast their tensor arguments elementwise
_BROADCASTING_FUNCS = {
    "torch.add", "torch.sub", "torch.mul", "torch.div", "torch.maximum", "torch.minimum",
    "torch.where", "torch.pow", "torch.eq", "torch.ne", "torch.lt", "torch.le", "torch.gt",
    "torch.ge", "torch.subtract", "torch.multiply", "torch.divide", "torch.true_divide",
    "torch.fmax", "torch.fmin", "torch.atan2",
}
_CONCAT_FUNCS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack"}


def _short(ctx, node: cst.CSTNode, limit: int = 40) -> str:
    text = ctx.source(node).strip()
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        subject = _short(ctx, source_expr)
        red_text = _short(ctx, red.node) if red.node is not None else "the reduction"
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
        if not isinstance(node.operator, _ARITH):
            return
        if not self._check(node, ctx, node.left, node.right, "elementwise"):
            self._check(node, ctx, node.right, node.left, "elementwise")

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        """Comparisons between a tensor and its own reduction."""
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, _COMPARE):
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
        "import torch\nfrom jaxtyping import Float\n\ndef f(x: Float[torch.Tensor, 'b c'], y: Float[torch.Tensor, 'c']):\n    return x + y\n",
        "import torch\nfrom jaxtyping import Float\n\ndef f(x: Float[torch.Tensor, 'b c']):\n    return x + torch.zeros(3)\n",
    )
    invalid = (
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(2)\nc = a + b  # <--\n",
        "import torch\na = torch.ones(4, 5)\nb = torch.ones(4, 4)\nc = torch.where(a > 0, a, b)  # <--\n",
        "import torch\nfrom jaxtyping import Float\n\ndef f(x: Float[torch.Tensor, 'n d'], y: Float[torch.Tensor, 'm d']):\n    return x - y  # <--\n",
    )

    def _check(self, node, ctx, operands: Sequence[cst.BaseExpression]) -> None:
        facts = [ctx.fact(o) for o in operands]
        tensors = [(o, f) for o, f in zip(operands, facts) if f.kind == TENSOR and f.shape is not None]
        if len(tensors) < 2:
            return
        for i, (_o, f) in enumerate(tensors):
            if f.reduction is not None:
                for o2, g in tensors:
                    if g is f.reduction.source:
                        return
        try:
            broadcast_shapes(*[f.shape for _o, f in tensors])
        except InvalidShapeError:
            return  # a size torch rejects is SC103's finding (the inference drops such sizes)
        except BroadcastError as err:
            if not err.certain and not self._two_symbols(err, [f.shape for _o, f in tensors]):
                return
            names = ", ".join(f"`{_short(ctx, o, 24)}` {format_shape(f.shape)}" for o, f in tensors)
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
        if isinstance(node.operator, _ARITH):
            self._check(node, ctx, [node.left, node.right])

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        """Comparison operators."""
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, _COMPARE):
            self._check(node, ctx, [node.left, node.comparisons[0].comparator])

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """torch functions and tensor methods that broadcast."""
        qual = ctx.qualname(node.func)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual in _BROADCASTING_FUNCS:
            self._check(node, ctx, args)
        elif qual is None and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "add", "sub", "mul", "div", "maximum", "minimum", "add_", "sub_", "mul_", "div_") and args:
            if ctx.fact(node.func.value).kind == TENSOR:
                self._check(node, ctx, [node.func.value, args[0]])


def _conflict(a, b) -> bool:
    """Two dims provably different: two ints, or two different annotation names."""
    if a is None or b is None:
        return False
    if isinstance(a, int) and isinstance(b, int):
        return a != b
    if isinstance(a, str) and isinstance(b, str):
        return a != b
    return False


def _fmt(d) -> str:
    return "?" if d is None else str(d)


@register
class MatmulShapeMismatch(Rule):
    """SC203: matrix product whose inner dims (or ranks) do not fit."""
    code = "SC203"
    name = "matmul-shape-mismatch"
    severity = "error"
    summary = "matrix product whose inner dims (or ranks) do not fit"
    doc = """\
## What it does
Flags `a @ b`, `torch.matmul`, `torch.mm` (2-D only), `torch.bmm` (3-D only), `torch.dot`
(1-D only), `torch.mv`, and calls of an `nn.Linear(in_features, ...)` module, when the known
shapes do not fit: the last dim of `a` must equal the second-to-last of `b` (the only dim of a
1-D `b`), and a Linear layer's input must end in `in_features`.

## Why is this bad?
torch raises `RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x1 and 3x1)` (or
`self must be a matrix`, `1D tensors expected`, ...).

## Example
```python
a = torch.randn(3, 1)
b = torch.randn(3, 1)
c = a @ b            # inner dims 1 and 3
```

## Use instead
```python
c = a.T @ b          # (1, 3) @ (3, 1)
```
"""
    valid = (
        "import torch\na = torch.randn(3, 1)\nb = torch.randn(3, 1)\nc = a.T @ b\n",
        "import torch\na = torch.randn(5, 2, 3)\nb = torch.randn(3, 4)\nc = a @ b\n",
        "import torch\na = torch.randn(3)\nb = torch.randn(3)\nc = torch.dot(a, b)\n",
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 2)\ny = fc(torch.randn(4, 8))\n",
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 4, 5)\nc = torch.bmm(a, b)\n",
    )
    invalid = (
        "import torch\na = torch.randn(3, 1)\nb = torch.randn(3, 1)\nc = a @ b  # <--\n",
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(4, 5)\nc = torch.mm(a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(2, 3)\nc = torch.dot(a, b)  # <--\n",
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 2)\ny = fc(torch.randn(4, 16))  # <--\n",
    )

    def _pair(self, node, ctx, a_expr, b_expr, op: str) -> None:
        a, b = ctx.fact(a_expr), ctx.fact(b_expr)
        if a.kind != TENSOR or b.kind != TENSOR or a.shape is None or b.shape is None:
            return
        ra, rb = a.shape.rank, b.shape.rank
        if ra is None or rb is None:
            return
        an, bn = _short(ctx, a_expr, 24), _short(ctx, b_expr, 24)
        shapes = f"`{an}` {format_shape(a.shape)} and `{bn}` {format_shape(b.shape)}"
        need = {"mm": (2, 2), "bmm": (3, 3), "dot": (1, 1), "mv": (2, 1)}.get(op)
        if need is not None and (ra, rb) != need:
            ctx.report(node, f"torch.{op} needs {need[0]}-D and {need[1]}-D tensors; got {shapes}")
            return
        if ra == 0 or rb == 0:
            ctx.report(node, f"matmul needs tensors of at least 1 dim; got {shapes}")
            return
        inner_a = a.shape.dims[-1]
        inner_b = b.shape.dims[-2] if rb >= 2 else b.shape.dims[-1]
        if _conflict(inner_a, inner_b):
            ctx.report(node, f"{shapes} cannot be multiplied: the inner dims are "
                             f"{_fmt(inner_a)} and {_fmt(inner_b)}")
            return
        if op == "bmm" and _conflict(a.shape.dims[0], b.shape.dims[0]):
            ctx.report(node, f"torch.bmm needs equal batch sizes; got {shapes}")

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """The ``@`` operator."""
        if isinstance(node.operator, cst.MatrixMultiply):
            self._pair(node, ctx, node.left, node.right, "matmul")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """matmul/mm/bmm/dot/mv calls and nn.Linear module calls."""
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        qual = ctx.qualname(node.func)
        if qual in ("torch.matmul", "torch.mm", "torch.bmm", "torch.dot", "torch.mv") and len(args) >= 2:
            self._pair(node, ctx, args[0], args[1], qual[6:])
            return
        func = node.func
        if qual is None and isinstance(func, cst.Attribute) and func.attr.value in (
                "matmul", "mm", "bmm", "dot", "mv") and len(args) == 1:
            if ctx.fact(func.value).kind == TENSOR:
                self._pair(node, ctx, func.value, args[0], func.attr.value)
            return
        if len(args) != 1 or qual is not None:
            return
        module = ctx.fact(func)
        if module.kind != MODULE or module.qual != "torch.nn.Linear" or module.features is None:
            return
        fin = module.features[0]
        x = ctx.fact(args[0])
        if x.kind != TENSOR or x.shape is None or not x.shape.trailing():
            return
        last = x.shape.trailing()[-1]
        if isinstance(fin, int) and isinstance(last, int) and fin != last:
            ctx.report(node, f"`{_short(ctx, func, 24)}` is nn.Linear({fin}, ...) but `{_short(ctx, args[0], 24)}` "
                             f"has shape {format_shape(x.shape)}: its last dim {last} is not {fin}")


@register
class ReductionTupleAsTensor(Rule):
    """SC204: the (values, indices) pair of max/min/median/mode/sort/topk/kthvalue used as a tensor."""
    code = "SC204"
    name = "reduction-tuple-as-tensor"
    severity = "error"
    summary = "the (values, indices) pair of max/min/median/mode/sort/topk/kthvalue used as a tensor"
    doc = """\
## What it does
Flags the result of `torch.max(x, dim=...)` (also `min`, `median`, `mode`, `sort`, `topk`,
`kthvalue`, and the method forms) used directly as a tensor: in arithmetic or comparisons, or
through a tensor attribute or method.

## Why is this bad?
With a `dim`, these ops return a named tuple `(values, indices)`, not a tensor. `pair + 1`
raises `TypeError`, `.shape`/`.sum()` raise `AttributeError`, and `pair * 2` silently repeats
the tuple instead of doubling the values.

## Example
```python
x = torch.randn(4, 5)
best = torch.max(x, dim=1)
scores = best * 2          # a 4-tuple, not doubled scores
```

## Use instead
```python
best, where = torch.max(x, dim=1)   # or torch.max(x, dim=1).values
scores = best * 2
```
"""
    valid = (
        "import torch\nx = torch.randn(4, 5)\nbest, idx = torch.max(x, dim=1)\ny = best * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, dim=1).values * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x) * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, dim=1)[0] + 1\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, torch.zeros(4, 5)) + 1\n",
    )
    invalid = (
        "import torch\nx = torch.randn(4, 5)\nbest = torch.max(x, dim=1)\ny = best * 2  # <--\n",
        "import torch\nx = torch.randn(4, 5)\nn = x.sort(dim=1).sum()  # <--\n",
        "import torch\nx = torch.randn(4, 5)\nt = torch.topk(x, 2)\nprint(t.shape)  # <--\n",
    )

    _OK_ATTRS = {"values", "indices", "count", "index", "_asdict", "_fields"}

    def _flag(self, node, ctx, expr) -> bool:
        f = ctx.fact(expr)
        if f.kind != TUPLE:
            return False
        ctx.report(node, f"`{_short(ctx, expr)}` is the (values, indices) pair that a reduction with a "
                         f"dim returns, not a tensor; unpack it or use `.values`")
        return True

    def visit_BinaryOperation(self, node, ctx) -> None:
        """The pair as an operand of arithmetic."""
        if not self._flag(node, ctx, node.left):
            self._flag(node, ctx, node.right)

    def visit_Comparison(self, node, ctx) -> None:
        """The pair in a comparison."""
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, _COMPARE):
            if not self._flag(node, ctx, node.left):
                self._flag(node, ctx, node.comparisons[0].comparator)

    def visit_UnaryOperation(self, node, ctx) -> None:
        """The pair negated or inverted."""
        if not isinstance(node.operator, cst.Not):
            self._flag(node, ctx, node.expression)

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """A tensor attribute or method read on the pair."""
        if node.attr.value in self._OK_ATTRS:
            return
        self._flag(node, ctx, node.value)


@register
class SqueezeWithoutDim(Rule):
    """SC205: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""
    code = "SC205"
    name = "squeeze-without-dim"
    severity = "warning"
    summary = "`squeeze()` without a dim drops every size-1 axis, the batch axis too"
    default_enabled = False
    doc = """\
## What it does
Flags `x.squeeze()` and `torch.squeeze(x)` called without a `dim`, unless the tensor's shape is
known and has no size-1 axis. Opt-in: select `SC205` to enable it.

## Why is this bad?
Without a dim, `squeeze` removes every axis of size 1. Code written for a `(batch, 1)` tensor
silently gets a 0-d tensor when the batch has one element, and later shape logic breaks (or,
worse, broadcasts) only on that input.

## Example
```python
logits = model(x)          # (batch, 1)
probs = logits.squeeze()   # (batch,), but () when batch == 1
```

## Use instead
```python
probs = logits.squeeze(-1)
```
"""
    valid = (
        "import torch\nx = torch.randn(8, 1)\ny = x.squeeze(-1)\n",
        "import torch\nx = torch.randn(8, 3)\ny = x.squeeze()\n",
        "import numpy as np\ndef f(a):\n    return np.squeeze(a)\n",
    )
    invalid = (
        "def f(logits):\n    return logits.squeeze()  # <--\n",
        "import torch\nx = torch.randn(8, 1)\ny = torch.squeeze(x)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``x.squeeze()`` and ``torch.squeeze(x)`` without a dim."""
        func = node.func
        qual = ctx.qualname(func)
        if qual == "torch.squeeze":
            if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
                return
            target = node.args[0].value
        elif qual is None and isinstance(func, cst.Attribute) and func.attr.value == "squeeze" and not node.args:
            target = func.value
        else:
            return
        f = ctx.fact(target)
        if f.kind not in (TENSOR, None):
            return
        if f.shape is not None and f.shape.rank is not None and all(
                isinstance(d, int) and d != 1 or isinstance(d, str) for d in f.shape.dims):
            return
        ctx.report(node, f"`{_short(ctx, node)}` drops every size-1 axis, including a batch of one; "
                         f"pass the dim to squeeze")


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
        ctx.report(node, f"`{_short(ctx, node.value)}` has shape {format_shape(got.shape)} but "
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
        if _conflict(w, g):
            return f"axis {axis} is {g}, not {w}"
    return None
