"""The whole rule catalog: every rule, found by code or name.

Importing this module imports :mod:`shapecheck.rules`, which registers every rule module.
"""

from __future__ import annotations

from typing import Optional

import shapecheck.rules  # noqa: F401  (registers the rule modules)
from shapecheck.rules.base import Rule, registered


def all_rules() -> list[type[Rule]]:
    """Every registered rule, sorted by code."""
    rules = registered()
    return [rules[code] for code in sorted(rules)]


def get_rule(code_or_name: str) -> Optional[type[Rule]]:
    """The rule with this code (``SC101``) or name (``view-on-non-contiguous``), or ``None``."""
    key = code_or_name.strip()
    for rule in all_rules():
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    return None
