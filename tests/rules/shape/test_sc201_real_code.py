"""SC201 on real-code shapes (issue 11, round 2): reductions kept through number parameters and
``self.eps``, list dims next to a keepdim mean, and norms of a matrix product's left operand.

Each invalid case is also run with torch: it raises on a non-square input, or computes a result
different from the keepdim form on a square one.
"""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULE = [r for r in all_rules() if r.code == "SC201"]
HEAD = "import torch\nimport torch.nn as nn\n"

L2_PARAM = "def f(x, eps=1e-6):\n    norm = torch.sqrt(torch.sum(x ** 2, 1) + eps)\n    return torch.div(x, norm)\n"
L2_ATTR = ("class L2Norm(nn.Module):\n    def __init__(self, eps=1e-6):\n        super().__init__()\n"
           "        self.eps = eps\n    def forward(self, x):\n"
           "        norm = torch.sqrt(torch.sum(x ** 2, 1) + self.eps)\n        return torch.div(x, norm)\n")
L2_CLASS_ATTR = ("class L2Norm(nn.Module):\n    eps = 1e-6\n    def forward(self, x):\n"
                 "        return x / (x.norm(dim=1) + self.eps)\n")
BN = ("def f(x, eps=1e-5):\n    mean = x.mean(dim=[0, 2], keepdim=True)\n    var = x.var(dim=[0, 2], unbiased=False)\n"
      "    return (x - mean) / torch.sqrt(var + eps)\n")
COS = "def f(a, b):\n    n1 = a.norm(dim=1)\n    n2 = b.norm(dim=1)\n    g = a @ b.t()\n    return g / (n1 * n2)\n"
COS_MM = ("def f(x1, x2, eps=1e-8):\n    w12 = torch.mm(x1, x2.t())\n    w1 = torch.norm(x1, 2, 1)\n"
          "    w2 = torch.norm(x2, 2, 1)\n    return w12 / (w1 * w2).clamp(min=eps)\n")
GRAM = "def f(x):\n    n = x.norm(dim=1)\n    g = x @ x.t()\n    return g / (n * n)\n"
# the variance of the centred input, and a gain in front: still misaligned against the input's dims
LN = ("def f(x, eps=1e-5):\n    g = torch.ones(x.shape[-1])\n    mean = x.mean(0, keepdim=True)\n"
      "    var = ((x - mean) ** 2).mean(1)\n    return g * (x - mean) / torch.sqrt(var + eps)\n")
STD = "def f(x):\n    mean = x.mean(1)\n    std = x.std(1)\n    return (x - mean.unsqueeze(1)) / std\n"

#: (code, its condition): the finding is on the last line
INVALID = [
    (L2_PARAM, None),
    (L2_ATTR, None),
    (L2_CLASS_ATTR, None),
    (BN, None),
    ("def f(x, eps=1e-8):\n    norms = x.norm(dim=1)\n    return x / norms.clamp(min=eps)\n", None),
    ("def f(x):\n    return x / x.pow(2).sum(1).pow(0.5)\n", None),
    (COS, None),
    (COS_MM, None),
    (GRAM, None),
    (LN, None),
    (STD, None),
]

VALID = [
    "def f(x, eps=1e-6):\n    norm = torch.sqrt(torch.sum(x ** 2, 1, keepdim=True) + eps)\n"
    "    return torch.div(x, norm)\n",
    "def f(x, eps=1e-6):\n    norm = torch.sqrt(torch.sum(x ** 2, 1) + eps)\n"
    "    return torch.div(x, norm.unsqueeze(-1))\n",
    "def f(x, eps=1e-6):\n    n = x.norm(dim=1) + eps\n    return x / n[:, None]\n",
    "def f(x, eps=1e-6):\n    return x / (x.norm(dim=0) + eps)\n",
    "def f(x, eps=1e-5):\n    mean = x.mean(dim=[0, 2], keepdim=True)\n"
    "    var = x.var(dim=[0, 2], unbiased=False, keepdim=True)\n    return (x - mean) / torch.sqrt(var + eps)\n",
    "def f(a, b):\n    n1 = a.norm(dim=1, keepdim=True)\n    n2 = b.norm(dim=1)\n    return (a @ b.t()) / (n1 * n2)\n",
    "def f(a, b, eps=1e-8):\n    g = torch.mm(a, b.t())\n"
    "    return g / torch.outer(a.norm(dim=1), b.norm(dim=1)).clamp(min=eps)\n",
    "def f(a, b):\n    n1 = a.norm(dim=1)\n    n2 = b.norm(dim=1)\n"
    "    return (a @ b.t()) / (n1[:, None] * n2[None, :])\n",
    "def f(a, b):\n    g = a @ b.t()\n    return g / b.norm(dim=1)\n",
    "def f(x):\n    n = x.norm(dim=1)\n    g = x @ x.t()\n    return g / n\n",
    "def f(x):\n    loss = (x.sum(1) + 1e-6).mean()\n    return loss\n",
    "def f(x, eps=1e-5):\n    mean = x.mean(1, keepdim=True)\n    var = ((x - mean) ** 2).mean(1, keepdim=True)\n"
    "    return (x - mean) / torch.sqrt(var + eps)\n",
    "def f(x):\n    mean = x.mean(1)\n    std = x.std(1)\n    return (x - mean.unsqueeze(1)) / std.unsqueeze(1)\n",
    "def f(x):\n    w = torch.rand(4, 3)\n    return (w * x) / x.sum(0)\n",
]

#: cases whose parameter may be passed a tensor, or whose attribute is set elsewhere: unknown
UNKNOWN = [
    "def f(x, eps=1e-6):\n    eps = torch.ones(x.shape[0], 1)\n    return x / (x.sum(1) + eps)\n",
    "def f(x, eps):\n    return x / (x.sum(1) + eps)\n",
    "def f(x, eps=None):\n    return x / (x.sum(1) + eps)\n",
    "class N(nn.Module):\n    def __init__(self, eps=1e-6):\n        super().__init__()\n        self.eps = eps\n"
    "    def set(self, t):\n        self.eps = t\n"
    "    def forward(self, x):\n        return x / (x.sum(1) + self.eps)\n",
    "class N(nn.Module):\n    def __init__(self, eps):\n        super().__init__()\n        self.eps = eps\n"
    "    def forward(self, x):\n        return x / (x.sum(1) + self.eps)\n",
]


def _run(code: str, *args):
    scope: dict = {}
    exec(HEAD + code, scope)
    f = scope.get("f")
    if f is None:
        f = scope["L2Norm"]()
    return f(*args)


@pytest.mark.parametrize("code,condition", INVALID)
def test_flagged_on_its_last_line(code, condition):
    line = (HEAD + code).count("\n")
    found = [d for d in lint_text(HEAD + code, RULE) if d.code == "SC201"]
    assert [(d.line, d.condition) for d in found] == [(line, condition)], [d.message for d in found]


@pytest.mark.parametrize("code", VALID + UNKNOWN)
def test_silent(code):
    assert [d.message for d in lint_text(HEAD + code, RULE) if d.code == "SC201"] == []


@pytest.mark.parametrize("code", [c for c, _ in INVALID if c is not GRAM])  # a Gram matrix is square
def test_invalid_cases_raise_in_torch(code):
    two = code.count("def f(a, b") or code.count("def f(x1, x2")
    args = (torch.rand(4, 3), torch.rand(5, 3)) if two else (torch.rand(2, 4, 3),) if code is BN else \
        (torch.rand(4, 3),)
    with pytest.raises(RuntimeError):
        _run(code, *args)


def test_square_inputs_are_silently_wrong():
    x = torch.rand(5, 5)
    assert not torch.allclose(_run(L2_PARAM, x), x / x.norm(dim=1, keepdim=True), atol=1e-4)
    g = x @ x.t()
    n = x.norm(dim=1)
    assert not torch.allclose(_run(GRAM, x), g / (n[:, None] * n[None, :]))


@pytest.mark.parametrize("code", VALID)
def test_valid_cases_run_in_torch(code):
    two = code.count("def f(a, b")
    args = (torch.rand(4, 3), torch.rand(5, 3)) if two else (torch.rand(2, 4, 3),) if "[0, 2]" in code else \
        (torch.rand(4, 3),)
    _run(code, *args)


def test_message_names_the_rows_and_columns():
    [d] = [d for d in lint_text(HEAD + COS, RULE) if d.code == "SC201"]
    assert d.message.startswith("`a.norm(dim=1)` holds one value per row of `a`")
    assert "torch raises unless the two row counts are equal" in d.message
    [d] = [d for d in lint_text(HEAD + GRAM, RULE) if d.code == "SC201"]
    assert "torch raises nothing" in d.message
