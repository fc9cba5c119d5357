"""The engine: decoding, SC000/SC999, positions, fixes to a fixed point, the cache."""

from __future__ import annotations

import json

import libcst as cst
import pytest

from conftest import BAD, GOOD, write_tree

from shapecheck.engine import runner as lint
from shapecheck.engine.config import Selectors, build_settings
from shapecheck.engine.runner import fix_text, lint_text
from shapecheck.rules.base import Fix, Rule
from shapecheck.rules.catalog import get_rule
from shapecheck.engine.sources import SourceError, decode_source

SC101 = get_rule("SC101")


class Crashing(Rule):
    """Not registered: raises on the first call it sees."""

    code = "SC990"
    name = "test-crashing"

    def visit_Call(self, node, ctx):
        raise KeyError("boom")


class PointsIntoString(Rule):
    """Reports the third character of every string literal, like an einsum-spec rule does."""

    code = "SC991"
    name = "test-offset"

    offset = (0, 3)

    def visit_SimpleString(self, node, ctx):
        ctx.report(node, "third character", offset=self.offset)


class PointsIntoLaterLine(PointsIntoString):
    """Reports column 2 of the string's second line."""

    code = "SC994"
    name = "test-offset-lines"
    offset = (1, 2)


class UpperNames(Rule):
    """Fixes every lowercase name ``a`` to ``A``; the fix is nested in another rule's."""

    code = "SC992"
    name = "test-upper"

    def visit_Name(self, node, ctx):
        if node.value == "a":
            ctx.report(node, "lower", fix=Fix(node, node.with_changes(value="A")))


class WrapCalls(Rule):
    """Rewrites ``f(a)`` to ``g(a)`` by replacing the whole call (encloses UpperNames' fix)."""

    code = "SC993"
    name = "test-wrap"

    def visit_Call(self, node, ctx):
        if isinstance(node.func, cst.Name) and node.func.value == "f":
            ctx.report(node, "f call", fix=Fix(node, node.with_changes(func=cst.Name("g"))))


def test_crashing_rule_is_one_sc999_and_others_still_run():
    found = lint_text(BAD, [Crashing, SC101])
    assert sorted(d.code for d in found) == ["SC101", "SC999"]
    crash = next(d for d in found if d.code == "SC999")
    assert crash.message == "internal error in rule SC990 (test-crashing): KeyError: 'boom'"
    assert (crash.line, crash.column) == (1, 1)


def test_walker_crash_is_sc999(monkeypatch):
    from shapecheck.engine import checker

    def explode(module, rules, text=None, imported=None):
        raise ValueError("walker broke")

    monkeypatch.setattr(checker, "analyze", explode)
    found = lint_text(GOOD, [SC101])
    assert [(d.code, d.message) for d in found] == [
        ("SC999", "internal error in the analysis walker: ValueError: walker broke")
    ]


def test_offset_points_inside_the_string():
    found = lint_text('x = 1\ny = f(  "abcdef")\n', [PointsIntoString])
    assert [(d.line, d.column, d.end_line, d.end_column) for d in found] == [(2, 12, 2, 13)]
    multi = lint_text('y = f("""\nab\n  cd""")\n', [PointsIntoString, PointsIntoLaterLine])
    assert [(d.code, d.line, d.column) for d in multi] == [("SC991", 1, 10), ("SC994", 2, 3)]


def test_nested_fixes_land_in_later_passes_once_each():
    text = "b = f(a) + a\n"
    fixed, applied = fix_text(text, [UpperNames, WrapCalls])
    assert fixed == "b = g(A) + A\n"
    assert applied == 3
    assert fix_text(fixed, [UpperNames, WrapCalls]) == (fixed, 0)


def test_sc101_fix_is_idempotent():
    fixed, applied = fix_text(BAD, [SC101])
    assert (fixed, applied) == (GOOD, 1)
    assert fix_text(fixed, [SC101]) == (GOOD, 0)


@pytest.mark.parametrize(
    "data, line, column, words",
    [
        (b"x = 1\ny = '\xff'\n", 2, 6, "cannot decode as utf-8"),
        (b"# coding: klingon\nx = 1\n", 1, 1, "cannot decode"),
        (b"x = 1\n\x00\n", 2, 1, "binary file"),
    ],
)
def test_decode_errors(data, line, column, words):
    with pytest.raises(SourceError) as info:
        decode_source(data)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in info.value.message


def test_decode_like_python():
    assert decode_source("# -*- coding: latin-1 -*-\ns = 'é'\n".encode("latin-1")).text.endswith("'é'\n")
    with_bom = decode_source(b"\xef\xbb\xbfx = 1\n")
    assert with_bom.text == "x = 1\n" and with_bom.bom and with_bom.encoding == "utf-8"
    assert decode_source(b"s = '\xc3\xa9'\n").text == "s = 'é'\n"


def test_syntax_error_position_comes_from_the_parser():
    found = lint_text("import torch\n\ndef f(x:\n    return x\n", [SC101])
    assert [(d.code, d.line) for d in found] == [("SC000", 3)]
    assert found[0].message.startswith("cannot parse: ")


def test_positions_with_crlf_and_tabs():
    text = "import torch\r\nif True:\r\n\ty = torch.randn(3, 4).t().view(12)\r\n"
    found = lint_text(text, [SC101])
    assert [(d.line, d.column) for d in found] == [(3, 6)]


def _settings(root):
    return build_settings(str(root), None, Selectors())


def test_cache_reuses_results_and_notices_changes(tmp_path, monkeypatch):
    write_tree(tmp_path, {"pyproject.toml": "[project]\nname='x'\n", "a.py": BAD, "b.py": GOOD})
    monkeypatch.chdir(tmp_path)
    first = lint.run(["."], _settings(tmp_path), jobs=1)
    assert (tmp_path / ".shapecheck_cache").is_dir()
    calls = []
    original = lint._Linter.lint
    monkeypatch.setattr(
        lint._Linter, "lint", lambda self, job, mode: calls.append(job.path) or original(self, job, mode)
    )
    second = lint.run(["."], _settings(tmp_path), jobs=1)
    assert calls == [] and second.diagnostics == first.diagnostics
    (tmp_path / "b.py").write_text(BAD)
    third = lint.run(["."], _settings(tmp_path), jobs=1)
    assert calls == ["b.py"]
    assert [d.path for d in third.diagnostics] == ["a.py", "b.py"]


def test_cache_key_includes_the_selection(tmp_path, monkeypatch):
    write_tree(tmp_path, {"a.py": BAD})
    monkeypatch.chdir(tmp_path)
    assert len(lint.run(["."], _settings(tmp_path)).diagnostics) == 1
    only_none = build_settings(str(tmp_path), None, Selectors(select=["SC101"], ignore=["SC101"]))
    assert lint.run(["."], only_none).diagnostics == []


def test_no_cache_and_fix_leave_no_cache(cli, tmp_path):
    write_tree(tmp_path, {"a.py": BAD})
    cli(["lint", "--no-cache", "."], tmp_path)
    cli(["lint", "--fix", "."], tmp_path)
    assert not (tmp_path / ".shapecheck_cache").exists()


def test_diagnostics_sorted_by_path_line_column(cli, tmp_path):
    two = "import torch\nx = torch.randn(3, 4)\na = x.t().view(12); b = x.T.view(12)\nc = x.mT.view(12)\n"
    write_tree(tmp_path, {"z.py": BAD, "a/b.py": two})
    rows = json.loads(cli(["lint", "--format", "json", "."], tmp_path).out)
    assert [(r["path"], r["line"], r["column"]) for r in rows] == [
        ("a/b.py", 3, 5), ("a/b.py", 3, 25), ("a/b.py", 4, 5), ("z.py", 3, 5)
    ]
