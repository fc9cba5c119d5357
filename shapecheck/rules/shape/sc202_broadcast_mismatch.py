"""SC202 broadcast-mismatch: elementwise op on tensors whose known shapes cannot broadcast."""

from __future__ import annotations

from typing import Optional, Sequence, cast

import libcst as cst

from shapecheck.broadcast import InvalidShapeError, broadcast_shapes, generic_mismatch
from shapecheck.errors import BroadcastError
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import reduced_here, report_unless, short
from shapecheck.rules.helpers.operators import ARITHMETIC_OPERATORS, COMPARISON_OPERATORS
from shapecheck.rules.shape.axis_sizes import Misplaced, misplaced_cut, misplaced_size
from shapecheck.rules.shape.channel_vectors import channel_vector
from shapecheck.rules.shape.index_drops import dropped_index, index_against
from shapecheck.rules.shape.loss_targets import mismatch as loss_mismatch
from shapecheck.rules.shape.own_transposes import with_own_transpose
from shapecheck.rules.shape.pairwise_axes import paired_by_position
from shapecheck.rules.shape.squared_errors import squared_error
from shapecheck.rules.shape.sc201_reduction_without_keepdim import matrix_types_possible, misaligned_unless
from shapecheck.semantic.facts import TENSOR, Fact
from shapecheck.semantic.torch_api import BROADCASTING_FUNCTIONS, ELEMENTWISE_BINARY, INPLACE_METHODS
from shapecheck.shapes import Shape, format_shape


#: the binary methods whose in-place form writes the broadcast result into the receiver
_INPLACE_BINARY = frozenset(n + "_" for n in ELEMENTWISE_BINARY if n + "_" in INPLACE_METHODS)
# the ops that combine a per-channel vector (a bias, a scale) with a convolution's output
_CHANNEL_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
_CHANNEL_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)
_CHANNEL_FUNCTIONS = frozenset({"torch.add", "torch.sub", "torch.mul", "torch.div"})
_CHANNEL_METHODS = frozenset({"add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_"})
_AUGMENTED = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign, cst.PowerAssign,
              cst.FloorDivideAssign, cst.ModuloAssign)


def grows_the_target(target: Shape, others: Sequence[Shape]) -> Optional[tuple[str, Optional[str]]]:
    """Why writing the broadcast of ``target`` with ``others`` into ``target`` fails, as
    ``(reason, condition)``: the broadcast has more dims, or a dim of size 1 in ``target`` meets
    a larger size (``condition``: the symbol that would have to be 1); ``None`` when it fits or
    is unknown."""
    if target.rank is None or any(o.rank is None for o in others):
        return None
    width = max([target.rank] + [o.rank for o in others if o.rank is not None])
    if width > target.rank:
        return f"the broadcast has {width} dims, the tensor written has {target.rank}", None
    symbols: list[tuple[int, str]] = []
    for j in range(1, target.rank + 1):
        if target.dims[-j] != 1:
            continue
        for o in others:
            d = o.dims[-j] if len(o.dims) >= j else 1
            if isinstance(d, int) and d > 1:
                return f"its size 1 at dim {target.rank - j} meets {d}", None
            if isinstance(d, str) and all(s != d for _i, s in symbols):
                symbols.append((target.rank - j, d))
    if not symbols:
        return None
    symbols.sort()
    dims = ", ".join(f"dim {i} meets {d}" for i, d in symbols)
    names = " and ".join(f"`{d}`" for _i, d in symbols)
    return f"its size 1 at {dims}", f"{names} {'is' if len(symbols) == 1 else 'are'} 1"


def _shape_of(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``x`` for ``x.shape`` and ``x.size()``: the tensor an ``expand`` argument takes the shape of."""
    if type(expr) is cst.Attribute and expr.attr.value == "shape":
        return expr.value
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value == "size" and not expr.args:
        return expr.func.value
    return None


def _reductions(tensors: Sequence[tuple[cst.BaseExpression, Fact]]) -> list[tuple[cst.CSTNode, str]]:
    """The reductions without ``keepdim`` that made operands of a mismatch, for related lines."""
    return [place for _o, f in tensors for place in reduced_here(f.reduction)]


@register
class BroadcastMismatch(Rule):
    """SC202: elementwise op on tensors whose known shapes cannot broadcast."""
    code = "SC202"
    name = "broadcast-mismatch"
    severity = "error"
    summary = "elementwise op on tensors whose known shapes cannot broadcast"
    doc = """\
## What it does
Flags elementwise operations (`+ - * / // % **`, comparisons, `torch.add`/`mul`/`where`/
`maximum`/..., the method forms, `masked_fill` (the tensor and its mask), and augmented
assignment `a += b`) whose operand shapes are
known (literal sizes, or jaxtyping annotation names) and cannot broadcast. Two different
annotation names (`n` vs `m`) count as a mismatch: the annotations promise nothing that makes
them equal. Two different sizes read from one tensor (`T` and `B` of `B, T = x.size()`, and
views built from them) are generic, independent of each other: `(B, T)` against `(B,)` (a
forgotten `unsqueeze`) is flagged, and the message names the exception ("raises unless `T`
equals `B` or one of them is 1"). Sizes from a config, an attribute, a parameter or another
tensor, and int sizes against such sizes, may be equal by construction: never flagged.

An integer index over a non-leading dim broadcast back against the tensor it indexed
(`y / y[:, -1, :]`, or `logits < v[:, -1]` with `v` the values of `torch.topk(logits, k)`,
which have its rank) drops that dim as a reduction without `keepdim` does: broadcasting lines
what is left up with the trailing dims. It is flagged by the leading-dims rule of SC201, whatever
the sizes; `y[:, -1:, :]`, `v[:, [-1]]` and `x[0]` are silent.

Two cases are wrong whatever the sizes, and flagged as such: a module's 1-D parameter or buffer
sized by the `out_channels` of one of its convolutions, combined with that convolution's output
(`self.conv(x) + self.bias`: channels are dim 1, broadcasting puts the vector on the last dim;
use `self.bias.view(1, -1, 1, 1)`; also through norms, activations and poolings of the module,
for `F.conv2d(x, self.weight)` with the weight made `(cout, cin, k, k)`, and for a convolution
and a vector held in local names), and an elementwise loss (`F.mse_loss`, `nn.L1Loss`,
`nn.BCEWithLogitsLoss`...) given a `(..., 1)` input and a 1-D target, which broadcast to every
pair `(N, N)` (torch only warns for MSE/L1); the same error written by hand and reduced
(`((out - y) ** 2).mean()` with `out = fc(x)` of shape `(N, 1)`) is flagged too, while a column
made on purpose (`a[:, None] - b`, `a.unsqueeze(1) - b`: pairwise differences) is not. Such a
loss given a target larger than its input on an axis where the input has size 1 is flagged too:
`(B, 1)` against the `(B, B)` that an earlier `(B, 1) + (B,)` made (DQN's `r + gamma *
q_next.max(1)[0]` with `r` of shape `(B, 1)`) compares each prediction with the targets of every
row (a vector compared with each row of a matrix, which lacks the row axis, is left alone).

`y.expand_as(x)` and `y.expand(x.shape)` are checked as `y` broadcast against `x` (squeeze-
excitation weights `(b, c)` expanded to `(b, c, h, w)` raise unless `c` equals `w`...).

A size read from a tensor names one of its axes; the rule flags it landing on another axis of
that tensor: a gate `g.view(x.shape[0], -1)` expanded to `x` of rank 4 (its `x.shape[0]` meets
dim 2 of `x`), and a positional table cut to `x.size(0)` on a dim of size 1 (`pe[:, :x.size(0)]`
with `pe` of shape `(max_len, 1, d)`: the cut does nothing and all `max_len` rows stay). Rows of
two tensors lined up by position (`torch.max(b1[:, :2], b2[:, :2])`) in a function that also
pairs them all-against-all (`torch.min(b1[:, None, 2:], b2[:, 2:])`) and combines the two results
are flagged too: the `None` was forgotten (wrong unless both have as many rows).

Also flags an in-place op (`a.sub_(b)`, `a += b`, `a *= b`...) whose operands broadcast, but
to a shape larger than the tensor it writes into: `a` of shape `(1, H, W)` with `b` of shape
`(3, 1, 1)` broadcast to `(3, H, W)`, which does not fit in `a`. When the larger size is a size
the code computed (`c` of `b, c, h, w = x.shape`), the finding holds unless that size is 1 and
says so.

## Why is this bad?
Broadcasting aligns shapes on the right; in each column the sizes must be equal or one of them
1. Otherwise torch raises `RuntimeError: The size of tensor a (3) must match the size of tensor
b (2) at non-singleton dimension 1`. An in-place op cannot grow its target: torch raises
`RuntimeError: output with shape [1, 4, 5] doesn't match the broadcast shape [3, 4, 5]`.

## Example
```python
a = torch.zeros(2, 3)
b = torch.zeros(2)
c = a + b           # 3 vs 2 in the last column
```

## Use instead
```python
c = a + b[:, None]  # (2, 3) + (2, 1)
```
"""
    valid = (
        # the target keeps the input's shape: the max is made a column first
        "import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 2)\nb_s = torch.randn(32, 4)\n"
        "b_a = torch.randint(0, 2, (32, 1))\nb_r = torch.randn(32, 1)\nq_eval = net(b_s).gather(1, b_a)\n"
        "q_target = b_r + 0.9 * net(b_s).detach().max(1)[0].view(32, 1)\nloss = nn.MSELoss()(q_eval, q_target)\n",
        # one vector compared with each row: the input lacks the row axis, it is not widened
        "import torch\nimport torch.nn.functional as F\ncenter = torch.zeros(8)\n"
        "loss = F.mse_loss(center, torch.randn(16, 8))\n",
        # the assert says the two chunk sizes are equal (mamba's reference segsum)
        "import torch\ndef segsum(dSSdA, dA_cs, chunk_size):\n    B, H, nchunks, C, C_ = dSSdA.shape\n"
        "    assert C == chunk_size == C_\n    seg = dA_cs.view(B, H, nchunks, C)\n"
        "    seg = seg[..., :, None] - seg[..., None, :]\n    return dSSdA.permute([0, 1, 2, 4, 3]) * torch.exp(seg)\n",
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(3)\nc = a + b\n",
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(2)\nc = a + b[:, None]\n",
        "import torch\na = torch.zeros(2, 1, 4)\nb = torch.zeros(5, 1)\nc = a * b\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(x: Float[torch.Tensor, 'b c'], y: Float[torch.Tensor, 'c']):\n    return x + y\n",
        "import torch\nfrom jaxtyping import Float\n\ndef f(x: Float[torch.Tensor, 'b c']):\n"
        "    return x + torch.zeros(3)\n",
        "import torch\na = torch.zeros(3, 4)\na += torch.zeros(4)\na.sub_(torch.zeros(3, 1))\n",
        "import torch\na = torch.zeros(1, 4, 5)\nb = torch.zeros(3, 1, 1)\nc = a - b\n",
        "import torch\ndef f(x):\n    b, c, h, w = x.shape\n    m = torch.zeros(b, c, h, w)\n    m.add_(x)\n",
        # generic sizes: an unsqueeze, keepdim results, a config's size, sizes of two tensors
        "import torch\ndef f(x):\n    B, T = x.size()\n    x = x.contiguous()\n"
        "    return x - torch.ones(B).unsqueeze(1) + x / x.sum(-1, keepdim=True) - x.mean(0, keepdim=True)\n",
        "import torch\ndef f(x, d_model):\n    B, T, C = x.size()\n    return x.contiguous() + torch.zeros(d_model)\n",
        "def f(x, y):\n    B, T, C = x.size()\n    S, D = y.size()\n    return x.contiguous()[0] + y.contiguous()\n",
        "import torch\ndef f(x):\n    B, T, C = x.size()\n    scores = x.contiguous() @ x.transpose(1, 2)\n"
        "    mask = torch.ones(B, T).bool()\n    return scores.masked_fill(mask[:, None, :], 0.0)\n",
        # a per-channel vector viewed onto the channel dim; a Linear's output has its features last
        "import torch\nimport torch.nn as nn\nclass C(nn.Module):\n    def __init__(self, cin, cout):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)\n"
        "        self.bias = nn.Parameter(torch.zeros(cout))\n    def forward(self, x):\n"
        "        out = self.conv(x)\n        return out + self.bias.view(1, -1, 1, 1)\n",
        "import torch\nimport torch.nn as nn\nclass L(nn.Module):\n    def __init__(self, cin, cout):\n"
        "        super().__init__()\n        self.fc = nn.Linear(cin, cout)\n"
        "        self.bias = nn.Parameter(torch.zeros(cout))\n    def forward(self, x):\n"
        "        return self.fc(x) + self.bias\n",
        # a vector sized by the input channels is not the convolution's per-channel vector
        "import torch\nimport torch.nn as nn\nclass C(nn.Module):\n    def __init__(self, cin, cout):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)\n"
        "        self.bias = nn.Parameter(torch.zeros(cin))\n    def forward(self, x):\n"
        "        return self.conv(x) + self.bias\n",
        # the loss gets one size: the head's last dim squeezed, or the target viewed as a column
        "import torch.nn as nn\nimport torch.nn.functional as F\ndef f(x, y, d):\n    fc = nn.Linear(d, 1)\n"
        "    return F.mse_loss(fc(x).squeeze(-1), y.view(-1))\n",
        "import torch.nn as nn\nimport torch.nn.functional as F\ndef f(x, y, d):\n    fc = nn.Linear(d, 1)\n"
        "    return F.mse_loss(fc(x), y.view(-1, 1))\n",
        # an index that keeps the dim (a slice, a list), or one over the leading dim
        "import torch\ndef pos(mask, eps=1e-6):\n    y = mask.cumsum(1, dtype=torch.float32)\n"
        "    return y / (y[:, -1:, :] + eps)\n",
        "import torch\ndef top(logits, k):\n    v, _ = torch.topk(logits, k)\n"
        "    logits[logits < v[:, [-1]]] = -float('inf')\n    return logits\n",
        "def f(x):\n    return x - x[0] + x[..., None] - x[:, 0][:, None]\n",
        "def f(x, y):\n    return x - y[:, 0] + x[:, 0] * x[:, 1]\n",
        "import torch\ndef f(x):\n    x = torch.randn(8)\n    return x - x[..., 0]\n",
        "def se(x):\n    b, c, h, w = x.size()\n    y = x.mean((2, 3)).view(b, c, 1, 1)\n"
        "    return x * y.expand_as(x) + y.expand(x.shape) + x[0].expand(x.size())\n",
        # a per-channel bias viewed onto the channels; a prediction squeezed to the target's shape
        "import torch\nimport torch.nn.functional as F\ndef f(x, cout):\n    w = torch.randn(cout, 3, 3, 3)\n"
        "    b = torch.zeros(cout)\n    return F.conv2d(x, w) + b.view(1, -1, 1, 1)\n",
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 1)\nx = torch.randn(32, 8)\ny = torch.randn(32)\n"
        "loss = ((fc(x).squeeze(1) - y) ** 2).mean()\n",
        # a gate viewed onto the channels of `x` (trailing 1s); a table cut on the axis that meets `x`'s
        "def gate(x, g):\n    y = x.mean((2, 3)).view(x.shape[0], 1, -1)\n"
        "    y = g(y).view(x.shape[0], -1, 1, 1)\n    return x * y.expand_as(x)\n",
        "import torch\nimport torch.nn as nn\nclass P(nn.Module):\n    def __init__(self, d, max_len=5000):\n"
        "        super().__init__()\n        self.register_buffer('pe', torch.zeros(max_len, d).unsqueeze(1))\n"
        "    def forward(self, x):\n        return x + self.pe[:x.size(0), :]\n",
        "import torch\ndef f(x, d):\n    pe = torch.zeros(1, 512, d)\n    return x + pe[:, :x.size(1)]\n",
        # a helper whose only caller makes the column on purpose (pairwise differences)
        "import torch\ndef mse(out, labels):\n    return ((out - labels) ** 2).mean()\n"
        "a = torch.tensor([1.0, 2.0])\nloss = mse(a[:, None], a)\n",
        # pairwise corners of two sets of boxes: both with the new axis
        "import torch\ndef iou(b1, b2):\n    lt = torch.max(b1[:, None, :2], b2[:, :2])\n"
        "    rb = torch.min(b1[:, None, 2:], b2[:, 2:])\n    return (rb - lt).clamp(min=0)\n",
        # a matrix combined with its own transpose (skew-symmetric / symmetric part): square by intent
        "import torch\ndef cayley(data):\n    b, r, c = data.shape\n    skew = 0.5 * (data - data.transpose(1, 2))\n"
        "    sym = (data + data.mT) / 2\n    return skew + sym\n",
    )
    invalid = (
        # one generic size on both axes the input has as 1
        "import torch.nn.functional as F\ndef f(x):\n    b, t = x.shape\n    pred = x.new_zeros(1, 1)\n"
        "    return F.mse_loss(pred, x.new_zeros(b, b))  # <--\n",
        # DQN's target: (B, 1) + (B,) is (B, B), and the loss broadcasts each Q value against it
        "import torch\nimport torch.nn as nn\nnet = nn.Linear(4, 2)\nb_s = torch.randn(32, 4)\n"
        "b_a = torch.randint(0, 2, (32, 1))\nb_r = torch.randn(32, 1)\nq_eval = net(b_s).gather(1, b_a)\n"
        "q_target = b_r + 0.9 * net(b_s).detach().max(1)[0]\nloss = nn.MSELoss()(q_eval, q_target)  # <--\n",
        "import torch\na = torch.zeros(2, 3)\nb = torch.zeros(2)\nc = a + b  # <--\n",
        "import torch\na = torch.ones(4, 5)\nb = torch.ones(4, 4)\nc = torch.where(a > 0, a, b)  # <--\n",
        "import torch\nfrom jaxtyping import Float\n\n"
        "def f(x: Float[torch.Tensor, 'n d'], y: Float[torch.Tensor, 'm d']):\n    return x - y  # <--\n",
        "import torch\na = torch.zeros(1, 4, 5)\nb = torch.zeros(3, 1, 1)\na.sub_(b)  # <--\n",
        "import torch\na = torch.zeros(4, 5)\na += torch.zeros(1, 4, 5)  # <--\n",
        "import torch\na = torch.zeros(2, 3)\na *= torch.zeros(3, 3)  # <--\n",
        "import torch\ndef f(x):\n    b, c, h, w = x.shape\n    m = torch.zeros(1, 1, h, w)\n    m.add_(x)  # <--\n",
        # a forgotten unsqueeze: (B, T) against (B,) raises unless T equals B or one of them is 1
        "import torch\ndef f(x):\n    B, T = x.size()\n    x = x.contiguous()\n    scale = torch.ones(B)\n"
        "    return x / scale  # <--\n",
        "import torch\ndef f(x):\n    B, T, C = x.size()\n    y = x.contiguous().view(B * T, C)\n"
        "    return y + torch.zeros(B, 1)  # <--\n",
        # a padding mask (B, T) against scores (B, T, T): it needs `mask[:, None, :]`
        "import torch\ndef f(x):\n    B, T, C = x.size()\n    scores = x.contiguous() @ x.transpose(1, 2)\n"
        "    mask = torch.ones(B, T).bool()\n    return scores.masked_fill(mask, 0.0)  # <--\n",
        # a per-channel bias added to an (N, C, H, W) output lines up with W
        "import torch\nimport torch.nn as nn\nclass C(nn.Module):\n    def __init__(self, cin, cout):\n"
        "        super().__init__()\n        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)\n"
        "        self.bias = nn.Parameter(torch.zeros(cout))\n    def forward(self, x):\n"
        "        out = self.conv(x)\n        return out + self.bias  # <--\n",
        # a regression head (N, 1) against a 1-D target: the loss compares every pair
        "import torch.nn as nn\nimport torch.nn.functional as F\ndef f(x, y, d):\n    fc = nn.Linear(d, 1)\n"
        "    return F.mse_loss(fc(x), y.view(-1))  # <--\n",
        "import torch.nn as nn\ndef f(x, y, d):\n    fc = nn.Linear(d, 1)\n    crit = nn.BCEWithLogitsLoss()\n"
        "    return crit(fc(x), y.view(-1))  # <--\n",
        # a per-channel weight (C,) against (B, C, T) of a parameter whose rank its unpacking gave
        "import torch\ndef scale(x):\n    B, C, T = x.shape\n    w = torch.ones(C)\n    return x * w  # <--\n",
        # an integer index over a non-leading dim broadcast back: DETR's position encoding, nanoGPT's top-k
        "import torch\ndef pos(mask, eps=1e-6):\n    y = mask.cumsum(1, dtype=torch.float32)\n"
        "    return y / (y[:, -1, :] + eps)  # <--\n",
        "import torch\ndef top(logits, k):\n    v, _ = torch.topk(logits, k)\n"
        "    logits[logits < v[:, -1]] = -float('inf')  # <--\n    return logits\n",
        "def f(x):\n    return x - x[:, 0]  # <--\n",
        # squeeze-excitation weights (b, c) expanded to (b, c, h, w): they line up with (h, w)
        "def se(x, fc):\n    b, c, h, w = x.size()\n    y = x.mean((2, 3)).view(b, c)\n"
        "    return x * y.expand_as(x)  # <--\n",
        # a bias of the convolution's output channels added to its (N, C, H, W) output
        "import torch\nimport torch.nn.functional as F\ndef f(x, cout):\n    w = torch.randn(cout, 3, 3, 3)\n"
        "    b = torch.zeros(cout)\n    return F.conv2d(x, w) + b  # <--\n",
        # a hand-written squared error of an (N, 1) prediction and an (N,) target: an (N, N) mean
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 1)\nx = torch.randn(32, 8)\ny = torch.randn(32)\n"
        "out = fc(x)\nloss = ((out - y) ** 2).mean()  # <--\n",
        # a per-sample gate (B, C) expanded to (B, C, H, W): `x.shape[0]` meets dim 2 of `x`
        "def gate(x, g):\n    y = x.mean((2, 3)).view(x.shape[0], 1, -1)\n"
        "    y = g(y).view(x.shape[0], -1)\n    return x * y.expand_as(x)  # <--\n",
        # a table (L, 1, D) cut on its size-1 dim: it keeps all L rows against the sequence of `x`
        "import torch\nimport torch.nn as nn\nclass P(nn.Module):\n    def __init__(self, d, max_len=5000):\n"
        "        super().__init__()\n        self.register_buffer('pe', torch.zeros(max_len, d).unsqueeze(1))\n"
        "    def forward(self, x):\n        return x + self.pe[:, :x.size(0)]  # <--\n",
        # a helper's squared error, its only caller passing a column of predictions and 1-D targets
        "import torch\ndef mse(out, labels):\n    return ((out - labels) ** 2).mean()  # <--\n"
        "loss = mse(torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([1.0, 2.0, 3.0]))\n",
        # one corner lines the boxes up by position, the other pairs them all-against-all
        "import torch\ndef iou(b1, b2):\n    lt = torch.max(b1[:, :2], b2[:, :2])  # <--\n"
        "    rb = torch.min(b1[:, None, 2:], b2[:, 2:])\n    return (rb - lt).clamp(min=0)\n",
        # the transpose of a different tensor, or a known non-square matrix with its own transpose
        "def f(data, other):\n    b, r, c = data.shape\n    x = data.contiguous()\n"
        "    return x - other.contiguous().view(b, r, c).transpose(1, 2)  # <--\n",
        "import torch\nw = torch.zeros(2, 3)\nsym = w + w.T  # <--\n",
    )

    def _check(self, node, ctx, operands: Sequence[cst.BaseExpression], receiver_is_tensor: bool = False) -> bool:
        """Report operands whose shapes cannot broadcast; True when it did. With
        ``receiver_is_tensor``, the first operand is a tensor by use (``masked_fill``'s receiver)."""
        facts = [ctx.fact(o) for o in operands]
        if receiver_is_tensor and facts and facts[0].kind is None:
            facts[0] = facts[0].with_(kind=TENSOR)
        # next to a tensor, an operand of unknown kind with a known shape (a parameter whose rank
        # its uses gave) broadcasts by the same rule, array or tensor
        if not any(f.kind == TENSOR for f in facts):
            return False
        tensors = [(o, f) for o, f in zip(operands, facts) if f.kind in (TENSOR, None) and f.shape is not None]
        if len(tensors) < 2:
            return False
        for _o, f in tensors:
            if f.reduction is not None:
                for _o2, g in tensors:
                    if g is f.reduction.source:
                        return False
        try:
            broadcast_shapes(*[f.shape for _o, f in tensors])
        except InvalidShapeError:
            return False  # a size torch rejects is SC103's finding (the inference drops such sizes)
        except BroadcastError as err:
            if not err.certain and (not self._two_symbols(err, [f.shape for _o, f in tensors])
                                    or with_own_transpose(ctx, operands)):
                return False
            names = ", ".join(f"`{short(ctx, o, 24)}` {format_shape(f.shape)}" for o, f in tensors)
            ctx.report(node, f"{names}: {err.reason}", related=_reductions(tensors))
            return True
        verdict = generic_mismatch(*[f.shape for _o, f in tensors])
        if verdict is None or with_own_transpose(ctx, operands):
            return False
        names = ", ".join(f"`{short(ctx, o, 24)}` {format_shape(f.shape)}" for o, f in tensors)
        ctx.report(node, f"{names}: {verdict.reason}; torch raises RuntimeError unless {verdict.condition}",
                   condition=verdict.condition, related=_reductions(tensors))
        return True

    @staticmethod
    def _two_symbols(err: BroadcastError, shapes: Sequence[Shape]) -> bool:
        axis = err.axis
        dims = []
        for s in shapes:
            tail = s.trailing()
            if len(tail) >= -axis:
                dims.append(tail[axis])
        syms = {d for d in dims if isinstance(d, str)}
        ints = [d for d in dims if isinstance(d, int) and d != 1]
        return len(syms) >= 2 and not ints

    def _channel(self, node, ctx, tensor: cst.BaseExpression, other: cst.BaseExpression) -> bool:
        """A per-channel vector of the module combined with one of its convolutions' outputs
        (:mod:`~shapecheck.rules.shape.channel_vectors`); True when it reported."""
        for t, v in ((tensor, other), (other, tensor)):
            found = channel_vector(ctx, t, v)
            if found is None or found.size == "1":
                continue
            condition = None if found.size.isdigit() else f"`{found.size}` is 1"
            message = (f"`{found.vector}` has one value per output channel of `{found.conv}` ({found.size}), but "
                       f"`{short(ctx, t, 24)}` is that convolution's output (N, C, ...), channels at dim 1: "
                       f"broadcasting lines the vector up with the last (spatial) dim, so torch raises unless "
                       f"that size equals {found.size}, and when it does the values land on the wrong axis; "
                       f"use `{found.fix()}`")
            report_unless(ctx, node, message, condition)
            return True
        return False

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """Arithmetic operators."""
        if isinstance(node.operator, ARITHMETIC_OPERATORS):
            if isinstance(node.operator, _CHANNEL_OPERATORS) and self._channel(node, ctx, node.left, node.right):
                return
            if not self._check(node, ctx, [node.left, node.right]) \
                    and not self._index(node, ctx, node.left, node.right) \
                    and not self._axes(node, ctx, node.left, node.right):
                self._pairwise(node, ctx)

    def visit_Comparison(self, node: cst.Comparison, ctx) -> None:
        """Comparison operators."""
        if len(node.comparisons) == 1 and isinstance(node.comparisons[0].operator, COMPARISON_OPERATORS):
            if not self._check(node, ctx, [node.left, node.comparisons[0].comparator]):
                self._index(node, ctx, node.left, node.comparisons[0].comparator)

    def _index(self, node, ctx, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
        """An integer index over a non-leading dim of a tensor (:mod:`~shapecheck.rules.shape.index_drops`)
        broadcast back against that tensor; True when it reported."""
        for src, idx in ((a, b), (b, a)):
            drop = dropped_index(ctx, idx)
            if drop is None:
                continue
            name = index_against(ctx, src, drop)
            if name is None or ctx.fact(src).kind != TENSOR and matrix_types_possible(ctx):
                continue  # `np.matrix` and scipy's sparse matrices keep the indexed dim
            unless = misaligned_unless([drop.axis], ctx.fact(src).shape)
            if unless is None:
                continue
            condition = f"`{name}` is {' or '.join(f'{r}-D' for r in unless)}" if unless else None
            message = (f"`{short(ctx, drop.node, 32)}` drops dim {drop.axis} of `{short(ctx, drop.source, 24)}` "
                       f"(an integer index), and broadcasting lines what is left up with the trailing dims of "
                       f"`{name}`: torch raises unless the sizes happen to fit, and then the values land on the "
                       f"wrong axis; keep the dim with a slice (`-1:`) or a list (`[-1]`)")
            report_unless(ctx, node, message, condition)
            return True
        return False

    def _axes(self, node, ctx, a: cst.BaseExpression, b: cst.BaseExpression, expand: bool = False) -> bool:
        """A size of one operand put on another of its axes by the other operand
        (:mod:`~shapecheck.rules.shape.axis_sizes`); True when it reported."""
        pairs = ((a, b),) if expand else ((a, b), (b, a))
        for holder, other in pairs:
            found = misplaced_cut(ctx, holder, other) if not expand else None
            found = found or misplaced_size(ctx, holder, other)
            if found is not None:
                self._report_axes(node, ctx, found, other, expand)
                return True
        return False

    @staticmethod
    def _pairwise(node, ctx) -> None:
        """Rows of two tensors lined up by position where the function pairs them all-against-all
        (:mod:`~shapecheck.rules.shape.pairwise_axes`)."""
        found = paired_by_position(ctx, node)
        if found is None:
            return
        p, q = found.rows, found.cols
        message = (f"`{short(ctx, node, 40)}` lines up the rows of `{p}` and `{q}` on one axis, but "
                   f"`{short(ctx, found.node, 40)}` pairs them all-against-all (the rows of `{p}` on an axis of "
                   f"their own) and `{short(ctx, found.mixed, 24)}` combines the two results: torch raises "
                   f"unless `{p}` and `{q}` have as many rows, and then it pairs row i with row i only; "
                   f"add the new axis here too")
        report_unless(ctx, node, message, f"`{p}` and `{q}` have as many rows",
                      [(found.node, "pairs the rows all-against-all here")])

    @staticmethod
    def _report_axes(node, ctx, found: Misplaced, other_expr: cst.BaseExpression, expand: bool) -> None:
        h, t = short(ctx, found.holder, 32), found.tensor
        how = "expanded to" if expand else "broadcast against"
        if found.kept is not None:
            table = cast(cst.Subscript, found.holder).value
            shape = format_shape(ctx.fact(table).shape or Shape.unknown())
            message = (f"`{h}` cuts dim {found.position} of `{short(ctx, table, 24)}` {shape} to `{found.size}` "
                       f"(dim {found.axis} of `{t}`), but that dim has size 1: the cut does nothing and the table "
                       f"keeps all `{found.kept}` rows on dim {found.lands}, which do not line up with dim "
                       f"{found.axis} of `{t}` when {how} it; torch raises unless the sizes happen to fit, and "
                       f"then the values land on the wrong positions; cut the dim that holds the positions")
            report_unless(ctx, node, message, f"`{found.kept}` equals `{found.size}`")
            return
        lands = f"dim {found.lands}" if found.exact else f"dim {found.lands} or a later one"
        meets = f"`{t}.shape[{found.lands}]`" if found.exact else f"the size of `{t}` it meets"
        message = (f"`{h}` {format_shape(ctx.fact(found.holder).shape or Shape.unknown())}: its dim "
                   f"{found.position} is `{found.size}` (dim {found.axis} of `{t}`), but {how} `{t}` "
                   f"{format_shape(ctx.fact(other_expr).shape or Shape.unknown())} the dims line up from the right "
                   f"and it meets {lands} of `{t}`: torch raises unless those sizes are equal, and then the "
                   f"values land on the wrong axis")
        report_unless(ctx, node, message, f"`{found.size}` is 1 or equals {meets}")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """torch functions and tensor methods that broadcast."""
        qual = ctx.qualname(node.func)
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual in _CHANNEL_FUNCTIONS and len(args) == 2 and self._channel(node, ctx, args[0], args[1]):
            return
        if qual is None and type(node.func) is cst.Attribute and node.func.attr.value in _CHANNEL_METHODS \
                and len(args) == 1 and self._channel(node, ctx, node.func.value, args[0]):
            return
        if qual is not None and qual.startswith("torch.") and qual[6:] in BROADCASTING_FUNCTIONS \
                and not self._check(node, ctx, args) or qual in ("torch.max", "torch.min"):
            self._pairwise(node, ctx)
        loss = loss_mismatch(node, ctx)
        if loss is not None:
            ctx.report(node, loss[0], condition=loss[1])
        elif self._squared_error(node, ctx):
            return
        elif qual is None and type(node.func) is cst.Attribute and node.func.attr.value in (
                "add", "sub", "mul", "div", "maximum", "minimum", "add_", "sub_", "mul_", "div_",
                "masked_fill", "masked_fill_") and args:
            recv = ctx.fact(node.func.value)
            if recv.kind == TENSOR or recv.kind is None and node.func.attr.value.startswith("masked_fill"):
                self._check(node, ctx, [node.func.value, args[0]], receiver_is_tensor=True)
        if qual is None and type(node.func) is cst.Attribute and len(args) == 1 and not node.args[0].keyword \
                and node.func.attr.value in ("expand_as", "expand"):
            target = args[0] if node.func.attr.value == "expand_as" else _shape_of(args[0])
            if target is not None and not node.args[0].star \
                    and not self._check(node, ctx, [node.func.value, target]):
                self._axes(node, ctx, node.func.value, target, expand=True)
        if qual is None and type(node.func) is cst.Attribute and node.func.attr.value in _INPLACE_BINARY \
                and len(args) == 1:
            self._check_inplace(node, ctx, node.func.value, args[0], f".{node.func.attr.value}()")

    def _squared_error(self, node: cst.Call, ctx) -> bool:
        """A hand-written error between a layer's ``(..., 1)`` output and a 1-D target reduced to a
        loss (:mod:`~shapecheck.rules.shape.squared_errors`); True when it reported."""
        found = squared_error(ctx, node)
        if found is None:
            return False
        col, vec = ctx.fact(found.column), ctx.fact(found.vector)
        c, v = short(ctx, found.column, 24), short(ctx, found.vector, 24)
        size = vec.shape.dims[0] if vec.shape is not None else None
        condition = None if isinstance(size, int) else f"`{v}` has one element"
        message = (f"`{c}` {format_shape(col.shape or Shape.unknown())} and `{v}` "
                   f"{format_shape(vec.shape or Shape.unknown())}: a trailing size-1 dim against a 1-D tensor "
                   f"broadcasts their difference to every pair ((N, 1) with (N,) gives (N, N)), so "
                   f"`{short(ctx, node, 32)}` averages each prediction against every target and torch raises "
                   f"nothing; squeeze the last dim (`{c}.squeeze(-1)`) or view the other as (-1, 1)")
        report_unless(ctx, found.difference, message, condition)
        return True

    def visit_AugAssign(self, node: cst.AugAssign, ctx) -> None:
        """``a += b`` on tensors: in place, so the broadcast must also fit in ``a``."""
        if isinstance(node.operator, _CHANNEL_AUGMENTED) and self._channel(node, ctx, node.target, node.value):
            return
        if not isinstance(node.operator, _AUGMENTED) or ctx.fact(node.target).kind != TENSOR:
            return
        if not self._check(node, ctx, [node.target, node.value]):
            self._check_inplace(node, ctx, node.target, node.value, "`" + ctx.source(node.operator).strip() + "`")

    def _check_inplace(self, node, ctx, target_expr, other_expr, how: str) -> None:
        """An in-place op whose broadcast result is larger than the tensor it writes into."""
        target, other = ctx.fact(target_expr), ctx.fact(other_expr)
        if target.kind != TENSOR or other.kind not in (TENSOR, None) or target.shape is None or other.shape is None:
            return
        try:
            broadcast_shapes(target.shape, other.shape)
        except (InvalidShapeError, BroadcastError):
            return  # not broadcastable at all: the other check's finding
        found = grows_the_target(target.shape, [other.shape])
        if found is None:
            return
        reason, condition = found
        t, o = short(ctx, target_expr, 24), short(ctx, other_expr, 24)
        message = (f"`{t}` {format_shape(target.shape)} is written in place by {how} with `{o}` "
                   f"{format_shape(other.shape)}, but the result is larger than `{t}`: {reason}; torch "
                   f"raises RuntimeError (output with shape ... doesn't match the broadcast shape)")
        if condition is not None:
            message += f" unless {condition}"
        ctx.report(node, message, condition=condition)
