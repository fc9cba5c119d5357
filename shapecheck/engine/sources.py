"""Finding the Python files and Jupyter notebooks to lint, and reading Python files the way
Python does.

Discovery walks the given paths, skips version-control, cache, build and virtualenv folders,
the configured ``exclude`` globs and what ``.gitignore``/``.ignore`` files ignore. Decoding
follows PEP 263 (a coding cookie on line 1 or 2) and honours a UTF-8 byte-order mark, like the
interpreter; a file in UTF-16 or UTF-32 (which Python cannot run either) is reported as such
rather than as binary.
"""

from __future__ import annotations

import fnmatch
import io
import os
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Sequence

if TYPE_CHECKING:
    from shapecheck.engine.ignore_files import IgnoreRules

#: Folder names that are never linted: VCS metadata, caches, build output, virtualenvs.
SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "__pycache__", ".mypy_cache", ".pytest_cache",
        ".ruff_cache", ".shapecheck_cache", ".hypothesis", ".tox", ".nox", ".eggs",
        ".venv", "venv", ".direnv", "node_modules", "site-packages", "build", "dist",
        "_build", "__pypackages__",
    }
)


class SourceError(Exception):
    """A file that could not be read or decoded: the message and a 1-based position."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Decoded:
    """The text of a source file with what is needed to write it back byte for byte."""

    text: str
    encoding: str
    bom: bool


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def _relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` with forward slashes, or the normalised path when outside."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive on Windows
        rel = path
    if rel.startswith(".."):
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


def glob_matches(pattern: str, path: str, root: str) -> bool:
    """True when ``pattern`` matches ``path``.

    A pattern without ``/`` matches any path component (``tests``, ``*_pb2.py``); a pattern with
    one matches the path relative to ``root`` (``gen/**/*.py``, ``docs/*``). ``**`` spans folders.
    """
    rel = _relative(path, root)
    pattern = pattern.replace(os.sep, "/").rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in rel.split("/"))
    if fnmatch.fnmatchcase(rel, pattern):
        return True
    # ``dir/*`` or ``dir/**`` also covers everything below ``dir``
    parts = rel.split("/")
    return any(fnmatch.fnmatchcase("/".join(parts[:i]), pattern) for i in range(1, len(parts)))


def _excluded(path: str, excludes: Sequence[str], root: str) -> bool:
    return any(glob_matches(p, path, root) for p in excludes)


def display_path(path: str) -> str:
    """``path`` as the reports show it: normalised, with ``/`` between its parts."""
    return os.path.normpath(path).replace(os.sep, "/")


def read_error(exc: OSError) -> str:
    """The ``SC000`` message of a file or folder that cannot be read: ``cannot read: <why>``."""
    return f"cannot read: {(exc.strerror or str(exc)).lower()}"


#: Suffixes of the Python files a folder walk lints.
PYTHON_SUFFIXES = (".py", ".pyi")
#: Suffixes of every file a folder walk lints: Python files and Jupyter notebooks.
LINTED_SUFFIXES = PYTHON_SUFFIXES + (".ipynb",)


@dataclass
class Discovery:
    """What :func:`discover` found: the files to lint (sorted), the paths that cannot be read
    and the files named on the command line that are not linted, each with why."""

    files: list[str]
    unreadable: list[tuple[str, str]]
    skipped: list[tuple[str, str]]


def skip_reason(path: str) -> Optional[str]:
    """Why a file named on the command line is not linted (``None``: it is): a suffix other
    than ``.py``/``.pyi``/``.ipynb``. A file without a suffix (a script) is linted."""
    suffix = os.path.splitext(os.path.basename(path))[1].lower()
    if not suffix or suffix in LINTED_SUFFIXES:
        return None
    return f"not a Python file ({suffix}); only .py, .pyi and .ipynb files are linted"


def discover(
    paths: Iterable[str], excludes: Sequence[str] = (), root: Optional[str] = None,
    respect_ignore_files: bool = True,
) -> Discovery:
    """The files to lint under ``paths`` (see :class:`Discovery`).

    A folder is walked for ``.py``, ``.pyi`` and ``.ipynb`` files, skipping the exclude globs and, with
    ``respect_ignore_files``, what ``.gitignore``, ``.ignore`` and ``.git/info/exclude`` ignore
    (:mod:`shapecheck.engine.ignore_files`). A file named explicitly is linted even when an
    ignore file ignores it (as ruff does), unless an exclude glob matches it or its suffix is
    not Python's (:func:`skip_reason`). Anything under a folder with a ``.py`` name that is not a
    folder is returned as a file, even a FIFO or a device: reading checks what it is (see
    :mod:`shapecheck.engine.guards`). Returned paths are as given (normalised, with ``/``).
    """
    root = root or os.getcwd()
    found: set[str] = set()
    unreadable: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    for given in paths:
        if os.path.isdir(given):
            for file in _walk(given, excludes, root, unreadable, respect_ignore_files):
                found.add(display_path(file))
        elif os.path.exists(given):
            if _excluded(given, excludes, root):
                continue
            why = skip_reason(given)
            if why is None:
                found.add(display_path(given))
            else:
                skipped.append((display_path(given), why))
        else:
            unreadable.append((given, "cannot read: no such file or directory"))
    return Discovery(sorted(found), unreadable, skipped)


def collect_files(
    paths: Iterable[str], excludes: Sequence[str] = (), root: Optional[str] = None
) -> tuple[list[str], list[tuple[str, str]]]:
    """The files to lint under ``paths``, sorted, and the paths that cannot be read, each with
    why (``"cannot read: no such file or directory"``); see :func:`discover`."""
    found = discover(paths, excludes, root)
    return found.files, found.unreadable


def _walk(
    top: str, excludes: Sequence[str], root: str, unreadable: list[tuple[str, str]], respect_ignore_files: bool,
) -> Iterator[str]:
    def folder_error(exc: OSError) -> None:
        if exc.filename is not None:
            unreadable.append((display_path(exc.filename), read_error(exc)))

    rules: dict[str, IgnoreRules] = {}
    if respect_ignore_files:
        from shapecheck.engine.ignore_files import IgnoreRules

        rules[os.path.normpath(top)] = IgnoreRules.for_folder(top)
    for dirpath, dirnames, filenames in os.walk(top, onerror=folder_error):
        here = rules.pop(os.path.normpath(dirpath), None) if respect_ignore_files else None
        keep = []
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            if name in SKIPPED_DIRS or name.endswith(".egg-info") or _is_virtualenv(full):
                continue
            if _excluded(full, excludes, root):
                continue
            if here is not None:
                if here.ignored(full, True):
                    continue
                rules[os.path.normpath(full)] = here.enter(full)
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.endswith(LINTED_SUFFIXES):
                full = os.path.join(dirpath, name)
                if _excluded(full, excludes, root):
                    continue
                if here is not None and here.ignored(full, False):
                    continue
                yield full


def _line_col(data: bytes, index: int) -> tuple[int, int]:
    """1-based line and column (in bytes) of byte ``index`` in ``data``."""
    line = data.count(b"\n", 0, index) + 1
    start = data.rfind(b"\n", 0, index) + 1
    return line, index - start + 1


_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"),
)


def _wide_encoding(data: bytes) -> Optional[str]:
    """``"UTF-16"`` or ``"UTF-32"`` when ``data`` looks like text in that encoding (a byte-order
    mark, or mostly ASCII text with the zero bytes of one of them), else ``None``."""
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name
    sample = data[:4096]
    if len(sample) < 4 or b"\x00" not in sample:
        return None
    for width, name in ((4, "UTF-32"), (2, "UTF-16")):
        usable = len(sample) - len(sample) % width
        units = [sample[i:i + width] for i in range(0, usable, width)]
        for low in (0, width - 1):  # little- or big-endian: where the ASCII byte sits
            ascii_units = sum(
                1 for u in units
                if 0 < u[low] < 0x80 and not any(u[i] for i in range(width) if i != low)
            )
            if ascii_units * 4 >= len(units) * 3:
                return name
    return None


def decode_source(data: bytes) -> Decoded:
    """Decode source bytes as the interpreter would; raises :class:`SourceError` when it can't."""
    wide = _wide_encoding(data)
    if wide is not None:
        raise SourceError(
            f"cannot decode: the file looks like {wide}; shapecheck reads UTF-8 or a PEP 263 "
            "coding, as Python does (save the file as UTF-8)",
            1,
            1,
        )
    nul = data.find(b"\x00")
    if nul != -1:
        line, col = _line_col(data, nul)
        raise SourceError("binary file: source code cannot contain null bytes", line, col)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        # no usable cookie: undecodable first lines show up below with their position
        encoding = "utf-8"
        try:
            data.decode(encoding)
        except UnicodeDecodeError:
            pass
        else:
            raise SourceError(f"cannot decode: {getattr(exc, 'msg', exc)}", 1, 1) from None
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        raise SourceError(
            f"cannot decode as {encoding}: byte 0x{data[exc.start]:02x} is invalid "
            f"(declare the file's encoding with a PEP 263 coding comment)",
            line,
            col,
        ) from None
    except LookupError:
        raise SourceError(f"cannot decode: unknown encoding {encoding!r}", 1, 1) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return Decoded(text, "utf-8" if encoding == "utf-8-sig" else encoding, bom)


def encode_source(text: str, decoded: Decoded) -> bytes:
    """The bytes to write back for ``text`` read as ``decoded`` (same encoding, same BOM)."""
    data = text.encode(decoded.encoding)
    return (b"\xef\xbb\xbf" + data) if decoded.bom else data
