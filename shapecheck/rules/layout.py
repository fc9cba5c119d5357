"""Layout rules (SC1xx): views, strides and contiguity."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.shape_ops import MAX_SIZE
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
        Example(
            "def attend(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n"
            "    return y.view(b, t, -1)  # <--\n",
            fixed="def attend(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n"
            "    return y.reshape(b, t, -1)  # <--\n",
        ),
        Example(
            "import torch\nx = torch.rand(4, 6)\ny = x[:, :3].view(12)  # <--\n",
            fixed="import torch\nx = torch.rand(4, 6)\ny = x[:, :3].reshape(12)  # <--\n",
        ),
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
        torch_stops_first = (method == "view" or recv.kind == "tensor") and \
            _negative_view_size(target) is not None
        if count > 1 and not torch_stops_first:  # else SC103 reports the size torch rejects first
            ctx.report(
                node,
                f"`{_call_text(ctx, node, method, target)}` passes -1 for {count} dims; torch can infer "
                f"only one size and raises `only one dimension can be inferred`",
            )


#: the factories whose sizes ``ctx.factory_sizes`` reads
_SIZED_FACTORIES = frozenset({
    "zeros", "ones", "empty", "rand", "randn", "full", "randint", "empty_strided", "randperm", "eye",
    "linspace", "logspace", "new_zeros", "new_ones", "new_empty", "new_full",
})


def _torch_list(dims) -> Optional[str]:
    """``[2, -3]`` as torch prints a size list, or ``None`` when a size is not a known int."""
    if not all(isinstance(d, int) for d in dims):
        return None
    return "[" + ", ".join(str(d) for d in dims) + "]"


def _second_inferred(target) -> int:
    """The index of the second ``-1`` of a view target (its length when there is none)."""
    seen = False
    for i, d in enumerate(target):
        if d == -1:
            if seen:
                return i
            seen = True
    return len(target)


def _negative_view_size(target) -> Optional[int]:
    """The index of the first size torch rejects in a view target (below ``-1``), scanning as
    torch does; ``None`` when there is none or a second ``-1`` comes first (SC102's finding)."""
    end = _second_inferred(target)
    return next((i for i, d in enumerate(target[:end]) if isinstance(d, int) and d < -1), None)


def _factory_error(name: str, sizes) -> Optional[tuple[int, str]]:
    """The index of the first negative size a factory call asks for and the error torch raises
    (its CPU wording), or ``None`` when every size is non-negative or unknown."""
    bad = next((i for i, d in enumerate(sizes) if isinstance(d, int) and d < 0), None)
    if bad is None:
        return None
    d = sizes[bad]
    if name == "eye":
        return bad, f"{'nm'[bad]} must be greater or equal to 0, got {d}"
    if name in ("linspace", "logspace"):
        return bad, "number of steps must be non-negative"
    if name == "zeros":
        return bad, "zeros: Dimension size must be non-negative."
    listed = _torch_list(sizes)
    return bad, f"Trying to create tensor with negative dimension {d}" + (f": {listed}" if listed else "")


def _subject(ctx, node: cst.BaseExpression) -> str:
    text = ctx.source(node)
    return text if len(text) <= 40 else text[:37] + "..."


@register
class ViewSizeMismatch(Rule):
    """SC103: a size torch rejects: a view/reshape that cannot hold the elements, or a negative
    size in a view, a reshape or a factory."""
    code = "SC103"
    name = "view-size-mismatch"
    severity = "error"
    summary = "`view`/`reshape` to a shape that cannot hold the elements, or a negative size in a view or a factory"
    doc = """\
## What it does
Flags `view(...)` and `reshape(...)` whose target sizes cannot hold the tensor's elements, when
both the tensor's shape and the target sizes are known; and, whatever the tensor, a size torch
rejects outright: a size below `-1` in `view`/`reshape` (`-1` alone means "infer this one"), or
a negative size given to a factory (`torch.zeros(-1)`, `torch.empty(2, -3)`, `torch.randn((-1,))`,
`x.new_zeros(-2)`, `torch.full((-1,), 0)`, `torch.eye(-1)`, `torch.linspace(0, 1, -1)`). A
`reshape` with a size below `-1` is flagged only on a known tensor: NumPy reads any negative size
as `-1`.

## Why is this bad?
A view or reshape keeps every element exactly once; if the target's element count differs (or no
value of `-1` makes it match), torch raises `RuntimeError: shape '[4, 2]' is invalid for input
of size 6`; with zero elements a `-1` could be anything, and torch raises `cannot reshape tensor
of 0 elements into shape [-1, 0] because the unspecified dimension size -1 can be any value and
is ambiguous`. A size below `-1` raises `invalid shape dimension -3 at index 0 of shape [-3, -1]`;
a negative size in a factory raises `Trying to create tensor with negative dimension -3: [2, -3]`
(`zeros: Dimension size must be non-negative.` from `torch.zeros` on the CPU). After the finding
the linter treats that size as unknown.

## Example
```python
x = torch.arange(6)
y = x.view(4, 2)       # 8 elements asked of a tensor of 6
z = torch.zeros(n - 4) # with n = 3: a size of -1
```

## Use instead
```python
y = x.view(3, 2)
z = torch.zeros(max(n - 4, 0))
```
"""
    valid = (
        "import torch\nx = torch.arange(6)\ny = x.view(3, 2)\n",
        "import torch\nx = torch.arange(6)\ny = x.view(-1, 3)\n",
        "import torch\nx = torch.zeros(2, 3, 4)\ny = x.reshape(6, 4)\n",
        "def f(x, n):\n    return x.view(n, 4)\n",
        "import torch\nx = torch.zeros(0)\ny = torch.empty(2, 0)\nz = torch.zeros(0, 3).view(-1, 3)\n",
        "def f(x):\n    return x.new_zeros(2) + x.reshape(-1)\n",
        "import torch\ny = torch.randint(-5, 5, (3,))\nz = torch.full((2,), -1.0)\n",
        "import numpy as np\na = np.zeros(3)\nb = a.reshape(-1)\n",
        "def f(a):\n    return a.reshape(-2)  # NumPy reads any negative size as -1\n",
    )
    invalid = (
        "import torch\nx = torch.arange(6)\ny = x.view(4, 2)  # <--\n",
        "import torch\nx = torch.zeros(2, 5)\ny = x.reshape(3, -1)  # <--\n",
        "import torch\nx = torch.zeros(0)\ny = x.view(-1, 0)  # <--\n",
        "import torch\nx = torch.arange(6)\ny = x.view(-3, -1)  # <--\n",
        "def f(x):\n    return x.view(3, -2)  # <--\n",
        "import torch\n\ndef f(x: torch.Tensor):\n    return x.reshape(-2)  # <--\n",
        "import torch\ny = torch.zeros(-1)  # <--\n",
        "import torch\ny = torch.empty(2, -3)  # <--\n",
        "import torch\ny = torch.randn((-1,))  # <--\n",
        "def f(x):\n    return x.new_zeros(-2)  # <--\n",
        "import torch\nn = 3\ny = torch.ones(n - 4, 2)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Factories with a negative size; ``view``/``reshape`` with a size torch rejects or an
        element count that cannot match."""
        method = _view_call(node)
        if method is None:
            self._check_factory(node, ctx)
            return
        recv = ctx.fact(node.func.value)
        if recv.kind not in ("tensor", None):
            return
        target = ctx.view_target(node)
        if target is None:
            return
        bad = _negative_view_size(target)
        if bad is not None and (method == "view" or recv.kind == "tensor"):
            # NumPy's reshape takes any negative size for "infer this one": only a tensor's raises
            listed = _torch_list(target)
            where = f" of shape {listed}" if listed else ""
            ctx.report(
                node,
                f"`{_call_text(ctx, node, method, target)}` asks for size {target[bad]} at index {bad}; "
                f"only a single -1 (infer this size) may be negative, and torch raises `invalid shape "
                f"dimension {target[bad]} at index {bad}{where}`",
            )
            return
        if bad is None:
            self._check_count(node, ctx, method, recv, target)

    def _check_count(self, node: cst.Call, ctx, method: str, recv, target) -> None:
        """The element count of ``recv`` against the sizes of a valid-looking target."""
        if recv.shape is None:
            return
        numel = recv.shape.numel()
        if numel is None:
            return
        if any(not isinstance(d, int) for d in target) or target.count(-1) > 1:
            return
        if any(d < -1 or d > MAX_SIZE for d in target) or numel > MAX_SIZE:
            return  # beyond int64: torch fails another way, and the count may not print
        asked = 1
        for d in target:
            if d != -1:
                asked *= d
        if -1 in target:
            bad = asked == 0 or numel % asked != 0
            want = f"a multiple of {asked}" if asked else (
                "a size that -1 can fill" if numel else "one value for -1, and any value fits")
        else:
            bad = asked != numel
            want = f"{asked} elements"
        if not bad:
            return
        listed = _torch_list(target)
        if -1 in target and asked == 0 and numel == 0:
            raised = (f"cannot reshape tensor of 0 elements into shape {listed} because the unspecified "
                      f"dimension size -1 can be any value and is ambiguous")
        else:
            raised = f"shape '{listed}' is invalid for input of size {numel}"
        ctx.report(
            node,
            f"`{_subject(ctx, node.func.value)}` has shape {format_shape(recv.shape)} ({numel} elements) "
            f"but `{_call_text(ctx, node, method, target)}` needs {want}; torch raises `{raised}`",
        )

    def _check_factory(self, node: cst.Call, ctx) -> None:
        """``torch.zeros(-1)``, ``x.new_zeros(2, -3)``: a negative size in a factory."""
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", None)
        if last not in _SIZED_FACTORIES:
            return  # most calls: no need to resolve the name
        asked = ctx.factory_sizes(node)
        if asked is None:
            return
        name, sizes = asked
        error = _factory_error(name, sizes)
        if error is None:
            return
        bad, raised = error
        d = sizes[bad]
        if name == "eye":
            what = f"a negative size ({'nm'[bad]}={d})"
        elif name in ("linspace", "logspace"):
            what = f"a negative number of steps ({d})"
        else:
            what = f"size {d} at index {bad}"
        ctx.report(
            node,
            f"`{_subject(ctx, node)}` asks for {what}; a tensor size is never negative, "
            f"and torch raises `{raised}`",
        )


__all__ = ["ViewOnNonContiguous", "ViewMultipleInferred", "ViewSizeMismatch"]
