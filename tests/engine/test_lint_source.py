"""The public API that lints one text under a project's settings (runner.lint_source): what the
command line reports for the same file, with the safe fix of each finding as a text edit."""

from __future__ import annotations

import json

from conftest import BAD, run_cli_subprocess, write_tree

from shapecheck.engine.config import Selectors, build_settings
from shapecheck.engine.parsing import parse_source
from shapecheck.engine.runner import FixEdit, keeps, lint_source

NOISY = BAD + "z = torch.randn(2, 3)\nw = z.t().view(6)  # noqa: SC101\nv = z.t().view(6)\n"


def _settings(path):
    return build_settings(str(path), None, Selectors(), linted_paths=[str(path)])


def test_the_same_diagnostics_as_the_command_line_with_their_fixes(tmp_path, monkeypatch):
    write_tree(tmp_path, {"m.py": NOISY, "pyproject.toml": "[tool.shapecheck]\n"})
    monkeypatch.chdir(tmp_path)
    found = lint_source("m.py", NOISY, _settings("m.py"))
    rows = json.loads(run_cli_subprocess(["lint", "--no-cache", "--output-format", "json", "m.py"], tmp_path).out)
    assert [(d.code, d.line, d.column, d.end_line, d.end_column, d.message) for d in found.diagnostics] == [
        (r["code"], r["line"], r["column"], r["end_line"], r["end_column"], r["message"]) for r in rows
    ]
    assert [(d.code, d.line) for d in found.diagnostics] == [("SC101", 3), ("SC101", 6)]  # line 5 has a noqa
    assert found.fixes == {
        (3, 5, "SC101"): FixEdit(3, 5, 3, 15, "x.t().reshape"),
        (6, 5, "SC101"): FixEdit(6, 5, 6, 15, "z.t().reshape"),
    }
    assert found.module is not None and found.module.code == NOISY


def test_per_file_ignores_apply_and_a_given_parser_is_used(tmp_path, monkeypatch):
    write_tree(tmp_path, {"m.py": BAD, "pyproject.toml": '[tool.shapecheck.per-file-ignores]\n"m.py" = ["SC101"]\n'})
    monkeypatch.chdir(tmp_path)
    settings = _settings("m.py")
    texts = []

    def parse(text):
        texts.append(text)
        return parse_source(text)

    assert lint_source("m.py", BAD, settings, parse).diagnostics == []
    assert texts == [BAD]
    assert lint_source("other.py", BAD, _settings("other.py")).diagnostics[0].code == "SC101"
    assert not keeps(settings, "m.py")(lint_source("other.py", BAD, settings).diagnostics[0])


def test_a_text_that_does_not_parse_is_one_sc000(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = lint_source("m.py", "x = (1,\n", _settings("m.py"))
    assert [(d.code, d.line) for d in found.diagnostics] == [("SC000", 1)]
    assert found.module is None and found.fixes == {}
