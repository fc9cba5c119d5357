"""SC308 training-loop-gradients: gradients never cleared in a training loop, or `backward()` twice on
one graph."""

from __future__ import annotations

import re

from typing import Optional, Union

import libcst as cst

from shapecheck.rules.autograd.backward_calls import backward_root
from shapecheck.rules.autograd.fresh_leaves import fresh_optimizer
from shapecheck.rules.autograd.optimizer_owners import overlap, params_owner
from shapecheck.rules.autograd.zero_grad_order import zeroed_before_step
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name, is_name, keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.backward_targets import WRAPPER_ONLY
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


def _closure(ctx, step: cst.Call) -> Optional[cst.FunctionDef]:
    """The function of the current scope that ``optimizer.step(closure)`` is given, when one
    ``def`` of that name lies in the scope."""
    args = positional(step)
    given = keyword(step, "closure")
    arg = args[0] if args else given.value if given is not None else None
    if type(arg) is not cst.Name:
        return None
    scope = ctx.function if ctx.function is not None else ctx.module
    found = [n for n in walk(scope.body if type(scope) is cst.FunctionDef else scope)
             if type(n) is cst.FunctionDef and n.name.value == arg.value]
    return found[0] if len(found) == 1 else None


def _gradient_effects(ctx, func: cst.FunctionDef) -> tuple[bool, bool]:
    """Whether the body of ``func`` runs a backward pass, and whether it clears gradients
    (itself or through the helpers of the file it calls)."""
    backward = zeroed = False
    for inner in walk(func.body):
        if type(inner) is cst.Call:
            if backward_root(ctx, inner) is not None and torch_name(ctx, inner.func) != "autograd.grad":
                backward = True
            effects = ctx.call_effects(inner)
            if effects is not None:
                backward = backward or effects.backward
                zeroed = zeroed or effects.zero_grads
        if _zeroes_grads(ctx, inner):
            zeroed = True
    return backward, zeroed


def _zero_grad_receiver(node: cst.CSTNode) -> Optional[str]:
    """``r`` for a ``r.zero_grad(...)`` call with ``r`` a dotted name, else ``None``."""
    if type(node) is not cst.Call:
        return None
    call = method_call(node)
    return dotted_name(call[0]) if call is not None and call[1] == "zero_grad" else None


def _stepped_optimizer(step: cst.Call) -> Optional[cst.BaseExpression]:
    """The optimizer ``opt.step()`` (or ``scaler.step(opt)``) steps: ``opt`` when it has no
    arguments or only a closure, the argument of ``scaler.step(opt)``; else ``None``."""
    call = method_call(step)
    if call is None:
        return None
    args = positional(step)
    if _OPTIMIZER_NAME.search((dotted_name(call[0]) or "").split(".")[-1]) or not args:
        return call[0]
    return args[0] if len(args) == 1 else None


def _retains(node: cst.Call) -> bool:
    arg = keyword(node, "retain_graph")
    if arg is not None and not is_name(arg.value, "False") and not is_name(arg.value, "None"):
        return True
    arg = keyword(node, "create_graph")
    return arg is not None and not is_name(arg.value, "False")


_GAN = (
    "import torch\n""import torch.nn as nn\n""import torch.optim as optim\n"
    "class Gen(nn.Module):\n""    def __init__(self):\n""        super().__init__()\n"
    "        self.fc = nn.Linear(8, 4)\n""    def forward(self, z):\n""        return torch.tanh(self.fc(z))\n"
    "class Disc(nn.Module):\n""    def __init__(self):\n""        super().__init__()\n"
    "        self.fc = nn.Linear(4, 1)\n""    def forward(self, x):\n""        return torch.sigmoid(self.fc(x))\n"
    "def train(loader, criterion):\n""    netG, netD = Gen(), Disc()\n"
    "    optG = optim.Adam(netG.parameters())\n""    optD = optim.Adam(netD.parameters())\n"
    "    for real in loader:\n""        netD.zero_grad()\n""        noise = torch.randn(16, 8)\n"
    "        ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)\n"
)


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
  The closure given to `optimizer.step(closure)` (LBFGS calls it several times per step) counts
  as part of the loop. With several optimizers built as `optim.X(M.parameters())`, each one's
  gradients must be cleared (`opt.zero_grad()` or `M.zero_grad()`): a GAN loop that clears only
  the discriminator's is flagged at the generator's step. An optimizer built in each iteration
  over leaves also made in it (`x = x0.clone().requires_grad_(); opt = optim.Adam([x])`, or
  `model = Net(); opt = optim.SGD(model.parameters())` with a class called, not a function
  that may return a module it keeps) starts with empty gradients and is not flagged.
- a second `backward()` through the same graph without `retain_graph=True` on the first: the
  same loss twice in a row, a loss computed before a loop and back-propagated inside it, or a
  loss computed from a value (the output of a module of the file) that an earlier loss was
  back-propagated through (a GAN's discriminator loss on `netG(z)` without `.detach()`, then the
  generator's loss on it). A wrapper's `accelerator.backward(loss)`, `fabric.backward(loss)`,
  `self.manual_backward(loss)` (a `.backward(...)` with a positional argument on a receiver not
  known to be a tensor) back-propagates `loss`.
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
        # `.backward(g)` on a call's result starts from that result: `g` is the upstream gradient
        "import torch\ndef check(fn, x):\n    g = torch.randn(3, requires_grad=True).double()\n"
        "    fn.apply(x).backward(g)\n    fn.apply(x).backward(g)\n",
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
        # each optimizer's gradients cleared through its module
        "import torch.optim as optim\n""def train(netG, netD, loader, criterion, noise):\n"
        "    optimizerD = optim.Adam(netD.parameters())\n""    optimizerG = optim.Adam(netG.parameters())\n"
        "    for real, label in loader:\n""        netD.zero_grad()\n"
        "        criterion(netD(real), label).backward()\n""        fake = netG(noise)\n"
        "        criterion(netD(fake.detach()), 1 - label).backward()\n""        optimizerD.step()\n"
        "        netG.zero_grad()\n""        criterion(netD(fake), label).backward()\n"
        "        optimizerG.step()\n",
        # a `zero_grad()` on a name not matched to any optimizer may clear it under another name
        "import torch.optim as optim\n""def train(model, net, loader, loss_fn):\n"
        "    opt = optim.SGD(model.parameters(), lr=0.1)\n""    for x, y in loader:\n"
        "        net.zero_grad()\n""        loss_fn(model(x), y).backward()\n""        opt.step()\n",
        "import torch.optim as optim\n""def lbfgs(model, x, y, loss_fn):\n"
        "    optimizer = optim.LBFGS(model.parameters())\n""    for _ in range(5):\n"
        "        def closure():\n""            model.zero_grad()\n"
        "            loss = loss_fn(model(x), y)\n""            loss.backward()\n"
        "            return loss\n""        optimizer.step(closure)\n",
        # a wrapper's backward (accelerate, fabric) back-propagates its argument, not its receiver
        "from accelerate import Accelerator\n""def train(model, loader, opt):\n""    accelerator = Accelerator()\n"
        "    for batch in loader:\n""        loss = model(batch).mean()\n""        accelerator.backward(loss)\n"
        "        opt.step()\n""        opt.zero_grad()\n",
        "import torch\n""def train(model, loader, opt, scaler):\n""    for batch in loader:\n"
        "        loss = model(batch).mean()\n""        scaler.scale(loss).backward()\n""        scaler.step(opt)\n"
        "        scaler.update()\n""        opt.zero_grad(set_to_none=True)\n",
        # gradients cleared by a helper of the file, or through `p.grad = None`
        "def reset_grad(opt_g, opt_d):\n""    opt_g.zero_grad()\n""    opt_d.zero_grad()\n"
        "def train(model, loader, loss_fn, opt_g, opt_d):\n""    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n""        loss.backward()\n""        opt_g.step()\n"
        "        reset_grad(opt_g, opt_d)\n",
        "def train(model, loader, loss_fn, opt):\n""    for x, y in loader:\n""        for p in model.parameters():\n"
        "            p.grad = None\n""        loss_fn(model(x), y).backward()\n""        opt.step()\n",
        # a new leaf and a new optimizer in each iteration: nothing accumulates
        "import torch\n""def refine(x0, target, steps):\n""    for _ in range(steps):\n"
        "        x = x0.clone().requires_grad_(True)\n""        opt = torch.optim.Adam([x], lr=0.1)\n"
        "        loss = ((x - target) ** 2).sum()\n""        loss.backward()\n""        opt.step()\n",
        "import torch\n""def guide(latents, unet, timesteps, lr):\n""    for t in timesteps:\n"
        "        x_in = latents.detach().clone()\n""        x_in.requires_grad = True\n"
        "        opt = torch.optim.SGD([x_in], lr=lr)\n""        unet(x_in, t).sum().backward()\n"
        "        opt.step()\n""        latents = x_in.detach()\n",
        # `Fn.apply(x)` of an autograd Function is a tensor: `.backward(g)` on it starts there
        "import torch\n""class Rev(torch.autograd.Function):\n""    @staticmethod\n""    def forward(ctx, x):\n"
        "        return x.flip(0)\n""    @staticmethod\n""    def backward(ctx, g):\n""        return g.flip(0)\n"
        "def check():\n""    a = torch.randn(4, requires_grad=True)\n"
        "    g = torch.randn(4, requires_grad=True).double()\n""    expected = a.flip(0)\n"
        "    expected.backward(g)\n""    out = Rev.apply(a)\n""    out.backward(g)\n",
        # a new module (a class called) and an optimizer over its parameters in each iteration
        "import torch\n""import torch.nn as nn\n""def sweep(sizes):\n""    for hidden in sizes:\n"
        "        model = nn.Linear(hidden, 2)\n""        opt = torch.optim.SGD(model.parameters(), 1)\n"
        "        model(torch.randn(3, hidden)).sum().backward()\n""        opt.step()\n",
        "import torch\n""import torch.nn as nn\n""class Gen(nn.Module):\n""    def __init__(self, n):\n"
        "        super().__init__()\n""        self.fc = nn.Linear(n, n)\n""    def forward(self, x):\n"
        "        return self.fc(x)\n""def check(cases):\n""    for case in cases:\n""        gen = Gen(**case)\n"
        "        trainable = {n: p for n, p in gen.named_parameters() if p.requires_grad}\n"
        "        gen(torch.randn(2, 4)).sum().backward()\n""        opt = torch.optim.SGD(trainable.values(), 1)\n"
        "        opt.step()\n",
        # `dim=` in a call on the wrapper does not make it a tensor
        "from accelerate import Accelerator\n""def train(model, loader, opt):\n""    accelerator = Accelerator()\n"
        "    for batch in loader:\n""        loss = model(batch).mean()\n""        accelerator.backward(loss)\n"
        "        opt.step()\n""        opt.zero_grad()\n"
        "        out = accelerator.pad_across_processes(loss, dim=1)\n",
        # the generator's output detached for the discriminator's loss: the two graphs share nothing
        _GAN + "        fake = netG(noise)\n""        errD = criterion(netD(fake.detach()), zeros)\n"
        "        errD.backward()\n""        optD.step()\n""        netG.zero_grad()\n"
        "        errG = criterion(netD(fake), ones)\n""        errG.backward()\n""        optG.step()\n",
        # ... or the first backward keeps the graph
        _GAN + "        fake = netG(noise)\n""        errD = criterion(netD(fake), zeros)\n"
        "        errD.backward(retain_graph=True)\n""        optD.step()\n""        netG.zero_grad()\n"
        "        errG = criterion(netD(fake), ones)\n""        errG.backward()\n""        optG.step()\n",
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
        # the module comes from a function, which may return the same one each time
        "import torch\n""import torch.nn as nn\n""net = nn.Linear(4, 2)\n""def get_model():\n""    return net\n"
        "for step in range(3):\n""    model = get_model()\n""    opt = torch.optim.SGD(model.parameters(), 0.1)\n"
        "    model(torch.randn(3, 4)).sum().backward()\n""    opt.step()  # <--\n",
        # the gradients are cleared between backward() and step(): the step applies nothing
        "def train(model, loader, criterion, optimizer):\n    for x, y in loader:\n        out = model(x)\n"
        "        loss = criterion(out, y)\n        loss.backward()\n        optimizer.zero_grad()  # <--\n"
        "        optimizer.step()\n",
        "def train_step(model, x, y, criterion, optimizer, scaler):\n    loss = criterion(model(x), y)\n"
        "    scaler.scale(loss).backward()\n    optimizer.zero_grad()  # <--\n    scaler.step(optimizer)\n"
        "    scaler.update()\n",
        # the generator's gradients are never cleared: only the discriminator's are
        "import torch.optim as optim\n""def train(netG, netD, loader, criterion, noise):\n"
        "    optimizerD = optim.Adam(netD.parameters())\n""    optimizerG = optim.Adam(netG.parameters())\n"
        "    for real, label in loader:\n""        netD.zero_grad()\n"
        "        criterion(netD(real), label).backward()\n""        fake = netG(noise)\n"
        "        criterion(netD(fake.detach()), 1 - label).backward()\n""        optimizerD.step()\n"
        "        criterion(netD(fake), label).backward()\n""        optimizerG.step()  # <--\n",
        # the closure an LBFGS step runs calls backward() and never clears the gradients
        "import torch.optim as optim\n""def fit(model, x, y, loss_fn, steps):\n"
        "    optimizer = optim.LBFGS(model.parameters())\n""    for _ in range(steps):\n"
        "        def closure():\n""            loss = loss_fn(model(x), y)\n""            loss.backward()\n"
        "            return loss\n""        optimizer.step(closure)  # <--\n",
        # a wrapper's backward twice through one loss
        "from accelerate import Accelerator\n""def train(model, x, loader, opt):\n""    accelerator = Accelerator()\n"
        "    loss = model(x).mean()\n""    for batch in loader:\n""        accelerator.backward(loss)  # <--\n"
        "        opt.step()\n""        opt.zero_grad()\n",
        # a new optimizer each iteration clears nothing: the model's gradients still pile up
        "import torch\n""def train(model, loader, loss_fn):\n""    for x, y in loader:\n"
        "        opt = torch.optim.SGD(model.parameters(), lr=0.1)\n""        loss_fn(model(x), y).backward()\n"
        "        opt.step()  # <--\n",
        # the discriminator's loss back-propagated through the generator's output (no `.detach()`)
        # freed the generator's graph, which the generator's loss then needs
        _GAN + "        fake = netG(noise)\n""        errD = criterion(netD(fake), zeros)\n"
        "        errD.backward()\n""        optD.step()\n""        netG.zero_grad()\n"
        "        errG = criterion(netD(fake), ones)\n""        errG.backward()  # <--\n""        optG.step()\n",
    )

    def __init__(self) -> None:
        self._reported: set[int] = set()

    # -- missing zero_grad ------------------------------------------------------------------
    def _loop(self, node: Union[cst.For, cst.While], ctx) -> None:
        if not any(type(inner) is cst.Call and type(inner.func) is cst.Attribute
                   and inner.func.attr.value == "step" for inner in walk(node.body)):
            return  # no `.step(...)` in the loop: no optimizer steps there, whatever else it calls
        backward = False
        steps: list[cst.Call] = []
        zeroed = False  # some gradients cleared in a way not matched to one optimizer
        cleared: list[str] = []  # the receivers of the loop's `r.zero_grad()` calls
        for inner in walk(node.body):
            if type(inner) is cst.Call:
                call = method_call(inner)
                if backward_root(ctx, inner) is not None and torch_name(ctx, inner.func) != "autograd.grad":
                    backward = True
                elif call is not None and call[1] == "step":
                    args = positional(inner)
                    if _optimizer_like(ctx, call[0]) or (args and _optimizer_like(ctx, args[0])):
                        steps.append(inner)
                        closure = _closure(ctx, inner)
                        if closure is not None:  # `optimizer.step(closure)` runs the closure's body
                            ran, zeroes = _gradient_effects(ctx, closure)
                            backward, zeroed = backward or ran, zeroed or zeroes
                effects = ctx.call_effects(inner)
                if effects is not None:  # a helper of the file: what it does counts here
                    backward = backward or effects.backward
                    zeroed = zeroed or effects.zero_grads
            if _zeroes_grads(ctx, inner):
                receiver = _zero_grad_receiver(inner)
                if receiver is None:
                    zeroed = True
                else:
                    cleared.append(receiver)
        if not backward or not steps or zeroed:
            return
        if all(fresh_optimizer(ctx, node.body, _stepped_optimizer(step)) for step in steps):
            return  # each iteration steps new leaves: nothing accumulates
        if cleared:
            self._uncleared_optimizer(steps, cleared, ctx)
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

    def _uncleared_optimizer(self, steps: list[cst.Call], cleared: list[str], ctx) -> None:
        """Report the first step of an optimizer (built from ``M.parameters()``) whose gradients
        none of the loop's ``zero_grad()`` calls clears, when each of those calls is matched to
        an optimizer of the loop (else one may clear them under another name)."""
        owners: dict[str, str] = {}
        for step in steps:
            stepped = _stepped_optimizer(step)
            owner = params_owner(ctx, stepped) if stepped is not None else None
            opt = dotted_name(stepped) if stepped is not None else None
            if owner is None or opt is None:
                return
            owners[opt] = owner
        if not all(z in owners or any(overlap(z, owner) for owner in owners.values()) for z in cleared):
            return
        modules = {owners.get(z, z) for z in cleared}  # an optimizer's zero_grad() clears its module's
        for step in steps:
            stepped = _stepped_optimizer(step)
            opt = dotted_name(stepped) if stepped is not None else None
            if opt is None or any(overlap(m, owners[opt]) for m in modules) or id(step) in self._reported:
                continue
            self._reported.add(id(step))
            done = ", ".join(f"`{z}.zero_grad()`" for z in dict.fromkeys(cleared))
            ctx.report(
                step,
                f"`{short(ctx, step)}` runs in a loop that calls `backward()`, but the gradients of "
                f"`{owners[opt]}` (what `{opt}` updates) are never cleared there (only {done}): every "
                f"step applies the sum of all earlier gradients; call `{opt}.zero_grad()` once per step",
            )
            return

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
        if call is None or call[1] not in ("backward", *WRAPPER_ONLY) or torch_name(ctx, node.func) is not None:
            return
        root = backward_root(ctx, node)  # `loss` of `loss.backward()` and of `accelerator.backward(loss)`
        dotted = dotted_name(root) if root is not None else None
        if dotted is None:
            return
        values = ctx.assigned_values(dotted)
        if not values or not all(self._computed(value, ctx) for value in values):
            return
        fact = ctx.fact(root)
        if fact.grad in (LEAF_REQUIRES_GRAD, NO_GRAD):
            return
        earlier = ctx.freed_by_backward(dotted)
        if earlier is not None:
            first = backward_root(ctx, earlier)
            if first is not None and dotted_name(first) == dotted:
                self._report_twice(node, dotted, "a second time", ctx)
            else:
                self._report_shared(node, earlier, ctx)
            return
        if _retains(node):
            return
        loop = ctx.loop
        if loop is not None and not self._assigned_in(loop, dotted, ctx):
            self._report_twice(node, dotted, "on every iteration of this loop", ctx)

    def _report_twice(self, node: cst.Call, name: str, when: str, ctx) -> None:
        self._report_once(
            node,
            f"`{short(ctx, node)}` runs backward through the graph of `{name}` {when}, after the "
            f"first pass freed it: RuntimeError (Trying to backward through the graph a second "
            f"time); pass `retain_graph=True` to the earlier call, or recompute `{name}`", ctx,
        )

    def _report_shared(self, node: cst.Call, earlier: cst.Call, ctx) -> None:
        self._report_once(
            node,
            f"`{short(ctx, node)}` runs backward through part of a graph that `{short(ctx, earlier)}` "
            f"already back-propagated and freed (a value both losses were computed from): RuntimeError "
            f"(Trying to backward through the graph a second time); `.detach()` that value where the "
            f"earlier loss uses it, or pass `retain_graph=True` to `{short(ctx, earlier)}`", ctx,
        )

    def _report_once(self, node: cst.Call, message: str, ctx) -> None:
        if id(node) not in self._reported:
            self._reported.add(id(node))
            ctx.report(node, message)

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
