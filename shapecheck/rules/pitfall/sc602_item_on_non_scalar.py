"""SC602 item-on-non-scalar: `.item()`, `float()` or `int()` on a tensor with more than one element."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.autograd.unreduced_loss import unreduced_elements
from shapecheck.rules.base import Rule, register
from shapecheck.rules.pitfall.appended_lists import loop_append
from shapecheck.rules.helpers.calls import dotted_name, keyword, method_call, positional
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.element_count import several_elements_of
from shapecheck.rules.helpers.tensors import tensor_fact
from shapecheck.rules.shape.bound_values import value_before
from shapecheck.semantic.facts import MODULE
from shapecheck.semantic.walk import walk


#: constructors that build a tensor with one element per item of a list
_FROM_LIST = frozenset({"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor",
                        "torch.DoubleTensor", "torch.LongTensor"})


#: calls that flatten their receiver: ``x.view(-1)``, ``x.reshape(-1)``, ``x.flatten()``, ``x.ravel()``
_FLATTENING = frozenset({"view", "reshape", "flatten", "ravel"})
#: functions and methods whose result has their one tensor argument's shape
_SAME_SHAPE = frozenset({"sigmoid", "tanh", "relu", "exp", "log", "abs", "round", "float", "double", "detach",
                         "cpu", "clone", "neg", "softmax", "log_softmax"})

#: the head of the examples about a sentiment model whose output width is a constructor argument
_SENTIMENT = (
    "import torch\nimport torch.nn as nn\nclass RNN(nn.Module):\n"
    "    def __init__(self, vocab, embedding_dim, hidden_dim, output_dim):\n        super().__init__()\n"
    "        self.embedding = nn.Embedding(vocab, embedding_dim)\n"
    "        self.rnn = nn.RNN(embedding_dim, hidden_dim)\n"
    "        self.fc = nn.Linear(hidden_dim, output_dim)\n    def forward(self, text):\n"
    "        output, hidden = self.rnn(self.embedding(text))\n"
)
#: ... and the function that scores one sentence with it
_PREDICT = (
    "model = RNN(50, 8, 16, 1)\ndef predict_sentiment(model, indexed):\n"
    "    tensor = torch.LongTensor(indexed).unsqueeze(1)\n    prediction = torch.sigmoid(model(tensor))\n"
    "    return prediction.item()\nprint(predict_sentiment(model, [1, 2, 3]))\n"
)


def _flattened_unknown(ctx, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """``expr`` is a flattening of a tensor whose rank is unknown (``out.view(-1)``, also through
    an elementwise function, ``torch.sigmoid(out.view(-1))``, or a name bound only to one): its
    one dim holds as many elements as that tensor, which may be one (a 0-dim or ``(1, 1)``
    output); the flattening says nothing of its size."""
    if depth > 4:
        return False
    if type(expr) is cst.Name:
        values = ctx.assigned_values(expr.value)
        if not values:
            value = value_before(ctx, expr.value, expr)
            values = (value,) if value is not None else ()
        return bool(values) and all(_flattened_unknown(ctx, v, depth + 1) for v in values)
    if type(expr) is not cst.Call:
        return False
    call = method_call(expr)
    args = positional(expr)
    if call is not None and ctx.qualname(expr.func) is None:
        flattened = _is_flattening(expr)
        if flattened is not None:
            shape = ctx.fact(flattened).shape
            return shape is None or shape.rank is None
        return call[1] in _SAME_SHAPE and _flattened_unknown(ctx, call[0], depth + 1)
    qual = ctx.qualname(expr.func) or ""
    if qual.rsplit(".", 1)[-1] in _SAME_SHAPE and qual.startswith("torch.") and args:
        return _flattened_unknown(ctx, args[0], depth + 1)
    return _module_output(ctx, expr)


def _is_flattening(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The receiver of ``x.view(-1)``, ``x.reshape(-1)``, ``x.flatten()`` or ``x.ravel()``."""
    if type(expr) is not cst.Call:
        return None
    call = method_call(expr)
    if call is None or call[1] not in _FLATTENING:
        return None
    args = positional(expr)
    if len(expr.args) != len(args):
        return None
    if call[1] in ("flatten", "ravel"):
        return call[0] if not args else None
    return call[0] if len(args) == 1 and _minus_one(args[0]) else None


def _module_output(ctx, call: cst.Call) -> bool:
    """``call`` calls a module whose class (of this file) has a ``forward`` whose every ``return``
    is a layer's output or a flattening whose size the module does not fix (``self.fc(h)`` or
    ``self.fc(h).view(-1)`` with ``self.fc`` built from constructor arguments), and the call's own
    facts say no size: a model that scores one sample returns one element, which is what
    ``.item()`` on its output expects."""
    shape = ctx.fact(call).shape
    if shape is not None and any(d is not None for d in shape.dims):
        return False
    owner = ctx.fact(call.func)
    cls = _module_class(ctx.module, owner.qual) if owner.kind == MODULE and owner.qual else None
    forward = next((s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "forward"),
                   None) if cls is not None else None
    if forward is None:
        return False
    nodes = list(walk(forward.body))
    returns = [node.value for node in nodes if type(node) is cst.Return]
    assigned: dict[str, list[cst.BaseExpression]] = {}
    for node in nodes:
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            assigned.setdefault(node.targets[0].target.value, []).append(node.value)
    return bool(returns) and all(value is not None and _unsized(ctx, cls, assigned, value, 0)  # type: ignore[arg-type]
                                 for value in returns)


def _unsized(ctx, cls: cst.ClassDef, assigned: dict[str, list[cst.BaseExpression]],
             value: cst.BaseExpression, depth: int) -> bool:
    """``value`` (returned by ``forward`` of ``cls``) is a layer's output (``self.fc(h)``), or a
    flattening of a value, through functions that keep the shape and names ``forward`` binds,
    and no layer it comes from has a literal width above 1."""
    if depth > 4:
        return False
    if type(value) is cst.Name:
        values = assigned.get(value.value, [])
        return bool(values) and all(_unsized(ctx, cls, assigned, v, depth + 1) for v in values)
    if type(value) is not cst.Call:
        return False
    receiver = _is_flattening(value)
    if receiver is not None:
        return not _fixed_width(cls, receiver)
    call = method_call(value)
    if call is not None and ctx.qualname(value.func) is None:
        if call[1] in _SAME_SHAPE or call[1] == "squeeze":
            return _unsized(ctx, cls, assigned, call[0], depth + 1)
        layer = dotted_name(value.func)
        return layer is not None and layer.startswith("self.") and layer.count(".") == 1 \
            and not _fixed_width(cls, value)
    qual = ctx.qualname(value.func) or ""
    args = positional(value)
    if qual.startswith("torch.") and qual.rsplit(".", 1)[-1] in _SAME_SHAPE and args:
        return _unsized(ctx, cls, assigned, args[0], depth + 1)
    return False


def _module_class(module: cst.Module, name: str) -> Optional[cst.ClassDef]:
    """The class named ``name`` at the top level of ``module``."""
    for statement in module.body:
        if type(statement) is cst.ClassDef and statement.name.value == name:
            return statement
    return None


def _fixed_width(cls: cst.ClassDef, receiver: cst.BaseExpression) -> bool:
    """``receiver`` is ``self.<layer>(...)`` of an ``nn.Linear`` that ``cls.__init__`` builds with
    a literal number of output features above 1: each row holds that many elements."""
    if type(receiver) is not cst.Call:
        return False
    layer = dotted_name(receiver.func)
    if layer is None or not layer.startswith("self."):
        return False
    for statement in cls.body.body:
        if type(statement) is not cst.FunctionDef or statement.name.value != "__init__":
            continue
        for node in walk(statement.body):
            if type(node) is not cst.Assign or len(node.targets) != 1 \
                    or dotted_name(node.targets[0].target) != layer or type(node.value) is not cst.Call:
                continue
            args = positional(node.value)
            width = args[1] if len(args) > 1 else keyword(node.value, "out_features")
            width = width.value if isinstance(width, cst.Arg) else width
            if (dotted_name(node.value.func) or "").endswith("Linear") and type(width) is cst.Integer \
                    and int(width.value) > 1:
                return True
    return False


def _minus_one(expr: cst.BaseExpression) -> bool:
    """``-1`` as written."""
    return type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus \
        and type(expr.expression) is cst.Integer and expr.expression.value == "1"


def _of_loop_list(ctx, target: cst.BaseExpression) -> Optional[tuple[str, Optional[str]]]:
    """``torch.tensor(xs)`` with ``xs`` a local list that a loop appends to on every pass: one
    element (at least) per pass, more than one unless the loop passes once."""
    if type(target) is not cst.Call or ctx.function is None or ctx.qualname(target.func) not in _FROM_LIST:
        return None
    args = positional(target)
    if len(args) != 1 or len(target.args) != 1 or type(args[0]) is not cst.Name:
        return None
    if loop_append(ctx.function, args[0].value) is None:
        return None
    return f"one element per item a loop appends to `{args[0].value}`", "the loop appends one item"


def _numel_words(fact) -> str:
    """``"6 elements"`` when the count is known, else ``"more than one element"``."""
    n = fact.shape.numel() if fact.shape is not None else None
    if n is not None and n.bit_length() <= 64:
        return f"{n} elements"
    return "more than one element (or none)"


@register
class ItemOnNonScalar(Rule):
    """SC602: `.item()`, `float()` or `int()` on a tensor with more than one element."""
    code = "SC602"
    name = "item-on-non-scalar"
    severity = "error"
    summary = "`.item()`, `float()` or `int()` on a tensor with more than one element"
    doc = """\
## What it does
Flags `t.item()`, `float(t)` and `int(t)` where `t` is a tensor known to hold more than one
element: a known size above 1, or for generic sizes a dim of unknown size, per-element losses
(`reduction="none"`), and `torch.tensor(xs)` of a list a loop appends to on every pass.

The output of a model whose sizes nothing fixes is not flagged: a module class of the file whose
`forward` returns a layer's output, or its flattening (`self.fc(h).view(-1)`), where that layer's
width is a constructor argument (`nn.Linear(hidden_dim, output_dim)`) and the batch is the
caller's. `.item()` there says the caller scores one sample (`predict_sentiment` of one
sentence). A layer built with a literal width above 1 (`nn.Linear(hidden_dim, 2)`) still is.

## Why is this bad?
They convert a one-element tensor to a Python number. On any other tensor they raise
`RuntimeError: a Tensor with 6 elements cannot be converted to Scalar`.

## Example
```python
x = torch.randn(2, 3)
value = x.item()              # RuntimeError
```

## Use instead
```python
value = x[0, 0].item()        # pick one element
values = x.tolist()           # or convert them all
total = x.sum().item()        # or reduce first
```
"""
    valid = (
        # flattening an output of unknown rank says nothing of its size: a (1, 1) output has one element
        "import torch\ndef predict(model, x):\n    p = torch.sigmoid(model(x).view(-1))\n    return p.item()\n",
        "import torch\nx = torch.randn(2, 3)\nv = x.sum().item()\n",
        # a model scoring one sentence: its width is a constructor argument, its batch the caller's
        _SENTIMENT + "        return self.fc(hidden.squeeze(0)).view(-1)\n" + _PREDICT,
        _SENTIMENT + "        out = self.fc(hidden[-1])\n        return out\n" + _PREDICT,
        # a loader of one sample per batch (`batch_size=1`, or the default)
        "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\n"
        "ds = TensorDataset(torch.randn(10, 4), torch.randint(0, 3, (10,)))\n"
        "def count():\n    hits = 0\n    for data, target in DataLoader(ds, batch_size=1):\n"
        "        hits += target.item() == 0\n    return hits\n",
        "import torch\nx = torch.randn(2, 3)\nv = x[0, 0].item()\n",
        "import torch\nx = torch.tensor([3.14])\nv = x.item()\n",
        "import torch\nx = torch.randn(2, 3)\nvalues = x.tolist()\n",
        "import torch\nx = torch.randn(1, 1)\nv = float(x)\n",
        "import numpy as np\na = np.zeros(3)\nv = a.item(0)\n",
        # a 0-dim loss, and reductions of a tensor of generic sizes
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    v = loss.item()\n",
        "def f(x):\n    b, t = x.size()\n    y = x.contiguous()\n    return y.sum().item() + y[0, 0].item()\n",
        # evidence of a tensor, but not of its rank: a 0-dim tensor is possible
        "def f(out):\n    out = out.contiguous()\n    return out.item()\n",
        # full reductions of a layer's output, counts of matches
        "import torch.nn as nn\nfc = nn.Linear(8, 4)\ndef f(x, y):\n    out = fc(x)\n"
        "    return out.sum().item() + out.mean().item() + (out.argmax(1) == y).sum().item()\n",
        # a reduction over the only dim of a 1-D tensor is 0-dim; the batch of a reduction over
        # dim 1 may be 1 by construction (greedy decoding of one sentence)
        "def f(x):\n    return x.view(-1).sum(0).item()\n",
        "import torch\ndef decode(model, out):\n    prob = model.ff(out[:, -1])\n"
        "    _, next_word = torch.max(prob, dim=1)\n    return next_word.item()\n",
        # the mean of the numbers a loop collected; a list appended once, or by a loop that stops after one pass
        "import torch\n""def evaluate(model, loader):\n""    losses = []\n""    for x, y in loader:\n"
        "        losses.append(model(x, y).item())\n""    return torch.tensor(losses).mean().item()\n",
        "import torch\n""def first(model, loader):\n""    losses = []\n""    for x in loader:\n"
        "        losses.append(model(x).item())\n""        break\n"
        "    return torch.tensor(losses).item()\n",
        "import torch\n""def one(model, x):\n""    losses = []\n""    losses.append(model(x).item())\n"
        "    return torch.tensor(losses).item()\n",
        # per-sample losses reduced before `.item()`
        "import torch.nn as nn\n""def evaluate(model, loader):\n"
        "    criterion = nn.CrossEntropyLoss(reduction=\"none\")\n""    total = 0.0\n"
        "    for x, y in loader:\n""        loss = criterion(model(x), y).sum()\n"
        "        total += loss.item()\n""    return total\n",
    )
    invalid = (
        "import torch\nx = torch.randn(2, 3)\nv = x.item()  # <--\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nv = t.item()  # <--\n",
        "import torch\nx = torch.ones(4)\nv = float(x)  # <--\n",
        # the model fixes two outputs per sample
        (_SENTIMENT + "        return self.fc(hidden.squeeze(0)).view(-1)\n" + _PREDICT).replace(
            "nn.Linear(hidden_dim, output_dim)", "nn.Linear(hidden_dim, 2)").replace(
            "return prediction.item()", "return prediction.item()  # <--"),
        # a layer's output: nn.Linear(8, 4) gives 4 features, whatever the unknown batch
        "import torch.nn as nn\nhead = nn.Linear(8, 4)\ndef score(x):\n"
        "    return head(x.permute(1, 0)).item()  # <--\n",
        # the prediction F.nll_loss takes has at least one dim: one element only when its sizes are 1
        "import torch.nn.functional as F\ndef train(model, data, target):\n    output = model(data)\n"
        "    loss = F.nll_loss(output, target)\n    v = output.item()  # <--\n",
        "def f(x):\n    y = x.permute(1, 0)\n    return float(y)  # <--\n",
        # `x == 0` holds the elements of `x`: (..., 4) here
        "import torch.nn as nn\nfc = nn.Linear(8, 4)\ndef f(x):\n    return (fc(x) == 0).item()  # <--\n",
        "def f(boxes):\n    n, k = boxes.size()\n    boxes = boxes.contiguous()\n"
        "    return boxes.sum(-1).item()  # <--\n",
        # per-sample losses (reduction="none") in a function without backward
        "import torch.nn as nn\n""def evaluate(model, loader):\n"
        "    criterion = nn.CrossEntropyLoss(reduction=\"none\")\n""    total = 0.0\n"
        "    for x, y in loader:\n""        loss = criterion(model(x), y)\n"
        "        total += loss.item()  # <--\n""    return total\n",
        # one element per number a loop appends
        "import torch\n""def evaluate(model, loader):\n""    losses = []\n""    for x, y in loader:\n"
        "        losses.append(model(x, y).item())\n""    return torch.tensor(losses).item()  # <--\n",
        # the argmax over dim 1 keeps the batch dim of the prediction F.nll_loss takes
        "import torch.nn.functional as F\n""def test(model, loader):\n""    correct = 0\n"
        "    for data, target in loader:\n""        output = model(data)\n"
        "        loss = F.nll_loss(output, target)\n""        pred = output.argmax(dim=1, keepdim=True)\n"
        "        correct += pred.eq(target.view_as(pred)).item()  # <--\n""    return correct\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``t.item()``, ``float(t)`` and ``int(t)`` on a tensor of more than one element."""
        target: Optional[cst.BaseExpression] = None
        call = method_call(node)
        if call is not None and call[1] == "item" and not node.args:
            target, how = call[0], "`.item()`"
        elif type(node.func) is cst.Name and node.func.value in ("float", "int"):
            args = positional(node)
            if len(args) == 1 and len(node.args) == 1:
                target, how = args[0], f"`{node.func.value}()`"
        if target is None:
            return
        fact = tensor_fact(ctx, target)
        if fact is None:
            return
        name = short(ctx, target)
        if _flattened_unknown(ctx, target):
            return
        found = several_elements_of(ctx, target, name) or unreduced_elements(ctx, target, name) \
            or _of_loop_list(ctx, target)
        if found is None:
            return
        described, condition = found
        unless = f" unless {condition}" if condition is not None else ""
        error = (f"RuntimeError{unless} (a Tensor with {_numel_words(fact)} cannot be converted to Scalar)"
                 if how == "`.item()`" else
                 f"ValueError{unless} (only one element tensors can be converted to Python scalars)")
        ctx.report(
            node,
            f"{how} on `{name}`, a tensor of {described}, raises {error}; index one element, "
            f"reduce first, or use `.tolist()`",
            condition=condition,
        )
