"""What a repository or a command line can do to the ``shapecheck`` command (issue 9, items 4
and 11): file names that hold newlines, escape sequences, bidi overrides or bytes that are not
UTF-8 never forge or garble a line of any output format; broken configurations, odd arguments,
closed or full streams and bugs end in one line on stderr and exit status 2, never a traceback.

Every case runs the real command (``python -m shapecheck``) on a tree built in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shapecheck.engine.display import escape, escape_path
from shapecheck.engine.runner import Diagnostic
from shapecheck.frontends.report import format_github, format_text, sarif_location

REPO = Path(__file__).resolve().parents[2]

#: SC101 fires once, on line 3 column 5, with a fix.
BAD = b"import torch\nx = torch.randn(3, 4)\ny = x.t().view(12)\n"
#: The line of that finding in the ``concise`` text format (the tests of names and messages use it).
SC101 = (
    "SC101 [*] error: `x.t()` is not contiguous after `.t()` (shape (4, 3), strides (1, 4)); `.view(12)` would "
    "merge dims whose strides do not line up and raises at run time; use `.reshape()` or call "
    "`.contiguous()` first"
)

#: hostile file names (bytes: Linux allows any but ``/`` and NUL) and how the text format shows them
HOSTILE_NAMES = {
    b"evil.py\nfake.py:9:9: SC101 spoof.py": "evil.py\\nfake.py:9:9: SC101 spoof.py",
    b"cr\rfake.py": "cr\\rfake.py",
    b"esc\x1b[31mred.py": "esc\\x1b[31mred.py",
    b"tab\there.py": "tab\\there.py",
    b"del\x7f.py": "del\\x7f.py",
    b"c1\xc2\x85next.py": "c1\\u0085next.py",
    b"ls\xe2\x80\xa8sep.py": "ls\\u2028sep.py",
    b"ps\xe2\x80\xa9sep.py": "ps\\u2029sep.py",
    b"rtl\xe2\x80\xaeyp.txt.py": "rtl\\u202eyp.txt.py",
    b"latin\xff.py": "latin\\xff.py",
    b"back\\slash.py": "back\\\\slash.py",
}


def shapecheck(args, cwd, *, stdin=b"", env=None, **popen):
    """Run ``python -m shapecheck ARGS`` in ``cwd``: ``(status, stdout, stderr)`` as text
    (undecodable bytes kept as ``\\udcXX``, so a test sees exactly what was written)."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH")]))
    full_env.pop("SHAPECHECK_DEBUG", None)
    full_env.update(env or {})
    if "stdout" not in popen:
        popen["stdout"] = subprocess.PIPE
    proc = subprocess.run(
        [sys.executable, "-m", "shapecheck", *args], cwd=cwd, input=stdin if "stdin" not in popen else None,
        stderr=subprocess.PIPE, env=full_env, timeout=300, **popen,
    )
    out = (proc.stdout or b"").decode("utf-8", "surrogateescape")
    return proc.returncode, out, proc.stderr.decode("utf-8", "surrogateescape")


def _hostile_tree(tmp_path: Path) -> dict:
    """Write :data:`HOSTILE_NAMES` (all with :data:`BAD`) under ``tmp_path``; display path -> escaped."""
    shown = {}
    for raw, escaped in HOSTILE_NAMES.items():
        with open(os.path.join(os.fsencode(tmp_path), raw), "wb") as handle:
            handle.write(BAD)
        shown[os.fsdecode(raw)] = escaped
    return shown


def _printable_lines(text: str) -> list[str]:
    lines = text.split("\n")
    assert lines[-1] == ""
    for line in lines[:-1]:
        assert line.isprintable(), repr(line)
    return lines[:-1]


# --- item 4: names that would forge or garble output -----------------------------------------


def test_text_format_escapes_every_hostile_name(tmp_path):
    shown = _hostile_tree(tmp_path)
    status, out, err = shapecheck(["lint", "--no-cache", "--output-format", "concise", "."], tmp_path)
    assert status == 1, err
    expected = [f"{shown[name]}:3:5: {SC101}" for name in sorted(shown)]
    assert _printable_lines(out) == expected + [
        f"Found {len(shown)} problems ({len(shown)} fixable).",
        "Run `shapecheck lint --fix` to apply the fixes marked [*].",
    ]
    assert err == ""


def test_json_keeps_the_real_path_as_one_escaped_string(tmp_path):
    shown = _hostile_tree(tmp_path)
    status, out, _ = shapecheck(["lint", "--no-cache", "--format", "json", "."], tmp_path)
    assert status == 1
    _printable_lines(out)
    rows = json.loads(out)
    assert [row["path"] for row in rows] == sorted(shown)
    assert {os.fsencode(row["path"]) for row in rows} == set(HOSTILE_NAMES)
    assert '"path": "evil.py\\nfake.py:9:9: SC101 spoof.py"' in out
    assert '"path": "latin\\udcff.py"' in out


def test_sarif_uris_are_percent_encoded_bytes(tmp_path):
    _hostile_tree(tmp_path)
    status, out, _ = shapecheck(["lint", "--no-cache", "--format", "sarif", "."], tmp_path)
    assert status == 1
    _printable_lines(out)
    locations = [
        r["locations"][0]["physicalLocation"]["artifactLocation"] for r in json.loads(out)["runs"][0]["results"]
    ]
    uris = {loc["uri"] for loc in locations}
    assert {urllib.parse.unquote_to_bytes(uri) for uri in uris} == set(HOSTILE_NAMES)
    assert "evil.py%0Afake.py%3A9%3A9%3A%20SC101%20spoof.py" in uris
    assert "latin%FF.py" in uris and "esc%1B%5B31mred.py" in uris and "rtl%E2%80%AEyp.txt.py" in uris
    for uri in uris:
        assert re.fullmatch(r"[A-Za-z0-9._~/%-]+", uri), uri
    assert all(loc["uriBaseId"] == "%SRCROOT%" for loc in locations)


def test_sarif_absolute_path_is_a_file_uri(tmp_path):
    name = tmp_path / "sub dir"
    name.mkdir()
    (name / "a#b.py").write_bytes(BAD)
    _, out, _ = shapecheck(["lint", "--no-cache", "--format", "sarif", str(name / "a#b.py")], REPO)
    (result,) = json.loads(out)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "file://" + urllib.parse.quote(str(name), safe="/") + "/a%23b.py"}


def test_github_annotations_stay_one_line_each(tmp_path):
    shown = _hostile_tree(tmp_path)
    status, out, _ = shapecheck(["lint", "--no-cache", "--format", "github", "."], tmp_path)
    assert status == 1
    lines = _printable_lines(out)
    assert len(lines) == len(shown)
    files = [re.match(r"::error file=(.*?),line=3,col=5,", line).group(1) for line in lines]
    assert files == [
        "back\\slash.py",
        "c1\\u0085next.py",
        "cr%0Dfake.py",
        "del\\x7f.py",
        "esc\\x1b[31mred.py",
        "evil.py%0Afake.py%3A9%3A9%3A SC101 spoof.py",
        "latin\\xff.py",
        "ls\\u2028sep.py",
        "ps\\u2029sep.py",
        "rtl\\u202eyp.txt.py",
        "tab\\there.py",
    ]


def test_statistics_and_diff_headers(tmp_path):
    shown = _hostile_tree(tmp_path)
    status, out, _ = shapecheck(["lint", "--no-cache", "--statistics", "."], tmp_path)
    assert status == 1
    assert out == f"{len(shown):>5}\tSC101\t[*] view-on-non-contiguous\nFound 11 problems.\n"
    status, out, err = shapecheck(["lint", "--diff", "."], tmp_path)
    assert status == 1
    headers = [line for line in out.split("\n") if line.startswith(("--- ", "+++ "))]
    assert headers == [f"{side}{shown[name]}" for name in sorted(shown) for side in ("--- a/", "+++ b/")]
    assert all(line.isprintable() for line in headers)
    assert err == "Would fix 11 problems.\n"


def test_paths_named_on_the_command_line_and_stdin(tmp_path):
    status, out, _ = shapecheck(["lint", "--output-format", "concise", "gone\n.py:1:1: SC101 x.py"], tmp_path)
    assert status == 2
    assert _printable_lines(out)[0] == (
        "gone\\n.py:1:1: SC101 x.py:1:1: SC000 error: cannot read: no such file or directory")
    status, out, _ = shapecheck(["lint", "--output-format", "concise", "--stdin-filename", "in\x1b[2J.py", "-"],
                                tmp_path, stdin=BAD)
    assert status == 1
    assert _printable_lines(out)[0] == f"in\\x1b[2J.py:3:5: {SC101}"


def test_config_paths_in_error_messages_are_escaped(tmp_path):
    (tmp_path / "odd\n\x1b.toml").write_text("select = [\n")
    status, out, err = shapecheck(["lint", "--config", "odd\n\x1b.toml", "."], tmp_path)
    assert (status, out) == (2, "")
    assert err == "shapecheck: error: invalid TOML in odd\\n\\x1b.toml: Invalid value (at end of document)\n"
    status, _, err = shapecheck(["lint", "--config", "no\nsuch.toml", "."], tmp_path)
    assert (status, err) == (2, "shapecheck: error: config file not found: no\\nsuch.toml\n")
    status, _, err = shapecheck(["lint", "--select", "SC1\x1b[0m", "."], tmp_path)
    assert (status, err) == (2, "shapecheck: error: --select: unknown rule code or name `SC1\\x1b[0m` "
                                "(see `shapecheck rule --all`)\n")


def test_messages_are_escaped_in_text():
    diag = Diagnostic("a.py", 1, 1, 1, 2, "SC501", "einsum-syntax", "error", "spec \x1b[2J\u202ebad")
    assert format_text([diag]).splitlines()[0] == "a.py:1:1: SC501 error: spec \\x1b[2J\\u202ebad"


_ESCAPE = re.compile(r"\\(\\|n|r|t|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")


def _unescape(text: str) -> str:
    def one(match: re.Match) -> str:
        code = match.group(1)
        if code in ("\\", "n", "r", "t"):
            return {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}[code]
        value = int(code[1:], 16)
        return chr(value + 0xDC00) if code[0] == "x" and value >= 0x80 else chr(value)

    return _ESCAPE.sub(one, text)


PATH_CHARS = st.one_of(st.characters(), st.sampled_from([chr(0xDC80 + i) for i in range(128)] + ["\\"]))


@given(st.text(PATH_CHARS))
def test_escape_path_is_printable_and_reversible(path):
    shown = escape_path(path)
    assert shown.isprintable()
    assert _unescape(shown) == path
    assert escape(shown) == shown


@given(st.lists(st.tuples(st.text(PATH_CHARS, min_size=1), st.text(PATH_CHARS)), min_size=1, max_size=5))
def test_every_line_format_has_one_printable_line_per_finding(rows):
    diags = [Diagnostic(path, 1, 1, 1, 2, "SC101", "view-on-non-contiguous", "error", msg) for path, msg in rows]
    text = format_text(diags).split("\n")
    assert text[-1] == "" and len(text) == len(diags) + 2
    assert all(line.isprintable() for line in text)
    assert [line.split(":1:1: SC101 ")[0] for line in text[:-2]] == [escape_path(p) for p, _ in rows]
    github = format_github(diags).split("\n")
    assert github[-1] == "" and len(github) == len(diags) + 1
    assert all(line.isprintable() for line in github)
    for (path, _), line in zip(rows, github):
        assert urllib.parse.unquote(re.match("::error file=(.*?),line=1,", line).group(1)) == escape(path, keep="\r\n")
    for path, _ in rows:
        location = sarif_location(path)
        uri = location["uri"]
        assert re.fullmatch(r"[A-Za-z0-9._~/%:-]+", uri), uri
        if location.get("uriBaseId") == "%SRCROOT%":
            try:
                assert urllib.parse.unquote_to_bytes(uri) == os.fsencode(path)
            except UnicodeEncodeError:  # a lone surrogate no file name can hold
                pass


# --- item 11: one line and exit status 2 ------------------------------------------------------

TOO_DEEP = "a = " + "[" * 5000 + "]" * 5000 + "\n"


def _pyproject(content):
    return {"pyproject.toml": content, "a.py": BAD}


#: (id, files to write, arguments after ``lint``, the one line expected on stderr)
BAD_SETUPS = [
    ("pyproject-not-utf8", _pyproject(b"[tool.shapecheck]\nselect = ['SC1']\n# \xff\n"), ["a.py"],
     "invalid TOML in {root}/pyproject.toml: not UTF-8 (byte 0xff at line 3, column 3; TOML files are UTF-8)"),
    ("config-not-utf8", {"lint.toml": b"select = ['SC1'] # \xc3\x28\n", "a.py": BAD}, ["--config", "lint.toml", "a.py"],
     "invalid TOML in lint.toml: not UTF-8 (byte 0xc3 at line 1, column 20; TOML files are UTF-8)"),
    ("pyproject-directory", {"pyproject.toml/x": b"", "a.py": BAD}, ["a.py"],
     "config file {root}/pyproject.toml is a directory, not a file"),
    ("pyproject-fifo", {"pyproject.toml": "fifo", "a.py": BAD}, ["a.py"],
     "config file {root}/pyproject.toml is not a regular file"),
    ("pyproject-link-loop", {"pyproject.toml": "loop", "a.py": BAD}, ["a.py"],
     "cannot read config file {root}/pyproject.toml: Too many levels of symbolic links"),
    ("pyproject-dangling-link", {"pyproject.toml": "dangling", "a.py": BAD}, ["a.py"],
     "config file {root}/pyproject.toml is a symbolic link to a missing file"),
    ("pyproject-too-large", {"pyproject.toml": "huge", "a.py": BAD}, ["a.py"],
     "config file {root}/pyproject.toml is too large (5,242,880 bytes; at most 4,194,304)"),
    ("tool-is-int", _pyproject(b"tool = 3\n"), ["a.py"],
     "{root}/pyproject.toml: `tool` must be a table, not an integer"),
    ("tool-is-int-named", _pyproject(b"tool = 3\n"), ["--config", "pyproject.toml", "a.py"],
     "pyproject.toml: `tool` must be a table, not an integer"),
    ("table-is-string", _pyproject(b"[tool]\nshapecheck = 'SC1'\n"), ["a.py"],
     "{root}/pyproject.toml: [tool.shapecheck] must be a table, not a string"),
    ("toml-too-deep", _pyproject(TOO_DEEP.encode()), ["a.py"],
     "invalid TOML in {root}/pyproject.toml: arrays or tables nest too deeply"),
    ("select-empty-in-config", _pyproject(b"[tool.shapecheck]\nselect = []\n"), ["a.py"],
     "{root}/pyproject.toml: `select` is empty, so no rule would run (remove the key for the defaults)"),
    ("config-missing", {"a.py": BAD}, ["--config", "nope.toml", "a.py"], "config file not found: nope.toml"),
    ("config-directory", {"a.py": BAD}, ["--config", ".", "a.py"], "config file . is a directory, not a file"),
    ("select-empty", {"a.py": BAD}, ["--select", "", "a.py"],
     "--select needs rule codes or names: an empty selection would run no rule"),
    ("select-commas", {"a.py": BAD}, ["--select", ",", "a.py"],
     "--select needs rule codes or names: an empty selection would run no rule"),
    ("fix-and-diff", {"a.py": BAD}, ["--fix", "--diff", "a.py"],
     "--fix and --diff cannot be combined: --diff shows the fixes without writing them"),
    ("statistics-and-diff", {"a.py": BAD}, ["--statistics", "--diff", "a.py"],
     "--statistics and --diff cannot be combined: --diff prints the fixes, not a report"),
    ("statistics-sarif", {"a.py": BAD}, ["--statistics", "--format", "sarif", "a.py"],
     "--statistics prints counts as text or json; it cannot be combined with --output-format sarif"),
    ("jobs-zero", {"a.py": BAD}, ["--jobs", "0", "a.py"],
     "argument --jobs/-j: must be at least 1, got 0 (see `shapecheck lint --help`)"),
    ("jobs-negative", {"a.py": BAD}, ["--jobs=-3", "a.py"],
     "argument --jobs/-j: must be at least 1, got -3 (see `shapecheck lint --help`)"),
    ("jobs-word", {"a.py": BAD}, ["--jobs", "many", "a.py"],
     "argument --jobs/-j: expected a whole number, got 'many' (see `shapecheck lint --help`)"),
    ("stdin-filename-with-paths", {"a.py": BAD}, ["--stdin-filename", "x.py", "a.py"],
     "--stdin-filename needs `-` as the only path"),
    ("config-empty", {"a.py": BAD}, ["--config=", "a.py"], "--config needs a file name"),
    ("path-empty", {"a.py": BAD}, ["a.py", ""], "a PATH argument is empty"),
]


def _build(root: Path, files: dict) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == "fifo":
            os.mkfifo(path)
        elif content == "loop":
            os.symlink(path.name, path)
        elif content == "dangling":
            os.symlink("missing.toml", path)
        elif content == "huge":
            with open(path, "wb") as handle:
                handle.truncate(5 * 1024 * 1024)
        else:
            path.write_bytes(content)


@pytest.mark.parametrize("files, args, line", [case[1:] for case in BAD_SETUPS], ids=[c[0] for c in BAD_SETUPS])
def test_bad_setup_is_one_line_and_exit_2(tmp_path, files, args, line):
    _build(tmp_path, files)
    status, out, err = shapecheck(["lint", *args], tmp_path)
    assert "Traceback" not in err
    assert (status, out, err) == (2, "", "shapecheck: error: " + line.format(root=tmp_path) + "\n")


def test_unreadable_pyproject_for_a_user_who_cannot_read_it(tmp_path_factory):
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root, to run the command as another user")
    try:
        probe = subprocess.run([sys.executable, "-c", "import libcst"], user=65534, group=65534,
                               capture_output=True, cwd="/")
    except OSError:
        probe = None
    if probe is None or probe.returncode != 0:
        pytest.skip("this Python cannot run as user 65534 (its installation is private to root)")
    root = tmp_path_factory.mktemp("shared")
    os.chmod(root, 0o755)
    os.chmod(root.parent, 0o755)
    _build(root, _pyproject(b"[tool.shapecheck]\n"))
    os.chmod(root / "pyproject.toml", 0)
    status, out, err = shapecheck(["lint", "a.py"], root, user=65534, group=65534)
    assert (status, out) == (2, "")
    assert err == f"shapecheck: error: cannot read config file {root}/pyproject.toml: Permission denied\n"


@pytest.mark.parametrize(
    "data",
    [
        "x = 1\n".encode("utf-16"),
        "import torch\nx = torch.zeros(3)\n".encode("utf-16-le"),
        "import torch\nx = torch.zeros(3)\n".encode("utf-16-be"),
    ],
    ids=["utf16-bom", "utf16-le", "utf16-be"],
)
def test_utf16_file_is_an_encoding_problem(tmp_path, data):
    (tmp_path / "wide.py").write_bytes(data)
    (tmp_path / "b.py").write_bytes(BAD)
    status, out, _ = shapecheck(["lint", "--no-cache", "--output-format", "concise", "."], tmp_path)
    assert status == 2
    assert out.splitlines()[:2] == [
        f"b.py:3:5: {SC101}",
        "wide.py:1:1: SC000 error: cannot decode: the file looks like UTF-16; shapecheck reads UTF-8 or a "
        "PEP 263 coding, as Python does (save the file as UTF-8)",
    ]


def test_utf32_and_binary_files_keep_their_own_words(tmp_path):
    (tmp_path / "u32.py").write_bytes("x = 1\n".encode("utf-32"))
    (tmp_path / "blob.py").write_bytes(b"\x00\x01\x02PK\x03\x04")
    status, out, _ = shapecheck(["lint", "--no-cache", "--output-format", "concise", "."], tmp_path)
    assert status == 2
    assert out.splitlines()[:2] == [
        "blob.py:1:1: SC000 error: binary file: source code cannot contain null bytes",
        "u32.py:1:1: SC000 error: cannot decode: the file looks like UTF-32; shapecheck reads UTF-8 or a "
        "PEP 263 coding, as Python does (save the file as UTF-8)",
    ]


def test_closed_and_full_streams(tmp_path):
    (tmp_path / "a.py").write_bytes(BAD)
    status, _, err = shapecheck(["lint", "-"], tmp_path, stdin=None, preexec_fn=lambda: os.close(0))
    assert (status, err) == (2, "shapecheck: error: cannot read stdin: it is closed\n")
    status, _, err = shapecheck(["lint", "a.py"], tmp_path, stdout=None, preexec_fn=lambda: os.close(1))
    assert (status, err) == (2, "shapecheck: error: cannot write the output: the output stream is closed\n")
    if os.path.exists("/dev/full"):
        with open("/dev/full", "wb") as full:
            status, _, err = shapecheck(["lint", "a.py"], tmp_path, stdout=full)
        assert (status, err) == (2, "shapecheck: error: cannot write the output: No space left on device\n")


def test_deleted_working_folder(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()

    def enter_and_delete():
        os.chdir(gone)
        os.rmdir(gone)

    status, out, err = shapecheck(["lint"], tmp_path, preexec_fn=enter_and_delete)
    assert (status, out) == (2, "")
    assert err == "shapecheck: error: cannot use the current folder: No such file or directory\n"


CRASHING = (
    "import sys\n"
    "import shapecheck.engine.runner\n"
    "def boom(*args, **kwargs):\n"
    "    raise KeyError('no such\\nthing')\n"
    "shapecheck.engine.runner.run = boom\n"
    "from shapecheck.frontends.cli import main\n"
    "raise SystemExit(main(sys.argv[1:]))\n"
)


def test_a_bug_is_one_line_and_exit_2_and_debug_shows_the_traceback(tmp_path):
    (tmp_path / "a.py").write_bytes(BAD)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("SHAPECHECK_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", CRASHING, "lint", "a.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    line = ("shapecheck: internal error: KeyError: 'no such\\nthing' -- please report this bug with the "
            "command that caused it (SHAPECHECK_DEBUG=1 shows the traceback)\n")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", line)
    env["SHAPECHECK_DEBUG"] = "1"
    debug = subprocess.run([sys.executable, "-c", CRASHING, "lint", "a.py"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert debug.returncode == 2
    assert debug.stderr.startswith("Traceback (most recent call last):\n")
    assert debug.stderr.endswith(line)


def test_jobs_is_capped_and_a_huge_value_still_works(tmp_path, monkeypatch):
    from shapecheck.frontends import cli
    from shapecheck.engine import runner as engine

    (tmp_path / "a.py").write_bytes(BAD)
    one = shapecheck(["lint", "--no-cache", "--jobs", "1", "a.py"], tmp_path)
    huge = shapecheck(["lint", "--no-cache", "--jobs", str(10**30), "a.py"], tmp_path)
    assert huge == one and one[0] == 1
    seen = []
    real = engine.run
    monkeypatch.setattr(engine, "run", lambda *a, **k: seen.append(k["jobs"]) or real(*a, **k))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["lint", "--no-cache", "--jobs", str(10**30), "a.py"]) == 1
    assert seen == [cli._default_jobs()]


@pytest.mark.parametrize(
    "args, status, line",
    [
        (["rule", "x\x1b[2Jy"], 2, "shapecheck: error: unknown rule `x\\x1b[2Jy` (see `shapecheck rule --all`)"),
        (["rule", "--all", "SC101"], 2, "shapecheck: error: give a rule or --all, not both"),
        (["einsum"], 2, "shapecheck: error: the following arguments are required: spec, SHAPE "
                        "(see `shapecheck einsum --help`)"),
        (["broadcast"], 2, "shapecheck: error: the following arguments are required: SHAPE "
                           "(see `shapecheck broadcast --help`)"),
    ],
)
def test_odd_subcommand_arguments(tmp_path, args, status, line):
    result = shapecheck(args, tmp_path)
    assert result == (status, "", line + "\n")


def test_argparse_errors_are_escaped(tmp_path):
    status, out, err = shapecheck(["lint", "--format", "x\x1b\ny"], tmp_path)
    assert (status, out) == (2, "")
    assert err.startswith("shapecheck: error: argument --format/--output-format: invalid choice: 'x\\x1b\\ny'")
    assert err.count("\n") == 1 and err[:-1].isprintable()


@pytest.mark.parametrize(
    "args",
    [["einsum", "\udcff"], ["einsum", "ij,jk", "((", "3"], ["einsum", "...ij->", "9" * 40], ["broadcast", "()", ""],
     ["broadcast", "?,*b", "3x" * 200 + "3"], ["einsum", "i" * 60 + "->", "2," * 59 + "2"]],
)
def test_algebra_commands_never_crash_on_garbage(tmp_path, args):
    status, _, err = shapecheck(args, tmp_path)
    assert status in (0, 1, 2)
    assert "Traceback" not in err and "internal error" not in err
