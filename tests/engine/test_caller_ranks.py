"""A call-site finding the caller caused by passing a tensor of the wrong rank is said at the
call (engine/caller_ranks.py): the callee's einsum fixes the rank of its parameter."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code == "SC503"]
CODE = ("import torch\n\ndef project_tokens(x, w):\n    return torch.einsum(\"bnd,de->bne\", x, w)\n\n"
        "def first(x, w):\n    return project_tokens({arg}, w)\n\n"
        "y = first(torch.randn(4, 3, 5), torch.randn(5, 2))\n")


def test_a_wrong_rank_from_the_caller_is_said_at_the_call():
    found = lint_text(CODE.format(arg="x[0]"), RULES)
    assert [(d.code, d.line) for d in found] == [("SC503", 7)]
    assert found[0].message.startswith("the call passes `x` with 2 dims, but `project_tokens` needs 3 (line 4: ")
    with pytest.raises(RuntimeError):
        torch.einsum("bnd,de->bne", torch.randn(3, 5), torch.randn(5, 2))


def test_the_right_rank_is_silent():
    assert lint_text(CODE.format(arg="x"), RULES) == []


def test_a_callee_finding_of_its_own_stays_in_the_callee():
    code = ("import torch\n\ndef f(x, w):\n    return torch.einsum(\"bnd,de->bne\", x, w[0])\n\n"
            "y = f(torch.randn(4, 3, 5), torch.randn(5, 2))\n")
    assert [(d.code, d.line) for d in lint_text(code, RULES)] == [("SC503", 4)]
