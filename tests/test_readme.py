"""README.md stays true: the rule table matches the registry, and its commands match CI."""

from __future__ import annotations

import re

from conftest import REPO

from shapecheck.frontends.docs import TABLE_END, TABLE_START, replace_table, rule_table
from shapecheck.frontends.engine_codes import documented_codes

README = (REPO / "README.md").read_text(encoding="utf-8")
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def _commands(ci_text: str) -> list[str]:
    lines = [line.strip() for line in ci_text.splitlines()]
    return [line for line in lines if line and not line.startswith(("#", "set ", "cd "))]


def test_rule_table_matches_the_registry():
    assert TABLE_START in README and TABLE_END in README
    assert replace_table(README, rule_table(documented_codes())) == README, (
        "README rule table is stale: run `python -m shapecheck.frontends.docs --write-readme`"
    )


def test_readme_test_command_is_what_ci_runs():
    blocks = re.findall(r"```console\n(.*?)```", README, flags=re.S)
    test_command = next(b.strip() for b in blocks if "pytest" in b)
    assert test_command.split(" && ") == _commands(CI)


def test_ci_script_is_strict_bash():
    assert CI.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in CI
    assert _commands(CI)[0] == "pip install torch==2.13.0"


def test_readme_names_the_newcomer_lint_command_and_runtime_section():
    assert "pip install . && shapecheck lint examples/" in README
    assert "\n## Runtime\n" in README
    assert "[tool.shapecheck]" in README and "- id: shapecheck" in README


def test_pre_commit_hook_declaration():
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "- id: shapecheck\n" in hooks
    assert "entry: shapecheck lint\n" in hooks
    assert "language: python\n" in hooks and "types: [python]" in hooks
