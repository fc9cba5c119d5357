"""SC306 non-differentiable-loss: a loss computed from `argmax`/`argmin`/`round`/comparison results."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules import torch_ops as ops
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name, keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.operators import COMPARISON_OPERATORS
from shapecheck.rules.helpers.scopes import scope_of

_NONDIFF_METHODS = ops.NON_DIFFERENTIABLE_OPS | ops.COMPARISON_OPS


def _index_pair_source(ctx, expr: cst.BaseExpression) -> Optional[str]:
    """``"the indices of `.max()`"`` for ``x.max(dim=1).indices`` or ``torch.topk(x, 3)[1]``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "indices":
        inner = expr.value
    elif (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
        and isinstance(expr.slice[0].slice.value, cst.Integer)
        and expr.slice[0].slice.value.value == "1"
    ):
        inner = expr.value
    else:
        return None
    if not isinstance(inner, cst.Call) or not inner.args:
        return None
    name = torch_name(ctx, inner.func)
    call = method_call(inner)
    op = name if name is not None and "." not in name else (call[1] if call and name is None else None)
    if op in ops.INDEX_PAIR_OPS:
        return f"the indices of `{op}`"
    return None


_TAINT_KEEPING = {"float", "double", "half", "long", "int", "to", "type", "detach", "view",
                  "reshape", "squeeze", "unsqueeze", "flatten", "cpu", "cuda", "clone"}


@register
class NonDifferentiableLoss(Rule):
    """SC306: a loss computed from `argmax`/`argmin`/`round`/comparison results."""
    code = "SC306"
    name = "non-differentiable-loss"
    severity = "error"
    summary = "a loss computed from `argmax`/`argmin`/`round`/comparison results"
    doc = """\
## What it does
Flags the prediction argument of a loss (`F.cross_entropy`, `F.mse_loss`, an `nn.*Loss()`
instance...) and the receiver of `.backward()` when it comes from `argmax`, `argmin`,
`argsort`, the indices of `max`/`min`/`topk`/`sort`, a comparison, or a step function
(`round`, `floor`, `ceil`, `trunc`, `sign`), directly or through a dtype cast.

## Why is this bad?
`argmax`, `argmin`, indices and comparisons return integers or booleans with no gradient, so
the graph is cut: `backward()` raises `RuntimeError: element 0 of tensors does not require
grad and does not have a grad_fn`, or, when other terms keep the loss differentiable, the model
upstream gets no gradient from this term. `round`, `floor`, `ceil`, `trunc` and `sign` have a
zero gradient everywhere: training silently stalls. The target argument is not flagged
(`F.cross_entropy(logits, onehot.argmax(1))` is correct).

## Example
```python
pred = torch.argmax(logits, dim=1)
loss = F.mse_loss(pred.float(), target)   # no gradient reaches logits
```

## Use instead
```python
loss = F.cross_entropy(logits, target)    # the loss on the scores
```
"""
    valid = (
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.tensor([0, 2, 1, 0])\nloss = F.cross_entropy(logits, target)\nloss.backward()\n",
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "onehot = torch.eye(3)[[0, 2, 1, 0]]\nloss = F.cross_entropy(logits, onehot.argmax(dim=1))\n",
        "import torch\nlogits = torch.randn(4, 3)\npred = torch.argmax(logits, dim=1)\n"
        "accuracy = (pred == torch.tensor([0, 1, 2, 0])).float().mean()\n",
        "import torch\nimport torch.nn as nn\nloss_fn = nn.CrossEntropyLoss()\n"
        "logits = torch.randn(4, 3, requires_grad=True)\n"
        "pred = logits.argmax(dim=1)\nlogits = logits * 2\nloss = loss_fn(logits, pred)\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nloss_fn = nn.MSELoss()\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.randn(4)\npred = torch.argmax(logits, dim=1)\nloss = loss_fn(pred.float(), target)  # <--\n",
        "import torch\nimport torch.nn.functional as F\nscores = torch.randn(8, requires_grad=True)\n"
        "target = torch.ones(8)\nloss = F.binary_cross_entropy((scores > 0).float(), target)  # <--\n",
        "import torch\nx = torch.randn(5, requires_grad=True)\nr = torch.round(x)\nr.sum().backward()  # <--\n",
        "import torch\nimport torch.nn.functional as F\nscores = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.randn(4)\nloss = F.mse_loss(scores.max(dim=1).indices.float(), target)  # <--\n",
    )

    def __init__(self) -> None:
        self._tainted: dict[tuple[int, str], str] = {}
        self._losses: set[str] = set()

    def _key(self, ctx, node, name: str) -> tuple[int, str]:
        function = scope_of(ctx, node).function
        if name.startswith("self."):
            return 0, name
        return (id(function) if function is not None else 0), name

    def _source(self, expr: cst.BaseExpression, ctx, node) -> Optional[str]:
        """What made ``expr`` non-differentiable (``"torch.argmax(...)"``), or ``None``."""
        while True:
            index_pair = _index_pair_source(ctx, expr)
            if index_pair is not None:
                return index_pair
            if isinstance(expr, cst.Comparison):
                if any(isinstance(t.operator, COMPARISON_OPERATORS) for t in expr.comparisons):
                    return "a comparison"
                return None
            call = method_call(expr)
            name = torch_name(ctx, expr.func) if isinstance(expr, cst.Call) else None
            if name is not None and name.split(".")[-1] in _NONDIFF_METHODS and "." not in name:
                return f"`torch.{name}`"
            if name is None and call is not None:
                if call[1] in _NONDIFF_METHODS:
                    return f"`.{call[1]}()`"
                if call[1] in _TAINT_KEEPING:
                    expr = call[0]
                    continue
                return None
            dotted = dotted_name(expr)
            if dotted is not None:
                return self._tainted.get(self._key(ctx, node, dotted))
            return None

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """Remembers the names bound to a value without gradient, and to a loss module."""
        source = self._source(node.value, ctx, node)
        is_loss = self._is_loss_constructor(node.value, ctx)
        for target in node.targets:
            dotted = dotted_name(target.target)
            if dotted is None:
                continue
            key = self._key(ctx, node, dotted)
            if source is not None:
                self._tainted[key] = source
            else:
                self._tainted.pop(key, None)
            if is_loss:
                self._losses.add(dotted)

    def _is_loss_constructor(self, value: cst.BaseExpression, ctx) -> bool:
        if not isinstance(value, cst.Call):
            return False
        name = torch_name(ctx, value.func)
        return name is not None and name.startswith("nn.") and name.endswith("Loss")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """The prediction given to a loss, and the receiver of ``.backward()``, when they come from
        an op without gradient."""
        prediction = self._prediction(node, ctx)
        if prediction is not None:
            source = self._source(prediction, ctx, node)
            if source is not None:
                ctx.report(
                    node,
                    f"the loss input `{short(ctx, prediction)}` comes from {source}, which has "
                    f"no useful gradient: nothing upstream learns from this loss (backward "
                    f"raises RuntimeError or gets zero gradients); compute the loss on the "
                    f"scores or logits",
                )
            return
        call = method_call(node)
        if call is not None and call[1] == "backward" and torch_name(ctx, node.func) is None:
            source = self._source(call[0], ctx, node)
            if source is None and isinstance(call[0], cst.Call):
                inner = method_call(call[0])
                if inner is not None and inner[1] in ("sum", "mean"):
                    source = self._source(inner[0], ctx, node)
            if source is not None:
                ctx.report(
                    node,
                    f"`{short(ctx, call[0])}` comes from {source}, which has no useful "
                    f"gradient: `backward()` raises RuntimeError (element 0 of tensors does not "
                    f"require grad) or computes zero gradients",
                )

    def _prediction(self, node: cst.Call, ctx) -> Optional[cst.BaseExpression]:
        name = torch_name(ctx, node.func)
        args = positional(node)
        if name is not None and name.startswith("nn.functional.") and name.split(".")[-1] in ops.FUNCTIONAL_LOSSES:
            arg = keyword(node, "input")
            return args[0] if args else (arg.value if arg is not None else None)
        dotted = dotted_name(node.func)
        if dotted is not None and dotted in self._losses and args:
            return args[0]
        if isinstance(node.func, cst.Call) and self._is_loss_constructor(node.func, ctx) and args:
            return args[0]
        return None
