"""scripts/new_rule.py: the scaffold creates a rule that registers and fails the example tests
until it is written, and refuses codes and names that exist."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _load_scaffold():
    spec = importlib.util.spec_from_file_location("new_rule", REPO / "scripts" / "new_rule.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


new_rule = _load_scaffold()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the package and the examples to scaffold into."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "shapecheck", tmp_path / "shapecheck", ignore=ignore)
    shutil.copytree(REPO / "examples", tmp_path / "examples", ignore=ignore)
    shutil.copy(REPO / "README.md", tmp_path / "README.md")
    return tmp_path


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def test_scaffold_creates_three_files_and_registers_the_rule(tree, capsys):
    assert new_rule.main(["SC607", "some-rule-name", "--root", str(tree)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:4] == [
        "created shapecheck/rules/pitfall/sc607_some_rule_name.py",
        "created examples/sc607_some_rule_name_bad.py",
        "created examples/sc607_some_rule_name_good.py",
        "edited shapecheck/rules/__init__.py",
    ]
    catalog = (tree / "shapecheck" / "rules" / "__init__.py").read_text(encoding="utf-8")
    assert "    sc605_inverse_then_matmul,\n    sc607_some_rule_name,\n)\n" in catalog
    probe = (
        "from shapecheck.engine.runner import lint_text\n"
        "from shapecheck.rules.catalog import get_rule\n"
        "rule = get_rule('SC607')\n"
        "assert rule.__name__ == 'SomeRuleName' and rule.name == 'some-rule-name', rule\n"
        "assert rule.valid_examples() == [] and rule.invalid_examples() == []\n"
        "assert 'TODO' in rule.summary and 'TODO' in rule.doc\n"
        "assert lint_text('import torch\\nx = torch.zeros(2)\\n', [rule]) == []\n"
        "print(rule.__module__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tree, capture_output=True, text=True,
                          env={"PYTHONPATH": str(tree), "PATH": ""}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "shapecheck.rules.pitfall.sc607_some_rule_name"


@pytest.mark.parametrize("code, name, message", [
    ("SC101", "brand-new", "error: SC101 exists already (shapecheck/rules/layout/sc101_view_on_non_contiguous.py)"),
    ("SC699", "view-size-mismatch",
     "error: the name view-size-mismatch exists already (shapecheck/rules/layout/sc103_view_size_mismatch.py)"),
    ("SC6", "brand-new", "error: 'SC6' is not a rule code: SC followed by three digits, such as SC607"),
    ("SC699", "Brand_New",
     "error: 'Brand_New' is not a rule name: lower-case words joined by '-', such as view-size-mismatch"),
    ("SC701", "brand-new", "error: no rule family for SC701: the families are SC1xx (layout), SC2xx (shape), "
                           "SC3xx (autograd), SC4xx (device), SC5xx (einsum), SC6xx (pitfall)"),
])
def test_scaffold_refuses_with_one_line_and_changes_nothing(tree, capsys, code, name, message):
    before = _snapshot(tree)
    assert new_rule.main([code, name, "--root", str(tree)]) == 2
    captured = capsys.readouterr()
    assert captured.err == message + "\n" and captured.out == ""
    assert _snapshot(tree) == before


def test_a_second_scaffold_of_the_same_rule_is_refused(tree, capsys):
    assert new_rule.main(["SC607", "some-rule-name", "--root", str(tree)]) == 0
    capsys.readouterr()
    assert new_rule.main(["SC608", "some-rule-name", "--root", str(tree)]) == 2
    assert capsys.readouterr().err.startswith("error: the name some-rule-name exists already")


def test_register_line_starts_a_family_block_in_order():
    catalog = (
        "from shapecheck.rules.autograd import (\n    sc301_a,\n)\n"
        "from shapecheck.rules.layout import (\n    sc101_b,\n)\n"
    )
    assert new_rule.register_line(catalog, "device", "sc401_c") == (
        "from shapecheck.rules.autograd import (\n    sc301_a,\n)\n"
        "from shapecheck.rules.device import (\n    sc401_c,\n)\n"
        "from shapecheck.rules.layout import (\n    sc101_b,\n)\n"
    )
    assert new_rule.register_line(catalog, "layout", "sc100_d") == (
        "from shapecheck.rules.autograd import (\n    sc301_a,\n)\n"
        "from shapecheck.rules.layout import (\n    sc100_d,\n    sc101_b,\n)\n"
    )


def test_the_scaffolded_rule_fails_the_example_tests_until_written(tree):
    assert new_rule.main(["SC607", "some-rule-name", "--root", str(tree)]) == 0
    shutil.copytree(REPO / "tests", tree / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/rules/test_rule_examples.py",
         "-k", "SC607"],
        cwd=tree, capture_output=True, text=True, env={"PYTHONPATH": str(tree), "PATH": ""}, timeout=300,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed" in proc.stdout and "fill in what scripts/new_rule.py left as TODO" in proc.stdout


def test_the_readme_table_of_the_scaffolded_tree_regenerates(tree):
    assert new_rule.main(["SC607", "some-rule-name", "--root", str(tree)]) == 0
    proc = subprocess.run([sys.executable, "-m", "shapecheck.frontends.docs", "--write-readme"], cwd=tree,
                          capture_output=True, text=True, env={"PYTHONPATH": str(tree), "PATH": ""}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"updated the rule table in {tree / 'README.md'}\n"
    readme = (tree / "README.md").read_text(encoding="utf-8")
    row = '| <a id="sc607"></a>SC607 | `some-rule-name` | error |  | TODO: one line that says what the rule flags |\n'
    assert row in readme
