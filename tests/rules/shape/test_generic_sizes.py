"""SC202, SC203 and SC503 on generic sizes (issue 11, item 1): sizes read from one tensor are
independent, so a mismatch between two of them is flagged with the exception it has; sizes that
may be equal by construction (a config value, another tensor's size, an int) are not.

Every case is run with torch: ``f(x, 3)`` with ``x`` of shape (2, 5, 12) (independent sizes)
raises for the invalid ones, and with the sizes the condition names it does not; the valid ones
run clean."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code in ("SC202", "SC203", "SC503")]
HEAD = "import torch\n"

#: (code of ``f(x, n_head)``, code, line, condition, sizes of x that make it pass)
INVALID = [
    # nanoGPT's attention with the key not transposed: inner dims C // n_head and T
    ("def f(x, n_head):\n    B, T, C = x.size()\n    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)\n"
     "    return q @ q\n", "SC203", 4, "`C//n_head` equals `T`", (2, 4, 12)),
    ("def f(x, n_head):\n    b, n, d = x.size()\n    return torch.bmm(x.contiguous(), x)\n",
     "SC203", 3, "`d` equals `n`", (2, 5, 5)),
    ("def f(x, n_head):\n    B, T, C = x.size()\n    y = x.contiguous().view(B * T, C)\n    return y @ y\n",
     "SC203", 4, "`C` equals `B*T`", (2, 3, 6)),
    ("def f(x, n_head):\n    B, T, C = x.size()\n    x = x.contiguous()\n"
     "    return x.view(B, T, C, 1) @ x.view(T, B, 1, C)\n",
     "SC203", 4, "`B` equals `T` or one of them is 1", (3, 3, 4)),
    # a forgotten unsqueeze: (B, T) against (B,)
    ("def f(x, n_head):\n    B, T, C = x.size()\n    s = x.contiguous().sum(-1)\n    return s / torch.ones(B)\n",
     "SC202", 4, "`T` equals `B` or one of them is 1", (3, 3, 4)),
    ("def f(x, n_head):\n    B, T, C = x.size()\n    y = x.contiguous().view(B * T, C)\n"
     "    return y + torch.zeros(B, 1)\n",
     "SC202", 4, "`T` is 1 or `B` is 1", (2, 1, 4)),
    # a padding mask (B, T) against scores (B, T, T)
    ("def f(x, n_head):\n    B, T, C = x.size()\n    scores = x.contiguous() @ x.transpose(1, 2)\n"
     "    return scores.masked_fill(torch.ones(B, T).bool(), 0.0)\n", "SC202", 4,
     "`T` equals `B` or one of them is 1", (5, 5, 3)),
    ("def f(x, n_head):\n    B, T, C = x.size()\n    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)\n"
     "    return torch.einsum('bhtd,bhds->bhts', q, q)\n", "SC503", 4,
     "`C//n_head` equals `T` or one of them is 1", (2, 4, 12)),
]

VALID = [
    "def f(x, n_head):\n    B, T, C = x.size()\n    q = x.view(B, T, n_head, C // n_head).transpose(1, 2)\n"
    "    att = q @ q.transpose(-2, -1)\n    return (att @ q).sum() + torch.einsum('bhtd,bhsd->bhts', q, q).sum()\n",
    # a config-sized weight, an int-sized one, another tensor's sizes: equal by construction
    "def f(x, n_head, d_model=12):\n    B, T, C = x.size()\n    w = torch.randn(d_model, 3)\n"
    "    return x @ w + x @ torch.randn(12, 3)\n",
    "def f(x, n_head, y=None):\n    y = torch.randn(7, 12) if y is None else y.contiguous()\n    B, T, C = x.size()\n"
    "    D, E = y.size()\n    x = x.contiguous()\n    return (x @ y.t()).sum() + (x[0, 0] * torch.zeros(E)).sum()\n",
    # square: the same size on both sides
    "def f(x, n_head):\n    B, T, C = x.size()\n    att = torch.ones(T, T)\n    return att @ x.contiguous()\n",
    # broadcasting against keepdim results and an unsqueezed vector
    "def f(x, n_head):\n    B, T, C = x.size()\n    x = x.contiguous()\n"
    "    return x / x.sum(-1, keepdim=True) - x.amax(1, keepdim=True) + torch.ones(B)[:, None, None]\n",
    "def f(x, n_head):\n    B, T, C = x.size()\n    y = x.contiguous().view(B * T, C)\n"
    "    return y + torch.zeros(B * T, 1)\n",
]

def _run(code: str, sizes: tuple, n_head: int = 3) -> None:
    env: dict = {}
    exec(HEAD + code, env)
    env["f"](torch.randn(*sizes), n_head)


def _findings(code: str) -> list[tuple[str, int, object]]:
    return [(d.code, d.line, d.condition) for d in lint_text(HEAD + code, RULES)]


@pytest.mark.parametrize("code, rule, line, condition, passing", INVALID)
def test_invalid_is_flagged_with_its_condition_and_torch_agrees(code, rule, line, condition, passing):
    assert _findings(code) == [(rule, line + 1, condition)]
    with pytest.raises(RuntimeError):
        _run(code, (2, 5, 12))
    _run(code, passing)  # the exception the condition names


@pytest.mark.parametrize("code", VALID)
def test_valid_is_silent_and_runs(code):
    assert _findings(code) == []
    _run(code, (2, 3, 12))


def test_message_names_the_sizes_and_the_exception():
    [d] = lint_text(HEAD + INVALID[0][0], RULES)
    assert d.message == (
        "`q` (B, n_head, T, C//n_head) and `q` (B, n_head, T, C//n_head) cannot be multiplied for generic "
        "sizes: the inner dims are C//n_head and T; torch raises RuntimeError unless `C//n_head` equals `T`")
