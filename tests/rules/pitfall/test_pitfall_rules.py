"""SC601-SC605: the seed pitfalls are flagged, their fixed forms are not."""

from __future__ import annotations

from functools import partial

import pytest
from rule_harness import family_rules, finding_lines, findings

from shapecheck.engine.runner import fix_text
from shapecheck.rules.catalog import get_rule

#: the autograd, device and pitfall rules (opt-in ones too): what these tests look for
TRAINING_RULES = family_rules("SC3", "SC4", "SC6")
flagged = partial(findings, rules=TRAINING_RULES)
codes = partial(finding_lines, rules=TRAINING_RULES)

SEEDS = [
    ("SC601", "import torch\nx = torch.tensor([True, False])\ny = torch.tensor([True, True])\nz = x and y\n", 4,
     "import torch\nx = torch.tensor([True, False])\ny = torch.tensor([True, True])\nz = x & y\n"),
    ("SC602", "import torch\nt = torch.tensor([1, 2, 3])\nv = t.item()\n", 3,
     "import torch\nt = torch.tensor([1, 2, 3])\nv = t[0].item()\n"),
    ("SC603", "import torch\nx = torch.tensor([3.14], device='cuda')\nfor _ in range(10):\n    v = x.item()\n", 4,
     "import torch\nx = torch.tensor([3.14], device='cuda')\nv = x.item()\nfor _ in range(10):\n    print(v)\n"),
    ("SC604", "import torch\nt = torch.tensor([1, 2, 3])\nlst = list(t)\n", 3,
     "import torch\nt = torch.tensor([1, 2, 3])\nlst = t.tolist()\n"),
    ("SC605", "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.inverse(A) @ b\n", 4,
     "import torch\nA = torch.randn(3, 3)\nb = torch.randn(3)\nx = torch.linalg.solve(A, b)\n"),
]


@pytest.mark.parametrize("code, bug, line, fixed", SEEDS, ids=[f"{s[0]}-{i}" for i, s in enumerate(SEEDS)])
def test_seed_pitfall_is_flagged_and_its_fix_is_not(code, bug, line, fixed):
    assert (code, line) in codes(bug)
    assert codes(fixed) == []


def test_bool_message_names_the_shape():
    [(code, _, message)] = flagged("import torch\nx = torch.zeros(2, 3)\nif x:\n    pass\n")
    assert code == "SC601" and "(2, 3)" in message and "`x`" in message


def test_or_in_if_tests_both_sides_once():
    src = "import torch\na = torch.zeros(2)\nb = torch.zeros(2)\nif a or b:\n    pass\n"
    assert codes(src) == [("SC601", 4), ("SC601", 4)]


def test_item_message_counts_elements():
    [(code, _, message)] = flagged("import torch\nx = torch.zeros(2, 3)\nv = x.item()\n")
    assert code == "SC602" and "6 elements" in message


def test_item_on_unknown_shape_is_silent():
    assert codes("def f(x):\n    return x.item()\n") == []


def test_inverse_fix_only_when_shapes_mean_the_same():
    fixable = "import torch\nA = torch.randn(3, 3)\nB = torch.randn(3, 2)\nX = torch.linalg.inv(A) @ B\n"
    # solve() rounds differently from inverse-then-matmul: the fix is unsafe (test_fix_semantics.py)
    assert fix_text(fixable, [get_rule("SC605")]) == (fixable, 0)
    fixed, applied = fix_text(fixable, [get_rule("SC605")], unsafe_fixes=True)
    assert applied == 1 and "X = torch.linalg.solve(A, B)" in fixed
    # batch of matrices times a batch of vectors: matmul and solve disagree, no fix
    batched = "import torch\nA = torch.randn(2, 3, 3)\nb = torch.randn(2, 3)\nx = torch.inverse(A) @ b\n"
    assert ("SC605", 4) in codes(batched)
    assert fix_text(batched, [get_rule("SC605")], unsafe_fixes=True) == (batched, 0)


def test_inverse_fix_uses_the_torch_alias():
    src = "import torch as T\nA = T.randn(3, 3)\nb = T.randn(3)\nx = T.matmul(T.inverse(A), b)\n"
    fixed, applied = fix_text(src, [get_rule("SC605")], unsafe_fixes=True)
    assert applied == 1 and "x = T.linalg.solve(A, b)" in fixed
