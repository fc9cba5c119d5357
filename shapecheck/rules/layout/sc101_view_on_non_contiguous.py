"""SC101 view-on-non-contiguous: `.view()` that must fail because a transpose, permute or slice changed
the strides."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from shapecheck.rules.base import Example, Fix, Rule, register
from shapecheck.rules.layout.move_origins import move_origin
from shapecheck.rules.layout.strideless_devices import strideless_side
from shapecheck.rules.layout.view_calls import call_text, clipped_source, view_call, view_condition
from shapecheck.semantic.branch_facts import Branch
from shapecheck.shapes import format_shape


def _squeezed(ctx, expr: cst.BaseExpression) -> bool:
    """A ``squeeze`` (method or ``torch.squeeze``) in the chain of calls that computes ``expr``."""
    while type(expr) is cst.Call:
        func = expr.func
        if ctx.qualname(func) == "torch.squeeze":
            return True
        if type(func) is not cst.Attribute:
            return False
        if func.attr.value == "squeeze":
            return True
        expr = func.value
    return False


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
`transpose`, `permute`, `.T`, `.t()`, `.mT`, `expand`, a column slice or a one-operand
`torch.einsum` that only reorders dims (`'nchpwq->nhwpqc'`, a permuted view), through names,
elementwise ops, `.clone()` and dtype casts (which all keep the layout). With known sizes the
strides are simulated exactly. With sizes the code computed (`b, t, c = x.shape`, `h * w`,
`C // n_head`, a size passed as a parameter) torch's stride rule runs on the symbols, each taken
to be *generic* (at least 2, independent of the others): a view that must merge dims a
transpose/permute/expand moved apart is flagged (the classic `x.transpose(1, 2).view(b, t, -1)`
of attention code), and the message names the exception, the sizes whose being 1 would let it
work ("raises unless `t` or `h` is 1"; the JSON output's `condition`). A value whose rank is
unknown is transposed from a plain layout, like a parameter: `y.transpose(0, 1)` has at least 2
dims, and a view is flagged only when it fails both with no more dims and with more (so
`y.transpose(0, 1).view(n, -1)` is not: `n` may be the first size of a 2-d `y`). The output of
`nn.RNN`/`LSTM`/`GRU` built with `batch_first=False` is contiguous (with `batch_first=True` the
CPU kernel returns it transposed: its order is left unknown), `topk`/`sort` keep the rank, `.t()`
on a value known to have at least 2 dims has exactly 2, the parameters of `nn` layers have their
rank, and a slice that cuts a dim short keeps the layout with a gap outside that dim (the
`correct[:k].view(-1)` of the classic top-k `accuracy()` helper). A view that only splits
dims, or keeps the moved dims apart, is legal and is not flagged; nor is one whose new sizes
cannot be matched to the old ones, unless there are too few of them for the runs of dims that
cannot merge. A layer whose function lays out its result plainly whatever its input's order
(`nn.Conv1d` on a 3-d input, `nn.Softmax`, `nn.LayerNorm`) gives a contiguous output.

Where an `if` on a plain flag (`if self.flash:`) leaves a tensor laid out plainly on one side and
in an unknown order on the other (`F.scaled_dot_product_attention`, whose layout depends on the
kernel), the view is checked on each side that bound the name itself, and the finding says which
side fails ("when `self.flash` is false"). A test on sizes, on the layout (`x.is_contiguous()`),
on a call, or on `self.training` decides nothing, nor does the side that kept the value from
before the `if` (`if flag: y = y.contiguous()`).

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
        # a vocoder's (1, 1, T) output: the squeeze says size-1 dims are there (speecht5's HiFi-GAN)
        "import torch\ndef waveform(h):\n    return torch.tanh(h).squeeze(0).transpose(1, 0).view(-1)\n",
        "import torch\nx = torch.arange(6).view(2, 3)\ny = x.T.contiguous().view(6)\n",
        "import torch\nx = torch.randn(4, 5)\ny = x.view(5, 4).transpose(0, 1)\n",
        "import torch\nx = torch.randn(2, 3, 4)\ny = x.permute(2, 0, 1).reshape(4, -1)\n",
        "import torch\nx = torch.rand(32, 32, 3).permute(2, 0, 1)\ny = x.view(3, -1)\n",
        "import torch\nx = torch.randn(6, 4).t()\ny = x.view(2, 2, 6)\n",
        "import numpy as np\na = np.zeros((2, 3))\nb = a.T.view(np.float64)\n",
        "def f(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n    return y.reshape(b, t, -1)\n",
        "def f(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n    return y.view(b, h, t, d, 1)\n",
        "def f(x):\n    b, c, h, w = x.shape\n    return x.permute(0, 2, 3, 1).reshape(b, h * w, c)\n",
        "def f(x):\n    b, c, h, w = x.shape\n    return x.view(b, c, h * w)\n",
        "def f(x):\n    b, n, d = x.shape\n    return x.transpose(0, 1).view(n, b, d)\n",
        "def f(x):\n    b, c, h, w = x.shape\n    return x.permute(0, 2, 3, 1).view(b, h * w, c)\n",
        "def f(x, g):\n    b, c, h, w = x.shape\n    y = x.view(b, g, c // g, h, w).transpose(1, 2)\n"
        "    return y.reshape(b, c, h, w)\n",
        "def f(x, b, t, c):\n    return x.permute(1, 0, 2).view(b, t, c)\n",
        # the script's global is made contiguous before the function that views it runs
        "import torch\ndef batchify(data, bsz):\n    return data.view(bsz, -1).t().contiguous()\n"
        "data = torch.arange(100)\ndata = batchify(data, 4)\ndef get_batch(i):\n"
        "    return data[i:i + 5].view(-1)\nget_batch(0)\n",
        # called from another function too: the global may hold anything when that call runs
        "import torch\ndata = torch.arange(100)\ndef get_batch(i):\n    return data[i:i + 5].view(-1)\n"
        "def main():\n    get_batch(1)\nget_batch(0)\ndata = data.view(4, -1).t()\nmain()\n",
        "def accuracy(output, target, k):\n    _, pred = output.topk(k, 1, True, True)\n    pred = pred.t()\n"
        "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n"
        "    return correct[:k].reshape(-1).float().sum(0)\n",
        "def f(y, n):\n    return y.transpose(0, 1).view(n, -1)\n",
        "def f(y):\n    return y.transpose(0, 1).contiguous().view(-1)\n",
        "def f(image):\n    return image.transpose(0, 1).reshape(1, 8)\n",
        "def f(w):\n    return w.t().view(-1)\n",
        "def f(x):\n    return x.transpose(1, 2).view(x.size(0), x.size(2), x.size(1), -1)\n",
        "import numpy as np\ndef f(a, dt):\n    return a.transpose(1, 0).view(dt)\n",
        "import torch\ndef f(x):\n    return torch.softmax(torch.transpose(x, 1, 2), -1).view(-1)\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.rnn = nn.LSTM(8, 16, batch_first=True)\n    def forward(self, x):\n        b, t, f = x.shape\n"
        "        out, (h, c) = self.rnn(x)\n        return out.transpose(0, 1).view(t, -1)\n",
        "import torch\ndef f(q, k):\n    s = torch.einsum('bhqd,bhkd->bqhk', q, k)\n    b, n, h, m = s.shape\n"
        "    return s.transpose(1, 2).view(b, h, n * m)\n",
        "import torch\ndef f(x, p):\n    n, c, h, w = x.shape\n    x = x.reshape(n, c, h // p, p, w // p, p)\n"
        "    return torch.einsum('nchpwq->nhwpqc', x).reshape(n, -1, p * p * c)\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.emb = nn.Embedding(10, 8)\n        self.gru = nn.GRU(8, 8)\n    def forward(self, tok, h):\n"
        "        e = self.emb(tok).view(1, 1, -1)\n        out, h = self.gru(e, h)\n"
        "        return out.transpose(0, 1).view(-1, 8)\n",
        "def f(x, b, t, c, flag):\n    y = x.view(b, t, 4, c // 4).transpose(1, 2)\n    if flag:\n"
        "        y = y.contiguous()\n    return y.view(b, t, c)\n",
        "import torch.nn.functional as F\ndef f(q, k, v, b, t, c, training):\n"
        "    q, k, v = q.view(b, 4, t, c // 4), k.view(b, 4, t, c // 4), v.view(b, 4, t, c // 4)\n"
        "    if training:\n        y = F.scaled_dot_product_attention(q, k, v)\n    else:\n"
        "        y = (q @ k.transpose(-2, -1)).softmax(-1) @ v\n"
        "    return y.transpose(1, 2).view(b, t, c)\n",
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.down = nn.Conv2d(8, 8, 2, stride=2)\n    def forward(self, x):\n"
        "        return self.down(x.view(-1, 2, 2, 8).permute(0, 3, 1, 2)).view(-1, 8)\n",
        # the transposed side runs only on XLA (TPU) tensors, which have no strides: `view` cannot fail there
        "def attend(q, w, mask, bsz, heads, t, s):\n    is_tpu = q.device.type == 'xla'\n"
        "    w = w.view(bsz, heads, t, s)\n    if not is_tpu:\n        w = w.masked_fill(mask[:, None], 0.0)\n"
        "    else:\n        w = w.transpose(0, 2)\n        w = w.masked_fill(mask, 0.0)\n"
        "        w = w.transpose(0, 2)\n    return w.view(bsz * heads, t, s)\n",
    )
    invalid = (
        # a side that runs on a strided device (the CPU): the transposed tensor cannot be viewed
        Example(
            "def attend(q, w, mask, bsz, heads, t, s):\n    on_cpu = q.device.type == 'cpu'\n"
            "    w = w.view(bsz, heads, t, s)\n    if not on_cpu:\n        w = w.masked_fill(mask[:, None], 0.0)\n"
            "    else:\n        w = w.transpose(0, 2)\n        w = w.masked_fill(mask, 0.0)\n"
            "        w = w.transpose(0, 2)\n    return w.view(bsz * heads, t, s)  # <--\n",
            fixed="def attend(q, w, mask, bsz, heads, t, s):\n    on_cpu = q.device.type == 'cpu'\n"
            "    w = w.view(bsz, heads, t, s)\n    if not on_cpu:\n        w = w.masked_fill(mask[:, None], 0.0)\n"
            "    else:\n        w = w.transpose(0, 2)\n        w = w.masked_fill(mask, 0.0)\n"
            "        w = w.transpose(0, 2)\n    return w.reshape(bsz * heads, t, s)  # <--\n",
        ),
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
            "def f(batch):\n    return batch.permute(0, 2, 1).view(-1)  # <--\n",
            fixed="def f(batch):\n    return batch.permute(0, 2, 1).reshape(-1)  # <--\n",
        ),
        Example(
            "def f(x):\n    b, n, h, d = x.shape\n    return x.transpose(1, 2).view(b, h, n * d)  # <--\n",
            fixed="def f(x):\n    b, n, h, d = x.shape\n    return x.transpose(1, 2).reshape(b, h, n * d)  # <--\n",
        ),
        Example(
            "def f(x, g):\n    b, c, h, w = x.shape\n    y = x.view(b, g, c // g, h, w).transpose(1, 2)\n"
            "    return y.view(b, c, h, w)  # <--\n",
            fixed="def f(x, g):\n    b, c, h, w = x.shape\n    y = x.view(b, g, c // g, h, w).transpose(1, 2)\n"
            "    return y.reshape(b, c, h, w)  # <--\n",
        ),
        Example(
            "def accuracy(output, target, k):\n    _, pred = output.topk(k, 1, True, True)\n    pred = pred.t()\n"
            "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n"
            "    return correct[:k].view(-1).float().sum(0)  # <--\n",
            fixed="def accuracy(output, target, k):\n    _, pred = output.topk(k, 1, True, True)\n    pred = pred.t()\n"
            "    correct = pred.eq(target.view(1, -1).expand_as(pred))\n"
            "    return correct[:k].reshape(-1).float().sum(0)  # <--\n",
        ),
        Example(
            "def f(h):\n    return h.transpose(2, 3).clone().view(h.size(0), -1)  # <--\n",
            fixed="def f(h):\n    return h.transpose(2, 3).clone().reshape(h.size(0), -1)  # <--\n",
        ),
        Example(
            "def f(conv, x):\n    y = conv(x)\n    return y.transpose(0, 1).view(-1)  # <--\n",
            fixed="def f(conv, x):\n    y = conv(x)\n    return y.transpose(0, 1).reshape(-1)  # <--\n",
        ),
        Example(
            "import torch\ndef f(x, n):\n    return torch.transpose(x, 1, 2).view(n, -1)  # <--\n",
            fixed="import torch\ndef f(x, n):\n    return torch.transpose(x, 1, 2).reshape(n, -1)  # <--\n",
        ),
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.gru = nn.GRU(8, 16, bidirectional=True)\n    def forward(self, x, h):\n"
            "        t, b, f = x.size()\n        out, h = self.gru(x, h)\n"
            "        return out.transpose(0, 1).view(-1, 32)  # <--\n",
            fixed="import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.gru = nn.GRU(8, 16, bidirectional=True)\n    def forward(self, x, h):\n"
            "        t, b, f = x.size()\n        out, h = self.gru(x, h)\n"
            "        return out.transpose(0, 1).reshape(-1, 32)  # <--\n",
        ),
        Example(
            "import torch\ndef f(x, p):\n    n, c, h, w = x.shape\n    x = x.reshape(n, c, h // p, p, w // p, p)\n"
            "    return torch.einsum('nchpwq->nhwpqc', x).view(n, -1, p * p * c)  # <--\n",
            fixed="import torch\ndef f(x, p):\n    n, c, h, w = x.shape\n"
            "    x = x.reshape(n, c, h // p, p, w // p, p)\n"
            "    return torch.einsum('nchpwq->nhwpqc', x).reshape(n, -1, p * p * c)  # <--\n",
        ),
        Example(
            "import torch\nimport torch.nn.functional as F\ndef attend(q, k, v, b, t, c, fused):\n"
            "    q, k, v = q.view(b, 4, t, c // 4), k.view(b, 4, t, c // 4), v.view(b, 4, t, c // 4)\n"
            "    if fused:\n        y = F.scaled_dot_product_attention(q, k, v)\n    else:\n"
            "        y = torch.softmax(q @ k.transpose(-2, -1), -1) @ v\n"
            "    return y.transpose(1, 2).view(b, t, c)  # <--\n",
            fixed="import torch\nimport torch.nn.functional as F\ndef attend(q, k, v, b, t, c, fused):\n"
            "    q, k, v = q.view(b, 4, t, c // 4), k.view(b, 4, t, c // 4), v.view(b, 4, t, c // 4)\n"
            "    if fused:\n        y = F.scaled_dot_product_attention(q, k, v)\n    else:\n"
            "        y = torch.softmax(q @ k.transpose(-2, -1), -1) @ v\n"
            "    return y.transpose(1, 2).reshape(b, t, c)  # <--\n",
        ),
        Example(
            "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv1d(8, 8, 3)\n    def forward(self, x):\n"
            "        return self.conv(x.transpose(1, 2)).transpose(0, 1).view(-1)  # <--\n",
            fixed="import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.conv = nn.Conv1d(8, 8, 3)\n    def forward(self, x):\n"
            "        return self.conv(x.transpose(1, 2)).transpose(0, 1).reshape(-1)  # <--\n",
        ),
        Example(
            "import torch\nx = torch.rand(4, 6)\ny = x[:, :3].view(12)  # <--\n",
            fixed="import torch\nx = torch.rand(4, 6)\ny = x[:, :3].reshape(12)  # <--\n",
        ),
        # a script's global, rebound at module level, read by a function the script calls there
        "import torch\ndef batchify(data, bsz):\n    return data.view(bsz, -1).t()\n"
        "data = torch.arange(100)\ndata = batchify(data, 4)\ndef get_batch(i):\n"
        "    return data[i:i + 5].view(-1)  # <--\nget_batch(0)\n",
    )

    def visit_Call(self, node: cst.Call, ctx) -> None:
        """``x.view(...)`` that the stride rule proves impossible (on one side of an ``if``, when
        the join of both sides forgot the layout)."""
        if view_call(node) != "view" or type(node.func) is not cst.Attribute:
            return
        verdict = ctx.view_verdict(node)
        if verdict is None:
            return
        recv, target, possible = verdict
        if possible is None:
            for side, on_side in ctx.branch_view_verdicts(node):
                if side.rebound and on_side is not None and on_side[2] is False \
                        and not strideless_side(ctx, side, node):
                    self._report(node, ctx, on_side[0], on_side[1], side)
                    return
            return
        if possible is False:
            self._report(node, ctx, recv, target, None)

    def _report(self, node: cst.Call, ctx, recv, target, side: Optional[Branch]) -> None:
        """The finding on ``node``, whose receiver has the fact ``recv`` (on ``side`` only, when
        given)."""
        func = node.func
        assert type(func) is cst.Attribute
        if recv.shape is not None and recv.shape.rank is None and _squeezed(ctx, func.value):
            return  # `h.squeeze(0).transpose(1, 0)`: the code expects size-1 dims, sizes are not generic
        subject = clipped_source(ctx, func.value)
        why = f"after `{recv.moved_by}`" if recv.moved_by else "in memory"
        detail = ""
        if recv.shape is not None and recv.strides is not None and recv.shape.is_fully_known:
            detail = f" (shape {format_shape(recv.shape)}, strides {tuple(recv.strides)})"
        fix = Fix(func, func.with_changes(attr=cst.Name("reshape")))
        view = call_text(ctx, node, "view", target)
        condition = view_condition(recv, target, subject)
        unless = f" unless {condition}" if condition else ""
        when = ""
        origin = move_origin(ctx, func.value, recv)
        related = [origin] if origin is not None else []
        if side is not None:
            when = f" when {side.describe(ctx.source)}{_line_of_test(ctx, side.test)}"
            other = side_flipped(side).describe(ctx.source)
            condition = f"{condition} or {other}" if condition else other
            related.append((side.test, "this `if` decides the layout"))
        ctx.report(
            node,
            f"`{subject}` is not contiguous {why}{detail}{when}; `{view}` would "
            f"merge dims whose strides do not line up and raises at run time{unless}; use `.reshape()` "
            f"or call `.contiguous()` first",
            fix=fix,
            condition=condition,
            related=related,
        )


def side_flipped(side: Branch) -> Branch:
    """The other side of the ``if`` of ``side`` (for what it says, not its fact)."""
    return Branch(side.test, not side.taken, side.fact, side.rebound)


def _line_of_test(ctx, test: cst.BaseExpression) -> str:
    """`` (line N)``: the line of the ``if`` that tests ``test``, when its text occurs once."""
    pattern = re.compile(r"^[ \t]*(?:el)?if\s+" + re.escape(ctx.source(test)) + r"\s*:", re.MULTILINE)
    found = [m.start() for m in pattern.finditer(ctx.text)] if ctx.text else []
    return f" (line {ctx.text.count(chr(10), 0, found[0]) + 1})" if len(found) == 1 else ""
