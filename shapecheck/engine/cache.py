"""The result cache: per-file diagnostics, reused while nothing that decides them has changed.

Files live in ``<project root>/.shapecheck_cache/``, reached only through
:mod:`shapecheck.engine.cache_folder` (never through a link, never outside the project). Two kinds:

- ``results-<key>.json``, one per combination of shapecheck version, the code of the linter
  itself (a hash of its sources, so a development checkout never reads stale results), the
  installed libcst, the Python version and the selected rule codes. Each linted path maps to
  the SHA-256 of its bytes and its diagnostics. Per-file ignores are applied after the cache,
  so they are not part of the key. A result holding an ``SC000`` or ``SC999`` is never stored.
- ``rules-<fingerprint>.json``, the manifest: the rule infos of this linter code, so that a run
  answered entirely from the cache imports neither the rules nor libcst.

Every file starts with a header line, ``shapecheck-cache <format> <sha256 of the rest>``: the
mark by which the cache knows its own files (it prunes nothing else) and a check of their
integrity. Everything read is validated; anything unexpected is a miss, and is rewritten. The
cache is never used with ``--fix``, ``--diff`` or stdin.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from dataclasses import fields
from typing import Any, Optional

from shapecheck.engine.cache_folder import TEMP_PREFIX, TEMP_SUFFIX, CacheFolder, UnsafeFolder
from shapecheck.engine.diagnostics import ENGINE_CODES, Diagnostic, Related, RuleInfo
from shapecheck.version import __version__

_FORMAT = 3
#: How many results files (configurations) one project keeps.
KEEP_FILES = 8
#: How many linted paths one results file remembers (those of the latest runs are kept).
MAX_ENTRIES = 100_000
#: A temporary file this old was left by a killed run, and is removed.
STALE_TEMP_SECONDS = 3600
_MARK = b"shapecheck-cache "
_RESULTS_NAME = re.compile(r"results-[0-9a-f]{20}\.json\Z")
_RULES_NAME = re.compile(r"rules-[0-9a-f]{20}\.json\Z")
_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[0-9a-f]{16}" + re.escape(TEMP_SUFFIX) + r"\Z")
_DIGEST = re.compile(r"[0-9a-f]{64}\Z")
_CODE = re.compile(r"SC[0-9]{3}\Z")
_GITIGNORE = b"# created by shapecheck\n*\n"
#: No line or column read from the cache is this large.
_MAX_POSITION = 1 << 31

_FINGERPRINT: Optional[str] = None
_LIBCST_IDENTITY: Optional[list] = None
_WARNED: set[str] = set()


def _code_fingerprint() -> str:
    """A hash of every source file of the shapecheck package (linter and rules)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.sha256()
        top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the shapecheck package
        for folder, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    digest.update(os.path.relpath(path, top).encode())
                    try:
                        with open(path, "rb") as handle:
                            digest.update(handle.read())
                    except OSError:
                        pass
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


def _libcst_identity() -> list:
    """Which libcst a run would import: its location and the size and time of its top module,
    which an upgrade or a reinstall changes. Found with importlib's finder, which imports nothing
    (a run answered from the cache never imports libcst); reading its metadata instead would
    cost about 40 ms a run, as much as a third of a fully cached run."""
    global _LIBCST_IDENTITY
    if _LIBCST_IDENTITY is None:
        import importlib.util

        try:
            spec = importlib.util.find_spec("libcst")
            origin = spec.origin if spec is not None else None
            info = os.stat(origin) if origin else None
        except (ImportError, ValueError, OSError):
            origin = info = None
        if info is not None:
            _LIBCST_IDENTITY = [origin, info.st_size, info.st_mtime_ns]
        else:  # not a plain file (a zip import?): its metadata, then
            from importlib import metadata

            try:
                _LIBCST_IDENTITY = [metadata.version("libcst")]
            except metadata.PackageNotFoundError:
                _LIBCST_IDENTITY = ["absent"]
    return _LIBCST_IDENTITY


def results_key(codes: list[str]) -> list:
    """Everything the cached diagnostics depend on besides the files themselves."""
    return [
        _FORMAT, __version__, _code_fingerprint(), _libcst_identity(),
        sys.implementation.name, sys.version, sorted(codes),
    ]


def _short_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:20]


def _manifest_name() -> str:
    return f"rules-{_code_fingerprint()[:20]}.json"


# --- the file format: a marked, checksummed header line, then JSON ---------------------------


def _encode(body: Any) -> bytes:
    data = json.dumps(body, separators=(",", ":")).encode("utf-8")
    return _MARK + f"{_FORMAT} {hashlib.sha256(data).hexdigest()}\n".encode() + data


def _decode(blob: Optional[bytes]) -> Any:
    """The JSON body of a cache file, or ``None`` when it is unmarked, altered or not JSON."""
    if blob is None:
        return None
    header, newline, data = blob.partition(b"\n")
    if not newline or header != _MARK + f"{_FORMAT} {hashlib.sha256(data).hexdigest()}".encode():
        return None
    try:
        return json.loads(data)
    except (ValueError, RecursionError):  # RecursionError: JSON nested too deeply
        return None


def _is_ours(folder: CacheFolder, name: str) -> Optional[float]:
    """The modification time of ``name`` when it is a regular file of ours carrying the mark."""
    found = folder.head(name, len(_MARK))
    if found is None or found[0] != _MARK:
        return None
    return found[1]


def _warn(message: str) -> None:
    """One line on stderr, once per process for each message."""
    if message not in _WARNED:
        _WARNED.add(message)
        sys.stderr.write(f"shapecheck: warning: not using the cache: {message}\n")


def _open_folder(root: str, create: bool) -> tuple[Optional[CacheFolder], bool]:
    """The cache folder (``None`` when absent or unreachable), and whether it may be used."""
    try:
        return CacheFolder.open(root, create), True
    except UnsafeFolder as exc:
        _warn(str(exc))
        return None, False


def _save(root: str, name: str, body: Any, stale: Any) -> None:
    """Write ``name`` into the cache folder, then remove the files of ours that ``stale`` picks
    from ``[(mtime, name), ...]`` of the other marked files; any OS error means no cache."""
    folder, _ = _open_folder(root, create=True)
    if folder is None:
        return
    with folder:
        try:
            folder.create(".gitignore", _GITIGNORE)
            folder.write(name, _encode(body))
            candidates, now = [], time.time()
            for other in folder.names():
                if other == name:
                    continue
                if _TEMP_NAME.match(other):
                    found = folder.head(other, len(_MARK))
                    # left by a killed run: ours when it holds the mark, or as much of it as was written
                    if found is not None and _MARK.startswith(found[0]) and now - found[1] > STALE_TEMP_SECONDS:
                        folder.remove(other)
                    continue
                mtime = _is_ours(folder, other)
                if mtime is not None:
                    candidates.append((mtime, other))
            for other in stale(sorted(candidates, reverse=True)):
                folder.remove(other)
        except OSError:
            pass


# --- the manifest ----------------------------------------------------------------------------


def _valid_rule_rows(rows: Any) -> bool:
    if type(rows) is not list or not rows:
        return False
    for row in rows:
        if not (
            type(row) is list and len(row) == 5
            and type(row[0]) is str and _CODE.match(row[0]) and row[0] not in ENGINE_CODES
            and type(row[1]) is str and row[1] and type(row[2]) is str and row[2]
            and type(row[3]) is bool and type(row[4]) is bool
        ):
            return False
    return len({r[0] for r in rows}) == len(rows) == len({r[1] for r in rows})


def load_manifest(root: str) -> Optional[list]:
    """The rule infos saved for this exact linter code under ``root``, or ``None``."""
    folder, _ = _open_folder(root, create=False)
    if folder is None:
        return None
    with folder:
        body = _decode(folder.read(_manifest_name()))
    if (
        type(body) is not dict or set(body) != {"key", "rules"}
        or body["key"] != [_FORMAT, _code_fingerprint()] or not _valid_rule_rows(body["rules"])
    ):
        return None
    return [RuleInfo(*row) for row in body["rules"]]


def save_manifest(root: str, infos: list) -> None:
    """Save the rule infos for this linter code; drop the manifests of other versions."""
    rows = [[i.code, i.name, i.severity, bool(i.default_enabled), bool(i.fixable)] for i in infos]
    body = {"key": [_FORMAT, _code_fingerprint()], "rules": rows}
    _save(root, _manifest_name(), body, lambda found: [n for _, n in found if _RULES_NAME.match(n)])


# --- the results -----------------------------------------------------------------------------


_FIELD_TYPES = {"int": int, "str": str, "bool": bool}
_ROW_SCHEMA: Optional[list] = None
#: the column of a row that holds the related places, each ``[line, column, end_line, end_column, label,
#: cell]`` (``cell`` ``null`` outside notebooks)
_RELATED = "related"


def _field_type(annotation: Any) -> Optional[tuple[type, bool]]:
    """The JSON-safe type of a field annotated ``annotation`` and whether it may be ``None``."""
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation).replace(" ", "")
    nullable = False
    if text.startswith("Optional[") and text.endswith("]"):
        text, nullable = text[len("Optional["):-1], True
    elif text.endswith("|None"):
        text, nullable = text[: -len("|None")], True
    kind = _FIELD_TYPES.get(text)
    return (kind, nullable) if kind is not None else None


def _row_schema() -> Optional[list]:
    """``(name, type, nullable)`` of each field of a :class:`~shapecheck.engine.diagnostics.Diagnostic` but
    its path: the columns of a stored row, in the order the class takes them. ``None`` when a
    field holds something a JSON row cannot (then nothing is cached)."""
    global _ROW_SCHEMA
    if _ROW_SCHEMA is None:
        schema: list[tuple[str, type, bool]] = []
        for item in fields(Diagnostic)[1:]:
            if item.name == _RELATED:
                schema.append((_RELATED, list, False))
                continue
            found = _field_type(item.type)
            if found is None:
                return None
            schema.append((item.name, *found))
        _ROW_SCHEMA = schema
    return _ROW_SCHEMA


def _valid_value(column: tuple, value: Any, codes: frozenset) -> bool:
    name, kind, nullable = column
    if value is None:
        return nullable
    if type(value) is not kind:  # ``type``: True is no int here
        return False
    if kind is list:
        return all(_valid_place(place) for place in value)
    if kind is int:
        return 0 <= value < _MAX_POSITION
    return name != "code" or value in codes


def _valid_place(place: Any) -> bool:
    """A stored related place: four positions, a label and a cell number or ``None``."""
    return (type(place) is list and len(place) == 6 and type(place[4]) is str
            and all(type(n) is int and 0 <= n < _MAX_POSITION for n in place[:4])
            and (place[5] is None or (type(place[5]) is int and 0 < place[5] < _MAX_POSITION)))


def _row(d: Diagnostic, schema: list) -> list:
    """The stored row of ``d``: its fields but the path, the related places as lists."""
    return [[[p.line, p.column, p.end_line, p.end_column, p.label, p.cell] for p in d.related]
            if column[0] == _RELATED else getattr(d, column[0]) for column in schema]


def _diagnostic(path: str, row: list, schema: list) -> Diagnostic:
    """The diagnostic of ``path`` that a (validated) stored row holds."""
    values = dict(zip((column[0] for column in schema), row))
    if _RELATED in values:
        values[_RELATED] = tuple(Related(*place) for place in values[_RELATED])
    return Diagnostic(path, **values)


def _valid_entry(entry: Any, schema: list, codes: frozenset) -> bool:
    if type(entry) is not list or len(entry) != 2:
        return False
    digest, rows = entry
    if type(digest) is not str or not _DIGEST.match(digest) or type(rows) is not list:
        return False
    for row in rows:
        if type(row) is not list or len(row) != len(schema):
            return False
        if not all(_valid_value(column, value, codes) for column, value in zip(schema, row)):
            return False
    return True


class Cache:
    """Cached diagnostics of one configuration."""

    def __init__(self, root: str, codes: list[str]) -> None:
        self.root = root
        self.key = key = results_key(codes)
        #: the codes a stored diagnostic may have: the selected rules', never SC000 or SC999
        self.allowed = frozenset(c for c in codes if c not in ENGINE_CODES)
        self.name = f"results-{_short_hash(key)}.json"
        self.entries: dict = {}
        self.usable = True
        self.dirty = False
        self._used: set[str] = set()

    @classmethod
    def open(cls, root: str, codes: list[str]) -> "Cache":
        """The cache for these rule codes under ``root``: empty when absent, unreadable or
        invalid (then rewritten on save), unused when its folder is unsafe."""
        cache = cls(root, codes)
        schema = _row_schema()
        folder, safe = _open_folder(root, create=False)
        cache.usable = safe and schema is not None
        if folder is None:
            return cache
        with folder:
            blob = folder.read(cache.name) if schema is not None else None
        if blob is None or schema is None:
            return cache
        body = _decode(blob)
        if type(body) is not dict or set(body) != {"key", "entries"} or body["key"] != cache.key \
                or type(body["entries"]) is not dict:
            cache.dirty = True
            return cache
        cache.entries = {p: e for p, e in body["entries"].items() if _valid_entry(e, schema, cache.allowed)}
        cache.dirty = len(cache.entries) != len(body["entries"])
        return cache

    def get(self, path: str, digest: str) -> Optional[list]:
        """The diagnostics stored for ``path`` when its content hash is ``digest``."""
        entry = self.entries.get(path)
        if entry is None or entry[0] != digest:
            return None
        self._used.add(path)
        schema = _row_schema() or []
        return [_diagnostic(path, row, schema) for row in entry[1]]

    def put(self, path: str, digest: str, diagnostics: list) -> None:
        """Remember ``diagnostics`` for ``path`` with content hash ``digest``. A result that
        could not be read back as it is (one with an ``SC000`` or ``SC999``: an unparsable or
        guarded file, an internal error) is not remembered, and forgets what was."""
        if not self.usable:
            return
        schema = _row_schema() or []
        entry = [digest, [_row(d, schema) for d in diagnostics]]
        if not _valid_entry(entry, schema, self.allowed):  # what could not be read back
            if self.entries.pop(path, None) is not None:
                self.dirty = True
            return
        self.entries[path] = entry
        self._used.add(path)
        self.dirty = True

    def save(self) -> None:
        """Write the cache atomically and prune old configurations; a read-only project simply
        goes without one."""
        if not self.usable or not self.dirty:
            return
        # the paths of this run last, so that trimming drops the longest unused ones first
        ordered = {p: e for p, e in self.entries.items() if p not in self._used}
        ordered.update((p, self.entries[p]) for p in self.entries if p in self._used)
        entries = dict(list(ordered.items())[-MAX_ENTRIES:])
        _save(
            self.root, self.name, {"key": self.key, "entries": entries},
            lambda found: [n for _, n in found if _RESULTS_NAME.match(n)][KEEP_FILES - 1:],
        )
        self.dirty = False
