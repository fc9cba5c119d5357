"""SC401 cross-device-operation: tensors (or a module and its input) on different devices meet in one
op."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.rules.base import Rule, register
from shapecheck.rules.device.first_iteration import first_iteration_fact
from shapecheck.rules.device.method_inputs import Feeds, fed_layer, record_feed
from shapecheck.rules.device.operands import same_device_operands
from shapecheck.rules.device.placement import (
    DEVICE_WORDS, cpu_origin, cpu_place, known_device, placed_note, placed_place,
)
from shapecheck.rules.helpers.calls import positional
from shapecheck.rules.helpers.messages import short
from shapecheck.semantic.facts import CPU, CUDA, MAYBE_CUDA, MODULE, TENSOR, Fact
from shapecheck.semantic.torch_api import NN_LOSS_WEIGHTS


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


#: ops and layers that take no 0-dim operand: a CPU tensor meeting a CUDA one there fails
#: whatever its rank, so the 0-dim exception does not apply
_NO_SCALAR_OPERAND = frozenset({"@", "torch.matmul", "torch.mm", "torch.bmm", ".matmul()", ".mm()", ".bmm()"})
#: ``torch.nn`` layers holding parameters that take a 0-dim input (a 0-dim CPU input may mix
#: with CUDA weights there); the others need at least one dim, so any CPU input fails
_SCALAR_INPUT_LAYERS = frozenset({"torch.nn.PReLU", "torch.nn.Embedding", "torch.nn.EmbeddingBag"})


def _multi_dim_cpu(fact: Fact, any_rank: bool = False) -> bool:
    """A CPU tensor that is surely not 0-dim (0-dim CPU tensors mix with CUDA ones legally);
    ``any_rank``: a CPU tensor of any rank (the op takes no 0-dim operand)."""
    shape = fact.shape
    if any_rank and fact.kind == TENSOR:
        return True
    return (
        fact.kind == TENSOR
        and not fact.is_scalar_cpu
        and shape is not None
        and (shape.rank >= 1 if shape.rank is not None else len(shape.dims) >= 1)
    )


def _inputs(ctx, args: list[cst.BaseExpression], local: bool) -> list[tuple[cst.BaseExpression, Fact]]:
    """The facts a module call gives its layer: each argument's, and for a ``torch.nn`` layer the
    elements of a tuple an argument holds (``h = self.init_hidden(b); self.lstm(x, h)``)."""
    out = []
    for arg in args:
        fact = ctx.fact(arg)
        if not local and fact.kind is None and fact.elems and not fact.maybe_pair:
            out += [(arg, f) for f in fact.elems]
        else:
            out.append((arg, fact))
    return out


@register
class CrossDeviceOperation(Rule):
    """SC401: tensors (or a module and its input) on different devices meet in one op."""
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

Inside the methods of a module class that the file moves (`Emb(...).cuda()`, `model =
Net(); model.to(device)`, `train(Net(), "cuda")` with a `train` of the file that moves the
module it is given, also as a submodule of a moved module), parameters, registered buffers,
submodules and what those layers return are on that device; a plain tensor attribute
(`self.mask = torch.ones(n, n)` in `__init__`), a factory without `device=` (also in a helper
method: `h = self.init_hidden(b)`) and `torch.from_numpy(...)` stay on the CPU. A `DataLoader`
over a `TensorDataset` or a `torchvision` dataset yields CPU batches; a loss (`F.cross_entropy`,
`nn.CrossEntropyLoss()(...)`) given a CUDA output and such a CPU target fails too, and so does
a loss built with a CPU weight tensor (`nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))`,
`nn.CrossEntropyLoss(weight=w)`, `F.cross_entropy(out, y, weight=w)`) given a CUDA input: the loss
registers the weight as a buffer, which `criterion.to(device)` moves.

The `meta` device (`torch.device("meta")`, `.to("meta")`) is a device of its own: a meta tensor
meets no tensor of another device (a 0-dim CPU tensor aside). A module filled with
`load_state_dict(..., assign=True)` or `to_empty(device=...)` leaves it; a file that builds
models under `with torch.device(...)` is not judged by where its factories are. A device given
by the file's calls (`main(torch.device("meta"), loader)`) reaches the helpers it is passed to.
In a loop whose body rebinds a name (`input_ids = torch.cat([input_ids, nxt], 1)`), a module
called on it before any rebinding, outside any `if`, and with no `continue` before, runs on the
value bound before the loop on the first iteration.

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
        # the start tokens are made on the module's device
        "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "emb = nn.Embedding(10, 8).to(device)\ninp = torch.zeros(4, 1, dtype=torch.long, device=device)\n"
        "for i in range(5):\n    out = emb(inp)\n    inp = out.argmax(-1)\n",
        # a later argument of the file's own module may stay on the CPU (lengths, statistics)
        "import torch\nimport torch.nn as nn\nclass Rescale(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 4)\n    def forward(self, x, stats):\n"
        "        return self.fc(x) * stats.sum()\nmodel = Rescale().cuda()\n"
        "out = model(torch.randn(2, 4).cuda(), torch.tensor([0.5, 0.25]))\n",
        "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "x = torch.randn(3).to(device)\ny = torch.randn(3, device=device)\nz = x + y\n",
        "import torch\nx = torch.randn(3).cuda()\ns = torch.randn(5).sum()\nz = x * s\n",
        "import torch\nx = torch.randn(3).cuda()\nz = x * 2.0 + torch.tensor(1.0)\n",
        "import torch\nx = torch.randn(3).cuda()\ny = torch.zeros(3, device=x.device)\nz = x + y\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nmodel.cuda()\n"
        "out = model(torch.randn(8, 4).cuda())\n",
        "import torch\nx = torch.randn(3).cuda()\ny = torch.randn(3)\nz = x + y.cuda()\n",
        # the index is made on the input's device
        "import torch\nimport torch.nn as nn\nclass Emb(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(64, 8)\n    def forward(self, idx):\n"
        "        return self.pos(torch.arange(idx.size(1), device=idx.device))\nmodel = Emb().cuda()\n",
        # the function that moves the module is given a device it cannot know
        "import torch\nimport torch.nn as nn\nclass Emb(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(64, 8)\n    def forward(self, idx):\n"
        "        return self.pos(torch.arange(idx.size(1)))\n"
        "def train(model, device):\n    model.to(device)\ndef main(args):\n    train(Emb(), args.device)\n",
        # the LSTM state is made on the device of the input
        "import torch\nimport torch.nn as nn\nclass RNN(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lstm = nn.LSTM(4, 8)\n    def init_hidden(self, x):\n"
        "        return x.new_zeros(1, x.size(1), 8), x.new_zeros(1, x.size(1), 8)\n    def forward(self, x):\n"
        "        return self.lstm(x, self.init_hidden(x))\nmodel = RNN().cuda()\n",
        # a registered buffer moves with the module
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(4, 4))\n"
        "        self.register_buffer('mask', torch.ones(4, 4))\n    def forward(self, x):\n"
        "        return x @ (self.w * self.mask)\nmodel = Net().cuda()\n",
        # the loss's weight is moved with it, made on the device, or 0-dim
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 3).cuda()\n"
        "crit = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]))\ncrit.to('cuda')\n"
        "crit2 = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]).cuda())\n"
        "crit3 = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.0))\n"
        "x, y = torch.randn(8, 4).cuda(), torch.randint(0, 3, (8,)).cuda()\n"
        "loss = crit(model(x), y) + crit2(model(x), y) + crit3(model(x), torch.rand(8, 3).cuda())\n",
        # a model built on the meta device on purpose, then materialised on the GPU
        "import torch\nimport torch.nn as nn\nwith torch.device('meta'):\n    model = nn.Linear(4, 2)\n"
        "model = model.to_empty(device='cuda')\nout = model(torch.randn(8, 4).cuda())\n",
        # the loop moves the state before the module first meets it
        "import torch\nimport torch.nn as nn\nmodel = nn.GRUCell(4, 4).cuda()\nh = torch.zeros(2, 4)\n"
        "for x in torch.randn(5, 2, 4).cuda():\n    h = h.to(x.device)\n    h = model(x, h)\n",
        # the first iteration skips the call: later ones see the moved value
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 4).cuda()\nh = torch.zeros(2, 4)\n"
        "for i in range(3):\n    if i == 0:\n        h = h.cuda()\n        continue\n    h = model(h)\n",
    )
    invalid = (
        # greedy decoding: the first iteration feeds the CPU start tokens to the moved embedding
        "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "emb = nn.Embedding(10, 8).to(device)\ninp = torch.zeros(4, 1, dtype=torch.long)\nfor i in range(5):\n"
        "    out = emb(inp)  # <--\n    inp = out.argmax(-1)\n",
        "import torch\nx = torch.tensor([1.0])\ny = torch.tensor([2.0]).cuda()\nz = x + y  # <--\n",
        "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
        "model = nn.Linear(4, 2).to(device)\nx = torch.randn(8, 4)\nout = model(x)  # <--\n",
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2)\nmodel.cuda()\n"
        "out = model(torch.randn(8, 4))  # <--\n",
        "import torch\na = torch.ones(2, 3).cuda()\nb = torch.ones(2, 3)\nc = torch.cat([a, b])  # <--\n",
        # a factory without `device=` in `forward` of a module the file moves to CUDA
        "import torch\nimport torch.nn as nn\nclass Emb(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(64, 8)\n    def forward(self, idx):\n"
        "        return self.pos(torch.arange(idx.size(1)))  # <--\nmodel = Emb().cuda()\n",
        # a function of the file moves the module it is given
        "import torch\nimport torch.nn as nn\nclass Emb(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.pos = nn.Embedding(64, 8)\n    def forward(self, idx):\n"
        "        return self.pos(torch.arange(idx.size(1)))  # <--\n"
        "def train(model, device):\n    model.to(device)\ntrain(Emb(), 'cuda')\n",
        # a helper method makes the LSTM state on the CPU
        "import torch\nimport torch.nn as nn\nclass RNN(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.lstm = nn.LSTM(4, 8)\n    def init_hidden(self, b):\n"
        "        return torch.zeros(1, b, 8), torch.zeros(1, b, 8)\n    def forward(self, x):\n"
        "        h = self.init_hidden(x.size(1))\n        return self.lstm(x, h)  # <--\nmodel = RNN().cuda()\n",
        # the target of the batch is left on the CPU
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader, TensorDataset\nmodel = nn.Linear(4, 2).cuda()\n"
        "loader = DataLoader(TensorDataset(torch.randn(10, 4), torch.randint(0, 2, (10,))), batch_size=2)\n"
        "for x, y in loader:\n    loss = F.cross_entropy(model(x.cuda()), y)  # <--\n",
        # a plain tensor attribute is not moved with the module
        "import torch\nimport torch.nn as nn\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(4, 4))\n"
        "        self.mask = torch.ones(4, 4)\n    def forward(self, x):\n"
        "        return x @ (self.w * self.mask)  # <--\nmodel = Net().cuda()\n",
        # the loss registers its CPU `pos_weight` as a buffer; the model's output is on CUDA
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 1).cuda()\n"
        "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))\n"
        "x, y = torch.randn(8, 4).cuda(), torch.rand(8, 1).cuda()\nloss = criterion(model(x), y)  # <--\n",
        # the functional loss's class weights are on the CPU
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nmodel = nn.Linear(4, 3).cuda()\n"
        "w = torch.tensor([1.0, 2.0, 3.0])\nx, y = torch.randn(8, 4).cuda(), torch.randint(0, 3, (8,)).cuda()\n"
        "loss = F.cross_entropy(model(x), y, weight=w)  # <--\n",
        # the meta device (shapes without data) mixes with no other device
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 2).to(torch.device('meta'))\n"
        "out = model(torch.randn(8, 4))  # <--\n",
        # the loop joins what it rebinds: its first iteration runs the module on the CPU tensor
        "import torch\nimport torch.nn as nn\nmodel = nn.Linear(4, 4).cuda()\nh = torch.zeros(2, 4)\n"
        "for _ in range(3):\n    with torch.no_grad():\n        out = model(h)  # <--\n"
        "    h = torch.cat([h, out])[-2:]\n",
        # a slice of a table made from NumPy stays on the CPU
        "import numpy as np\nimport torch\nimport torch.nn as nn\nclass Enc(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.embed = nn.Embedding(10, 4)\n"
        "    def forward(self, x):\n        pe = torch.from_numpy(np.ones((16, 4))).float()\n"
        "        h = self.embed(x)\n        return h + pe[: h.size(1)]  # <--\n"
        "enc = Enc().cuda()\nout = enc(torch.randint(0, 10, (2, 8)).cuda())\n",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Operators between tensors on different devices."""
        self._check(node, ctx)

    def __init__(self) -> None:
        self._feeds: Feeds = {}

    def carry_from(self, plain: "CrossDeviceOperation") -> None:
        """Take the layers that the plain walk of the file saw methods feed (a call-site context
        walks one function only)."""
        self._feeds = plain._feeds

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """Torch functions and methods on tensors of different devices, and a module called on an
        input on another device."""
        record_feed(self._feeds, ctx, node)
        if self._loss_weight(node, ctx) or self._check(node, ctx):
            return
        callee = ctx.fact(node.func)
        args = positional(node)
        if callee.kind != MODULE and args:
            self._method_input(node, args, ctx)
        if callee.kind != MODULE or not args:
            return
        module_device = known_device(callee)
        if module_device is None:
            return
        local = not (callee.qual or "").startswith("torch.nn.")
        if local and (module_device == CPU or callee.placed_by is not None):
            return  # `forward` of a class of this file may move its input itself
        if local:
            args = args[:1]  # later arguments (lengths, statistics, masks) may rightly stay on the CPU
        if not local:  # `lstm(x, (h0, c0))`: the state tuple's tensors meet the weights too
            args = [e.value for a in args for e in (a.elements if isinstance(a, (cst.Tuple, cst.List)) else ())
                    if type(e) is cst.Element] + [a for a in args if not isinstance(a, (cst.Tuple, cst.List))]
        for arg, fact in _inputs(ctx, args, local):
            first = ""
            joined = known_device(fact)
            if (joined is None or joined == MAYBE_CUDA) and not fact.elems:
                # the loop head joins the value bound before the loop with what the body rebinds it
                # to (`inp = out.argmax(-1)`: on the module's device); the first iteration reads the former
                entry = first_iteration_fact(ctx, arg)
                if entry is not None and known_device(entry) not in (None, joined):
                    fact, first = entry, " on the first iteration of the loop"
            device = known_device(fact)
            if fact.kind != TENSOR or device is None:
                continue
            cpu_side = fact if device == CPU else None
            when = _conflict(module_device, device)
            any_rank = not local and callee.qual not in _SCALAR_INPUT_LAYERS and bool(callee.params)
            if when is None or (cpu_side is not None and not _multi_dim_cpu(cpu_side, any_rank)):
                continue
            module = short(ctx, node.func)
            origin = cpu_origin(ctx, arg) if device == CPU else None
            if origin is not None:
                ctx.report(
                    node,
                    f"{origin[0]}, but module `{module}` is on {DEVICE_WORDS[module_device]}"
                    f"{placed_note(callee)}: the call raises RuntimeError (Expected all tensors to "
                    f"be on the same device){_when(when)}; {origin[1]}",
                    related=cpu_place(ctx, arg) + placed_place(callee),
                )
                return
            ctx.report(
                node,
                f"module `{module}` is on {DEVICE_WORDS[module_device]}{placed_note(callee)} but its "
                f"input `{short(ctx, arg)}` is on {DEVICE_WORDS[device]}{first}: the call raises RuntimeError "
                f"(Expected all tensors to be on the same device){_when(when)}; move the input "
                f"with `.to(device)`",
                related=(cpu_place(ctx, arg) if device == CPU else []) + placed_place(callee),
            )
            return

    def _method_input(self, node: cst.Call, args: list[cst.BaseExpression], ctx) -> None:
        """``model.decode(z)``: a method of a module class of the file that gives its argument
        straight to a layer of the module (see :mod:`.method_inputs`), called on an instance on
        one device with a tensor on another."""
        func = node.func
        if type(func) is not cst.Attribute or len(args) != len(node.args):
            return
        receiver = ctx.fact(func.value)
        module_device = known_device(receiver)
        if module_device is None or module_device == CPU or receiver.placed_by is not None:
            return
        for index, arg in enumerate(args):
            layer = fed_layer(self._feeds, receiver, func.attr.value, index)
            fact = ctx.fact(arg)
            device = known_device(fact)
            if layer is None or fact.kind != TENSOR or device is None:
                continue
            when = _conflict(module_device, device)
            if when is None or (device == CPU and not _multi_dim_cpu(fact)):
                continue
            module = short(ctx, func.value)
            origin = cpu_origin(ctx, arg) if device == CPU else None
            said = origin[0] if origin is not None else f"`{short(ctx, arg)}` is on {DEVICE_WORDS[device]}"
            fix = origin[1] if origin is not None else "move it with `.to(device)`"
            ctx.report(
                node,
                f"{said}, but module `{module}` is on {DEVICE_WORDS[module_device]} and "
                f"`{short(ctx, func)}` gives it to `{layer}`: the call raises RuntimeError (Expected all "
                f"tensors to be on the same device){_when(when)}; {fix}",
                related=cpu_place(ctx, arg) if origin is not None else (),
            )
            return

    def _loss_weight(self, node: cst.Call, ctx) -> bool:
        """A ``torch.nn`` loss holding a weight tensor (``nn.BCEWithLogitsLoss(pos_weight=w)``) on
        one device, called on an input on another: reported, True."""
        loss = ctx.fact(node.func)
        qual = loss.qual or ""
        args = positional(node)
        if loss.kind != MODULE or not qual.startswith("torch.nn.") or qual[len("torch.nn."):] not in NN_LOSS_WEIGHTS \
                or not loss.params or not args:
            return False
        held = known_device(loss)
        device = known_device(ctx.fact(args[0]))
        if held is None or device is None or ctx.fact(args[0]).kind != TENSOR:
            return False
        when = _conflict(held, device)
        if when is None:
            return False
        name = short(ctx, node.func)
        weights = " and ".join(f"`{w}`" for w in loss.params)
        ctx.report(
            node,
            f"`{name}` holds {weights} on {DEVICE_WORDS[held]} (the tensor it was built with) but its input "
            f"`{short(ctx, args[0])}` is on {DEVICE_WORDS[device]}: the call raises RuntimeError (Expected all "
            f"tensors to be on the same device){_when(when)}; move the loss with `{name} = {name}.to(device)` "
            f"(or create the weight on the device)",
        )
        return True

    def _check(self, node: cst.CSTNode, ctx) -> bool:
        found = same_device_operands(ctx, node)
        if found is None:
            return False
        what, operands = found
        placed = []
        for operand in operands:
            fact = ctx.fact(operand)
            device = known_device(fact)
            if fact.kind == TENSOR and device is not None:
                placed.append((operand, fact, device))
        for i, (a, fa, da) in enumerate(placed):
            for b, fb, db in placed[i + 1:]:
                when = _conflict(da, db)
                if when is None:
                    continue
                any_rank = what in _NO_SCALAR_OPERAND
                if (da == CPU and not _multi_dim_cpu(fa, any_rank)) or (db == CPU and not _multi_dim_cpu(fb, any_rank)):
                    continue
                cpu, other, other_device, other_fact = (a, b, db, fb) if da == CPU else (b, a, da, fa)
                origin = cpu_origin(ctx, cpu) if CPU in (da, db) else None
                if origin is not None:
                    ctx.report(
                        node,
                        f"{origin[0]}, but `{short(ctx, other)}` is on {DEVICE_WORDS[other_device]}"
                        f"{placed_note(other_fact)}: `{what}` raises RuntimeError (Expected all tensors "
                        f"to be on the same device){_when(when)}; {origin[1]}",
                        related=cpu_place(ctx, cpu) + placed_place(other_fact),
                    )
                    return True
                ctx.report(
                    node,
                    f"`{short(ctx, a)}` is on {DEVICE_WORDS[da]} and `{short(ctx, b)}` is on "
                    f"{DEVICE_WORDS[db]}: `{what}` raises RuntimeError (Expected all tensors to be on "
                    f"the same device){_when(when)}; move one with "
                    f"`.to({short(ctx, b if da == CPU else a)}.device)`",
                    related=cpu_place(ctx, cpu) if CPU in (da, db) else (),
                )
                return True
        return True
