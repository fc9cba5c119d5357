"""SC204 reduction-tuple-as-tensor: the (values, indices) pair of
max/min/median/mode/sort/topk/kthvalue used as a tensor."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.shape.bound_values import branch_values, side_assignments
from shapecheck.rules.helpers.operators import COMPARISON_OPERATORS
from shapecheck.semantic.facts import MODULE, TENSOR, TUPLE, DtypeKind, Fact
from shapecheck.semantic.torch_api import (
    ELEMENTWISE_BINARY, MATRIX_PRODUCTS, REDUCTIONS, SHAPE_KEEPING_UNARY, VALUES_INDICES_OPS,
)

#: torch functions (after ``torch.``) whose tensor arguments must each be a tensor: a pair
#: there raises TypeError (``torch.cat(pair)`` and ``torch.stack(pair)`` take it as a sequence)
_TENSOR_ARGUMENT_FUNCTIONS = (SHAPE_KEEPING_UNARY | ELEMENTWISE_BINARY | MATRIX_PRODUCTS | REDUCTIONS
                              | VALUES_INDICES_OPS | {"flatten", "squeeze", "unsqueeze", "transpose", "permute",
                                                      "reshape", "where", "argsort", "einsum", "masked_select"})
#: torch functions that take a sequence of tensors: a pair as one element of it raises TypeError
_SEQUENCE_FUNCTIONS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                                 "column_stack", "row_stack"})
#: Tensor methods whose positional arguments must be tensors (or numbers)
_TENSOR_ARGUMENT_METHODS = (ELEMENTWISE_BINARY | MATRIX_PRODUCTS
                            | {"view_as", "expand_as", "reshape_as", "type_as", "masked_fill", "where"})


def _reduction_pair(fact: Fact) -> bool:
    """``fact`` is the pair a reduction with a dim returns (its elements know their reduction, or
    the second holds integer indices: ``sort``, ``topk``), not another tuple (an LSTM's state, a
    layer's several outputs)."""
    elems = fact.elems or ()
    return fact.kind == TUPLE and (any(e.reduction is not None for e in elems)
                                   or len(elems) == 2 and elems[1].dtype_kind == DtypeKind.INT)


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
`kthvalue`, and the method forms) used directly as a tensor: in arithmetic or comparisons,
through a tensor attribute or method, passed to an `nn` layer, an `F`/`torch` function or a
tensor method, as an element of the list `torch.cat`/`torch.stack` take, or indexed as a
tensor (`pair[:, :2]`, `pair[..., 0]`). A name that holds the pair on one side of an
`if`/`else` only is flagged where it is passed on, and the message says on which side.

## Why is this bad?
With a `dim`, these ops return a named tuple `(values, indices)`, not a tensor. `pair + 1`
raises `TypeError`, `.shape`/`.sum()` raise `AttributeError`, `F.relu(pair)` and `pair[:, 0]`
raise `TypeError`, and `pair * 2` silently repeats the tuple instead of doubling the values.

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
        # an LSTM's `(h, c)` state is a tuple, but not a reduction's pair (and a GRU's is a tensor)
        "import torch.nn as nn\nclass Rnn(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.rnn = nn.LSTM(4, 8)\n        self.hidden = None\n    def forward(self, x):\n"
        "        x, h = self.rnn(x, self.hidden)\n        if isinstance(h, tuple):\n"
        "            self.hidden = tuple(t.detach() for t in h)\n        else:\n"
        "            self.hidden = h.detach()\n        return x\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, dim=1).values * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x) * 2\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, dim=1)[0] + 1\n",
        "import torch\nx = torch.randn(4, 5)\ny = torch.max(x, torch.zeros(4, 5)) + 1\n",
        # the values (or the indices) taken out first; a pair is a sequence for cat/stack
        "import torch\nimport torch.nn.functional as F\ndef f(h, target):\n    pooled = torch.max(h, dim=2).values\n"
        "    pred = h.max(1)[1]\n    top = torch.topk(h, 3)[0][:, :2]\n"
        "    return F.relu(pooled), pred.eq(target), top, torch.cat(torch.max(h, 1))\n",
        # no evidence that `output` is a tensor: `output.max(1)` may be a pandas Series
        "def test(model, data, target):\n    output = model(data)\n    pred = output.max(1)\n"
        "    return pred.eq(target).sum()\n",
        "import torch\ndef f(masks):\n    m = masks * torch.ones(3)\n    x_max = m.flatten(1).max(-1).values\n"
        "    return torch.stack([x_max, m.flatten(1).min(-1)[0]], 1)\n",
    )
    invalid = (
        "import torch\nx = torch.randn(4, 5)\nbest = torch.max(x, dim=1)\ny = best * 2  # <--\n",
        "import torch\nx = torch.randn(4, 5)\nn = x.sort(dim=1).sum()  # <--\n",
        "import torch\nx = torch.randn(4, 5)\nt = torch.topk(x, 2)\nprint(t.shape)  # <--\n",
        # passed on to a layer, an F function, or inside torch.cat's list
        "import torch\nimport torch.nn as nn\nclass Pool(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(16, 2)\n    def forward(self, h):\n"
        "        pooled = torch.max(h, dim=2)\n        return self.fc(pooled)  # <--\n",
        "import torch\nimport torch.nn.functional as F\ndef f(h):\n    pooled = torch.max(h, 1)\n"
        "    return F.relu(pooled)  # <--\n",
        "import torch\ndef f(h):\n    pooled = h.max(dim=1)\n    return torch.cat([pooled, h], 1)  # <--\n",
        # class indices from one-hot labels: the pair, not its indices, given to the loss
        "import torch\nimport torch.nn as nn\ncriterion = nn.CrossEntropyLoss()\ndef f(out, labels):\n"
        "    return criterion(out, torch.max(labels, 1))  # <--\n",
        # a tensor index on the pair: tuple indices must be integers or slices
        "import torch\ndef f(x):\n    return torch.topk(x, 3)[:, :2]  # <--\n",
        "import torch\ndef f(x):\n    return x.sort(dim=1)[..., 0]  # <--\n",
        # the MNIST test loop: `output` is a tensor (F.nll_loss takes it), `output.max(1)` a pair
        "import torch.nn.functional as F\ndef test(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    pred = output.max(1)\n"
        "    return pred.eq(target).sum()  # <--\n",
        # `flatten(1)` is 2-D whatever the rank of a tensor: its `max(-1)` is the pair
        "import torch\ndef f(masks):\n    m = masks * torch.ones(3)\n    x_max = m.flatten(1).max(-1)\n"
        "    return torch.stack([x_max, m.flatten(1).min(-1)[0]], 1)  # <--\n",
    )

    _OK_ATTRS = {"values", "indices", "count", "index", "_asdict", "_fields"}

    def __init__(self) -> None:
        self._reported: set[tuple[int, str]] = set()
        #: id of a value assigned to a name -> the value, for the values that were the pair there
        self._pair_values: dict[int, cst.BaseExpression] = {}

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """Remember a pair bound to a name, for a use after an ``if`` whose one side bound it."""
        if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name and ctx.function is not None \
                and id(node) in side_assignments(ctx.function) and _reduction_pair(ctx.fact(node.value)):
            if len(self._pair_values) > 4096:
                self._pair_values.clear()
            self._pair_values[id(node.value)] = node.value

    def _pair_side(self, ctx, expr) -> Optional[str]:
        """The side of an ``if`` on which the name ``expr`` (of unknown kind after the join) holds a
        pair: `` `flag` is false``; ``None`` when no side does."""
        if not self._pair_values or type(expr) is not cst.Name or ctx.fact(expr).kind is not None:
            return None  # no side of an `if` bound a pair, or not a name of unknown kind
        for value, side in branch_values(ctx, expr.value, expr):
            if self._pair_values.get(id(value)) is value:
                return side
        return None

    def _first(self, ctx, expr) -> bool:
        """True the first time the pair written ``expr`` is reported in this statement."""
        key = (id(ctx.statement), ctx.source(expr))
        if key in self._reported:
            return False
        self._reported.add(key)
        return True

    def _flag(self, node, ctx, expr) -> bool:
        if not _reduction_pair(ctx.fact(expr)):
            return False  # a pair on one side of an `if` is only read where it is passed on
        if not self._first(ctx, expr):
            return True
        ctx.report(node, f"`{short(ctx, expr)}` is the (values, indices) pair that a reduction with a "
                         f"dim returns, not a tensor; unpack it or use `.values`")
        return True

    def visit_BinaryOperation(self, node, ctx) -> None:
        """The pair as an operand of arithmetic."""
        if not self._flag(node, ctx, node.left):
            self._flag(node, ctx, node.right)

    def visit_Comparison(self, node, ctx) -> None:
        """The pair in a comparison."""
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
            if not self._flag(node, ctx, node.left):
                self._flag(node, ctx, node.comparisons[0].comparator)

    def visit_UnaryOperation(self, node, ctx) -> None:
        """The pair negated or inverted."""
        if type(node.operator) is not cst.Not:
            self._flag(node, ctx, node.expression)

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        """A tensor index (several axes, ``...`` or ``None``) on the pair: a tuple takes one int or slice."""
        elements = node.slice
        if len(elements) == 1:
            index = elements[0].slice
            if not (type(index) is cst.Index and (
                    type(index.value) is cst.Ellipsis
                    or (type(index.value) is cst.Name and index.value.value == "None"))):
                return
        if not _reduction_pair(ctx.fact(node.value)) or not self._first(ctx, node.value):
            return
        ctx.report(node, f"`{short(ctx, node.value)}` is the (values, indices) pair that a reduction with a "
                         f"dim returns, not a tensor: indexing it as a tensor (several axes, `...` or `None`) "
                         f"raises TypeError (tuple indices must be integers or slices); index "
                         f"`.values` (or `[0]`) instead")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """The pair passed where a tensor must be: to an ``nn`` layer, an ``F``/``torch`` function,
        a tensor method, or inside the list ``torch.cat``/``torch.stack`` take."""
        qual = ctx.qualname(node.func)
        if qual is not None and not qual.startswith("torch."):
            return  # neither torch's function nor a tensor method or a layer
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        candidates: list[cst.BaseExpression] = []
        if qual is not None and qual.startswith("torch."):
            name = qual[len("torch."):]
            if name.startswith("nn.functional.") or name in _TENSOR_ARGUMENT_FUNCTIONS:
                candidates = positional
            elif name in _SEQUENCE_FUNCTIONS and positional and isinstance(positional[0], (cst.List, cst.Tuple)):
                candidates = [e.value for e in positional[0].elements if type(e) is not cst.StarredElement]
        elif qual is None:
            func = node.func
            if type(func) is cst.Attribute and func.attr.value in _TENSOR_ARGUMENT_METHODS:
                if ctx.fact(func.value).kind == TENSOR:
                    candidates = positional
            else:
                module = ctx.fact(func)
                if module.kind == MODULE and module.qual is not None and module.qual.startswith("torch.nn."):
                    candidates = positional  # a layer's input, a loss's prediction and target
        for expr in candidates:
            if _reduction_pair(ctx.fact(expr)) and self._first(ctx, expr):
                ctx.report(expr, f"`{short(ctx, expr)}` is the (values, indices) pair that a reduction with a "
                                 f"dim returns, not a tensor: passing it to `{short(ctx, node.func)}` raises "
                                 f"TypeError; unpack it or use `.values`")
                return
            side = self._pair_side(ctx, expr)
            if side is not None and self._first(ctx, expr):
                ctx.report(expr, f"where {side}, `{short(ctx, expr)}` is the (values, indices) pair that a "
                                 f"reduction with a dim returns, not a tensor: passing it to "
                                 f"`{short(ctx, node.func)}` raises TypeError on that path; unpack it or use "
                                 f"`.values`")
                return

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """A tensor attribute or method read on the pair."""
        if node.attr.value in self._OK_ATTRS:
            return
        self._flag(node, ctx, node.value)
