"""SC403 factory-without-device: a tensor created without `device=` meets an input tensor of unknown
device."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.device.factory_calls import factory_aliases
from shapecheck.rules.device.function_scan import FunctionSyntax, scan_syntax
from shapecheck.rules.device.helper_results import placing_tensor, returned_factories, returned_items, tested
from shapecheck.rules.device.input_attributes import container_annotation, input_attribute
from shapecheck.rules.device.method_inputs import Feeds, fed_layer, record_feed
from shapecheck.rules.device.moved_values import Moved, moved_module, moved_to
from shapecheck.rules.device.operands import same_device_operands
from shapecheck.rules.device.placement import DEVICE_WORDS, known_device, placed_note, placed_place
from shapecheck.rules.helpers import fix_safety
from shapecheck.rules.helpers.annotations import unwrap_optional
from shapecheck.rules.helpers.calls import (
    dotted_name, is_name, is_number, keyword, method_call, positional, torch_name,
)
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.evidence import PARAMETERS, scan_function
from shapecheck.semantic.saved_tensors import names_read
from shapecheck.rules.helpers.scopes import scope_of
from shapecheck.semantic.facts import (
    BOOL, CPU, CUDA, FLOAT, INT, LEAF_REQUIRES_GRAD, META, MODULE, MPS, SIZE, TENSOR, SameDeviceAs,
)
from shapecheck.semantic.walk import walk
from shapecheck.semantic.torch_api import (
    DTYPE_KINDS, FACTORIES, FACTORIES_AND_LEGACY, FLOAT_DEFAULT_FACTORIES, LEGACY_TENSOR_CLASSES, NEW_TENSOR_METHODS,
    TENSOR_DEVICE_METHODS, TENSOR_METADATA_METHODS, TENSOR_TO_PYTHON_METHODS,
)


def _indexed_to_scalar(ctx, factory: cst.Call, picked: int) -> bool:
    """True when ``picked`` int indices leave no dim of what ``factory`` makes (``torch.rand(2)[1]``
    is 0-dim, and a 0-dim CPU tensor mixes with any device)."""
    sizes = ctx.factory_sizes(factory)
    return sizes is not None and len(sizes[1]) <= picked


def _nonzero_rank_factory(ctx, node: cst.CSTNode, ints: frozenset = frozenset()) -> Optional[str]:
    """``"zeros"`` etc. for a torch factory call without ``device=`` that is surely not 0-dim.

    ``ints`` holds names known to be bound to one Python int (``n = x.shape[-1]``).
    """
    if type(node) is not cst.Call:
        return None
    name = torch_name(ctx, node.func)
    if name in LEGACY_TENSOR_CLASSES:
        return name if _legacy_data(ctx, node) else None
    if name not in FACTORIES or keyword(node, "device") is not None:
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
    if type(first) is cst.Integer or len(sizes) >= 2:
        return name
    fact = ctx.fact(first)
    if fact.kind == INT or (fact.kind == SIZE and fact.shape is not None and fact.shape.rank):
        return name
    if type(first) is cst.Name and first.value in ints:
        return name
    return name if _is_size_int(first) else None


def _legacy_data(ctx, node: cst.Call) -> bool:
    """``torch.LongTensor([[1, 2]])`` or ``torch.FloatTensor(2, 3)``: a legacy constructor of a
    tensor that is not 0-dim, from a list or tuple display or from int sizes."""
    args = positional(node)
    if not args or len(args) != len(node.args):
        return False
    if len(args) == 1 and isinstance(args[0], (cst.List, cst.Tuple)):
        return bool(args[0].elements)
    return all(type(a) is cst.Integer or ctx.fact(a).kind == INT for a in args)


def _cpu_words(ctx, call: cst.Call) -> str:
    """Why ``call`` makes a CPU tensor, as the messages say it."""
    name = torch_name(ctx, call.func)
    return f"(`torch.{name}` makes CPU tensors only)" if name in LEGACY_TENSOR_CLASSES else "(no `device=`)"


def _device_words(ctx, call: cst.Call, device: str = "") -> str:
    """The change the messages name: pass ``device=`` (with ``device`` when known); a legacy
    constructor takes no CUDA device, so the tensor is made with ``torch.tensor`` instead."""
    name = torch_name(ctx, call.func)
    if name not in LEGACY_TENSOR_CLASSES:
        return f"pass `device={device}`"
    dtype = "torch.long" if name == "LongTensor" else "torch.float"
    return f"create it with `torch.tensor(..., dtype={dtype}, device={device or '...'})` instead"


#: torch functions of one tensor whose result is on its device (``torch.sin(pos)``)
_ELEMENTWISE = frozenset({"sin", "cos", "exp", "log", "sqrt", "rsqrt", "abs", "neg", "sigmoid", "tanh", "relu",
                          "floor", "ceil", "round", "reciprocal", "tril", "triu"})

#: torch functions of one tensor and plain numbers whose result is on that tensor's device
#: (``torch.argsort(noise, dim=1)``, ``F.softmax(att, dim=-1)``)
_ONE_TENSOR = frozenset({"argsort", "cumsum", "cumprod", "softmax", "log_softmax", "flip", "roll", "clamp",
                         "nn.functional.softmax", "nn.functional.log_softmax"})


def _one_tensor_argument(ctx, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The tensor ``expr`` is computed from when it is a call of :data:`_ONE_TENSOR` whose other
    arguments are plain numbers."""
    if type(expr) is not cst.Call or torch_name(ctx, expr.func) not in _ONE_TENSOR or not expr.args:
        return None
    first = expr.args[0]
    if first.keyword is not None or first.star:
        return None
    for arg in expr.args[1:]:
        if arg.star or ctx.fact(arg.value).kind not in (INT, FLOAT, BOOL):
            return None
    return first.value


#: ``torch.nn`` recurrent layers, whose second argument is the initial state
_RECURRENT = frozenset({"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"})


#: constructions whose result, assigned to ``self.x``, the module registers (it moves with it)
_REGISTERING = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                          "torch.nn.parameter.Buffer"})


def _registered(ctx, class_def: Optional[cst.ClassDef], cache: dict) -> frozenset[str]:
    """The attributes ``class_def`` registers: ``self.register_buffer("name", ...)``,
    ``self.register_parameter("name", ...)``, ``self.name = nn.Parameter(...)``."""
    if class_def is None:
        return frozenset()
    found = cache.get(id(class_def))
    if found is None:
        names = set()
        for node in walk(class_def, into_defs=True):
            if type(node) is cst.Call and type(node.func) is cst.Attribute \
                    and node.func.attr.value in ("register_buffer", "register_parameter") \
                    and is_name(node.func.value, "self") \
                    and node.args and type(node.args[0].value) is cst.SimpleString:
                value = node.args[0].value.evaluated_value
                if isinstance(value, str):
                    names.add(value)
            elif type(node) is cst.Assign and type(node.value) is cst.Call \
                    and ctx.qualname(node.value.func) in _REGISTERING:
                names.update(t.target.attr.value for t in node.targets
                             if type(t.target) is cst.Attribute and is_name(t.target.value, "self"))
        found = cache[id(class_def)] = (class_def, frozenset(names))
    return found[1] if found[0] is class_def else frozenset()


def _nonempty_sizes(expr: cst.BaseExpression) -> bool:
    """A tuple of sizes with at least one element: ``(b,) + (1,) * (x.ndim - 1)``, ``(b, 1)``."""
    if type(expr) is cst.Tuple:
        return bool(expr.elements) and not any(type(e) is cst.StarredElement for e in expr.elements)
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Add:
        return _nonempty_sizes(expr.left) or _nonempty_sizes(expr.right)
    return False


def _is_size_int(expr: cst.BaseExpression) -> bool:
    """``x.shape[i]``, ``x.size(i)``, ``len(x)``: expressions that are surely one int."""
    if type(expr) is cst.Subscript and type(expr.value) is cst.Attribute:
        return expr.value.attr.value == "shape" and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index
    call = method_call(expr)
    if call is not None and call[1] == "size" and len(expr.args) == 1:  # type: ignore[attr-defined]
        return True
    return type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "len"


#: torch calls that build a new tensor from data: the result is on the CPU whatever the input
#: (``torch._shape_as_tensor(x)`` holds ``x``'s sizes, on the CPU whatever ``x``'s device).
_FRESH = FACTORIES | LEGACY_TENSOR_CLASSES | {"from_numpy", "_shape_as_tensor"}

#: methods whose result is not on the receiver's device (or not a tensor)
_DEVICE_CHANGING = (TENSOR_DEVICE_METHODS | {"type", "type_as"} | NEW_TENSOR_METHODS | TENSOR_TO_PYTHON_METHODS
                    | {"size", "dim"})

#: factories that get the dtype hint: the float-default ones, and ``full``, whose dtype follows its fill value
_DTYPE_HINT_FACTORIES = FLOAT_DEFAULT_FACTORIES | {"full"}

# jaxtyping's dtype annotations (a tensor parameter's marks): not a table of torch
_JAXTYPING = {"Float", "Int", "Bool", "Shaped", "Real", "Num", "Inexact", "Integer", "Complex",
              "UInt", "Float32", "Float16", "BFloat16", "Float64", "Int64", "Int32"}


def _annotated_tensor(param: cst.Param) -> bool:
    """True for ``x: Tensor``, ``x: torch.Tensor``, ``x: Optional[Tensor]``, ``x: Float[Tensor, "b c"]``."""
    if param.annotation is None:
        return False
    annotation = unwrap_optional(param.annotation.annotation)
    dotted = dotted_name(annotation)
    if dotted is not None:
        return dotted.split(".")[-1] == "Tensor"
    if type(annotation) is cst.Subscript:
        head = dotted_name(annotation.value)
        return head is not None and head.split(".")[-1] in _JAXTYPING
    return False


_NOT_TENSOR_METHODS = TENSOR_METADATA_METHODS | TENSOR_TO_PYTHON_METHODS


def _params(function: cst.FunctionDef) -> dict[str, cst.Param]:
    """The parameters of ``function`` by name (``*args``/``**kwargs`` excluded)."""
    p = function.params
    return {param.name.value: param for param in (*p.posonly_params, *p.params, *p.kwonly_params)}


def _is_module_attr(expr: cst.BaseExpression) -> bool:
    """``self.fc``, ``self.encoder.layer``: an attribute chain on ``self`` (a submodule when called)."""
    dotted = dotted_name(expr)
    return dotted is not None and dotted.startswith("self.")


def _attribute_root(ctx, expr: cst.BaseExpression) -> Optional[cst.Attribute]:
    """``self.x`` when ``expr`` is it, or a slice or a device-keeping method chain of it
    (``self.pe[:, :t]``, ``self.mask.float()``, ``self.emb.to(x.dtype)``), or a comparison of
    one with a number (``self.bias[:, :t, :t] == 0``)."""
    while True:
        if type(expr) is cst.Subscript:
            expr = expr.value
            continue
        if type(expr) is cst.Comparison and len(expr.comparisons) == 1 and is_number(expr.comparisons[0].comparator):
            expr = expr.left
            continue
        call = method_call(expr)
        if call is not None and torch_name(ctx, expr.func) is None and (  # type: ignore[attr-defined]
                call[1] not in _DEVICE_CHANGING or _dtype_only_move(ctx, expr)):  # type: ignore[arg-type]
            expr = call[0]
            continue
        break
    if type(expr) is cst.Attribute and is_name(expr.value, "self"):
        return expr
    return None


def _dtype_only_move(ctx, call: cst.Call) -> bool:
    """``t.to(x.dtype)``, ``t.to(torch.float16)``, ``t.to(dtype=...)``: a cast that keeps the device."""
    method = method_call(call)
    if method is None or method[1] != "to" or len(call.args) != 1 or call.args[0].star:
        return False
    arg = call.args[0]
    if arg.keyword is not None:
        return arg.keyword.value == "dtype"
    value = arg.value
    if type(value) is cst.Attribute and value.attr.value == "dtype":
        return True
    qual = ctx.qualname(value) or ""
    return qual.startswith("torch.") and qual[len("torch."):] in DTYPE_KINDS


def _keeps_tensor(ctx, name: str, value: cst.BaseExpression) -> bool:
    """True when ``name = value`` leaves ``name`` computed from its old tensor (``x = f(x)``)."""
    root = value
    while True:
        call = method_call(root)
        if call is not None and torch_name(ctx, root.func) is None:  # type: ignore[attr-defined]
            root = call[0]
            continue
        break
    if type(root) is cst.Call and torch_name(ctx, root.func) in _FRESH:
        return False
    return name in names_read(value)


#: devices that a CPU tensor that is not 0-dim never mixes with
_ELSEWHERE = frozenset({CUDA, MPS, META})

#: the exception of a finding about a module that this file never moves
ON_CPU_ONLY = "the module stays on the CPU"

@register
class FactoryWithoutDevice(Rule):
    """SC403: a tensor created without `device=` meets an input tensor of unknown device."""
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

In `forward` of an `nn.Module`, also when the file never moves the module (library code: its
user will), a factory without `device=` given to a `torch.nn` layer of the module that holds
parameters (`self.wpe(torch.arange(t))`, the initial state of `self.lstm(x, (h0, c0))`) or meeting
a parameter or registered buffer of it (`self.scale * torch.ones(d)`) raises when the module runs
on a GPU. A plain tensor attribute (`self.mean = torch.tensor([...])` in `__init__`) of a module
the file moves (also built with arguments, or inside an `nn.Sequential` that is moved) stays on
the CPU and meets the input there.

A plain function counts when it places other tensors by its parameter (`batch.new_tensor(...)`,
`device=batch.device`, `torch.zeros_like(batch)`): it is written for that parameter on any
device. A factory result that meets a tensor the facts place on a GPU (or the meta device) where
they cannot place the factory's operand (`cov + self.eps * torch.eye(d)`) is flagged too. A
helper of the file that returns a factory result without `device=` (`init_hidden`) is flagged
at the factory when its result reaches, unmoved, a layer of a module on a GPU, and when another
`return` of the same function makes its result on a tensor's device (`weight.new_zeros(...)`).
Shape tensors (`torch._shape_as_tensor(x)`, `torch.tensor(x.shape)`) are CPU tensors whatever
`x`'s device, and a CPU factory beside them is right: they are not flagged.

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

A legacy constructor (`torch.LongTensor([[1, 2, 3]])`, `torch.FloatTensor(2, 3)`) always makes
a CPU tensor and takes no CUDA device: it is flagged like a factory without `device=`, the
message says to create the tensor with `torch.tensor(..., dtype=..., device=...)` instead, and
there is no fix.
"""
    valid = (
        # `.to(dtype)` of a parameter annotated `torch.dtype` casts: both tensors stay on the CPU
        "import torch\ndef causal_mask(n: int, dtype: torch.dtype, past: int = 0):\n"
        "    mask = torch.full((n, n), -1e4).to(dtype)\n"
        "    return torch.cat([torch.zeros(n, past, dtype=dtype), mask], dim=-1)\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        mask = torch.ones(x.shape[-1], device=x.device)\n        return x * mask\n",
        # made on the device of a tensor the input object holds; `batch_sizes` of a PackedSequence
        # is a CPU tensor wherever the packed data is
        "import torch\nimport torch.nn as nn\nclass Pos(nn.Module):\n    def forward(self, batch: Batch):\n"
        "        pos = batch.mask.cumsum(1, dtype=torch.float32)\n"
        "        dim_t = torch.arange(64, dtype=torch.float32, device=batch.mask.device)\n"
        "        return pos[:, :, None] / dim_t\n",
        "import torch\nimport torch.nn as nn\nclass Steps(nn.Module):\n    def forward(self, packed, n: int):\n"
        "        return torch.arange(n)[:, None] < packed.batch_sizes\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x * torch.tensor(0.5)\n",
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
        "        return x * 2.0\n",
        "import torch\ndef f(x):\n    x = x.cpu()\n    return x + torch.zeros(3)\n",
        "import torch\ndef g(n):\n    return n + torch.zeros(3)\n",
        # made on the input's device, or converted to it; a buffer indexed
        "import torch\nimport torch.nn as nn\nclass GPT(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.wpe = nn.Embedding(64, 8)\n"
        "        self.register_buffer('pos_ids', torch.arange(64))\n    def forward(self, idx):\n"
        "        t = idx.size(1)\n        a = self.wpe(torch.arange(t, device=idx.device))\n"
        "        b = self.wpe(torch.arange(t).to(idx)) + self.wpe(torch.arange(t).type_as(idx))\n"
        "        return a + b + self.wpe(self.pos_ids[:t])\n",
        # a 0-dim factory mixes with a parameter on any device
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(4))\n    def forward(self, x):\n"
        "        return x * (self.w * torch.tensor(0.5))\n",
        # an int index leaves a 0-dim CPU tensor, which mixes with a parameter on any device
        "import torch\nimport torch.nn as nn\nclass Fbank(nn.Module):\n    def __init__(self, n, factor):\n"
        "        super().__init__()\n        self.factor = factor\n        self.band = nn.Parameter(torch.ones(n))\n"
        "    def forward(self, x):\n        band = self.band.repeat(x.shape[1], 1).transpose(0, 1)\n"
        "        r = 1.0 + torch.rand(2) * 2 * self.factor - self.factor\n        return band * r[1]\n",
        # registered statistics move with the module
        "import torch\nimport torch.nn as nn\nclass Normalize(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer('mean', torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1))\n"
        "        self.std = nn.Parameter(torch.ones(1, 3, 1, 1), requires_grad=False)\n    def forward(self, x):\n"
        "        return (x - self.mean) / self.std\nmodel = nn.Sequential(Normalize(), nn.Conv2d(3, 8, 3)).cuda()\n",
        # the drop mask is made on the input's device
        "import torch\nimport torch.nn as nn\nclass DropPath(nn.Module):\n    def forward(self, x):\n"
        "        shape = (x.shape[0],) + (1,) * (x.ndim - 1)\n"
        "        mask = torch.rand(shape, device=x.device) < 0.9\n        return x * mask / 0.9\n",
        # shape tensors are on the CPU whatever the input's device: a CPU factory is right beside them
        "import torch\nfrom torch import Tensor\ndef scaled_size(x: Tensor) -> Tensor:\n"
        "    size = torch._shape_as_tensor(x)\n    return size * torch.tensor([1, 2, 2, 1])\n",
        "import torch\nfrom torch import Tensor\ndef padded_size(x: Tensor) -> Tensor:\n"
        "    size = torch.tensor(x.shape)\n    return torch.cat([size, torch.ones(2, dtype=torch.long)])\n",
        "import torch\nimport torch.nn as nn\nclass Sizes(nn.Module):\n    def forward(self, x):\n"
        "        size = torch.tensor(x.size())\n"
        "        return torch.where(size > 1, size, torch.zeros(4, dtype=torch.long))\n",
        "import torch\nimport torch.nn as nn\nclass Sizes(nn.Module):\n    def forward(self, x):\n"
        "        half = torch._shape_as_tensor(x)[2:] // 2\n        return half + torch.arange(2)\n",
        # a plain function that places nothing by its parameter may be a CPU-only script's
        "import torch\ndef shift(x):\n    x = x.float()\n    return x - torch.tensor([0.5, 0.4, 0.3]).view(-1, 1, 1)\n",
        # the other return has no tensor to place its result by
        "import torch\ndef make_state(n, like=None):\n    if like is None:\n        return torch.zeros(n, 4)\n"
        "    return like.new_zeros(n, 4)\n",
        # the caller moves the helper's result before the module meets it
        "import torch\nimport torch.nn as nn\nclass Rnn(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.gru = nn.GRU(4, 8)\n    def forward(self, x, h):\n"
        "        return self.gru(x, h)\n    def init_hidden(self, b):\n        return torch.zeros(1, b, 8)\n"
        "def run(model, x):\n    h = model.init_hidden(x.size(1)).cuda()\n    return model(x, h)\n"
        "run(Rnn().cuda(), torch.randn(5, 2, 4).cuda())\n",
        # a module built on the meta device on purpose: its factories are there too
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x):\n"
        "        return self.fc(x) + torch.ones(4)\nwith torch.device('meta'):\n    model = Net()\n"
        "out = model(torch.randn(2, 4))\n",
        # the `.to` moves the concatenation: the `bins` it reads is the parameter, unmoved
        "import torch\ndef bin2freq(x, f0_min, bins):\n"
        "    bins = torch.cat([torch.tensor([f0_min]), bins]).to(x.device)\n    return (x * bins).sum(-1)\n",
        # a legacy constructor's tensor moved where the input is
        "import torch\nimport torch.nn as nn\nclass Enc(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(6, 8)\n    def forward(self, x):\n"
        "        return x + self.pos(torch.LongTensor([[1, 2, 3, 4, 0]]).to(x.device))\n",
    )
    invalid = (
        # the `x` the concatenation reads is the one moved on the line before
        "import torch\ndef pad(x, device):\n    x = x.to(device)\n"
        "    x = torch.cat([torch.zeros(1), x])  # <--\n    return x\n",
        # a tensor that the input object holds (a DETR-style NestedTensor) is where the input is
        "import torch\nimport torch.nn as nn\nclass Pos(nn.Module):\n"
        "    def forward(self, tensor_list: NestedTensor):\n        mask = tensor_list.mask\n"
        "        y_embed = (~mask).cumsum(1, dtype=torch.float32)\n"
        "        dim_t = torch.arange(64, dtype=torch.float32)\n        dim_t = 10000 ** (2 * (dim_t // 2) / 64)\n"
        "        return y_embed[:, :, :, None] / dim_t  # <--\n",
        Example(
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.zeros(10)  # <--\n",
            unsafe_fixed="import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x):\n"
            "        return x + torch.zeros(10, device=x.device)  # <--\n",
        ),
        Example(
            "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, x: torch.Tensor):\n"
            "        return x + torch.zeros(10)  # <--\n",
            fixed="import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n"
                  "    def forward(self, x: torch.Tensor):\n"
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
            fixed="import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def forward(self, h):\n"
            "        pad = torch.zeros(2, 3, device=h.device)\n        return torch.cat([h, pad], dim=0)  # <--\n",
        ),
        # library code: the position index is made on the CPU, the embedding's weight moves with the module
        "import torch\nimport torch.nn as nn\nclass GPT(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.wpe = nn.Embedding(64, 8)\n    def forward(self, idx):\n"
        "        pos = torch.arange(idx.size(1))\n        return self.wpe(pos)  # <--\n",
        # a legacy constructor makes CPU tensors only (it takes no CUDA device)
        "import torch\nimport torch.nn as nn\nclass Enc(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(6, 8)\n    def forward(self, x):\n"
        "        return x + self.pos(torch.LongTensor([[1, 2, 3, 4, 0]]))  # <--\n",
        # a frozen pretrained table is a parameter too: it moves with the module
        "import torch\nimport torch.nn as nn\nclass Enc(nn.Module):\n    def __init__(self, table):\n"
        "        super().__init__()\n        self.pos = nn.Embedding.from_pretrained(table, freeze=True)\n"
        "    def forward(self, x):\n        return x + self.pos(torch.arange(x.size(1)))  # <--\n",
        # the initial state of a GRU made on the CPU
        "import torch\nimport torch.nn as nn\nclass Enc(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.gru = nn.GRU(8, 16, 2)\n    def forward(self, x):\n"
        "        h0 = torch.zeros(2, x.size(1), 16)\n        return self.gru(x, h0)  # <--\n",
        # a factory meets a parameter of the module
        "import torch\nimport torch.nn as nn\nclass Scale(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(4))\n    def forward(self, x):\n"
        "        return x * (self.w + torch.ones(4))  # <--\n",
        # a plain tensor attribute of a module the file moves (inside an nn.Sequential)
        "import torch\nimport torch.nn as nn\nclass Normalize(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.mean = torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)\n"
        "    def forward(self, x):\n        return x - self.mean  # <--\n"
        "model = nn.Sequential(Normalize(), nn.Conv2d(3, 8, 3)).cuda()\n",
        # a plain tensor attribute of a module built with arguments and moved with `.to(device)`
        "import torch\nimport torch.nn as nn\nclass Normalized(nn.Module):\n    def __init__(self, backbone):\n"
        "        super().__init__()\n        self.backbone = backbone\n"
        "        self.mean = torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)\n    def forward(self, x):\n"
        "        return self.backbone(x - self.mean)  # <--\n"
        "model = Normalized(nn.Conv2d(3, 8, 3))\nmodel.to(torch.device('cuda'))\n",
        # the helper's CPU state reaches the recurrent layer of the module the caller moved: said
        # where the state is made
        "import torch\nimport torch.nn as nn\nclass Rnn(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.gru = nn.GRU(4, 8)\n    def forward(self, x, h):\n"
        "        return self.gru(x, h)\n    def init_hidden(self, b):\n"
        "        return torch.zeros(1, b, 8)  # <--\n"
        "def run(model, x):\n    h = model.init_hidden(x.size(1))\n    return model(x, h)\n"
        "run(Rnn().cuda(), torch.randn(5, 2, 4).cuda())\n",
        # the factory meets a tensor computed from the input of a module the file moves
        "import torch\nimport torch.nn as nn\nclass Cov(nn.Module):\n    def __init__(self, eps=1e-4):\n"
        "        super().__init__()\n        self.eps = eps\n        self.proj = nn.Linear(4, 9)\n"
        "    def forward(self, x):\n        L = self.proj(x).view(-1, 3, 3)\n"
        "        return L @ L.transpose(1, 2) + self.eps * torch.eye(3)  # <--\n"
        "head = Cov().cuda()\nout = head(torch.randn(2, 4).cuda())\n",
        # the function places `std` by `batch`: it is written for a batch on any device
        Example(
            "import torch\ndef normalize(batch):\n    mean = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)\n"
            "    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)\n"
            "    return (batch - mean) / std  # <--\n",
            fixed="import torch\ndef normalize(batch):\n"
            "    mean = torch.tensor([0.485, 0.456, 0.406], device=batch.device).view(-1, 1, 1)\n"
            "    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)\n"
            "    return (batch - mean) / std  # <--\n",
        ),
        # the other return makes the state on the device of the module's weights
        "import torch\nimport torch.nn as nn\nclass Rnn(nn.Module):\n    def __init__(self, kind):\n"
        "        super().__init__()\n        self.kind = kind\n        self.rnn = nn.LSTM(4, 8)\n"
        "    def init_hidden(self, b):\n        weight = next(self.parameters())\n        if self.kind == 'LSTM':\n"
        "            return weight.new_zeros(1, b, 8), weight.new_zeros(1, b, 8)\n"
        "        return torch.zeros(1, b, 8)  # <--\n",
        # a drop-path mask made on the CPU
        Example(
            "import torch\nimport torch.nn as nn\nclass DropPath(nn.Module):\n    def forward(self, x):\n"
            "        shape = (x.shape[0],) + (1,) * (x.ndim - 1)\n        mask = torch.rand(shape) < 0.9\n"
            "        return x * mask / 0.9  # <--\n",
            unsafe_fixed="import torch\nimport torch.nn as nn\nclass DropPath(nn.Module):\n    def forward(self, x):\n"
            "        shape = (x.shape[0],) + (1,) * (x.ndim - 1)\n"
            "        mask = torch.rand(shape, device=x.device) < 0.9\n"
            "        return x * mask / 0.9  # <--\n",
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
        # local names bound to a tensor computed from a parameter or buffer of the module
        # (`cov = self.L @ self.L.t()`): the attribute it comes from
        self._held: dict[tuple[int, str], cst.Attribute] = {}
        # local names bound to a tensor moved to a device the function names (`real = x.to(device)`)
        self._moved: dict[tuple[int, str], str] = {}
        # an assignment's changes to `_moved`, which count from the next statement on (its value
        # reads the names as they were): the assignment, the names it rebinds, the names it moves
        self._staged_moves: Optional[tuple[cst.Assign, list[tuple[int, str]], Moved]] = None
        # unannotated parameters used as tensors, by function
        self._evidence_params: dict[int, frozenset[str]] = {}
        self._buffer_names: dict[int, tuple[cst.ClassDef, frozenset[str]]] = {}
        # names bound to a factory result that an assignment rebinds to something else
        self._rebound: dict[tuple[int, str], cst.Assign] = {}
        # the layers that methods of the file's module classes give their parameters to
        self._feeds: Feeds = {}
        # the factories already reported as the origin of a helper's CPU result
        self._origins: set[int] = set()
        # id of a function -> (the function, what its syntax shows: see `function_scan`)
        self._syntax: dict[int, tuple[cst.FunctionDef, FunctionSyntax]] = {}

    def carry_from(self, plain: "FactoryWithoutDevice") -> None:
        """Take the layers that the plain walk of the file saw methods feed (a call-site context
        walks one function only)."""
        self._feeds = plain._feeds

    def _moves(self, ctx) -> Moved:
        """The names moved to a device before the statement being analysed: the changes of the
        assignment before it are applied once the walk has left it."""
        staged = self._staged_moves
        if staged is not None and ctx.statement is not staged[0]:
            self._staged_moves = None
            for key in staged[1]:
                self._moved.pop(key, None)
            self._moved.update(staged[2])
        return self._moved

    def _in_scope(self, ctx) -> bool:
        """True inside a function that has a tensor parameter: ``forward`` of an ``nn.Module``
        (unannotated parameters count), or any function with a tensor-annotated parameter."""
        function = ctx.function
        if function is None:
            return False
        key = id(function)
        eligible = self._eligible.get(key)
        if eligible is None:
            in_forward = ctx.in_module_class is True and function.name.value == "forward"
            evidenced = self._evidenced(ctx, function)
            eligible = any(
                _annotated_tensor(p) or (in_forward and p.annotation is None and p.name.value != "self")
                or (in_forward and container_annotation(p)) or p.name.value in evidenced
                for p in _params(function).values()
            ) or self._syntax_of(ctx, function).moves
            self._eligible[key] = eligible
        return eligible

    def _syntax_of(self, ctx, function: cst.FunctionDef) -> FunctionSyntax:
        """What ``function``'s syntax shows (:mod:`~shapecheck.rules.device.function_scan`), read
        once per function."""
        known = self._syntax.get(id(function))
        if known is None or known[0] is not function:
            aliases = factory_aliases(ctx.module)
            known = self._syntax[id(function)] = (function, scan_syntax(ctx, function, aliases))
        return known[1]

    def _makes_none(self, ctx, function: Optional[cst.FunctionDef]) -> bool:
        """``function`` calls no torch factory (:mod:`~shapecheck.rules.device.factory_calls`): no
        expression in it is computed from a factory result, so nothing there needs following."""
        return function is not None and not self._syntax_of(ctx, function).may_make

    def _held_root(self, ctx, expr: cst.BaseExpression, fid: int, depth: int = 0) -> Optional[cst.Attribute]:
        """The parameter or registered buffer of the module (``self.L``) that ``expr`` is computed
        from, when every op on the way leaves the result on its device or raises
        (``self.L @ self.L.t()``, ``cov * 2``, ``torch.exp(self.log_scale)``); else ``None``."""
        if depth > 8:
            return None
        root = _attribute_root(ctx, expr)
        if root is not None:
            return root if root.attr.value in _registered(ctx, ctx.class_def, self._buffer_names) else None
        if type(expr) is cst.Name:
            return self._held.get((fid, expr.value))
        if type(expr) is cst.BinaryOperation:
            return self._held_root(ctx, expr.left, fid, depth + 1) or self._held_root(ctx, expr.right, fid, depth + 1)
        call = method_call(expr)
        if call is not None and torch_name(ctx, expr.func) is None and call[1] not in _DEVICE_CHANGING:  # type: ignore[attr-defined]
            return self._held_root(ctx, call[0], fid, depth + 1)
        name = torch_name(ctx, expr.func) if type(expr) is cst.Call else None
        if type(expr) is cst.Call and name is not None and name not in _FRESH and not name.startswith("nn.init"):
            for arg in positional(expr):  # `torch.matmul(self.L, self.L.t())`
                root = self._held_root(ctx, arg, fid, depth + 1)
                if root is not None:
                    return root
        return None

    def _evidenced(self, ctx, function: cst.FunctionDef) -> frozenset[str]:
        """For a method of an ``nn.Module`` class (it runs where the module runs, as ``forward``
        does), the unannotated parameters (not its receiver) that its body uses as only a tensor
        can be used (:mod:`~shapecheck.semantic.evidence`), and as nothing else. A plain function
        may be a CPU-only script's: only the parameters it places other tensors by count
        (``batch.new_tensor(...)``, see :mod:`.device_generic`)."""
        key = id(function)
        found = self._evidence_params.get(key)
        if found is None:
            generic = ctx.in_module_class is True or bool(placing := self._syntax_of(ctx, function).placing)
            table = scan_function(function, ctx.imports.resolve).at(PARAMETERS) if generic else {}
            declared = list(_params(function).values())
            receiver = declared[0].name.value if declared and ctx.class_def is not None else None
            found = self._evidence_params[key] = frozenset(
                p.name.value for p in declared if p.annotation is None and p.name.value != receiver
                and (ctx.in_module_class is True or p.name.value in placing)
                and (ev := table.get(p.name.value)) is not None and ev.tensor and not ev.poisoned)
        return found

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        """Follows the names bound to sizes, to factory results without ``device=`` and to tensors
        computed from the inputs."""
        if not self._in_scope(ctx):
            return
        function = ctx.function
        if self._makes_none(ctx, function):  # only the tensors computed from the inputs matter here
            for target in node.targets:
                if type(target.target) is cst.Name:
                    self._follow_input(node, target.target.value, function, ctx)
            return
        ints = self._ints.setdefault(id(function), set())
        held = self._held_root(ctx, node.value, id(function)) if ctx.in_forward else None
        moved = moved_to(ctx, node.value, self._moves(ctx), id(function))
        rebound: list[tuple[int, str]] = []
        moves: Moved = {}
        self._staged_moves = (node, rebound, moves)
        for target in node.targets:
            names = [target.target] if type(target.target) is cst.Name else [
                e.value for e in getattr(target.target, "elements", ()) if type(e.value) is cst.Name
            ]
            for name in names:
                self._held.pop((id(function), name.value), None)
                rebound.append((id(function), name.value))
            unpacks_shape = type(node.value) is cst.Attribute and node.value.attr.value == "shape"
            for name in names:
                if _is_size_int(node.value) or (unpacks_shape and name is not target.target) \
                        or (name is target.target and _nonempty_sizes(node.value)):
                    ints.add(name.value)
                else:
                    ints.discard(name.value)
                if name is not target.target and self._bound_factory((id(function), name.value), ctx) is not None:
                    self._rebound[(id(function), name.value)] = node  # `h, c = self.lstm(x, (h, c))`
            if type(target.target) is cst.Name:
                key = (id(function), target.target.value)
                self._follow_input(node, target.target.value, function, ctx)
                if held is not None:
                    self._held[key] = held
                if moved is not None:
                    moves[key] = moved
                made = self._factory(node.value, function, ctx)
                if made is not None:
                    self._factories[key] = made
                    self._rebound.pop(key, None)
                elif self._bound_factory(key, ctx) is not None:
                    self._rebound[key] = node

    def _follow_input(self, node: cst.Assign, name: str, function: cst.FunctionDef, ctx) -> None:
        """``name = value``: a parameter rebound to something not computed from it is lost; another
        name is derived from the input ``value`` is computed from, if any."""
        key = (id(function), name)
        is_param = name in _params(function)
        if is_param and not _keeps_tensor(ctx, name, node.value):
            self._lost.add(key)
        if not is_param:
            in_forward = ctx.in_module_class is True and function.name.value == "forward"
            derived = self._tensor_from(node.value, function, ctx, in_forward)
            if derived is not None:
                self._derived[key] = derived
            else:
                self._derived.pop(key, None)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Operators between a factory result without ``device=`` and a tensor computed from an
        input."""
        self._check(node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Torch functions and methods between a factory result without ``device=`` and a tensor
        computed from an input, and such a result given to a layer of the module."""
        record_feed(self._feeds, ctx, node)
        self._check(node, ctx)
        self._layer_input(node, ctx)
        self._moved_module_input(node, ctx)
        self._helper_result_input(node, ctx)

    def visit_Expr(self, node: cst.Expr, ctx) -> None:
        """``model.load_state_dict(sd, assign=True)``: the module now holds the state dict's
        tensors, wherever they are; where it was moved no longer says where it is."""
        call = node.value
        method = method_call(call)
        if method is not None and method[1] == "load_state_dict" and type(method[0]) is cst.Name \
                and any(a.keyword is not None and a.keyword.value == "assign" for a in call.args):  # type: ignore[attr-defined]
            self._moves(ctx).pop((id(ctx.function), method[0].value), None)

    def visit_Return(self, node: cst.Return, ctx) -> None:
        """A ``return`` of a factory result without ``device=`` in a function whose other ``return``
        makes its result on the device of a tensor (``return weight.new_zeros(...)``): the function
        is written for that tensor's device, and this path gives its callers a CPU tensor."""
        function = ctx.function
        if function is None or node.value is None:
            return
        known = self._syntax.get(id(function))
        if known is not None and known[0] is function and not known[1].may_make:
            return  # a function already known to call no factory (not scanned for this alone)
        made = [call for item in returned_items(node) if (call := self._factory(item, function, ctx)) is not None
                and ctx.fact(call).device == CPU]
        if not made:
            return
        for other in walk(function.body):
            if type(other) is not cst.Return or other is node:
                continue
            placed = [(item, tensor) for item in returned_items(other)
                      if (tensor := placing_tensor(ctx, item)) is not None
                      and not (type(tensor) is cst.Name and tested(function, tensor.value))]
            if not placed:
                continue
            item, tensor = placed[0]
            where = short(ctx, tensor)
            ctx.report(
                made[0],
                f"`{short(ctx, made[0])}` is created on the CPU {_cpu_words(ctx, made[0])}, but another `return` of "
                f"`{function.name.value}` makes its result on the device of `{where}` (`{short(ctx, item)}`): "
                f"callers get a CPU tensor on this path, which fails where it meets tensors on `{where}`'s "
                f"device (Expected all tensors to be on the same device) when that is a GPU; "
                f"{_device_words(ctx, made[0], where + '.device')}",
                condition=f"`{where}` is on the CPU",
            )
            return

    def _helper_result_input(self, node: cst.Call, ctx) -> None:
        """A module the facts place on a GPU (or the meta device) given, for an input that meets
        its weights, a name bound to the result of a helper of the file that returns a factory result
        without ``device=`` (``hidden = model.init_hidden(b)``; ``model(data, hidden)``): reported
        at the factory, in the helper, where the fix belongs."""
        callee = ctx.fact(node.func)
        device = known_device(callee)
        if callee.kind != MODULE or device not in _ELSEWHERE or (callee.qual or "").startswith("torch.nn."):
            return  # a `torch.nn` layer given the helper's result: SC401 speaks, naming the helper
        for index, arg in enumerate(positional(node)):
            layer = fed_layer(self._feeds, callee, "forward", index)
            fact = ctx.fact(arg)
            held = (fact,) if fact.kind == TENSOR else fact.elems or () if fact.kind is None else ()
            if layer is None or type(arg) is not cst.Name or not held or not all(
                    f.kind == TENSOR and f.device == CPU and not f.is_scalar_cpu for f in held):
                continue
            values = ctx.assigned_values(arg.value)
            helper = ctx.local_callee(values[0]) if len(values) == 1 and type(values[0]) is cst.Call else None
            if helper is None:
                continue
            made = next((m for m in returned_factories(ctx, helper) if ctx.fact(m).device == CPU), None)
            if made is not None and id(made) not in self._origins:  # said once, at its first factory
                self._origins.add(id(made))
                ctx.report(
                    made,
                    f"`{short(ctx, made)}` is created on the CPU {_cpu_words(ctx, made)} and returned by "
                    f"`{helper.name.value}`, and `{arg.value} = {short(ctx, values[0])}` is given to "
                    f"`{short(ctx, node.func)}`, which is on {DEVICE_WORDS[device]}{placed_note(callee)} and runs "
                    f"`{layer}` on it: `{short(ctx, node)}` raises RuntimeError (Expected all tensors to be on the "
                    f"same device); {_device_words(ctx, made)} (the device of the module's parameters or input) "
                    f"where it is created",
                    related=placed_place(callee),
                )

    def _moved_module_input(self, node: cst.Call, ctx) -> None:
        """A module the function moved to a device it names (``netG = Generator().to(device)``)
        run on a factory result without ``device=`` (``netG(torch.randn(b, nz))``): reported."""
        if not self._in_scope(ctx) or self._makes_none(ctx, ctx.function):
            return
        function = ctx.function
        device = moved_module(ctx, node, self._moves(ctx), id(function))
        callee = ctx.fact(node.func)
        if device is None or known_device(callee) is not None:
            return  # where the module is known, SC401 speaks
        call = self._factory(positional(node)[0], function, ctx)
        if call is None or ctx.fact(call).device != CPU:
            return
        ctx.report(
            node,
            f"`{short(ctx, call)}` is created on the CPU {_cpu_words(ctx, call)} and is given to "
            f"`{short(ctx, node.func)}`, which is on `{device}` (moved there in this function): the call raises "
            f"RuntimeError (Expected all tensors to be on the same device) unless `{device}` is the CPU; "
            f"{_device_words(ctx, call, device)}",
            condition=f"`{device}` is the CPU",
        )

    def _factory(self, expr: cst.BaseExpression, function, ctx) -> Optional[cst.Call]:
        """The factory call (without ``device=``) that ``expr`` is computed from, if any (see
        :meth:`_factory_in`); ``None`` at once when ``expr`` holds no torch factory call and no
        name bound to a factory result, without asking for facts."""
        fid = id(function)
        factories = self._factories
        for node in (expr, *walk(expr)):
            tp = type(node)
            if tp is cst.Name:
                if (fid, node.value) in factories:  # type: ignore[attr-defined]
                    return self._factory_in(expr, function, ctx)
            elif tp is cst.Call and (torch_name(ctx, node.func) or "") in FACTORIES_AND_LEGACY:  # type: ignore[attr-defined]
                return self._factory_in(expr, function, ctx)
        return None

    def _factory_in(self, expr: cst.BaseExpression, function, ctx) -> Optional[cst.Call]:
        """The factory call (without ``device=``) that ``expr`` is computed from, if any.

        Follows methods that keep the device (``.triu(1)``, ``.float()``), arithmetic with
        Python numbers (``mask * 1e9``) and names bound to such values in this function.
        """
        ints = frozenset(self._ints.get(id(function), ()))
        while True:
            fact = ctx.fact(expr)
            if fact.is_scalar_cpu or (fact.shape is not None and fact.shape.rank == 0):
                return None  # `torch.ones(3).sum()`: a 0-dim CPU tensor mixes with any device
            if _nonzero_rank_factory(ctx, expr, ints) is not None:
                return expr  # type: ignore[return-value]
            if type(expr) is cst.Name:
                return self._bound_factory((id(function), expr.value), ctx)
            call = method_call(expr)
            if call is not None and torch_name(ctx, expr.func) is None:  # type: ignore[attr-defined]
                if call[1] in _DEVICE_CHANGING:
                    return None
                expr = call[0]
                continue
            if type(expr) is cst.Call and len(expr.args) == 1 and not expr.args[0].keyword \
                    and not expr.args[0].star and (torch_name(ctx, expr.func) or "").split(".")[-1] in _ELEMENTWISE:
                expr = expr.args[0].value
                continue
            one = _one_tensor_argument(ctx, expr)
            if one is not None:
                expr = one
                continue
            if type(expr) is cst.Subscript and all(type(e.slice) is cst.Slice or (
                    type(e.slice) is cst.Index and ctx.fact(e.slice.value).kind == INT) for e in expr.slice):
                picked = sum(1 for e in expr.slice if type(e.slice) is cst.Index)
                if not picked:
                    expr = expr.value  # `ids[:, :keep]`: a slice is where its tensor is
                    continue
                made = self._factory_in(expr.value, function, ctx)
                return None if made is None or _indexed_to_scalar(ctx, made, picked) else made
            if type(expr) is cst.UnaryOperation:
                expr = expr.expression
                continue
            if type(expr) is cst.BinaryOperation:
                if is_number(expr.right):
                    expr = expr.left
                    continue
                if is_number(expr.left):
                    expr = expr.right
                    continue
                follow = self._beside_scalar(expr.left, expr.right, function, ctx)
                if follow is not None:
                    expr = follow
                    continue
            if type(expr) is cst.BinaryOperation and self._factory_in(expr.right, function, ctx) is not None:
                expr = expr.left  # both operands made on the CPU (`pos * div`): so is the result
                if self._factory_in(expr, function, ctx) is not None:
                    continue
                return None
            if type(expr) is cst.Comparison and len(expr.comparisons) == 1:
                follow = self._beside_scalar(expr.left, expr.comparisons[0].comparator, function, ctx)
                if follow is not None:
                    expr = follow
                    continue
            return None

    def _bound_factory(self, key: tuple[int, str], ctx) -> Optional[cst.Call]:
        """The factory call a name is bound to, if any: a name rebound to something else is the
        factory's only while the assignment that rebinds it evaluates its value
        (``h, c = self.lstm(x, (h, c))``)."""
        rebinding = self._rebound.get(key)
        if rebinding is not None and not any(node is rebinding for node in ctx.ancestors):
            self._factories.pop(key, None)
            self._rebound.pop(key, None)
        return self._factories.get(key)

    def _beside_scalar(self, left: cst.BaseExpression, right: cst.BaseExpression, function,
                       ctx) -> Optional[cst.BaseExpression]:
        """The side of ``left <op> right`` that is a factory result when the other is not known to
        be a tensor (``keep + torch.rand(shape)``, ``torch.rand(shape) < keep``): the result is on
        the factory's device, or the op raises already (a CPU tensor that is not 0-dim meets no
        tensor of another device)."""
        for mine, other in ((left, right), (right, left)):
            if ctx.fact(other).kind in (None, INT, FLOAT, BOOL) \
                    and self._tensor_from(other, function, ctx, True) is None \
                    and self._factory(mine, function, ctx) is not None:
                return mine
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
        if fact.device is not None and not isinstance(fact.device, SameDeviceAs):
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
            if type(expr) is cst.Name:
                if expr.value in ("self", "cls") or (fid, expr.value) in self._lost:
                    return None
                param = _params(function).get(expr.value)
                if param is not None:
                    tensor = _annotated_tensor(param) or (in_forward and param.annotation is None) \
                        or expr.value in self._evidence_params.get(fid, ())
                    return expr.value if tensor else None
                return self._derived.get((fid, expr.value))
            if type(expr) is cst.Subscript:
                if type(expr.value) is cst.Attribute and expr.value.attr.value == "shape":
                    return None
                expr = expr.value
                continue
            if type(expr) is cst.Attribute and expr.attr.value in ("T", "mT", "H", "mH"):
                expr = expr.value
                continue
            if type(expr) is cst.Attribute:  # `tensor_list.mask`: a tensor the input object holds
                if not in_forward or (fid, dotted_name(expr.value) or "") in self._lost:
                    return None
                return input_attribute(expr, _params(function), "self" if ctx.class_def is not None else None)
            if type(expr) is cst.UnaryOperation and isinstance(expr.operator, (cst.BitInvert, cst.Minus, cst.Plus)):
                expr = expr.expression
                continue
            if type(expr) is cst.BinaryOperation:
                return (self._tensor_from(expr.left, function, ctx, in_forward)
                        or self._tensor_from(expr.right, function, ctx, in_forward))
            if type(expr) is not cst.Call:
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
        if keyword(call, "dtype") is not None or torch_name(ctx, call.func) not in _DTYPE_HINT_FACTORIES:
            return ""
        return f" (and `dtype={param}.dtype` if it should follow the input's precision)"

    def _check(self, node: cst.CSTNode, ctx) -> None:
        if not self._in_scope(ctx):
            return
        found = same_device_operands(ctx, node)
        if found is None:
            return
        what, operands = found
        scope = scope_of(ctx, node)
        if self._plain_attribute(node, what, operands, scope, ctx) or self._makes_none(ctx, ctx.function):
            return
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
            # no fix from an attribute of an input object: nothing shows what it holds where the factory runs
            safety = self._fix_safety(ctx, call, scope.function, param) if "." not in param else None
            ctx.report(
                node,
                f"`{short(ctx, call)}` is created on the CPU {_cpu_words(ctx, call)} and meets "
                f"`{short(ctx, operand)}`, computed from the input `{param}`: `{what}` raises "
                f"RuntimeError (Expected all tensors to be on the same device) when `{param}` "
                f"is on the GPU; {_device_words(ctx, call, param + '.device')}{self._dtype_hint(call, param, ctx)}",
                fix=Fix(call, fixed, safe=safety) if safety is not None and torch_name(ctx, call.func) in FACTORIES
                else None,
            )
            return
        if self._meets_placed(node, what, operands, made, ctx) \
                or self._meets_moved(node, what, operands, made, scope, ctx):
            return
        self._meets_parameter(node, what, operands, made, scope, ctx)

    @staticmethod
    def _meets_placed(node: cst.CSTNode, what: str, operands: list[cst.BaseExpression],
                      made: list[tuple[cst.BaseExpression, cst.Call]], ctx) -> bool:
        """A factory result without ``device=`` that the facts do not place (``eps * torch.eye(d)``
        with ``eps`` unknown: on the CPU, or the product raises already) meets a tensor they place on
        another device (``cov``, computed from the input of a module the file moves to CUDA):
        reported, True. Where the facts place both, SC401 speaks."""
        for op, call in made:
            if ctx.fact(op).device is not None or ctx.fact(call).device != CPU:
                continue
            for operand in operands:
                fact = ctx.fact(operand)
                device = known_device(fact)
                if any(operand is o for o, _ in made) or fact.kind != TENSOR or device not in _ELSEWHERE:
                    continue
                ctx.report(
                    node,
                    f"`{short(ctx, call)}` is created on the CPU {_cpu_words(ctx, call)} and meets "
                    f"`{short(ctx, operand)}`, "
                    f"which is on {DEVICE_WORDS[device]}{placed_note(fact)}: `{what}` raises RuntimeError (Expected "
                    f"all tensors to be on the same device); "
                    f"{_device_words(ctx, call, short(ctx, operand) + '.device')}",
                    related=[(call, "created on the CPU here")] + placed_place(fact),
                )
                return True
        return False

    def _meets_moved(self, node: cst.CSTNode, what: str, operands: list[cst.BaseExpression],
                     made: list[tuple[cst.BaseExpression, cst.Call]], scope, ctx) -> bool:
        """A factory result without ``device=`` meets a tensor the function moved to a device it
        names (``real = data.to(device)``; ``netD(real)``): reported, True. Moving it says that the
        device may be a GPU; where it is known, SC401 speaks."""
        for operand in operands:
            if any(operand is op for op, _ in made):
                continue
            device = moved_to(ctx, operand, self._moves(ctx), id(scope.function))
            fact = ctx.fact(operand)
            if device is None or fact.kind not in (TENSOR, None) or known_device(fact) is not None:
                continue
            call = made[0][1]
            if ctx.fact(call).device != CPU:
                return True
            ctx.report(
                node,
                f"`{short(ctx, call)}` is created on the CPU {_cpu_words(ctx, call)} and meets "
                f"`{short(ctx, operand)}`, which is on `{device}` (moved there in this function): `{what}` raises "
                f"RuntimeError (Expected all tensors to be on the same device) unless `{device}` is the CPU; "
                f"{_device_words(ctx, call, device)}",
                condition=f"`{device}` is the CPU",
            )
            return True
        return False

    def _meets_parameter(self, node: cst.CSTNode, what: str, operands: list[cst.BaseExpression],
                         made: list[tuple[cst.BaseExpression, cst.Call]], scope, ctx) -> None:
        """In ``forward``, a factory result without ``device=`` meets a parameter or a registered
        buffer of the module (``self.scale * torch.ones(d)``): reported."""
        if not ctx.in_forward:
            return
        for operand in operands:
            if any(operand is op for op, _ in made):
                continue
            root = self._held_root(ctx, operand, id(scope.function))
            fact = ctx.fact(operand)
            if root is None or fact.kind != TENSOR or fact.device is not None:
                continue
            call = made[0][1]
            if ctx.fact(call).device != CPU:
                return
            what_it_is = "a parameter" if fact.grad == LEAF_REQUIRES_GRAD else "a registered tensor"
            if _attribute_root(ctx, operand) is None:  # `cov`, computed from `self.L`
                what_it_is = f"computed from `{short(ctx, root)}`, a tensor"
            ctx.report(
                node,
                f"`{short(ctx, call)}` is created on the CPU {_cpu_words(ctx, call)} and meets "
                f"`{short(ctx, operand)}`, {what_it_is} of the module, which moves with it: `{what}` raises "
                f"RuntimeError (Expected all tensors to be on the same device) when the module runs on a GPU; "
                f"{_device_words(ctx, call, short(ctx, root) + '.device')}",
                condition=ON_CPU_ONLY,
            )
            return

    def _layer_input(self, node: cst.Call, ctx) -> None:
        """In ``forward``, a factory result without ``device=`` given to a ``torch.nn`` layer of the
        module that holds parameters (``self.wpe(torch.arange(t))``, ``self.gru(x, h0)``): reported."""
        if not ctx.in_forward or not _is_module_attr(node.func) or not self._in_scope(ctx) \
                or self._makes_none(ctx, ctx.function):
            return
        layer = ctx.fact(node.func)
        qual = layer.qual or ""
        if layer.kind != MODULE or not qual.startswith("torch.nn.") or not layer.params or layer.device is not None:
            return  # a layer placed by a move of the file: SC401 speaks
        args = positional(node)
        inputs = args[:1]
        if qual.split(".")[-1] in _RECURRENT and len(args) >= 2:  # the initial state meets the weights too
            state = args[1]
            inputs.extend(e.value for e in state.elements if type(e) is cst.Element) \
                if isinstance(state, (cst.Tuple, cst.List)) else inputs.append(state)
        function = ctx.function
        for arg in inputs:
            call = self._factory(arg, function, ctx)
            if call is None or ctx.fact(call).device != CPU:
                continue
            layer_name = short(ctx, node.func)
            ctx.report(
                node,
                f"`{short(ctx, call)}` is created on the CPU {_cpu_words(ctx, call)} and is given to "
                f"`{layer_name}`, a layer whose parameters move with the module: the call raises RuntimeError "
                f"(Expected all tensors to be on the same device) when the module runs on a GPU; "
                f"{_device_words(ctx, call)} (the device of the input, or `{layer_name}.weight.device`)",
                condition=ON_CPU_ONLY,
            )
            return

    def _plain_attribute(self, node: cst.CSTNode, what: str, operands: list[cst.BaseExpression], scope,
                         ctx) -> bool:
        """A plain tensor attribute of a module the file moves (left on the CPU) meets a tensor
        computed from an input: reported, True."""
        for operand in operands:
            root = _attribute_root(ctx, operand)
            if root is None:
                continue
            owner = ctx.fact(root.value)
            fact = ctx.fact(operand)
            if owner.placed_by is None or fact.kind != TENSOR or fact.device != CPU or fact.is_scalar_cpu \
                    or fact.shape is None or not (fact.shape.rank or len(fact.shape.dims)) \
                    or ctx.fact(root).device != CPU:
                continue
            for other in operands:
                param = None if other is operand else self._param_tensor(other, scope, ctx)
                if param is None:
                    continue
                attr = root.attr.value
                ctx.report(
                    node,
                    f"`self.{attr}` is a plain tensor attribute, not a registered buffer, so moving the "
                    f"module leaves it on the CPU ({owner.placed_by}); it meets `{short(ctx, other)}`, "
                    f"computed from the input `{param}`: `{what}` raises RuntimeError (Expected all tensors "
                    f"to be on the same device) when `{param}` is on the GPU; register it in `__init__` with "
                    f"`self.register_buffer(\"{attr}\", ...)`",
                    related=placed_place(owner),
                )
                return True
        return False

    @staticmethod
    def _fix_safety(ctx, call: cst.Call, function: Optional[cst.FunctionDef], param: str) -> Optional[bool]:
        """Whether adding ``device=param.device`` to ``call`` is safe (True), unsafe (False) or
        not offered (None).

        ``param`` must denote the parameter where the factory runs: no fix inside a nested
        scope (a lambda or comprehension may bind the same name) or in another function. It is
        unsafe when the function rebinds ``param`` (``x = x.shape`` leaves no ``.device``) or
        when nothing shows that it is a tensor (an unannotated ``forward(self, x)`` may be
        called with a float, which adds to a tensor but has no ``.device``).
        """
        place = fix_safety.place_of(ctx, call)
        if function is None or place is None or place.scope is not function or place.in_inner_scope:
            return None
        rebound = fix_safety.rebound(place, param)
        if rebound is None:
            return None
        declared = _params(function).get(param)
        evidence = declared is not None and _annotated_tensor(declared)
        if declared is not None and not evidence and not rebound:
            evidence = ctx.fact(declared.name).kind == TENSOR  # its binding where the hook runs
        return evidence and not rebound
