"""SC306 non-differentiable-loss: a loss computed from `argmax`/`argmin`/`round`/comparison results."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.copied_loss import copied_loss, returned_copy
from shapecheck.rules.autograd.loss_calls import loss_prediction
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name, keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.held_values import held_values
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.name_uses import read_only_as
from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, NO_GRAD, NON_LEAF, TENSOR
from shapecheck.semantic.no_gradient import DETACHED, PYTHON_NUMBER
from shapecheck.semantic.torch_api import FUNCTIONAL_LOSSES


#: the head of the examples about a training step: a layer, inputs and class targets
_TRAIN = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nnet = nn.Linear(4, 3)\n"
    "x = torch.randn(5, 4)\ny = torch.randint(0, 3, (5,))\n"
)


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
`argsort`, the indices of `max`/`min`/`topk`/`sort`/`cummax`, a comparison, a boolean test
(`isnan`, `isinf`, `any`, `all`, `logical_and`...), or a step function (`round`, `floor`,
`ceil`, `trunc`, `sign`), directly or through a dtype cast. A value that comes from such an op
on one branch of an `if` only is not flagged, and neither is a loss that the function reads
only as a number (`val.item()`, `float(val)`: a metric). An error rate or accuracy
(`(pred != y).float().mean()`, `1 - acc`) is a value without gradient too, and so is a loss
copied into a new tensor (`torch.tensor(loss)`, `torch.Tensor([loss.item()])`, with or without
`requires_grad=True`) whose `backward()` runs (also when a function of the file returns such a
copy: reported at its `return`). So is a loss whose prediction does not require grad
(`criterion(out.detach(), y)`, `out` computed under `torch.no_grad()`) when its `backward()`
runs, and `.backward()` on a Python number (`loss = criterion(out, y).item()`: reported where
`.item()` cut the graph).

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
        # the model's output is the loss's second argument: the gradient flows through the target
        "import torch\nimport torch.nn.functional as F\nnet = torch.nn.Linear(4, 4)\nnoise = torch.randn(8, 4)\n"
        "loss = F.mse_loss(noise, net(torch.randn(8, 4)))\nloss.backward()\n",
        # decoder steps written into a zeros buffer: the buffer joins their graph (seq2seq)
        "import torch\nimport torch.nn as nn\nclass Dec(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
        "        return self.fc(x)\nclass Seq(nn.Module):\n    def __init__(self, dec, device):\n"
        "        super().__init__()\n        self.dec = dec\n        self.device = device\n"
        "    def forward(self, src, n):\n        outputs = torch.zeros(n, 2, 4).to(self.device)\n"
        "        for t in range(1, n):\n            outputs[t] = self.dec(src)\n        return outputs\n"
        "def train_fn(model, loader, optimizer, criterion, device):\n    for src, trg in loader:\n"
        "        optimizer.zero_grad()\n        output = model(src.to(device), 5)\n"
        "        loss = criterion(output.view(-1, 4), trg.view(-1))\n        loss.backward()\n"
        "        optimizer.step()\n"
        "device = torch.device('cpu')\nmodel = Seq(Dec(), device).to(device)\n"
        "train_fn(model, [], torch.optim.SGD(model.parameters(), lr=0.1), nn.CrossEntropyLoss(), device)\n",
        # a loss read only as a number is a metric (a convergence check after training)
        "import torch\nimport torch.nn.functional as F\ndef converged(m, x, y, tol):\n"
        "    pred = torch.argmax(m(x), dim=1)\n    val = F.mse_loss(pred.float(), y.float())\n"
        "    return val.item() < tol\n",
        # under no_grad the loss is a metric, logged only (DETR's cardinality error)
        "import torch\nimport torch.nn.functional as F\n@torch.no_grad()\ndef cardinality(logits, lengths):\n"
        "    pred = (logits.argmax(-1) != logits.shape[-1] - 1).sum(1)\n"
        "    return F.l1_loss(pred.float(), lengths.float())\n",
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.tensor([0, 2, 1, 0])\nloss = F.cross_entropy(logits, target)\nloss.backward()\n",
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "onehot = torch.eye(3)[[0, 2, 1, 0]]\nloss = F.cross_entropy(logits, onehot.argmax(dim=1))\n",
        "import torch\nlogits = torch.randn(4, 3)\npred = torch.argmax(logits, dim=1)\n"
        "accuracy = (pred == torch.tensor([0, 1, 2, 0])).float().mean()\n",
        "import torch\nimport torch.nn as nn\nloss_fn = nn.CrossEntropyLoss()\n"
        "logits = torch.randn(4, 3, requires_grad=True)\n"
        "pred = logits.argmax(dim=1)\nlogits = logits * 2\nloss = loss_fn(logits, pred)\n",
        "import torch\nimport torch.nn.functional as F\ndef step(logits, target, hard):\n"
        "    pred = logits.softmax(dim=1)\n    if hard:\n        pred = (pred > 0.5).float()\n"
        "    return F.mse_loss(pred, target)\n",
        _TRAIN + "out = net(x)\nloss = F.cross_entropy(out, y) + 0.1 * (out.argmax(1) != y).float().mean()\n"
        "loss.backward()\n",
        _TRAIN + "loss = F.cross_entropy(net(x), y)\nloss.backward()\nhistory = torch.tensor([loss.item()])\n"
        "err = 1 - net(x).argmax(1).eq(y).float().mean()\n",
        _TRAIN + "loss = torch.Tensor(F.cross_entropy(net(x), y))\nloss.backward()\n",
        # a detached input to the discriminator, whose own parameters still require grad; a metric
        "import torch.nn as nn\ndef step(D, G, z, zeros):\n    criterion = nn.BCELoss()\n    fake = G(z)\n"
        "    d_loss = criterion(D(fake.detach()), zeros)\n    d_loss.backward()\n",
        _TRAIN + "out = net(x)\nloss = F.cross_entropy(out, y)\nloss.backward()\n"
        "err = F.cross_entropy(out.detach(), y)\n",
        # `.item()` only to log; backward on the tensor
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n"
        "    loss = criterion(model(x), y)\n    loss.backward()\n    total = loss.item()\n    return total\n",
        "def train(model, loader, criterion):\n    running = 0.0\n    for x, y in loader:\n"
        "        loss = criterion(model(x), y)\n        loss.backward()\n        running += loss.item()\n",
        # a copy of the loss kept for logging; a leaf made from literals
        "import torch\n""import torch.nn.functional as F\n""def train(model, x, y, history):\n"
        "    loss = F.mse_loss(model(x), y)\n""    loss.backward()\n"
        "    history.append(torch.tensor(loss.item()))\n",
        "import torch\n""w = torch.tensor(2.0, requires_grad=True)\n""w.backward()\n",
        # a helper that keeps the graph; one that makes a leaf nobody runs backward() on; a helper
        # that returns the copy on one path only
        "import torch\ndef total_loss(outs, y, criterion):\n    losses = [criterion(o, y) for o in outs]\n"
        "    return torch.stack(losses).sum()\ndef train(model, x, y, criterion):\n"
        "    loss = total_loss(model(x), y, criterion)\n    loss.backward()\n",
        "import torch\ndef make_weight(values):\n    return torch.tensor(values, requires_grad=True)\n"
        "def train(values, x):\n    w = make_weight(values)\n    loss = (w * x).sum()\n    loss.backward()\n",
        "import torch\ndef total_loss(parts, as_number):\n    if as_number:\n"
        "        return torch.tensor(sum(p.item() for p in parts), requires_grad=True)\n"
        "    return sum(parts)\ndef train(parts):\n    loss = total_loss(parts, False)\n    loss.backward()\n",
    )
    invalid = (
        "import torch\nimport torch.nn.functional as F\nnet = torch.nn.Linear(4, 4)\nnoise = torch.randn(8, 4)\n"
        "loss = F.mse_loss(noise, net(torch.randn(8, 4)).detach())\nloss.backward()  # <--\n",
        # logged as a number, and returned as the loss too
        "import torch\nimport torch.nn.functional as F\ndef step(m, x, y):\n"
        "    pred = torch.argmax(m(x), dim=1)\n    loss = F.mse_loss(pred.float(), y.float())  # <--\n"
        "    print(loss.item())\n    return loss\n",
        "import torch\nimport torch.nn as nn\nloss_fn = nn.MSELoss()\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.randn(4)\npred = torch.argmax(logits, dim=1)\nloss = loss_fn(pred.float(), target)  # <--\n",
        "import torch\nimport torch.nn.functional as F\nscores = torch.randn(8, requires_grad=True)\n"
        "target = torch.ones(8)\nloss = F.binary_cross_entropy((scores > 0).float(), target)  # <--\n",
        "import torch\nx = torch.randn(5, requires_grad=True)\nr = torch.round(x)\nr.sum().backward()  # <--\n",
        "import torch\nimport torch.nn.functional as F\nscores = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.randn(4)\nloss = F.mse_loss(scores.max(dim=1).indices.float(), target)  # <--\n",
        _TRAIN + "pred = net(x).argmax(1)\nloss = (pred != y).float().mean()\nloss.backward()  # <--\n",
        _TRAIN + "acc = net(x).argmax(dim=1).eq(y).float().mean()\nloss = 1 - acc\nloss.backward()  # <--\n",
        _TRAIN + "loss = F.cross_entropy(net(x), y)\nloss = torch.tensor(loss, requires_grad=True)\n"
        "loss.backward()  # <--\n",
        _TRAIN + "loss = F.cross_entropy(net(x), y)\ntotal = torch.Tensor([loss.item()])\ntotal.requires_grad = True\n"
        "total.backward()  # <--\n",
        # `.item()` returns a Python number whatever its receiver (a tensor, a NumPy value)
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n"
        "    loss = criterion(model(x), y).item()  # <--\n    loss.backward()\n",
        # a new leaf built from the number: nothing upstream gets a gradient
        "import torch\nimport torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n"
        "    loss_val = criterion(model(x), y).item()\n    loss = torch.tensor(loss_val, requires_grad=True)\n"
        "    loss.backward()  # <--\n",
        "import torch\ndef train(model, x, y, criterion):\n    loss = criterion(model(x), y)\n"
        "    loss = torch.tensor(loss.item())\n    loss.backward()  # <--\n",
        # the prediction detached, or computed with grad mode off: the loss has no graph to the model
        "import torch.nn as nn\ndef train(model, x, y):\n    criterion = nn.CrossEntropyLoss()\n    out = model(x)\n"
        "    loss = criterion(out.detach(), y)\n    loss.backward()  # <--\n",
        _TRAIN + "with torch.no_grad():\n    out = net(x)\nloss = F.cross_entropy(out, y)\nloss.backward()  # <--\n",
        # the sum of two losses copied into a new leaf: backward() stops at the copy
        "import torch\n""import torch.nn as nn\n""def train(model, x, y, optimizer):\n"
        "    mse, l1 = nn.MSELoss(), nn.L1Loss()\n""    out = model(x)\n""    a = mse(out, y)\n"
        "    b = l1(out, y)\n""    loss = torch.tensor(a + b, requires_grad=True)\n"
        "    loss.backward()  # <--\n""    optimizer.step()\n",
        # a helper rebuilds the loss from Python numbers: reported at its `return`
        "import torch\ndef total_loss(outs, y, criterion):\n    losses = [criterion(o, y) for o in outs]\n"
        "    return torch.tensor(sum(l.item() for l in losses), requires_grad=True)  # <--\n"
        "def train(model, x, y, criterion, optimizer):\n    loss = total_loss(model(x), y, criterion)\n"
        "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n",
    )

    @staticmethod
    def _source(expr: cst.BaseExpression, ctx) -> Optional[str]:
        """What made ``expr`` non-differentiable (``"`torch.argmax`"``), or ``None``."""
        return ctx.fact(expr).no_gradient_from

    @staticmethod
    def _is_loss_constructor(value: cst.BaseExpression, ctx) -> bool:
        if type(value) is not cst.Call:
            return False
        name = torch_name(ctx, value.func)
        return name is not None and name.startswith("nn.") and name.endswith("Loss")

    @staticmethod
    def _is_loss_module(expr: cst.BaseExpression, ctx) -> bool:
        """A name bound to an ``nn.*Loss()`` instance."""
        qual = ctx.fact(expr).qual
        return qual is not None and qual.startswith("torch.nn.") and qual.endswith("Loss")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """The prediction given to a loss, and the receiver of ``.backward()``, when they come from
        an op without gradient."""
        prediction = self._prediction(node, ctx)
        if prediction is not None:
            source = self._source(prediction, ctx)
            # a detached copy as a loss input, a loss computed with grad off or only read as a
            # number: a metric
            if source is not None and DETACHED not in source and ctx.grad_enabled is not False \
                    and not _read_as_number(ctx, node):
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
            if self._detached_prediction(node, call[0], ctx):
                return
            copied = copied_loss(ctx, call[0])
            if copied is not None:
                ctx.report(
                    node,
                    f"`{short(ctx, call[0])}` is `{short(ctx, copied[0].func)}(...)`, a new tensor copied "
                    f"from `{short(ctx, copied[1])}` with no history: `{short(ctx, node)}` "
                    f"fills the copy's `.grad` only, and no gradient reaches the model; call "
                    f"`backward()` on the loss itself (add the terms as tensors)",
                )
                return
            returned = returned_copy(ctx, call[0])
            if returned is not None:
                copy, data, made = returned
                ctx.report(
                    copy,
                    f"`{short(ctx, made.func)}` returns `{short(ctx, copy.func)}(...)`, a new leaf tensor "
                    f"copied from `{short(ctx, data)}` with no history: `{short(ctx, node)}` on its result "
                    f"fills the copy's `.grad` only, and no gradient reaches the "
                    f"model; return the loss tensor itself (add the terms as tensors, not as numbers)",
                )
                return
            source = self._source(call[0], ctx)
            if source is None and type(call[0]) is cst.Call:
                inner = method_call(call[0])
                if inner is not None and inner[1] in ("sum", "mean"):
                    source = self._source(inner[0], ctx)
            if source == PYTHON_NUMBER:
                taken = _taken_number(ctx, call[0])
                ctx.report(
                    taken if taken is not None else node,
                    f"`{short(ctx, call[0])}` is a Python number (`.item()` took it out of the "
                    f"tensor{'' if taken is None else f' at `{short(ctx, taken)}`'}): "
                    f"`{short(ctx, node)}` raises AttributeError ('float' object has no "
                    f"attribute 'backward'); call `backward()` on the loss tensor, and `.item()` "
                    f"only to log it",
                )
            elif source is not None:
                ctx.report(
                    node,
                    f"`{short(ctx, call[0])}` comes from {source}, which has no useful "
                    f"gradient: `backward()` raises RuntimeError (element 0 of tensors does not "
                    f"require grad) or computes zero gradients",
                )

    @staticmethod
    def _detached_prediction(node: cst.Call, root: cst.BaseExpression, ctx) -> bool:
        """Report ``loss.backward()`` where ``loss`` is a loss (the call itself, or a name bound to
        one on every path here) whose prediction does not require grad (``out.detach()``, a
        tensor computed under ``torch.no_grad()``); ``out.data`` is SC303's."""
        values = held_values(ctx, root)
        preds = [loss_prediction(ctx, v) if type(v) is cst.Call else None for v in values]
        if not preds or any(p is None for p in preds):
            return False
        pred = preds[0]
        assert pred is not None
        if type(pred) is cst.Attribute and pred.attr.value == "data":
            return False
        if any(ctx.fact(p).kind not in (TENSOR, None) or ctx.fact(p).grad != NO_GRAD for p in preds):
            return False
        if any(_target_with_grad(ctx, v) for v in values):
            return False  # `F.mse_loss(noise, pred)`: the model's output is the target, grads flow through it
        ctx.report(
            node,
            f"the loss `{short(ctx, root)}` is computed from `{short(ctx, pred)}`, which does not "
            f"require grad: no gradient reaches the model, and `{short(ctx, node)}` raises "
            f"RuntimeError (element 0 of tensors does not require grad) unless the target "
            f"requires grad; compute the loss on the model's output, with grad mode on",
        )
        return True

    def _prediction(self, node: cst.Call, ctx) -> Optional[cst.BaseExpression]:
        name = torch_name(ctx, node.func)
        args = positional(node)
        if name is not None and name.startswith("nn.functional.") and name.split(".")[-1] in FUNCTIONAL_LOSSES:
            arg = keyword(node, "input")
            return args[0] if args else (arg.value if arg is not None else None)
        dotted = dotted_name(node.func)
        if dotted is not None and args and self._is_loss_module(node.func, ctx):
            return args[0]
        if type(node.func) is cst.Call and self._is_loss_constructor(node.func, ctx) and args:
            return args[0]
        return None


#: what takes a tensor's value out as a Python number or list
_AS_NUMBER = frozenset({"item", "tolist"})


def _read_as_number(ctx, loss: cst.Call) -> bool:
    """``loss`` is bound to a name (``val = F.mse_loss(...)``) that the function reads only as a
    number (``val.item()``, ``float(val)``): a metric, never back-propagated."""
    statement, function = ctx.statement, ctx.function
    if type(statement) is not cst.Assign or statement.value is not loss or len(statement.targets) != 1 \
            or type(statement.targets[0].target) is not cst.Name or function is None:
        return False
    return read_only_as(function, statement.targets[0].target.value, _as_number)


def _as_number(node: cst.CSTNode, name: str) -> bool:
    """``node`` is ``name.item()``, ``name.tolist()``, ``float(name)`` or ``int(name)``."""
    if type(node) is not cst.Call:
        return False
    func = node.func
    if type(func) is cst.Attribute:
        return func.attr.value in _AS_NUMBER and type(func.value) is cst.Name and func.value.value == name
    return type(func) is cst.Name and func.value in ("float", "int") and len(node.args) == 1 \
        and type(node.args[0].value) is cst.Name and node.args[0].value.value == name


def _taken_number(ctx, root: cst.BaseExpression) -> Optional[cst.Call]:
    """The ``.item()`` call that ``root`` (a name) was bound to on every path here: where the
    graph was cut, reported instead of the ``backward()`` that fails on the number."""
    dotted = dotted_name(root)
    values: tuple[cst.BaseExpression, ...] = ()
    if dotted is not None and type(root) is not cst.Call:
        values = ctx.assigned_values(dotted)
    if len(values) != 1 or type(values[0]) is not cst.Call:
        return None
    call = method_call(values[0])
    return values[0] if call is not None and call[1] == "item" and not values[0].args else None


def _target_with_grad(ctx, loss: cst.BaseExpression) -> bool:
    """The second argument (``target``) of the loss call ``loss`` is known to require grad (a
    model's output): the loss is differentiable through it."""
    if type(loss) is not cst.Call:
        return False
    args = positional(loss)
    target = args[1] if len(args) > 1 else None
    if target is None:
        arg = keyword(loss, "target")
        target = arg.value if arg is not None else None
    return target is not None and ctx.fact(target).grad in (NON_LEAF, LEAF_REQUIRES_GRAD)

