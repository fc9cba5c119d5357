"""Writing files back without losing anyone's data.

Fixed sources (``lint --fix``) go through :func:`write_fixed`:

- A file is replaced only while it still holds exactly the bytes that were linted. The check
  runs after the new content is fully written to a temporary file, right before the rename, so
  an edit made while shapecheck ran is kept and reported (:class:`NotWritten`), never overwritten.
- The new content is written to a temporary file in the target's folder, flushed to disk and
  renamed over the target (``os.replace``), so a kill at any moment leaves either the old file
  or the new one, never a truncated one. The temporary file takes the target's owner, group and
  mode first.
- A symlink is fixed through: the link stays and its target, which must be a regular file, gets
  the new content. A link met while walking a folder is followed only to a target inside the
  project or inside a folder named on the command line; git stores symlinks, so without this
  rule a cloned repository could make ``--fix`` rewrite any file the user can write. A link the
  user named on the command line is followed wherever it leads: the user asked for that file.
- A file with more than one hard link, whose owner the temporary file cannot take (not root),
  or in a folder where no file may be created, is rewritten in place, so that every link sees
  the new content and the owner stays. That write is not atomic (POSIX has no atomic way to
  change a file's content under all its names), and a kill during it can leave the file half
  written; editors make the same trade (vim's ``backupcopy=auto``).

Temporary files are named ``.<name>.shapecheck-<pid>-<8 hex digits>.tmp``. One left behind by a
killed run is removed by :func:`remove_stale_temps` on a later run, once its process is gone or
it is older than :data:`STALE_AFTER_S`; no other file is ever removed. Discovery lints ``.py``
and ``.pyi`` files only, so it never reads them.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from typing import Iterable, Optional, Sequence

#: A temporary file of a process that is still alive is left alone until it is this old (pids
#: are reused, and a temporary file lives only for the milliseconds of one write).
STALE_AFTER_S = 15 * 60

_TEMP_MARK = ".shapecheck-"
_TEMP_NAME = re.compile(r"\A\..+\.shapecheck-(?P<pid>[0-9]{1,10})-[0-9a-f]{8}\.tmp\Z", re.DOTALL)
#: room left in a 255-byte file name for the temporary file's decorations
_NAME_BYTES = 200
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)

#: The data must be on disk before the rename, or a crash could leave an empty file behind it
#: (the rename itself need not be: either the old or the new file is fine).
_flush = getattr(os, "fdatasync", os.fsync)

CHANGED_ON_DISK = "not fixed: the file changed on disk while shapecheck ran; run again"


class NotWritten(Exception):
    """Fixes deliberately left unwritten; ``message`` says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def temp_name(path: str) -> str:
    """A fresh temporary file name for ``path``, in the same folder."""
    folder, name = os.path.split(path)
    raw = os.fsencode(name)
    if len(raw) > _NAME_BYTES:
        name = os.fsdecode(raw[:_NAME_BYTES])
    return os.path.join(folder, f".{name}{_TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}.tmp")


def is_temp_name(name: str) -> bool:
    """True when ``name`` (a bare file name) is one that :func:`temp_name` makes."""
    return name.endswith(".tmp") and _TEMP_NAME.match(name) is not None


def _create_temp(path: str) -> tuple[int, str]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
    for _ in range(100):
        tmp = temp_name(path)
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def holds(path: str, expected: bytes) -> bool:
    """True when ``path`` is a regular file whose content is exactly ``expected``.

    Never blocks and never follows a final symlink: a FIFO or a link found there is "changed".
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _NOFOLLOW | _CLOEXEC | _BINARY)
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(expected):
            return False
        chunks, left = [], len(expected) + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks) == expected
    except OSError:
        return False
    finally:
        os.close(fd)


def is_within(path: str, folders: Sequence[str]) -> bool:
    """True when the real path ``path`` lies in (or is) one of the real paths ``folders``."""
    for folder in folders:
        if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
            return True
    return False


def write_fixed(
    path: str, data: bytes, expected: bytes, within: Optional[Sequence[str]] = None
) -> tuple[int, int]:
    """Give the file ``path``, read as ``expected``, the content ``data``, through any symlink.

    ``within``: real folders that a symlink may lead into (``None``: anywhere). Returns the
    file's identity (device, inode) once it holds ``data``, which it may already do when another
    name of it (a link) was fixed first. Raises :class:`NotWritten` when the file was
    deliberately left alone (it changed since it was read, it is no longer a regular file, or a
    link leads out of ``within``), ``OSError`` when writing failed; either way the file keeps its
    content.
    """
    real = os.path.realpath(path)
    if within is not None and not is_within(real, within):
        raise NotWritten(
            f"not fixed: a symlink to {real}, outside the project; "
            "name the link on the command line to fix it there"
        )
    try:
        info = os.stat(real)
    except FileNotFoundError:
        raise NotWritten(CHANGED_ON_DISK) from None
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten("not fixed: no longer a regular file")
    if holds(real, data):
        return info.st_dev, info.st_ino
    if info.st_nlink > 1 or not _replace(real, data, expected, info):
        _rewrite_in_place(real, data, expected)
    info = os.stat(real)
    return info.st_dev, info.st_ino


def _replace(real: str, data: bytes, expected: bytes, info: os.stat_result) -> bool:
    """Replace ``real`` by a temporary file; False when that cannot keep its owner, or the
    folder takes no new file (the file itself may still be writable)."""
    try:
        fd, tmp = _create_temp(real)
    except PermissionError:
        return False
    try:
        try:
            _write_all(fd, data)
            mine = os.fstat(fd)
            if hasattr(os, "fchown") and (mine.st_uid, mine.st_gid) != (info.st_uid, info.st_gid):
                try:
                    os.fchown(fd, info.st_uid, info.st_gid)
                except PermissionError:
                    _unlink_quietly(tmp)
                    return False
            if hasattr(os, "fchmod"):  # after the chown, which clears set-id bits
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
            _flush(fd)
        finally:
            os.close(fd)
        if not hasattr(os, "fchmod"):
            os.chmod(tmp, stat.S_IMODE(info.st_mode))
        if not holds(real, expected):
            raise NotWritten(CHANGED_ON_DISK)
        os.replace(tmp, real)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return True


def _rewrite_in_place(real: str, data: bytes, expected: bytes) -> None:
    """Overwrite ``real`` itself, keeping its inode (its hard links, owner, mode, attributes)."""
    if not holds(real, expected):
        raise NotWritten(CHANGED_ON_DISK)
    fd = os.open(real, os.O_WRONLY | _NOFOLLOW | _CLOEXEC | _BINARY)
    try:
        _write_all(fd, data)
        os.ftruncate(fd, len(data))
        _flush(fd)
    finally:
        os.close(fd)


def _pid_alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) would send CTRL_C_EVENT on Windows
        return True
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, ValueError):
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def remove_stale_temps(folders: Iterable[str]) -> int:
    """Remove temporary files of killed runs from ``folders``; returns how many were removed.

    Only regular files named as :func:`temp_name` names them are touched, and only once the
    process in the name is gone or the file is older than :data:`STALE_AFTER_S`.
    """
    removed = 0
    now = time.time()
    for folder in {folder or "." for folder in folders}:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            match = _TEMP_NAME.match(entry.name) if entry.name.endswith(".tmp") else None
            if match is None:
                continue
            try:
                if not entry.is_file(follow_symlinks=False):
                    continue
                age = now - entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                continue
            if age < STALE_AFTER_S and _pid_alive(int(match.group("pid"))):
                continue
            try:
                os.unlink(entry.path)
            except OSError:
                continue
            removed += 1
    return removed


__all__ = [
    "CHANGED_ON_DISK",
    "NotWritten",
    "STALE_AFTER_S",
    "holds",
    "is_temp_name",
    "is_within",
    "remove_stale_temps",
    "temp_name",
    "write_fixed",
]
