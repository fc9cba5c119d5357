"""Ignore files, read as git and ruff read them: ``.gitignore`` at every level, git's global
excludes file (``core.excludesFile``, by default ``$XDG_CONFIG_HOME/git/ignore`` or
``~/.config/git/ignore``) and ``.git/info/exclude`` inside a git work tree, and ``.ignore``
anywhere. ``core.excludesFile`` is read from the repository's ``.git/config``, then
``~/.gitconfig``, then ``$XDG_CONFIG_HOME/git/config`` (the first that sets it wins, as git's
order local > global gives), without running git.

Precedence, lowest first: the global excludes file, ``.git/info/exclude``, then for each folder
from the top of the work tree down to the file, its ``.gitignore`` then its ``.ignore``; the last pattern that matches
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


def _config_value(path: str, section: str, key: str) -> Optional[str]:
    """The last value of ``section.key`` in the git config file at ``path`` (names compared
    without case, as git does), or ``None``; ``include`` directives are not followed."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    current, found = "", None
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            header = line[1:line.find("]")] if "]" in line else line[1:]
            current = header.split(None, 1)[0].split(".", 1)[0].lower() if header.strip() else ""
            line = line[line.find("]") + 1:].strip() if "]" in line else ""
            if not line:
                continue
        if current != section or "=" not in line:
            continue
        name, value = line.split("=", 1)
        if name.strip().lower() == key:
            found = _config_text(value)
    return found


def _config_text(value: str) -> str:
    """A git config value without its comment and quotes, with its escapes read."""
    out, quoted, index = [], False, 0
    value = value.strip()
    while index < len(value):
        char = value[index]
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        elif char == "\\" and index + 1 < len(value):
            index += 1
            out.append({"n": "\n", "t": "\t"}.get(value[index], value[index]))
        else:
            out.append(char)
        index += 1
    return "".join(out).strip()


def global_excludes_file(top: str) -> Optional[str]:
    """The path of git's global excludes file for the work tree ``top``: ``core.excludesFile``
    of its config or the user's (``~`` expanded), else ``$XDG_CONFIG_HOME/git/ignore`` (or
    ``~/.config/git/ignore``); ``None`` when it cannot be told."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = [os.path.join(top, ".git", "config"), os.path.join(home, ".gitconfig"),
               os.path.join(xdg, "git", "config")]
    for config in configs:
        value = _config_value(config, "core", "excludesfile")
        if value:
            if value == "~" or value.startswith("~/"):
                value = home + value[1:]
            return value if os.path.isabs(value) else os.path.join(top, value)
    return os.path.join(xdg, "git", "ignore")


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
            for path in (global_excludes_file(folder), os.path.join(folder, ".git", "info", "exclude")):
                found = _read(path, folder) if path is not None else None
                if found is not None:
                    files += (found,)
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
