"""SC103 view-size-mismatch: `view`/`reshape` to a shape that cannot hold the elements, or a negative
size in a view or a factory."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.layout.view_calls import call_text, clipped_source, negative_view_size, view_call, view_request
from shapecheck.semantic.shape_ops import MAX_SIZE
from shapecheck.semantic.torch_api import SIZED_FACTORIES, SIZED_NEW_TENSOR_METHODS
from shapecheck.shapes import dims_product, format_dim, format_shape
from shapecheck.strides import generic_count_exception

#: the factories and ``new_*`` methods whose sizes ``ctx.factory_sizes`` reads
_SIZED_CALLS = SIZED_FACTORIES | SIZED_NEW_TENSOR_METHODS


def _torch_list(dims) -> Optional[str]:
    """``[2, -3]`` as torch prints a size list, or ``None`` when a size is not a known int."""
    if not all(isinstance(d, int) for d in dims):
        return None
    return "[" + ", ".join(str(d) for d in dims) + "]"


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
both the tensor's shape and the target sizes are known, or are products of the same sizes the
code computed (`b, c, h, w = x.shape` then `x.view(b, c * h)`: it raises unless `w` is 1);
and, whatever the tensor, a size torch rejects outright: a size below `-1` in `view`/`reshape`
(`-1` alone means "infer this one"), or a negative size given to a factory (`torch.zeros(-1)`,
`torch.empty(2, -3)`, `torch.randn((-1,))`, `x.new_zeros(-2)`, `torch.full((-1,), 0)`,
`torch.eye(-1)`, `torch.linspace(0, 1, -1)`). A `reshape` with a size below `-1` is flagged only on
a known tensor: NumPy reads any negative size as `-1`.

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
        "def f(x, g):\n    b, c, h, w = x.shape\n    return x.view(b, g, c // g, h, w), x.view(b, c * h * w)\n",
        "def f(x, n):\n    b, c, h, w = x.shape\n    return x.view(b, n), x.view(b, c, -1), x.reshape(b * c, h * w)\n",
        # the test says `kernel` is 1: the one size for which the view holds
        "def fast_conv(conv, x):\n    chout, chin, kernel = conv.weight.shape\n    if kernel == 1:\n"
        "        return conv.weight.view(chout, chin) @ x\n    return conv(x)\n",
        # `self.norm` is the class's own callable, not `Tensor.norm` (whose result has shape ())
        "class Prep:\n    def __init__(self, norm):\n        self.norm = norm\n\n"
        "    def __call__(self, x):\n        return self.norm(x).view(-1, 3, 112, 112)\n",
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
        "def f(x):\n    b, c, h, w = x.shape\n    return x.view(b, c * h)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Factories with a negative size; ``view``/``reshape`` with a size torch rejects or an
        element count that cannot match."""
        if view_call(node) is None:
            self._check_factory(node, ctx)
            return
        request = view_request(node, ctx)
        if request is None or type(node.func) is not cst.Attribute:
            return
        method, recv, target = request
        bad = negative_view_size(target)
        if bad is not None and (method == "view" or recv.kind == "tensor"):
            # NumPy's reshape takes any negative size for "infer this one": only a tensor's raises
            listed = _torch_list(target)
            where = f" of shape {listed}" if listed else ""
            ctx.report(
                node,
                f"`{call_text(ctx, node, method, target)}` asks for size {target[bad]} at index {bad}; "
                f"only a single -1 (infer this size) may be negative, and torch raises `invalid shape "
                f"dimension {target[bad]} at index {bad}{where}`",
            )
            return
        if bad is None:
            self._check_count(node, ctx, method, recv, target)

    def _check_count(self, node: cst.Call, ctx, method: str, recv, target) -> None:
        """The element count of ``recv`` against the sizes of a valid-looking target."""
        if recv.shape is None or type(node.func) is not cst.Attribute:
            return
        numel = recv.shape.numel()
        if numel is None:
            self._check_generic_count(node, ctx, method, recv, target)
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
            f"`{clipped_source(ctx, node.func.value)}` has shape {format_shape(recv.shape)} ({numel} elements) "
            f"but `{call_text(ctx, node, method, target)}` needs {want}; torch raises `{raised}`",
        )

    def _check_generic_count(self, node: cst.Call, ctx, method: str, recv, target) -> None:
        """The element counts as products of the sizes the code computed (``b, c, h, w =
        x.shape`` then ``x.view(b, c * h)``): they differ unless some sizes are 1."""
        if recv.shape.rank is None or type(node.func) is not cst.Attribute:
            return
        extra = generic_count_exception(recv.shape.dims, target)
        if not extra:
            return
        names = [f"`{a}`" for a in extra]
        condition = (names[0] + " is 1") if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]} are 1"
        numel = format_dim(dims_product(recv.shape.dims))
        listed = "[" + ", ".join(format_dim(d) for d in target) + "]"
        ctx.report(
            node,
            f"`{clipped_source(ctx, node.func.value)}` has shape {format_shape(recv.shape)} ({numel} elements) "
            f"but `{call_text(ctx, node, method, target)}` holds {format_dim(dims_product(target))}, "
            f"leaving out {' * '.join(names)}; torch raises `shape '{listed}' is invalid for input of size "
            f"{numel}` unless {condition}",
            condition=condition,
        )

    def _check_factory(self, node: cst.Call, ctx) -> None:
        """``torch.zeros(-1)``, ``x.new_zeros(2, -3)``: a negative size in a factory."""
        func = node.func
        last = func.attr.value if type(func) is cst.Attribute else getattr(func, "value", None)
        if last not in _SIZED_CALLS:
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
            f"`{clipped_source(ctx, node)}` asks for {what}; a tensor size is never negative, "
            f"and torch raises `{raised}`",
        )
