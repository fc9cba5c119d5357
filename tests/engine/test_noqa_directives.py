"""Malformed suppression comments never widen into a blanket and are warned about; the opt-in
SC998 reports suppressions that silence nothing; ``--add-noqa`` adds the comments a code base
needs to adopt the tool."""

from __future__ import annotations

import json

import pytest
from conftest import BAD, run_cli_subprocess, write_tree

from shapecheck.engine.noqa import UNUSED_NOQA, parse_comment, parse_directives, problems
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules, get_rule

SC101 = get_rule("SC101")
SC998 = get_rule("SC998")
LINE = "import torch\nx = torch.randn(3, 4)\ny = x.t().view(12){comment}\n"
KNOWN = [r.code for r in all_rules()]


@pytest.mark.parametrize(
    "comment, silences, problem",
    [
        ("# noqa: foo", frozenset(), "expected rule codes such as `SC101`"),
        ("# noqa:", frozenset(), "expected rule codes such as `SC101`"),
        ("# noqa SC101", frozenset({"SC101"}), "a colon is missing after `noqa`"),
        ("# noqa: SC1O1", frozenset(), "`SC1O1` is not a rule code"),
        ("# noqa: SC100", frozenset({"SC100"}), "no rule has the code `SC100`"),
        ("# shapecheck: ignore[foo]", frozenset(), "expected rule codes such as `SC101`"),
        ("# shapecheck: ignore[E501]", frozenset(), "`E501` is not a shapecheck code"),
        ("# shapecheck: ignore[SC101", frozenset({"SC101"}), "the `]` is missing"),
    ],
)
def test_malformed_lists_silence_only_what_they_name_and_are_problems(comment, silences, problem):
    assert (parse_comment(comment) or frozenset()) == silences  # never ALL
    found = problems(f"x = 1  {comment}\n", KNOWN)
    assert len(found) == 1 and found[0][0] == 1 and problem in found[0][2], found


@pytest.mark.parametrize(
    "comment",
    ["# noqa", "# noqa: SC101", "# noqa: E501, SC1", "# noqa: SC101 the view is contiguous",
     "# shapecheck: ignore", "# shapecheck: ignore[SC101, SC2]", "# noqa: E501",
     "# noqa F401", "# noqa: E50l"],  # another tool's codes and typos are that tool's business
)
def test_well_formed_directives_are_not_problems(comment):
    assert problems(f"x = 1  {comment}\n", KNOWN) == []


def test_typos_do_not_silence_the_finding():
    for comment in ("  # noqa: foo", "  # noqa: SC1O1", "  # noqa: SC102 SC1O1"):
        assert [d.code for d in lint_text(LINE.format(comment=comment), [SC101])] == ["SC101"], comment
    assert lint_text(LINE.format(comment="  # noqa SC101"), [SC101]) == []


def test_a_noqa_inside_a_string_is_no_problem():
    assert problems('s = "# noqa: SC1O1"\n', KNOWN) == []


def test_the_cli_warns_naming_the_comment(tmp_path):
    write_tree(tmp_path, {"a.py": LINE.format(comment="  # noqa: SC1O1")})
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "a.py"], tmp_path)
    assert result.rc == 1 and [r["code"] for r in json.loads(result.out)] == ["SC101"]
    assert result.err == (
        "warning: a.py:3: `# noqa: SC1O1`: `SC1O1` is not a rule code; it silences only the valid codes it names\n"
    )


def test_unused_noqa_is_opt_in_and_reports_idle_codes():
    text = (
        "import torch\nx = torch.randn(3, 4)\n"
        "y = x.t().view(12)  # noqa: SC101\n"          # used
        "z = x.view(12)  # noqa: SC101\n"              # unused
        "w = 1  # noqa\n"                              # bare: may be another tool's
        "v = 1  # noqa: E501\n"                        # another tool's code
        "u = 1  # noqa: SC101, SC998\n"                # asks not to be reported
        "t = 1  # noqa: SC603\n"                       # a rule that did not run
        "s = 1  # noqa: SC100\n"                       # no such rule: a warning, not SC998
    )
    assert [d.code for d in lint_text(text, [SC101])] == []
    found = [(d.line, d.column, d.severity, d.message) for d in lint_text(text, [SC101, SC998])]
    assert found == [
        (4, 17, "warning", "unused suppression `SC101` in `# noqa: SC101`"),
        (8, 8, "warning", "unused suppression `SC603` in `# noqa: SC603` (SC603 did not run)"),
    ]
    assert UNUSED_NOQA == SC998.code and not SC998.default_enabled


def test_unused_noqa_from_the_command_line(tmp_path):
    write_tree(tmp_path, {"a.py": "import torch\nx = torch.randn(3, 4)\nz = x.view(12)  # noqa: SC101\n"})
    quiet = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "a.py"], tmp_path)
    assert (quiet.rc, quiet.out) == (0, "[]\n")
    loud = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "--extend-select", "SC998", "a.py"], tmp_path)
    rows = json.loads(loud.out)
    assert loud.rc == 1 and [(r["code"], r["line"], r["column"]) for r in rows] == [("SC998", 3, 17)]


def test_add_noqa_annotates_every_line_with_findings(tmp_path):
    text = (
        "import torch\nx = torch.randn(3, 4)\n"
        "a = x.t().view(12)\n"
        "b = x.t().view(12)  # noqa: E501 keep the reason\n"
        "c = x.t().view(12)  # a comment\n"
        'd = (x.t().view(12), """\n'
        'text""")\n'
    )
    write_tree(tmp_path, {"a.py": text, "clean.py": BAD.replace("view", "reshape")})
    result = run_cli_subprocess(["lint", "--no-cache", "--add-noqa", "."], tmp_path)
    assert result.rc == 0, result.err
    assert result.err.splitlines() == [
        "warning: a.py:6: cannot carry a comment (the line ends inside a string or continues with a "
        "backslash); add the noqa by hand",
        "Added 3 noqa directives.",
    ]
    assert (tmp_path / "a.py").read_text().splitlines()[2:5] == [
        "a = x.t().view(12)  # noqa: SC101",
        "b = x.t().view(12)  # noqa: E501, SC101 keep the reason",
        "c = x.t().view(12)  # a comment  # noqa: SC101",
    ]
    again = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], tmp_path)
    assert [(r["line"]) for r in json.loads(again.out)] == [6] and again.err == ""


def test_add_noqa_refuses_fix_and_stdin(tmp_path):
    write_tree(tmp_path, {"a.py": BAD})
    assert run_cli_subprocess(["lint", "--add-noqa", "--fix", "a.py"], tmp_path).rc == 2
    assert run_cli_subprocess(["lint", "--add-noqa", "-"], tmp_path, stdin=BAD.encode()).rc == 2


def test_directive_columns_point_at_the_hash():
    (directive,) = parse_directives("# why  # noqa: SC101", 4, 10)
    assert (directive.line, directive.column, directive.text) == (4, 17, "# noqa: SC101")
