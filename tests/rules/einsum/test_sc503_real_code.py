"""SC503 on real-code shapes (issue 11, round 2): q, k, v unpacked from one stacked tensor, and a
2-D operand given to a batched spec. Each invalid case is run with torch too."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULE = [r for r in all_rules() if r.code == "SC503"]
HEAD = "import torch\nimport torch.nn as nn\n"


def attention(tail: str) -> str:
    """A ViT-style attention module whose forward ends with ``tail``."""
    return ("class A(nn.Module):\n    def __init__(self, c, h):\n        super().__init__()\n        self.h = h\n"
            "        self.qkv = nn.Linear(c, 3 * c)\n    def forward(self, x):\n        b, n, c = x.shape\n"
            "        q, k, v = self.qkv(x).reshape(b, n, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)\n" + tail)


KT = attention("        k_t = k.transpose(-2, -1)\n        return torch.einsum('bhqd,bhkd->bhqk', q, k_t)\n")
FLAT = ("def f(x, w):\n    b, n, d = x.shape\n    y = x.reshape(b * n, d)\n"
        "    return torch.einsum('bij,bjk->bik', y, w)\n")


def _found(code: str):
    return [d for d in lint_text(HEAD + code, RULE) if d.code == "SC503"]


def test_transposed_key_read_as_untransposed():
    [d] = _found(KT)
    assert d.line == (HEAD + KT).count("\n")
    assert d.message.startswith("index d is c//self.h in operand 0 but n in operand 1")
    assert d.condition == "`c//self.h` equals `n` or one of them is 1"


def test_two_dim_operand_for_a_batched_spec():
    [d] = _found(FLAT)
    assert d.line == (HEAD + FLAT).count("\n")
    assert "operand 0 has 2 dims (b*n, d) but its term \"bij\" has 3 indices" in d.message


@pytest.mark.parametrize("code", [
    attention("        return torch.einsum('bhqd,bhkd->bhqk', q, k)\n"),
    attention("        return torch.einsum('bhqd,bhdk->bhqk', q, k.transpose(-2, -1))\n"),
    "def f(x, w):\n    b, n, d = x.shape\n    return torch.einsum('bij,bjk->bik', x, w)\n",
    # unpacking a tensor whose first dim is not the count binds nothing known
    "def f(x):\n    x = torch.rand(4, 5, 6)\n    a, b = x[:2]\n    return torch.einsum('ij,jk->ik', a, b.t())\n",
])
def test_silent(code):
    assert [d.message for d in _found(code)] == []


def test_torch_agrees():
    b, n, c, h = 2, 5, 8, 2
    q, k, v = nn.Linear(c, 3 * c)(torch.rand(b, n, c)).reshape(b, n, 3, h, c // h).permute(2, 0, 3, 1, 4)
    assert q.shape == (b, h, n, c // h)
    with pytest.raises(RuntimeError):
        torch.einsum("bhqd,bhkd->bhqk", q, k.transpose(-2, -1))
    with pytest.raises(RuntimeError):
        torch.einsum("bij,bjk->bik", torch.rand(b * n, c), torch.rand(b, c, 3))
