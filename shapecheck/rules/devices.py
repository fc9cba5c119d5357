"""Device rules (SC4xx): where tensors and modules live."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.semantic.facts import CPU, CUDA, INT, MAYBE_CUDA, MODULE, MPS, SIZE, TENSOR, Fact
from shapecheck.rules import torch_ops as ops
from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.scopes import scope_of
from shapecheck.rules.tensor_helpers import keyword, method_call, name_of, positional, short, torch_name

_CONCRETE = {CPU, CUDA, MPS, MAYBE_CUDA}
_WORDS = {CPU: "the CPU", CUDA: "CUDA", MPS: "MPS", MAYBE_CUDA: "CUDA when it is available"}

#: Arithmetic operators whose operands must share a device.
_DEVICE_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide,
                     cst.Modulo, cst.Power, cst.MatrixMultiply, cst.BitAnd, cst.BitOr, cst.BitXor)
#: torch functions whose tensor arguments must share a device (positional, or a list first).
_DEVICE_FUNCTIONS = {"add", "sub", "mul", "div", "matmul", "mm", "bmm", "dot", "where", "maximum",
                     "minimum", "cdist", "outer", "cross", "lerp", "addmm", "baddbmm", "einsum"}
_LIST_FUNCTIONS = {"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"}
_DEVICE_METHODS = {"add", "sub", "mul", "div", "matmul", "mm", "bmm", "dot", "add_", "sub_",
                   "mul_", "div_", "maximum", "minimum", "lerp", "lerp_"}


def _device(fact: Fact) -> Optional[str]:
    device = fact.device
    if device is None or device.startswith("same-as"):
        return None
    if device.startswith("cuda"):
        return CUDA
    return device if device in _CONCRETE else None


def _conflict(a: str, b: str) -> Optional[str]:
    """``"always"``, ``"when CUDA is available"``, or ``None`` when the devices can agree."""
    if a == b or {a, b} == {CUDA, MAYBE_CUDA}:
        return None
    if MAYBE_CUDA in (a, b):
        return "when CUDA is available" if CPU in (a, b) else "always"
    return "always"


def _when(when: str) -> str:
    """`` when CUDA is available`` for messages; nothing for a failure on every machine."""
    return "" if when == "always" else f" {when}"


def _multi_dim_cpu(fact: Fact) -> bool:
    """A CPU tensor that is surely not 0-dim (0-dim CPU tensors mix with CUDA ones legally)."""
    return (
        fact.kind == TENSOR
        and not fact.is_scalar_cpu
        and fact.shape is not None
        and fact.shape.rank is not None
        and fact.shape.rank >= 1
    )


def _operands(ctx, node: cst.CSTNode) -> Optional[tuple[str, list[cst.BaseExpression]]]:
    """``(what, tensor operands)`` for an op whose operands must share a device."""
    if isinstance(node, cst.BinaryOperation):
        if isinstance(node.operator, _DEVICE_OPERATORS):
            return ctx.source(node.operator).strip(), [node.left, node.right]
        return None
    if not isinstance(node, cst.Call):
        return None
    name = torch_name(ctx, node.func)
    args = positional(node)
    if name in _LIST_FUNCTIONS and args and isinstance(args[0], (cst.List, cst.Tuple)):
        return f"torch.{name}", [e.value for e in args[0].elements if isinstance(e, cst.Element)]
    if name in _DEVICE_FUNCTIONS:
        if name == "einsum":
            args = args[1:]
        return f"torch.{name}", args
    call = method_call(node)
    if name is None and call is not None and call[1] in _DEVICE_METHODS and len(args) == 1:
        return f".{call[1]}()", [call[0], args[0]]
    return None


@register
class CrossDeviceOperation(Rule):
    code = "SC401"
    name = "cross-device-operation"
    severity = "error"
    summary = "tensors (or a module and its input) on different devices meet in one op"
    doc = """\
## What it does
Flags two tensors known to live on different devices meeting in an arithmetic operator,
a torch function (`torch.cat`, `torch.stack`, `torch.matmul`, `torch.where`...) or a method
(`x.add(y)`), and a module moved with `.cuda()`/`.to(device)` called on a tensor left on the
CPU. A `device` chosen with `torch.device("cuda" if torch.cuda.is_available() else "cpu")` may
be CUDA: a tensor moved there that meets a fresh CPU tensor fails when CUDA is available.
0-dim CPU tensors and Python numbers mix with CUDA tensors legally and are not flagged.

## Why is this bad?
Kernels run on one device; torch does not copy operands for you and raises
`RuntimeError: Expected all tensors to be on the same device`. Code developed on a laptop
without a GPU passes every test and then fails on the first GPU machine.

## Example
```python
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = Net().to(device)
x = torch.randn(8, 4)
out = model(x)                # fails on a GPU machine
```

## Use instead
```python
x = torch.randn(8, 4, device=device)
out = model(x)
```
"""
    valid = (
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.randn(3).to(device)\ny = torch.randn(3, device=device)\nz = x + y\n",
        "import torch\nx = torch.randn(3).cuda()\ns = torch.randn(5).sum()\nz = x * s\n",
        "import torch\nx = torch.randn(3).cuda()\nz = x * 2.0 + torch.tensor(1.0)\n",
        "import torch\nx = torch.randn(3).cuda()\ny = torch.zeros(3, device=x.device)\nz = x + y\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nmodel.cuda()\nout = model(torch.randn(8, 4).cuda())\n",
        "import torch\nx = torch.randn(3).cuda()\ny = torch.randn(3)\nz = x + y.cuda()\n",
    )
    invalid = (
        "import torch\nx = torch.tensor([1.0])\ny = torch.tensor([2.0]).cuda()\nz = x + y  # <--\n",
        "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nx = torch.randn(8, 4)\nout = model(x)  # <--\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nmodel.cuda()\nout = model(torch.randn(8, 4))  # <--\n",
        "import torch\na = torch.ones(2, 3).cuda()\nb = torch.ones(2, 3)\nc = torch.cat([a, b])  # <--\n",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        self._check(node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if self._check(node, ctx):
            return
        callee = ctx.fact(node.func)
        args = positional(node)
        if callee.kind != MODULE or not args:
            return
        module_device = _device(callee)
        if module_device is None:
            return
        if module_device == CPU and not (callee.qual or "").startswith("torch.nn."):
            return  # `forward` of a class of this file may move its input to the CPU itself
        for arg in args:
            fact = ctx.fact(arg)
            device = _device(fact)
            if fact.kind != TENSOR or device is None:
                continue
            cpu_side = fact if device == CPU else None
            when = _conflict(module_device, device)
            if when is None or (cpu_side is not None and not _multi_dim_cpu(cpu_side)):
                continue
            module = short(ctx, node.func)
            ctx.report(
                node,
                f"module `{module}` is on {_WORDS[module_device]} but its input "
                f"`{short(ctx, arg)}` is on {_WORDS[device]}: the call raises RuntimeError "
                f"(Expected all tensors to be on the same device){_when(when)}; move the input "
                f"with `.to(device)`",
            )
            return

    def _check(self, node: cst.CSTNode, ctx) -> bool:
        found = _operands(ctx, node)
        if found is None:
            return False
        what, operands = found
        placed = []
        for operand in operands:
            fact = ctx.fact(operand)
            device = _device(fact)
            if fact.kind == TENSOR and device is not None:
                placed.append((operand, fact, device))
        for i, (a, fa, da) in enumerate(placed):
            for b, fb, db in placed[i + 1:]:
                when = _conflict(da, db)
                if when is None:
                    continue
                if (da == CPU and not _multi_dim_cpu(fa)) or (db == CPU and not _multi_dim_cpu(fb)):
                    continue
                ctx.report(
                    node,
                    f"`{short(ctx, a)}` is on {_WORDS[da]} and `{short(ctx, b)}` is on "
                    f"{_WORDS[db]}: `{what}` raises RuntimeError (Expected all tensors to be on "
                    f"the same device){_when(when)}; move one with "
                    f"`.to({short(ctx, b if da == CPU else a)}.device)`",
                )
                return True
        return True


@register
class DiscardedDeviceMove(Rule):
    code = "SC402"
    name = "discarded-device-move"
    severity = "error"
    summary = "`x.cuda()`/`x.to(...)`/`x.float()` on a tensor as a statement: the result is lost"
    fixable = True
    doc = """\
## What it does
Flags `x.cuda()`, `x.cpu()`, `x.to(...)`, `x.float()`, `x.half()`, `x.long()` and the like
used as a statement, when `x` is known to be a tensor. Modules are not flagged: `model.cuda()`
moves a module in place and is correct; receivers of unknown kind are not flagged either.

## Why is this bad?
On a tensor these methods return a new tensor and leave `x` where it was. The statement does the
copy and throws it away; `x` stays on the CPU (or keeps its dtype), and the next op that meets a
CUDA tensor fails.

## Example
```python
x = torch.randn(3)
x.cuda()                      # x is still on the CPU
```

## Use instead
```python
x = x.cuda()
```
The fix assigns the result back to the receiver. It is safe for a name local to its function
(or a module-level statement). It is unsafe (`--unsafe-fixes`) for a name declared `global` or
`nonlocal` (another scope sees the change), for a leaf that requires grad (the new binding is no
leaf: its `.grad` stays `None` and an optimizer refuses it), and for an attribute (a parameter
slot refuses a plain tensor). There is no fix for a name the function only reads (assigning it
would make it local: `UnboundLocalError`) nor for a parameter (`self.w.double()`: convert the
module, `self.double()`, which converts its parameters in place).
"""
    valid = (
        "import torch\nx = torch.randn(3)\nx = x.cuda()\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 3)\nmodel.cuda()\nmodel.to('cpu')\nmodel.float()\n",
        "def prepare(model):\n    model.cuda()\n",
        "import torch\nx = torch.randn(3)\ny = x.to(torch.float16)\n",
    )
    invalid = (
        Example(
            "import torch\nx = torch.randn(3)\nx.cuda()  # <--\n",
            fixed="import torch\nx = torch.randn(3)\nx = x.cuda()  # <--\n",
        ),
        Example(
            "import torch\nx = torch.randn(3)\nx.to('cuda')  # <--\n",
            fixed="import torch\nx = torch.randn(3)\nx = x.to('cuda')  # <--\n",
        ),
        Example(
            "import torch\nidx = torch.tensor([1, 2])\nidx.float()  # <--\n",
            fixed="import torch\nidx = torch.tensor([1, 2])\nidx = idx.float()  # <--\n",
        ),
        Example(
            "import torch\ndef scale(n):\n    y = torch.ones(n)\n    y.double()  # <--\n    return y\n",
            fixed="import torch\ndef scale(n):\n    y = torch.ones(n)\n    y = y.double()  # <--\n    return y\n",
        ),
        # a module-level name read in a function: `x = x.double()` there raises UnboundLocalError
        "import torch\nx = torch.randn(3)\ndef show():\n    print(x.dtype)\n    x.double()  # <--\n",
        # a parameter slot refuses a plain tensor: no fix
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n"
        "    def forward(self, x):\n        self.w.double()  # <--\n        return x * self.w\n",
        Example(
            "import torch\nx = None\ndef make():\n    global x\n    x = torch.zeros(2)\n    x.double()  # <--\n",
            unsafe_fixed="import torch\nx = None\ndef make():\n    global x\n    x = torch.zeros(2)\n"
            "    x = x.double()  # <--\n",
        ),
        Example(
            "import torch\nw = torch.randn(3, requires_grad=True)\nw.double()  # <--\n",
            unsafe_fixed="import torch\nw = torch.randn(3, requires_grad=True)\nw = w.double()  # <--\n",
        ),
    )

    def visit_Expr(self, node: cst.Expr, ctx) -> None:
        call = method_call(node.value)
        if call is None or call[1] not in ops.MOVE_METHODS:
            return
        receiver, method = call
        if method == "type" and not node.value.args:
            return
        fact = ctx.fact(receiver)
        if fact.kind != TENSOR:
            return
        name = short(ctx, receiver)
        moved = short(ctx, node.value)
        safety, advice = _assign_back(ctx, node, receiver, fact)
        if advice is None:
            advice = f"write `{name} = {moved}`"
        fix = None
        if safety is not None:
            fix = Fix(node, cst.Assign(
                targets=[cst.AssignTarget(target=receiver)], value=node.value, semicolon=node.semicolon,
            ), safe=safety)
        ctx.report(
            node,
            f"`{moved}` returns a new tensor and leaves `{name}` unchanged; "
            f"the result is thrown away, so `{name}` keeps its old device and dtype; {advice}",
            fix=fix,
        )


#: Tensor attributes that are properties (``x.T``, ``x.grad``...): assigning one fails or does
#: something else than rebinding (``x.real = y`` copies into ``x``, ``x.data = y`` swaps its storage).
_TENSOR_PROPERTIES = frozenset({"T", "mT", "H", "mH", "real", "imag", "data", "grad", "grad_fn",
                                "shape", "device", "dtype", "layout", "is_leaf", "requires_grad"})


def _assign_back(ctx, node: cst.Expr, receiver: cst.BaseExpression, fact: Fact):
    """How safe ``receiver = receiver.move(...)`` is: ``(True, None)`` safe, ``(False, None)``
    unsafe, ``(None, advice)`` no fix, with the advice that replaces "write `x = x.cuda()`".

    Unsafe: a name declared ``global``/``nonlocal`` (another scope's name changes), a leaf that
    requires grad (the new binding is not a leaf: its ``.grad`` stays ``None`` and an optimizer
    refuses it), an attribute (it may be a ``nn.Parameter`` slot, which refuses a plain tensor
    with TypeError, or a property). No fix: a name the scope only reads (assigning it makes it
    local there: UnboundLocalError at every read), an attribute that requires grad (most likely a
    parameter), a tensor property, anything else than a dotted name.
    """
    from shapecheck.semantic.facts import LEAF_REQUIRES_GRAD
    from shapecheck.rules import fix_safety

    keep = f"keep the result in a name (`y = {short(ctx, node.value)}`) and use that"
    if isinstance(receiver, cst.Attribute):
        if name_of(receiver) is None or receiver.attr.value in _TENSOR_PROPERTIES:
            return None, keep  # `t.T = ...` raises; `t[0] = ...` copies back into t's dtype
        owner = ctx.fact(receiver.value)
        parameter = receiver.attr.value in (owner.params or ()) if owner.kind == MODULE else False
        if parameter or fact.grad == LEAF_REQUIRES_GRAD:
            on_module = node.value.with_changes(func=node.value.func.with_changes(value=receiver.value))
            return None, (f"`{short(ctx, receiver)}` is a leaf that requires grad, most likely a parameter, "
                          f"which refuses a plain tensor: if `{short(ctx, receiver.value)}` is a module, "
                          f"`{short(ctx, on_module)}` converts its parameters in place")
        return False, None
    if not isinstance(receiver, cst.Name):
        return None, keep
    place = fix_safety.place_of(ctx, node)
    scope = fix_safety.name_scope(place, receiver.value) if place is not None else None
    if scope == fix_safety.FREE:
        where = place.scope.name.value if place is not None and place.scope is not None else "here"
        call = short(ctx, node.value)
        return None, (f"assign the result where `{receiver.value}` is defined: `{receiver.value}` is "
                      f"not local to `{where}`, and `{receiver.value} = {call}` there would raise "
                      f"UnboundLocalError")
    if scope is None:
        return None, None
    return scope == fix_safety.LOCAL and fact.grad != LEAF_REQUIRES_GRAD, None


def _nonzero_rank_factory(ctx, node: cst.CSTNode, ints: frozenset = frozenset()) -> Optional[str]:
    """``"zeros"`` etc. for a torch factory call without ``device=`` that is surely not 0-dim.

    ``ints`` holds names known to be bound to one Python int (``n = x.shape[-1]``).
    """
    if not isinstance(node, cst.Call):
        return None
    name = torch_name(ctx, node.func)
    if name not in ops.FACTORIES or keyword(node, "device") is not None:
        return None
    if any(arg.star == "**" for arg in node.args):
        return None  # `**options` may hold a device
    args = positional(node)
    if name in ("arange", "linspace", "logspace", "eye", "randperm"):
        return name if args or node.args else None
    if name in ("tensor", "as_tensor"):
        if args and isinstance(args[0], (cst.List, cst.Tuple)) and args[0].elements:
            return name
        return None
    sizes = args
    if name == "full":
        sizes = args[:1]
    elif name == "randint":
        size_kw = keyword(node, "size")
        sizes = [size_kw.value] if size_kw is not None else args[2:3] if len(args) >= 3 else args[1:2]
        sizes = [s for s in sizes if isinstance(s, (cst.Tuple, cst.List))]
    if not sizes:
        size_kw = keyword(node, "size")
        sizes = [size_kw.value] if size_kw is not None else []
    if not sizes:
        return None
    first = sizes[0]
    if isinstance(first, (cst.Tuple, cst.List)):
        return name if first.elements else None
    if isinstance(first, cst.Integer) or len(sizes) >= 2:
        return name
    fact = ctx.fact(first)
    if fact.kind == INT or (fact.kind == SIZE and fact.shape is not None and fact.shape.rank):
        return name
    if isinstance(first, cst.Name) and first.value in ints:
        return name
    return name if _is_size_int(first) else None


def _is_size_int(expr: cst.BaseExpression) -> bool:
    """``x.shape[i]``, ``x.size(i)``, ``len(x)``: expressions that are surely one int."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute):
        return expr.value.attr.value == "shape" and len(expr.slice) == 1 and isinstance(
            expr.slice[0].slice, cst.Index
        )
    call = method_call(expr)
    if call is not None and call[1] == "size" and len(expr.args) == 1:  # type: ignore[union-attr]
        return True
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len"


_FLOAT_FACTORIES = {"zeros", "ones", "empty", "rand", "randn", "full", "linspace", "logspace", "eye"}

#: torch calls that build a new tensor from data: the result is on the CPU whatever the input.
_FRESH = ops.FACTORIES | {"Tensor", "FloatTensor", "LongTensor", "from_numpy"}

_DEVICE_CHANGING = {"to", "cuda", "cpu", "type", "mps", "new_zeros", "new_ones", "new_empty",
                    "new_full", "new_tensor", "item", "tolist", "numpy", "size", "dim"}


def _is_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    return isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float))


_JAXTYPING = {"Float", "Int", "Bool", "Shaped", "Real", "Num", "Inexact", "Integer", "Complex",
              "UInt", "Float32", "Float16", "BFloat16", "Float64", "Int64", "Int32"}


def _annotated_tensor(param: cst.Param) -> bool:
    """True for ``x: Tensor``, ``x: torch.Tensor``, ``x: Optional[Tensor]``, ``x: Float[Tensor, "b c"]``."""
    if param.annotation is None:
        return False
    annotation = param.annotation.annotation
    if isinstance(annotation, cst.Subscript) and name_of(annotation.value) in ("Optional", "typing.Optional"):
        inner = annotation.slice[0].slice
        annotation = inner.value if isinstance(inner, cst.Index) else annotation
    dotted = name_of(annotation)
    if dotted is not None:
        return dotted.split(".")[-1] == "Tensor"
    if isinstance(annotation, cst.Subscript):
        head = name_of(annotation.value)
        return head is not None and head.split(".")[-1] in _JAXTYPING
    return False


_NOT_TENSOR_METHODS = {"size", "dim", "numel", "item", "tolist", "numpy", "nelement", "stride",
                       "data_ptr", "element_size", "is_contiguous", "__len__", "get_device"}


def _params(function: cst.FunctionDef) -> dict[str, cst.Param]:
    """The parameters of ``function`` by name (``*args``/``**kwargs`` excluded)."""
    p = function.params
    return {param.name.value: param for param in (*p.posonly_params, *p.params, *p.kwonly_params)}


def _is_module_attr(expr: cst.BaseExpression) -> bool:
    """``self.fc``, ``self.encoder.layer``: an attribute chain on ``self`` (a submodule when called)."""
    dotted = name_of(expr)
    return dotted is not None and dotted.startswith("self.")


def _keeps_tensor(ctx, name: str, value: cst.BaseExpression) -> bool:
    """True when ``name = value`` leaves ``name`` computed from its old tensor (``x = f(x)``)."""
    root = value
    while True:
        call = method_call(root)
        if call is not None and torch_name(ctx, root.func) is None:  # type: ignore[union-attr]
            root = call[0]
            continue
        break
    if isinstance(root, cst.Call) and torch_name(ctx, root.func) in _FRESH:
        return False
    from shapecheck.rules.autograd_graph import names_read

    return name in names_read(value)


@register
class FactoryWithoutDevice(Rule):
    code = "SC403"
    name = "factory-without-device"
    severity = "warning"
    summary = "a tensor created without `device=` meets an input tensor of unknown device"
    fixable = True
    doc = """\
## What it does
Inside `nn.Module.forward`, and in any function whose tensor parameters may live on any
device, flags a factory (`torch.zeros`, `torch.ones`, `torch.arange`, `torch.tensor([...])`...)
called without `device=` whose result meets a parameter tensor in an operator or in
`torch.cat`/`torch.stack`/`torch.where`. 0-dim factories (`torch.tensor(1.0)`) mix with any
device and are not flagged.

## Why is this bad?
A factory without `device=` builds its tensor on the CPU. The function works as long as its
inputs are CPU tensors, and raises `RuntimeError: Expected all tensors to be on the same device`
as soon as the model and its inputs move to the GPU.

## Example
```python
def forward(self, x):
    mask = torch.ones(x.shape[-1])
    return x * mask           # fails for a CUDA x
```

## Use instead
```python
def forward(self, x):
    mask = torch.ones(x.shape[-1], device=x.device)
    return x * mask
```
The fix adds `device=x.device` to the factory call. Pass `dtype=x.dtype` too when the result
should follow the input's precision (the fix leaves the dtype as it was). The fix is safe when
`x` is annotated as a tensor (or used as one) and never rebound in the function; otherwise it is
unsafe (`--unsafe-fixes`): an unannotated `forward(self, x)` may receive a float, which adds to a
tensor but has no `.device`. A factory inside a lambda or comprehension gets no fix.
"""
    valid = (
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones(x.shape[-1], device=x.device)\n        return x * mask\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x * torch.tensor(0.5)\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x * 2.0\n",
        "import torch\ndef f(x):\n    x = x.cpu()\n    return x + torch.zeros(3)\n",
        "import torch\ndef g(n):\n    return n + torch.zeros(3)\n",
    )
    invalid = (
        Example(
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.zeros(10)  # <--\n",
            unsafe_fixed="import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.zeros(10, device=x.device)  # <--\n",
        ),
        Example(
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        return x + torch.zeros(10)  # <--\n",
            fixed="import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        return x + torch.zeros(10, device=x.device)  # <--\n",
        ),
        Example(
            "import torch\nfrom torch import Tensor\ndef f(x: Tensor) -> Tensor:\n    h = x * 2\n"
            "    x = x.shape\n    return h + torch.zeros(3)  # <--\n",
            unsafe_fixed="import torch\nfrom torch import Tensor\ndef f(x: Tensor) -> Tensor:\n    h = x * 2\n"
            "    x = x.shape\n    return h + torch.zeros(3, device=x.device)  # <--\n",
        ),
        Example(
            "import torch\nfrom torch import Tensor\ndef add_bias(x: Tensor) -> Tensor:\n"
            "    bias = torch.arange(4)\n    return x + bias  # <--\n",
            fixed="import torch\nfrom torch import Tensor\ndef add_bias(x: Tensor) -> Tensor:\n"
            "    bias = torch.arange(4, device=x.device)\n    return x + bias  # <--\n",
        ),
        Example(
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, h):\n"
            "        pad = torch.zeros(2, 3)\n        return torch.cat([h, pad], dim=0)  # <--\n",
            unsafe_fixed="import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, h):\n"
            "        pad = torch.zeros(2, 3, device=h.device)\n        return torch.cat([h, pad], dim=0)  # <--\n",
        ),
    )

    def __init__(self) -> None:
        self._factories: dict[tuple[int, str], cst.Call] = {}
        self._ints: dict[int, set[str]] = {}
        # parameters rebound to something not computed from them (`x = torch.Tensor(x)`)
        self._lost: set[tuple[int, str]] = set()
        # local names bound to a tensor computed from a parameter (`h = self.fc(x)`)
        self._derived: dict[tuple[int, str], str] = {}
        self._eligible: dict[int, bool] = {}

    def _in_scope(self, ctx) -> bool:
        """True inside a function that has a tensor parameter: ``forward`` of an ``nn.Module``
        (unannotated parameters count), or any function with a tensor-annotated parameter."""
        function = getattr(ctx, "function", None)
        if function is None:
            return False
        key = id(function)
        eligible = self._eligible.get(key)
        if eligible is None:
            in_forward = getattr(ctx, "in_module_class", None) is True and function.name.value == "forward"
            eligible = any(
                _annotated_tensor(p) or (in_forward and p.annotation is None and p.name.value != "self")
                for p in _params(function).values()
            )
            self._eligible[key] = eligible
        return eligible

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        if not self._in_scope(ctx):
            return
        function = scope_of(ctx, node).function
        ints = self._ints.setdefault(id(function), set())
        for target in node.targets:
            names = [target.target] if isinstance(target.target, cst.Name) else [
                e.value for e in getattr(target.target, "elements", ()) if isinstance(e.value, cst.Name)
            ]
            unpacks_shape = isinstance(node.value, cst.Attribute) and node.value.attr.value == "shape"
            for name in names:
                if _is_size_int(node.value) or (unpacks_shape and name is not target.target):
                    ints.add(name.value)
                else:
                    ints.discard(name.value)
            if isinstance(target.target, cst.Name):
                key = (id(function), target.target.value)
                is_param = function is not None and target.target.value in _params(function)
                if is_param and not _keeps_tensor(ctx, target.target.value, node.value):
                    self._lost.add(key)
                if not is_param:
                    derived = None
                    if function is not None:
                        scope = scope_of(ctx, node)
                        in_forward = scope.module_class and function.name.value == "forward"
                        derived = self._tensor_from(node.value, function, ctx, in_forward)
                    if derived is not None:
                        self._derived[key] = derived
                    else:
                        self._derived.pop(key, None)
                made = self._factory(node.value, function, ctx)
                if made is not None:
                    self._factories[key] = made
                else:
                    self._factories.pop(key, None)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        self._check(node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        self._check(node, ctx)

    def _factory(self, expr: cst.BaseExpression, function, ctx) -> Optional[cst.Call]:
        """The factory call (without ``device=``) that ``expr`` is computed from, if any.

        Follows methods that keep the device (``.triu(1)``, ``.float()``), arithmetic with
        Python numbers (``mask * 1e9``) and names bound to such values in this function.
        """
        ints = frozenset(self._ints.get(id(function), ()))
        while True:
            if _nonzero_rank_factory(ctx, expr, ints) is not None:
                return expr  # type: ignore[return-value]
            if isinstance(expr, cst.Name):
                return self._factories.get((id(function), expr.value))
            call = method_call(expr)
            if call is not None and torch_name(ctx, expr.func) is None:  # type: ignore[union-attr]
                if call[1] in _DEVICE_CHANGING:
                    return None
                expr = call[0]
                continue
            if isinstance(expr, cst.UnaryOperation):
                expr = expr.expression
                continue
            if isinstance(expr, cst.BinaryOperation):
                if _is_number(expr.right):
                    expr = expr.left
                    continue
                if _is_number(expr.left):
                    expr = expr.right
                    continue
            return None

    def _param_tensor(self, expr: cst.BaseExpression, scope, ctx) -> Optional[str]:
        """The parameter name when ``expr`` is a tensor computed from a tensor parameter."""
        function = scope.function
        if function is None:
            return None
        in_forward = scope.module_class and function.name.value == "forward"
        param_name = self._tensor_from(expr, function, ctx, in_forward)
        if param_name is None:
            return None
        fact = ctx.fact(expr)
        if fact.device is not None and not fact.device.startswith("same-as"):
            return None
        if fact.kind not in (None, TENSOR):
            return None
        return param_name

    def _tensor_from(self, expr: cst.BaseExpression, function, ctx, in_forward: bool) -> Optional[str]:
        """The tensor parameter that ``expr`` is computed from, following tensor ops only.

        A parameter counts when annotated as a tensor, or, in ``nn.Module.forward``, when it
        has no annotation.

        ``x``, ``x[0]``, ``x.float().t()``, ``h`` after ``h = self.fc(x)``, ``F.relu(h) * 2``;
        not ``x.shape[0]`` or ``x.size(1)`` (Python ints).
        """
        fid = id(function)
        while True:
            if isinstance(expr, cst.Name):
                if expr.value in ("self", "cls") or (fid, expr.value) in self._lost:
                    return None
                param = _params(function).get(expr.value)
                if param is not None:
                    tensor = _annotated_tensor(param) or (in_forward and param.annotation is None)
                    return expr.value if tensor else None
                return self._derived.get((fid, expr.value))
            if isinstance(expr, cst.Subscript):
                if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
                    return None
                expr = expr.value
                continue
            if isinstance(expr, cst.Attribute) and expr.attr.value in ("T", "mT", "H", "mH"):
                expr = expr.value
                continue
            if isinstance(expr, cst.BinaryOperation):
                return (self._tensor_from(expr.left, function, ctx, in_forward)
                        or self._tensor_from(expr.right, function, ctx, in_forward))
            if not isinstance(expr, cst.Call):
                return None
            name = torch_name(ctx, expr.func)
            call = method_call(expr)
            if name is None and call is not None and not _is_module_attr(expr.func):
                if call[1] in _NOT_TENSOR_METHODS or call[1] in _DEVICE_CHANGING:
                    return None
                expr = call[0]
                continue
            args = positional(expr)
            if not args:
                return None
            if name is not None and (name in _FRESH or name.startswith("nn.init")):
                return None
            if name is not None or _is_module_attr(expr.func):
                expr = args[0]
                continue
            return None

    @staticmethod
    def _dtype_hint(call: cst.Call, param: str, ctx) -> str:
        """For a float factory without ``dtype=``: a hint to follow the input's dtype too."""
        if keyword(call, "dtype") is not None or torch_name(ctx, call.func) not in _FLOAT_FACTORIES:
            return ""
        return f" (and `dtype={param}.dtype` if it should follow the input's precision)"

    def _check(self, node: cst.CSTNode, ctx) -> None:
        if not self._in_scope(ctx):
            return
        found = _operands(ctx, node)
        if found is None:
            return
        what, operands = found
        scope = scope_of(ctx, node)
        factories = [(op, self._factory(op, scope.function, ctx)) for op in operands]
        made = [(op, call) for op, call in factories if call is not None]
        if not made:
            return
        for operand in operands:
            if any(operand is op for op, _ in made):
                continue
            param = self._param_tensor(operand, scope, ctx)
            if param is None:
                continue
            op, call = made[0]
            if ctx.fact(call).device != CPU:
                return  # the file changes the default device: the factory may not be on the CPU
            fixed = call.with_changes(args=[
                *call.args[:-1],
                call.args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(
                    keyword=cst.Name("device"),
                    value=cst.parse_expression(f"{param}.device"),
                    equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                          whitespace_after=cst.SimpleWhitespace("")),
                ),
            ])
            safety = self._fix_safety(ctx, call, scope.function, param)
            ctx.report(
                node,
                f"`{short(ctx, call)}` is created on the CPU (no `device=`) and meets "
                f"`{short(ctx, operand)}`, computed from the input `{param}`: `{what}` raises "
                f"RuntimeError (Expected all tensors to be on the same device) when `{param}` "
                f"is on the GPU; pass `device={param}.device`{self._dtype_hint(call, param, ctx)}",
                fix=Fix(call, fixed, safe=safety) if safety is not None else None,
            )
            return

    @staticmethod
    def _fix_safety(ctx, call: cst.Call, function: cst.FunctionDef, param: str) -> Optional[bool]:
        """Whether adding ``device=param.device`` to ``call`` is safe (True), unsafe (False) or
        not offered (None).

        ``param`` must denote the parameter where the factory runs: no fix inside a nested
        scope (a lambda or comprehension may bind the same name) or in another function. It is
        unsafe when the function rebinds ``param`` (``x = x.shape`` leaves no ``.device``) or
        when nothing shows that it is a tensor (an unannotated ``forward(self, x)`` may be
        called with a float, which adds to a tensor but has no ``.device``).
        """
        from shapecheck.rules import fix_safety

        place = fix_safety.place_of(ctx, call)
        if place is None or place.scope is not function or place.in_inner_scope:
            return None
        rebound = fix_safety.rebound(place, param)
        if rebound is None:
            return None
        declared = _params(function).get(param)
        evidence = declared is not None and _annotated_tensor(declared)
        if declared is not None and not evidence and not rebound:
            evidence = ctx.fact(declared.name).kind == TENSOR  # its binding where the hook runs
        return evidence and not rebound


@register
class NumpyOnCuda(Rule):
    code = "SC404"
    needs = ("numpy",)
    name = "numpy-on-cuda"
    severity = "error"
    summary = "`.numpy()` on a CUDA tensor"
    fixable = True
    doc = """\
## What it does
Flags `t.numpy()` where `t` is known to live on CUDA (`.cuda()`, `.to("cuda")`,
`device="cuda"`), or on a `device` that is CUDA when available.

## Why is this bad?
A NumPy array lives in host memory and cannot view GPU memory: torch raises `TypeError: can't
convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory
first.`

## Example
```python
x = torch.randn(3).cuda()
a = x.numpy()                 # TypeError
```

## Use instead
```python
a = x.cpu().numpy()
```
The fix inserts `.cpu()` before `.numpy()`; on a CPU tensor `.cpu()` returns the tensor itself.
"""
    valid = (
        "import torch\nx = torch.randn(3).cuda()\na = x.cpu().numpy()\n",
        "import torch\nx = torch.randn(3)\na = x.numpy()\n",
        "import torch\nx = torch.randn(3).cuda()\nx = x.cpu()\na = x.numpy()\n",
    )
    invalid = (
        Example(
            "import torch\nx = torch.randn(3).cuda()\na = x.numpy()  # <--\n",
            fixed="import torch\nx = torch.randn(3).cuda()\na = x.cpu().numpy()  # <--\n",
        ),
        Example(
            "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "x = torch.randn(3, device=device)\na = x.numpy()  # <--\n",
            fixed="import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
            "x = torch.randn(3, device=device)\na = x.cpu().numpy()  # <--\n",
        ),
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        call = method_call(node)
        if call is None or call[1] != "numpy" or node.args:
            return
        receiver = call[0]
        fact = ctx.fact(receiver)
        device = _device(fact)
        if fact.kind != TENSOR or device not in (CUDA, MAYBE_CUDA):
            return
        moved = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("cpu")))
        fix = Fix(node.func, node.func.with_changes(value=moved))
        name = short(ctx, receiver)
        when = "" if device == CUDA else " when CUDA is available"
        ctx.report(
            node,
            f"`{name}` is on {_WORDS[device]}, so `{name}.numpy()` raises TypeError{when} "
            f"(can't convert cuda:0 device type tensor to numpy); use `{name}.cpu().numpy()`",
            fix=fix,
        )
