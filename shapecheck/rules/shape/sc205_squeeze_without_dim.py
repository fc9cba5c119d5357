"""SC205 squeeze-without-dim: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""

from __future__ import annotations

import libcst as cst

from shapecheck.rules.autograd.data_uses import registered_buffer
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.calls import dotted_name
from shapecheck.rules.helpers.enclosing import earlier_statements, guarding_tests, statement_path
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.evidence import may_be_numpy
from shapecheck.semantic.facts import TENSOR, Grad
from shapecheck.semantic.syntax import all_params, target_names
from shapecheck.semantic.walk import walk
from shapecheck.shapes import is_generic

#: what reads a tensor's shape: ``x.shape``, ``x.ndim``, ``x.size()``, ``x.dim()``, ``x.numel()``
_SHAPE_READS = frozenset({"shape", "ndim", "size", "dim", "numel", "nelement"})


@register
class SqueezeWithoutDim(Rule):
    """SC205: `squeeze()` without a dim drops every size-1 axis, the batch axis too."""
    code = "SC205"
    name = "squeeze-without-dim"
    severity = "warning"
    summary = "`squeeze()` without a dim drops every size-1 axis, the batch axis too"
    default_enabled = False
    doc = """\
## What it does
Flags `x.squeeze()` and `torch.squeeze(x)` called without a `dim`, unless the tensor's shape is
known and has no size-1 axis. Not flagged: a receiver that may be a NumPy array (`.astype(...)`,
`np.*`, `.numpy()`, `.copy()`, a parameter annotated `np.ndarray`, a name an enclosing
`isinstance(x, np.ndarray)` narrows, a row of such an array in a loop), a squeeze guarded by a
test of the receiver's shape (`if x.numel() == 1:`, `if x.shape[0] == 1:`, after `if x.ndim !=
3: raise ...` or `assert x.dim() == 2`; also for `d[k]`, for a copy such as
`x.detach().clone()`, and through a name bound to the test, `is_conv = x.ndim == 4`), a
parameter or buffer whose size-1 axes are known (a `(C, C, 1, 1)` kernel has no batch axis),
a tensor written out as literal data (`torch.tensor([[0.5]])`), a squeeze whose result is only
reduced to one value (`x.squeeze().item()`, `.any()`, `.sum()`), and two tensors squeezed alike
for one call or one comparison
(`loss_fct(logits.squeeze(), labels.squeeze())`, `a.squeeze().shape == b.squeeze().shape`: a
batch of one leaves both, and they still match). Opt-in: select `SC205` to enable it.

## Why is this bad?
Without a dim, `squeeze` removes every axis of size 1. Code written for a `(batch, 1)` tensor
silently gets a 0-d tensor when the batch has one element, and later shape logic breaks (or,
worse, broadcasts) only on that input.

## Example
```python
logits = model(x)          # (batch, 1)
probs = logits.squeeze()   # (batch,), but () when batch == 1
```

## Use instead
```python
probs = logits.squeeze(-1)
```
"""
    valid = (
        # `.astype` is NumPy's: the squeezed value is an array
        "import numpy as np\ndef load(read, raw):\n    return read(raw).squeeze().astype(np.uint8)\n",
        # a helper of the file that returns an array NumPy made
        "import numpy as np\ndef rotate(batch):\n    out = np.zeros(batch.shape, dtype=np.float32)\n"
        "    for k in range(batch.shape[0]):\n        out[k] = batch[k] @ np.eye(3)\n    return out\n"
        "def augment(pc):\n    aug = rotate(pc[None, ...])\n    return aug.squeeze()\n",
        "import torch\nx = torch.randn(8, 1)\ny = x.squeeze(-1)\n",
        "import torch\nx = torch.randn(8, 3)\ny = x.squeeze()\n",
        "import numpy as np\ndef f(a):\n    return np.squeeze(a)\n",
        # NumPy receivers
        "import numpy as np\ndef f(a):\n    return a.astype(np.float32).squeeze()\n",
        "import numpy as np\ndef f(a):\n    b = np.asarray(a)\n    return b.squeeze()\n",
        "def f(t):\n    arr = t.cpu().numpy()\n    return arr.squeeze()\n",
        "import numpy as np\ndef to_image(x) -> np.ndarray:\n    return np.asarray(x)\n"
        "def to_mask(m):\n    m = to_image(m)\n    return m.squeeze()\n",
        # a guard that proves the shape
        "def f(x):\n    if x.numel() == 1:\n        return x.squeeze()\n    return x\n",
        "def f(x):\n    if x.shape[0] == 1:\n        x = x.squeeze()\n    return x\n",
        "def f(x):\n    if x.ndim != 3:\n        raise ValueError('expected (B, 1, T)')\n    return x.squeeze()\n",
        "import torch\ndef f(x):\n    if not torch.numel(x) == 1:\n        raise ValueError('one value')\n"
        "    return x.squeeze()\n",
        "import torch\ndef as_scalar(x):\n    if isinstance(x, torch.Tensor) and x.dim() != 0:\n"
        "        return x.squeeze()\n    return x\n",
        # squeezed alike for the loss: a batch of one leaves both sides
        "import torch.nn as nn\ndef regression_loss(logits, labels):\n"
        "    return nn.MSELoss()(logits.squeeze(), labels.squeeze())\n",
        # a parameter whose size-1 axes are known: no batch axis to lose
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self, c):\n"
        "        super().__init__()\n        self.gamma = nn.Parameter(torch.ones(c, 1, 1))\n"
        "    def fuse(self, bias):\n        return torch.squeeze(self.gamma) * bias\n",
        # a NumPy array by annotation, by an `isinstance` test, as a row of one, or copied
        "import numpy as np\ndef f(x: np.ndarray):\n    return x.squeeze()\n",
        "import numpy as np\ndef f(x, scale):\n    if scale > 0 and isinstance(x, np.ndarray):\n"
        "        return x.squeeze()\n    return x\n",
        "def f(images):\n    images = (images * 255).round().astype('uint8')\n"
        "    return [image.squeeze() for image in images]\n",
        "def f(depth):\n    return depth.copy().squeeze()\n",
        # the guard tests an entry of a dict, a name bound to a test, or the tensor a copy is made of
        "def f(ckpt, k):\n    if ckpt[k].ndim > 2:\n        ckpt[k] = ckpt[k].squeeze()\n",
        "def f(w):\n    is_conv = len(w.shape) == 4\n    if is_conv:\n        w = w.squeeze()\n    return w\n",
        "def f(d):\n    assert len(d.shape) >= 2\n    return d.detach().clone().squeeze()\n",
        # the shapes of two tensors compared after squeezing both alike
        "def same(a, b):\n    return a.squeeze().shape == b.squeeze().shape\n",
        # literal data, a reduction to one value, a pandas frame
        "import torch\ndef expected(device):\n    inp = torch.tensor([[[0.0, 1.0], [2.0, 3.0]]], device=device)\n"
        "    return inp.squeeze(), torch.tensor([0.5]).squeeze()\n",
        "def predict(model, g):\n    return model(g).squeeze().item()\n",
        "import pandas as pd\ndef ids(path):\n    return pd.read_csv(path, usecols=[0]).squeeze()\n",
    )
    invalid = (
        "def f(logits):\n    return logits.squeeze()  # <--\n",
        # squeezed twice: one finding, at the squeeze that drops the axes
        "def f(mask):\n    return mask.squeeze().squeeze()  # <--\n",
        # compared with a shape that was not squeezed
        "def f(a, b):\n    return a.squeeze().shape == b.shape  # <--\n",
        # a guard on another entry of the dict
        "def f(ckpt, k, j):\n    if ckpt[j].ndim > 2:\n        ckpt[k] = ckpt[k].squeeze()  # <--\n",
        "import torch\nx = torch.randn(8, 1)\ny = torch.squeeze(x)  # <--\n",
        # a guard about another tensor proves nothing about this one
        "def f(x, y):\n    if y.numel() == 1:\n        return x.squeeze()  # <--\n    return x\n",
        "import torch\ndef f(x, y):\n    if torch.numel(y) == 1:\n        return x.squeeze()  # <--\n    return x\n",
        # a helper annotated to return a tensor
        "import torch\ndef scores(x) -> torch.Tensor:\n    return x.sum(-1, keepdim=True)\n"
        "def f(x):\n    s = scores(x)\n    return s.squeeze()  # <--\n",
        # a (B, 1) model output: the batch axis goes too when B is 1
        "import torch.nn as nn\ndef predict(x):\n    head = nn.Linear(8, 1)\n    return head(x).squeeze()  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``x.squeeze()`` and ``torch.squeeze(x)`` without a dim."""
        func = node.func
        qual = ctx.qualname(func)
        if qual == "torch.squeeze":
            if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
                return
            target = node.args[0].value
        elif qual is None and type(func) is cst.Attribute and func.attr.value == "squeeze" and not node.args:
            target = func.value
        else:
            return
        if _bare_squeeze(target, ctx):
            return  # `x.squeeze().squeeze()`: the inner squeeze is the one reported
        f = ctx.fact(target)
        if f.kind not in (TENSOR, None):
            return
        if f.shape is not None and f.shape.rank is not None and all(
                isinstance(d, int) and d != 1 or isinstance(d, str) and not is_generic(d) for d in f.shape.dims):
            return
        if f.kind is None and (self._may_be_numpy(target, ctx) or _numpy_use(ctx)):
            return
        if f.shape is not None and f.shape.rank is not None and 1 in f.shape.dims \
                and (f.grad == Grad.LEAF_REQUIRES_GRAD or registered_buffer(target, ctx)):
            return  # a parameter's (C, C, 1, 1): its size-1 axes are known, it has no batch axis
        if self._shape_checked(target, ctx) or self._squeezed_alike(node, ctx) or _rank_free_use(ctx) \
                or _literal_data(target, ctx):
            return
        ctx.report(node, f"`{short(ctx, node)}` drops every size-1 axis, including a batch of one; "
                         f"pass the dim to squeeze")

    @staticmethod
    def _may_be_numpy(target: cst.BaseExpression, ctx) -> bool:
        """The receiver may be a NumPy array: made by ``numpy``, ``.numpy()``, ``.astype(...)``,
        ``.copy()`` (no tensor method), itself or in an assignment of its name in the function;
        a parameter annotated ``np.ndarray``; a name an enclosing ``isinstance(x, np.ndarray)``
        test narrows; an element of such an array in a loop or comprehension over it."""
        if may_be_numpy(target, ctx.qualname) or _copied(target):
            return True
        dotted = dotted_name(_root(target))
        scope = ctx.function
        if dotted is None or scope is None:
            return False
        if any(p.name.value == dotted and p.annotation is not None and _numpy_type(p.annotation.annotation, ctx)
               for p in all_params(scope.params)):
            return True
        for node in walk(scope.body):
            if type(node) is cst.Assign and any(dotted_name(t.target) == dotted for t in node.targets) \
                    and (may_be_numpy(node.value, ctx.qualname) or _returns_numpy(node.value, ctx)):
                return True
            if isinstance(node, (cst.For, cst.CompFor)) and dotted_name(node.target) == dotted \
                    and type(node.iter) is cst.Name and node.iter.value != dotted \
                    and SqueezeWithoutDim._may_be_numpy(node.iter, ctx):
                return True
        return _narrowed_to_numpy(ctx, dotted)

    @staticmethod
    def _squeezed_alike(node: cst.Call, ctx) -> bool:
        """The squeeze is an argument of a call whose other argument is squeezed the same way
        (``loss_fct(logits.squeeze(), labels.squeeze())``), or its shape is compared with the
        shape of another squeeze (``a.squeeze().shape == b.squeeze().shape``): a batch of one
        leaves both sides, and they still match."""
        ancestors = ctx.ancestors
        parent = ctx.parent
        if len(ancestors) >= 2 and type(parent) is cst.Attribute and parent.attr.value == "shape" \
                and type(ancestors[-2]) in (cst.Comparison, cst.ComparisonTarget):
            comparison = next((a for a in reversed(ancestors) if type(a) is cst.Comparison), None)
            if comparison is not None:
                sides = [comparison.left, *(t.comparator for t in comparison.comparisons)]
                return any(side is not parent and type(side) is cst.Attribute and side.attr.value == "shape"
                           and _bare_squeeze(side.value, ctx) for side in sides)
        if len(ancestors) < 2 or type(parent) is not cst.Arg or type(ancestors[-2]) is not cst.Call:
            return False
        others = [a.value for a in ancestors[-2].args if a is not parent and a.keyword is None]
        return any(_bare_squeeze(v, ctx) for v in others)

    @staticmethod
    def _shape_checked(target: cst.BaseExpression, ctx) -> bool:
        """The code tests the receiver's shape before the squeeze: an ``if``/``while`` around it,
        or an earlier ``assert`` or ``if ...: raise``/``return`` in a block around it (directly,
        or through a name bound to such a test: ``is_conv = x.ndim == 4``); the receiver is
        ``x``, ``x[k]`` or a copy of either (``x.detach().clone()``)."""
        key = _key(_root(target), ctx)
        function = ctx.function
        statement = ctx.statement
        if key is None or function is None or statement is None:
            return False
        path = statement_path(function, statement)
        if path is None:
            return False
        tests = guarding_tests(path)
        for stmt in earlier_statements(path):
            if type(stmt) is cst.If and _exits(stmt):
                tests.append(stmt.test)
            elif type(stmt) is cst.SimpleStatementLine:
                tests.extend(s.test for s in stmt.body if type(s) is cst.Assert)
        tested = [name.value for test in tests for name in (test, *walk(test)) if type(name) is cst.Name]
        for stmt in earlier_statements(path):
            if type(stmt) is cst.SimpleStatementLine:
                for small in stmt.body:
                    if type(small) is cst.Assign and len(small.targets) == 1 \
                            and type(small.targets[0].target) is cst.Name and small.targets[0].target.value in tested:
                        tests.append(small.value)
        return any(_reads_shape_of(test, key, ctx) for test in tests)


def _exits(stmt: cst.If) -> bool:
    """The body of ``stmt`` ends in ``raise``, ``return``, ``continue`` or ``break``."""
    body = stmt.body.body
    last = body[-1] if body else None
    if type(last) is cst.SimpleStatementLine and last.body:
        return type(last.body[-1]) in (cst.Raise, cst.Return, cst.Continue, cst.Break)
    return False


def _reads_shape_of(test: cst.BaseExpression, key: str, ctx) -> bool:
    """``test`` reads the shape of the receiver ``key`` (see :func:`_key`): ``x.shape``,
    ``x.ndim``, ``x.size(...)``, ``x.dim()``, ``x.numel()``, ``len(x)``."""
    for node in (test, *walk(test)):
        if type(node) is cst.Attribute and node.attr.value in _SHAPE_READS and _key(node.value, ctx) == key:
            return True
        if type(node) is cst.Call and node.args and _key(node.args[0].value, ctx) == key and (
                type(node.func) is cst.Name and node.func.value == "len"
                or ctx.qualname(node.func) in _SHAPE_FUNCTIONS):
            return True
    return False


#: torch functions that read the shape of their first argument (``torch.numel(x)``)
_SHAPE_FUNCTIONS = frozenset({"torch.numel"})


def _returns_numpy(value: cst.BaseExpression, ctx) -> bool:
    """``value`` calls a function of the file (by its name) whose return is annotated as a NumPy
    array (``def to_image(x) -> np.ndarray``), or whose every ``return`` gives one NumPy makes
    (``np.zeros(...)``, a name only NumPy calls bind)."""
    if type(value) is not cst.Call or type(value.func) is not cst.Name:
        return False
    fn = ctx.local_callee(value)
    if fn is None:
        return False
    if fn.returns is not None:
        return _numpy_type(fn.returns.annotation, ctx)
    nodes = list(walk(fn.body))
    returned = [node.value for node in nodes if type(node) is cst.Return]
    if not returned or any(v is None for v in returned):
        return False
    plain = [v for v in returned if v is not None]
    bound: dict[str, list[cst.BaseExpression]] = {}
    other: set[str] = set()  # names bound otherwise than by a plain `name = value`
    for node in nodes:
        if type(node) is cst.Assign:
            for t in node.targets:
                if type(t.target) is cst.Name:
                    bound.setdefault(t.target.value, []).append(node.value)
                else:
                    other.update(target_names(t.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            other.update(target_names(node.target))
        elif type(node) is cst.With:
            other.update(n for item in node.items if item.asname is not None for n in target_names(item.asname.name))
    return all(may_be_numpy(v, ctx.qualname) or _numpy_name(v, bound, other, ctx) for v in plain)


def _numpy_name(value: cst.BaseExpression, bound: dict[str, list[cst.BaseExpression]], other: set[str], ctx) -> bool:
    """``value`` is a name that only plain assignments of values NumPy makes bind (``bound``: the
    values of each name's plain assignments; ``other``: the names bound any other way)."""
    if type(value) is not cst.Name or value.value in other or not bound.get(value.value):
        return False
    return all(may_be_numpy(b, ctx.qualname) for b in bound[value.value])


def _numpy_use(ctx) -> bool:
    """The squeeze's result is the receiver of a method only NumPy arrays have
    (``a.squeeze().astype(np.uint8)``)."""
    parent = ctx.parent
    return type(parent) is cst.Attribute and parent.attr.value in ("astype", "tobytes", "tostring", "itemset")


#: methods that return their receiver's shape (a copy, a move, a cast)
_SAME_SHAPE = frozenset({"detach", "clone", "copy", "cpu", "cuda", "float", "double", "half", "contiguous", "to"})


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without the shape-keeping method calls on it: ``x`` for ``x.detach().clone()``."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _SAME_SHAPE:
        expr = expr.func.value
    return expr


def _copied(expr: cst.BaseExpression) -> bool:
    """A ``.copy()`` in the receiver's chain: NumPy arrays have one, tensors do not."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        if expr.func.attr.value == "copy" and not expr.args:
            return True
        expr = expr.func.value
    return False


def _key(expr: cst.BaseExpression, ctx) -> "str | None":
    """What names the receiver across statements: ``x``, ``self.x``, or ``d[k]`` with a name or
    literal key (its source text)."""
    dotted = dotted_name(expr)
    if dotted is not None:
        return dotted
    if type(expr) is cst.Subscript and dotted_name(expr.value) is not None and len(expr.slice) == 1 \
            and type(expr.slice[0].slice) is cst.Index \
            and type(expr.slice[0].slice.value) in (cst.Name, cst.SimpleString, cst.Integer):
        return ctx.source(expr)
    return None


def _numpy_type(annotation: cst.BaseExpression, ctx) -> bool:
    """The annotation names a NumPy array type (``np.ndarray``, ``npt.NDArray[...]``)."""
    base = annotation.value if type(annotation) is cst.Subscript else annotation
    qual = ctx.qualname(base) or ""
    return qual.startswith("numpy.") and qual.split(".")[-1] in ("ndarray", "NDArray", "ArrayLike")


def _narrowed_to_numpy(ctx, name: str) -> bool:
    """An ``if``/``elif`` around the statement tests ``isinstance(name, np.ndarray)``."""
    function, statement = ctx.function, ctx.statement
    path = statement_path(function, statement) if function is not None and statement is not None else None
    for test in guarding_tests(path or []):
        for node in (test, *walk(test)):
            if type(node) is cst.Call and dotted_name(node.func) == "isinstance" and len(node.args) == 2 \
                    and dotted_name(node.args[0].value) == name and _numpy_type(node.args[1].value, ctx):
                return True
    return False


#: reductions to one value whose result does not depend on the rank of their receiver
_RANK_FREE = frozenset({"any", "all", "item", "sum", "mean", "max", "min", "prod", "numel"})


def _rank_free_use(ctx) -> bool:
    """The squeeze's result goes straight into a reduction to one value (``x.squeeze().item()``,
    ``.any()``, ``.sum()`` without a dim): the rank it leaves cannot matter."""
    ancestors = ctx.ancestors
    parent = ctx.parent
    return len(ancestors) >= 2 and type(parent) is cst.Attribute and parent.attr.value in _RANK_FREE \
        and type(ancestors[-2]) is cst.Call and ancestors[-2].func is parent and not ancestors[-2].args


def _literal_data(target: cst.BaseExpression, ctx) -> bool:
    """The receiver is ``torch.tensor(<nested literal lists>)``, itself or as every value its name
    was assigned: its shape is written out, so the squeeze always gives the same one."""
    if type(target) is cst.Call:
        values: list[cst.BaseExpression] = [target]
    else:
        name, function = dotted_name(target), ctx.function
        if name is None or function is None:
            return False
        values = [n.value for n in walk(function.body) if type(n) is cst.Assign
                  and any(dotted_name(t.target) == name for t in n.targets)]
    return bool(values) and all(
        type(v) is cst.Call and ctx.qualname(v.func) == "torch.tensor" and v.args
        and isinstance(v.args[0].value, (cst.List, cst.Tuple)) and v.args[0].keyword is None for v in values)


def _bare_squeeze(expr: cst.BaseExpression, ctx) -> bool:
    """``x.squeeze()`` or ``torch.squeeze(x)``, without a dim."""
    if type(expr) is not cst.Call:
        return False
    if ctx.qualname(expr.func) == "torch.squeeze":
        return len(expr.args) == 1 and expr.args[0].keyword is None
    return type(expr.func) is cst.Attribute and expr.func.attr.value == "squeeze" and not expr.args
