"""SC604 list-of-tensor: `list(t)` on a 1-D tensor gives 0-dim tensors, not numbers; a list of
tensors with several elements given to `torch.tensor` raises."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.pitfall.appended_lists import local_append, only_appended, only_comprehension, plain_append
from shapecheck.rules.helpers.element_count import several_elements_of
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import tensor_fact
from shapecheck.semantic.facts import BOOL, FLOAT, INT, TENSOR
from shapecheck.semantic.syntax import is_number

#: what building a tensor from a list of tensors with several elements raises, by constructor
_CONSTRUCTORS = {
    "torch.tensor": "ValueError", "torch.as_tensor": "ValueError", "torch.Tensor": "ValueError",
    "torch.FloatTensor": "ValueError", "torch.DoubleTensor": "ValueError", "torch.LongTensor": "TypeError",
}
def _flat(arg: cst.List, ctx) -> bool:
    """torch reads ``arg`` as a list of scalars: it takes the number of dims from the first element
    at each level, so when the first element is a number or a tensor, every element must be one
    number; when it is a list (``[[0, 1], t]``), a tensor further on is read row by row like it."""
    first = arg.elements[0] if arg.elements else None
    if type(first) is not cst.Element:
        return False
    return ctx.fact(first.value).kind in (TENSOR, INT, FLOAT, BOOL) or is_number(first.value)


@register
class ListOfTensor(Rule):
    """SC604: `list(t)` on a 1-D tensor gives 0-dim tensors, not numbers."""
    code = "SC604"
    needs = ("list", "ensor")
    name = "list-of-tensor"
    severity = "warning"
    summary = "`list(t)` on a 1-D tensor gives 0-dim tensors; `torch.tensor(list of tensors)` raises"
    doc = """\
## What it does
Flags `list(t)` where `t` is a tensor known to be 1-D, and `torch.tensor(xs)` (also
`torch.as_tensor`, `torch.Tensor`, `torch.FloatTensor`...) where the list `xs` holds tensors
with more than one element: a list literal, a list comprehension (also one bound to a local
name), or a local list built by `xs = []` and `xs.append(t)` in loops.

## Why is this bad?
`list()` iterates over the first dim, so a 1-D tensor becomes a list of 0-dim tensors
(`[tensor(1), tensor(2)]`), not of Python numbers. Each element still carries a device, a dtype
and an autograd history; comparing, hashing, printing or JSON-encoding them behaves differently
from numbers, and building the list is slow.

`torch.tensor` converts each element of a list to a Python number: a tensor with more than one
element raises `ValueError: only one element tensors can be converted to Python scalars`.

## Example
```python
t = torch.tensor([1, 2, 3])
ids = list(t)                 # [tensor(1), tensor(2), tensor(3)]
outputs = [model(x) for x in batches]
all_out = torch.tensor(outputs)   # ValueError
```

## Use instead
```python
ids = t.tolist()              # [1, 2, 3]
rows = t.unbind(0)            # when you do want tensors
all_out = torch.stack(outputs)
```
"""
    valid = (
        # the sizes of a 1-D tensor (made from bytes) gathered from every rank: one element each
        "import pickle\nimport torch\nimport torch.distributed as dist\ndef gather(part, world):\n"
        "    t = torch.tensor(bytearray(pickle.dumps(part)), dtype=torch.uint8)\n    size = torch.tensor(t.shape)\n"
        "    sizes = [size.clone() for _ in range(world)]\n    dist.all_gather(sizes, size)\n"
        "    longest = torch.tensor(sizes).max()\n    out = torch.zeros(longest, dtype=torch.uint8)\n"
        "    out[:size[0]] = t\n    return out\n",
        # the first element is a list: torch reads three dims, and the tensor row by row
        "import torch\nmasks = torch.tensor([[[False, True], [True, False]], torch.zeros(2, 2)])\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nids = t.tolist()\n",
        "import torch\nt = torch.randn(2, 3)\nrows = list(t)\n",
        "import torch\nshape = list(torch.randn(2, 3).shape)\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nparts = list(t.split(1))\n",
        # numbers (.item()), tensors joined with stack, an append that may not run
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 4)\ndef run(loader, flag):\n    losses = []\n"
        "    outs = []\n    maybe = []\n    for x in loader:\n        out = model(x)\n"
        "        losses.append(out.sum().item())\n        outs.append(out)\n        if flag:\n"
        "            maybe.append(out)\n    return torch.tensor(losses), torch.stack(outs), torch.tensor(maybe)\n",
        # the list is rebuilt from numbers before torch.tensor
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 4)\ndef run(loader):\n    outs = []\n"
        "    for x in loader:\n        outs.append(model(x))\n    outs = [o.tolist() for o in outs]\n"
        "    return torch.tensor(outs)\n",
        # comprehensions of 0-dim tensors and of numbers; a list rebuilt before the call
        "import torch\nimport torch.nn as nn\ndef pool(layer, batches):\n"
        "    sums = [layer(b).sum() for b in batches]\n    rows = [layer(b).mean(0).tolist() for b in batches]\n"
        "    return torch.tensor(sums), torch.tensor(rows)\n"
        "pool(nn.Linear(2, 6), [torch.randn(3, 2), torch.randn(5, 2)])\n",
        "import torch\nimport torch.nn as nn\ndef pool(layer, batches):\n"
        "    feats = [layer(b).mean(0) for b in batches]\n    feats = [f.norm() for f in feats]\n"
        "    return torch.tensor(feats)\npool(nn.Linear(2, 6), [torch.randn(3, 2), torch.randn(5, 2)])\n",
    )
    invalid = (
        # the sizes of a 2-D tensor: two elements each
        "import torch\nimport torch.distributed as dist\ndef gather(world):\n    t = torch.zeros(4, 5)\n"
        "    size = torch.tensor(t.shape)\n    sizes = [size.clone() for _ in range(world)]\n"
        "    dist.all_gather(sizes, size)\n    return torch.tensor(sizes).max()  # <--\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nids = list(t)  # <--\n",
        "import torch\nids = list(torch.arange(5))  # <--\n",
        # torch.tensor of a list of tensors with several elements raises ValueError
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(8, 4)\ndef run(loader):\n    outputs = []\n"
        "    for x in loader:\n        outputs.append(model(x))\n    return torch.tensor(outputs)  # <--\n",
        "import torch\nimport torch.nn as nn\nemb = nn.Embedding(10, 4)\ndef f(ids):\n    embs = []\n"
        "    for i in ids:\n        embs.append(emb(i))\n    return torch.FloatTensor(embs)  # <--\n",
        "import torch\na = torch.randn(3, 4)\nb = torch.Tensor([a, a])  # <--\n",
        # a comprehension of the rows of a matrix; of the pooled features of each batch of a call
        "import torch\na = torch.randn(3, 4)\nb = torch.tensor([r * 2 for r in a])  # <--\n",
        "import torch\nimport torch.nn as nn\ndef pool(layer, batches):\n"
        "    feats = [layer(b).mean(0) for b in batches]\n    return torch.FloatTensor(feats)  # <--\n"
        "pool(nn.Linear(2, 6), [torch.randn(3, 2), torch.randn(5, 2)])\n",
    )

    def __init__(self) -> None:
        #: per (function, list name): the appends of tensors of several elements seen so far
        self._appended: dict[tuple[int, str], list[tuple[cst.Call, str, Optional[str]]]] = {}
        #: per list comprehension: its element, when it is a tensor of several elements
        self._comprehended: dict[int, tuple[cst.BaseExpression, str, Optional[str]]] = {}

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """``[r * 2 for r in rows]``: the element, read while the variable is bound."""
        self._record_element(node, ctx)

    def visit_Subscript(self, node: cst.Subscript, ctx) -> None:
        """``[x[0] for x in pairs]``: the element, read while the variable is bound."""
        self._record_element(node, ctx)

    def _record_element(self, node: cst.BaseExpression, ctx) -> None:
        """The element of a list comprehension, read while its variable is bound."""
        parent = ctx.parent
        if type(parent) is not cst.ListComp or parent.elt is not node:
            return
        found = several_elements_of(ctx, node, short(ctx, node))
        if found is None:
            return
        self._comprehended[id(parent)] = (node, found[0], found[1])
        path = ctx.ancestors
        if len(path) >= 3 and type(path[-2]) is cst.Arg and type(path[-3]) is cst.Call and path[-3].args[0] is path[-2]:
            self._constructor(path[-3], ctx, written=True)  # `torch.tensor([... for ...])`, walked before its argument

    def _record_append(self, node: cst.Call, ctx) -> None:
        append = local_append(node, ctx)
        if append is None:
            return
        item = append[1]
        name = short(ctx, item)
        found = several_elements_of(ctx, item, name)
        if found is not None:
            key = (id(ctx.function), append[0])
            self._appended.setdefault(key, []).append((node, found[0], found[1]))

    def _items(self, arg: cst.BaseExpression, ctx,
               written: bool) -> Iterator[tuple[cst.CSTNode, str, str, Optional[str]]]:
        """The tensors of several elements the list ``arg`` holds: ``(where, name, described, condition)``;
        a comprehension written as the argument only with ``written`` (its element is walked later)."""
        if type(arg) is cst.List:
            if not _flat(arg, ctx):
                return
            for e in arg.elements:
                if type(e) is cst.Element:
                    name = short(ctx, e.value)
                    found = several_elements_of(ctx, e.value, name)
                    if found is not None:
                        yield e.value, name, found[0], found[1]
            return
        comprehension = arg if type(arg) is cst.ListComp and written else None
        if type(arg) is cst.Name and ctx.function is not None:
            comprehension = only_comprehension(ctx.function, arg.value)
        element = self._comprehended.get(id(comprehension)) if comprehension is not None else None
        if element is not None:
            yield element[0], short(ctx, element[0]), element[1], element[2]
            return
        if type(arg) is not cst.Name or ctx.function is None:
            return
        appends = self._appended.get((id(ctx.function), arg.value))
        if not appends or not only_appended(ctx.function, arg.value):
            return
        for append, described, condition in appends:
            if plain_append(ctx.function, append):
                yield append, short(ctx, append.args[0].value), described, condition

    def _constructor(self, node: cst.Call, ctx, written: bool = False) -> None:
        qual = ctx.qualname(node.func)
        error = _CONSTRUCTORS.get(qual or "")
        if error is None or not node.args or node.args[0].keyword is not None or node.args[0].star:
            return
        arg = node.args[0].value
        if written != (type(arg) is cst.ListComp):
            return
        for _, name, described, condition in self._items(arg, ctx, written):
            unless = f" unless {condition}" if condition is not None else ""
            ctx.report(node, f"`{short(ctx, node.func)}` of a list of tensors: `{short(ctx, arg)}` holds "
                             f"`{name}`, a tensor of {described}; this raises {error}{unless} (only one "
                             f"element tensors can be converted to Python scalars); use `torch.stack` "
                             f"(or `torch.cat`) to join tensors", condition=condition)
            return

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``list(t)`` on a 1-D tensor; ``torch.tensor`` of a list of tensors with several elements."""
        self._record_append(node, ctx)
        self._record_element(node, ctx)
        self._constructor(node, ctx)
        if not (type(node.func) is cst.Name and node.func.value == "list"):
            return
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        if ctx.qualname(node.func) not in (None, "list"):
            return
        target = node.args[0].value
        fact = tensor_fact(ctx, target)
        if fact is None or fact.shape is None or fact.shape.rank != 1:
            return
        ctx.report(
            node,
            f"`list({short(ctx, target)})` turns a 1-D tensor into a list of 0-dim tensors, not "
            f"Python numbers; use `{short(ctx, target)}.tolist()` for numbers "
            f"(or `.unbind(0)` when you want tensors)",
        )
