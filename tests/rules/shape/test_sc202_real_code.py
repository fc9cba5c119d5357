"""SC202 on real-code shapes (issue 11, round 2): a per-channel vector of a module against its
convolution's output, an elementwise loss given a ``(N, 1)`` head and a 1-D target, and a
per-channel weight against a parameter whose rank its unpacking gave.

Each invalid case is run with torch too: it raises, or (the losses) only warns and broadcasts.
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULE = [r for r in all_rules() if r.code == "SC202"]
HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def conv_module(init_extra: str, forward: str, conv: str = "nn.Conv2d(cin, cout, 3, padding=1, bias=False)",
                vector: str = "nn.Parameter(torch.zeros(cout))") -> str:
    """A module with a convolution and a per-channel vector, and the given forward body."""
    return (f"class M(nn.Module):\n    def __init__(self, cin, cout):\n        super().__init__()\n"
            f"        self.conv = {conv}\n        self.bias = {vector}\n{init_extra}"
            f"    def forward(self, x):\n{forward}")


#: (code, condition); the finding is on the last line
INVALID = [
    (conv_module("", "        out = self.conv(x)\n        return out + self.bias\n"), "`cout` is 1"),
    (conv_module("", "        return F.relu(self.conv(x)) * self.bias\n"), "`cout` is 1"),
    (conv_module("", "        out = self.conv(x)\n        out += self.bias\n"), "`cout` is 1"),
    (conv_module("", "        x = self.conv(x)\n        x = x + self.bias\n"), "`cout` is 1"),
    (conv_module("", "        return torch.add(self.conv(x), self.bias)\n", vector="nn.Parameter(torch.randn(cout))",
                 conv="nn.Conv1d(cin, cout, 3)"), "`cout` is 1"),
    (conv_module("", "        return self.conv(x) + self.bias\n", conv="nn.Conv2d(3, 16, 3)",
                 vector="nn.Parameter(torch.zeros(16))"), None),
    ("def f(x, y, d):\n    fc = nn.Linear(d, 1)\n    pred = fc(x)\n    return F.mse_loss(pred, y.view(-1))\n",
     "`y.view(-1)` has one element"),
    ("def f(x, y, d):\n    fc = nn.Linear(d, 1)\n    crit = nn.L1Loss()\n    return crit(fc(x), y.view(-1))\n",
     "`y.view(-1)` has one element"),
    ("def f(x):\n    B, C, T = x.shape\n    w = torch.ones(C)\n    return x * w\n",
     "`T` equals `C` or one of them is 1"),
    # a padding mask (B, T) of the token ids against scores (B, H, T, T), not unsqueezed
    ("def f(idx, q, k):\n    B, T = idx.size()\n    mask = idx != 0\n"
     "    att = q.view(B, 4, T, 8) @ k.view(B, 4, T, 8).transpose(-2, -1)\n"
     "    return att.masked_fill(mask == 0, float('-inf'))\n", "`T` equals `B` or one of them is 1"),
]

VALID = [
    conv_module("", "        out = self.conv(x)\n        return out + self.bias.view(1, -1, 1, 1)\n"),
    conv_module("", "        return self.conv(x) + self.bias[:, None, None]\n"),
    # the vector sized by something else than the output channels
    conv_module("", "        return self.conv(x) + self.bias\n", vector="nn.Parameter(torch.zeros(cin))"),
    # set again outside `__init__`, or the output rebound: not known
    conv_module("", "        self.bias = self.bias.view(1, -1, 1, 1)\n        return self.conv(x) + self.bias\n"),
    conv_module("", "        out = self.conv(x)\n        out = out.mean((2, 3))\n        return out + self.bias\n"),
    conv_module("", "        out = self.conv(x)\n        if x.dim() == 4:\n            out = out.mean((2, 3))\n"
                "        return out + self.bias\n"),
    conv_module("", "        out = self.conv(x)\n        for _ in range(2):\n            out = out + self.bias\n"
                "            out = out.mean(-1)\n        return out\n"),
    # the output rebound by a `with` around the use: not known
    conv_module("", "        out = self.conv(x)\n        with torch.no_grad() as out:\n"
                "            return out + self.bias\n"),
    # a Linear's output has its features last
    conv_module("", "        return self.conv(x) + self.bias\n", conv="nn.Linear(cin, cout)"),
    conv_module("", "        return self.conv(x).permute(0, 2, 3, 1) + self.bias\n"),
    "def f(x, y, d):\n    fc = nn.Linear(d, 1)\n    return F.mse_loss(fc(x).squeeze(-1), y.view(-1))\n",
    "def f(x, y, d):\n    fc = nn.Linear(d, 1)\n    return F.mse_loss(fc(x), y.view(-1, 1))\n",
    "def f(x, y, d):\n    fc = nn.Linear(d, 3)\n    return F.cross_entropy(fc(x), y.view(-1))\n",
    "def f(x):\n    B, C, T = x.shape\n    w = torch.ones(C)\n    return x * w[:, None]\n",
    "def f(x):\n    B, C, T = x.shape\n    w = torch.ones(T)\n    return x * w\n",
    "def f(idx, q, k):\n    B, T = idx.size()\n    mask = idx != 0\n"
    "    att = q.view(B, 4, T, 8) @ k.view(B, 4, T, 8).transpose(-2, -1)\n"
    "    return att.masked_fill(mask[:, None, None, :] == 0, float('-inf'))\n",
]


@pytest.mark.parametrize("code,condition", INVALID)
def test_flagged_on_its_last_line(code, condition):
    found = [d for d in lint_text(HEAD + code, RULE) if d.code == "SC202"]
    assert [(d.line, d.condition) for d in found] == [((HEAD + code).count("\n"), condition)], \
        [d.message for d in found]


@pytest.mark.parametrize("code", VALID)
def test_silent(code):
    assert [d.message for d in lint_text(HEAD + code, RULE) if d.code == "SC202"] == []


def test_conv_message_gives_the_fix():
    [d] = [d for d in lint_text(HEAD + INVALID[0][0], RULE) if d.code == "SC202"]
    assert d.message.startswith("`self.bias` has one value per output channel of `self.conv` (cout)")
    assert "use `self.bias.view(1, -1, 1, 1)`" in d.message


def test_torch_agrees():
    conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
    with pytest.raises(RuntimeError):
        conv(torch.rand(2, 3, 5, 5)) + torch.zeros(8)
    out = conv(torch.rand(2, 3, 8, 8))
    bias = torch.arange(8.0)
    assert not torch.equal(out + bias, out + bias.view(1, -1, 1, 1))  # W == C: silent and wrong
    pred, y = nn.Linear(4, 1)(torch.rand(6, 4)), torch.rand(6)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        F.mse_loss(pred, y)
    assert any("target size" in str(w.message) for w in seen)
    assert (pred - y).shape == (6, 6)
    with pytest.raises(ValueError):
        nn.BCEWithLogitsLoss()(pred, y)
    with pytest.raises(RuntimeError):
        torch.rand(2, 3, 5) * torch.ones(3)
    with pytest.raises(RuntimeError):
        torch.rand(2, 4, 5, 5).masked_fill(torch.ones(2, 5) == 0, 0.0)
