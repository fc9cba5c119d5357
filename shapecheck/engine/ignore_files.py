"""Ignore files, read as git and ruff read them: ``.gitignore`` at every level and
``.git/info/exclude`` inside a git work tree, and ``.ignore`` anywhere.

Precedence, lowest first: ``.git/info/exclude``, then for each folder from the top of the work
tree down to the file, its ``.gitignore`` then its ``.ignore``; the last pattern that matches
decides (a ``!pattern`` re-includes). A folder that is ignored is not entered, so nothing below
it is linted, as in git. A nested repository (a folder holding ``.git``) starts afresh with its
own ignore files. Patterns are matched by :mod:`pathspec`'s implementation of git's rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import pathspec

GITIGNORE = ".gitignore"
IGNORE = ".ignore"


@dataclass(frozen=True)
class _IgnoreFile:
    """The patterns of one ignore file and the folder they are relative to."""

    base: str
    spec: pathspec.GitIgnoreSpec

    def verdict(self, path: str, is_dir: bool) -> Optional[bool]:
        """True: ignored, False: re-included by a ``!`` pattern, None: no pattern matches."""
        rel = os.path.relpath(path, self.base).replace(os.sep, "/")
        if rel in (".", "..") or rel.startswith("../"):
            return None
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _read(path: str, base: str) -> Optional[_IgnoreFile]:
    """The ignore file at ``path`` (patterns relative to ``base``), or ``None`` when absent or empty."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return _IgnoreFile(base, spec) if spec.patterns else None


def _is_repository(folder: str) -> bool:
    return os.path.exists(os.path.join(folder, ".git"))


def work_tree(folder: str) -> Optional[str]:
    """The top of the git work tree that holds ``folder``, or ``None`` outside any."""
    current = os.path.abspath(folder)
    while True:
        if _is_repository(current):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@dataclass(frozen=True)
class IgnoreRules:
    """The ignore files in force in one folder, lowest precedence first."""

    files: tuple[_IgnoreFile, ...] = ()
    in_git: bool = False

    @classmethod
    def for_folder(cls, folder: str) -> "IgnoreRules":
        """The rules in force in ``folder``: those of every folder above it in its work tree
        (or of ``folder`` alone outside git), its own included."""
        folder = os.path.abspath(folder)
        top = work_tree(folder)
        if top is None:
            return cls().enter(folder)
        chain = []
        current = folder
        while current != top:
            chain.append(current)
            current = os.path.dirname(current)
        rules = cls().enter(top)
        for step in reversed(chain):
            rules = rules.enter(step)
        return rules

    def enter(self, folder: str) -> "IgnoreRules":
        """The rules in force inside ``folder``, a child of the folder these rules are for."""
        files = self.files
        in_git = self.in_git
        if _is_repository(folder):
            in_git = True
            files = ()
            exclude = _read(os.path.join(folder, ".git", "info", "exclude"), folder)
            if exclude is not None:
                files += (exclude,)
        for name, applies in ((GITIGNORE, in_git), (IGNORE, True)):
            if applies:
                found = _read(os.path.join(folder, name), folder)
                if found is not None:
                    files += (found,)
        if files is self.files and in_git == self.in_git:
            return self
        return IgnoreRules(files, in_git)

    def ignored(self, path: str, is_dir: bool) -> bool:
        """True when ``path`` (a file, or a folder with ``is_dir``) is ignored."""
        for ignore_file in reversed(self.files):
            verdict = ignore_file.verdict(path, is_dir)
            if verdict is not None:
                return verdict
        return False
