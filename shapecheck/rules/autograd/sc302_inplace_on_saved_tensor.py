"""SC302 inplace-on-saved-tensor: a tensor that autograd saved for backward is changed in place before
`backward()`."""

from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from shapecheck.rules.autograd.backward_calls import BACKWARD_WORDS, backward_root
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.backward_saves import SaveRecord, differentiated
from shapecheck.semantic.inplace_layers import inplace_layer_call
from shapecheck.semantic.torch_api import WEIGHTS

#: a file that turns grad off for parameters (freezing): its modules' parameters may not require grad
_FREEZES = re.compile(r"requires_grad_\(\s*False|requires_grad\s*=\s*False")
#: the text last read and whether it freezes (every ``return`` asks; the search reads the whole file)
_LAST_TEXT: list[tuple[str, bool]] = []


def _freezes(text: str) -> bool:
    """``text`` turns grad off for parameters (see :data:`_FREEZES`)."""
    if _LAST_TEXT and _LAST_TEXT[0][0] is text:
        return _LAST_TEXT[0][1]
    found = _FREEZES.search(text) is not None
    _LAST_TEXT[:] = [(text, found)]
    return found


#: the head of the examples about a module's forward: a layer whose parameters require grad
_NET = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
    "    def forward(self, x, mask):\n"
)

#: the head of the examples about a GAN's two optimizers: `fake` requires grad (it comes from G)
_GAN = (
    "import torch\nimport torch.nn as nn\nG = nn.Linear(5, 15)\nD = nn.Sequential(nn.Linear(15, 1), nn.Sigmoid())\n"
    "opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)\nopt_G = torch.optim.Adam(G.parameters(), lr=1e-4)\n"
    "for step in range(2):\n    real = torch.randn(64, 15)\n    fake = G(torch.randn(64, 5))\n"
)
#: a model with one optimizer per head
_TWO_HEADS = (
    "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.body = nn.Linear(4, 8)\n        self.head_a = nn.Linear(8, 1)\n"
    "        self.head_b = nn.Linear(8, 1)\n    def forward(self, x):\n        h = torch.relu(self.body(x))\n"
    "        return self.head_a(h), self.head_b(h)\nmodel = Net()\n"
    "opt_a = torch.optim.SGD(model.head_a.parameters(), lr=0.1)\n"
    "a, b = model(torch.randn(3, 4))\nloss_a = a.pow(2).mean()\nloss_b = b.pow(2).mean()\n"
)


def _saved_here(record: SaveRecord) -> list[tuple[cst.CSTNode, str]]:
    """The related place of the op that saved the tensor for backward, when known."""
    return [(record.node, "saved for backward here")] if record.node is not None else []


@register
class InplaceOnSavedTensor(Rule):
    """SC302: a tensor that autograd saved for backward is changed in place before `backward()`."""
    code = "SC302"
    needs = BACKWARD_WORDS + ("forward",)
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
`sub` and a product with a Python number save nothing, and are not flagged. A change made on one
path only (one branch of an `if`, a loop body that may not run, a `try` body that may stop early)
to a tensor saved before the paths split is not flagged. A save and its change on the same path
are: a loop body that saves `tanh`'s output and then writes into it (`h += b`, `h[:, 0] = 0`)
breaks backward whenever the loop runs. A list of tensors holds what its elements saved:
`hs[0] += 1`, `hs[0][:, 0] = 0` and `hs[-1].mul_(0)` write into an element (`hs[0] = v` only
replaces it).

The `forward` of an `nn.Module` is written to be differentiated, so there no `backward()` call
is needed: a change of a tensor whose op saved its output (`out = torch.sigmoid(self.fc(x));
out[mask] = 0`, `p = torch.exp(s); p /= p.sum(-1, keepdim=True)`) is flagged when the value
returned depends on it, grad mode is on and the op's input requires grad (computed from a
layer of the module; not when the file turns `requires_grad` off). So is a method that `forward`
calls as `self.<name>(...)` (unless `forward` has a `with` block that may turn grad mode off).
An input an op saved is flagged there too (`y = h * self.w; h[:, 0] = 0`: the product saved `h`
because the weight requires grad). A tensor computed from `forward`'s own input alone is not:
whether that input requires grad depends on the caller (a module on data is correct).

A layer with weights saves its input whatever that input is (`nn.Linear`, `nn.Conv2d`,
`nn.LayerNorm`, `nn.BatchNorm2d`...: the weight's gradient needs it), and so does a module class
of the file whose `forward` starts by passing its input to such a layer (or to
`F.layer_norm(input, ..., self.weight)`), also when it is an element of a `ModuleList` the loop
runs over: `x += self.attn(self.ln_1(x))` changes the `x` that `ln_1` saved. A layer built with
`inplace=True` (`nn.ReLU(inplace=True)`, `nn.Dropout(p, inplace=True)`) changes its input: on a
softmax output the dropout breaks backward unless its probability is 0 (the finding names that
exception). An op that reads a slice of a buffer (`self.fc(out[:, t - 1])`) saves a view that
shares the buffer's version counter: writing another slice (`out[:, t] = h`) breaks it. A plain
function whose input requires grad at its call sites (`def softmax(s): e = torch.exp(s); e /=
e.sum(1, keepdim=True); return e`) returns a tensor whose backward raises, and is flagged too.

An optimizer's `step()` changes the parameters it updates in place too. A module call whose
backward needs the module's weights saves them: a layer with weights whose input requires grad
(`D(fake)` with `fake = G(z)`), a recurrent layer, a module class of the file that chains two
such layers (the second one's input requires grad whatever the data). A backward through such
a call made before `opt.step()` of an optimizer built over that module's parameters
(`optim.Adam(D.parameters())`, parameter groups, `itertools.chain`) raises: the classic GAN and
actor-critic error (`D_loss.backward(retain_graph=True); opt_D.step(); G_loss.backward()`). The
step is flagged. A call of a module that holds the updated one (`model(x)` with an optimizer over
`model.head.parameters()`) is not: its backward may not reach that part.

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
        # changed on one path only: unknown at the join, never flagged
        "import torch\ndef f(flag):\n    x = torch.randn(3, requires_grad=True)\n    y = x.exp()\n    if flag:\n"
        "        y.add_(1)\n    y.sum().backward()\n",
        "import torch\nx = torch.randn(4, 3, requires_grad=True)\nfor t in range(4):\n    h = torch.tanh(x[t])\n"
        "    h = h + 1\nh.sum().backward()\n",
        "import torch\nx = torch.randn(4, 3, requires_grad=True)\nhs = [torch.sigmoid(x[0])]\nhs[0] = hs[0] + 1\n"
        "sum(hs).sum().backward()\n",
        _NET + "        with torch.no_grad():\n            out = torch.sigmoid(self.fc(x))\n            out[mask] = 0\n"
        "        return self.fc(x) * out\n",
        _NET + "        out = torch.sigmoid(self.fc(x)).clone()\n        out[mask] = 0\n        return out\n",
        _NET + "        y = self.fc(x) + 1\n        y[:, 0] = 0\n        return y\n",
        _NET + "        h = self.fc(x)\n        h.relu_()\n        return h * 2\n",
        _NET + "        return F.relu(self.fc(x), inplace=True)\n",
        _NET + "        h = self.fc(x)\n        h = F.relu(h, inplace=True)\n        return h\n",
        _NET + "        s = self.fc(x)\n        s[mask] = 0\n        return torch.sigmoid(s)\n",
        _NET + "        p = torch.exp(self.fc(x))\n        p = p / p.sum(-1, keepdim=True)\n        p[mask] = 0\n"
        "        return p\n",
        _NET + "        out = torch.sigmoid(x)\n        out[mask] = 0\n        return self.fc(out)\n",
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.fc.requires_grad_(False)\n")
        + "        out = torch.sigmoid(self.fc(x))\n        out[mask] = 0\n        return out\n",
        _NET + "        with torch.no_grad():\n            g = self._gate(x, mask)\n        return self.fc(g)\n"
        "    def _gate(self, x, mask):\n        g = torch.sigmoid(self.fc(x))\n        g[mask] = 0.0\n"
        "        return g\n",
        _NET + "        return self.fc(x)\n    def predict(self, x, mask):\n"
        "        p = torch.sigmoid(self.fc(x))\n        p[mask] = 1.0\n        return p\n",
        # a product with a number saves nothing; a buffer written step by step was saved by no op
        _NET + "        h = self.fc(x)\n        y = h * 2.0\n        h[:, 0] = 0\n        return y + h\n",
        _NET + "        buf = torch.zeros(x.shape[0], 3, 4)\n        h = x\n        for t in range(3):\n"
        "            h = torch.tanh(self.fc(h))\n            buf[:, t] = h\n        return buf\n",
        # a new tensor; a layer that saves its output, not its input; an output no layer saved
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.ln = nn.LayerNorm(4)\n")
        + "        x = x + self.fc(self.ln(x))\n        return x\n",
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.act = nn.ReLU()\n")
        + "        h = self.fc(x)\n        h += self.act(h)\n        h += 1\n        return h\n",
        # a dropout of probability 0 writes nothing; an in-place ReLU after a layer that saved its input
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.drop = nn.Dropout(0.0, inplace=True)\n")
        + "        att = self.fc(x).softmax(-1)\n        att = self.drop(att)\n        return att\n",
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.bn = nn.BatchNorm1d(4)\n"
                     "        self.act = nn.ReLU(inplace=True)\n")
        + "        h = self.act(self.bn(self.fc(x)))\n        return h\n",
        # the loss of the updated module is computed again after the step; a single layer whose
        # input needs no grad saved only that input; an optimizer over one head of a two-headed model
        _GAN + "    D_loss = -torch.log(D(real)).mean() - torch.log(1 - D(fake.detach())).mean()\n"
        "    opt_D.zero_grad()\n    D_loss.backward()\n    opt_D.step()\n"
        "    G_loss = torch.log(1 - D(fake)).mean()\n    opt_G.zero_grad()\n    G_loss.backward()\n"
        "    opt_G.step()\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\nout = model(torch.randn(8, 4))\n"
        "loss1 = out.pow(2).mean()\nloss2 = out.abs().mean()\n"
        "loss1.backward(retain_graph=True)\nopt.step()\nloss2.backward()\n",
        _TWO_HEADS + "loss_a.backward(retain_graph=True)\nopt_a.step()\nloss_b.backward()\n",
        _GAN + "    prob_fake = D(fake)\n    D_loss = -torch.log(D(real)).mean() - torch.log(1 - prob_fake).mean()\n"
        "    G_loss = torch.log(1 - prob_fake).mean()\n    D_loss.backward(retain_graph=True)\n"
        "    G_loss.backward()\n    opt_D.step()\n    opt_G.step()\n",
        # a plain function called with grad mode off
        "import torch\nimport torch.nn as nn\ndef softmax(s):\n    e = torch.exp(s)\n"
        "    e /= e.sum(dim=1, keepdim=True)\n    return e\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n        return self.fc(x)\nnet = Net()\nwith torch.no_grad():\n"
        "    p = softmax(net(torch.randn(2, 4)))\n",
    )
    invalid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)  # <--\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nc = torch.randn(3)\ny = x * c\nc.mul_(0)  # <--\n"
        "y.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = torch.sigmoid(x)\nloss = (h * 2).sum()\n"
        "h[0] = 0.0  # <--\nloss.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.randn(3)\nz = x @ y\ny += 1  # <--\n"
        "z.backward()\n",
        "import torch\nx = torch.randn(4, 3, requires_grad=True)\nfor t in range(4):\n    h = torch.tanh(x[t])\n"
        "    h += 1  # <--\nh.sum().backward()\n",
        "import torch\nx = torch.randn(4, 3, requires_grad=True)\nhs = [torch.sigmoid(x[0])]\nhs[0] += 1  # <--\n"
        "sum(hs).sum().backward()\n",
        _NET + "        out = torch.sigmoid(self.fc(x))\n        out[mask] = 0  # <--\n        return out\n",
        _NET + "        p = torch.exp(self.fc(x))\n        p /= p.sum(-1, keepdim=True)  # <--\n        return p\n",
        _NET + "        h = torch.tanh(self.fc(x))\n        h.mul_(mask)  # <--\n        return h\n",
        _NET + "        att = F.softmax(self.fc(x), -1)\n        att.masked_fill_(mask, 0)  # <--\n"
        "        return att\n",
        _NET + "        y = F.relu(self.fc(x))\n        y[:, 0] = 0  # <--\n        return y\n",
        _NET + "        att = F.softmax(self.fc(x), dim=-1)\n        att = F.dropout(att, 0.1, inplace=True)  # <--\n"
        "        return att\n",
        _NET + "        return self.fc(self._gate(x, mask))\n    def _gate(self, x, mask):\n"
        "        g = torch.sigmoid(self.fc(x))\n        g[mask] = 0.0  # <--\n        return g\n",
        # `h * self.w` saves `h` (the weight requires grad): the output's backward needs it unchanged
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.w = nn.Parameter(torch.ones(4))\n")
        + "        h = self.fc(x)\n        y = h * self.w\n        h[:, 0] = 0  # <--\n        return y\n",
        # a layer with weights saves its input: `x += layer(x)` changes what it saved
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.ln = nn.LayerNorm(4)\n")
        + "        x += self.fc(self.ln(x))  # <--\n        return x\n",
        _NET + "        f = self.fc(x)\n        f /= f.norm(dim=1, keepdim=True)  # <--\n        return f\n",
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.act = nn.ReLU(inplace=True)\n")
        + "        h = torch.sigmoid(self.fc(x))\n        h = self.act(h)  # <--\n        return h\n",
        _NET.replace("(4, 4)\n", "(4, 4)\n        self.drop = nn.Dropout(0.1, inplace=True)\n")
        + "        att = self.fc(x).softmax(-1)\n        att = self.drop(att)  # <--\n        return att\n",
        # a view of the buffer read by the layer, then another slice written: one version counter
        _NET + "        out = torch.zeros(x.shape[0], 5, 4)\n        out[:, 0] = x\n        for t in range(1, 5):\n"
        "            h = torch.tanh(self.fc(out[:, t - 1]))\n            out[:, t] = h  # <--\n        return out\n",
        # an optimizer step between two backward passes through the same module call
        _GAN + "    prob_fake = D(fake)\n    D_loss = -torch.log(D(real)).mean() - torch.log(1 - prob_fake).mean()\n"
        "    G_loss = torch.log(1 - prob_fake).mean()\n    opt_D.zero_grad()\n"
        "    D_loss.backward(retain_graph=True)\n    opt_D.step()  # <--\n    opt_G.zero_grad()\n"
        "    G_loss.backward()\n    opt_G.step()\n",
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass Critic(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc1 = nn.Linear(4, 32)\n"
        "        self.fc2 = nn.Linear(32, 1)\n    def forward(self, s):\n"
        "        return self.fc2(F.relu(self.fc1(s)))\n"
        "actor = nn.Sequential(nn.Linear(4, 2), nn.LogSoftmax(dim=-1))\ncritic = Critic()\n"
        "actor_opt = torch.optim.Adam(actor.parameters())\n"
        "critic_opt = torch.optim.Adam([{'params': critic.parameters(), 'lr': 1e-3}])\n"
        "state, ret = torch.randn(8, 4), torch.randn(8, 1)\nlogp = actor(state)[:, 0]\n"
        "advantage = ret - critic(state)\ncritic_loss = advantage.pow(2).mean()\n"
        "actor_loss = -(logp * advantage.squeeze(1)).mean()\ncritic_loss.backward(retain_graph=True)\n"
        "critic_opt.step()  # <--\nactor_loss.backward()\n",
        # a plain function whose input requires grad at its call site
        "import torch\ndef softmax(s):\n    e = torch.exp(s)\n    e /= e.sum(dim=1, keepdim=True)  # <--\n"
        "    return e\nw = torch.randn(2, 4, requires_grad=True)\nsoftmax(w).sum().backward()\n",
    )

    def __init__(self) -> None:
        self._reported: set[int] = set()

    def visit_Return(self, node: cst.Return, ctx) -> None:
        """``forward`` of an ``nn.Module`` returns a value whose graph holds a saved tensor that
        was changed in place since: the forward is written to be differentiated, and backward
        through its output raises."""
        if node.value is None or ctx.grad_enabled is not True:
            return
        function, cls = ctx.function, ctx.class_def
        if function is None:
            return
        if cls is None:
            self._plain_return(node, ctx, function)
            return
        if ctx.in_module_class is not True or not differentiated(function, cls):
            return
        for record, changed, name, what in self._changed_in_return(node, ctx):
            layer = inplace_layer_call(ctx.qualname, cls, changed) if type(changed) is cst.Call else None
            if layer is not None:
                unless = f" unless `{layer.unless_zero}` is 0" if layer.unless_zero is not None else ""
                ctx.report(
                    changed,
                    f"`{short(ctx, changed.func)}` is an `nn.{layer.layer}(..., inplace=True)`: it changes "  # type: ignore[attr-defined]
                    f"`{name}` in place, but `{record.op}` saved {what} for backward, and "
                    f"`{function.name.value}` returns a value computed from it: backward through the "
                    f"module's output raises RuntimeError{unless} (one of the variables needed for "
                    f"gradient computation has been modified by an inplace operation); build the layer "
                    f"without `inplace=True`",
                    condition=f"`{layer.unless_zero}` is 0" if layer.unless_zero is not None else None,
                    related=_saved_here(record) + [(node, "returned here")],
                )
                continue
            ctx.report(
                changed,
                f"`{name}` is changed in place here, but `{record.op}` saved {what} for "
                f"backward, and `{function.name.value}` returns a value computed from it: backward through "
                f"the module's output raises RuntimeError (one of the variables needed for "
                f"gradient computation has been modified by an inplace operation); assign a new "
                f"tensor instead (`{name} = ...`, `torch.where(...)`, `.masked_fill(...)`)",
                related=_saved_here(record) + [(node, "returned here")],
            )

    def _plain_return(self, node: cst.Return, ctx, function: cst.FunctionDef) -> None:
        """A plain function returns a value whose graph holds a saved tensor changed in place
        since: its ops saved tensors only because an input requires grad (known from the
        function's call sites), so backward through what it returns raises."""
        for record, changed, name, what in self._changed_in_return(node, ctx):
            ctx.report(
                changed,
                f"`{name}` is changed in place here, but `{record.op}` saved {what} for "
                f"backward (its input requires grad), and `{function.name.value}` returns a value "
                f"computed from it: backward through the result raises RuntimeError (one of the "
                f"variables needed for gradient computation has been modified by an inplace "
                f"operation); assign a new tensor instead (`{name} = ...`)",
                related=_saved_here(record) + [(node, "returned here")],
            )

    def _changed_in_return(self, node: cst.Return, ctx) -> Iterator[tuple[SaveRecord, cst.CSTNode, str, str]]:
        """``(record, change, name, what was saved)`` for each saved tensor the returned value
        needs that was changed in place since and not reported yet (none in a file that turns
        ``requires_grad`` off)."""
        text = ctx.text
        if node.value is None or text is None or _freezes(text):
            return
        for record, changed in ctx.changed_saves(node.value):
            if id(changed) in self._reported or record.role == WEIGHTS:
                continue
            self._reported.add(id(changed))
            name = record.binding[0]
            yield record, changed, name, "its output" if record.role == "result" else f"`{name}`"

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """A backward call reports the saved tensors of its graph changed in place before it (the
        model keeps what each op saved, and the changes, statement by statement)."""
        root = backward_root(ctx, node)
        if root is None:
            return
        for record, changed in ctx.changed_saves(root):
            if id(changed) in self._reported:
                continue
            self._reported.add(id(changed))
            if record.role == WEIGHTS:
                self._stepped(ctx, node, record, changed)
                continue
            what = "its output" if record.role == "result" else f"`{record.binding[0]}`"
            ctx.report(
                changed,
                f"`{record.binding[0]}` is changed in place here, but `{record.op}` saved "
                f"{what} for backward: `{short(ctx, node)}` then raises RuntimeError (one of "
                f"the variables needed for gradient computation has been modified by an "
                f"inplace operation); assign a new tensor instead (`{record.binding[0]} = ...`)",
                related=_saved_here(record) + [(node, "backward runs here")],
            )

    def _stepped(self, ctx, backward: cst.Call, record: SaveRecord, step: cst.CSTNode) -> None:
        """An optimizer's ``step()`` changed the parameters that a module call saved before it,
        and ``backward`` runs through that call afterwards."""
        module = record.binding[0]
        ctx.report(
            step,
            f"`{short(ctx, step)}` changes the parameters of `{module}` in place, but `{record.op}` "
            f"saved them for backward before it: `{short(ctx, backward)}` then raises RuntimeError "
            f"(one of the variables needed for gradient computation has been modified by an inplace "
            f"operation); call `{short(ctx, backward)}` before the step, or compute that loss again "
            f"after it",
            related=_saved_here(record) + [(backward, "backward runs here")],
        )
