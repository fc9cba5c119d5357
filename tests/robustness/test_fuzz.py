"""A bounded fuzz run (issue 9, "How it is measured"): programs hypothesmith generates, random
chains of torch ops with odd arguments, and mutants of real files, through the real engine with
every rule selected (opt-in ones too).

Every case: no SC999 and no exception out of ``lint_text``/``fix_text``; the fixed text compiles
when the input did, a second fix changes nothing, and a file without a fixable finding is left
as it was. Then the real command over a folder of mutants: ``--jobs 2`` gives the output of
``--jobs 1``, no traceback, no SC999, and ``--fix`` writes exactly the engine's fixes, twice
over, without touching the files beside the folder (the campaign also compares runs with the
result cache). The generators are those of the by-hand
campaign, ``benchmarks/fuzz_campaign.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

REPO = Path(__file__).resolve().parents[2]


def _load_campaign():
    spec = importlib.util.spec_from_file_location("fuzz_campaign", REPO / "benchmarks" / "fuzz_campaign.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


campaign = _load_campaign()
#: mutants checked in-process, and how many of them also go through the real command
MUTANTS = 240
TREE_CASES = 100


def _assert_clean(text: str) -> str:
    problems, fixed = campaign.check_case(text)
    assert problems == [], f"{problems}\n--- case ---\n{text}"
    return fixed


@settings(max_examples=50, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_grammar())
def test_grammar_programs_lint_and_fix_cleanly(source):
    _assert_clean(source)


@settings(max_examples=2, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(hypothesmith.from_node())
def test_libcst_node_programs_lint_and_fix_cleanly(source):
    _assert_clean(source)


@pytest.fixture(scope="module")
def mutant_cases():
    """``name -> (text, fixed text)`` for the seeded mutants, each checked in-process."""
    cases = {}
    for name, text in campaign.mutants(MUTANTS, seed=9):
        cases[name] = (text, _assert_clean(text))
    return cases


def test_mutants_of_real_files_lint_and_fix_cleanly(mutant_cases):
    assert len(mutant_cases) == MUTANTS
    compiled = sum(campaign.compiles(text) for text, _fixed in mutant_cases.values())
    changed = sum(fixed != text for text, fixed in mutant_cases.values())
    # most mutants still compile, so the rules (not only the parser) see them; some get fixed
    assert compiled > MUTANTS // 2 and changed > 0


def test_mutants_through_the_real_command(mutant_cases, tmp_path):
    chosen = dict(sorted(mutant_cases.items())[:TREE_CASES])
    problems = campaign.check_tree(chosen, str(tmp_path), jobs=2, timeout=300, with_cache=False)
    assert problems == []


def test_random_torch_op_chains_lint_and_fix_cleanly():
    for _name, text in campaign.op_chains(80, seed=9):
        _assert_clean(text)


def test_mutation_is_reproducible_and_varied():
    first = list(campaign.mutants(30, seed=4))
    assert first == list(campaign.mutants(30, seed=4))
    assert len({text for _name, text in first}) == 30
    sources = {text for _name, text in campaign.seed_sources()}
    assert not sources & {text for _name, text in first}


def test_the_checks_catch_what_they_look_for(monkeypatch):
    from shapecheck.rules.layout.sc103_view_size_mismatch import ViewSizeMismatch

    def boom(self, node, ctx):
        raise ValueError("boom")

    monkeypatch.setattr(ViewSizeMismatch, "_check_factory", boom)
    problems, _fixed = campaign.check_case("import torch\nx = torch.zeros(2)\n")
    assert [c for c, _what in problems] == ["crash"] and "boom" in problems[0][1]
