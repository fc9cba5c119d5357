"""Layout rules (SC1xx): views, strides and contiguity."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.shapes import format_shape

_VIEW_METHODS = {"view", "reshape"}


def _view_call(node: cst.Call) -> Optional[str]:
    """``view``/``reshape`` when ``node`` is such a method call."""
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value in _VIEW_METHODS and node.args:
        return func.attr.value
    return None


def _call_text(ctx, node: cst.Call, method: str, target) -> str:
    """``.view(2, 3)`` with the sizes the linter computed, or the arguments as written when
    some size is unknown (``.view(batch, seq, -1)``)."""
    if all(d is not None for d in target):
        return f".{method}(" + ", ".join(str(d) for d in target) + ")"
    return f".{method}(" + ", ".join(ctx.source(a.value) for a in node.args) + ")"


@register
class ViewOnNonContiguous(Rule):
    """SC101: `.view()` that must fail because a transpose, permute or slice changed the strides."""
    code = "SC101"
    name = "view-on-non-contiguous"
    severity = "error"
    summary = "`.view()` that must fail because a transpose, permute or slice changed the strides"
    fixable = True
    doc = """\
## What it does
Flags `.view(...)` on a tensor whose memory layout makes that view impossible: after
`transpose`, `permute`, `.T`, `.t()`, `.mT`, `expand` or a column slice, through names,
elementwise ops, `.clone()` and dtype casts (which all keep the layout). With known sizes the
strides are simulated exactly; with unknown sizes only a view that must merge dims a
transpose/permute/expand moved apart is flagged (the classic `x.transpose(1, 2).view(b, t, -1)`
of attention code). A view that only splits dims, or keeps the moved dims apart, is legal and is
not flagged.

## Why is this bad?
`view` never copies: it reinterprets the same storage with new sizes, which is possible only when
each group of merged dims is laid out back to back (`stride[i] == stride[i+1] * size[i+1]`). After
a transpose that no longer holds, and `view` raises
`RuntimeError: view size is not compatible with input tensor's size and stride`.

## Example
```python
x = torch.rand(32, 32, 3).permute(2, 0, 1)
x.view(3, -1)      # fine: splits nothing, merges dims 1 and 2 which are still adjacent
x.view(-1)         # RuntimeError
```

## Use instead
```python
x.reshape(-1)      # copies when it has to
x.contiguous().view(-1)
```
The fix rewrites `.view(` to `.reshape(`, which returns the same values and copies only when
a view is impossible.
"""
    valid = (
        "import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.reshape(6)\n",
        "import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.contiguous().view(6)\n",
        "import torch\nx = torch.randn(4, 5)\ny = x.view(5, 4).transpose(0, 1)\n",
        "import torch\nx = torch.randn(2, 3, 4)\ny = x.permute(2, 0, 1).reshape(4, -1)\n",
        "import torch\nx = torch.rand(32, 32, 3).permute(2, 0, 1)\ny = x.view(3, -1)\n",
        "import torch\nx = torch.randn(6, 4).t()\ny = x.view(2, 2, 6)\n",
        "import numpy as np\na = np.zeros((2, 3))\nb = a.T.view(np.float64)\n",
        "def f(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n    return y.reshape(b, t, -1)\n",
        "def f(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n    return y.view(b, h, t, d, 1)\n",
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
        Example(
            "import torch\nx = torch.rand(4, 3).t()\ny = (x * 2).clone()\nz = y.view(-1)  # <--\n",
            fixed="import torch\nx = torch.rand(4, 3).t()\ny = (x * 2).clone()\nz = y.reshape(-1)  # <--\n",
        ),
        "def attend(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n"
        "    return y.view(b, t, -1)  # <--\n",
        "import torch\nx = torch.rand(4, 6)\ny = x[:, :3].view(12)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``x.view(...)`` that the stride rule proves impossible."""
        if _view_call(node) != "view":
            return
        verdict = ctx.view_verdict(node)
        if verdict is None:
            return
        recv, target, possible = verdict
        if possible is not False:
            return
        func = node.func
        subject = ctx.source(func.value)
        if len(subject) > 40:
            subject = subject[:37] + "..."
        why = f"after `{recv.moved_by}`" if recv.moved_by else "in memory"
        detail = ""
        if recv.shape is not None and recv.strides is not None and recv.shape.is_fully_known:
            detail = f" (shape {format_shape(recv.shape)}, strides {tuple(recv.strides)})"
        fix = Fix(func, func.with_changes(attr=cst.Name("reshape")))
        view = _call_text(ctx, node, "view", target)
        ctx.report(
            node,
            f"`{subject}` is not contiguous {why}{detail}; `{view}` would "
            f"merge dims whose strides do not line up and raises at run time; use `.reshape()` "
            f"or call `.contiguous()` first",
            fix=fix,
        )


@register
class ViewMultipleInferred(Rule):
    """SC102: `view`/`reshape` with more than one `-1`."""
    code = "SC102"
    name = "view-multiple-inferred"
    severity = "error"
    summary = "`view`/`reshape` with more than one `-1`"
    doc = """\
## What it does
Flags `view(...)` and `reshape(...)` calls that pass `-1` for more than one dimension.

## Why is this bad?
`-1` asks torch to infer that one size from the element count; with two unknowns the answer is
not unique, and torch raises `RuntimeError: only one dimension can be inferred`.

## Example
```python
x = torch.arange(12)
y = x.view(-1, -1)     # RuntimeError
```

## Use instead
```python
y = x.view(3, -1)      # give every size but one
```
"""
    valid = (
        "import torch\nx = torch.arange(12)\ny = x.view(3, -1)\n",
        "import torch\nx = torch.arange(12)\ny = x.reshape(-1)\n",
        "def f(x, n):\n    return x.view(n, -1)\n",
    )
    invalid = (
        "import torch\nx = torch.arange(12)\ny = x.view(-1, -1)  # <--\n",
        "import torch\nx = torch.arange(12)\ny = x.reshape((-1, 2, -1))  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``view``/``reshape`` with two or more ``-1``."""
        method = _view_call(node)
        if method is None:
            return
        recv = ctx.fact(node.func.value)
        if recv.kind not in ("tensor", None):
            return
        target = ctx.view_target(node)
        if target is None:
            return
        count = sum(1 for d in target if d == -1)
        if count > 1:
            ctx.report(
                node,
                f"`{_call_text(ctx, node, method, target)}` passes -1 for {count} dims; torch can infer "
                f"only one size and raises `only one dimension can be inferred`",
            )


@register
class ViewSizeMismatch(Rule):
    """SC103: `view`/`reshape` to a shape with a different number of elements."""
    code = "SC103"
    name = "view-size-mismatch"
    severity = "error"
    summary = "`view`/`reshape` to a shape with a different number of elements"
    doc = """\
## What it does
Flags `view(...)` and `reshape(...)` whose target sizes cannot hold the tensor's elements, when
both the tensor's shape and the target sizes are known.

## Why is this bad?
A view or reshape keeps every element exactly once; if the target's element count differs (or no
value of `-1` makes it match), torch raises `RuntimeError: shape '[4, 2]' is invalid for input
of size 6`.

## Example
```python
x = torch.arange(6)
y = x.view(4, 2)       # 8 elements asked of a tensor of 6
```

## Use instead
```python
y = x.view(3, 2)
```
"""
    valid = (
        "import torch\nx = torch.arange(6)\ny = x.view(3, 2)\n",
        "import torch\nx = torch.arange(6)\ny = x.view(-1, 3)\n",
        "import torch\nx = torch.zeros(2, 3, 4)\ny = x.reshape(6, 4)\n",
        "def f(x, n):\n    return x.view(n, 4)\n",
    )
    invalid = (
        "import torch\nx = torch.arange(6)\ny = x.view(4, 2)  # <--\n",
        "import torch\nx = torch.zeros(2, 5)\ny = x.reshape(3, -1)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``view``/``reshape`` whose element count cannot match."""
        method = _view_call(node)
        if method is None:
            return
        recv = ctx.fact(node.func.value)
        if recv.kind not in ("tensor", None) or recv.shape is None:
            return
        numel = recv.shape.numel()
        if numel is None:
            return
        target = ctx.view_target(node)
        if target is None or any(not isinstance(d, int) for d in target) or target.count(-1) > 1:
            return
        if any(d < -1 for d in target):
            return
        asked = 1
        for d in target:
            if d != -1:
                asked *= d
        if -1 in target:
            bad = asked == 0 or numel % asked != 0
            want = f"a multiple of {asked}" if asked else "a size that -1 can fill"
        else:
            bad = asked != numel
            want = f"{asked} elements"
        if not bad:
            return
        subject = ctx.source(node.func.value)
        if len(subject) > 40:
            subject = subject[:37] + "..."
        ctx.report(
            node,
            f"`{subject}` has shape {format_shape(recv.shape)} ({numel} elements) but "
            f"`{_call_text(ctx, node, method, target)}` needs {want}; torch raises `shape is invalid "
            f"for input of size {numel}`",
        )


__all__ = ["ViewOnNonContiguous", "ViewMultipleInferred", "ViewSizeMismatch"]
