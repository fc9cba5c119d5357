"""SC304 backward-on-non-scalar: `backward()` without a gradient on a tensor with more than one
element."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.backward_calls import BACKWARD_WORDS
from shapecheck.rules.autograd.broadcast_elements import broadcast_elements
from shapecheck.rules.autograd.kept_rows import kept_rows
from shapecheck.rules.autograd.unreduced_loss import unreduced_elements
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.element_count import several_elements
from shapecheck.rules.helpers.tensors import tensor_fact


@register
class BackwardOnNonScalar(Rule):
    """SC304: `backward()` without a gradient on a tensor with more than one element."""
    code = "SC304"
    needs = BACKWARD_WORDS
    name = "backward-on-non-scalar"
    severity = "error"
    summary = "`backward()` without a gradient on a tensor with more than one element"
    doc = """\
## What it does
Flags `y.backward()` (and `torch.autograd.backward(y)`, `torch.autograd.grad(y, x)`) without a
gradient argument, when `y` is known to hold more than one element: a known dim above 1, or a
dim of unknown size (then it holds for generic sizes, and the message names the exception: `y`
has one element). That covers a loss computed with `reduction="none"` (`nn.MSELoss(reduction=
"none")`, `F.cross_entropy(..., reduction="none")`: one value per element), a column of an
output (`output[:, i]` keeps the batch dim, whatever `i` is, also when nothing else is known of
`output`), arithmetic on such a tensor (`(pred - y) ** 2`: broadcasting never shrinks a dim), a
sum over `dim=1` (the input has at least 2 dims, the result keeps the first), and a
`torch.stack`/`torch.cat` of the terms a loop collected. The criterion may be built at module
level and read in the training function.

## Why is this bad?
Without a gradient, autograd assumes `dy = 1`, which only makes sense for a single number. For
anything else it raises `RuntimeError: grad can be implicitly created only for scalar outputs`.

## Example
```python
x = torch.randn(3, requires_grad=True)
y = x * 2
y.backward()                  # RuntimeError
```

## Use instead
```python
y.sum().backward()                    # reduce to a scalar loss
y.backward(torch.ones_like(y))        # or pass the vector of dy
```
"""
    valid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones_like(y))\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(gradient=torch.ones(3))\n",
        "import torch\nx = torch.randn(1, requires_grad=True)\ny = x * 2\ny.backward()\n",
        "import torch\ndef step(loss):\n    loss.backward()\n",
        # the default reduction of a loss gives a 0-dim tensor
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    loss.backward()\n",
        # evidence of a tensor, but not of its rank: one element is possible
        "def step(out):\n    out = out.contiguous()\n    out.backward()\n",
        # a reduction other than "none" gives a scalar; the per-sample losses reduced before backward
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.MSELoss(reduction=\"sum\")\n"
        "    loss = criterion(model(x), y)\n    loss.backward()\n",
        # the criterion is a parameter: one call gives it reduction="none", the other the default
        "import torch\nimport torch.nn as nn\ndef train_loop(loader, model, loss_fn, optimizer):\n"
        "    for x, y in loader:\n        loss = loss_fn(model(x), y).mean()\n        loss.backward()\n"
        "        optimizer.step()\nmodel = nn.Linear(4, 3)\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "train_loop([(torch.randn(8, 4), torch.randint(0, 3, (8,)))], model,\n"
        "           nn.CrossEntropyLoss(reduction=\"none\"), opt)\n",
        "import torch.nn as nn\ndef train(model, x, y, w):\n    criterion = nn.CrossEntropyLoss(reduction=\"none\")\n"
        "    loss = criterion(model(x), y)\n    loss = (loss * w).mean()\n    loss.backward()\n",
        "import torch\nimport torch.nn.functional as F\ndef train(model, x, y):\n"
        "    loss = F.mse_loss(model(x), y, reduction=\"none\")\n    loss.backward(torch.ones_like(loss))\n",
        "import torch.nn.functional as F\ndef train(model, x, y):\n"
        "    loss = F.mse_loss(model(x), y, reduction=\"none\").mean()\n    loss.backward()\n",
        # one element of the output: `output[0, 1]` may be 0-dim
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(10, 3)\n    def forward(self, x):\n        return self.fc(x)\n"
        "def saliency(x):\n    output = Net()(x)\n    output[0, 1].backward()\n    output[:, 1].sum().backward()\n",
        "import torch\nimport torch.nn as nn\ndef grads(x):\n    out = nn.Linear(10, 3)(x)\n"
        "    return torch.autograd.grad(out, x, grad_outputs=torch.ones_like(out))\n",
        # the attribute may hold a reducing loss too
        "import torch.nn as nn\nclass Trainer:\n    def __init__(self, model, reduce):\n        self.model = model\n"
        "        self.criterion = nn.BCEWithLogitsLoss(reduction=\"none\")\n        if reduce:\n"
        "            self.criterion = nn.BCEWithLogitsLoss()\n    def step(self, x, y):\n"
        "        loss = self.criterion(self.model(x), y)\n        loss.backward()\n",
        # one output per sample of a batch of unknown rank: `(4,)` in, one element out
        "import torch.nn as nn\ndef fit(x, y):\n    pred = nn.Linear(4, 1)(x)\n    ((pred - y) ** 2).backward()\n",
        "def fit(pred, y):\n    ((pred - y) ** 2).backward()\n",
        "import torch.nn as nn\ndef fit(x, y):\n    pred = nn.Linear(4, 3)(x)\n"
        "    ((pred - y) ** 2).mean().backward()\n",
        # the per-sample losses of a module-level criterion, reduced; a local name that shadows it
        "import torch.nn as nn\ncriterion = nn.MSELoss(reduction=\"none\")\ndef train(model, x, y):\n"
        "    loss = criterion(model(x), y).mean()\n    loss.backward()\n"
        "def other(model, x, y, criterion):\n    criterion(model(x), y).backward()\n",
        # a reduction over dim 1 summed again; a stack of one listed piece of unknown rank
        "import torch\ndef kld(mu, logvar):\n    return torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1).sum()\n"
        "def train(model, x):\n    mu, logvar = model(x)\n    kld(mu, logvar).backward()\n",
        "import torch\ndef train(model, x):\n    loss = model(x)\n    torch.stack([loss]).backward()\n",
        "import torch\ndef finish(rewards, log_probs):\n    losses = []\n    for lp, r in zip(log_probs, rewards):\n"
        "        losses.append(-lp * r)\n    torch.stack(losses).sum().backward()\n",
        # one element of the output picked by a leading index
        "def cam(model, x, class_idx):\n    logit = model(x)\n    logit[0, class_idx].backward()\n",
    )
    invalid = (
        "import torch\ny = torch.tensor([1., 2., 3.], requires_grad=True)\ny.backward()  # <--\n",
        "import torch\nx = torch.randn(4, 2, requires_grad=True)\nout = x.mean(dim=1)\nout.backward()  # <--\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ntorch.autograd.backward(y)  # <--\n",
        # `output` is the prediction F.nll_loss takes: at least one dim, more than one element
        # unless that dim is 1
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    output.backward()  # <--\n",
        "def step(x):\n    y = x.permute(0, 2, 1)\n    y.backward()  # <--\n",
        # per-sample losses (reduction="none"): one value per element, a scalar only for a batch of one
        "import torch.nn as nn\ndef train(model, loader, optimizer):\n    criterion = nn.MSELoss(reduction=\"none\")\n"
        "    for x, y in loader:\n        optimizer.zero_grad()\n        loss = criterion(model(x), y)\n"
        "        loss.backward()  # <--\n        optimizer.step()\n",
        "import torch.nn as nn\ndef train(model, x, y):\n"
        "    loss = nn.CrossEntropyLoss(reduction=\"none\")(model(x), y)\n    loss.backward()  # <--\n",
        "import torch.nn.functional as F\ndef train(model, x, y):\n"
        "    loss = F.mse_loss(model(x), y, reduction=\"none\")\n    loss.backward()  # <--\n",
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.L1Loss(reduce=False)\n"
        "    criterion(model(x), y).backward()  # <--\n",
        # a column of a 2-D output keeps the batch dim, whatever `class_idx` is
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(10, 3)\n    def forward(self, x):\n        return self.fc(x)\n"
        "def saliency(x, class_idx):\n    model = Net()\n    output = model(x)\n    score = output[:, class_idx]\n"
        "    score.backward()  # <--\n",
        "import torch\nimport torch.nn as nn\ndef grads(x):\n    out = nn.Linear(10, 3)(x)\n"
        "    return torch.autograd.grad(out, x)  # <--\n",
        # the loss module an attribute of a trainer: its methods assign it only this value
        "import torch.nn as nn\nclass Trainer:\n    def __init__(self, model):\n        self.model = model\n"
        "        self.criterion = nn.BCEWithLogitsLoss(reduction=\"none\")\n    def step(self, x, y):\n"
        "        loss = self.criterion(self.model(x), y)\n        loss.backward()  # <--\n",
        # broadcasting never shrinks a dim: the squared error has at least the elements of `pred`
        "import torch.nn as nn\ndef fit(x, y):\n    pred = nn.Linear(4, 3)(x)\n    err = (pred - y) ** 2\n"
        "    err.backward()  # <--\n",
        # a module-level criterion with reduction="none", read in the training function
        "import torch.nn as nn\ncriterion = nn.MSELoss(reduction=\"none\")\ndef train(model, loader, optimizer):\n"
        "    for x, y in loader:\n        optimizer.zero_grad()\n        loss = criterion(model(x), y)\n"
        "        loss.backward()  # <--\n        optimizer.step()\n",
        # `torch.sum(..., dim=1)` runs on at least 2 dims and keeps the first: one KL term per sample
        "import torch\ndef kld(mu, logvar):\n"
        "    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)\n"
        "def train(model, x):\n    mu, logvar = model(x)\n    loss = kld(mu, logvar)\n    loss.backward()  # <--\n",
        # a stack or concatenation of the terms a loop appends: one value per term
        "import torch\ndef finish(rewards, log_probs):\n    losses = []\n    for lp, r in zip(log_probs, rewards):\n"
        "        losses.append(-lp * r)\n    torch.stack(losses).backward()  # <--\n",
        "import torch\ndef finish(rewards, log_probs):\n    losses = []\n    for lp, r in zip(log_probs, rewards):\n"
        "        losses.append(-lp * r)\n    loss = torch.cat(losses)\n    loss.backward()  # <--\n",
        # a column of an output of unknown origin still has one value per row
        "def cam(model, x, class_idx):\n    logit = model(x)\n    score = logit[:, class_idx]\n"
        "    score.backward()  # <--\n",
        # the criterion is a parameter, given one with reduction="none" at every call
        "import torch\nimport torch.nn as nn\ndef train_loop(loader, model, loss_fn, optimizer):\n"
        "    for x, y in loader:\n        loss = loss_fn(model(x), y)\n        loss.backward()  # <--\n"
        "        optimizer.step()\n        optimizer.zero_grad()\nmodel = nn.Linear(4, 3)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "train_loop([(torch.randn(8, 4), torch.randint(0, 3, (8,)))], model,\n"
        "           nn.CrossEntropyLoss(reduction=\"none\"), opt)\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``y.backward()``, ``torch.autograd.backward(y)`` and ``autograd.grad(y, x)`` without a
        gradient, on a tensor of more than one element."""
        name = torch_name(ctx, node.func)
        if name in ("autograd.backward", "autograd.grad"):
            args = positional(node)
            given = len(args) >= (2 if name == "autograd.backward" else 3) or keyword(
                node, "grad_tensors" if name == "autograd.backward" else "grad_outputs"
            )
            root = args[0] if args else None
        else:
            call = method_call(node)
            if name is not None or call is None or call[1] != "backward":
                return
            given = bool(positional(node)) or keyword(node, "gradient")
            root = call[0]
        if given or root is None:
            return
        fact = tensor_fact(ctx, root)
        name = short(ctx, root)
        found = several_elements(fact, name) if fact is not None else None
        if found is None:
            found = unreduced_elements(ctx, root, name)
        if found is None and (fact is None or fact.shape is None):
            found = broadcast_elements(ctx, root, name)
        if found is None and fact is not None and fact.shape is None:
            found = kept_rows(ctx, root)
        if found is None:
            return
        described, condition = found
        unless = f" unless {condition}" if condition is not None else ""
        ctx.report(
            node,
            f"`{short(ctx, node)}` without a gradient, but `{name}` has {described}: "
            f"autograd raises RuntimeError{unless} (grad can be implicitly created only for scalar "
            f"outputs); reduce it first (`.sum()`, `.mean()`) or pass `gradient=`",
            condition=condition,
        )
