"""examples/: every rule has a bad/good pair; the bad file flags the rule, the good one nothing.

The good files are also run with torch (one child process for all of them): they are meant to
be runnable programs, and a "fixed" example that crashes would teach the wrong fix.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO

from shapecheck.engine.config import Selectors
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

EXAMPLES = REPO / "examples"
RULES = all_rules()


def pair(rule):
    """The bad and good example paths of ``rule``, named as docs/internals.md says."""
    stem = f"{rule.code.lower()}_{rule.name.replace('-', '_')}"
    return EXAMPLES / f"{stem}_bad.py", EXAMPLES / f"{stem}_good.py"


def _default_plus(rule):
    from shapecheck.engine.config import selected_rules

    return selected_rules([Selectors(extend_select=[rule.code])])


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_bad_example_flags_its_rule(rule):
    bad, _ = pair(rule)
    assert bad.is_file(), f"missing {bad.relative_to(REPO)}"
    found = lint_text(bad.read_text(encoding="utf-8"), _default_plus(rule), str(bad))
    assert rule.code in {d.code for d in found}


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_good_example_flags_nothing(rule):
    _, good = pair(rule)
    assert good.is_file(), f"missing {good.relative_to(REPO)}"
    found = lint_text(good.read_text(encoding="utf-8"), _default_plus(rule), str(good))
    assert [f"{d.line}:{d.column} {d.code} {d.message}" for d in found] == []


def test_every_example_file_belongs_to_a_rule():
    known = {p.name for rule in RULES for p in pair(rule)}
    extra = sorted(p.name for p in EXAMPLES.glob("sc*.py") if p.name not in known)
    assert extra == [], "example files whose rule is not registered"


_RUNNER = """
import runpy, sys, traceback
failed = []
for path in sys.argv[1:]:
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            failed.append(f"{path}: exit {exc.code}")
    except BaseException:
        failed.append(path + ":\\n" + traceback.format_exc(limit=3))
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_good_examples_run_with_torch():
    pytest.importorskip("torch")
    goods = [str(pair(rule)[1]) for rule in RULES if pair(rule)[1].is_file()]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, *goods], capture_output=True, text=True, timeout=600, env=env, cwd=REPO
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
