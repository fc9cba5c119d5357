"""Suppression comments in their three spellings, with prefix matching."""

from __future__ import annotations

import pytest

from shapecheck.engine.runner import lint_text
from shapecheck.engine.noqa import ALL, is_suppressed, parse_comment, suppressions
from shapecheck.rules.catalog import get_rule

SC101 = get_rule("SC101")
LINE = "import torch\nx = torch.randn(3, 4)\ny = x.t().view(12){comment}\n"


@pytest.mark.parametrize(
    "comment",
    [
        "  # noqa",
        "  # noqa: SC101",
        "  # noqa:SC101",
        "  # NOQA: SC1",
        "  # noqa: E501, SC10",
        "  # noqa: SC2 SC101",
        "  # shapecheck: ignore[SC101]",
        "  # shapecheck: ignore[SC1, SC2]",
        "  # shapecheck: ignore",
        "  # explained here  # noqa: SC101",
    ],
)
def test_suppressed(comment):
    assert lint_text(LINE.format(comment=comment), [SC101]) == []


@pytest.mark.parametrize(
    "comment",
    [
        "",
        "  # noqa: SC2",
        "  # noqa: E501",
        "  # noqa: SC102",
        "  # shapecheck: ignore[SC102]",
        "  # see the noqa docs",
    ],
)
def test_not_suppressed(comment):
    assert [d.code for d in lint_text(LINE.format(comment=comment), [SC101])] == ["SC101"]


def test_noqa_inside_a_string_does_not_count():
    text = 'import torch\nx = torch.randn(3, 4)\ny = (x.t().view(12), "# noqa")\n'
    assert [d.code for d in lint_text(text, [SC101])] == ["SC101"]


def test_noqa_applies_to_its_own_line_only():
    text = "import torch  # noqa\nx = torch.randn(3, 4)\ny = x.t().view(12)\n"
    assert [d.line for d in lint_text(text, [SC101])] == [3]


def test_parse_comment_and_table():
    assert parse_comment("# noqa") == ALL
    assert parse_comment("# noqa: sc101,SC2") == frozenset({"SC101", "SC2"})
    assert parse_comment("# shapecheck: ignore[SC101]") == frozenset({"SC101"})
    assert parse_comment("# a plain comment") is None
    table = suppressions("a = 1  # noqa: SC1\nb = 2  # shapecheck: ignore[SC201]\n")
    assert is_suppressed(table, 1, "SC101") and not is_suppressed(table, 1, "SC201")
    assert is_suppressed(table, 2, "SC201") and not is_suppressed(table, 2, "SC101")
    assert not is_suppressed(table, 3, "SC101")
