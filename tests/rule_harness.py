"""The rules as the engine runs them, for tests: ``lint_text`` resolves positions, applies
``# noqa`` and turns a crashing hook into an SC999 diagnostic, so a test that goes through here
sees what a user sees."""

from __future__ import annotations

from shapecheck.engine.config import ENGINE_CODES
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules


def family_rules(*prefixes: str) -> list:
    """Every registered rule whose code starts with one of ``prefixes`` (opt-in rules too)."""
    return [rule for rule in all_rules() if rule.code.startswith(prefixes)]


def findings(source: str, rules: list) -> list[tuple[str, int, str]]:
    """``(code, line, message)`` of each diagnostic of ``rules`` on ``source``, in the engine's
    order; fails when the engine reports a syntax error or a crashed rule instead."""
    found = lint_text(source, rules)
    problems = [f"{d.code} {d.line}:{d.column} {d.message}" for d in found if d.code in ENGINE_CODES]
    assert problems == [], problems
    return [(d.code, d.line, d.message) for d in found]


def finding_lines(source: str, rules: list) -> list[tuple[str, int]]:
    """``(code, line)`` of each diagnostic of ``rules`` on ``source`` (see :func:`findings`)."""
    return [(code, line) for code, line, _message in findings(source, rules)]
