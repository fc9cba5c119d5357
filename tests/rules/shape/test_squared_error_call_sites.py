"""SC202's hand-written squared error inside a helper, with the facts of its call sites: the
column is a mistake when the callers pass a column they did not make on purpose (a nested literal,
a name bound to one), silent when they make it (``[:, None]``, ``unsqueeze``: pairwise on
purpose). Torch 2.13 broadcasts the bug to (3, 3) without a word."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code == "SC202"]
MSE = "import torch\n\ndef mse(out, labels):\n    return ((out - labels) ** 2).mean()\n\n"
COLUMN = "torch.tensor([[1.0], [2.0], [3.0]])"
ON_PURPOSE = "torch.tensor([1.0, 2.0, 3.0])[:, None]"
TARGET = "torch.tensor([1.0, 2.0, 3.0])"
DIRECT = "loss = mse({col}, " + TARGET + ")\n"
NAMED = "preds = {col}\nlabels = " + TARGET + "\nloss = mse(preds, labels)\n"
IN_MAIN = "def main():\n    preds = {col}\n    labels = " + TARGET + "\n    return mse(preds, labels)\n"


@pytest.mark.parametrize("caller", [DIRECT, NAMED, IN_MAIN])
def test_a_column_the_caller_did_not_make_is_flagged(caller):
    found = lint_text(MSE + caller.format(col=COLUMN), RULES)
    assert [(d.code, d.line) for d in found] == [("SC202", 4)]
    assert "`out` (3, 1) and `labels` (3,)" in found[0].message


@pytest.mark.parametrize("caller", [DIRECT, NAMED, IN_MAIN])
def test_a_column_made_on_purpose_is_silent(caller):
    assert lint_text(MSE + caller.format(col=ON_PURPOSE), RULES) == []


def test_torch_broadcasts_the_bug_silently():
    out, labels = torch.tensor([[1.0], [2.0], [3.0]]), torch.tensor([1.0, 2.0, 3.0])
    assert ((out - labels) ** 2).shape == (3, 3)
