"""Which functions and classes a file imports from the other files of the same run (the
cross-file pass).

Before the files are linted, each file of the run gets a module name (the chain of folders
holding an ``__init__.py`` above it, then its stem: ``pkg/sub/mod.py`` is ``pkg.sub.mod``; a
file outside any package is its stem) and the names of the functions and classes it defines at
module level (``def name`` or ``class name`` at the start of a line). Each ``from X import a, b
as c`` at the start of a line of a file (``X`` absolute or relative, resolved against the file's
own package) that names one of those of another file of the run becomes a :class:`Link`: the
local name, that file's module name, the name there. The texts are read with regular
expressions (no parse): the pass costs a scan of each file. A linted file gets the texts of the
files it links to; the result cache keys it by its own bytes and those texts
(:func:`link_digest`), so a change in a callee re-lints its callers.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional

_FROM_IMPORT = re.compile(
    r"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)", re.MULTILINE)
_DEF = re.compile(r"^def[ \t]+(\w+)", re.MULTILINE)
_CLASS = re.compile(r"^class[ \t]+(\w+)", re.MULTILINE)
_ALIAS = re.compile(r"^(\w+)(?:\s+as\s+(\w+))?$")


@dataclass(frozen=True)
class Link:
    """``from <module> import <original> as <local>`` where ``module`` is a file of the run."""

    local: str
    module: str
    original: str


def module_name(path: str, packages: Optional[dict[str, list[str]]] = None) -> tuple[str, bool]:
    """The dotted module name of the file at ``path``, and whether it is a package's
    ``__init__.py``; ``packages``: folder -> the package names it stands for, filled as the
    folders are looked at (the files of one run share their folders)."""
    folder, filename = os.path.split(os.path.abspath(path))
    stem = filename[:-3] if filename.endswith(".py") else filename
    found = packages.get(folder) if packages is not None else None
    if found is None:
        found = _packages(folder)
        if packages is not None:
            packages[folder] = found
    parts = found + ([] if stem == "__init__" else [stem])
    return ".".join(p for p in parts if p), stem == "__init__"


def _packages(folder: str) -> list[str]:
    """The names of the packages ``folder`` is in, outermost first (``[]``: no ``__init__.py``)."""
    parts: list[str] = []
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
        if not package:
            break
    return parts


def module_names(paths: Iterable[str]) -> dict[str, tuple[str, bool]]:
    """:func:`module_name` of each path, each folder looked at once."""
    packages: dict[str, list[str]] = {}
    return {path: module_name(path, packages) for path in paths}


def _absolute(dots: str, module: str, importer: str, is_package: bool) -> Optional[str]:
    """The absolute module a ``from`` import names (``from ..x import`` in ``a.b.c`` is ``a.x``)."""
    if not dots:
        return module
    base = importer.split(".") if importer else []
    up = len(dots) - (1 if is_package else 0)
    if up > len(base) or (up == len(base) and not base and not module):
        return None
    base = base[: len(base) - up] if up else base
    return ".".join(base + ([module] if module else [])) or None


def line_matches(pattern: re.Pattern[str], text: str, word: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)`` for a multi-line ``pattern`` that starts with ``^word``: the
    same matches, tried only at the lines that start with ``word`` (found with ``str.find``,
    several times faster than the regular expression trying every offset)."""
    at = 0 if text.startswith(word) else text.find("\n" + word) + 1
    if at == 0 and not text.startswith(word):
        return
    end = 0
    while True:
        if at >= end:  # a match does not start inside the previous one
            match = pattern.match(text, at)
            if match is not None:
                yield match
                end = match.end()
        found = text.find("\n" + word, at)
        if found < 0:
            return
        at = found + 1


def imported_names(text: str, importer: str, is_package: bool) -> list[tuple[str, str, str]]:
    """``(local name, absolute module, name there)`` of each module-level ``from`` import."""
    out: list[tuple[str, str, str]] = []
    for match in line_matches(_FROM_IMPORT, text, "from"):
        dots, module, names = match.groups()
        target = _absolute(dots, module, importer, is_package)
        if target is None:
            continue
        for item in names.strip("()").replace("\\\n", " ").split(","):
            found = _ALIAS.match(item.strip())
            if found is not None:
                original, local = found.group(1), found.group(2) or found.group(1)
                out.append((local, target, original))
    return out


def plan_links(files: Iterable[tuple[str, str]],
               known: Optional[dict[str, tuple[str, bool]]] = None) -> dict[str, tuple[Link, ...]]:
    """For each ``(path, text)`` of the run: the functions and classes it imports from other files of it;
    ``known``: the :func:`module_names` of the paths, when the caller has them."""
    files = list(files)
    if known is None:
        known = module_names(path for path, _ in files)
    names: dict[str, str] = {}
    defined: dict[str, set[str]] = {}
    packages: dict[str, bool] = {}
    for path, text in files:
        name, is_package = known[path]
        names[path] = name
        packages[path] = is_package
        if name and "def " in text:
            defined.setdefault(name, set()).update(m.group(1) for m in line_matches(_DEF, text, "def"))
        if name and "class " in text:
            defined.setdefault(name, set()).update(m.group(1) for m in line_matches(_CLASS, text, "class"))
    plan: dict[str, tuple[Link, ...]] = {}
    for path, text in files:
        if "import" not in text:
            continue
        links = tuple(
            Link(local, module, original)
            for local, module, original in imported_names(text, names[path], packages[path])
            if module != names[path] and original in defined.get(module, ())
        )
        if links:
            plan[path] = links
    return plan


def link_digest(data: bytes, links: tuple[Link, ...], texts: dict[str, bytes],
                hashes: Optional[dict[str, bytes]] = None) -> str:
    """The cache key of a file: its bytes, and the bytes of every file it imports from;
    ``hashes``: module name -> the hash of its bytes in ``texts``, kept by the caller for the
    next file of the same run (filled here)."""
    digest = hashlib.sha256(data)
    for link in sorted(set(links), key=lambda k: (k.module, k.local, k.original)):
        digest.update(f"\0{link.local}\0{link.module}\0{link.original}\0".encode())
        known = hashes.get(link.module) if hashes is not None else None
        if known is None:
            known = hashlib.sha256(texts.get(link.module, b"")).digest()
            if hashes is not None:
                hashes[link.module] = known
        digest.update(known)
    return digest.hexdigest()
