"""SC501-SC503: literal specs through the shared parser, every call form, and columns that point
at the offending character inside the string."""

from __future__ import annotations

import pytest

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

RULES = [get_rule(c) for c in ("SC501", "SC502", "SC503")]


def diags(code: str):
    return [(d.line, d.column, d.code) for d in lint_text(code, RULES)]


def col_of(line: str, needle: str, nth: int = 0) -> int:
    pos = -1
    for _ in range(nth + 1):
        pos = line.index(needle, pos + 1)
    return pos + 1


def test_syntax_error_points_at_the_character():
    line = 'c = torch.einsum("ij,jk->ikk", a, b)'
    code = "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\n" + line + "\n"
    assert diags(code) == [(4, col_of(line, "k", 2), "SC501")]


def test_invalid_character_column():
    line = "c = torch.einsum('ij->i1', a)"
    code = "import torch\na = torch.randn(2, 3)\n" + line + "\n"
    assert diags(code) == [(3, col_of(line, "1"), "SC501")]


def test_operand_count():
    code = "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ij,jk->ik', a)\n"
    assert [c for _, _, c in diags(code)] == ["SC502"]
    code = "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ij,jk->ik', a, a.T)\n"
    assert diags(code) == []


def test_shape_mismatch_points_at_the_index():
    line = "c = torch.einsum('bij,bjk->bik', a, b)"
    code = "import torch\na = torch.randn(2, 3, 4)\nb = torch.randn(2, 5, 6)\n" + line + "\n"
    assert diags(code) == [(4, col_of(line, "j", 1), "SC503")]


def test_rank_mismatch():
    code = "import torch\na = torch.randn(2, 3)\nc = torch.einsum('ijk->k', a)\n"
    assert [c for _, _, c in diags(code)] == ["SC503"]


@pytest.mark.parametrize(
    "call",
    [
        "torch.einsum('ij,jk->ikk', a, b)",
        "torch.functional.einsum('ij,jk->ikk', a, b)",
        "shapecheck.einsum('ij,jk->ikk', a, b)",
        "einops.einsum(a, b, 'i j, j k -> i k k')",
        "T.einsum('ij,jk->ikk', a, b)",
        "einsum('ij,jk->ikk', a, b)",
    ],
)
def test_every_call_form(call):
    code = (
        "import torch\nimport torch as T\nimport shapecheck\nimport einops\n"
        "from torch import einsum\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\n"
        f"c = {call}\n"
    )
    assert [c for _, _, c in diags(code)] == ["SC501"]


def test_named_form_shape_mismatch():
    code = (
        "import torch\nimport einops\nq = torch.randn(2, 4, 8)\nk = torch.randn(2, 5, 7)\n"
        "s = einops.einsum(q, k, 'b i d, b j d -> b i j')\n"
    )
    assert [c for _, _, c in diags(code)] == ["SC503"]


def test_non_literal_specs_and_unknown_operands_are_silent():
    code = (
        "import torch\ndef f(spec, a, b, ops):\n"
        "    x = torch.einsum(spec, a, b)\n"
        "    y = torch.einsum('ij,jk->ik', ops)\n"
        "    z = torch.einsum('ij,jk->ik', *ops)\n"
        "    return torch.einsum('bij,bjk->bik', a, b)\n"
    )
    assert diags(code) == []


def test_seed_pitfalls_einsum():
    base = "import torch\na = torch.randn(2, 3)\nb = torch.randn(3, 4)\n"
    assert [c for *_, c in diags(base + "c = torch.einsum('ij,jk->il', a, b)\n")] == ["SC501"]
    assert [c for *_, c in diags(base + "c = torch.einsum('ij,jk->ik', a, b, b)\n")] == ["SC502"]
    assert [c for *_, c in diags(base + "c = torch.einsum('ij,kj->ik', a, b)\n")] == ["SC503"]
    assert diags(base + "c = torch.einsum('ij,jk->ik', a, b)\n") == []
