"""The ``shapecheck`` command line: exit statuses, stdin, fixes, rule pages, subcommands."""

from __future__ import annotations

import json

import pytest

from conftest import BAD, GOOD, write_tree

import shapecheck


def test_clean_tree_exits_0(cli, tmp_path):
    write_tree(tmp_path, {"good.py": GOOD})
    result = cli(["lint", "."], tmp_path)
    assert result.rc == 0
    assert "All checks passed." in result.out


def test_findings_exit_1_with_text_lines(cli, tmp_path):
    write_tree(tmp_path, {"bad.py": BAD, "good.py": GOOD})
    result = cli(["lint", "."], tmp_path)
    assert result.rc == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("bad.py:3:5: SC101 [*] ")
    assert "Found 1 problem (1 fixable)." in lines


def test_default_path_is_current_folder(cli, tmp_path):
    write_tree(tmp_path, {"pkg/bad.py": BAD})
    assert cli(["lint"], tmp_path).rc == 1


def test_exit_zero_keeps_output(cli, tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    result = cli(["lint", "--exit-zero", "bad.py"], tmp_path)
    assert result.rc == 0
    assert "SC101" in result.out


def test_mixed_broken_files_are_all_reported_and_good_ones_linted(cli, tmp_path):
    write_tree(
        tmp_path,
        {
            "a_syntax.py": "def f(:\n    pass\n",
            "b_latin1.py": b"x = '\xe9t\xe9'\n",
            "c_binary.py": b"\x00\x01\x02PK\x03\x04",
            "d_bad.py": BAD,
            "e_good.py": GOOD,
        },
    )
    result = cli(["lint", "--no-cache", "--format", "json", "."], tmp_path)
    assert result.rc == 2
    rows = json.loads(result.out)
    by_path = {}
    for row in rows:
        by_path.setdefault(row["path"], []).append(row)
    assert [r["code"] for r in by_path["a_syntax.py"]] == ["SC000"]
    assert by_path["a_syntax.py"][0]["line"] == 1
    assert by_path["a_syntax.py"][0]["column"] == 7
    assert [r["code"] for r in by_path["b_latin1.py"]] == ["SC000"]
    assert "utf-8" in by_path["b_latin1.py"][0]["message"]
    assert by_path["b_latin1.py"][0]["column"] == 6
    assert [r["code"] for r in by_path["c_binary.py"]] == ["SC000"]
    assert "binary" in by_path["c_binary.py"][0]["message"]
    assert [r["code"] for r in by_path["d_bad.py"]] == ["SC101"]
    assert "e_good.py" not in by_path


def test_missing_path_is_sc000_and_other_paths_still_linted(cli, tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    result = cli(["lint", "nope.py", "bad.py"], tmp_path)
    assert result.rc == 2
    assert "nope.py:1:1: SC000 error: cannot read: no such file or directory\n" in result.out
    assert "bad.py:3:5: SC101" in result.out


def test_usage_errors_are_one_line_exit_2(cli, tmp_path):
    for args in (
        ["lint", "--format", "xml", "."],
        ["lint", "--jobs", "0", "."],
        ["lint", "--select", "SC7", "."],
        ["lint", "--ignore", "no-such-rule", "."],
        ["lint", "--config", "missing.toml", "."],
        ["frobnicate"],
        [],
        ["rule"],
        ["rule", "SC0999"],
    ):
        result = cli(args, tmp_path)
        assert result.rc == 2, args
        assert result.out == ""
        assert result.err.count("\n") == 1 and result.err.startswith("shapecheck: error: "), (args, result.err)


def test_version(cli_subprocess, tmp_path):
    result = cli_subprocess(["--version"], tmp_path)
    assert result.rc == 0
    assert result.out.strip() == f"shapecheck {shapecheck.__version__}"


def test_stdin_mode(cli_subprocess, tmp_path):
    result = cli_subprocess(["lint", "-", "--stdin-filename", "pkg/model.py"], tmp_path, stdin=BAD.encode())
    assert result.rc == 1
    assert result.out.startswith("pkg/model.py:3:5: SC101 [*] ")
    clean = cli_subprocess(["lint", "-"], tmp_path, stdin=GOOD.encode())
    assert clean.rc == 0
    broken = cli_subprocess(["lint", "-"], tmp_path, stdin=b"x = (\n")
    assert broken.rc == 2
    assert broken.out.startswith("-:")
    assert "SC000" in broken.out


def test_stdin_fix_prints_fixed_source(cli_subprocess, tmp_path):
    result = cli_subprocess(["lint", "--fix", "-"], tmp_path, stdin=BAD.encode())
    assert result.out == GOOD
    assert result.rc == 0


def test_stdin_cannot_mix_with_paths(cli, tmp_path):
    result = cli(["lint", "-", "x.py"], tmp_path)
    assert result.rc == 2


def test_fix_writes_atomically_and_is_idempotent(cli, tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    first = cli(["lint", "--fix", "bad.py"], tmp_path)
    assert first.rc == 0
    assert "Fixed 1 problem, 0 remaining." in first.out
    assert (tmp_path / "bad.py").read_text() == GOOD
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".shapecheck-")] == []
    second = cli(["lint", "--fix", "bad.py"], tmp_path)
    assert "Fixed 0 problems, 0 remaining." in second.out
    assert (tmp_path / "bad.py").read_text() == GOOD


def test_fix_keeps_encoding_bom_and_line_endings(cli, tmp_path):
    source = "# -*- coding: latin-1 -*-\r\nimport torch\r\ns = 'caf\xe9'\r\ny = torch.randn(2, 3).T.view(6)\r\n"
    (tmp_path / "latin.py").write_bytes(source.encode("latin-1"))
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    assert cli(["lint", "--fix", "."], tmp_path).rc == 0
    assert (tmp_path / "latin.py").read_bytes() == source.replace(".view(", ".reshape(").encode("latin-1")
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + GOOD.encode()


def test_diff_changes_nothing(cli, tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    result = cli(["lint", "--diff", "bad.py"], tmp_path)
    assert result.rc == 1
    assert "-y = x.t().view(12)" in result.out and "+y = x.t().reshape(12)" in result.out
    assert (tmp_path / "bad.py").read_text() == BAD
    write_tree(tmp_path, {"good.py": GOOD})
    assert cli(["lint", "--diff", "good.py"], tmp_path).rc == 0


def test_fix_leaves_noqa_and_per_file_ignored_findings_alone(cli, tmp_path):
    suppressed = BAD.replace("view(12)", "view(12)  # noqa: SC101")
    write_tree(tmp_path, {"a.py": suppressed})
    cli(["lint", "--fix", "a.py"], tmp_path)
    assert (tmp_path / "a.py").read_text() == suppressed


def test_statistics(cli, tmp_path):
    write_tree(tmp_path, {"a.py": BAD, "b.py": BAD})
    result = cli(["lint", "--statistics", "."], tmp_path)
    assert result.rc == 1
    assert result.out.splitlines()[0].split() == ["2", "SC101", "[*]", "view-on-non-contiguous"]


def test_rule_page_by_code_and_name(cli, tmp_path):
    by_code = cli(["rule", "SC101"], tmp_path)
    by_name = cli(["rule", "view-on-non-contiguous"], tmp_path)
    assert by_code.rc == 0 and by_code.out == by_name.out
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
        assert section in by_code.out


def test_rule_all_lists_every_rule(cli, tmp_path):
    from shapecheck.rules.catalog import all_rules

    result = cli(["rule", "--all"], tmp_path)
    assert result.rc == 0
    rows = result.out.splitlines()[1:]
    assert [r.split()[0] for r in rows] == ["SC000", *[rule.code for rule in all_rules()], "SC999"]
    sc101 = next(r for r in rows if r.startswith("SC101"))
    assert sc101.split()[1:4] == ["view-on-non-contiguous", "error", "yes"]


def test_jobs_4_output_equals_jobs_1(cli, tmp_path):
    files = {}
    for i in range(12):
        files[f"pkg{i % 3}/m{i}.py"] = BAD if i % 2 else GOOD
    files["pkg0/broken.py"] = "def f(:\n"
    write_tree(tmp_path, files)
    for fmt in ("text", "json", "sarif", "github"):
        one = cli(["lint", "--no-cache", "--jobs", "1", "--format", fmt, "."], tmp_path)
        four = cli(["lint", "--no-cache", "--jobs", "4", "--format", fmt, "."], tmp_path)
        assert one.rc == four.rc == 2
        assert one.out == four.out


def test_excluded_and_skipped_folders(cli, tmp_path):
    write_tree(
        tmp_path,
        {
            ".git/x.py": BAD,
            "build/x.py": BAD,
            "__pycache__/x.py": BAD,
            "env1/pyvenv.cfg": "home = /usr\n",
            "env1/lib/x.py": BAD,
            "gen/x.py": BAD,
            "src/x.py": BAD,
        },
    )
    result = cli(["lint", "--format", "json", "--exclude", "gen", "."], tmp_path)
    assert [r["path"] for r in json.loads(result.out)] == ["src/x.py"]


def test_subcommands_reach_the_algebra_cli(cli, tmp_path, monkeypatch):
    import sys
    import types

    calls = []
    fake = types.ModuleType("shapecheck.frontends.algebra_cli")
    fake.einsum_command = lambda spec, shapes, out: calls.append(("einsum", spec, shapes)) or 0
    fake.broadcast_command = lambda shapes, out: calls.append(("broadcast", shapes)) or 1
    monkeypatch.setitem(sys.modules, "shapecheck.frontends.algebra_cli", fake)
    import shapecheck.frontends

    monkeypatch.setattr(shapecheck.frontends, "algebra_cli", fake, raising=False)
    assert cli(["einsum", "ij,jk->ik", "2,3", "3,4"], tmp_path).rc == 0
    assert cli(["broadcast", "8,1,6", "7,1"], tmp_path).rc == 1
    assert calls == [("einsum", "ij,jk->ik", ["2,3", "3,4"]), ("broadcast", ["8,1,6", "7,1"])]


def test_lint_never_imports_torch(cli_subprocess):
    from conftest import REPO

    result = cli_subprocess(["lint", "--no-cache", "examples/"], REPO, extra_env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.rc in (1, 2)
    imported = {line.split("|")[-1].strip() for line in result.err.splitlines() if line.startswith("import time:")}
    assert "libcst" in imported
    assert not {name for name in imported if name == "torch" or name.startswith("torch.")}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_every_format_on_a_clean_tree(cli, tmp_path, fmt):
    write_tree(tmp_path, {"good.py": GOOD})
    assert cli(["lint", "--format", fmt, "."], tmp_path).rc == 0


def test_fix_that_cannot_be_written_is_reported(cli, tmp_path, monkeypatch):
    import shapecheck.engine.writeback as writeback

    def refuse(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writeback, "write_fixed", refuse)
    write_tree(tmp_path, {"bad.py": BAD})
    result = cli(["lint", "--fix", "bad.py"], tmp_path)
    assert result.rc == 2
    assert "bad.py:1:1: SC000 error: cannot write the fixes: Permission denied\n" in result.out
    assert "bad.py:3:5: SC101 [*]" in result.out
    assert (tmp_path / "bad.py").read_text() == BAD


def test_fully_cached_run_imports_neither_libcst_nor_the_rules(cli_subprocess, tmp_path):
    write_tree(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", "a.py": BAD, "b.py": GOOD})
    first = cli_subprocess(["lint", "."], tmp_path)
    second = cli_subprocess(["lint", "."], tmp_path, extra_env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert first.rc == second.rc == 1
    assert second.out == first.out
    imported = {line.split("|")[-1].strip() for line in second.err.splitlines() if line.startswith("import time:")}
    assert "shapecheck.engine.runner" in imported
    assert "libcst" not in imported and "shapecheck.rules" not in imported
