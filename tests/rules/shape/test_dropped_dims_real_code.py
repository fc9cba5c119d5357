"""SC201/SC202 on library-shaped code (issue 11, round 3): reduced dims held in a local chosen
among literals or in an attribute set in ``__init__``, two reductions of one tensor with and
without keepdim (CBAM), and an integer index over a non-leading dim broadcast back (DETR's
position encoding, nanoGPT's top-k filter).

Every invalid case is also run with torch 2.13: it raises on a non-square input; every fixed
twin runs.
"""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code in ("SC201", "SC202")]
HEAD = "import torch\nimport torch.nn as nn\n"

GN_CHOICE = ("class M(nn.Module):\n    def __init__(self, channels_last=False):\n        super().__init__()\n"
             "        self.channels_last = channels_last\n    def forward(self, x):\n"
             "        dim = (1, 2, 3) if self.channels_last else (2, 3, 4)\n        return x - x.mean(dim=dim{keep})\n")
GRN_ATTR = ("class M(nn.Module):\n    def __init__(self, eps=1e-6):\n        super().__init__()\n"
            "        self.spatial_dim = (1, 2)\n        self.eps = eps\n    def forward(self, x):\n"
            "        return x / (x.norm(p=2, dim=self.spatial_dim{keep}) + self.eps)\n")
CBAM = ("class M(nn.Module):\n    def forward(self, x):\n"
        "        return 0.5 * x.mean((2, 3){keep}) + 0.5 * x.amax((2, 3), keepdim=True)\n")
CBAM_BOUND = ("class M(nn.Module):\n    def forward(self, x):\n        mx = x.amax(dim=(2, 3), keepdim=True)\n"
              "        return x.mean(dim=(2, 3){keep}) + mx\n")
LSE = ("class M(nn.Module):\n    def forward(self, x):\n        m = x.amax(dim=1, keepdim=True)\n"
       "        e = torch.exp(x - m)\n        s = e.mean(dim=1{keep})\n        return torch.log(s) + m\n")
DETR = ("class M(nn.Module):\n    def forward(self, mask, eps=1e-6):\n        y = mask.cumsum(1, dtype=torch.float32)\n"
        "        return y / (y[:, {idx}, :] + eps) * 6.28\n")
TOPK = ("class M(nn.Module):\n    def forward(self, logits, k=3):\n        v, _ = torch.topk(logits, k)\n"
        "        logits = logits.clone()\n        logits[logits < v[:, {idx}]] = -float('inf')\n"
        "        return logits\n")

#: (template, buggy fill, fixed fill, code, condition, input)
CASES = [
    (GN_CHOICE, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", None, lambda: (torch.rand(2, 3, 4, 5, 6),)),
    (GRN_ATTR, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", None, lambda: (torch.rand(2, 4, 5, 3),)),
    (CBAM, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", None, lambda: (torch.rand(2, 3, 4, 5),)),
    (CBAM_BOUND, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", None, lambda: (torch.rand(2, 3, 4, 5),)),
    (LSE, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", None, lambda: (torch.rand(2, 3, 2, 3),)),
    (DETR, {"idx": "-1"}, {"idx": "-1:"}, "SC202", None, lambda: (torch.zeros(2, 5, 7, dtype=torch.bool),)),
    (TOPK, {"idx": "-1"}, {"idx": "[-1]"}, "SC202", None, lambda: (torch.rand(3, 10),)),
]


def _module(code: str):
    scope: dict = {}
    exec(HEAD + code, scope)
    return scope["M"]()


@pytest.mark.parametrize("template,bug,fix,code,condition,make", CASES)
def test_bug_flagged_on_its_last_line(template, bug, fix, code, condition, make):
    text = HEAD + template.format(**bug)
    line = text.rstrip("\n").count("\n") + (1 if template is not TOPK else 0)
    found = [(d.code, d.line, d.condition) for d in lint_text(text, RULES)]
    assert found == [(code, line, condition)]


@pytest.mark.parametrize("template,bug,fix,code,condition,make", CASES)
def test_fixed_twin_silent(template, bug, fix, code, condition, make):
    assert [d.message for d in lint_text(HEAD + template.format(**fix), RULES)] == []


@pytest.mark.parametrize("template,bug,fix,code,condition,make", CASES)
def test_torch_raises_on_the_bug_and_runs_the_fix(template, bug, fix, code, condition, make):
    if template in (CBAM, CBAM_BOUND):  # no error: the result gains two dims
        assert tuple(_module(template.format(**bug))(*make()).shape) == (2, 3, 2, 3)
    elif template is LSE:  # no error: (2, 2, 3) against (2, 1, 2, 3) gains a dim
        assert tuple(_module(template.format(**bug))(*make()).shape) == (2, 2, 2, 3)
    else:
        with pytest.raises(RuntimeError):
            _module(template.format(**bug))(*make())
    _module(template.format(**fix))(*make())


SILENT = [
    # one choice of the dim is the leading one; a dim whose value comes from a parameter
    "class M(nn.Module):\n    def __init__(self, first):\n        super().__init__()\n        self.first = first\n"
    "    def forward(self, x):\n        dim = 0 if self.first else 1\n        return x - x.mean(dim=dim)\n",
    "class M(nn.Module):\n    def __init__(self, dim=1):\n        super().__init__()\n        self.dim = dim\n"
    "    def forward(self, x):\n        return x - x.mean(dim=self.dim)\n",
    "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.dims = (2, 3)\n"
    "    def set(self, d):\n        self.dims = d\n    def forward(self, x):\n"
    "        return x - x.mean(dim=self.dims)\n",
    "def f(x, dims):\n    d = dims\n    return x - x.mean(dim=d)\n",
    # keepdim twins; the reduction re-expanded; a reduction only used as a scalar
    "def f(x):\n    return x.mean((2, 3), keepdim=True) * x.amax((2, 3), keepdim=True)\n",
    "def f(x):\n    return x.mean((2, 3))[:, :, None, None] + x.amax((2, 3), keepdim=True)\n",
    "def f(x):\n    return x.mean((0, 1)) + x.amax((0, 1), keepdim=True)\n",
    "def f(x):\n    return x.mean((2, 3)).sum() + x.amax((2, 3), keepdim=True)\n",
    # indexes that keep the dim, over the leading dim, of another tensor, or of both operands
    "def f(x):\n    return x - x[0]\n",
    "def f(x):\n    return x - x[:, :1] + x[:, None] * x[..., None]\n",
    "def f(boxes):\n    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])\n",
    "def f(x, y):\n    return x - y[:, 0]\n",
    "def f(logits, k):\n    v, _ = torch.topk(logits, k)\n    v = v.sum(0)\n    return logits < v[:, -1]\n",
    "import numpy as np\nimport scipy.sparse as sp\ndef f(m):\n    m = sp.csr_matrix(m)\n    return m - m[:, 0]\n",
]


@pytest.mark.parametrize("code", SILENT)
def test_silent(code):
    assert [d.message for d in lint_text(HEAD + code, RULES)] == []
