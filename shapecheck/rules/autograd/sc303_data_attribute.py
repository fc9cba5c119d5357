"""SC303 data-attribute: a change through `.data` while a graph that saved the tensor waits for its backward."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.data_uses import (
    changes_values,
    cut_from_loss,
    graph_waiting,
    harmless_use,
    is_data_attr,
    requires_grad_evidence,
)
from shapecheck.rules.autograd.loss_calls import loss_prediction
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import method_call
from shapecheck.rules.helpers.held_values import held_values
from shapecheck.rules.helpers.messages import short


@register
class DataAttribute(Rule):
    """SC303: a change through `.data` while a graph that saved the tensor waits for its backward."""
    code = "SC303"
    needs = ("data",)
    name = "data-attribute"
    severity = "warning"
    summary = "a change through `.data` while a graph that saved the tensor waits for its backward"
    doc = """\
## What it does
Flags a change made through `t.data` (`w.data.mul_(0.5)`, `w.data[0] = v`, `w.data += d`,
`nn.init.zeros_(w.data)`) on a tensor that requires grad, where an autograd graph that saved
`t` can still be waiting for its backward pass:
- inside `forward` of an `nn.Module` (the graph of this call, or of an earlier call not yet
  back-propagated, holds the tensor);
- in a function that builds a loss and calls `backward()` on it, after a statement the loss
  depends on used the tensor (or its module: `out = model(x)` for `for p in
  model.parameters()`) and before that `backward()`.

A loss computed on `out.data` (`criterion(out.data, y)`, `F.mse_loss(out.data, y)`) whose
`backward()` runs is flagged at the `backward()`, whatever `out` is: `.data` never requires
grad. Every other `.data` (weight initialisation, `reset_parameters`, merging or loading weights,
an update after the backward pass) is the legacy idiom of the opt-in SC310. A buffer
(`register_buffer`), a gradient (`p.grad.data`) and metadata (`w.data.shape`) are never flagged.

## Why is this bad?
`.data` returns the same storage with autograd switched off *and* without the version
counter: autograd reads the changed values at `backward()` and computes a gradient that
needed the old ones, with no error. The same change made under `torch.no_grad()` bumps the
version counter, and `backward()` raises instead.

## Example
```python
def train_step(model, x, y, optimizer):
    loss = F.cross_entropy(model(x), y)
    for p in model.parameters():
        p.data.clamp_(-0.01, 0.01)   # the graph saved the old weights
    loss.backward()
    optimizer.step()
```

## Use instead
```python
def train_step(model, x, y, optimizer):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for p in model.parameters():
            p.clamp_(-0.01, 0.01)
```
"""
    valid = (
        # WGAN-GP: the interpolate is cut from both graphs on purpose and made a new leaf
        "import torch\nimport torch.nn as nn\nfrom torch.autograd import Variable, grad\n"
        "G = nn.Linear(8, 4)\nD = nn.Linear(4, 1)\ndef penalty(netD, real, fake):\n"
        "    alpha = torch.rand(real.size(0), 1)\n"
        "    interpolated = alpha * real.data + (1 - alpha) * fake.data\n"
        "    interpolated = Variable(interpolated, requires_grad=True)\n    prob = netD(interpolated)\n"
        "    g = grad(outputs=prob, inputs=interpolated, grad_outputs=torch.ones(prob.size()), create_graph=True)[0]\n"
        "    return ((g.norm(2, dim=1) - 1) ** 2).mean()\n"
        "def step(real, z):\n    fake = G(z)\n"
        "    loss = D(fake).mean() - D(real).mean() + penalty(D, real, fake)\n    loss.backward()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w.mul_(0.5)\n",
        "import torch\nclass Batch:\n    data = [1, 2]\nb = Batch()\nprint(b.data)\n",
        "import torch\ndef load(dataset):\n    return dataset.data\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nn = layer.weight.data.shape[0]\n"
        "layer.weight.data = torch.zeros(4, 3)\n",
        # a metric on `out.data`, and the loss on `out` itself
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n    out = model(x)\n"
        "    loss = criterion(out, y)\n    loss.backward()\n    err = criterion(out.data, y)\n    return err\n",
        "def train(model, x, y, criterion):\n    out = model(x)\n    loss = criterion(out.data, y)\n"
        "    loss.backward()\n",
        # weight initialisation, outside any forward pass or pending backward: SC310's legacy idiom
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(3, 3)\n        self.fc.bias.data.zero_()\n"
        "    def reset_parameters(self):\n        self.fc.weight.data.normal_(0, 0.02)\n",
        # merging weights: a read, and no graph is waiting
        "import torch\nimport torch.nn as nn\ndef fuse(a, b):\n    merged = nn.Linear(3, 6)\n"
        "    merged.weight.data = torch.cat([a.weight.data, b.weight.data])\n    return merged\n",
        # WGAN weight clipping after the critic's step: the graph was already back-propagated
        "def critic_step(critic, real, fake, optimizer):\n    loss = critic(fake).mean() - critic(real).mean()\n"
        "    loss.backward()\n    optimizer.step()\n    for p in critic.parameters():\n"
        "        p.data.clamp_(-0.01, 0.01)\n",
        # ... and before the critic's forward pass
        "def critic_step(critic, real, fake, optimizer):\n    for p in critic.parameters():\n"
        "        p.data.clamp_(-0.01, 0.01)\n    loss = critic(fake).mean() - critic(real).mean()\n"
        "    loss.backward()\n    optimizer.step()\n",
        # a frozen batch norm registers `weight` and `bias` as buffers: nothing requires grad
        "import torch\nimport torch.nn as nn\nclass FrozenBatchNorm(nn.Module):\n    def __init__(self, n):\n"
        "        super().__init__()\n        self.register_buffer('weight', torch.ones(n))\n"
        "        self.register_buffer('bias', torch.zeros(n))\n    def forward(self, x):\n"
        "        self.weight.data.clamp_(min=0)\n        return x * self.weight + self.bias\n",
        # a read for a metric, not for the loss; and a read in forward that is not returned
        "import torch\nimport torch.nn as nn\ndef train(x, y):\n    net = nn.Linear(8, 2)\n    out = net(x)\n"
        "    loss = nn.functional.cross_entropy(out, y)\n    acc = (out.data.argmax(1) == y).float().mean()\n"
        "    loss.backward()\n    return acc\n",
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(8, 2)\n        self.last = None\n    def forward(self, x):\n"
        "        out = self.fc(x)\n        self.last = out.data\n        return out\n",
        # a layer made in this forward call and initialised before any use (transformers' udop)
        "import torch.nn as nn\nclass Bias(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.bias = nn.Embedding(4, 2)\n    def forward(self, idx):\n        new = nn.Embedding(6, 2)\n"
        "        new.weight.data[:4] = self.bias.weight.detach()\n        self.bias = new\n"
        "        return self.bias(idx)\n",
        # an EMA update of a second model after the backward pass
        "import torch\ndef train(model, ema, x, y, loss_fn, opt):\n    loss = loss_fn(model(x), y)\n"
        "    loss.backward()\n    opt.step()\n    with torch.no_grad():\n"
        "        for e, p in zip(ema.parameters(), model.parameters()):\n"
        "            e.data.mul_(0.99).add_(p.data, alpha=0.01)\n",
    )
    invalid = (
        # a change inside forward: a graph that saved the weight may still be waiting
        "import torch\nimport torch.nn as nn\nclass Clipped(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.randn(3, 3))\n"
        "    def forward(self, x):\n        self.w.data.clamp_(-1, 1)  # <--\n        return x @ self.w\n",
        # between the forward pass that used the parameters and the backward
        "import torch.nn.functional as F\ndef train_step(model, x, y, optimizer):\n"
        "    loss = F.cross_entropy(model(x), y)\n    for p in model.parameters():\n"
        "        p.data.clamp_(-0.01, 0.01)  # <--\n    loss.backward()\n    optimizer.step()\n",
        "import torch\ndef fit(x, y, steps):\n    w = torch.zeros(3, requires_grad=True)\n"
        "    for _ in range(steps):\n        pred = x @ w\n"
        "        loss = ((pred - y) ** 2).mean()\n        w.data[0] = 0.0  # <--\n        loss.backward()\n",
        # a wrapper's backward (accelerate, fabric) is a backward of its argument
        "def train(accelerator, model, batch, optimizer):\n    out = model(batch)\n    loss = out.mean()\n"
        "    for p in model.parameters():\n        p.data.add_(0.001)  # <--\n    accelerator.backward(loss)\n",
        # a read that cuts what forward returns off the features that computed it
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.features = nn.Linear(8, 8)\n        self.fc = nn.Linear(8, 2)\n    def forward(self, x):\n"
        "        h = self.features(x)\n        return self.fc(h.data)  # <--\n",
        # ... and a read a loss is computed from
        "import torch\nimport torch.nn as nn\ndef train(x, y):\n    net = nn.Linear(8, 2)\n    out = net(x)\n"
        "    loss = nn.functional.cross_entropy(out.data, y)  # <--\n    loss.backward()\n",
        # the loss never sees the graph of `out`
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n    out = model(x)\n"
        "    loss = criterion(out.data, y)\n    loss.backward()  # <--\n",
        "import torch.nn.functional as F\ndef train(model, x, y):\n"
        "    F.mse_loss(model(x).data, y).backward()  # <--\n",
        "import torch.nn as nn\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n"
        "        self.criterion = nn.CrossEntropyLoss()\n    def step(self, x, y):\n        out = self.model(x)\n"
        "        loss = self.criterion(out.data, y)\n        loss.backward()  # <--\n",
    )

    def __init__(self) -> None:
        self._graphs: dict = {}
        self._done: set[int] = set()

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``backward()`` of a loss computed on ``out.data``."""
        call = method_call(node)
        if call is not None and call[1] == "backward":
            self._backward_of_data(node, call[0], ctx)

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        """A change through ``t.data`` where a graph that saved ``t`` can be waiting."""
        if node.attr.value != "data" or harmless_use(node, ctx):
            return
        if not requires_grad_evidence(node.value, ctx):
            return
        if not changes_values(node, ctx):
            self._cut(node, ctx)
            return
        where = graph_waiting(node, ctx, self._graphs)
        if where is None:
            return
        name = short(ctx, node.value)
        if where == "forward":
            context = (f"inside `forward`, where the graph of this call (or of an earlier call not yet "
                       f"back-propagated) may have saved `{name}`")
        else:
            context = f"after a forward pass used `{name}` and before the loss's `backward()`"
        ctx.report(
            node,
            f"`{name}.data` changes `{name}` {context}: autograd does not see the change (no version "
            f"check), so the gradient is silently computed from the new values; change `{name}` "
            f"under `torch.no_grad()` (autograd then raises) or after the backward pass",
        )

    def _cut(self, node: cst.Attribute, ctx) -> None:
        """A read of ``t.data`` that a later ``backward()`` of the function starts from."""
        how = cut_from_loss(node, ctx, self._graphs)
        if how is None:
            return
        self._done.add(id(node))
        name = short(ctx, node.value)
        if how == "loss":
            ctx.report(node, f"the loss is computed on `{name}.data`, which autograd does not see: "
                             f"no gradient reaches `{name}` through it; compute the loss on `{name}`")
            return
        ctx.report(
            node,
            f"`{name}.data` cuts `{name}` out of the graph that is back-propagated through it: no "
            f"gradient reaches what computed `{name}` by this path; use `{name}` (or `{name}.detach()` "
            f"if stopping the gradient is meant)",
        )

    def _backward_of_data(self, node: cst.Call, root: cst.BaseExpression, ctx) -> None:
        """``loss.backward()`` where ``loss`` is a loss computed on ``out.data`` (the call itself,
        or a name bound to it on every path here)."""
        values = held_values(ctx, root)
        found = []
        for value in values:
            pred = loss_prediction(ctx, value) if type(value) is cst.Call else None
            if pred is None or not is_data_attr(pred):
                return
            found.append(pred)
        if not found or any(id(p) in self._done for p in found):
            return
        pred = found[0]
        assert type(pred) is cst.Attribute
        name = short(ctx, pred.value)
        ctx.report(
            node,
            f"`{short(ctx, root)}` is computed from `{name}.data`, which autograd does not see: "
            f"no gradient reaches `{name}`, and `{short(ctx, node)}` raises RuntimeError (element 0 "
            f"of tensors does not require grad) unless the target requires grad; compute the loss "
            f"on `{name}`",
        )
