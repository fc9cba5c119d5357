"""Tests generated from every registered rule's own examples and documentation.

For each rule, selected alone (so opt-in rules run too): a valid example yields no diagnostic of
that rule; an invalid example yields exactly one, on the line marked ``# <--``; a ``fixed`` form
is exactly what the engine's fix produces, and fixing it again changes nothing. A ``# noqa`` on
the marked line silences the finding.
"""

from __future__ import annotations

import pytest

from shapecheck.engine.config import ENGINE_CODES
from shapecheck.engine.runner import fix_text, lint_text
from shapecheck.rules.base import EXPECT_MARKER
from shapecheck.rules.catalog import all_rules

RULES = all_rules()
SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Use instead")


def _cases(kind: str):
    for rule in RULES:
        examples = rule.valid_examples() if kind == "valid" else rule.invalid_examples()
        for index, example in enumerate(examples):
            yield pytest.param(rule, example, id=f"{rule.code}-{kind}-{index}")


def _fixed_cases():
    for rule in RULES:
        for index, example in enumerate(rule.invalid_examples()):
            if example.fixed is not None:
                yield pytest.param(rule, example, id=f"{rule.code}-fixed-{index}")


def _engine_problems(found):
    return [f"{d.code} {d.line}:{d.column} {d.message}" for d in found if d.code in ENGINE_CODES]


@pytest.mark.parametrize("rule, example", list(_cases("valid")))
def test_valid_example_is_not_flagged(rule, example):
    found = lint_text(example.code, [rule])
    assert _engine_problems(found) == []
    assert [(d.line, d.message) for d in found if d.code == rule.code] == []


@pytest.mark.parametrize("rule, example", list(_cases("invalid")))
def test_invalid_example_is_flagged_once_on_the_marked_line(rule, example):
    assert example.expected_line is not None, f"invalid example without a `{EXPECT_MARKER}` marker"
    assert example.code.count(EXPECT_MARKER) == 1, "mark exactly one line"
    found = lint_text(example.code, [rule])
    assert _engine_problems(found) == []
    ours = [(d.line, d.message) for d in found if d.code == rule.code]
    assert len(ours) == 1, ours
    assert ours[0][0] == example.expected_line
    assert "\n" not in ours[0][1] and ours[0][1].strip()


@pytest.mark.parametrize("rule, example", list(_cases("invalid")))
def test_noqa_on_the_marked_line_silences_it(rule, example):
    lines = example.code.splitlines(keepends=True)
    index = example.expected_line - 1
    body = lines[index].rstrip("\r\n")
    lines[index] = f"{body}  # noqa: {rule.code}\n"
    found = lint_text("".join(lines), [rule])
    assert [d for d in found if d.code == rule.code] == []


@pytest.mark.parametrize("rule, example", list(_fixed_cases()))
def test_fix_produces_the_fixed_form_once(rule, example):
    assert rule.fixable, "a rule with `fixed` examples must declare fixable = True"
    fixed, applied = fix_text(example.code, [rule])
    assert applied >= 1
    assert fixed == example.fixed
    again, applied_again = fix_text(fixed, [rule])
    assert (again, applied_again) == (fixed, 0)


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_declares_a_complete_page(rule):
    assert rule.code.startswith("SC") and len(rule.code) == 5 and rule.code[2:].isdigit()
    assert rule.name == rule.name.lower() and " " not in rule.name and "_" not in rule.name
    assert rule.severity in ("error", "warning")
    assert rule.summary.strip() and "\n" not in rule.summary
    assert "TODO" not in rule.summary + rule.doc, "fill in what scripts/new_rule.py left as TODO"
    positions = [rule.doc.find(section) for section in SECTIONS]
    assert all(p >= 0 for p in positions), f"doc page needs the sections {SECTIONS}"
    assert positions == sorted(positions), "doc sections out of order"
    assert rule.valid_examples(), "at least one valid example"
    assert rule.invalid_examples(), "at least one invalid example"
