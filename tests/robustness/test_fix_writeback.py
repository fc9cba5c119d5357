"""``lint --fix`` writes fixes back without losing data (issue 9, item 3).

Each test builds a hostile tree and runs the real command: a file edited while the run goes on,
temporary files left by a killed run, symlinks, hard links, owner and mode, and kills at several
points of the write phase. The edit "while the run goes on" is made deterministic by a
``sitecustomize`` the test puts on the child's path (nothing in shapecheck reads a test switch).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.engine import writeback

REPO = Path(__file__).resolve().parents[2]

#: one SC101 with a safe fix (``view`` -> ``reshape``)
BAD = "import torch\nx = torch.randn(3, 4)\ny = x.t().view(12)\n"
FIXED = "import torch\nx = torch.randn(3, 4)\ny = x.t().reshape(12)\n"
CHANGED = "SC000 error: not fixed: the file changed on disk while shapecheck ran; run again"
EDIT = "# edited while shapecheck ran\n"
NOBODY = 65534


def shapecheck(args, cwd, extra_path=None, **kwargs):
    """``python -m shapecheck lint ARGS`` in ``cwd``; ``extra_path`` goes first on PYTHONPATH."""
    env = dict(os.environ)
    path = [str(REPO), env.get("PYTHONPATH", "")]
    if extra_path is not None:
        path.insert(0, str(extra_path))
    env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
    return subprocess.run(
        [sys.executable, "-m", "shapecheck", "lint", "--no-cache", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kwargs,
    )


def write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def temps(root: Path) -> list[str]:
    """Every name under ``root`` that looks like one of shapecheck's temporary files."""
    return sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, dirs, files in os.walk(root)
        for name in dirs + files
        if ".shapecheck-" in name
    )


def dead_pid() -> int:
    """A pid that no process has."""
    try:
        with open("/proc/sys/kernel/pid_max") as handle:
            return int(handle.read()) + 1
    except OSError:
        child = subprocess.Popen([sys.executable, "-c", ""])
        child.wait()
        return child.pid


def needs_root():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to give files another owner")


# --- a file edited while the run goes on -------------------------------------------------------

#: Installed as ``sitecustomize`` in the child: after ``b.py`` is linted, "the user" edits it.
EDITING_HOOK = f'''
import os
import shapecheck.engine.runner as _lint

_lint_one = _lint._Linter.lint


def _lint_then_edit(self, job, mode):
    result = _lint_one(self, job, mode)
    if os.path.basename(job.path) == "b.py":
        with open(job.path, "a") as handle:
            handle.write({EDIT!r})
    return result


_lint._Linter.lint = _lint_then_edit
'''


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_file_edited_during_the_run_keeps_the_edit_and_is_reported(tmp_path, jobs):
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(EDITING_HOOK)
    tree = tmp_path / "tree"
    # enough files for a process pool with --jobs 2
    names = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]
    write(tree, dict.fromkeys(names, BAD))

    proc = shapecheck(["--fix", "--jobs", jobs, "."], tree, extra_path=hook)

    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert f"b.py:1:1: {CHANGED}" in lines
    assert any(line.startswith("b.py:3:5: SC101 [*] ") for line in lines)
    assert "Fixed 5 problems, 2 remaining." in lines
    assert (tree / "b.py").read_text() == BAD + EDIT
    for name in names:
        if name != "b.py":
            assert (tree / name).read_text() == FIXED
    assert temps(tree) == []
    # run again, as the message says: the edit stays and the fix goes in
    again = shapecheck(["--fix", "."], tree)
    assert again.returncode == 0, again.stdout
    assert (tree / "b.py").read_text() == FIXED + EDIT


def test_file_edited_during_an_in_process_run(tmp_path, monkeypatch, capsys):
    from shapecheck.engine import runner as lint
    from shapecheck.frontends.cli import main

    write(tmp_path, {"a.py": BAD, "b.py": BAD})
    lint_one = lint._Linter.lint
    seen_before_b = []

    def lint_then_edit(self, job, mode):
        if job.path == "b.py":  # a.py's result is in: its fixes are on disk already
            seen_before_b.append((tmp_path / "a.py").read_text())
        result = lint_one(self, job, mode)
        if job.path == "b.py":
            Path(tmp_path / "b.py").write_text("x = 1\n")
        return result

    monkeypatch.setattr(lint._Linter, "lint", lint_then_edit)
    monkeypatch.chdir(tmp_path)
    rc = main(["lint", "--no-cache", "--fix", "--jobs", "1", "."])
    out = capsys.readouterr().out
    assert rc == 2
    assert f"b.py:1:1: {CHANGED}" in out.splitlines()
    assert (tmp_path / "a.py").read_text() == FIXED
    assert (tmp_path / "b.py").read_text() == "x = 1\n"
    assert seen_before_b == [FIXED]


def test_the_content_is_checked_after_the_temporary_file_is_written(tmp_path, monkeypatch):
    target = tmp_path / "a.py"
    target.write_text(BAD)
    write_all = writeback._write_all

    def write_then_edit(fd, data):
        write_all(fd, data)
        target.write_text(BAD + EDIT)  # lands after the temp is full, before the rename

    monkeypatch.setattr(writeback, "_write_all", write_then_edit)
    with pytest.raises(writeback.NotWritten) as caught:
        writeback.write_fixed(str(target), FIXED.encode(), BAD.encode())
    assert caught.value.message == CHANGED.split(" ", 2)[2]
    assert target.read_text() == BAD + EDIT
    assert temps(tmp_path) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    expected=st.sampled_from([b"", b"a = 1\n", b"a = 2\n", b"a = 1\n\n"]),
    current=st.sampled_from([b"", b"a = 1\n", b"a = 2\n", b"a = 1\n\n"]),
    data=st.sampled_from([b"b = 1\n", b"a = 2\n"]),
)
def test_a_file_is_written_only_while_it_holds_what_was_read(tmp_path, expected, current, data):
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    path = folder / "a.py"
    path.write_bytes(current)
    if current in (expected, data):
        writeback.write_fixed(str(path), data, expected)
        assert path.read_bytes() == data
    else:
        with pytest.raises(writeback.NotWritten):
            writeback.write_fixed(str(path), data, expected)
        assert path.read_bytes() == current
    assert os.listdir(folder) == ["a.py"]


@given(st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="/\\\x00"), min_size=1, max_size=300))
def test_every_temporary_file_name_is_recognised_and_never_a_python_file(name):
    if name in (".", ".."):
        return
    temp = os.path.basename(writeback.temp_name(name))
    assert writeback.is_temp_name(temp)
    assert not temp.endswith((".py", ".pyi"))
    assert len(os.fsencode(temp)) <= 255


def test_holds_compares_bytes_and_never_blocks(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(b"abc")
    assert writeback.holds(str(path), b"abc")
    assert not writeback.holds(str(path), b"abd")  # same size, other bytes
    assert not writeback.holds(str(path), b"abcd")
    assert not writeback.holds(str(tmp_path / "missing.py"), b"")
    os.symlink(path, tmp_path / "link.py")
    assert not writeback.holds(str(tmp_path / "link.py"), b"abc")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.py")
        assert not writeback.holds(str(tmp_path / "fifo.py"), b"")
        with pytest.raises(writeback.NotWritten, match="no longer a regular file"):
            writeback.write_fixed(str(tmp_path / "fifo.py"), b"x", b"")


# --- temporary files of killed runs ------------------------------------------------------------


@pytest.mark.parametrize("mode", [[], ["--fix"], ["--diff"]], ids=["check", "fix", "diff"])
def test_stale_temporary_files_are_removed_and_nothing_else(tmp_path, mode):
    dead, alive = dead_pid(), os.getpid()
    stale = [f".a.py.shapecheck-{dead}-0123abcd.tmp", f"sub/.b.py.shapecheck-{dead}-89abcdef.tmp",
             f".a.py.shapecheck-{alive}-11111111.tmp"]
    kept = [
        f".a.py.shapecheck-{alive}-00000000.tmp",  # a live run's, still fresh
        ".foo.tmp",
        f".a.py.shapecheck-{dead}-xyz.tmp",
        f"a.py.shapecheck-{dead}-0123abcd.tmp",
        f"other/.c.py.shapecheck-{dead}-44444444.tmp",  # a folder that is not linted
        "notes.txt",
    ]
    write(tmp_path, {"a.py": FIXED, "sub/b.py": FIXED, **dict.fromkeys(stale + kept, "keep me\n")})
    old = time.time() - writeback.STALE_AFTER_S - 60
    os.utime(tmp_path / stale[2], (old, old))
    (tmp_path / f".a.py.shapecheck-{dead}-22222222.tmp").mkdir()
    os.symlink("notes.txt", tmp_path / f".a.py.shapecheck-{dead}-33333333.tmp")
    kept += [f".a.py.shapecheck-{dead}-22222222.tmp", f".a.py.shapecheck-{dead}-33333333.tmp"]

    proc = shapecheck([*mode, "."], tmp_path)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in kept:
        assert os.path.lexists(tmp_path / name), name
    assert (tmp_path / "notes.txt").read_text() == "keep me\n"
    for name in stale:
        # --diff promises to change nothing, so it leaves them for the next run
        assert os.path.lexists(tmp_path / name) == (mode == ["--diff"]), name


def test_temporary_file_names_are_recognised_and_never_linted(tmp_path):
    name = os.path.basename(writeback.temp_name(str(tmp_path / "model.py")))
    assert name.startswith(".model.py.shapecheck-") and name.endswith(".tmp")
    assert writeback.is_temp_name(name)
    assert not writeback.is_temp_name(".model.py.tmp")
    long_name = "x" * 250 + ".py"
    assert len(os.fsencode(os.path.basename(writeback.temp_name(long_name)))) <= 255
    write(tmp_path, {"a.py": FIXED, name: BAD})
    proc = shapecheck(["--diff", "."], tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


# --- links, owner and mode ---------------------------------------------------------------------


@pytest.mark.parametrize("args", [["."], ["alias.py"]], ids=["folder", "named"])
def test_symlink_is_fixed_through_and_survives(tmp_path, args):
    write(tmp_path, {"pyproject.toml": "", "pkg/impl.py": BAD})
    os.symlink(os.path.join("pkg", "impl.py"), tmp_path / "alias.py")

    proc = shapecheck(["--fix", *args], tmp_path)

    assert proc.returncode == 0, proc.stdout
    assert "Fixed 1 problem, 0 remaining." in proc.stdout.splitlines()
    assert os.path.islink(tmp_path / "alias.py")
    assert os.readlink(tmp_path / "alias.py") == os.path.join("pkg", "impl.py")
    assert (tmp_path / "pkg" / "impl.py").read_text() == FIXED
    assert temps(tmp_path) == []


def test_symlink_out_of_the_project_is_fixed_only_when_named(tmp_path):
    write(tmp_path, {"proj/pyproject.toml": "", "proj/ok.py": BAD, "elsewhere/x.py": BAD})
    proj = tmp_path / "proj"
    os.symlink(os.path.join("..", "elsewhere", "x.py"), proj / "ext.py")
    target = os.path.realpath(tmp_path / "elsewhere" / "x.py")

    proc = shapecheck(["--fix", "."], proj)

    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    assert (
        f"ext.py:1:1: SC000 error: not fixed: a symlink to {target}, outside the project; "
        "name the link on the command line to fix it there"
    ) in lines
    assert "Fixed 1 problem, 2 remaining." in lines
    assert (tmp_path / "elsewhere" / "x.py").read_text() == BAD
    assert (proj / "ok.py").read_text() == FIXED

    named = shapecheck(["--fix", "ext.py"], proj)
    assert named.returncode == 0, named.stdout
    assert os.path.islink(proj / "ext.py")
    assert (tmp_path / "elsewhere" / "x.py").read_text() == FIXED


def test_hard_links_all_see_the_fix(tmp_path):
    write(tmp_path, {"src/a.py": BAD, "src/pkg/same.py": "", "backup/a.py": ""})
    for other in ("src/pkg/same.py", "backup/a.py"):
        os.unlink(tmp_path / other)
        os.link(tmp_path / "src/a.py", tmp_path / other)

    proc = shapecheck(["--fix", "src"], tmp_path)

    assert proc.returncode == 0, proc.stdout
    # two names of one file in the run: one fix, counted once
    assert "Fixed 1 problem, 0 remaining." in proc.stdout.splitlines()
    first = os.stat(tmp_path / "src/a.py")
    assert first.st_nlink == 3
    for other in ("src/pkg/same.py", "backup/a.py"):
        assert os.path.samefile(tmp_path / "src/a.py", tmp_path / other)
        assert (tmp_path / other).read_text() == FIXED
    assert temps(tmp_path) == []


def test_owner_group_and_mode_are_kept(tmp_path):
    needs_root()
    modes = {"a.py": 0o640, "b.py": 0o755, "c.py": 0o2750, "d.py": 0o600}
    owners = {"a.py": (NOBODY, NOBODY), "b.py": (NOBODY, 0), "c.py": (0, NOBODY), "d.py": (0, 0)}
    write(tmp_path, dict.fromkeys(modes, BAD))
    for name, mode in modes.items():
        os.chown(tmp_path / name, *owners[name])
        os.chmod(tmp_path / name, mode)

    proc = shapecheck(["--fix", "."], tmp_path)

    assert proc.returncode == 0, proc.stdout
    for name, mode in modes.items():
        info = os.stat(tmp_path / name)
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (*owners[name], mode), name
        assert (tmp_path / name).read_text() == FIXED


def _as_nobody(folder: str, name: str) -> str:
    """Run ``write_fixed(name)`` in ``folder`` as uid/gid 65534 in a forked child: its outcome."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, write, report, exit without running pytest's teardown
        outcome = "written"
        try:
            os.close(read_end)
            os.chdir(folder)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            writeback.write_fixed(name, FIXED.encode(), BAD.encode())
        except BaseException as exc:  # noqa: B036 - the child must always report and exit
            outcome = f"{type(exc).__name__}: {exc}"
        os.write(write_end, outcome.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        outcome = handle.read().decode()
    os.waitpid(pid, 0)
    return outcome


@pytest.mark.parametrize(
    "owner, folder_owner, mode, outcome",
    [
        # the temporary file cannot be given to root: the file is rewritten in place
        ((0, NOBODY), NOBODY, 0o664, "written"),
        # no new file may be created in the folder: rewritten in place
        ((NOBODY, NOBODY), 0, 0o644, "written"),
        # neither the folder nor the file is writable: an error, the file unchanged
        ((0, 0), 0, 0o644, "PermissionError"),
    ],
    ids=["foreign-owner", "read-only-folder", "read-only-file"],
)
def test_without_root_the_owner_is_kept_by_writing_in_place(owner, folder_owner, mode, outcome):
    needs_root()
    if not hasattr(os, "fork"):
        pytest.skip("needs fork to drop privileges")
    # not under tmp_path: pytest's base folder is closed to other users
    folder = tempfile.mkdtemp(prefix="shapecheck-writeback-")
    try:
        target = os.path.join(folder, "a.py")
        with open(target, "w") as handle:
            handle.write(BAD)
        os.chown(target, *owner)
        os.chmod(target, mode)
        os.chown(folder, folder_owner, folder_owner)
        os.chmod(folder, 0o755)

        got = _as_nobody(folder, "a.py")

        assert got.startswith(outcome), got
        info = os.stat(target)
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (*owner, mode)
        with open(target) as handle:
            assert handle.read() == (FIXED if outcome == "written" else BAD)
        assert [n for n in os.listdir(folder) if ".shapecheck-" in n] == []
    finally:
        shutil.rmtree(folder)


# --- modes that never write --------------------------------------------------------------------


def test_diff_and_stdin_never_write(tmp_path):
    write(tmp_path, {"a.py": BAD})
    before = os.stat(tmp_path / "a.py")
    diff = shapecheck(["--diff", "a.py"], tmp_path)
    assert diff.returncode == 1 and "+y = x.t().reshape(12)" in diff.stdout
    piped = shapecheck(["--fix", "--stdin-filename", "a.py", "-"], tmp_path, input=BAD)
    assert piped.returncode == 0 and piped.stdout == FIXED
    after = os.stat(tmp_path / "a.py")
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (tmp_path / "a.py").read_text() == BAD


# --- kills during the write phase --------------------------------------------------------------


def test_kill_during_fix_never_truncates_and_the_next_run_cleans_up(tmp_path):
    count = 60
    originals = {
        f"m{i:03d}.py": f"import torch\n\n\ndef f{i}():\n    x = torch.randn(3, {i + 2})\n    return x.t().view(-1)\n"
        for i in range(count)
    }
    fixed = {name: text.replace(".view(-1)", ".reshape(-1)") for name, text in originals.items()}
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("")

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))

    # kill as soon as a temporary file shows, then after a third and two thirds of the files
    for kill_after in (0, count // 3, 2 * count // 3):
        write(tree, originals)
        inodes = {name: os.stat(tree / name).st_ino for name in originals}
        proc = subprocess.Popen(
            [sys.executable, "-m", "shapecheck", "lint", "--fix", "--jobs", "1", "."],
            cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            while proc.poll() is None:
                entries = list(os.scandir(tree))
                replaced = sum(1 for e in entries if e.name in inodes and e.inode() != inodes[e.name])
                if replaced > kill_after or (kill_after == 0 and any(".shapecheck-" in e.name for e in entries)):
                    proc.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.0005)
        finally:
            proc.wait(timeout=300)
        for name in originals:
            assert (tree / name).read_text() in (originals[name], fixed[name]), name

    final = shapecheck(["--fix", "."], tree)
    assert final.returncode == 0, final.stdout
    assert temps(tree) == []
    for name in originals:
        assert (tree / name).read_text() == fixed[name]
