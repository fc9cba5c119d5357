"""Autograd rules (SC3xx): in-place changes, `.data`, `backward()`, losses, training loops."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, OPTIMIZER
from shapecheck.rules import torch_ops as ops
from shapecheck.rules.autograd_graph import FunctionGraph, names_read, records_in
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.inplace import augassign_target, inplace_call_targets, subscript_targets
from shapecheck.rules.scopes import grad_enabled, scope_of
from shapecheck.rules.tensor_helpers import (
    is_name,
    keyword,
    method_call,
    multi_element,
    name_of,
    positional,
    short,
    tensor_fact,
    torch_name,
    walk,
)

_LEAF_FIX_HINT = "do it under `with torch.no_grad():`, or work on a non-leaf copy"


@register
class InplaceOnLeaf(Rule):
    code = "SC301"
    name = "inplace-on-leaf"
    severity = "error"
    summary = "in-place change of a leaf tensor that requires grad, outside `torch.no_grad()`"
    doc = """\
## What it does
Flags an in-place change of a leaf tensor that requires grad (`requires_grad=True`,
`nn.Parameter`, `.requires_grad_()`): every in-place method (`add_`, `mul_`, `zero_`,
`fill_`, `clamp_`, `relu_`, `copy_`, `normal_`, `masked_fill_`, `index_add_`, `scatter_`...),
augmented assignment (`w += 1`), item and slice assignment (`w[0] = 1`), `out=w`, and
`F.relu(w, inplace=True)`, when grad mode is on. Under `torch.no_grad()`,
`torch.inference_mode()`, `torch.set_grad_enabled(False)` and in functions decorated with them
it stays silent, and so it does for `nn.init.*_` functions.

## Why is this bad?
Autograd accumulates the gradient of a leaf into `.grad`; it cannot record an in-place change
of the leaf itself, so torch raises `RuntimeError: a leaf Variable that requires grad is being
used in an in-place operation` (for `out=`: functions with out=... arguments don't support
automatic differentiation).

## Example
```python
w = torch.randn(3, requires_grad=True)
w.add_(1)                     # RuntimeError
```

## Use instead
```python
with torch.no_grad():         # an update that autograd must not see (init, SGD step)
    w.add_(1)
v = w + 1                     # or a new, non-leaf tensor that autograd tracks
```
"""
    valid = (
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w.add_(1)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.inference_mode():\n    w.zero_()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.set_grad_enabled(False):\n    w.mul_(2)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\ny.add_(1)\n",
        "import torch\nimport torch.nn as nn\nw = nn.Parameter(torch.empty(3, 3))\nnn.init.xavier_uniform_(w)\n",
        "import torch\n\n@torch.no_grad()\ndef reset(p):\n    p.zero_()\n\nw = torch.randn(3, requires_grad=True)\nreset(w)\n",
        "import torch\nx = torch.randn(3)\nx.add_(1)\nx[0] = 5.0\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nw = w + 1\nw.add_(1)\n",
    )
    invalid = (
        "import torch\nx = torch.tensor([1.0], requires_grad=True)\nx.add_(1)  # <--\n",
        "import torch\nx = torch.randn(10, requires_grad=True)\ny = x * x\nx.relu_()  # <--\nloss = y.sum()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nw += 1  # <--\n",
        "import torch\nimport torch.nn as nn\nw = nn.Parameter(torch.zeros(4))\nw[0] = 1.0  # <--\n",
        "import torch\nw = torch.zeros(2, requires_grad=True)\ntorch.add(torch.ones(2), 1, out=w)  # <--\n",
        "import torch\nw = torch.zeros(3).requires_grad_()\nw.uniform_(-1, 1)  # <--\n",
    )

    def _check(self, target: cst.BaseExpression, how: str, node: cst.CSTNode, ctx) -> None:
        fact = ctx.fact(target)
        if fact.grad != LEAF_REQUIRES_GRAD:
            return
        if grad_enabled(ctx, node) is not True:
            return
        name = short(ctx, target)
        error = (
            "functions with out=... arguments don't support automatic differentiation"
            if how == "`out=`"
            else "a leaf Variable that requires grad is being used in an in-place operation"
        )
        ctx.report(
            node,
            f"{how} changes `{name}` in place, but `{name}` is a leaf tensor that requires grad: "
            f"torch raises RuntimeError ({error}); {_LEAF_FIX_HINT}",
        )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        for target, how in inplace_call_targets(ctx, node):
            self._check(target, how, node, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        op = ctx.source(node.operator).strip()
        self._check(augassign_target(node), f"`{op}`", node, ctx)

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        for target in subscript_targets(node):
            self._check(target, "item assignment", node, ctx)


_BACKWARD_CALLS = {"autograd.backward", "autograd.grad"}


def _backward_root(ctx, node: cst.Call) -> Optional[cst.BaseExpression]:
    """The tensor a ``.backward()``/``torch.autograd.backward``/``autograd.grad`` call starts from."""
    name = torch_name(ctx, node.func)
    if name in _BACKWARD_CALLS:
        args = positional(node)
        if args:
            return args[0]
        for kw in ("tensors", "outputs"):
            arg = keyword(node, kw)
            if arg is not None:
                return arg.value
        return None
    call = method_call(node)
    if name is None and call is not None and call[1] == "backward":
        return call[0]
    return None


def _calls_backward(scope: cst.CSTNode) -> bool:
    """True when ``scope`` (a function or the module, nested functions aside) mentions
    ``backward`` or ``grad`` as an attribute: only then can SC302 find anything to report."""
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    for node in walk(body):
        if isinstance(node, cst.Attribute) and node.attr.value in ("backward", "grad"):
            return True
    return False


#: A backward pass is written `.backward(`, `torch.autograd.backward/grad` (however imported) or
#: reads `.grad`: the rules that need one skip files with none of these words.
BACKWARD_WORDS = ("backward", "autograd", ".grad")


class _GraphRule(Rule):
    """Shared bookkeeping: one :class:`FunctionGraph` per function of the file."""

    #: whether assignments record what their ops save for backward (SC302 needs it)
    track_saves = True

    def __init__(self) -> None:
        self._graphs: dict[int, FunctionGraph] = {}

    def graph(self, ctx, node: cst.CSTNode) -> FunctionGraph:
        """The graph state of the function that contains ``node`` (the node being visited)."""
        function = getattr(ctx, "function", None)
        key = id(function) if function is not None else 0
        graph = self._graphs.get(key)
        if graph is None:
            graph = self._graphs[key] = FunctionGraph()
            if self.track_saves:
                graph.has_backward = _calls_backward(function if function is not None else ctx.module)
        return graph

    def assigned(self, node: cst.CSTNode, targets: list[cst.BaseExpression],
                 value: cst.BaseExpression, ctx) -> None:
        """Bind ``targets`` to ``value``: records the saves made by ``value`` and its deps."""
        graph = self.graph(ctx, node)
        deps: set[int] = set()
        if self.track_saves and graph.has_backward:
            single = name_of(targets[0]) if len(targets) == 1 else None
            deps = graph.deps_of(value)
            result = (single, graph.versions.get(single, 0) + 1) if single is not None else None
            if grad_enabled(ctx, node) is True:
                deps |= records_in(ctx, graph, value, result)
        for target in targets:
            for element in _flat_targets(target):
                dotted = name_of(element)
                if dotted is not None:
                    binding = graph.rebind(dotted)
                    graph.deps[binding] = set(deps)
                    graph.assigned_from[binding] = value


def _flat_targets(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flat_targets(element.value)
    else:
        yield target


@register
class InplaceOnSavedTensor(_GraphRule):
    code = "SC302"
    needs = BACKWARD_WORDS
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
`sub` and a product with a Python number save nothing, and are not flagged.

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
        "import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = x.exp()\ny.add_(1)\nz = (x * 2).sum()\nz.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\nz = x.sin().sum()\ny.add_(1)\nz.backward()\n",
    )
    invalid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)  # <--\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nc = torch.randn(3)\ny = x * c\nc.mul_(0)  # <--\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = torch.sigmoid(x)\nloss = (h * 2).sum()\nh[0] = 0.0  # <--\nloss.backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.randn(3)\nz = x @ y\ny += 1  # <--\nz.backward()\n",
    )

    def __init__(self) -> None:
        super().__init__()
        self._reported: set[int] = set()

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        for target in subscript_targets(node):
            self._changed(target, node, ctx)
        self.assigned(node, [t.target for t in node.targets], node.value, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign, ctx) -> None:
        if node.value is not None:
            self.assigned(node, [node.target], node.value, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        self._changed(augassign_target(node), node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        for target, _how in inplace_call_targets(ctx, node):
            self._changed(target, node, ctx)
        root = _backward_root(ctx, node)
        if root is not None:
            self._backward(root, node, ctx)

    def _changed(self, target: cst.BaseExpression, node: cst.CSTNode, ctx) -> None:
        dotted = name_of(target)
        if dotted is None:
            return
        fact = ctx.fact(target)
        if fact.grad == LEAF_REQUIRES_GRAD and grad_enabled(ctx, node) is True:
            return  # SC301 reports this one
        graph = self.graph(ctx, node)
        binding = graph.binding(dotted)
        for record in graph.records:
            if record.binding == binding and record.changed_by is None:
                record.changed_by = node

    def _backward(self, root: cst.BaseExpression, node: cst.Call, ctx) -> None:
        graph = self.graph(ctx, node)
        deps = graph.deps_of(root)
        if grad_enabled(ctx, node) is not False:
            deps |= records_in(ctx, graph, root, None)
        for index in sorted(deps):
            record = graph.records[index]
            changed = record.changed_by
            if changed is None or id(changed) in self._reported:
                continue
            self._reported.add(id(changed))
            what = "its output" if record.role == "result" else f"`{record.binding[0]}`"
            ctx.report(
                changed,
                f"`{record.binding[0]}` is changed in place here, but `{record.op}` saved "
                f"{what} for backward: `{short(ctx, node)}` then raises RuntimeError (one of "
                f"the variables needed for gradient computation has been modified by an "
                f"inplace operation); assign a new tensor instead (`{record.binding[0]} = ...`)",
            )


def _is_data_attr(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == "data"


_PARAM_ATTRS = {"weight", "bias"}


def _parameter_loop(node: cst.For, ctx) -> Optional[tuple[tuple[int, str], bool]]:
    """For ``for p in m.parameters()`` (or ``for name, p in m.named_parameters()``):
    ``((id of the function, "p"), whether m is known to be a module)``, else ``None``."""
    call = method_call(node.iter)
    if call is None or call[1] not in ("parameters", "named_parameters"):
        return None
    target = node.target
    if call[1] == "named_parameters" and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target = target.elements[1].value
    if not isinstance(target, cst.Name):
        return None
    return (id(scope_of(ctx, node).function), target.value), ctx.fact(call[0]).kind == MODULE


def _guessed_parameter(guessed: set, expr: cst.BaseExpression, ctx, node: cst.CSTNode) -> bool:
    """True when ``expr`` is the name of a loop over ``.parameters()`` of an object not known to
    be a module: the facts call it a parameter by that method's name alone."""
    return isinstance(expr, cst.Name) and (id(scope_of(ctx, node).function), expr.value) in guessed


def _swaps_storage(statement: Optional[cst.CSTNode]) -> bool:
    """True for ``x.data = ...`` (also ``x.data, meta = ...``): the statement replaces a
    tensor's storage."""
    if not isinstance(statement, cst.Assign):
        return False
    for target in statement.targets:
        elements = target.target.elements if isinstance(target.target, (cst.Tuple, cst.List)) else ()
        if _is_data_attr(target.target) or any(_is_data_attr(e.value) for e in elements):
            return True
    return False
_DETACH_SAFE = {"numpy", "cpu", "clone", "tolist", "item"}
_METADATA = {"shape", "dtype", "device", "ndim", "is_cuda", "layout", "size", "dim", "numel",
             "nelement", "stride", "data_ptr", "element_size", "is_contiguous", "storage_offset"}


@register
class DataAttribute(Rule):
    code = "SC303"
    needs = ("data",)
    name = "data-attribute"
    severity = "warning"
    summary = "`.data` reads or writes a tensor behind autograd's back"
    fixable = True
    doc = """\
## What it does
Flags `t.data` on a tensor that requires grad or a parameter (`self.weight.data`, `p.data`
for `p` in `model.parameters()`) whose values are read or changed through it. On tensors that
do not require grad (`p.grad.data`, plain data) `.data` is harmless and not flagged. Reading only metadata
(`w.data.shape`, `w.data.size()`) and replacing the whole storage (`w.data = new`, `w.data = f(w.data)`,
the one use with no plain replacement) are not flagged.

## Why is this bad?
`.data` returns the same storage with autograd switched off *and* without the version
counter: a change made through it is invisible to autograd, so a gradient that needed the old
values is silently computed from the new ones, with no error. `.detach()` shares the version
counter and lets autograd raise instead; `torch.no_grad()` is the supported way to change a
parameter.

## Example
```python
w = torch.randn(3, requires_grad=True)
w.data.mul_(0.5)              # autograd never hears of it
values = w.data.numpy()
```

## Use instead
```python
with torch.no_grad():
    w.mul_(0.5)
values = w.detach().numpy()
```
The fix rewrites `t.data` to `t.detach()` where the value is only read and converted
(`.numpy()`, `.cpu()`, `.clone()`, `.tolist()`, `.item()`): the same values, and a later
in-place change of a shared result now makes autograd raise instead of computing a wrong
gradient. It is safe where `t` is known to be a tensor that requires grad, and unsafe
(`--unsafe-fixes`) where only a name says it is a parameter (`.weight`, a loop over
`.parameters()`): another object's `.data` has no `.detach()`.
"""
    valid = (
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    w.mul_(0.5)\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nv = w.detach().numpy()\n",
        "import torch\nclass Batch:\n    data = [1, 2]\nb = Batch()\nprint(b.data)\n",
        "import torch\ndef load(dataset):\n    return dataset.data\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nn = layer.weight.data.shape[0]\nlayer.weight.data = torch.zeros(4, 3)\n",
    )
    invalid = (
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\nv = w.data.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\nv = w.detach().numpy()  # <--\n",
        ),
        "import torch\nw = torch.randn(3, requires_grad=True)\nw.data.mul_(0.5)  # <--\n",
        "import torch\nimport torch.nn as nn\nlayer = nn.Linear(3, 3)\nlayer.weight.data[0] = torch.zeros(3)  # <--\n",
        "import torch\ndef shrink(model):\n    for p in model.parameters():\n        p.data.mul_(0.9)  # <--\n",
        Example(
            "import torch\ndef snapshot(model):\n    for p in model.parameters():\n        print(p.data.clone())  # <--\n",
            unsafe_fixed="import torch\ndef snapshot(model):\n    for p in model.parameters():\n"
            "        print(p.detach().clone())  # <--\n",
        ),
    )

    def __init__(self) -> None:
        self._done: set[int] = set()
        self._param_names: set[tuple[int, str]] = set()
        self._guessed: set[tuple[int, str]] = set()

    def visit_For(self, node: cst.For, ctx) -> None:
        loop = _parameter_loop(node, ctx)
        if loop is not None:
            self._param_names.add(loop[0])
            if not loop[1]:
                self._guessed.add(loop[0])

    def _is_tensor(self, expr: cst.BaseExpression, ctx, node: cst.CSTNode) -> bool:
        """True when ``expr`` is a tensor that requires grad, or a parameter by its name."""
        if isinstance(expr, cst.Attribute) and expr.attr.value == "grad":
            return False  # `p.grad.data`: a gradient does not require grad itself
        fact = ctx.fact(expr)
        if fact.requires_grad is not None:
            return fact.requires_grad
        if isinstance(expr, cst.Attribute) and expr.attr.value in _PARAM_ATTRS:
            return True
        if isinstance(expr, cst.Name):
            return (id(scope_of(ctx, node).function), expr.value) in self._param_names
        return False

    def visit_Call(self, node: cst.Call, ctx) -> None:
        call = method_call(node)
        if call is None or call[1] not in _DETACH_SAFE or not _is_data_attr(call[0]):
            return
        attr = call[0]
        if not self._is_tensor(attr.value, ctx, node):
            return
        self._done.add(id(attr))
        # Safe where the facts show a tensor that requires grad; a parameter known only by its
        # name (`.weight`, a loop over `.parameters()`) may be something else with a `.data`
        # (a NumPy array's is a memoryview, with `.tolist()`), which has no `.detach()`.
        proven = ctx.fact(attr.value).requires_grad is True and not _guessed_parameter(
            self._guessed, attr.value, ctx, node)
        fix = Fix(attr, cst.Call(func=cst.Attribute(value=attr.value, attr=cst.Name("detach"))), safe=proven)
        name = short(ctx, attr.value)
        ctx.report(
            attr,
            f"`{name}.data` reads `{name}` behind autograd's back (no version check); "
            f"use `{name}.detach()`",
            fix=fix,
        )

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        if node.attr.value != "data" or id(node) in self._done:
            return
        parent = getattr(ctx, "parent", None)
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _METADATA:
            return  # `w.data.shape`, `w.data.size()`: metadata, the values are not touched
        if isinstance(parent, cst.AssignTarget) or _swaps_storage(getattr(ctx, "statement", None)):
            return  # `w.data = f(w.data)`: swaps the storage, the one use with no plain replacement
        ancestors = getattr(ctx, "ancestors", ())
        if len(ancestors) >= 2 and isinstance(parent, cst.Arg) and isinstance(ancestors[-2], cst.Call):
            if name_of(ancestors[-2].func) in ("isinstance", "type"):
                return  # `isinstance(w.data, DTensor)`: a type check
        if not self._is_tensor(node.value, ctx, node):
            return
        name = short(ctx, node.value)
        ctx.report(
            node,
            f"`{name}.data` bypasses autograd: a change made through it is invisible to "
            f"autograd and to its version check, so gradients that needed the old values are "
            f"silently wrong; change `{name}` under `torch.no_grad()`, or read it with "
            f"`{name}.detach()`",
        )


@register
class BackwardOnNonScalar(Rule):
    code = "SC304"
    needs = BACKWARD_WORDS
    name = "backward-on-non-scalar"
    severity = "error"
    summary = "`backward()` without a gradient on a tensor with more than one element"
    doc = """\
## What it does
Flags `y.backward()` (and `torch.autograd.backward(y)`, `torch.autograd.grad(y, x)`) without a
gradient argument, when `y` is known to hold more than one element.

## Why is this bad?
Without a gradient, autograd assumes `dy = 1`, which only makes sense for a single number. For
anything else it raises `RuntimeError: grad can be implicitly created only for scalar outputs`.

## Example
```python
x = torch.randn(3, requires_grad=True)
y = x * 2
y.backward()                  # RuntimeError
```

## Use instead
```python
y.sum().backward()                    # reduce to a scalar loss
y.backward(torch.ones_like(y))        # or pass the vector of dy
```
"""
    valid = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.sum().backward()\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(torch.ones_like(y))\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ny.backward(gradient=torch.ones(3))\n",
        "import torch\nx = torch.randn(1, requires_grad=True)\ny = x * 2\ny.backward()\n",
        "import torch\ndef step(loss):\n    loss.backward()\n",
    )
    invalid = (
        "import torch\ny = torch.tensor([1., 2., 3.], requires_grad=True)\ny.backward()  # <--\n",
        "import torch\nx = torch.randn(4, 2, requires_grad=True)\nout = x.mean(dim=1)\nout.backward()  # <--\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = x * 2\ntorch.autograd.backward(y)  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = torch_name(ctx, node.func)
        if name in ("autograd.backward", "autograd.grad"):
            args = positional(node)
            given = len(args) >= (2 if name == "autograd.backward" else 3) or keyword(
                node, "grad_tensors" if name == "autograd.backward" else "grad_outputs"
            )
            root = args[0] if args else None
        else:
            call = method_call(node)
            if name is not None or call is None or call[1] != "backward":
                return
            given = bool(positional(node)) or keyword(node, "gradient")
            root = call[0]
        if given or root is None:
            return
        fact = tensor_fact(ctx, root)
        described = multi_element(fact) if fact is not None else None
        if described is None:
            return
        ctx.report(
            node,
            f"`{short(ctx, node)}` without a gradient, but `{short(ctx, root)}` has {described}: "
            f"autograd raises RuntimeError (grad can be implicitly created only for scalar "
            f"outputs); reduce it first (`.sum()`, `.mean()`) or pass `gradient=`",
        )


def _factory_dtype_kind(ctx, node: cst.Call, factory: str) -> Optional[str]:
    """``"int"``/``"bool"`` when the factory call surely builds an integer or boolean tensor."""
    dtype = keyword(node, "dtype")
    if dtype is not None:
        qual = torch_name(ctx, dtype.value)
        if qual in ops.INT_DTYPES:
            return "int"
        if qual in ops.BOOL_DTYPES:
            return "bool"
        return None
    if factory in ("randint", "randperm"):
        return "int"
    args = positional(node)
    if factory in ("tensor", "as_tensor") and args:
        return _literal_kind(args[0])
    if factory == "arange" and args and all(isinstance(a, cst.Integer) for a in args):
        return "int"
    if factory == "full" and len(args) >= 2 and isinstance(args[1], cst.Integer):
        return "int"
    return None


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
        elif isinstance(item, cst.Integer):
            kinds.add("int")
        elif isinstance(item, cst.UnaryOperation) and isinstance(item.expression, cst.Integer):
            kinds.add("int")
        elif is_name(item, "True") or is_name(item, "False"):
            kinds.add("bool")
        else:
            return None
    return kinds.pop() if len(kinds) == 1 else None


@register
class GradOnIntegerTensor(Rule):
    code = "SC305"
    needs = ("requires_grad", "Parameter")
    name = "grad-on-integer-tensor"
    severity = "error"
    summary = "`requires_grad` on an integer or boolean tensor"
    doc = """\
## What it does
Flags `requires_grad=True` on a factory that builds an integer or boolean tensor
(`torch.tensor([1, 2])`, `torch.arange(5)`, `torch.randint(...)`, `dtype=torch.long`), and
`.requires_grad_()` or `nn.Parameter(...)` on a tensor known to be integer or boolean.

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
        "import torch\nw = torch.tensor([1.0, 2.0], requires_grad=True)\n",
        "import torch\nw = torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)\n",
        "import torch\nw = torch.arange(3.0, requires_grad=True)\n",
        "import torch\nidx = torch.tensor([1, 2])\n",
        "import torch\nw = torch.zeros(3, requires_grad=True)\n",
    )
    invalid = (
        "import torch\nw = torch.tensor([1, 2], requires_grad=True)  # <--\n",
        "import torch\nw = torch.arange(5, requires_grad=True)  # <--\n",
        "import torch\nw = torch.zeros(3, dtype=torch.long, requires_grad=True)  # <--\n",
        "import torch\nidx = torch.randint(0, 10, (4,))\nidx.requires_grad_()  # <--\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = torch_name(ctx, node.func)
        if name in ops.FACTORIES:
            rg = keyword(node, "requires_grad")
            if rg is None or not is_name(rg.value, "True"):
                return
            kind = _factory_dtype_kind(ctx, node, name)
            if kind is not None:
                self._report(node, short(ctx, node, 50), kind, ctx)
            return
        if name in ("nn.Parameter", "nn.parameter.Parameter"):
            args = positional(node)
            rg = keyword(node, "requires_grad")
            if not args or (rg is not None and not is_name(rg.value, "True")):
                return
            fact = tensor_fact(ctx, args[0])
            if fact is not None and fact.dtype_kind in ("int", "bool"):
                self._report(node, short(ctx, args[0]), fact.dtype_kind, ctx)
            return
        call = method_call(node)
        if name is None and call is not None and call[1] == "requires_grad_":
            args = positional(node)
            if args and not is_name(args[0], "True"):
                return
            fact = tensor_fact(ctx, call[0])
            if fact is not None and fact.dtype_kind in ("int", "bool"):
                self._report(node, short(ctx, call[0]), fact.dtype_kind, ctx)

    def _report(self, node: cst.CSTNode, what: str, kind: str, ctx) -> None:
        words = "an integer" if kind == "int" else "a boolean"
        ctx.report(
            node,
            f"`{what}` is {words} tensor, and only floating point and complex tensors can "
            f"require gradients: torch raises RuntimeError; use a float dtype "
            f"(`1.0` literals or `dtype=torch.float32`)",
        )


_NONDIFF_METHODS = ops.NON_DIFFERENTIABLE_OPS | ops.COMPARISON_OPS


def _index_pair_source(ctx, expr: cst.BaseExpression) -> Optional[str]:
    """``"the indices of `.max()`"`` for ``x.max(dim=1).indices`` or ``torch.topk(x, 3)[1]``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "indices":
        inner = expr.value
    elif (
        isinstance(expr, cst.Subscript)
        and len(expr.slice) == 1
        and isinstance(expr.slice[0].slice, cst.Index)
        and isinstance(expr.slice[0].slice.value, cst.Integer)
        and expr.slice[0].slice.value.value == "1"
    ):
        inner = expr.value
    else:
        return None
    if not isinstance(inner, cst.Call) or not inner.args:
        return None
    name = torch_name(ctx, inner.func)
    call = method_call(inner)
    op = name if name is not None and "." not in name else (call[1] if call and name is None else None)
    if op in ops.INDEX_PAIR_OPS:
        return f"the indices of `{op}`"
    return None
_TAINT_KEEPING = {"float", "double", "half", "long", "int", "to", "type", "detach", "view",
                  "reshape", "squeeze", "unsqueeze", "flatten", "cpu", "cuda", "clone"}
_COMPARE_OPS = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual,
                cst.Equal, cst.NotEqual)


@register
class NonDifferentiableLoss(Rule):
    code = "SC306"
    name = "non-differentiable-loss"
    severity = "error"
    summary = "a loss computed from `argmax`/`argmin`/`round`/comparison results"
    doc = """\
## What it does
Flags the prediction argument of a loss (`F.cross_entropy`, `F.mse_loss`, an `nn.*Loss()`
instance...) and the receiver of `.backward()` when it comes from `argmax`, `argmin`,
`argsort`, the indices of `max`/`min`/`topk`/`sort`, a comparison, or a step function
(`round`, `floor`, `ceil`, `trunc`, `sign`), directly or through a dtype cast.

## Why is this bad?
`argmax`, `argmin`, indices and comparisons return integers or booleans with no gradient, so
the graph is cut: `backward()` raises `RuntimeError: element 0 of tensors does not require
grad and does not have a grad_fn`, or, when other terms keep the loss differentiable, the model
upstream gets no gradient from this term. `round`, `floor`, `ceil`, `trunc` and `sign` have a
zero gradient everywhere: training silently stalls. The target argument is not flagged
(`F.cross_entropy(logits, onehot.argmax(1))` is correct).

## Example
```python
pred = torch.argmax(logits, dim=1)
loss = F.mse_loss(pred.float(), target)   # no gradient reaches logits
```

## Use instead
```python
loss = F.cross_entropy(logits, target)    # the loss on the scores
```
"""
    valid = (
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.tensor([0, 2, 1, 0])\nloss = F.cross_entropy(logits, target)\nloss.backward()\n",
        "import torch\nimport torch.nn.functional as F\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "onehot = torch.eye(3)[[0, 2, 1, 0]]\nloss = F.cross_entropy(logits, onehot.argmax(dim=1))\n",
        "import torch\nlogits = torch.randn(4, 3)\npred = torch.argmax(logits, dim=1)\n"
        "accuracy = (pred == torch.tensor([0, 1, 2, 0])).float().mean()\n",
        "import torch\nimport torch.nn as nn\nloss_fn = nn.CrossEntropyLoss()\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "pred = logits.argmax(dim=1)\nlogits = logits * 2\nloss = loss_fn(logits, pred)\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nloss_fn = nn.MSELoss()\nlogits = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.randn(4)\npred = torch.argmax(logits, dim=1)\nloss = loss_fn(pred.float(), target)  # <--\n",
        "import torch\nimport torch.nn.functional as F\nscores = torch.randn(8, requires_grad=True)\n"
        "target = torch.ones(8)\nloss = F.binary_cross_entropy((scores > 0).float(), target)  # <--\n",
        "import torch\nx = torch.randn(5, requires_grad=True)\nr = torch.round(x)\nr.sum().backward()  # <--\n",
        "import torch\nimport torch.nn.functional as F\nscores = torch.randn(4, 3, requires_grad=True)\n"
        "target = torch.randn(4)\nloss = F.mse_loss(scores.max(dim=1).indices.float(), target)  # <--\n",
    )

    def __init__(self) -> None:
        self._tainted: dict[tuple[int, str], str] = {}
        self._losses: set[str] = set()

    def _key(self, ctx, node, name: str) -> tuple[int, str]:
        function = scope_of(ctx, node).function
        if name.startswith("self."):
            return 0, name
        return (id(function) if function is not None else 0), name

    def _source(self, expr: cst.BaseExpression, ctx, node) -> Optional[str]:
        """What made ``expr`` non-differentiable (``"torch.argmax(...)"``), or ``None``."""
        while True:
            index_pair = _index_pair_source(ctx, expr)
            if index_pair is not None:
                return index_pair
            if isinstance(expr, cst.Comparison):
                if any(isinstance(t.operator, _COMPARE_OPS) for t in expr.comparisons):
                    return "a comparison"
                return None
            call = method_call(expr)
            name = torch_name(ctx, expr.func) if isinstance(expr, cst.Call) else None
            if name is not None and name.split(".")[-1] in _NONDIFF_METHODS and "." not in name:
                return f"`torch.{name}`"
            if name is None and call is not None:
                if call[1] in _NONDIFF_METHODS:
                    return f"`.{call[1]}()`"
                if call[1] in _TAINT_KEEPING:
                    expr = call[0]
                    continue
                return None
            dotted = name_of(expr)
            if dotted is not None:
                return self._tainted.get(self._key(ctx, node, dotted))
            return None

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        source = self._source(node.value, ctx, node)
        is_loss = self._is_loss_constructor(node.value, ctx)
        for target in node.targets:
            dotted = name_of(target.target)
            if dotted is None:
                continue
            key = self._key(ctx, node, dotted)
            if source is not None:
                self._tainted[key] = source
            else:
                self._tainted.pop(key, None)
            if is_loss:
                self._losses.add(dotted)

    def _is_loss_constructor(self, value: cst.BaseExpression, ctx) -> bool:
        if not isinstance(value, cst.Call):
            return False
        name = torch_name(ctx, value.func)
        return name is not None and name.startswith("nn.") and name.endswith("Loss")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        prediction = self._prediction(node, ctx)
        if prediction is not None:
            source = self._source(prediction, ctx, node)
            if source is not None:
                ctx.report(
                    node,
                    f"the loss input `{short(ctx, prediction)}` comes from {source}, which has "
                    f"no useful gradient: nothing upstream learns from this loss (backward "
                    f"raises RuntimeError or gets zero gradients); compute the loss on the "
                    f"scores or logits",
                )
            return
        call = method_call(node)
        if call is not None and call[1] == "backward" and torch_name(ctx, node.func) is None:
            source = self._source(call[0], ctx, node)
            if source is None and isinstance(call[0], cst.Call):
                inner = method_call(call[0])
                if inner is not None and inner[1] in ("sum", "mean"):
                    source = self._source(inner[0], ctx, node)
            if source is not None:
                ctx.report(
                    node,
                    f"`{short(ctx, call[0])}` comes from {source}, which has no useful "
                    f"gradient: `backward()` raises RuntimeError (element 0 of tensors does not "
                    f"require grad) or computes zero gradients",
                )

    def _prediction(self, node: cst.Call, ctx) -> Optional[cst.BaseExpression]:
        name = torch_name(ctx, node.func)
        args = positional(node)
        if name is not None and name.startswith("nn.functional.") and name.split(".")[-1] in ops.FUNCTIONAL_LOSSES:
            arg = keyword(node, "input")
            return args[0] if args else (arg.value if arg is not None else None)
        dotted = name_of(node.func)
        if dotted is not None and dotted in self._losses and args:
            return args[0]
        if isinstance(node.func, cst.Call) and self._is_loss_constructor(node.func, ctx) and args:
            return args[0]
        return None


_PARAMETER = {"nn.Parameter", "nn.parameter.Parameter"}


@register
class ParameterInForward(Rule):
    code = "SC307"
    needs = ("requires_grad", "Parameter")
    name = "parameter-in-forward"
    severity = "error"
    summary = "a parameter or `requires_grad=True` tensor created inside `forward`"
    doc = """\
## What it does
Flags `nn.Parameter(...)` and factories with `requires_grad=True` inside the `forward` method
of an `nn.Module` subclass.

## Why is this bad?
`forward` runs on every call: the tensor is a fresh leaf each time, initialised anew, and it is
not registered when the optimizer is built from `model.parameters()`. It never trains, and
`model.to(device)` does not move it.

## Example
```python
class Net(nn.Module):
    def forward(self, x):
        w = torch.randn(x.shape[-1], 4, requires_grad=True)   # new every call
        return x @ w
```

## Use instead
```python
class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(d, 4))
    def forward(self, x):
        return x @ self.w
```
"""
    valid = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(3, 4))\n    def forward(self, x):\n        return x @ self.w\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n        return x @ torch.randn(3, 4)\n",
        "import torch\nclass Helper:\n    def forward(self, x):\n        w = torch.randn(3, requires_grad=True)\n        return x * w\n",
    )
    invalid = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        w = torch.randn(3, 4, requires_grad=True)  # <--\n        return x @ w\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        self.scale = nn.Parameter(torch.ones(1))  # <--\n        return x * self.scale\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        name = torch_name(ctx, node.func)
        if name is None:
            return
        if name in _PARAMETER:
            what = "`nn.Parameter(...)`"
        elif name in ops.FACTORIES:
            rg = keyword(node, "requires_grad")
            if rg is None or not is_name(rg.value, "True"):
                return
            what = f"`torch.{name}(..., requires_grad=True)`"
        else:
            return
        scope = scope_of(ctx, node)
        if scope.function is None or scope.function.name.value != "forward" or not scope.module_class:
            return
        cls = scope.class_def.name.value if scope.class_def is not None else "the module"
        ctx.report(
            node,
            f"{what} inside `{cls}.forward` makes a new leaf tensor on every call: it is not a "
            f"registered parameter, so the optimizer never updates it and `.to(device)` never "
            f"moves it; create it once in `__init__` as `nn.Parameter`",
        )


_OPTIMIZER_NAME = re.compile(r"(^|_)(opt|optim|optimizer|optimiser)(s|\d*)?($|_)", re.IGNORECASE)


def _optimizer_like(ctx, expr: cst.BaseExpression) -> bool:
    if ctx.fact(expr).kind == OPTIMIZER:
        return True
    dotted = name_of(expr)
    return dotted is not None and bool(_OPTIMIZER_NAME.search(dotted.split(".")[-1]))


def _zeroes_grads(ctx, node: cst.CSTNode) -> bool:
    """True for ``*.zero_grad(...)``, ``*zero_grad*()``, ``p.grad = None``, ``p.grad.zero_()``."""
    if isinstance(node, cst.Call):
        dotted = name_of(node.func)
        if dotted is not None and "zero_grad" in dotted.split(".")[-1]:
            return True
        call = method_call(node)
        if call is not None and call[1] in ("zero_", "detach_", "fill_", "mul_"):
            receiver = name_of(call[0]) or ""
            if "grad" in receiver.split(".")[1:]:
                return True  # p.grad.zero_(), p.grad.data.zero_()
    if isinstance(node, (cst.Assign, cst.Del)):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        return any(isinstance(t, cst.Attribute) and t.attr.value == "grad" for t in targets)
    return False


def _retains(node: cst.Call) -> bool:
    arg = keyword(node, "retain_graph")
    if arg is not None and not is_name(arg.value, "False") and not is_name(arg.value, "None"):
        return True
    arg = keyword(node, "create_graph")
    return arg is not None and not is_name(arg.value, "False")


@register
class TrainingLoopGradients(_GraphRule):
    code = "SC308"
    needs = ("backward",)
    name = "training-loop-gradients"
    severity = "error"
    summary = "gradients never cleared in a training loop, or `backward()` twice on one graph"
    doc = """\
## What it does
Flags two mistakes of training loops:

- a `for`/`while` loop that calls `backward()` and an optimizer's `step()` but never clears the
  gradients (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`). Gradient
  accumulation, with `zero_grad()` under an `if`, is fine and not flagged.
- a second `backward()` through the same graph without `retain_graph=True` on the first: the
  same loss twice in a row, or a loss computed before a loop and back-propagated inside it.

## Why is this bad?
`backward()` adds into `.grad`; without clearing, every step applies the sum of all gradients so
far and training diverges, with no error. A backward pass frees the graph's saved tensors; the
second one raises `RuntimeError: Trying to backward through the graph a second time`.

## Example
```python
for x, y in loader:
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()                    # gradients keep piling up
```

## Use instead
```python
for x, y in loader:
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
```
For two backward passes through one graph, pass `retain_graph=True` to the first, or add the
losses and call `backward()` once.
"""
    valid = (
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n        optimizer.zero_grad()\n"
        "        loss = loss_fn(model(x), y)\n        loss.backward()\n        optimizer.step()\n",
        "def train(model, loader, loss_fn, optimizer, accum=4):\n    for i, (x, y) in enumerate(loader):\n"
        "        loss = loss_fn(model(x), y) / accum\n        loss.backward()\n        if (i + 1) % accum == 0:\n"
        "            optimizer.step()\n            optimizer.zero_grad()\n",
        "def fit(model, batches, loss_fn, opt):\n    for x, y in batches:\n        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n        opt.step()\n        model.zero_grad(set_to_none=True)\n",
        "def two_losses(model, x, y, f, g):\n    out = model(x)\n    loss1 = f(out, y)\n    loss2 = g(out, y)\n"
        "    loss1.backward(retain_graph=True)\n    loss2.backward()\n",
        "def lbfgs(model, x, y, loss_fn, optimizer):\n    for _ in range(5):\n        def closure():\n"
        "            optimizer.zero_grad()\n            loss = loss_fn(model(x), y)\n            loss.backward()\n"
        "            return loss\n        optimizer.step(closure)\n",
        "def branches(model, x, y, loss_fn, flag):\n    loss = loss_fn(model(x), y)\n    if flag:\n"
        "        loss.backward()\n    else:\n        loss.backward()\n",
        "def train(model, loader, loss_fn, optimizer, scheduler):\n    for x, y in loader:\n        optimizer.zero_grad()\n"
        "        loss_fn(model(x), y).backward()\n        optimizer.step()\n        scheduler.step()\n",
    )
    invalid = (
        "def train(model, loader, loss_fn, optimizer):\n    for x, y in loader:\n        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n        optimizer.step()  # <--\n",
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = (x * x).sum()\ny.backward()\ny.backward()  # <--\n",
        "def train(model, x, y, loss_fn, optimizer):\n    optimizer.zero_grad()\n    loss = loss_fn(model(x), y)\n"
        "    for _ in range(3):\n        loss.backward()  # <--\n        optimizer.step()\n        optimizer.zero_grad()\n",
    )

    track_saves = False

    def __init__(self) -> None:
        super().__init__()
        self._reported: set[int] = set()
        # per (function id, name, version): the first backward() on it that did not retain
        self._backwards: dict[tuple[int, str, int], cst.Call] = {}
        self._blocks: dict[int, tuple[int, ...]] = {}

    # -- missing zero_grad ------------------------------------------------------------------
    def _loop(self, node: cst.CSTNode, ctx) -> None:
        backward = False
        steps: list[cst.Call] = []
        zeroed = False
        for inner in walk(node.body):
            if isinstance(inner, cst.Call):
                call = method_call(inner)
                if _backward_root(ctx, inner) is not None and torch_name(ctx, inner.func) != "autograd.grad":
                    backward = True
                elif call is not None and call[1] == "step":
                    args = positional(inner)
                    if _optimizer_like(ctx, call[0]) or (args and _optimizer_like(ctx, args[0])):
                        steps.append(inner)
            if _zeroes_grads(ctx, inner):
                zeroed = True
        if not backward or not steps or zeroed:
            return
        step = steps[0]
        if id(step) in self._reported:
            return
        self._reported.add(id(step))
        ctx.report(
            step,
            f"`{short(ctx, step)}` runs in a loop that calls `backward()` but never "
            f"`zero_grad()`: backward() adds into `.grad`, so every step applies the sum of all "
            f"earlier gradients; call `optimizer.zero_grad()` once per step",
        )

    def visit_For(self, node: cst.For, ctx) -> None:
        self._loop(node, ctx)

    def visit_While(self, node: cst.While, ctx) -> None:
        self._loop(node, ctx)

    # -- backward twice ---------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        self.assigned(node, [t.target for t in node.targets], node.value, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign, ctx) -> None:
        if node.value is not None:
            self.assigned(node, [node.target], node.value, ctx)

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        dotted = name_of(node.target)
        if dotted is not None:
            graph = self.graph(ctx, node)
            graph.rebind(dotted)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        call = method_call(node)
        if call is None or call[1] != "backward" or torch_name(ctx, node.func) is not None:
            return
        dotted = name_of(call[0])
        if dotted is None:
            return
        graph = self.graph(ctx, node)
        binding = graph.binding(dotted)
        value = graph.assigned_from.get(binding)
        if value is None or not self._computed(value, ctx):
            return
        fact = ctx.fact(call[0])
        if fact.grad in (LEAF_REQUIRES_GRAD, NO_GRAD):
            return
        scope = scope_of(ctx, node)
        key = (id(scope.function), binding[0], binding[1])
        earlier = self._backwards.get(key)
        if earlier is not None and self._same_path(earlier, node, scope.function or ctx.module):
            self._report_twice(node, dotted, "a second time", ctx)
            return
        if _retains(node):
            return
        loop = scope.loop
        if loop is not None and not self._assigned_in(loop, dotted, ctx):
            self._report_twice(node, dotted, "on every iteration of this loop", ctx)
            return
        self._backwards.setdefault(key, node)

    def _report_twice(self, node: cst.Call, name: str, when: str, ctx) -> None:
        if id(node) in self._reported:
            return
        self._reported.add(id(node))
        ctx.report(
            node,
            f"`{short(ctx, node)}` runs backward through the graph of `{name}` {when}, after the "
            f"first pass freed it: RuntimeError (Trying to backward through the graph a second "
            f"time); pass `retain_graph=True` to the earlier call, or recompute `{name}`",
        )

    @staticmethod
    def _computed(value: cst.BaseExpression, ctx) -> bool:
        """True when ``value`` is an op result (a graph), not a fresh factory or a parameter."""
        if isinstance(value, cst.BinaryOperation):
            return True
        if isinstance(value, cst.Call):
            name = torch_name(ctx, value.func)
            return name is None or name not in ops.FACTORIES | _PARAMETER
        return False

    def _assigned_in(self, loop: cst.CSTNode, name: str, ctx) -> bool:
        for inner in walk(loop):
            if isinstance(inner, cst.Assign):
                for target in inner.targets:
                    if name in names_read(target.target):
                        return True
            elif isinstance(inner, (cst.AugAssign, cst.AnnAssign)) and name in names_read(inner.target):
                return True
            elif isinstance(inner, (cst.For, cst.CompFor)) and name in names_read(inner.target):
                return True
        return False

    @staticmethod
    def _same_path(first: cst.Call, second: cst.Call, root: cst.CSTNode) -> bool:
        """True when every run that reaches ``second`` ran ``first`` before it."""
        chain_first = _block_chain(root, first)
        chain_second = _block_chain(root, second)
        return chain_first == chain_second[: len(chain_first)]


def _block_chain(root: cst.CSTNode, node: cst.CSTNode) -> tuple[int, ...]:
    """Ids of the statement blocks between ``root`` (its function) and ``node``, outermost first."""
    chain: list[int] = []
    _find(root, node, chain)
    return tuple(chain)


def _find(current: cst.CSTNode, target: cst.CSTNode, chain: list[int]) -> bool:
    if current is target:
        return True
    for child in current.children:
        pushed = isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite))
        if pushed:
            chain.append(id(child))
        if _find(child, target, chain):
            return True
        if pushed:
            chain.pop()
    return False


@register
class NumpyOnGradTensor(Rule):
    code = "SC309"
    needs = ("numpy",)
    name = "numpy-on-grad-tensor"
    severity = "error"
    summary = "`.numpy()` on a tensor that requires grad"
    fixable = True
    doc = """\
## What it does
Flags `t.numpy()` where `t` requires grad: a leaf created with `requires_grad=True` or an
`nn.Parameter` (even under `torch.no_grad()`), or a result computed from one with grad mode on.

## Why is this bad?
A NumPy array cannot carry an autograd history, and torch refuses to drop it silently:
`RuntimeError: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy()
instead.`

## Example
```python
w = torch.randn(3, requires_grad=True)
a = (w * 2).numpy()           # RuntimeError
```

## Use instead
```python
a = (w * 2).detach().numpy()
```
The fix inserts `.detach()` before `.numpy()`: safe, since the call raised before, and on a
tensor that does not require grad `.detach().numpy()` gives the same array. It is unsafe (`--unsafe-fixes`) on the
variable of a loop over `.parameters()` of an object not known to be a module.
"""
    valid = (
        "import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().numpy()\n",
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    y = w * 2\na = y.numpy()\n",
        "import torch\nx = torch.randn(3)\na = x.numpy()\n",
    )
    invalid = (
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\na = w.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().numpy()  # <--\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\na = y.numpy()  # <--\n",
            fixed="import torch\nw = torch.randn(3, requires_grad=True)\ny = w * 2\na = y.detach().numpy()  # <--\n",
        ),
    )

    def __init__(self) -> None:
        self._guessed: set[tuple[int, str]] = set()

    def visit_For(self, node: cst.For, ctx) -> None:
        loop = _parameter_loop(node, ctx)
        if loop is not None and not loop[1]:
            self._guessed.add(loop[0])

    def visit_Call(self, node: cst.Call, ctx) -> None:
        call = method_call(node)
        if call is None or call[1] != "numpy" or node.args:
            return
        receiver = call[0]
        fact = tensor_fact(ctx, receiver)
        if fact is None or fact.requires_grad is not True:
            return
        detached = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("detach")))
        # Unsafe on a loop over `.parameters()` of an object not known to be a module: another
        # library's tensor may have `.numpy()` and no `.detach()`.
        fix = Fix(node.func, node.func.with_changes(value=detached),
                  safe=not _guessed_parameter(self._guessed, receiver, ctx, node))
        name = short(ctx, receiver)
        ctx.report(
            node,
            f"`{name}` requires grad, so `{name}.numpy()` raises RuntimeError (Can't call "
            f"numpy() on Tensor that requires grad); use `{name}.detach().numpy()`",
            fix=fix,
        )
