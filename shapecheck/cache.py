"""The result cache: per-file diagnostics, reused while nothing that decides them has changed.

One JSON file under ``<project root>/.shapecheck_cache/`` per combination of shapecheck version,
the code of the linter itself (a hash of its sources, so a development checkout never reads
stale results) and the selected rule codes. Inside, each linted path maps to the SHA-256 of its
bytes and its diagnostics. Per-file ignores are applied after the cache, so they are not part of
the key. The cache is never used with ``--fix`` or ``--diff``.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Optional

import shapecheck

CACHE_DIR = ".shapecheck_cache"
_FORMAT = 1
#: How many cache files (configurations) one project keeps.
KEEP_FILES = 8
_FINGERPRINT: Optional[str] = None


def _code_fingerprint() -> str:
    """A hash of every source file of the shapecheck package (linter and rules)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.sha256()
        top = os.path.dirname(os.path.abspath(shapecheck.__file__))
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


def _manifest_path(root: str) -> str:
    return os.path.join(root, CACHE_DIR, f"rules-{_code_fingerprint()[:20]}.json")


def load_manifest(root: str) -> Optional[list]:
    """The rule infos saved for this exact linter code under ``root``, or ``None``."""
    from shapecheck.config import RuleInfo

    try:
        with open(_manifest_path(root), encoding="utf-8") as handle:
            rows = json.load(handle)
        return [RuleInfo(*row) for row in rows]
    except (OSError, ValueError, TypeError):
        return None


def save_manifest(root: str, infos: list) -> None:
    """Save the rule infos for this linter code; drop manifests of other versions."""
    from shapecheck.sources import atomic_write

    path = _manifest_path(root)
    folder = os.path.dirname(path)
    rows = [[i.code, i.name, i.severity, i.default_enabled, i.fixable] for i in infos]
    try:
        _prepare(folder)
        atomic_write(path, json.dumps(rows).encode("utf-8"))
        for name in os.listdir(folder):
            other = os.path.join(folder, name)
            if name.startswith("rules-") and other != path:
                os.unlink(other)
    except OSError:
        pass


def _prepare(folder: str) -> None:
    """Create the cache folder with a .gitignore that keeps it out of version control."""
    os.makedirs(folder, exist_ok=True)
    ignore = os.path.join(folder, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as handle:
            handle.write("# created by shapecheck\n*\n")


class Cache:
    """Cached diagnostics of one configuration."""

    def __init__(self, path: str, entries: dict) -> None:
        self.path = path
        self.entries = entries
        self.dirty = False

    @classmethod
    def open(cls, root: str, codes: list[str]) -> "Cache":
        """The cache for these rule codes under ``root`` (empty when absent or unreadable)."""
        key = hashlib.sha256(
            json.dumps([_FORMAT, shapecheck.__version__, _code_fingerprint(), sorted(codes)]).encode()
        ).hexdigest()[:20]
        path = os.path.join(root, CACHE_DIR, f"{key}.json")
        entries: dict = {}
        try:
            with open(path, encoding="utf-8") as handle:
                loaded = json.load(handle)
            if isinstance(loaded, dict):
                entries = loaded
        except (OSError, ValueError):
            pass
        return cls(path, entries)

    def get(self, path: str, digest: str) -> Optional[list]:
        """The diagnostics stored for ``path`` when its content hash is ``digest``."""
        from shapecheck.lint import Diagnostic

        entry = self.entries.get(path)
        if not entry or entry[0] != digest:
            return None
        try:
            return [Diagnostic(path, *row) for row in entry[1]]
        except TypeError:
            return None

    def put(self, path: str, digest: str, diagnostics: list) -> None:
        """Remember ``diagnostics`` for ``path`` with content hash ``digest``."""
        rows = [
            [d.line, d.column, d.end_line, d.end_column, d.code, d.name, d.severity, d.message, d.fixable]
            for d in diagnostics
        ]
        self.entries[path] = [digest, rows]
        self.dirty = True

    def save(self) -> None:
        """Write the cache atomically; a read-only project simply goes without one."""
        if not self.dirty:
            return
        from shapecheck.sources import atomic_write

        folder = os.path.dirname(self.path)
        try:
            _prepare(folder)
            atomic_write(self.path, json.dumps(self.entries, separators=(",", ":")).encode("utf-8"))
            self._prune(folder)
        except OSError:
            pass

    def _prune(self, folder: str) -> None:
        """Keep the most recently written cache files only (old versions, old selections go)."""
        files = [
            os.path.join(folder, name)
            for name in os.listdir(folder)
            if name.endswith(".json") and not name.startswith("rules-")
            and os.path.join(folder, name) != self.path
        ]
        files.sort(key=lambda p: os.stat(p).st_mtime, reverse=True)
        for stale in files[KEEP_FILES - 1:]:
            try:
                os.unlink(stale)
            except OSError:
                pass
