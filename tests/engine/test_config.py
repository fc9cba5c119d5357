"""``[tool.shapecheck]``: keys, flag overrides, errors, per-file ignores, exclude, opt-in rules."""

from __future__ import annotations

import json

import pytest

from conftest import BAD, GOOD, write_tree

from shapecheck.engine.config import ConfigError, Selectors, build_settings, is_enabled

def _codes(result):
    return [(r["path"], r["code"]) for r in json.loads(result.out)]


def _project(tmp_path, table: str, files=None):
    write_tree(tmp_path, {"pyproject.toml": f"[project]\nname = 'demo'\n\n[tool.shapecheck]\n{table}\n"})
    write_tree(tmp_path, files or {"src/a.py": BAD, "src/b.py": GOOD})
    return tmp_path


def test_ignore_in_config_and_select_flag_overrides_it(cli, tmp_path):
    root = _project(tmp_path, 'ignore = ["SC101"]')
    assert cli(["lint", "--format", "json", "src"], root).out == "[]\n"
    assert _codes(cli(["lint", "--format", "json", "--select", "SC1", "src"], root)) == [("src/a.py", "SC101")]
    assert _codes(cli(["lint", "--format", "json", "--extend-select", "SC101", "src"], root)) == [("src/a.py", "SC101")]


def test_select_in_config_and_ignore_flag(cli, tmp_path):
    root = _project(tmp_path, 'select = ["view-on-non-contiguous"]')
    assert _codes(cli(["lint", "--format", "json", "src"], root)) == [("src/a.py", "SC101")]
    assert cli(["lint", "--format", "json", "--ignore", "SC1", "src"], root).out == "[]\n"


def test_config_is_found_above_the_first_path(cli, tmp_path):
    root = _project(tmp_path, 'ignore = ["SC101"]', {"deep/er/a.py": BAD})
    assert cli(["lint", "deep/er/a.py"], root).rc == 0
    assert cli(["lint", "er/a.py"], root / "deep").rc == 0


def test_per_file_ignores(cli, tmp_path):
    table = '[tool.shapecheck.per-file-ignores]\n"tests/*" = ["SC1"]\n"legacy.py" = ["view-on-non-contiguous"]\n'
    files = {"tests/t.py": BAD, "legacy.py": BAD, "src/a.py": BAD}
    root = _project(tmp_path, table, files)
    assert _codes(cli(["lint", "--format", "json", "."], root)) == [("src/a.py", "SC101")]


def test_exclude(cli, tmp_path):
    root = _project(tmp_path, 'exclude = ["generated", "src/skip_*.py"]',
                    {"generated/a.py": BAD, "src/skip_me.py": BAD, "src/keep.py": BAD})
    assert _codes(cli(["lint", "--format", "json", "."], root)) == [("src/keep.py", "SC101")]


def test_explicit_config_file(cli, tmp_path):
    write_tree(tmp_path, {"lint.toml": 'ignore = ["SC101"]\n', "a.py": BAD})
    assert cli(["lint", "--config", "lint.toml", "a.py"], tmp_path).rc == 0
    assert cli(["lint", "a.py"], tmp_path).rc == 1


@pytest.mark.parametrize(
    "table, words",
    [
        ('selct = ["SC1"]', "unknown key `selct`"),
        ('select = ["SC7"]', "unknown rule code `SC7`"),
        ('ignore = ["not-a-rule"]', "unknown rule code or name `not-a-rule`"),
        ("select = 3", "`select` must be a list of strings"),
        ('per-file-ignores = ["x"]', "`per-file-ignores` must be a table"),
        ('[tool.shapecheck.per-file-ignores]\n"a.py" = ["SC77"]', "unknown rule code `SC77`"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_config_is_a_clear_error(cli, tmp_path, table, words):
    root = _project(tmp_path, table)
    result = cli(["lint", "src"], root)
    assert result.rc == 2
    assert result.out == ""
    assert words in result.err and result.err.count("\n") == 1


def test_pyproject_without_table_is_an_error_only_when_named(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    with pytest.raises(ConfigError, match="no \\[tool.shapecheck\\] table"):
        build_settings(str(tmp_path), str(tmp_path / "pyproject.toml"), Selectors())
    settings = build_settings(str(tmp_path), None, Selectors())
    assert settings.config_path is None and settings.root == str(tmp_path)


class TestSelection:
    """``is_enabled``: layers, specificity, and opt-in rules."""

    def test_default_runs_default_rules_only(self):
        assert is_enabled([], "SC101", "a", True)
        assert not is_enabled([], "SC605", "b", False)

    def test_opt_in_needs_an_explicit_selector(self):
        assert not is_enabled([Selectors(select=["ALL"])], "SC605", "b", False)
        assert is_enabled([Selectors(extend_select=["SC605"])], "SC605", "b", False)
        assert is_enabled([Selectors(extend_select=["b"])], "SC605", "b", False)
        assert is_enabled([Selectors(select=["SC6"])], "SC605", "b", False)

    def test_specific_wins_and_ignore_wins_ties(self):
        layer = Selectors(select=["SC1"], ignore=["SC101"])
        assert not is_enabled([layer], "SC101", "a", True)
        assert is_enabled([layer], "SC102", "c", True)
        layer = Selectors(select=["SC101"], ignore=["SC1"])
        assert is_enabled([layer], "SC101", "a", True)
        assert not is_enabled([Selectors(select=["SC1"], ignore=["SC1"])], "SC101", "a", True)

    def test_later_layer_overrides(self):
        config = Selectors(ignore=["SC1"])
        assert not is_enabled([config, Selectors()], "SC101", "a", True)
        assert is_enabled([config, Selectors(extend_select=["SC101"])], "SC101", "a", True)
        assert is_enabled([config, Selectors(select=["SC"])], "SC101", "a", True)
        assert not is_enabled([Selectors(select=["SC101"]), Selectors(select=["SC2"])], "SC101", "a", True)


def test_pyproject_that_only_mentions_shapecheck_is_not_a_config(cli, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n# see tool.shapecheck docs\n", "a.py": BAD})
    result = cli(["lint", "a.py"], tmp_path)
    assert result.rc == 1 and "SC101" in result.out
