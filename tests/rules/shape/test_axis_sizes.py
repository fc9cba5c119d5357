"""SC202 on a size of a tensor that lands on another of its axes (rules/shape/axis_sizes.py):
a gate sized by ``x.shape[0]`` expanded to ``x`` without its trailing 1s (timm's ECA), a
positional table cut on its size-1 dim (pytorch/examples' word language model), and a table cut
on a dim that lines up with another axis of ``x``. Each bug is run with torch 2.13: it raises;
each fixed twin runs."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code == "SC202"]
HEAD = "import torch\nimport torch.nn as nn\n"

GATE = ("def gate(x):\n    y = x.mean((2, 3)).view(x.shape[0], 1, -1)\n"
        "    y = torch.sigmoid(y).view({view})\n    return x * y.expand_as(x)\n")
TABLE = ("class P(nn.Module):\n    def __init__(self, d, max_len=50):\n        super().__init__()\n"
         "        self.register_buffer('pe', torch.zeros(max_len, d).unsqueeze(1))\n"
         "    def forward(self, x):\n        return x + self.pe[{cut}]\n")
RANKED = ("def add(x, d):\n    b, s, c = x.shape\n    x = x.contiguous()\n    pe = torch.zeros(50, {table})\n"
          "    return x + pe[{cut}]\n")

CASES = [
    (GATE, {"view": "x.shape[0], -1"}, {"view": "x.shape[0], -1, 1, 1"}, 6,
     "`x.shape[0]` is 1 or equals the size of `x` it meets",
     lambda code: code["gate"](torch.randn(2, 3, 4, 5))),
    (TABLE, {"cut": ":, :x.size(0)"}, {"cut": ":x.size(0), :"}, 8, "`max_len` equals `x.size(0)`",
     lambda code: code["P"](8)(torch.randn(7, 2, 8))),
]


def _run(code: str) -> dict:
    scope: dict = {}
    exec(compile(HEAD + code, "<case>", "exec"), scope)
    return scope


@pytest.mark.parametrize("template, bug, fix, line, condition, make", CASES)
def test_bug_flagged_with_its_exception(template, bug, fix, line, condition, make):
    found = [(d.code, d.line, d.condition) for d in lint_text(HEAD + template.format(**bug), RULES)]
    assert found == [("SC202", line, condition)]


@pytest.mark.parametrize("template, bug, fix, line, condition, make", CASES)
def test_fixed_twin_silent(template, bug, fix, line, condition, make):
    assert [d.message for d in lint_text(HEAD + template.format(**fix), RULES)] == []


@pytest.mark.parametrize("template, bug, fix, line, condition, make", CASES)
def test_torch_raises_on_the_bug_and_runs_the_fix(template, bug, fix, line, condition, make):
    with pytest.raises(RuntimeError):
        make(_run(template.format(**bug)))
    make(_run(template.format(**fix)))


def test_messages_name_the_axes():
    gate, table = (lint_text(HEAD + t.format(**b), RULES)[0].message for t, b, *_ in CASES)
    assert "its dim 0 is `x.shape[0]` (dim 0 of `x`)" in gate and "meets dim 2 or a later one of `x`" in gate
    assert "cuts dim 1 of `self.pe` (max_len, 1, d) to `x.size(0)` (dim 0 of `x`)" in table
    assert "keeps all `max_len` rows on dim 0" in table


def test_table_cut_on_the_axis_that_meets_another_of_x():
    found = lint_text(HEAD + RANKED.format(table="d", cut=":, :x.size(1)"), RULES)
    assert [(d.code, d.line) for d in found] == [("SC202", 7)]
    assert "meets dim 2 of `x`" in found[0].message
    assert lint_text(HEAD + RANKED.format(table="d", cut=":x.size(1)"), RULES) == []


def test_a_rebound_tensor_is_not_matched_against_its_old_sizes():
    code = ("def f(x, g):\n    y = g(x.mean((2, 3))).view(x.shape[0], -1)\n    x = x.flatten(2).mean(-1)\n"
            "    return x * y.expand_as(x)\n")
    assert lint_text(HEAD + code, RULES) == []
