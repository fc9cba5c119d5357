"""SC201-SC206: precision of the reduction rule, broadcast and matmul checks, tuple results,
squeeze, return annotations, and the seed pitfalls with their fixed forms."""

from __future__ import annotations

import textwrap

import pytest

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

RULES = [get_rule(c) for c in ("SC201", "SC202", "SC203", "SC204", "SC205", "SC206")]


def found(code: str, rules=RULES) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in lint_text("import torch\n" + textwrap.dedent(code), rules)]


def message(code: str, rule: str) -> str:
    (d,) = [d for d in lint_text("import torch\n" + textwrap.dedent(code), RULES) if d.code == rule]
    return d.message


@pytest.mark.parametrize(
    "expr, flagged",
    [
        ("x - x.mean(dim=0)", False),
        ("x - x.mean(0)", False),
        ("x - x.mean(dim=1)", True),
        ("x - x.mean(dim=-1)", True),
        ("x - x.mean(dim=1, keepdim=True)", False),
        ("x - torch.mean(x, dim=1)", True),
        ("x - torch.mean(x, 0)", False),
        ("x / x.sum(1)", True),
        ("x * x.prod(1)", True),
        ("x - x.std(1)", True),
        ("x - x.var(dim=1)", True),
        ("x / x.norm(dim=1)", True),
        ("x / x.norm(2, 1)", True),
        ("x / x.norm(dim=1, keepdim=True)", False),
        ("x - x.logsumexp(1)", True),
        ("x - x.amax(1)", True),
        ("x - x.amin(dim=0)", False),
        ("x - x.max(dim=1).values", True),
        ("x - x.max(dim=1)[0]", True),
        ("x - torch.max(x, 1)[0]", True),
        ("x - x.min(1).values", True),
        ("x - x.median(dim=1).values", True),
        ("x > x.mean(1)", True),
        ("x == x.amax(-1)", True),
        ("torch.where(x > 0, x, x.mean(1))", True),
        ("torch.maximum(x, x.mean(1))", True),
        ("torch.minimum(x, x.mean(0))", False),
        ("torch.cat([x, x.sum(1)], dim=1)", True),
        ("torch.stack([x, x.sum(0)])", True),
        ("x - x.mean(dim=(0, 1))", False),
        ("x - x.mean(dim=(1,))", True),
        ("x - x.mean(axis=1, keepdims=True)", False),
        ("x - x.mean(axis=1)", True),
    ],
)
def test_sc201_precision(expr, flagged):
    code = f"x = torch.randn(8, 8)\ny = {expr}\n"
    assert bool(found(code, RULES[:1])) == flagged


def test_sc201_message_names_shapes_and_alignment():
    text = message("x = torch.randn(16, 8)\ny = x - x.mean(dim=1)\n", "SC201")
    assert "x has shape (16, 8)" in text.replace("`", "")
    assert "x.mean(dim=1) has shape (16,)" in text.replace("`", "")
    assert "they align as 8 vs 16" in text


def test_sc201_unknown_shapes_still_flag_positive_axes():
    assert found("def f(x):\n    return x - x.mean(1)\n", RULES[:1]) == [(3, "SC201")]


def test_sc201_unknown_rank_flags_the_last_axis_unless_1d():
    # issue 11: `x - x.mean(-1)` is right only for a 1-D `x`; the finding names that exception
    text = message("def f(x):\n    return x - x.mean(-1)\n", "SC201")
    assert "(wrong unless `x` is 1-D)" in text


def test_sc201_through_names():
    code = "x = torch.randn(2, 3)\ns = torch.sum(x, dim=1)\nz = torch.cat([x, s], dim=1)\n"
    assert found(code, RULES[:1]) == [(4, "SC201")]
    code = "x = torch.randn(2, 3)\ns = torch.sum(x, dim=1, keepdim=True)\nz = torch.cat([x, s], dim=1)\n"
    assert found(code) == []


def test_sc202_message_carries_the_shapes():
    text = message("a = torch.zeros(2, 3)\nb = torch.zeros(2)\nc = a + b\n", "SC202")
    assert "(2, 3)" in text and "(2,)" in text and "3" in text


def test_sc202_symbols():
    code = """
    from jaxtyping import Float
    def f(x: Float[torch.Tensor, "n d"], y: Float[torch.Tensor, "m d"], z: Float[torch.Tensor, "n 1"]):
        a = x + z
        return x - y
    """
    assert found(code) == [(6, "SC202")]


@pytest.mark.parametrize(
    "body, flagged",
    [
        ("c = torch.randn(3, 1) @ torch.randn(3, 1)", True),
        ("c = torch.randn(3, 1).T @ torch.randn(3, 1)", False),
        ("c = torch.mm(torch.randn(2, 3, 4), torch.randn(4, 5))", True),
        ("c = torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5))", False),
        ("c = torch.bmm(torch.randn(3, 4), torch.randn(4, 5))", True),
        ("c = torch.dot(torch.randn(2, 3), torch.randn(2, 3))", True),
        ("c = torch.dot(torch.randn(3), torch.randn(3))", False),
        ("c = torch.mv(torch.randn(2, 3), torch.randn(3))", False),
        ("c = torch.mv(torch.randn(2, 3), torch.randn(2))", True),
        ("c = torch.randn(2, 3).matmul(torch.randn(4, 5))", True),
        ("c = torch.randn(5) @ torch.randn(5, 2)", False),
    ],
)
def test_sc203(body, flagged):
    torch = pytest.importorskip("torch")
    assert bool(found(body + "\n", [RULES[2]])) == flagged
    try:
        exec(body, {"torch": torch})
        raised = False
    except RuntimeError:
        raised = True
    assert raised == flagged


def test_sc203_linear_in_features():
    code = """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(128, 10)
        def forward(self):
            return self.fc(torch.zeros(4, 64))
    """
    assert found(code) == [(9, "SC203")]


def test_sc204_uses_and_fixed_forms():
    assert found("x = torch.randn(4, 5)\nv = torch.max(x, dim=1)\ny = v + 1\n") == [(4, "SC204")]
    assert found("x = torch.randn(4, 5)\nv, i = torch.max(x, dim=1)\ny = v + 1\n") == []
    assert found("x = torch.randn(4, 5)\ny = torch.max(x, dim=1).values + 1\n") == []
    assert found("x = torch.randn(4, 5)\ny = x.kthvalue(2, dim=1).shape\n") == [(3, "SC204")]
    assert found("x = torch.randn(4, 5)\ny = x.mode(dim=1)[0] * 2\n") == []


def test_sc205_is_opt_in_and_respects_known_shapes():
    assert not get_rule("SC205").default_enabled
    assert found("x = torch.zeros(3, 4)\ny = x.squeeze()\n") == []
    assert found("x = torch.zeros(3, 1)\ny = x.squeeze()\n") == [(3, "SC205")]
    assert found("x = torch.zeros(3, 1)\ny = x.squeeze(1)\n") == []


def test_sc206_return_annotation():
    code = """
    from jaxtyping import Float
    from torch import Tensor
    def f(x: Float[Tensor, "b t c"]) -> Float[Tensor, "b c"]:
        if x.sum() > 0:
            return x.mean(1)
        return x.sum(2)
    """
    assert found(code) == [(8, "SC206")]


def test_seed_pitfalls_shapes():
    assert found("x = torch.randn(2, 3)\ny = x - torch.mean(x, dim=1)\n")[0] == (3, "SC201")
    assert found("x = torch.randn(2, 3)\ny = x - torch.mean(x, dim=1, keepdim=True)\n") == []
    assert (3, "SC202") in found("a = torch.zeros(2, 3)\nc = a + torch.zeros(2)\n")
    assert found("a = torch.zeros(2, 3)\nc = a + torch.zeros(3)\n") == []
    assert found("x = torch.randn(2, 3)\nvalues = torch.max(x, dim=1)\ny = values * 2\n") == [(4, "SC204")]
