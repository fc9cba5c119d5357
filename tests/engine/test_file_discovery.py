"""Which files a run lints: ``.gitignore`` (every level), ``.git/info/exclude`` and ``.ignore``
are respected as ruff and git read them, ``--no-respect-gitignore`` (or the config key) turns
that off, and a file named on the command line that is not Python is reported as skipped."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import BAD, run_cli_subprocess, write_tree

from shapecheck.engine.sources import discover

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git_repo(root):
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write_tree(root, {
        "gen/a.py": BAD, "sub/out/b.py": BAD, "sub/c.py": BAD, "keep/d.py": BAD, "e.py": BAD,
        "local.py": BAD, "vendored.py": BAD, "logs/keep.py": BAD, "logs/drop.py": BAD,
        ".gitignore": "gen/\nout/\nlogs/*.py\n!logs/keep.py\n",
        ".ignore": "vendored.py\n",
    })
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("local.py\n")
    return root


def _paths(result):
    return sorted({row["path"] for row in json.loads(result.out)})


def test_ignore_files_are_respected_at_every_level(tmp_path):
    root = _git_repo(tmp_path / "repo")
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root)
    assert result.rc == 1, result.err
    assert _paths(result) == ["e.py", "keep/d.py", "logs/keep.py", "sub/c.py"]
    # from a subfolder, the .gitignore above it still applies (`out/`)
    inner = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root / "sub")
    assert _paths(inner) == ["c.py"]


def test_no_respect_gitignore_lints_everything(tmp_path):
    root = _git_repo(tmp_path / "repo")
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "--no-respect-gitignore", "."], root)
    assert _paths(result) == [
        "e.py", "gen/a.py", "keep/d.py", "local.py", "logs/drop.py", "logs/keep.py", "sub/c.py",
        "sub/out/b.py", "vendored.py",
    ]


def test_config_key_turns_it_off(tmp_path):
    root = _git_repo(tmp_path / "repo")
    (root / "pyproject.toml").write_text("[tool.shapecheck]\nrespect-gitignore = false\n")
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root)
    assert "gen/a.py" in _paths(result) and "vendored.py" in _paths(result)
    (root / "pyproject.toml").write_text("[tool.shapecheck]\nrespect-gitignore = \"no\"\n")
    bad = run_cli_subprocess(["lint", "--no-cache", "."], root)
    assert bad.rc == 2 and "`respect-gitignore` must be true or false" in bad.err


def test_an_ignored_file_named_explicitly_is_still_linted(tmp_path):
    root = _git_repo(tmp_path / "repo")
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "gen/a.py", "local.py"], root)
    assert _paths(result) == ["gen/a.py", "local.py"]


def test_gitignore_outside_a_git_repository_is_not_read_but_ignore_is(tmp_path):
    write_tree(tmp_path, {"a.py": BAD, "b.py": BAD, "c.py": BAD, ".gitignore": "a.py\n", ".ignore": "b.py\n"})
    found = discover([str(tmp_path)])
    assert [p.rsplit("/", 1)[-1] for p in found.files] == ["a.py", "c.py"]


def test_a_nested_repository_has_its_own_ignore_files(tmp_path):
    root = _git_repo(tmp_path / "repo")
    inner = root / "keep" / "inner"
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    write_tree(inner, {"gen/x.py": BAD, ".gitignore": "y.py\n", "y.py": BAD})
    found = discover([str(root / "keep")])
    assert sorted(p.rsplit("repo/", 1)[-1] for p in found.files) == ["keep/d.py", "keep/inner/gen/x.py"]


def test_named_files_that_are_not_python_are_reported_as_skipped(tmp_path):
    write_tree(tmp_path, {"nb.ipynb": "{}\n", "notes.txt": "hello\n", "a.py": BAD, "script": BAD})
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "nb.ipynb", "notes.txt"], tmp_path)
    # a notebook is linted (this one is not a notebook: SC000), other suffixes are skipped
    assert _paths(result) == ["nb.ipynb"] and result.rc == 2
    assert "skipped nb.ipynb" not in result.err
    assert ("warning: skipped notes.txt: not a Python file (.txt); only .py, .pyi and .ipynb files are linted"
            in result.err)
    # a script without a suffix is still linted when named, and .py files as ever
    both = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "script", "a.py", "notes.txt"], tmp_path)
    assert _paths(both) == ["a.py", "script"] and both.rc == 1
    assert "skipped notes.txt" in both.err


def _home_env(home, xdg=None):
    env = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    if xdg is not None:
        env["XDG_CONFIG_HOME"] = str(xdg)
    return env


def _git_ignored(root, env, path):
    import os

    full = dict(os.environ)
    full.pop("XDG_CONFIG_HOME", None)
    full.update(env)
    return subprocess.run(["git", "check-ignore", "-q", path], cwd=root, env=full).returncode == 0


def _two_files(root):
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    write_tree(root, {"a.py": BAD, "scratch.py": BAD, "tmp/b.py": BAD})
    return root


def test_the_default_global_excludes_file_is_read(tmp_path):
    home = tmp_path / "home"
    write_tree(home, {".config/git/ignore": "scratch.py\ntmp/\n"})
    root = _two_files(tmp_path / "repo")
    env = _home_env(home)
    env["XDG_CONFIG_HOME"] = ""
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root, extra_env=env)
    assert _paths(result) == ["a.py"]
    assert _git_ignored(root, env, "scratch.py") and _git_ignored(root, env, "tmp/b.py")
    kept = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "--no-respect-gitignore", "."], root,
                              extra_env=env)
    assert _paths(kept) == ["a.py", "scratch.py", "tmp/b.py"]


def test_core_excludes_file_of_the_user_config_is_read(tmp_path):
    home = tmp_path / "home"
    write_tree(home, {
        ".gitconfig": '[user]\n\tname = x\n[core]\n\texcludesFile = "~/my ignore"  ; a comment\n',
        "my ignore": "scratch.py\n",
        ".config/git/ignore": "tmp/\n",  # not read: core.excludesFile names another file
    })
    root = _two_files(tmp_path / "repo")
    env = _home_env(home)
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root, extra_env=env)
    assert _paths(result) == ["a.py", "tmp/b.py"]
    assert _git_ignored(root, env, "scratch.py") and not _git_ignored(root, env, "tmp/b.py")


def test_the_repository_config_and_xdg_config_home_and_info_exclude(tmp_path):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    write_tree(xdg, {"git/ignore": "tmp/\n"})
    root = _two_files(tmp_path / "repo")
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("a.py\n")
    env = _home_env(home, xdg)
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root, extra_env=env)
    assert _paths(result) == ["scratch.py"]
    assert _git_ignored(root, env, "tmp/b.py") and _git_ignored(root, env, "a.py")
    # the repository's own core.excludesFile wins over the default one
    subprocess.run(["git", "config", "core.excludesFile", str(tmp_path / "repo-ignore")], cwd=root, check=True)
    (tmp_path / "repo-ignore").write_text("scratch.py\n")
    result = run_cli_subprocess(["lint", "--no-cache", "--format", "json", "."], root, extra_env=env)
    assert _paths(result) == ["tmp/b.py"]
    assert _git_ignored(root, env, "scratch.py") and not _git_ignored(root, env, "tmp/b.py")
