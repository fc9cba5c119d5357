"""Everyday-pitfall rules (SC6xx): Python protocols on tensors, `.item()`, `list(t)`, inverses."""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from shapecheck.semantic.facts import CPU, TENSOR
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.scopes import scope_of
from shapecheck.rules.tensor_helpers import (
    method_call,
    multi_element,
    positional,
    short,
    tensor_fact,
    torch_name,
    torch_root,
)


def _numel_words(fact) -> str:
    """``"6 elements"`` when the count is known, else ``"more than one element"``."""
    n = fact.shape.numel() if fact.shape is not None else None
    if n is not None and n.bit_length() <= 64:
        return f"{n} elements"
    return "more than one element (or none)"


def _truth_tested(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The sub-expressions whose truth value Python computes when it tests ``expr``."""
    if isinstance(expr, cst.BooleanOperation):
        yield from _truth_tested(expr.left)
        yield from _truth_tested(expr.right)
    elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        yield from _truth_tested(expr.expression)
    else:
        yield expr


@register
class PythonBoolOnTensor(Rule):
    code = "SC601"
    name = "python-bool-on-tensor"
    severity = "error"
    summary = "`and`/`or`/`not`/`if` on a tensor with more than one element"
    doc = """\
## What it does
Flags a tensor known to hold more than one element used where Python needs a single truth
value: an `if`, `while` or `assert` test, a conditional expression, the operand of `not`, or
the left operand of `and`/`or`.

## Why is this bad?
Python calls `bool()` on the tensor, and `bool()` of a tensor with several elements raises
`RuntimeError: Boolean value of Tensor with more than one value is ambiguous`. `and`/`or` are
not elementwise: even when they do not raise, they pick one whole operand.

## Example
```python
mask_a = x > 0
mask_b = x < 1
both = mask_a and mask_b      # RuntimeError
if x > 0:                     # RuntimeError for more than one element
    ...
```

## Use instead
```python
both = mask_a & mask_b        # elementwise: & | ~
if (x > 0).all():             # or .any(): say which one you mean
    ...
```
"""
    valid = (
        "import torch\nx = torch.randn(2, 3)\nboth = (x > 0) & (x < 1)\n",
        "import torch\nx = torch.randn(2, 3)\nif (x > 0).all():\n    print('positive')\n",
        "import torch\nx = torch.randn(2, 3)\nif x.sum() > 0:\n    print('positive')\n",
        "import torch\nx = torch.tensor([1.0])\nif x > 0:\n    print('positive')\n",
        "import torch\nx = torch.randn(2, 3)\ny = x if x is not None else None\n",
        "import torch\ndef f(x):\n    if x:\n        return 1\n",
        "import torch\nx = torch.randn(2, 3)\nmask = torch.randn(2, 3) > 0\nkeep = mask is None or x\n",
    )
    invalid = (
        "import torch\nx = torch.randn(2, 3)\nmask_a = x > 0\nmask_b = x < 1\nboth = mask_a and mask_b  # <--\n",
        "import torch\nx = torch.randn(4)\nif x > 0:  # <--\n    print('positive')\n",
        "import torch\nx = torch.zeros(3)\nwhile not x:  # <--\n    break\n",
        "import torch\nx = torch.ones(2, 2)\nassert x == 1  # <--\n",
    )

    def __init__(self) -> None:
        self._seen: set[int] = set()

    def _check(self, expr: cst.BaseExpression, ctx, where: str) -> None:
        if id(expr) in self._seen:
            return
        fact = tensor_fact(ctx, expr)  # None for Python bools (`torch.equal(a, b)`, `x.is_contiguous()`)
        if fact is None:
            return
        described = multi_element(fact)
        if described is None:
            return
        self._seen.add(id(expr))
        ctx.report(
            expr,
            f"`{short(ctx, expr)}` is a tensor of {described}; {where} calls bool() on it, "
            f"which raises RuntimeError (Boolean value of Tensor with more than one value is "
            f"ambiguous); use `&`/`|`/`~` for elementwise logic, or `.any()`/`.all()`",
        )

    def visit_BooleanOperation(self, node: cst.BooleanOperation, ctx) -> None:
        word = "`and`" if isinstance(node.operator, cst.And) else "`or`"
        for expr in _truth_tested(node.left):
            self._check(expr, ctx, word)

    def visit_UnaryOperation(self, node: cst.UnaryOperation, ctx) -> None:
        if isinstance(node.operator, cst.Not):
            for expr in _truth_tested(node.expression):
                self._check(expr, ctx, "`not`")

    def _test(self, test: cst.BaseExpression, ctx, where: str) -> None:
        for expr in _truth_tested(test):
            self._check(expr, ctx, where)

    def visit_If(self, node: cst.If, ctx) -> None:
        self._test(node.test, ctx, "`if`")

    def visit_While(self, node: cst.While, ctx) -> None:
        self._test(node.test, ctx, "`while`")

    def visit_Assert(self, node: cst.Assert, ctx) -> None:
        self._test(node.test, ctx, "`assert`")

    def visit_IfExp(self, node: cst.IfExp, ctx) -> None:
        self._test(node.test, ctx, "the conditional expression")


@register
class ItemOnNonScalar(Rule):
    code = "SC602"
    name = "item-on-non-scalar"
    severity = "error"
    summary = "`.item()`, `float()` or `int()` on a tensor with more than one element"
    doc = """\
## What it does
Flags `t.item()`, `float(t)` and `int(t)` where `t` is a tensor known to hold more than one
element.

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
        "import torch\nx = torch.randn(2, 3)\nv = x.sum().item()\n",
        "import torch\nx = torch.randn(2, 3)\nv = x[0, 0].item()\n",
        "import torch\nx = torch.tensor([3.14])\nv = x.item()\n",
        "import torch\nx = torch.randn(2, 3)\nvalues = x.tolist()\n",
        "import torch\nx = torch.randn(1, 1)\nv = float(x)\n",
        "import numpy as np\na = np.zeros(3)\nv = a.item(0)\n",
    )
    invalid = (
        "import torch\nx = torch.randn(2, 3)\nv = x.item()  # <--\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nv = t.item()  # <--\n",
        "import torch\nx = torch.ones(4)\nv = float(x)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        target: Optional[cst.BaseExpression] = None
        call = method_call(node)
        if call is not None and call[1] == "item" and not node.args:
            target, how = call[0], "`.item()`"
        elif isinstance(node.func, cst.Name) and node.func.value in ("float", "int"):
            args = positional(node)
            if len(args) == 1 and len(node.args) == 1:
                target, how = args[0], f"`{node.func.value}()`"
        if target is None:
            return
        fact = tensor_fact(ctx, target)
        if fact is None:
            return
        described = multi_element(fact)
        if described is None:
            return
        ctx.report(
            node,
            f"{how} on `{short(ctx, target)}`, a tensor of {described}, raises RuntimeError "
            f"(a Tensor with {_numel_words(fact)} cannot be converted to Scalar); index one "
            f"element, reduce first, or use `.tolist()`",
        )


@register
class ItemInLoop(Rule):
    code = "SC603"
    name = "item-in-loop"
    severity = "warning"
    summary = "`.item()` inside a loop forces a GPU synchronisation on every iteration"
    default_enabled = False
    doc = """\
## What it does
Flags `.item()` called inside a `for` or `while` loop on a tensor that is not known to live
on the CPU. Opt-in: a performance hint, not a bug.

## Why is this bad?
`.item()` copies the value to the host. For a CUDA tensor it waits until every queued kernel has
finished, so the GPU idles while Python catches up, once per iteration. A training loop that
logs `loss.item()` every step can run noticeably slower than one that accumulates on the device.

## Example
```python
total = 0.0
for x, y in loader:
    loss = loss_fn(model(x), y)
    total += loss.item()      # host sync every step
```

## Use instead
```python
total = torch.zeros((), device=device)
for x, y in loader:
    loss = loss_fn(model(x), y)
    total += loss.detach()    # stays on the device
print(total.item())           # one sync at the end
```
"""
    valid = (
        "import torch\nx = torch.randn(3)\nprint(x.sum().item())\n",
        "import torch\nfor i in range(3):\n    x = torch.randn(3)\n    print(x.sum().item())\n",
        "import torch\nlosses = []\nfor i in range(3):\n    losses.append(torch.randn(()).cuda())\nprint(torch.stack(losses).mean().item())\n",
    )
    invalid = (
        "import torch\ndef train(model, loader, loss_fn):\n    total = 0.0\n    for x, y in loader:\n"
        "        loss = loss_fn(model(x), y)\n        total += loss.item()  # <--\n    return total\n",
        "import torch\nx = torch.randn(3).cuda()\nwhile True:\n    if x.sum().item() > 0:  # <--\n        break\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        call = method_call(node)
        if call is None or call[1] != "item" or node.args:
            return
        if scope_of(ctx, node).loop is None:
            return
        fact = ctx.fact(call[0])
        if fact.kind is not None and fact.kind != TENSOR:
            return
        if fact.device == CPU:
            return
        ctx.report(
            node,
            f"`{short(ctx, node)}` inside a loop copies the value to the host on every "
            f"iteration; on a CUDA tensor each call waits for the GPU to finish; keep the "
            f"value on the device and call `.item()` once after the loop",
        )


@register
class ListOfTensor(Rule):
    code = "SC604"
    needs = ("list",)
    name = "list-of-tensor"
    severity = "warning"
    summary = "`list(t)` on a 1-D tensor gives 0-dim tensors, not numbers"
    doc = """\
## What it does
Flags `list(t)` where `t` is a tensor known to be 1-D.

## Why is this bad?
`list()` iterates over the first dim, so a 1-D tensor becomes a list of 0-dim tensors
(`[tensor(1), tensor(2)]`), not of Python numbers. Each element still carries a device, a dtype
and an autograd history; comparing, hashing, printing or JSON-encoding them behaves differently
from numbers, and building the list is slow.

## Example
```python
t = torch.tensor([1, 2, 3])
ids = list(t)                 # [tensor(1), tensor(2), tensor(3)]
```

## Use instead
```python
ids = t.tolist()              # [1, 2, 3]
rows = t.unbind(0)            # when you do want tensors
```
"""
    valid = (
        "import torch\nt = torch.tensor([1, 2, 3])\nids = t.tolist()\n",
        "import torch\nt = torch.randn(2, 3)\nrows = list(t)\n",
        "import torch\nshape = list(torch.randn(2, 3).shape)\n",
        "import torch\nt = torch.tensor([1, 2, 3])\nparts = list(t.split(1))\n",
    )
    invalid = (
        "import torch\nt = torch.tensor([1, 2, 3])\nids = list(t)  # <--\n",
        "import torch\nids = list(torch.arange(5))  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if not (isinstance(node.func, cst.Name) and node.func.value == "list"):
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


_INVERSES = {"inverse", "linalg.inv"}
_MATMULS = {"matmul", "mm"}


def _inverse_operand(ctx, expr: cst.BaseExpression) -> Optional[tuple[cst.BaseExpression, bool]]:
    """For ``torch.inverse(A)``/``torch.linalg.inv(A)``/``A.inverse()``: ``(A, via_function)``."""
    if not isinstance(expr, cst.Call):
        return None
    name = torch_name(ctx, expr.func)
    args = positional(expr)
    if name in _INVERSES and len(args) == 1 and len(expr.args) == 1:
        return args[0], True
    call = method_call(expr)
    if call is not None and call[1] == "inverse" and not expr.args and name is None:
        receiver_fact = ctx.fact(call[0])
        if receiver_fact.kind == TENSOR:
            return call[0], False
    return None


@register
class InverseThenMatmul(Rule):
    code = "SC605"
    needs = ("inv",)
    name = "inverse-then-matmul"
    severity = "warning"
    summary = "`torch.inverse(A) @ b`: solve the system instead of forming the inverse"
    fixable = True
    doc = """\
## What it does
Flags a matrix product whose left operand is an explicit inverse: `torch.inverse(A) @ b`,
`torch.linalg.inv(A) @ b`, `A.inverse() @ b`, and the same with `torch.matmul`/`torch.mm`.

## Why is this bad?
Forming the inverse costs more than solving the system and loses accuracy when `A` is
ill-conditioned; the product then amplifies the error. `torch.linalg.solve(A, b)` factorises `A`
once and solves directly, faster and more accurately, and on a batch too.

## Example
```python
x = torch.inverse(A) @ b
```

## Use instead
```python
x = torch.linalg.solve(A, b)
```
The fix rewrites the product when the shapes are known and mean the same thing for both
(`A` a matrix and `b` a vector or matrix, or a batch of matrices of the same rank). It is
unsafe (`--unsafe-fixes`): `solve` rounds differently, so the values and their gradients change
in the last digits, which matters to a program that prints or compares them exactly.
"""
    valid = (
        "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.linalg.solve(A, b)\n",
        "import torch\nA = torch.randn(3, 3)\nA_inv = torch.inverse(A)\n",
        "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3, 3)\ny = b @ torch.inverse(A)\n",
        "import numpy as np\nA = np.eye(3)\nb = np.ones(3)\nx = np.linalg.inv(A) @ b\n",
    )
    invalid = (
        Example(
            "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.inverse(A) @ b  # <--\n",
            unsafe_fixed="import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.linalg.solve(A, b)  # <--\n",
        ),
        Example(
            "import torch\nA = torch.randn(4, 4)\nB = torch.randn(4, 2)\nX = torch.matmul(torch.linalg.inv(A), B)  # <--\n",
            unsafe_fixed="import torch\nA = torch.randn(4, 4)\nB = torch.randn(4, 2)\nX = torch.linalg.solve(A, B)  # <--\n",
        ),
        Example(
            "import torch\nA = torch.randn(2, 3, 3)\nb = torch.randn(2, 3, 1)\nx = A.inverse() @ b  # <--\n",
            unsafe_fixed="import torch\nA = torch.randn(2, 3, 3)\nb = torch.randn(2, 3, 1)\nx = torch.linalg.solve(A, b)  # <--\n",
        ),
    )

    def _report(self, node, inverse, b, ctx) -> None:
        a, via_function = inverse
        fix = None
        root = torch_root(ctx)
        if root is not None and self._same_meaning(ctx.fact(a), ctx.fact(b)) and self._module_name(ctx, node, root):
            replacement = cst.parse_expression(f"{root}.linalg.solve(a, b)")
            replacement = replacement.with_changes(
                args=[cst.Arg(a), cst.Arg(b)],
            )
            # Unsafe: `solve` rounds differently from `inverse` then `@`, so the values (and
            # their gradients) change in the last digits, which a program may print or compare.
            fix = Fix(node, replacement, safe=False)
        ctx.report(
            node,
            f"`{short(ctx, node, 50)}` forms the explicit inverse of `{short(ctx, a)}` and then "
            f"multiplies: slower and less accurate than `torch.linalg.solve("
            f"{short(ctx, a)}, {short(ctx, b)})`, which solves the system directly",
            fix=fix,
        )

    @staticmethod
    def _module_name(ctx, node: cst.CSTNode, root: str) -> bool:
        """True when ``root`` (the module's ``import torch`` name) means the same at ``node``:
        not a parameter or local of the function (``def f(torch): ...``)."""
        from shapecheck.rules import fix_safety

        place = fix_safety.place_of(ctx, node)
        if place is None:
            return False
        return fix_safety.name_scope(place, root) == (
            fix_safety.LOCAL if place.scope is None else fix_safety.FREE
        )

    @staticmethod
    def _same_meaning(a, b) -> bool:
        """True when ``inv(A) @ b`` and ``solve(A, b)`` agree for these shapes."""
        if a.kind != TENSOR or b.kind != TENSOR or a.shape is None or b.shape is None:
            return False
        ra, rb = a.shape.rank, b.shape.rank
        if ra is None or rb is None:
            return False
        if ra == 2:
            return rb in (1, 2)
        return ra > 2 and rb == ra

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if not isinstance(node.operator, cst.MatrixMultiply):
            return
        inverse = _inverse_operand(ctx, node.left)
        if inverse is not None:
            self._report(node, inverse, node.right, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = torch_name(ctx, node.func)
        args = positional(node)
        if name in _MATMULS and len(args) == 2 and len(node.args) == 2:
            inverse = _inverse_operand(ctx, args[0])
            if inverse is not None:
                self._report(node, inverse, args[1], ctx)
            return
        call = method_call(node)
        if call is not None and call[1] in _MATMULS and len(args) == 1 and len(node.args) == 1 and name is None:
            inverse = _inverse_operand(ctx, call[0])
            if inverse is not None:
                self._report(node, inverse, args[0], ctx)
