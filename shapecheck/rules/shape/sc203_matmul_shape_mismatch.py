"""SC203 matmul-shape-mismatch: matrix product whose inner dims (or ranks) do not fit."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from shapecheck.broadcast import generic_mismatch
from shapecheck.generic_dims import equal_condition, independent
from shapecheck.rules.base import Rule, register
from shapecheck.rules.helpers.messages import short
from shapecheck.rules.shape.dims import dims_differ
from shapecheck.semantic.eval.conv_sizes import input_channels
from shapecheck.semantic.eval.nn_modules import sequential_step
from shapecheck.semantic.facts import MODULE, TENSOR, UNKNOWN, Fact
from shapecheck.semantic.torch_api import MATRIX_PRODUCTS
from shapecheck.shapes import Shape, format_dim, format_shape


#: an attention block of real code: q and k of shape (B, nh, T, C // nh)
_ATTENTION = (
    "import torch.nn as nn\nclass Attention(nn.Module):\n    def __init__(self, n_head):\n"
    "        super().__init__()\n        self.n_head = n_head\n    def forward(self, q, k):\n"
    "        B, T, C = q.size()\n        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)\n"
    "        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)\n"
)

#: a head size kept in a variable, and the attention weights (B, nh, T, T)
_HEAD_SIZE = (
    "def f(x, n_head):\n    B, T, C = x.size()\n    hs = C // n_head\n"
    "    q = x.view(B, T, n_head, hs).transpose(1, 2)\n    att = (q @ q.transpose(-2, -1)).softmax(-1)\n"
)

#: heads read by an einops pattern from the chunks of one projection: (b, heads, n, d)
_EINOPS = (
    "import torch\nimport torch.nn as nn\nfrom einops import rearrange\nclass A(nn.Module):\n"
    "    def __init__(self, dim, heads):\n        super().__init__()\n        self.heads = heads\n"
    "        self.to_qkv = nn.Linear(dim, dim * 3)\n    def forward(self, x):\n"
    "        qkv = self.to_qkv(x).chunk(3, dim=-1)\n"
    "        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)\n"
)


def _channel_mismatch(module: Fact, x: Fact) -> Optional[tuple[int, int]]:
    """``(in_channels, channels of x)`` when ``module`` is a convolution of known geometry and the
    tensor ``x`` (batched or not) has another known number of channels."""
    found = input_channels(module.qual, module.features)
    if found is None or x.kind != TENSOR or x.shape is None or x.shape.rank is None:
        return None
    fin, spatial = found
    if x.shape.rank not in (spatial + 1, spatial + 2):
        return None
    channels = x.shape.dims[-spatial - 1]
    return (fin, channels) if isinstance(channels, int) and channels != fin else None


def _features_mismatch(module: Fact, x: Fact) -> Optional[tuple[int, int]]:
    """``(in_features, last dim of x)`` when ``module`` is an ``nn.Linear`` and the tensor ``x``
    ends in another known size."""
    if module.qual != "torch.nn.Linear" or module.features is None or x.kind != TENSOR or x.shape is None \
            or not x.shape.trailing():
        return None
    fin, last = module.features[0], x.shape.trailing()[-1]
    return (fin, last) if isinstance(fin, int) and isinstance(last, int) and fin != last else None


#: a LeNet for 32x32 images, called on a batch of them
_LENET = (
    "import torch\nimport torch.nn as nn\nclass LeNet(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.features = nn.Sequential(nn.Conv2d(3, 6, 5), nn.ReLU(), nn.MaxPool2d(2),\n"
    "                                      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2))\n"
    "        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 10))\n"
    "    def forward(self, x):\n        return self.classifier(self.features(x))\n"
    "net = LeNet()\nout = net(torch.randn(8, 3, 32, 32))\n"
)


@register
class MatmulShapeMismatch(Rule):
    """SC203: matrix product whose inner dims (or ranks) do not fit."""
    code = "SC203"
    name = "matmul-shape-mismatch"
    severity = "error"
    summary = "matrix product whose inner dims (or ranks) do not fit"
    doc = """\
## What it does
Flags `a @ b`, `torch.matmul`, `torch.mm` (2-D only), `torch.bmm` (3-D only), `torch.dot`
(1-D only), `torch.mv`, and calls of an `nn.Linear(in_features, ...)` module, when the known
shapes do not fit: the last dim of `a` must equal the second-to-last of `b` (the only dim of a
1-D `b`), and a Linear layer's input must end in `in_features`. The features a Linear layer
receives are followed through `torch.cat(..., dim=-1)` and through convolutions and poolings
whose geometry and input sizes are known ints (`nn.Conv2d`, also with `padding="same"`,
`nn.MaxPool2d`, also with `ceil_mode=True`, `F.max_pool2d`..., then `flatten`/`view`), as torch
computes them. `F.linear(x, weight)` needs `x` to end in
`weight.shape[1]`, and a convolution's input needs `in_channels` channels.

An `nn.Sequential` of `torch.nn` layers runs them one after the other: its input is followed
through each layer (convolutions, poolings and adaptive poolings of known geometry, `nn.Flatten`,
layers that keep the shape), and a Linear layer (or convolution) inside it that gets other
features (or channels) than it takes is flagged at the call, naming its position: LeNet's
`nn.Linear(16 * 4 * 4, 120)` after two 5x5 convolutions and poolings of 32x32 images, which give
it 16 * 5 * 5. The chain stops at a layer whose output it cannot tell (a geometry that is not
literal, a module of the file), where nothing further is flagged.

Sizes the code reads from one tensor (`B, T, C = x.size()`, and views built from them) are
generic: independent of one another; so is a config value that a view splits off the last dim
(`self.n_head` of `k.view(B, T, self.n_head, C // self.n_head)`) from the sizes the view keeps
(`B`, `T`). Inner dims made of different such sizes (`T` against `C // self.n_head`, also kept
in a variable: `hs = C // self.n_head`) are flagged, and the message names the exception
("raises unless `T` equals `C//self.n_head`"); so are the batch dims of `@`/`matmul` when they
cannot broadcast. Any other size from a config, an attribute, a parameter or another tensor may
equal one read from `x` by construction, and an int may be the size the input always has: those
are never flagged. An operand of unknown kind multiplied with a tensor counts with the shape its
uses gave. `einops.rearrange(t, 'b n (h d) -> b h n d', h=self.heads)` reads the sizes it names
from `t` as one read (`self.heads` split off as above), also through `map(lambda t: ..., qkv)`
over the chunks of a projection.

The sizes a module class takes in `__init__` (`self.W = nn.Parameter(torch.randn(n_in, n_out))`,
`nn.Linear(dim, hidden)`, `nn.Sequential(nn.Linear(d, hidden), nn.ReLU())`) stay symbols in
`forward`; where every construction of the class in the file gives a parameter the same int
(`Dense(5, 3)(torch.randn(4, 5))`, a default), `forward` is checked again with those ints and
the facts of its call (the message names the call). A class used other than by calling its name
(subclassed, passed as a value, built with `*args`) and an attribute the file replaces or resizes
(`m.W = ...`, `self.W.data = ...`) keep their symbols.

## Why is this bad?
torch raises `RuntimeError: mat1 and mat2 shapes cannot be multiplied (3x1 and 3x1)` (or
`self must be a matrix`, `1D tensors expected`, ...).

## Example
```python
a = torch.randn(3, 1)
b = torch.randn(3, 1)
c = a @ b            # inner dims 1 and 3
```

## Use instead
```python
c = a.T @ b          # (1, 3) @ (3, 1)
```
"""
    valid = (
        # the features the convolutions leave are the ones the classifier takes; a Sequential's
        # input of unknown size
        _LENET,
        "import torch.nn as nn\nm = nn.Sequential(nn.Flatten(), nn.Linear(48, 2))\ndef f(x):\n    return m(x)\n",
        "import torch\na = torch.randn(3, 1)\nb = torch.randn(3, 1)\nc = a.T @ b\n",
        "import torch\na = torch.randn(5, 2, 3)\nb = torch.randn(3, 4)\nc = a @ b\n",
        "import torch\na = torch.randn(3)\nb = torch.randn(3)\nc = torch.dot(a, b)\n",
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 2)\ny = fc(torch.randn(4, 8))\n",
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 4, 5)\nc = torch.bmm(a, b)\n",
        # generic sizes: the transposed key; sizes from a config, from another tensor, an int
        _ATTENTION + "        return q @ k.transpose(-2, -1)\n",
        _HEAD_SIZE + "    return att @ q\n",
        "import torch\ndef f(x, d_model, w):\n    b, t, c = x.size()\n    x = x.contiguous()\n"
        "    n, m = w.size()\n    return x @ torch.randn(d_model, 4) + x @ w + x @ torch.randn(3, 4)\n",
        # an input of unknown kind meets a tensor in the right order; the bag-of-words weights
        "import torch\ndef f(x):\n    B, T, C = x.size()\n    att = torch.zeros((B, T, T))\n"
        "    return att @ x\n",
        "import torch\ndef f(y):\n    n, c = y.size()\n    return y.mm(torch.randn(c, 4))\n",
        # a config value the view split off against a size it kept, in the order that fits; a token-mixing
        # layer may take as many tokens as the input has
        _ATTENTION + "        return q @ k.transpose(-2, -1), q.transpose(1, 2).contiguous()\n",
        "import torch\ndef f(x, n_tokens):\n    B, N, C = x.size()\n    y = x.contiguous().view(B, N, C)\n"
        "    mix = torch.randn(n_tokens, n_tokens)\n    return mix @ y\n",
        _EINOPS + "        attn = torch.matmul(q, k.transpose(-1, -2)).softmax(dim=-1)\n"
        "        return torch.matmul(attn, v)\n",
        # square: the same size on both sides
        "import torch\ndef f(x):\n    b, t = x.size()\n    att = torch.ones(t, t)\n"
        "    return x.contiguous() @ att @ att\n",
        # the joined features fit the head; on dim 1 of a tensor of unknown rank the width is unknown
        "import torch\nimport torch.nn as nn\na = nn.Linear(10, 64)\nb = nn.Linear(10, 32)\n"
        "head = nn.Linear(96, 2)\nsmall = nn.Linear(64, 2)\ndef f(x):\n"
        "    return head(torch.cat([a(x), b(x)], dim=-1)), small(torch.cat([a(x), b(x)], dim=1))\n",
        # the sizes torch computes for the convolutions and the pooling: 64 * 12 * 12 = 9216
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.conv1 = nn.Conv2d(1, 32, 3, 1)\n"
        "        self.conv2 = nn.Conv2d(32, 64, 3, 1)\n        self.fc1 = nn.Linear(9216, 128)\n"
        "    def forward(self, x):\n        x = x.view(-1, 1, 28, 28)\n        x = F.relu(self.conv1(x))\n"
        "        x = F.max_pool2d(F.relu(self.conv2(x)), 2)\n        x = torch.flatten(x, 1)\n"
        "        return self.fc1(x)\n",
        # channels that fit (batched, unbatched, grouped); F.linear with an (out, in) weight
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nconv = nn.Conv2d(3, 8, 3)\n"
        "gconv = nn.Conv2d(4, 8, 3, groups=2)\nw = torch.randn(5, 10)\ndef f(img):\n"
        "    return conv(torch.randn(2, 3, 28, 28)), conv(torch.randn(3, 28, 28)), conv(img), "
        "gconv(torch.randn(1, 4, 9, 9)), F.linear(torch.randn(6, 10), w)\n",
        # the sizes every construction of the file gives `__init__`: (4, 5) @ (5, 3); 64 + 64 features
        "import torch\nimport torch.nn as nn\nclass Dense(nn.Module):\n    def __init__(self, n_in, n_out):\n"
        "        super().__init__()\n        self.W = nn.Parameter(torch.randn(n_in, n_out))\n"
        "    def forward(self, x):\n        return x @ self.W\n"
        "y = Dense(5, 3)(torch.randn(4, 5))\n",
        "import torch\nimport torch.nn as nn\nclass Fusion(nn.Module):\n    def __init__(self, d_a, d_b, hidden=64):\n"
        "        super().__init__()\n        self.a = nn.Sequential(nn.Linear(d_a, hidden), nn.ReLU())\n"
        "        self.b = nn.Sequential(nn.Linear(d_b, hidden), nn.ReLU())\n"
        "        self.head = nn.Linear(2 * hidden, 2)\n"
        "    def forward(self, x1, x2):\n        z = torch.cat([self.a(x1), self.b(x2)], dim=1)\n"
        "        return self.head(z)\n"
        "y = Fusion(100, 50)(torch.randn(8, 100), torch.randn(8, 50))\n",
        # a test on the rank (`x.ndim == 2`): the code takes several ranks, its 3-D use bounds none
        "import torch\ndef apply(x, weight):\n    w = weight.contiguous()\n    if x.ndim == 2:\n"
        "        return torch.bmm(x.unsqueeze(1), w).squeeze(1)\n    return torch.bmm(x, w)\n",
    )
    invalid = (
        "import torch\na = torch.randn(3, 1)\nb = torch.randn(3, 1)\nc = a @ b  # <--\n",
        "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(4, 5)\nc = torch.mm(a, b)  # <--\n",
        "import torch\na = torch.randn(2, 3)\nb = torch.randn(2, 3)\nc = torch.dot(a, b)  # <--\n",
        "import torch\nimport torch.nn as nn\nfc = nn.Linear(8, 2)\ny = fc(torch.randn(4, 16))  # <--\n",
        # inside a Sequential: the layers before the Linear give it 8 features, not 6
        "import torch\nimport torch.nn as nn\nm = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(6, 2))\n"
        "z = m(torch.randn(5, 4))  # <--\n",
        # LeNet on 32x32 images: the flattened features are 16*5*5, not 16*4*4
        _LENET.replace("16 * 5 * 5", "16 * 4 * 4").replace(
            "return self.classifier(self.features(x))", "return self.classifier(self.features(x))  # <--"),
        # the key not transposed: (B, nh, T, hs) @ (B, nh, T, hs) raises unless T equals hs
        _ATTENTION + "        return q @ k  # <--\n",
        # the key transposed on the wrong dims: (B, nh, T, hs) @ (B, T, nh, hs); the batch dims nh and T
        _ATTENTION + "        return q @ k.transpose(1, 2)  # <--\n",
        # an input of unknown kind on the wrong side of the (B, T, T) weights
        "import torch\ndef f(x):\n    B, T, C = x.size()\n    att = torch.zeros((B, T, T))\n"
        "    return x @ att  # <--\n",
        "import torch\ndef f(y):\n    n, c = y.size()\n    return y.mm(y)  # <--\n",
        # the key not transposed, with heads read by an einops pattern: d against n
        _EINOPS + "        return torch.matmul(q, k)  # <--\n",
        # the weights and the values swapped: (B, nh, T, hs) @ (B, nh, T, T)
        _HEAD_SIZE + "    return q @ att  # <--\n",
        "import torch\ndef f(x):\n    b, n, d = x.size()\n    x = x.contiguous()\n    return torch.bmm(x, x)  # <--\n",
        "def f(x):\n    B, T, C = x.size()\n    y = x.contiguous().view(B * T, C)\n    return y @ y  # <--\n",
        # two feature sets joined on the last dim: 64 + 32 features, but the head takes 64
        "import torch\nimport torch.nn as nn\nclass Fuse(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.a = nn.Linear(10, 64)\n        self.b = nn.Linear(10, 32)\n"
        "        self.head = nn.Linear(64, 2)\n    def forward(self, x):\n"
        "        f = torch.cat([self.a(x), self.b(x)], dim=-1)\n        return self.head(f)  # <--\n",
        # 28x28 -> conv 3x3 -> 26 -> conv 3x3 -> 24 -> pool 2 -> 12: 64 * 12 * 12 features, not 64 * 14 * 14
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass Net(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.conv1 = nn.Conv2d(1, 32, 3, 1)\n"
        "        self.conv2 = nn.Conv2d(32, 64, 3, 1)\n        self.fc1 = nn.Linear(64 * 14 * 14, 128)\n"
        "    def forward(self, x):\n        x = x.view(-1, 1, 28, 28)\n        x = F.relu(self.conv1(x))\n"
        "        x = F.max_pool2d(F.relu(self.conv2(x)), 2)\n        x = torch.flatten(x, 1)\n"
        "        return self.fc1(x)  # <--\n",
        # a grayscale batch into a convolution built for RGB; a weight stored as (in, out) given to F.linear
        "import torch\nimport torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\nx = torch.randn(2, 1, 28, 28)\n"
        "y = conv(x)  # <--\n",
        "import torch\nimport torch.nn.functional as F\nw = torch.randn(10, 5)\ndef f(x):\n"
        "    x = x.view(-1, 10)\n    return F.linear(x, w)  # <--\n",
        # the sizes every construction of the file gives `__init__`: the weight (5, 3) before the input (4, 5);
        # two Sequential(Linear(., 64), ReLU()) outputs joined on dim 1 (128 features) into a head taking 64
        "import torch\nimport torch.nn as nn\nclass Dense(nn.Module):\n    def __init__(self, n_in, n_out):\n"
        "        super().__init__()\n        self.W = nn.Parameter(torch.randn(n_in, n_out))\n"
        "    def forward(self, x):\n        return self.W @ x  # <--\n"
        "y = Dense(5, 3)(torch.randn(4, 5))\n",
        "import torch\nimport torch.nn as nn\nclass Fusion(nn.Module):\n    def __init__(self, d_a, d_b, hidden=64):\n"
        "        super().__init__()\n        self.a = nn.Sequential(nn.Linear(d_a, hidden), nn.ReLU())\n"
        "        self.b = nn.Sequential(nn.Linear(d_b, hidden), nn.ReLU())\n"
        "        self.head = nn.Linear(hidden, 2)\n"
        "    def forward(self, x1, x2):\n        z = torch.cat([self.a(x1), self.b(x2)], dim=1)\n"
        "        return self.head(z)  # <--\n"
        "y = Fusion(100, 50)(torch.randn(8, 100), torch.randn(8, 50))\n",
    )

    def _pair(self, node, ctx, a_expr, b_expr, op: str) -> None:
        a, b = ctx.fact(a_expr), ctx.fact(b_expr)
        # an operand of unknown kind multiplied with a tensor is one (as a NumPy array, the same rule holds)
        if TENSOR not in (a.kind, b.kind) or {a.kind, b.kind} - {TENSOR, None} or a.shape is None or b.shape is None:
            return
        ra, rb = a.shape.rank, b.shape.rank
        if ra is None or rb is None:
            return
        an, bn = short(ctx, a_expr, 24), short(ctx, b_expr, 24)
        shapes = f"`{an}` {format_shape(a.shape)} and `{bn}` {format_shape(b.shape)}"
        need = {"mm": (2, 2), "bmm": (3, 3), "dot": (1, 1), "mv": (2, 1)}.get(op)
        if need is not None and (ra, rb) != need:
            ctx.report(node, f"torch.{op} needs {need[0]}-D and {need[1]}-D tensors; got {shapes}")
            return
        if ra == 0 or rb == 0:
            ctx.report(node, f"matmul needs tensors of at least 1 dim; got {shapes}")
            return
        inner_a = a.shape.dims[-1]
        inner_b = b.shape.dims[-2] if rb >= 2 else b.shape.dims[-1]
        if dims_differ(inner_a, inner_b):
            ctx.report(node, f"{shapes} cannot be multiplied: the inner dims are "
                             f"{format_dim(inner_a)} and {format_dim(inner_b)}")
            return
        if independent(inner_a, inner_b):
            condition = equal_condition(inner_a, inner_b)
            ctx.report(node, f"{shapes} cannot be multiplied for generic sizes: the inner dims are "
                             f"{format_dim(inner_a)} and {format_dim(inner_b)}; torch raises RuntimeError "
                             f"unless {condition}", condition=condition)
            return
        if op == "bmm" and dims_differ(a.shape.dims[0], b.shape.dims[0]):
            ctx.report(node, f"torch.bmm needs equal batch sizes; got {shapes}")
            return
        if op == "bmm" and independent(a.shape.dims[0], b.shape.dims[0]):
            condition = equal_condition(a.shape.dims[0], b.shape.dims[0])
            ctx.report(node, f"torch.bmm needs equal batch sizes; got {shapes}, whose batch sizes differ "
                             f"for generic sizes: torch raises RuntimeError unless {condition}", condition=condition)
            return
        if op == "matmul" and ra > 2 and rb > 2:
            batch = generic_mismatch(Shape(a.shape.dims[:-2]), Shape(b.shape.dims[:-2]))
            if batch is not None:
                ctx.report(node, f"{shapes}: the batch dims (all but the last two) must broadcast, but "
                                 f"{batch.reason.replace('shapes', 'batch shapes', 1)}; torch raises RuntimeError "
                                 f"unless {batch.condition}", condition=batch.condition)

    def _functional_linear(self, node, ctx, x_expr, w_expr) -> None:
        """``F.linear(x, weight)``: ``weight`` is ``(out_features, in_features)``, ``x`` must end in
        ``in_features``."""
        x, w = ctx.fact(x_expr), ctx.fact(w_expr)
        if x.kind != TENSOR or w.kind != TENSOR or x.shape is None or w.shape is None or w.shape.rank != 2:
            return
        last = x.shape.trailing()[-1] if x.shape.trailing() else None
        fin = w.shape.dims[1]
        if isinstance(last, int) and isinstance(fin, int) and last != fin:
            ctx.report(node, f"F.linear takes a weight of shape (out_features, in_features): "
                             f"`{short(ctx, w_expr, 24)}` {format_shape(w.shape)} needs an input ending in {fin}, "
                             f"but `{short(ctx, x_expr, 24)}` has shape {format_shape(x.shape)}; torch raises "
                             f"RuntimeError (mat1 and mat2 shapes "
                             f"cannot be multiplied)")

    def _conv_channels(self, node, ctx, func, x_expr) -> None:
        """A convolution module fed an input whose channel dim is not its ``in_channels``."""
        x = ctx.fact(x_expr)
        found = _channel_mismatch(ctx.fact(func), x)
        if found is not None:
            fin, channels = found
            ctx.report(node, f"`{short(ctx, func, 24)}` is a convolution with {fin} input channels, but "
                             f"`{short(ctx, x_expr, 24)}` has shape {format_shape(x.shape)}: {channels} channels; "
                             f"torch raises RuntimeError (expected input to have {fin} channels)")

    def _sequential(self, node, ctx, func, layers: tuple, x_expr) -> None:
        """An ``nn.Sequential`` whose input, passed through its layers one by one, reaches an
        ``nn.Linear`` with a last dim other than its ``in_features`` (or a convolution with other
        channels): the call raises there. The first layer is checked like a layer called alone."""
        current = ctx.fact(x_expr)
        for position, layer in enumerate(layers):
            if current.kind != TENSOR or current.shape is None:
                return
            reached = "its input" if position == 0 else "the layers before it"
            channels = _channel_mismatch(layer, current)
            if channels is not None:
                ctx.report(node, f"`{short(ctx, func, 24)}` is an nn.Sequential whose layer {position} is a "
                                 f"convolution with {channels[0]} input channels, but {reached} give it shape "
                                 f"{format_shape(current.shape)}: {channels[1]} channels; torch raises "
                                 f"RuntimeError (expected input to have {channels[0]} channels)")
                return
            features = _features_mismatch(layer, current)
            if features is not None:
                ctx.report(node, f"`{short(ctx, func, 24)}` is an nn.Sequential whose layer {position} is "
                                 f"nn.Linear({features[0]}, ...), but {reached} give it shape "
                                 f"{format_shape(current.shape)}: its last dim {features[1]} is not {features[0]}; "
                                 f"torch raises RuntimeError (mat1 and mat2 shapes cannot be multiplied)")
                return
            shape = sequential_step(layer, current)
            current = Fact(kind=TENSOR, shape=shape) if shape is not None else UNKNOWN

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        """The ``@`` operator."""
        if type(node.operator) is cst.MatrixMultiply:
            self._pair(node, ctx, node.left, node.right, "matmul")

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """matmul/mm/bmm/dot/mv calls and nn.Linear module calls."""
        qual = ctx.qualname(node.func)
        if qual is not None and qual != "torch.nn.functional.linear" \
                and not (qual.startswith("torch.") and qual[6:] in MATRIX_PRODUCTS):
            return  # not a product; a module call is read only when its callee has no qualified name
        args = [a.value for a in node.args if a.keyword is None and not a.star]
        if qual is not None and qual.startswith("torch.") and qual[6:] in MATRIX_PRODUCTS and len(args) >= 2:
            self._pair(node, ctx, args[0], args[1], qual[6:])
            return
        func = node.func
        if qual is None and type(func) is cst.Attribute and func.attr.value in MATRIX_PRODUCTS and len(args) == 1:
            kind = ctx.fact(func.value).kind
            if kind == TENSOR or kind is None and func.attr.value != "dot":  # ndarray has `dot` alone
                self._pair(node, ctx, func.value, args[0], func.attr.value)
            return
        if qual == "torch.nn.functional.linear" and len(args) >= 2:
            self._functional_linear(node, ctx, args[0], args[1])
            return
        if len(args) != 1 or qual is not None:
            return
        module = ctx.fact(func)
        if module.kind == MODULE and input_channels(module.qual, module.features) is not None:
            self._conv_channels(node, ctx, func, args[0])
            return
        if module.kind == MODULE and module.layers is not None:
            self._sequential(node, ctx, func, module.layers, args[0])
            return
        if module.kind != MODULE:
            return
        x = ctx.fact(args[0])
        found = _features_mismatch(module, x)
        if found is not None:
            fin, last = found
            ctx.report(node, f"`{short(ctx, func, 24)}` is nn.Linear({fin}, ...) but `{short(ctx, args[0], 24)}` "
                             f"has shape {format_shape(x.shape)}: its last dim {last} is not {fin}")
