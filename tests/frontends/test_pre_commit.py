"""The pre-commit hook as a user runs it: a real ``pre-commit run`` on staged files of a real git
repository, with the hook of ``.pre-commit-hooks.yaml`` (as a ``repo: local`` hook, so that it
runs offline with this checkout): one report, one summary, no ``--fix`` advice."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import BAD, GOOD, REPO, write_tree

pytest.importorskip("pre_commit", reason="pre-commit is not installed (it is in the test extra)")
yaml = pytest.importorskip("yaml")

if shutil.which("git") is None:
    pytest.skip("git is not installed", allow_module_level=True)


def _env(home) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "PRE_COMMIT") and not k.startswith("GIT_")}
    env.update({
        "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
        "PRE_COMMIT_HOME": str(home / "pre-commit-home"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
    })
    return env


def _local_hooks() -> list:
    """The declared hooks as ``repo: local`` hooks that run this checkout's ``shapecheck``."""
    hooks = []
    for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")):
        entry = hook["entry"]
        assert entry.startswith("shapecheck ")
        hooks.append({**hook, "language": "system",
                      "entry": f"{sys.executable} -m shapecheck{entry[len('shapecheck'):]}"})
    return hooks


def _repo(tmp_path, files: dict, hook_ids: tuple) -> tuple:
    root = tmp_path / "project"
    root.mkdir()
    env = _env(tmp_path)
    subprocess.run(["git", "init", "-q", "."], cwd=root, env=env, check=True)
    hooks = [h for h in _local_hooks() if h["id"] in hook_ids]
    config = {"repos": [{"repo": "local", "hooks": hooks}]}
    write_tree(root, {**files, ".pre-commit-config.yaml": yaml.safe_dump(config)})
    subprocess.run(["git", "add", "."], cwd=root, env=env, check=True)
    return root, env


def _pre_commit(root, env) -> tuple:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--color", "never"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc, time.perf_counter() - start


def test_a_hook_run_prints_one_report_with_one_summary_and_no_fix_advice(tmp_path):
    files = {f"pkg/bad_{i}.py": BAD for i in range(6)}
    files.update({"pkg/good.py": GOOD, "notes.txt": "not python"})
    root, env = _repo(tmp_path, files, ("shapecheck",))
    proc, seconds = _pre_commit(root, env)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "shapecheck" in out and "Failed" in out
    assert out.count("Found 6 problems (6 fixable).") == 1
    assert out.count("Found ") == 1
    assert "--fix" not in out
    assert sorted(line.split(":")[0] for line in out.splitlines() if ": SC101 [*] error:" in line) == [
        f"pkg/bad_{i}.py" for i in range(6)
    ]
    print(f"pre-commit run, 8 staged files, 6 findings: {seconds:.2f}s")


def test_a_clean_hook_run_passes(tmp_path):
    root, env = _repo(tmp_path, {"a.py": GOOD, "b.py": GOOD}, ("shapecheck",))
    proc, seconds = _pre_commit(root, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout
    print(f"pre-commit run, 3 staged files, clean: {seconds:.2f}s")


def test_the_fix_hook_fixes_and_reports_once(tmp_path):
    root, env = _repo(tmp_path, {"bad.py": BAD, "b2.py": BAD}, ("shapecheck-fix",))
    proc, _ = _pre_commit(root, env)
    assert proc.returncode == 1  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in proc.stdout
    assert proc.stdout.count("Fixed 2 problems, 0 remaining.") == 1
    assert ".reshape(12)" in (root / "bad.py").read_text(encoding="utf-8")
