"""SC202 on rows of two tensors lined up by position in a function that pairs them all-against-all
(rules/shape/pairwise_axes.py): DETR's pairwise box IoU with the ``None`` forgotten on one of
its two corners. The bug raises with torch 2.13 for boxes of different counts; the fix runs."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code == "SC202"]
HEAD = "import torch\n"

IOU = ("def box_iou(boxes1, boxes2):\n"
       "    lt = torch.max(boxes1[:, {lt}:2], boxes2[:, :2])\n"
       "    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])\n"
       "    wh = (rb - lt).clamp(min=0)\n"
       "    return wh[:, :, 0] * wh[:, :, 1]\n")
OPERATOR = ("def dist(a, b):\n    d = a[:, {new}:] - b[:, :]\n    s = a.unsqueeze(1) + b\n    return d * s\n")


def _run(code: str, *args):
    scope: dict = {}
    exec(compile(HEAD + code, "<case>", "exec"), scope)
    fn = [v for k, v in scope.items() if callable(v) and k in ("box_iou", "dist")][0]
    return fn(*args)


def test_pairwise_iou_without_the_new_axis_is_flagged():
    found = lint_text(HEAD + IOU.format(lt=""), RULES)
    assert [(d.code, d.line, d.condition) for d in found] == [
        ("SC202", 3, "`boxes1` and `boxes2` have as many rows")]
    assert "lines up the rows of `boxes1` and `boxes2` on one axis" in found[0].message
    assert "`(rb - lt)` combines the two results" in found[0].message
    with pytest.raises(RuntimeError):
        _run(IOU.format(lt=""), torch.rand(3, 4), torch.rand(5, 4))


def test_the_fixed_iou_is_silent_and_runs():
    assert lint_text(HEAD + IOU.format(lt="None, "), RULES) == []
    assert _run(IOU.format(lt="None, "), torch.rand(3, 4), torch.rand(5, 4)).shape == (3, 5)


def test_operators_and_unsqueeze():
    assert [(d.code, d.line) for d in lint_text(HEAD + OPERATOR.format(new=""), RULES)] == [("SC202", 3)]
    assert lint_text(HEAD + OPERATOR.format(new="None, "), RULES) == []


@pytest.mark.parametrize("code", [
    # the two results are never combined: an elementwise op of equal-length sets is fine
    "def f(a, b):\n    d = a[:, :2] - b[:, :2]\n    s = a[:, None] - b\n    return d, s\n",
    # one tensor against itself
    "def f(a, b):\n    d = torch.max(a[:, :2], a[:, 2:])\n    s = torch.min(a[:, None, 2:], b[:, 2:])\n"
    "    return s - d\n",
    # a name rebound in between
    "def f(a, b):\n    d = a[:, :2] - b[:, :2]\n    a = a.t()\n    s = a[:, None] - b\n    return s - d\n",
])
def test_silent(code):
    assert lint_text(HEAD + code, RULES) == []
