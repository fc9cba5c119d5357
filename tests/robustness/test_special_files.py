"""Special files and unreadable folders (issue 9, items 7 and 11): a FIFO named ``*.py`` used to
hang the run forever and a ``*.py`` link to ``/dev/zero`` was read until memory ran out. Only
regular files (or links to them) are read, never more than the size limit; anything else named
``*.py``, found in a folder or named on the command line, is one ``SC000`` that says what it is,
and an unreadable folder is reported as an unreadable file is. The other files keep their results.

The cases run the real command (``python -m shapecheck``) on a tree built in ``tmp_path``; the
ones that need another user than root run the command's entry point in a child process that
drops root first (Python's own installation may be closed to other users), and skip when that
is impossible.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534

BAD = "import torch\nx = torch.zeros(2, 3)\ny = x.view(5)\n"
SC103 = (
    "SC103 error: `x` has shape (2, 3) (6 elements) but `.view(5)` needs 5 elements; torch raises "
    "`shape '[5]' is invalid for input of size 6`"
)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


def shapecheck(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """``python -m shapecheck ARGS`` in ``cwd`` (``lint`` in the ``concise`` text format); a hang
    fails the test instead of the suite."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if args[:1] == ["lint"]:
        args = ["lint", "--output-format", "concise", *args[1:]]
    return subprocess.run(
        [sys.executable, "-m", "shapecheck", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300,
    )


@needs_fifo
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_special_files_found_in_a_folder_are_reported_and_never_read(tmp_path, jobs):
    for i in range(5):
        (tmp_path / f"good{i}.py").write_text(BAD)
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    os.symlink("good0.py", tmp_path / "link.py")  # a link to a regular file is linted
    os.symlink("gone.py", tmp_path / "dangling.py")

    result = shapecheck(["lint", "--no-cache", "--jobs", jobs, "."], tmp_path)

    assert result.returncode == 2, result.stderr
    assert result.stdout.splitlines()[:9] == [
        "dangling.py:1:1: SC000 error: cannot read: no such file or directory",
        *[f"good{i}.py:3:5: {SC103}" for i in range(5)],
        f"link.py:3:5: {SC103}",
        "pipe.py:1:1: SC000 error: not linted: not a regular file (a named pipe)",
        "zero.py:1:1: SC000 error: not linted: not a regular file (a character device)",
    ]


@needs_fifo
def test_special_files_named_on_the_command_line_are_reported(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    (tmp_path / "good.py").write_text(BAD)

    result = shapecheck(["lint", "--no-cache", "pipe.py", "zero.py", "/dev/null", "good.py"], tmp_path)

    assert result.returncode == 2
    assert result.stdout.splitlines()[:4] == [
        "/dev/null:1:1: SC000 error: not linted: not a regular file (a character device)",
        f"good.py:3:5: {SC103}",
        "pipe.py:1:1: SC000 error: not linted: not a regular file (a named pipe)",
        "zero.py:1:1: SC000 error: not linted: not a regular file (a character device)",
    ]


@needs_fifo
def test_a_fifo_with_a_writer_attached_is_not_read_either(tmp_path):
    os.mkfifo(tmp_path / "pipe.py")
    # a writer that keeps the pipe open: a blocking read would wait for it forever
    writer = subprocess.Popen(
        ["sh", "-c", "exec 3>pipe.py; sleep 300"], cwd=tmp_path, stdout=subprocess.DEVNULL,
    )
    try:
        result = shapecheck(["lint", "--no-cache", "pipe.py"], tmp_path)
    finally:
        writer.kill()
        writer.wait()

    assert (result.returncode, result.stdout.splitlines()[:1]) == (
        2, ["pipe.py:1:1: SC000 error: not linted: not a regular file (a named pipe)"]
    )


# --- as another user ---------------------------------------------------------------------------


def _lint_as_nobody(folder: str, args: list[str]) -> tuple[int, str]:
    """``shapecheck ARGS`` (its entry point) run in ``folder`` by uid/gid 65534 in a forked
    child: the exit status and what it printed."""
    from shapecheck.frontends.cli import main

    # everything the command imports is imported here, while root can still read the files
    warm = tempfile.mkdtemp(prefix="shapecheck-warm-")
    try:
        Path(warm, "a.py").write_text(BAD)
        _run_main(main, warm, ["lint", "--no-cache", "--jobs", "1", "a.py"])
    finally:
        shutil.rmtree(warm)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop root, lint, report, exit without running pytest's teardown
        status, out = 99, ""
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            status, out = _run_main(main, folder, args)
        except BaseException as exc:  # noqa: B036 - the child must always report and exit
            out = f"{type(exc).__name__}: {exc}"
        os.write(write_end, f"{status}\n{out}".encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as handle:
        status, _, out = handle.read().decode().partition("\n")
    os.waitpid(pid, 0)
    return int(status), out


def _run_main(main, folder: str, args: list[str]) -> tuple[int, str]:
    old = os.getcwd(), sys.stdout, sys.stderr
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    os.chdir(folder)
    try:
        status = main(args)
        return status, sys.stdout.getvalue() + sys.stderr.getvalue()
    finally:
        os.chdir(old[0])
        sys.stdout, sys.stderr = old[1], old[2]


@pytest.fixture
def open_folder():
    """A folder that user 65534 may enter (pytest's own base folder is closed to others)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not hasattr(os, "fork"):
        pytest.skip("needs root and fork, to run the command as another user")
    folder = tempfile.mkdtemp(prefix="shapecheck-guards-")
    os.chmod(folder, 0o755)
    try:
        yield Path(folder)
    finally:
        for path, dirs, _ in os.walk(folder):
            for name in dirs:
                os.chmod(os.path.join(path, name), 0o755)
        shutil.rmtree(folder)


def test_an_unreadable_folder_is_reported_like_an_unreadable_file(open_folder):
    for name in ("good.py", "sub/good.py", "locked/hidden.py", "secret.py"):
        path = open_folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(BAD)
        os.chmod(path.parent, 0o755)
    os.chmod(open_folder / "locked", 0o000)
    os.chmod(open_folder / "secret.py", 0o000)

    status, out = _lint_as_nobody(str(open_folder),
                                  ["lint", "--no-cache", "--output-format", "concise", "--jobs", "1", "."])

    assert (status, out.splitlines()[:4]) == (2, [
        f"good.py:3:5: {SC103}",
        "locked:1:1: SC000 error: cannot read: permission denied",
        "secret.py:1:1: SC000 error: cannot read: permission denied",
        f"sub/good.py:3:5: {SC103}",
    ]), out
    assert stat.S_IMODE(os.stat(open_folder / "locked").st_mode) == 0
