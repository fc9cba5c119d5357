"""SC302 inplace-on-saved-tensor: a tensor that autograd saved for backward is changed in place before
`backward()`."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_calls import BACKWARD_WORDS, backward_root
from shapecheck.rules.autograd.graph_rule import GraphRule
from shapecheck.rules.autograd.inplace import augassign_target, inplace_call_targets, subscript_targets
from shapecheck.rules.autograd_graph import records_in
from shapecheck.rules.base import register
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.scopes import grad_enabled
from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD


@register
class InplaceOnSavedTensor(GraphRule):
    """SC302: a tensor that autograd saved for backward is changed in place before `backward()`."""
    code = "SC302"
    needs = BACKWARD_WORDS
    name = "inplace-on-saved-tensor"
    severity = "error"
    summary = "a tensor that autograd saved for backward is changed in place before `backward()`"
    doc = """\
## What it does
Flags an in-place change (`y.add_(1)`, `y += 1`, `y[0] = 0`, `out=y`) of a tensor that an
earlier op saved for its backward pass, when a `backward()` (or `torch.autograd.grad`) through
that op follows in the same function. Which ops save what is read from torch: `exp`, `sigmoid`,
`tanh`, `relu`, `sqrt`, `softmax` save their output; `mul`, `div`, `matmul`, `pow`, `log`,
`sin` save inputs (`x * w` saves `w` when `x` requires grad, and `x` when `w` does); `add`,
`sub` and a product with a Python number save nothing, and are not flagged.

## Why is this bad?
Every tensor has a version counter that in-place ops bump. At `backward()`, autograd checks that
each saved tensor still has the version it had when it was saved, and raises `RuntimeError: one
of the variables needed for gradient computation has been modified by an inplace operation`.

## Example
```python
x = torch.randn(3, requires_grad=True)
y = x.exp()                   # exp saves its output y
y.add_(1)
y.sum().backward()            # RuntimeError
```

## Use instead
```python
y = x.exp()
y = y + 1                     # a new tensor; the saved one is untouched
y.sum().backward()
```
"""
    valid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny = y + 1\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 1\ny = h * 2\nh.add_(1)\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x + 1\ny.add_(1)\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.sum().backward()\ny.add_(1)\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = x.exp()\ny.add_(1)\n"
        "z = (x * 2).sum()\nz.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\nz = x.sin().sum()\ny.add_(1)\n"
        "z.backward()\n",
    )
    invalid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)  # <--\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nc = torch.randn(3)\ny = x * c\nc.mul_(0)  # <--\n"
        "y.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = torch.sigmoid(x)\nloss = (h * 2).sum()\n"
        "h[0] = 0.0  # <--\nloss.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.randn(3)\nz = x @ y\ny += 1  # <--\n"
        "z.backward()\n",
    )

    def __init__(self) -> None:
        super().__init__()
        self._reported: set[int] = set()

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """``y[0] = 0`` changes ``y`` in place; every assignment records what its value saved."""
        for target in subscript_targets(node):
            self._changed(target, node, ctx)
        self.assigned(node, [t.target for t in node.targets], node.value, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign, ctx) -> None:
        """An annotated assignment records what its value saved, as a plain one does."""
        if node.value is not None:
            self.assigned(node, [node.target], node.value, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        """``y += 1`` changes ``y`` in place."""
        self._changed(augassign_target(node), node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """In-place calls change their tensor; a backward call reports the saved tensors changed
        before it."""
        for target, _how in inplace_call_targets(ctx, node):
            self._changed(target, node, ctx)
        root = backward_root(ctx, node)
        if root is not None:
            self._backward(root, node, ctx)

    def _changed(self, target: cst.BaseExpression, node: cst.CSTNode, ctx) -> None:
        dotted = dotted_name(target)
        if dotted is None:
            return
        fact = ctx.fact(target)
        if fact.grad == LEAF_REQUIRES_GRAD and grad_enabled(ctx, node) is True:
            return  # SC301 reports this one
        graph = self.graph(ctx, node)
        binding = graph.binding(dotted)
        for record in graph.records:
            if record.binding == binding and record.changed_by is None:
                record.changed_by = node

    def _backward(self, root: cst.BaseExpression, node: cst.Call, ctx) -> None:
        graph = self.graph(ctx, node)
        deps = graph.deps_of(root)
        if grad_enabled(ctx, node) is not False:
            deps |= records_in(ctx, graph, root, None)
        for index in sorted(deps):
            record = graph.records[index]
            changed = record.changed_by
            if changed is None or id(changed) in self._reported:
                continue
            self._reported.add(id(changed))
            what = "its output" if record.role == "result" else f"`{record.binding[0]}`"
            ctx.report(
                changed,
                f"`{record.binding[0]}` is changed in place here, but `{record.op}` saved "
                f"{what} for backward: `{short(ctx, node)}` then raises RuntimeError (one of "
                f"the variables needed for gradient computation has been modified by an "
                f"inplace operation); assign a new tensor instead (`{record.binding[0]} = ...`)",
            )
