"""SC202 on in-place ops whose broadcast result is larger than the tensor they write (issue 11,
item 5). Every case runs ``f`` with torch: the invalid ones raise, the valid ones do not."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULE = [r for r in all_rules() if r.code == "SC202"]
HEAD = "import torch\n"

#: (code of ``f(x)``, line of the finding, its condition); ``x`` is a (2, 3, 4, 5) tensor
INVALID = [
    ("def f(x):\n    a = torch.zeros(1, 4, 5)\n    a.sub_(torch.zeros(3, 1, 1))\n", 3, None),
    ("def f(x):\n    a = torch.zeros(4, 5)\n    a += torch.zeros(1, 4, 5)\n", 3, None),
    ("def f(x):\n    a = torch.zeros(3, 1)\n    a *= torch.zeros(1, 4)\n", 3, None),
    ("def f(x):\n    a = torch.ones(3, 1)\n    a.div_(torch.ones(4))\n", 3, None),
    ("def f(x):\n    a = torch.ones(5)\n    a.mul_(torch.ones(2, 5))\n", 3, None),
    ("def f(x):\n    a = torch.zeros(2, 3)\n    a -= torch.zeros(3, 3)\n", 3, None),  # not broadcastable at all
    ("def f(x):\n    b, c, h, w = x.shape\n    m = torch.zeros(1, 1, h, w)\n    m.add_(x)\n", 4,
     "`b` and `c` are 1"),
    ("def f(x):\n    b, c, h, w = x.shape\n    m = torch.zeros(b, 1, h, w)\n    m += x\n", 4, "`c` is 1"),
]
VALID = [
    "def f(x):\n    a = torch.zeros(3, 4)\n    a += torch.zeros(4)\n",
    "def f(x):\n    a = torch.zeros(3, 4)\n    a.add_(torch.zeros(3, 1))\n",
    "def f(x):\n    a = torch.zeros(3, 4)\n    a.mul_(2)\n    a /= 2\n",
    "def f(x):\n    a = torch.zeros(3, 4)\n    a[0] += torch.zeros(4)\n",
    "def f(x):\n    a = torch.zeros(1, 4, 5)\n    c = a - torch.zeros(3, 1, 1)\n",
    "def f(x):\n    b, c, h, w = x.shape\n    m = torch.zeros(b, c, h, w)\n    m.add_(x)\n",
    "def f(x):\n    y = x.clone()\n    y += x.mean(0, keepdim=True)\n",
    "def f(x):\n    n = 0\n    n += x.sum()\n",
]


def _lint(code: str) -> list[tuple[int, object]]:
    return [(d.line - 1, d.condition) for d in lint_text(HEAD + code, RULE) if d.code == "SC202"]


def _run(code: str) -> None:
    namespace: dict = {"torch": torch}
    exec(code, namespace)
    namespace["f"](torch.rand(2, 3, 4, 5))


@pytest.mark.parametrize("code, line, condition", INVALID)
def test_flagged(code, line, condition):
    assert _lint(code) == [(line, condition)]


@pytest.mark.parametrize("code, line, condition", INVALID)
def test_invalid_cases_raise(code, line, condition):
    with pytest.raises(RuntimeError):
        _run(code)


@pytest.mark.parametrize("code", VALID)
def test_valid_cases_are_silent_and_run(code):
    assert _lint(code) == []
    _run(code)


def test_the_message_says_why():
    (d,) = list(lint_text(HEAD + INVALID[0][0], RULE))
    assert "`a` (1, 4, 5) is written in place by .sub_()" in d.message
    assert "its size 1 at dim 0 meets 3" in d.message
