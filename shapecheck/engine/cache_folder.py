"""The cache's folder, reached without ever following a link.

``.shapecheck_cache`` may be anything a repository holds: a symbolic link to a folder elsewhere,
someone else's folder, links, FIFOs or huge files inside it. The folder is used only when it is a
real folder directly under the project root, owned by the current user. Every file in it is
opened relative to that folder (an open descriptor where the platform allows, so a folder renamed
or swapped meanwhile changes nothing) with ``O_NOFOLLOW``, and is read only when it is a regular
file owned by the user and of a sane size. A write goes to a fresh temporary file in the folder,
then is renamed over its name, which replaces a link rather than writing through it.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Optional

FOLDER_NAME = ".shapecheck_cache"
#: A cache file larger than this is not read (it is treated as absent, then replaced).
MAX_FILE_BYTES = 256 * 1024 * 1024
TEMP_PREFIX = ".tmp-"
TEMP_SUFFIX = ".part"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
#: POSIX: every operation is relative to the open folder. Elsewhere, paths checked with lstat.
_AT = bool(_NOFOLLOW and _DIRECTORY) and os.listdir in os.supports_fd and all(
    f in os.supports_dir_fd for f in (os.open, os.stat, os.mkdir, os.unlink, os.rename)
)


class UnsafeFolder(Exception):
    """The cache folder exists but must not be used; the message says why."""


def _owned(info: os.stat_result) -> bool:
    geteuid = getattr(os, "geteuid", None)
    return geteuid is None or info.st_uid == geteuid()


def _check_folder(path: str, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise UnsafeFolder(f"{path} is a symbolic link")
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeFolder(f"{path} is not a folder")
    if not _owned(info):
        raise UnsafeFolder(f"{path} belongs to another user")


class CacheFolder:
    """An open, checked cache folder: read, write and remove the files directly inside it."""

    def __init__(self, path: str, fd: Optional[int]) -> None:
        self.path = path
        self._fd = fd

    @classmethod
    def open(cls, root: str, create: bool) -> Optional["CacheFolder"]:
        """The cache folder under ``root``, created when ``create``.

        ``None`` when it is absent (and not created) or cannot be reached (a read-only or
        missing project); :class:`UnsafeFolder` when it exists but must not be used.
        """
        path = os.path.join(root, FOLDER_NAME)
        try:
            return cls._open_at(root, path, create) if _AT else cls._open_by_path(root, path, create)
        except UnsafeFolder:
            raise
        except OSError:
            return None

    @classmethod
    def _open_at(cls, root: str, path: str, create: bool) -> "CacheFolder":
        root_fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        try:
            if create:
                try:
                    os.mkdir(FOLDER_NAME, 0o777, dir_fd=root_fd)
                except FileExistsError:
                    pass
            try:
                flags = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _NONBLOCK | _CLOEXEC
                fd = os.open(FOLDER_NAME, flags, dir_fd=root_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    _check_folder(path, os.stat(FOLDER_NAME, dir_fd=root_fd, follow_symlinks=False))
                raise
        finally:
            os.close(root_fd)
        try:
            _check_folder(path, os.fstat(fd))
        except UnsafeFolder:
            os.close(fd)
            raise
        return cls(path, fd)

    @classmethod
    def _open_by_path(cls, root: str, path: str, create: bool) -> "CacheFolder":
        if create:
            try:
                os.mkdir(path)
            except FileExistsError:
                pass
        _check_folder(path, os.lstat(path))
        expected = os.path.join(os.path.realpath(root), FOLDER_NAME)
        if os.path.normcase(os.path.realpath(path)) != os.path.normcase(expected):
            raise UnsafeFolder(f"{path} leads outside the project")  # e.g. a Windows junction
        return cls(path, None)

    def close(self) -> None:
        """Release the folder's descriptor."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "CacheFolder":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _open_file(self, name: str, flags: int, mode: int = 0o666) -> int:
        flags |= _NOFOLLOW | _CLOEXEC | _BINARY
        if self._fd is not None:
            return os.open(name, flags, mode, dir_fd=self._fd)
        full = os.path.join(self.path, name)
        if flags & os.O_EXCL:
            return os.open(full, flags, mode)
        before = os.lstat(full)
        if not stat.S_ISREG(before.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", full)
        fd = os.open(full, flags, mode)
        after = os.fstat(fd)
        if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
            os.close(fd)
            raise OSError(errno.EINVAL, "the file changed while being opened", full)
        return fd

    def _open_own_file(self, name: str) -> Optional[tuple[int, os.stat_result]]:
        """A descriptor on ``name`` when it is a regular file of ours (never a link or a FIFO)."""
        try:
            fd = self._open_file(name, os.O_RDONLY | _NONBLOCK)
        except OSError:
            return None
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode) and _owned(info):
            return fd, info
        os.close(fd)
        return None

    def read(self, name: str) -> Optional[bytes]:
        """The bytes of ``name``; ``None`` when absent, not a regular file of ours, or too large."""
        opened = self._open_own_file(name)
        if opened is None:
            return None
        fd, info = opened
        try:
            if info.st_size > MAX_FILE_BYTES:
                return None
            chunks: list[bytes] = []
            size = 0
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                size += len(chunk)
                if size > MAX_FILE_BYTES:  # it grew while being read
                    return None
                chunks.append(chunk)
        except OSError:
            return None
        finally:
            os.close(fd)

    def head(self, name: str, size: int) -> Optional[tuple[bytes, float]]:
        """The first ``size`` bytes of ``name`` and its modification time, when it is a regular
        file of ours; else ``None``."""
        opened = self._open_own_file(name)
        if opened is None:
            return None
        fd, info = opened
        try:
            return os.read(fd, size), info.st_mtime
        except OSError:
            return None
        finally:
            os.close(fd)

    def write(self, name: str, data: bytes) -> None:
        """Replace ``name`` with ``data`` atomically (a temporary file in this folder, renamed).

        Raises ``OSError`` when ``name`` is there but is no regular file of ours (a link, a
        FIFO, a folder): it is left as it is.
        """
        try:
            if self._fd is not None:
                info = os.stat(name, dir_fd=self._fd, follow_symlinks=False)
            else:
                info = os.lstat(os.path.join(self.path, name))
        except FileNotFoundError:
            pass
        else:
            if not (stat.S_ISREG(info.st_mode) and _owned(info)):
                raise OSError(errno.EEXIST, "not a regular file of ours", name)
        temp = f"{TEMP_PREFIX}{os.urandom(8).hex()}{TEMP_SUFFIX}"
        fd = self._open_file(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            if self._fd is not None:
                os.replace(temp, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
            else:
                os.replace(os.path.join(self.path, temp), os.path.join(self.path, name))
        except BaseException:
            self.remove(temp)
            raise

    def create(self, name: str, data: bytes) -> None:
        """Write ``name`` only if nothing of that name exists (link or not)."""
        try:
            fd = self._open_file(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def names(self) -> list[str]:
        """The names in the folder."""
        return os.listdir(self._fd if self._fd is not None else self.path)

    def remove(self, name: str) -> None:
        """Unlink ``name`` (a link is removed itself, never its target); errors are ignored."""
        try:
            if self._fd is not None:
                os.unlink(name, dir_fd=self._fd)
            else:
                os.unlink(os.path.join(self.path, name))
        except OSError:
            pass
