"""Every pitfall of ../shared/seeds/pitfalls.md that names an SC1xx, SC2xx or SC5xx rule is
flagged by that rule, and the fixed form the tutorial gives is not flagged by any of them."""

from __future__ import annotations

import pytest

from shapecheck.engine.config import Selectors, selected_rules
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

FAMILY = [r for r in all_rules() if r.code.startswith(("SC1", "SC2", "SC5"))]
ALL_SC125 = selected_rules([Selectors(extend_select=["SC205"])])
ALL_SC125 = [r for r in ALL_SC125 if r.code.startswith(("SC1", "SC2", "SC5"))]

X23 = "import torch\nx = torch.arange(6.0).view(2, 3)\n"
AB = "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\n"

# (rule, buggy program, fixed program)
SEEDS = [
    ("SC101", X23 + "y = x.T\nz = y.view(6)\n", X23 + "y = x.T\nz = y.reshape(6)\n"),
    ("SC101", X23 + "y = x.transpose(0, 1)\nz = y.view(6)\n",
     X23 + "y = x.transpose(0, 1)\nz = y.contiguous().view(6)\n"),
    ("SC101", X23 + "y = x.permute(1, 0)\nz = y.view(6)\n", X23 + "y = x.permute(1, 0)\nz = y.reshape(6)\n"),
    ("SC101", X23 + "y = x.t()\nz = y.view(6)\n", X23 + "y = x.t()\nz = y.contiguous().view(6)\n"),
    ("SC102", X23 + "y = x.view(-1, -1)\n", X23 + "y = x.view(-1, 2)\n"),
    ("SC103", "import torch\ny = torch.arange(6).view(4, 2)\n", "import torch\ny = torch.arange(6).view(3, 2)\n"),
    ("SC201", X23 + "y = x - torch.mean(x, dim=1)\n", X23 + "y = x - torch.mean(x, dim=1, keepdim=True)\n"),
    ("SC201", X23 + "s = torch.sum(x, dim=1)\ny = torch.cat([x, s], dim=1)\n",
     X23 + "s = torch.sum(x, dim=1, keepdim=True)\ny = torch.cat([x, s], dim=1)\n"),
    ("SC202", "import torch\ny = torch.zeros(2, 3) + torch.zeros(2)\n",
     "import torch\ny = torch.zeros(2, 3) + torch.zeros(2)[:, None]\n"),
    ("SC203", "import torch\na = torch.randn(3, 1)\nb = torch.randn(3, 1)\nc = a @ b\n",
     "import torch\na = torch.randn(3, 1)\nb = torch.randn(3, 1)\nc = a.T @ b\n"),
    ("SC203", "import torch\nc = torch.mm(torch.randn(2, 3, 4), torch.randn(4, 5))\n",
     "import torch\nc = torch.matmul(torch.randn(2, 3, 4), torch.randn(4, 5))\n"),
    ("SC203", "import torch\nc = torch.dot(torch.randn(2, 3), torch.randn(2, 3))\n",
     "import torch\nc = torch.dot(torch.randn(3), torch.randn(3))\n"),
    ("SC204", X23 + "values = torch.max(x, dim=1)\ny = values + 1\n",
     X23 + "values, indices = torch.max(x, dim=1)\ny = values + 1\n"),
    ("SC204", X23 + "y = torch.max(x, dim=1) * 2\n", X23 + "y = torch.max(x, dim=1).values * 2\n"),
    ("SC205", "def f(x):\n    return x.squeeze()\n", "def f(x):\n    return x.squeeze(1)\n"),
    ("SC501", AB + "c = torch.einsum('ij;jk->ik', a, b)\n", AB + "c = torch.einsum('ij,jk->ik', a, b)\n"),
    ("SC501", AB + "c = torch.einsum('ij,jk->ikk', a, b)\n", AB + "c = torch.einsum('ij,jk->ik', a, b)\n"),
    ("SC501", AB + "c = torch.einsum('ij,jk->iz', a, b)\n", AB + "c = torch.einsum('ij,jk->ik', a, b)\n"),
    ("SC502", AB + "c = torch.einsum('ij,jk->ik', a)\n", AB + "c = torch.einsum('ij,jk->ik', a, b)\n"),
    ("SC503", AB + "c = torch.einsum('ijk,jk->ik', a, b)\n", AB + "c = torch.einsum('ij,jk->ik', a, b)\n"),
    ("SC503", AB + "c = torch.einsum('ij,kj->ik', a, b)\n", AB + "c = torch.einsum('ij,jk->ik', a, b)\n"),
]


@pytest.mark.parametrize("code, bad, good", SEEDS, ids=[f"{c}-{i}" for i, (c, *_r) in enumerate(SEEDS)])
def test_seed_pitfall_flagged_and_fixed_form_silent(code, bad, good):
    assert code in {d.code for d in lint_text(bad, ALL_SC125)}
    assert [f"{d.line} {d.code} {d.message}" for d in lint_text(good, ALL_SC125)] == []


def test_every_sc1_sc2_sc5_rule_of_the_seeds_is_covered():
    import re
    from pathlib import Path

    table = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "pitfalls.md"
    if not table.is_file():
        pytest.skip("../shared/seeds/pitfalls.md is not beside the repository")
    named = set(re.findall(r"SC[125]\d\d", table.read_text(encoding="utf-8")))
    assert named and named <= {c for c, *_r in SEEDS}
