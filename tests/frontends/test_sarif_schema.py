"""The ``sarif`` output validates against the official SARIF 2.1.0 schema (vendored under
``tests/frontends/data``), with percent-encoded URIs, ``columnKind``, a ``helpUri`` per rule,
``fixes`` for fixable findings, and parse failures as tool execution notifications."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import BAD, run_cli_subprocess, write_tree

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
#: RFC 3986: unreserved and reserved characters, and percent-encoded bytes; nothing else
_URI_CHARS = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _checker():
    """A format checker that really checks ``uri`` and ``uri-reference`` (jsonschema does so
    only with optional packages installed)."""
    checker = jsonschema.FormatChecker()

    @checker.checks("uri-reference")
    def uri_reference(value):
        return not isinstance(value, str) or bool(_URI_CHARS.match(value))

    @checker.checks("uri")
    def uri(value):
        return not isinstance(value, str) or bool(_URI_CHARS.match(value) and _SCHEME.match(value))

    return checker


def _validate(log: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA, format_checker=_checker()).validate(log)


def _sarif(tmp_path, *paths):
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "sarif", *paths], tmp_path)
    return result, json.loads(result.out)


def test_the_checker_rejects_a_raw_space():
    with pytest.raises(jsonschema.ValidationError):
        _validate({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
            {"message": {"text": "m"}, "locations": [
                {"physicalLocation": {"artifactLocation": {"uri": "a b.py"}}}]}]}]})


def test_sarif_log_is_valid_with_spaces_fixes_and_parse_failures(tmp_path):
    write_tree(tmp_path, {"with space/a b.py": BAD, "broken.py": "x = (\n", "ok#1.py": BAD})
    result, log = _sarif(tmp_path, "with space", "broken.py", "ok#1.py")
    assert result.rc == 2  # a file that does not parse
    _validate(log)
    run = log["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]]
    assert uris == ["ok%231.py", "with%20space/a%20b.py"]
    # the parse failure is a notification of the invocation, not a result
    (invocation,) = run["invocations"]
    (note,) = invocation["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "SC000" and note["level"] == "error"
    assert note["message"]["text"].startswith("cannot parse")
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    assert all(r["ruleId"] != "SC000" for r in run["results"])
    # every rule has a helpUri; each fixable finding carries its fix
    rules = run["tool"]["driver"]["rules"]
    assert all(rule["helpUri"].startswith("https://") for rule in rules)
    fix = run["results"][0]["fixes"][0]["artifactChanges"][0]
    assert fix["artifactLocation"]["uri"] == "ok%231.py"
    (replacement,) = fix["replacements"]
    assert replacement["deletedRegion"] == {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 15}
    assert replacement["insertedContent"] == {"text": "x.t().reshape"}


def test_applying_the_sarif_fix_gives_the_fixed_file(tmp_path):
    write_tree(tmp_path, {"a.py": BAD})
    _, log = _sarif(tmp_path, "a.py")
    replacement = log["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    region = replacement["deletedRegion"]
    lines = BAD.splitlines(keepends=True)
    line = lines[region["startLine"] - 1]
    lines[region["startLine"] - 1] = (line[:region["startColumn"] - 1] + replacement["insertedContent"]["text"]
                                      + line[region["endColumn"] - 1:])
    assert "".join(lines) == BAD.replace(".view(", ".reshape(")


def test_an_empty_run_is_valid(tmp_path):
    write_tree(tmp_path, {"a.py": BAD.replace(".view(", ".reshape(")})
    result, log = _sarif(tmp_path, "a.py")
    assert result.rc == 0
    _validate(log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["invocations"][0]["executionSuccessful"]


def test_related_locations_are_valid_and_carry_their_labels(tmp_path):
    write_tree(tmp_path, {"attn.py": "def attend(x, b, t, h, d):\n    y = x.view(b, t, h, d).transpose(1, 2)\n"
                          "    return y.view(b, h, t * d)\n"})
    _result, log = _sarif(tmp_path, "attn.py")
    _validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["relatedLocations"] == [{
        "id": 0,
        "physicalLocation": {
            "artifactLocation": {"uri": "attn.py", "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 2, "startColumn": 9, "endLine": 2, "endColumn": 43},
        },
        "message": {"text": "made non-contiguous here by `transpose(1, 2)`"},
    }]


def test_every_help_uri_lands_on_an_anchor_of_the_project_page(tmp_path):
    from conftest import REPO

    from shapecheck.frontends.report import INFO_URI

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert 'readme = "README.md"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")  # the index's page
    write_tree(tmp_path, {"ok.py": "x = 1\n"})
    _result, log = _sarif(tmp_path, "ok.py")
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert len(rules) > 30
    for rule in rules:
        page, _, anchor = rule["helpUri"].partition("#")
        assert page == INFO_URI and anchor == rule["id"].lower()
        assert readme.count(f'<a id="{anchor}"></a>{rule["id"]} |') == 1
