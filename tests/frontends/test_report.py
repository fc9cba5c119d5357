"""Output formats: text, json, sarif 2.1.0, github annotations."""

from __future__ import annotations

import json
import re

from conftest import BAD, write_tree

from shapecheck.engine.runner import Diagnostic
from shapecheck.frontends.report import format_github, format_statistics, format_text

JSON_KEYS = {"path", "line", "column", "end_line", "end_column", "code", "name", "severity", "message", "fixable",
             "condition", "related", "cell"}


def _tree(tmp_path):
    return write_tree(tmp_path, {"bad.py": BAD, "broken.py": "x = (\n"})


def test_json_loads_with_the_documented_keys(cli, tmp_path):
    result = cli(["lint", "--format", "json", "."], _tree(tmp_path))
    rows = json.loads(result.out)
    assert [r["code"] for r in rows] == ["SC101", "SC000"]
    for row in rows:
        assert set(row) == JSON_KEYS
    assert rows[0] == {
        "path": "bad.py", "line": 3, "column": 5, "end_line": 3, "end_column": 19, "code": "SC101",
        "name": "view-on-non-contiguous", "severity": "error", "message": rows[0]["message"], "fixable": True,
        "condition": None, "related": [], "cell": None,
    }


def test_sarif_has_the_required_structure(cli, tmp_path):
    from shapecheck.rules.catalog import all_rules

    log = json.loads(cli(["lint", "--format", "sarif", "."], _tree(tmp_path)).out)
    assert log["version"] == "2.1.0"
    assert "sarif-2.1.0" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "shapecheck" and driver["version"]
    ids = [r["id"] for r in driver["rules"]]
    assert set(ids) >= {r.code for r in all_rules()} | {"SC000", "SC999"}
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert len(run["results"]) == 1  # broken.py is a tool notification (see test_sarif_schema.py)
    assert run["invocations"][0]["toolExecutionNotifications"][0]["descriptor"]["id"] == "SC000"
    for result in run["results"]:
        assert result["ruleId"] in ids
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning")
        assert result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] in ("bad.py", "broken.py")
        region = location["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert region["endLine"] >= region["startLine"]


GITHUB_LINE = re.compile(
    r"^::(error|warning) file=(?P<file>[^,]+),line=(?P<line>\d+),col=(?P<col>\d+),"
    r"endLine=\d+,endColumn=\d+,title=(?P<title>[^:]+)::(?P<message>.+)$"
)


def test_github_lines_parse(cli, tmp_path):
    out = cli(["lint", "--format", "github", "."], _tree(tmp_path)).out
    lines = out.splitlines()
    assert len(lines) == 2
    for line in lines:
        assert GITHUB_LINE.match(line), line
    first = GITHUB_LINE.match(lines[0])
    assert first["file"] == "bad.py" and first["line"] == "3" and first["col"] == "5"
    assert first["title"] == "SC101 (view-on-non-contiguous)"


def test_github_escapes_newlines_commas_and_colons():
    diag = Diagnostic("a,b:c.py", 1, 2, 1, 3, "SC101", "view-on-non-contiguous", "warning", "50% wrong\nsecond")
    line = format_github([diag]).rstrip("\n")
    assert "\n" not in line
    assert line.startswith("::warning file=a%2Cb%3Ac.py,line=1,col=2,")
    assert line.endswith("::SC101 50%25 wrong%0Asecond")


def test_text_summary_and_fix_marker():
    plain = Diagnostic("m.py", 2, 1, 2, 5, "SC999", "internal-error", "error", "boom")
    fixable = Diagnostic("m.py", 1, 1, 1, 5, "SC101", "view-on-non-contiguous", "error", "msg", True)
    text = format_text([fixable, plain])
    assert text.splitlines()[:3] == [
        "m.py:1:1: SC101 [*] error: msg",
        "m.py:2:1: SC999 error: boom",
        "Found 2 problems (1 fixable).",
    ]
    assert format_text([]) == "All checks passed.\n"


def test_statistics_counts_by_code():
    rows = [
        Diagnostic("a.py", 1, 1, 1, 2, "SC101", "view-on-non-contiguous", "error", "m", True),
        Diagnostic("b.py", 1, 1, 1, 2, "SC101", "view-on-non-contiguous", "error", "m", True),
        Diagnostic("b.py", 1, 1, 1, 2, "SC000", "syntax-error", "error", "m"),
    ]
    lines = format_statistics(rows).splitlines()
    assert lines[0].split() == ["2", "SC101", "[*]", "view-on-non-contiguous"]
    assert lines[1].split() == ["1", "SC000", "syntax-error"]
    assert lines[2] == "Found 3 problems."
