"""Which functions a file imports from the other files of the same run (the cross-file pass).

Before the files are linted, each file of the run gets a module name (the chain of folders
holding an ``__init__.py`` above it, then its stem: ``pkg/sub/mod.py`` is ``pkg.sub.mod``; a
file outside any package is its stem) and the names of the functions it defines at module
level (``def name`` at the start of a line). Each ``from X import a, b as c`` at the start of a
line of a file (``X`` absolute or relative, resolved against the file's own package) that names
a function of another file of the run becomes a :class:`Link`: the local name, that file's
module name, the function's name there. The texts are read with regular expressions (no parse):
the pass costs a scan of each file. A linted file gets the texts of the files it links to;
the result cache keys it by its own bytes and those texts (:func:`link_digest`), so a change in
a callee re-lints its callers.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Iterable, Optional

_FROM_IMPORT = re.compile(
    r"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)", re.MULTILINE)
_DEF = re.compile(r"^def[ \t]+(\w+)", re.MULTILINE)
_ALIAS = re.compile(r"^(\w+)(?:\s+as\s+(\w+))?$")


@dataclass(frozen=True)
class Link:
    """``from <module> import <original> as <local>`` where ``module`` is a file of the run."""

    local: str
    module: str
    original: str


def module_name(path: str) -> tuple[str, bool]:
    """The dotted module name of the file at ``path``, and whether it is a package's
    ``__init__.py``."""
    folder, filename = os.path.split(os.path.abspath(path))
    stem = filename[:-3] if filename.endswith(".py") else filename
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
        if not package:
            break
    return ".".join(p for p in parts if p), stem == "__init__"


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


def imported_names(text: str, importer: str, is_package: bool) -> list[tuple[str, str, str]]:
    """``(local name, absolute module, name there)`` of each module-level ``from`` import."""
    out: list[tuple[str, str, str]] = []
    for match in _FROM_IMPORT.finditer(text):
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


def plan_links(files: Iterable[tuple[str, str]]) -> dict[str, tuple[Link, ...]]:
    """For each ``(path, text)`` of the run: the functions it imports from other files of it."""
    files = list(files)
    names: dict[str, str] = {}
    functions: dict[str, set[str]] = {}
    packages: dict[str, bool] = {}
    for path, text in files:
        name, is_package = module_name(path)
        names[path] = name
        packages[path] = is_package
        if name and "def " in text:
            functions.setdefault(name, set()).update(_DEF.findall(text))
    plan: dict[str, tuple[Link, ...]] = {}
    for path, text in files:
        if "import" not in text:
            continue
        links = tuple(
            Link(local, module, original)
            for local, module, original in imported_names(text, names[path], packages[path])
            if module != names[path] and original in functions.get(module, ())
        )
        if links:
            plan[path] = links
    return plan


def link_digest(data: bytes, links: tuple[Link, ...], texts: dict[str, bytes]) -> str:
    """The cache key of a file: its bytes, and the bytes of every file it imports from."""
    digest = hashlib.sha256(data)
    for link in sorted(set(links), key=lambda k: (k.module, k.local, k.original)):
        digest.update(f"\0{link.local}\0{link.module}\0{link.original}\0".encode())
        digest.update(hashlib.sha256(texts.get(link.module, b"")).digest())
    return digest.hexdigest()
