"""SC305 grad-on-integer-tensor: `requires_grad` on an integer or boolean tensor."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name, is_name, keyword, method_call, positional, torch_name
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.helpers.tensors import tensor_fact
from shapecheck.semantic.facts import INT
from shapecheck.semantic.torch_api import BOOL_DTYPES, FACTORIES, INT_DEFAULT_FACTORIES, INT_DTYPES, PARAMETER_CLASSES


def _factory_dtype_kind(ctx, node: cst.Call, factory: str) -> Optional[str]:
    """``"int"``/``"bool"`` when the factory call surely builds an integer or boolean tensor."""
    dtype = keyword(node, "dtype")
    if dtype is not None:
        qual = torch_name(ctx, dtype.value)
        if qual in INT_DTYPES:
            return "int"
        if qual in BOOL_DTYPES:
            return "bool"
        return None
    if factory in INT_DEFAULT_FACTORIES:
        return "int"
    args = positional(node)
    if factory in ("tensor", "as_tensor") and args:
        return _literal_kind(args[0])
    if factory == "arange" and _int_range(ctx, node, args):
        return "int"
    if factory == "full" and len(args) >= 2 and type(args[1]) is cst.Integer:
        return "int"
    return None


def _int_range(ctx, node: cst.Call, args: list[cst.BaseExpression]) -> bool:
    """``torch.arange(...)`` whose start, end and step are all ints (a literal, ``len(...)``,
    ``x.size(0)``...): torch then builds an ``int64`` tensor."""
    bounds = list(args) + [kw.value for kw in (keyword(node, k) for k in ("start", "end", "step")) if kw is not None]
    return bool(bounds) and all(
        type(a) is cst.Integer or (tensor_fact(ctx, a) is None and ctx.fact(a).kind == INT) for a in bounds
    )


def _unknown_bounds(ctx, node: cst.Call) -> list[str]:
    """The names of the bounds of ``torch.arange(...)`` whose type is unknown, when every other
    bound is an int: the range is ``int64`` unless one of those is a float; empty otherwise."""
    args = positional(node)
    bounds = list(args) + [kw.value for kw in (keyword(node, k) for k in ("start", "end", "step")) if kw is not None]
    unknown: list[str] = []
    for a in bounds:
        if type(a) is cst.Integer or (tensor_fact(ctx, a) is None and ctx.fact(a).kind == INT):
            continue
        dotted = dotted_name(a)
        fact = ctx.fact(a)
        if dotted is None or fact.kind is not None or fact.value is not None or fact.elems is not None:
            return []
        unknown.append(dotted)
    return unknown


def _literal_kind(expr: cst.BaseExpression) -> Optional[str]:
    """``"int"``/``"bool"`` for a literal made only of ints (or only of bools)."""
    kinds: set[str] = set()
    stack = [expr]
    while stack:
        item = stack.pop()
        if isinstance(item, (cst.List, cst.Tuple)):
            if not item.elements:
                return None
            stack.extend(e.value for e in item.elements)
        elif type(item) is cst.Integer:
            kinds.add("int")
        elif type(item) is cst.UnaryOperation and type(item.expression) is cst.Integer:
            kinds.add("int")
        elif is_name(item, "True") or is_name(item, "False"):
            kinds.add("bool")
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


@register
class GradOnIntegerTensor(Rule):
    """SC305: `requires_grad` on an integer or boolean tensor."""
    code = "SC305"
    needs = ("requires_grad", "Parameter")
    name = "grad-on-integer-tensor"
    severity = "error"
    summary = "`requires_grad` on an integer or boolean tensor"
    doc = """\
## What it does
Flags `requires_grad=True` on a factory that builds an integer or boolean tensor
(`torch.tensor([1, 2])`, `torch.arange(5)`, `torch.arange(len(xs))`, `torch.randint(...)`, `dtype=torch.long`), and
`.requires_grad_()`, `t.requires_grad = True` or `nn.Parameter(...)` on a tensor known to be integer or
boolean (`torch.bincount(labels)` without `weights`, `torch.bucketize`, `torch.searchsorted` and
`torch.multinomial` give `int64`). `torch.arange(n)` with `n` of unknown type is flagged too, with the exception named:
it is an `int64` range unless `n` is a float.

## Why is this bad?
Gradients exist only for floating point and complex tensors: torch raises `RuntimeError: Only
Tensors of floating point and complex dtype can require gradients`. `torch.tensor([1, 2])`
infers `int64` from the Python ints.

## Example
```python
w = torch.tensor([1, 2], requires_grad=True)          # RuntimeError
```

## Use instead
```python
w = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)
```
"""
    valid = (
        # a `dtype=` the caller chooses (a float one here): the integer default no longer holds
        "import torch\nimport torch.nn as nn\ndef tables(b, dtype):\n"
        "    return nn.Parameter(torch.randint(1, 255, (b, 8, 8), dtype=dtype))\n"
        "tables(4, torch.float32)\n",
        # with float `weights` it sums them: a float tensor
        "import torch\nlabels = torch.randint(0, 5, (100,))\nw = torch.bincount(labels, weights=torch.rand(100))\n"
        "w.requires_grad_()\n",
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n",
        "import torch\nw = torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)\n",
        "import torch\nw = torch.arange(3.0, requires_grad=True)\n",
        "import torch\nidx = torch.tensor([1, 2])\n",
        "import torch\nw = torch.zeros(3, requires_grad=True)\n",
        "import torch\ndef f(xs):\n    return torch.arange(0, len(xs), 0.5, requires_grad=True)\n",
        "import torch\ndef f(xs):\n    return torch.arange(len(xs), dtype=torch.float32, requires_grad=True)\n",
        "import torch\ndef f(n):\n    return torch.arange(n, dtype=torch.float32, requires_grad=True)\n",
        "import torch\ndef f(n):\n    return torch.arange(0.0, n, requires_grad=True)\n",
        "import torch\ndef f(n):\n    return torch.arange(n, requires_grad=False)\n",
        "import torch\nimport torch.nn as nn\ndef positions(n):\n"
        "    return nn.Parameter(torch.arange(n), requires_grad=False)\n",
        "import torch\nw = torch.tensor([1.0, 2.0])\nw.requires_grad = True\nidx = torch.tensor([1, 2])\n"
        "idx.requires_grad = False\n",
        "import torch\nx = torch.randn(5, 3)\nt = torch.arange(x.size(0) / 2, requires_grad=True)\n",
    )
    invalid = (
        # `bincount` counts in int64
        "import torch\nlabels = torch.randint(0, 5, (100,))\nw = torch.bincount(labels)\nw.requires_grad_()  # <--\n",
        "import torch\nw = torch.tensor([1, 2], requires_grad=True)  # <--\n",
        "import torch\nw = torch.arange(5, requires_grad=True)  # <--\n",
        "import torch\nw = torch.zeros(3, dtype=torch.long, requires_grad=True)  # <--\n",
        "import torch\nidx = torch.randint(0, 10, (4,))\nidx.requires_grad_()  # <--\n",
        "import torch\ndef f(xs):\n    return torch.arange(len(xs), requires_grad=True)  # <--\n",
        "import torch\nx = torch.randn(5, 3)\nt = torch.arange(1, x.size(0), requires_grad=True)  # <--\n",
        # an int64 range unless `n` is a float
        "import torch\ndef f(n):\n    return torch.arange(n, requires_grad=True)  # <--\n",
        "import torch\ndef positions(seq_len):\n    pos = torch.arange(0, seq_len, requires_grad=True)  # <--\n"
        "    return pos\n",
        "import torch\nimport torch.nn as nn\ndef positions(n):\n    return nn.Parameter(torch.arange(n))  # <--\n",
        "import torch\nidx = torch.tensor([1, 2, 3])\nidx.requires_grad = True  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Integer or boolean factories with ``requires_grad=True``, and
        ``nn.Parameter``/``.requires_grad_()`` of such a tensor."""
        name = torch_name(ctx, node.func)
        if name in FACTORIES:
            rg = keyword(node, "requires_grad")
            if rg is None or not is_name(rg.value, "True"):
                return
            kind = _factory_dtype_kind(ctx, node, name)
            if kind is not None:
                self._report(node, short(ctx, node, 50), kind, ctx)
            elif name == "arange" and keyword(node, "dtype") is None:
                unknown = _unknown_bounds(ctx, node)
                if unknown:
                    floats = " or ".join(f"`{u}`" for u in unknown)
                    self._report(node, short(ctx, node, 50), "int", ctx, f"{floats} is a float")
            return
        if name in PARAMETER_CLASSES:
            args = positional(node)
            rg = keyword(node, "requires_grad")
            if not args or (rg is not None and not is_name(rg.value, "True")):
                return
            fact = tensor_fact(ctx, args[0])
            if fact is not None and fact.dtype_kind in ("int", "bool"):
                self._report(node, short(ctx, args[0]), fact.dtype_kind, ctx)
            elif type(args[0]) is cst.Call and torch_name(ctx, args[0].func) == "arange" \
                    and keyword(args[0], "dtype") is None:
                unknown = _unknown_bounds(ctx, args[0])
                if unknown:
                    floats = " or ".join(f"`{u}`" for u in unknown)
                    self._report(node, short(ctx, args[0]), "int", ctx, f"{floats} is a float")
            return
        call = method_call(node)
        if name is None and call is not None and call[1] == "requires_grad_":
            args = positional(node)
            if args and not is_name(args[0], "True"):
                return
            fact = tensor_fact(ctx, call[0])
            if fact is not None and fact.dtype_kind in ("int", "bool"):
                self._report(node, short(ctx, call[0]), fact.dtype_kind, ctx)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """``t.requires_grad = True`` on a tensor known to be integer or boolean."""
        if not is_name(node.value, "True"):
            return
        for target in node.targets:
            attr = target.target
            if type(attr) is cst.Attribute and attr.attr.value == "requires_grad":
                fact = tensor_fact(ctx, attr.value)
                if fact is not None and fact.dtype_kind in ("int", "bool"):
                    self._report(node, short(ctx, attr.value), fact.dtype_kind, ctx)

    def _report(self, node: cst.CSTNode, what: str, kind: str, ctx, condition: Optional[str] = None) -> None:
        words = "an integer" if kind == "int" else "a boolean"
        unless = f" unless {condition}" if condition is not None else ""
        ctx.report(
            node,
            f"`{what}` is {words} tensor{' (arange of ints is int64)' if condition else ''}, and only "
            f"floating point and complex tensors can require gradients: torch raises "
            f"RuntimeError{unless}; use a float dtype (`1.0` literals or `dtype=torch.float32`)",
            condition=condition,
        )
