"""The text report as a user sees it: ``full`` and ``concise``, colour on a terminal (through a
pseudo-terminal), ``NO_COLOR``/``FORCE_COLOR``, ``--output-file``, ``--quiet``, ``--statistics``
as JSON, the ``--fix`` advice left out under pre-commit, and the engine codes' pages."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import BAD, GOOD, REPO, write_tree

from shapecheck.frontends.report import INFO_URI
from shapecheck.frontends.text_output import message_parts, split_clauses

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ESC = "\x1b["
FULL_BAD = """\
bad.py:3:5: SC101 [*] error: `x.t()` is not contiguous after `.t()` (shape (4, 3), strides (1, 4))
  |
3 | y = x.t().view(12)
  |     ^^^^^^^^^^^^^^
  |
  = `.view(12)` would merge dims whose strides do not line up and raises at run time
  = help: use `.reshape()` or call `.contiguous()` first

Found 1 problem (1 fixable).
Run `shapecheck lint --fix` to apply the fixes marked [*].
"""
CONCISE_BAD = (
    "bad.py:3:5: SC101 [*] error: `x.t()` is not contiguous after `.t()` (shape (4, 3), strides (1, 4)); "
    "`.view(12)` would merge dims whose strides do not line up and raises at run time; "
    "use `.reshape()` or call `.contiguous()` first\n"
)


def _env(**extra: str) -> dict:
    """The test's environment without the variables that change the report, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "PRE_COMMIT", "TERM")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["TERM"] = "xterm"
    env.update(extra)
    return env


def _lint(args: list, cwd, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--no-cache", *args], cwd=cwd,
                          capture_output=True, text=True, env=_env(**env), timeout=300)


def test_full_is_the_default_and_shows_the_line_the_caret_and_the_hint(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    result = _lint(["bad.py"], tmp_path)
    assert result.returncode == 1
    assert result.stdout == FULL_BAD
    assert _lint(["--output-format", "full", "bad.py"], tmp_path).stdout == FULL_BAD
    assert _lint(["--format", "text", "bad.py"], tmp_path).stdout == FULL_BAD


def test_concise_is_one_line_with_the_severity(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    result = _lint(["--output-format", "concise", "bad.py"], tmp_path)
    assert result.stdout.splitlines(keepends=True)[0] == CONCISE_BAD
    assert result.stdout.endswith("Found 1 problem (1 fixable).\nRun `shapecheck lint --fix` to apply the fixes "
                                  "marked [*].\n")


def test_full_shows_the_call_whose_arguments_the_finding_uses():
    result = _lint(["examples/sc303_data_attribute_bad.py"], REPO)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("examples/sc303_data_attribute_bad.py:13:5: SC303 warning: `w.data` changes `w`")
    assert "(with the arguments" not in result.stdout
    assert lines[2] == "13 |     w.data.clamp_(-0.1, 0.1)"
    assert lines[3] == "   |     ^^^^^^"
    assert lines[5].startswith("21 |     print(\"got\", grad_of_step(w, x)")
    assert lines[6].endswith("- called here: the finding uses these arguments")
    assert lines[8] == "   = help: change `w` under `torch.no_grad()` (autograd then raises) or after the backward pass"


def test_full_reads_the_source_of_stdin(tmp_path):
    result = subprocess.run([sys.executable, "-m", "shapecheck", "lint", "--no-cache", "--stdin-filename",
                             "pkg/model.py", "-"], cwd=tmp_path, input=BAD, capture_output=True, text=True,
                            env=_env(), timeout=300)
    assert result.stdout.splitlines()[2] == "3 | y = x.t().view(12)"


def test_full_without_a_readable_source_still_reports(tmp_path):
    write_tree(tmp_path, {"ok.py": GOOD})
    result = _lint(["nope.py", "ok.py"], tmp_path)
    assert result.returncode == 2
    assert result.stdout.startswith("nope.py:1:1: SC000 error: cannot read: no such file or directory\n\n")


def _pty_run(args: list, cwd, **env: str) -> str:
    """``shapecheck lint ARGS`` with its stdout on a pseudo-terminal; returns what it wrote."""
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "shapecheck", "lint", "--no-cache", *args], cwd=cwd,
                                stdout=follower, stderr=subprocess.DEVNULL, env=_env(**env))
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: the child is done
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=300)
    finally:
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_colour_on_a_terminal_and_never_with_no_color(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    coloured = _pty_run(["bad.py"], tmp_path)
    assert f"{ESC}1;31mSC101 [*]{ESC}0m" in coloured
    assert f"{ESC}1;31merror:{ESC}0m" in coloured
    plain = _pty_run(["bad.py"], tmp_path, NO_COLOR="1")
    assert ESC not in plain and "SC101 [*] error:" in plain
    assert ESC not in _pty_run(["bad.py"], tmp_path, TERM="dumb")


def test_force_color_colours_a_pipe_and_no_color_wins(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    assert ESC not in _lint(["bad.py"], tmp_path).stdout
    assert ESC in _lint(["bad.py"], tmp_path, FORCE_COLOR="1").stdout
    assert ESC not in _lint(["bad.py"], tmp_path, FORCE_COLOR="1", NO_COLOR="1").stdout


def test_output_file_holds_the_report_without_colour(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    result = _lint(["--output-file", "out/report.txt", "bad.py"], tmp_path, FORCE_COLOR="1")
    assert result.returncode == 1 and result.stdout == ""
    assert (tmp_path / "out" / "report.txt").read_text(encoding="utf-8") == FULL_BAD
    result = _lint(["--output-format", "json", "-o", "r.json", "bad.py"], tmp_path)
    assert [row["code"] for row in json.loads((tmp_path / "r.json").read_text())] == ["SC101"]


def test_output_file_that_cannot_be_written_exits_2(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD, "taken": "a file, not a folder"})
    result = _lint(["--output-file", "taken/report.txt", "bad.py"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("shapecheck: error: cannot write the output: taken/report.txt")


def test_quiet_prints_the_problems_only(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD, "good.py": GOOD})
    assert _lint(["-q", "--output-format", "concise", "bad.py"], tmp_path).stdout == CONCISE_BAD
    assert _lint(["--quiet", "bad.py"], tmp_path).stdout == FULL_BAD.split("\n\nFound")[0] + "\n"
    assert _lint(["--quiet", "good.py"], tmp_path).stdout == ""


def test_statistics_respects_json(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD, "b2.py": BAD})
    result = _lint(["--statistics", "--output-format", "json", "."], tmp_path)
    assert json.loads(result.stdout) == [
        {"code": "SC101", "name": "view-on-non-contiguous", "count": 2, "fixable": True}
    ]
    text = _lint(["--statistics", "."], tmp_path).stdout
    assert text.splitlines() == ["    2\tSC101\t[*] view-on-non-contiguous", "Found 2 problems."]
    sarif = _lint(["--statistics", "--output-format", "sarif", "."], tmp_path)
    assert sarif.returncode == 2 and "cannot be combined with --output-format sarif" in sarif.stderr


def test_no_fix_advice_inside_pre_commit(tmp_path):
    write_tree(tmp_path, {"bad.py": BAD})
    for fmt in ("full", "concise"):
        out = _lint(["--output-format", fmt, "bad.py"], tmp_path, PRE_COMMIT="1").stdout
        assert out.endswith("\nFound 1 problem (1 fixable).\n") and "--fix" not in out


def test_rule_pages_of_the_engine_codes(tmp_path):
    for code, name in (("SC000", "syntax-error"), ("SC999", "internal-error")):
        result = subprocess.run([sys.executable, "-m", "shapecheck", "rule", code], capture_output=True,
                                text=True, env=_env(), timeout=300)
        assert result.returncode == 0
        assert result.stdout.startswith(f"# {name} ({code})\n\nSeverity: error · Fix: none · Enabled by default\n")
        assert "exact code" in result.stdout
    listing = subprocess.run([sys.executable, "-m", "shapecheck", "rule", "--all"], capture_output=True,
                             text=True, env=_env(), timeout=300).stdout.splitlines()
    codes = [line.split()[0] for line in listing[1:]]
    assert codes[0] == "SC000" and codes[-1] == "SC999" and "SC101" in codes


def test_clauses_split_outside_backticks_quotes_and_brackets():
    assert split_clauses("a `x; y` b; c (d; e); \"f; g\"; h") == ["a `x; y` b", "c (d; e)", "\"f; g\"", "h"]
    parts = message_parts("what; why; use `.reshape()` (with the arguments of the calls on lines 4, 9)")
    assert (parts.headline, parts.details, parts.hint, parts.call_lines) == ("what", ("why",), "use `.reshape()`",
                                                                             (4, 9))
    assert message_parts("one clause: no hint").hint is None
    assert message_parts("what; raises later").details == ("raises later",)


def test_distribution_name_and_information_uri_match_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "torch-shapecheck"
    assert project["urls"]["Homepage"] == INFO_URI
    assert project["scripts"] == {"shapecheck": "shapecheck.frontends.cli:main"}


MOVED = """\
import torch


def attend(x, b, t, h, d):
    y = x.view(b, t, h, d).transpose(1, 2)
    z = y * 2
    return z.view(b, h, t * d)
"""


def test_full_shows_the_line_that_made_the_tensor_non_contiguous(tmp_path):
    write_tree(tmp_path, {"attn.py": MOVED})
    lines = _lint(["attn.py"], tmp_path).stdout.splitlines()
    assert lines[0] == "attn.py:7:12: SC101 [*] error: `z` is not contiguous after `.transpose(1, 2)`"
    assert lines[1:8] == [
        "  |",
        "7 |     return z.view(b, h, t * d)",
        "  |            ^^^^^^^^^^^^^^^^^^^",
        "  |",
        "5 |     y = x.view(b, t, h, d).transpose(1, 2)",
        "  |         ---------------------------------- made non-contiguous here by `transpose(1, 2)`",
        "  |",
    ]
    concise = _lint(["--output-format", "concise", "attn.py"], tmp_path).stdout
    assert "made non-contiguous" not in concise and "\n5 |" not in concise
    assert concise.startswith("attn.py:7:12: SC101 [*] error: `z` is not contiguous after `.transpose(1, 2)`;")


def test_json_lists_the_related_places(tmp_path):
    write_tree(tmp_path, {"attn.py": MOVED, "dev.py": "import torch\nx = torch.ones(2, 3)\n"
                          "y = torch.ones(2, 3).cuda()\nz = x + y\n"})
    rows = json.loads(_lint(["--output-format", "json", "attn.py", "dev.py"], tmp_path).stdout)
    assert [(r["path"], r["code"], r["line"], r["related"]) for r in rows] == [
        ("attn.py", "SC101", 7, [{"line": 5, "column": 9, "end_line": 5, "end_column": 43,
                                  "label": "made non-contiguous here by `transpose(1, 2)`", "cell": None}]),
        ("dev.py", "SC401", 4, [{"line": 2, "column": 5, "end_line": 2, "end_column": 21,
                                 "label": "created on the CPU here", "cell": None}]),
    ]
    github = _lint(["--output-format", "github", "attn.py"], tmp_path).stdout
    assert len(github.splitlines()) == 1 and "made non-contiguous" not in github


def test_the_reduction_without_keepdim_is_shown(tmp_path):
    write_tree(tmp_path, {"norm.py": "import torch\nx = torch.rand(8, 4, 5)\nm = x.mean(1)\nd = x - m\n"})
    rows = json.loads(_lint(["--output-format", "json", "norm.py"], tmp_path).stdout)
    assert [(r["code"], r["line"], r["related"]) for r in rows] == [
        ("SC201", 4, [{"line": 3, "column": 5, "end_line": 3, "end_column": 14,
                       "label": "reduced here without `keepdim=True`", "cell": None}]),
    ]


def test_cached_findings_keep_their_related_places(tmp_path):
    write_tree(tmp_path, {"attn.py": MOVED, "pyproject.toml": "[tool.shapecheck]\n"})
    run = [sys.executable, "-m", "shapecheck", "lint", "--output-format", "json", "attn.py"]
    first = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=300)
    stored = [p.read_text() for p in (tmp_path / ".shapecheck_cache").glob("results-*.json")]
    assert len(stored) == 1 and "made non-contiguous here by `transpose(1, 2)`" in stored[0]
    second = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=300)
    assert json.loads(first.stdout)[0]["related"] == [{"line": 5, "column": 9, "end_line": 5, "end_column": 43,
                                                       "label": "made non-contiguous here by `transpose(1, 2)`",
                                                       "cell": None}]
    assert second.stdout == first.stdout


def test_the_move_of_the_module_and_the_saving_op_are_shown(tmp_path):
    write_tree(tmp_path, {
        "emb.py": "import torch\nimport torch.nn as nn\n\n\nclass Emb(nn.Module):\n    def __init__(self):\n"
                  "        super().__init__()\n        self.pos = nn.Embedding(64, 8)\n\n    def forward(self, idx):\n"
                  "        return self.pos(torch.arange(idx.size(1)))\n\n\nmodel = Emb().cuda()\n",
        "saved.py": "import torch\nx = torch.randn(3, requires_grad=True)\ny = x.exp()\ny.add_(1)\n"
                    "y.sum().backward()\n",
    })
    rows = json.loads(_lint(["--output-format", "json", "emb.py", "saved.py"], tmp_path).stdout)
    assert [(r["path"], r["code"], r["line"], [(p["line"], p["column"], p["label"]) for p in r["related"]])
            for r in rows] == [
        ("emb.py", "SC401", 11, [(14, 9, "moved to the device here")]),
        ("saved.py", "SC302", 4, [(3, 5, "saved for backward here"), (5, 1, "backward runs here")]),
    ]
    assert "at line 14" in rows[0]["message"]  # the words stay


def test_a_move_is_shown_only_where_its_code_says_what_the_finding_says(tmp_path):
    write_tree(tmp_path, {
        # the failing side's transpose is on the finding's own line: `k.transpose(-2, -1)` is not it
        "side.py": "import torch\nimport torch.nn.functional as F\n\n\ndef attend(q, k, v, b, t, c, fused):\n"
                   "    q, k, v = q.view(b, 4, t, c // 4), k.view(b, 4, t, c // 4), v.view(b, 4, t, c // 4)\n"
                   "    if fused:\n        y = F.scaled_dot_product_attention(q, k, v)\n    else:\n"
                   "        y = torch.softmax(q @ k.transpose(-2, -1), -1) @ v\n"
                   "    return y.transpose(1, 2).view(b, t, c)\n",
        "t.py": "def g(x):\n    y = x.permute(0, 2, 3, 1)\n    z = y.T\n    return z.view(-1)\n",
    })
    rows = json.loads(_lint(["--output-format", "json", "side.py", "t.py"], tmp_path).stdout)
    assert [(r["path"], r["line"], [(p["line"], p["label"]) for p in r["related"]]) for r in rows] == [
        ("side.py", 11, [(7, "this `if` decides the layout")]),
        ("t.py", 4, [(3, "made non-contiguous here by `.T`")]),
    ]
