"""SC308 training-loop-gradients: gradients never cleared in a training loop, or `backward()` twice on
one graph."""

from __future__ import annotations

import re

from typing import Union

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.autograd.zero_grad_order import zeroed_before_step
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name, is_name, keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.walk import walk
from shapecheck.semantic.saved_tensors import names_read
from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, NO_GRAD, OPTIMIZER
from shapecheck.semantic.torch_api import FACTORIES, PARAMETER_CLASSES

_OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)(s|\d*)?($|_)", re.IGNORECASE)


def _optimizer_like(ctx, expr: cst.BaseExpression) -> bool:
    if ctx.fact(expr).kind == OPTIMIZER:
        return True
    dotted = dotted_name(expr)
    return dotted is not None and bool(_OPTIMIZER_NAME.search(dotted.split(".")[-1]))


def _zeroes_grads(ctx, node: cst.CSTNode) -> bool:
    """True for ``*.zero_grad(...)``, ``*zero_grad*()``, ``p.grad = None``, ``p.grad.zero_()``."""
    if type(node) is cst.Call:
        dotted = dotted_name(node.func)
        if dotted is not None and "zero_grad" in dotted.split(".")[-1]:
            return True
        call = method_call(node)
        if call is not None and call[1] in ("zero_", "detach_", "fill_", "mul_"):
            receiver = dotted_name(call[0]) or ""
            if "grad" in receiver.split(".")[1:]:
                return True  # p.grad.zero_(), p.grad.data.zero_()
    if isinstance(node, (cst.Assign, cst.Del)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        return any(type(t) is cst.Attribute and t.attr.value == "grad" for t in targets)
    return False


def _retains(node: cst.Call) -> bool:
    arg = keyword(node, "retain_graph")
    if arg is not None and not is_name(arg.value, "False") and not is_name(arg.value, "None"):
        return True
    arg = keyword(node, "create_graph")
    return arg is not None and not is_name(arg.value, "False")


@register
class TrainingLoopGradients(Rule):
    """SC308: gradients never cleared in a training loop, or `backward()` twice on one graph."""
    code = "SC308"
    needs = ("backward",)
    name = "training-loop-gradients"
    severity = "error"
    summary = "gradients never cleared in a training loop, or `backward()` twice on one graph"
    doc = """\
## What it does
Flags two mistakes of training loops:

- a `for`/`while` loop that calls `backward()` and an optimizer's `step()` but never clears the
  gradients (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`). Gradient
  accumulation, with `zero_grad()` under an `if`, is fine and not flagged. A call of a function
  or method of the file (or of another file of the run) counts with what it does: a helper
  that calls `zero_grad()` clears the gradients, one that calls `backward()` runs a backward pass.
- a second `backward()` through the same graph without `retain_graph=True` on the first: the
  same loss twice in a row, or a loss computed before a loop and back-propagated inside it.
- `optimizer.zero_grad()` between `loss.backward()` and `optimizer.step()` (or
  `scaler.step(optimizer)`) in one block: the step sees cleared gradients. The receiver needs
  no type: `.zero_grad()` and `.step()` on one name after a `backward()` is an optimizer's use.

## Why is this bad?
`backward()` adds into `.grad`; without clearing, every step applies the sum of all gradients so
far and training diverges, with no error. A backward pass frees the graph's saved tensors; the
second one raises `RuntimeError: Trying to backward through the graph a second time`.
Gradients cleared before the step leave it nothing to apply (`None` grads are skipped): the
parameters never change, with no error.

## Example
```python
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()                    # gradients keep piling up
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
```
For two backward passes through one graph, pass `retain_graph=True` to the first, or add the
losses and call `backward()` once.
"""
    valid = (
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n        optimizer.zero_grad()\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        optimizer.step()\n",
        "def train(model, loader, loss_fn, optimizer, accum=4):\n    for i, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y) / accum\n        loss.backward()\n        if (i + 1) % accum == 0:\n"
        "            optimizer.step()\n            optimizer.zero_grad()\n",
        "def fit(model, batches, loss_fn, opt):\n    for x, y in batches:\n        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n        opt.step()\n        model.zero_grad(set_to_none=True)\n",
        "def two_losses(model, x, y, f, g):\n    out = model(x)\n    loss1 = f(out, y)\n    loss2 = g(out, y)\n"
        "    loss1.backward(retain_graph=True)\n    loss2.backward()\n",
        "def lbfgs(model, x, y, loss_fn, optimizer):\n    for _ in range(5):\n        def closure():\n"
        "            optimizer.zero_grad()\n            loss = loss_fn(model(x), y)\n            loss.backward()\n"
        "            return loss\n        optimizer.step(closure)\n",
        "def branches(model, x, y, loss_fn, flag):\n    loss = loss_fn(model(x), y)\n    if flag:\n"
        "        loss.backward()\n    else:\n        loss.backward()\n",
        "def train(model, loader, loss_fn, optimizer, scheduler):\n    for x, y in loader:\n"
        "        optimizer.zero_grad()\n"
        "        loss_fn(model(x), y).backward()\n        optimizer.step()\n        scheduler.step()\n",
        "class Trainer:\n    def __init__(self, model, optimizer, loss_fn):\n        self.model = model\n"
        "        self.optimizer = optimizer\n        self.loss_fn = loss_fn\n"
        "    def reset(self):\n        self.optimizer.zero_grad()\n"
        "    def fit(self, loader):\n        for x, y in loader:\n            self.reset()\n"
        "            loss = self.loss_fn(self.model(x), y)\n            loss.backward()\n"
        "            self.optimizer.step()\n",
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n        reset_grad(optimizer)\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        optimizer.step()\n"
        "def reset_grad(optimizer):\n    clear(optimizer)\n"
        "def clear(opt):\n    opt.zero_grad(set_to_none=True)\n",
        # zero_grad after the step (also with gradient accumulation), or of another object
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        optimizer.step()\n"
        "        optimizer.zero_grad(set_to_none=True)\n",
        "def train(model, loader, loss_fn, optimizer, gan_opt):\n    for x, y in loader:\n"
        "        optimizer.zero_grad()\n        loss = loss_fn(model(x), y)\n        loss.backward()\n"
        "        gan_opt.zero_grad()\n        optimizer.step()\n",
        "def train(model, x, y, loss_fn, opt):\n    for _ in range(3):\n        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n        opt.zero_grad()\n        def closure():\n            opt.zero_grad()\n"
        "            out = loss_fn(model(x), y)\n            out.backward()\n            return out\n"
        "        opt.step(closure)\n",
        "def step(model, x, y, loss_fn, opt, aux):\n    loss_fn(model(x), y).backward()\n    opt.zero_grad()\n"
        "    aux(model).backward()\n    opt.step()\n",
    )
    invalid = (
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n        optimizer.step()  # <--\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()  # <--\n",
        "def train(model, x, y, loss_fn, optimizer):\n    optimizer.zero_grad()\n    loss = loss_fn(model(x), y)\n"
        "    for _ in range(3):\n        loss.backward()  # <--\n        optimizer.step()\n"
        "        optimizer.zero_grad()\n",
        "def step(loss):\n    loss.backward()\n"
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n        step(loss)\n        optimizer.step()  # <--\n",
        "class Trainer:\n    def __init__(self, optimizer):\n        self.optimizer = optimizer\n"
        "    def reset(self):\n        self.optimizer.step()\n"
        "    def fit(self, model, loader, loss_fn):\n        for x, y in loader:\n            self.reset()\n"
        "            loss_fn(model(x), y).backward()\n            self.optimizer.step()  # <--\n",
        # the gradients are cleared between backward() and step(): the step applies nothing
        "def train(model, loader, criterion, optimizer):\n    for x, y in loader:\n        out = model(x)\n"
        "        loss = criterion(out, y)\n        loss.backward()\n        optimizer.zero_grad()  # <--\n"
        "        optimizer.step()\n",
        "def train_step(model, x, y, criterion, optimizer, scaler):\n    loss = criterion(model(x), y)\n"
        "    scaler.scale(loss).backward()\n    optimizer.zero_grad()  # <--\n    scaler.step(optimizer)\n"
        "    scaler.update()\n",
    )

    def __init__(self) -> None:
        self._reported: set[int] = set()

    # -- missing zero_grad ------------------------------------------------------------------
    def _loop(self, node: Union[cst.For, cst.While], ctx) -> None:
        backward = False
        steps: list[cst.Call] = []
        zeroed = False
        for inner in walk(node.body):
            if type(inner) is cst.Call:
                call = method_call(inner)
                if backward_root(ctx, inner) is not None and torch_name(ctx, inner.func) != "autograd.grad":
                    backward = True
                elif call is not None and call[1] == "step":
                    args = positional(inner)
                    if _optimizer_like(ctx, call[0]) or (args and _optimizer_like(ctx, args[0])):
                        steps.append(inner)
                effects = ctx.call_effects(inner)
                if effects is not None:  # a helper of the file: what it does counts here
                    backward = backward or effects.backward
                    zeroed = zeroed or effects.zero_grads
            if _zeroes_grads(ctx, inner):
                zeroed = True
        if not backward or not steps or zeroed:
            return
        step = steps[0]
        if id(step) in self._reported:
            return
        self._reported.add(id(step))
        ctx.report(
            step,
            f"`{short(ctx, step)}` runs in a loop that calls `backward()` but never "
            f"`zero_grad()`: backward() adds into `.grad`, so every step applies the sum of all "
            f"earlier gradients; call `optimizer.zero_grad()` once per step",
        )

    def visit_For(self, node: cst.For, ctx) -> None:
        """A ``for`` loop that steps an optimizer after ``backward()`` and never clears the
        gradients, or clears them between the two."""
        self._loop(node, ctx)
        self._zeroed_too_late(node, ctx)

    def visit_While(self, node: cst.While, ctx) -> None:
        """A ``while`` loop that steps an optimizer after ``backward()`` and never clears the
        gradients, or clears them between the two."""
        self._loop(node, ctx)
        self._zeroed_too_late(node, ctx)

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        """A training step that clears the gradients between ``backward()`` and ``step()``."""
        self._zeroed_too_late(node, ctx)

    # -- zero_grad between backward and step -------------------------------------------------
    def _zeroed_too_late(self, node: Union[cst.For, cst.While, cst.FunctionDef], ctx) -> None:
        if type(node.body) is not cst.IndentedBlock:
            return
        for zero, step, optimizer in zeroed_before_step(ctx, node.body.body):
            if id(zero) in self._reported:
                continue
            self._reported.add(id(zero))
            ctx.report(
                zero,
                f"`{short(ctx, zero)}` runs after `backward()` and before `{short(ctx, step)}`: "
                f"it clears the gradients just computed, so the step updates `{optimizer}`'s "
                f"parameters with none (no error, the model does not train); call it before "
                f"`backward()`",
            )

    # -- backward twice ---------------------------------------------------------------------
    def visit_Call(self, node: cst.Call, ctx) -> None:
        """A second ``backward()`` through a graph that an earlier one freed on every path here, or
        one in a loop on a graph built before it."""
        call = method_call(node)
        if call is None or call[1] != "backward" or torch_name(ctx, node.func) is not None:
            return
        dotted = dotted_name(call[0])
        if dotted is None:
            return
        values = ctx.assigned_values(dotted)
        if not values or not all(self._computed(value, ctx) for value in values):
            return
        fact = ctx.fact(call[0])
        if fact.grad in (LEAF_REQUIRES_GRAD, NO_GRAD):
            return
        if ctx.freed_by_backward(dotted) is not None:
            self._report_twice(node, dotted, "a second time", ctx)
            return
        if _retains(node):
            return
        loop = ctx.loop
        if loop is not None and not self._assigned_in(loop, dotted, ctx):
            self._report_twice(node, dotted, "on every iteration of this loop", ctx)

    def _report_twice(self, node: cst.Call, name: str, when: str, ctx) -> None:
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        ctx.report(
            node,
            f"`{short(ctx, node)}` runs backward through the graph of `{name}` {when}, after the "
            f"first pass freed it: RuntimeError (Trying to backward through the graph a second "
            f"time); pass `retain_graph=True` to the earlier call, or recompute `{name}`",
        )

    @staticmethod
    def _computed(value: cst.BaseExpression, ctx) -> bool:
        """True when ``value`` is an op result (a graph), not a fresh factory or a parameter."""
        if type(value) is cst.BinaryOperation:
            return True
        if type(value) is cst.Call:
            name = torch_name(ctx, value.func)
            return name is None or name not in FACTORIES | PARAMETER_CLASSES
        return False

    def _assigned_in(self, loop: cst.CSTNode, name: str, ctx) -> bool:
        for inner in walk(loop):
            if type(inner) is cst.Assign:
                for target in inner.targets:
                    if name in names_read(target.target):
                        return True
            elif isinstance(inner, (cst.AugAssign, cst.AnnAssign)) and name in names_read(inner.target):
                return True
            elif isinstance(inner, (cst.For, cst.CompFor)) and name in names_read(inner.target):
                return True
        return False
