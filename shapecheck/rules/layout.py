"""Layout rules (SC1xx): views, strides and contiguity."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register

#: Methods and attributes that return a view with permuted strides.
_PERMUTING_METHODS = {"transpose", "permute", "t", "swapaxes", "swapdims", "movedim"}
_PERMUTING_ATTRIBUTES = {"T", "mT", "H", "mH"}


def _permuting_source(expr: cst.BaseExpression) -> Optional[str]:
    """The name of the permuting op that produced ``expr`` directly (``transpose``, ``.T``), if any."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in _PERMUTING_ATTRIBUTES:
        return "." + expr.attr.value
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _PERMUTING_METHODS
    ):
        return "." + expr.func.attr.value + "()"
    return None


@register
class ViewOnNonContiguous(Rule):
    code = "SC101"
    name = "view-on-non-contiguous"
    severity = "error"
    summary = "`.view()` on a tensor whose strides a transpose or permute changed"
    fixable = True
    doc = """\
## What it does
Flags `.view(...)` called on a tensor that is not contiguous in memory: the result of
`transpose`, `permute`, `.T`, `.t()`, `.mT` and similar ops, which only swap strides.

## Why is this bad?
`view` never copies: it reinterprets the same storage with new sizes, which is possible only when
each group of merged dims is laid out back to back (`stride[i] == stride[i+1] * size[i+1]`). After
a transpose that no longer holds, and `view` raises
`RuntimeError: view size is not compatible with input tensor's size and stride`.

## Example
```python
x = torch.arange(6).view(2, 3)
y = x.T
y.view(6)          # RuntimeError
```

## Use instead
```python
y.reshape(6)       # copies when it has to
y.contiguous().view(6)
```
The fix rewrites `.view(` to `.reshape(`, which returns the same values and copies only when
a view is impossible.
"""
    valid = (
        "import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.reshape(6)\n",
        "import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.contiguous().view(6)\n",
        "import torch\nx = torch.randn(4, 5)\ny = x.view(5, 4).transpose(0, 1)\n",
        "import torch\nx = torch.randn(2, 3, 4)\ny = x.permute(2, 0, 1).reshape(4, -1)\n",
        "import numpy as np\na = np.zeros((2, 3))\nb = a.T.view(np.float64)\n",
    )
    invalid = (
        Example(
            "import torch\nx = torch.arange(6).view(2, 3)\ny = x.transpose(0, 1).view(-1)  # <--\n",
            fixed="import torch\nx = torch.arange(6).view(2, 3)\ny = x.transpose(0, 1).reshape(-1)  # <--\n",
        ),
        Example(
            "import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.view(6)  # <--\n",
            fixed="import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.reshape(6)  # <--\n",
        ),
        Example(
            "import torch\nx = torch.randn(3, 4)\ny = x.t().view(12)  # <--\n",
            fixed="import torch\nx = torch.randn(3, 4)\ny = x.t().reshape(12)  # <--\n",
        ),
        Example(
            "import torch\nx = torch.randn(2, 3, 4)\ny = x.permute(2, 0, 1).view(-1)  # <--\n",
            fixed="import torch\nx = torch.randn(2, 3, 4)\ny = x.permute(2, 0, 1).reshape(-1)  # <--\n",
        ),
        Example(
            "import torch\nx = torch.randn(5, 2, 3)\ny = x.mT.view(5, 6)  # <--\n",
            fixed="import torch\nx = torch.randn(5, 2, 3)\ny = x.mT.reshape(5, 6)  # <--\n",
        ),
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "view"):
            return
        if not node.args or any(_is_dtype_arg(a) for a in node.args):
            return
        source = _permuting_source(func.value)
        if source is None:
            return
        fix = Fix(func, func.with_changes(attr=cst.Name("reshape")))
        ctx.report(
            node,
            f"`{ctx.source(func.value)}` is not contiguous after `{source}`; "
            f"`.view()` cannot merge its dims and raises at run time; use `.reshape()` "
            f"or call `.contiguous()` first",
            fix=fix,
        )


def _is_dtype_arg(arg: cst.Arg) -> bool:
    """True for ``view(torch.float16)``/``view(dtype=...)``: a dtype view, not a shape view."""
    if arg.keyword is not None:
        return arg.keyword.value == "dtype"
    value = arg.value
    if isinstance(value, cst.Attribute):
        return value.attr.value in {
            "float16", "float32", "float64", "bfloat16", "half", "float", "double",
            "int8", "int16", "int32", "int64", "uint8", "bool", "complex64", "complex128",
            "long", "int", "short",
        }
    return False
