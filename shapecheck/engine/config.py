"""Configuration: ``[tool.shapecheck]`` in pyproject.toml, or a file given with ``--config``.

Keys: ``select``, ``ignore``, ``extend-select`` (lists of code prefixes such as ``SC1`` or
``SC101``, or rule names such as ``view-on-non-contiguous``; ``ALL`` means every default rule),
``per-file-ignores`` (a table from glob to such a list) and ``exclude`` (a list of globs).
Command-line flags form a second layer applied after the file, so they override it. Unknown
keys and unknown codes are errors, never silently ignored.

The config is the nearest pyproject.toml with a ``[tool.shapecheck]`` table at or above the
first path. Every pyproject.toml met on the way is read: one that is not a readable regular file,
is not UTF-8 or TOML, is larger than :data:`MAX_CONFIG_BYTES`, or whose ``tool`` is not a table,
is a :class:`ConfigError` (one line, exit status 2), never passed over in silence.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from shapecheck.engine.diagnostics import ENGINE_CODES, RuleInfo
from shapecheck.engine.display import escape, escape_path
from shapecheck.engine.sources import glob_matches

KNOWN_KEYS = (
    "select", "ignore", "extend-select", "per-file-ignores", "exclude", "max-file-size", "respect-gitignore",
)
_CODE_PREFIX = re.compile(r"^SC[0-9]{0,3}$")
#: A config file larger than this is refused (a pyproject.toml is a few kilobytes).
MAX_CONFIG_BYTES = 4 * 1024 * 1024


class ConfigError(Exception):
    """A configuration or usage problem: one clear line, exit status 2."""


@dataclass
class Selectors:
    """One layer of rule selection (the config file, or the command line)."""

    select: Optional[list[str]] = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


def registry_infos() -> list[RuleInfo]:
    """The :class:`RuleInfo` of every registered rule (imports the rule modules)."""
    from shapecheck.rules.catalog import all_rules

    return [
        RuleInfo(r.code, r.name, r.severity, bool(r.default_enabled), bool(r.fixable))
        for r in all_rules()
    ]


def rule_infos(cache_root: Optional[str]) -> list[RuleInfo]:
    """The registry's rule infos; with a ``cache_root``, read from (or saved to) the cache's
    manifest, so that a run answered entirely from the cache never imports libcst."""
    if cache_root is None:
        return registry_infos()
    from shapecheck.engine import cache

    infos = cache.load_manifest(cache_root)
    if infos is None:
        infos = registry_infos()
        cache.save_manifest(cache_root, infos)
    return infos


@dataclass
class Settings:
    """Everything configuration decides for a run."""

    #: every known rule (selected or not)
    rules: list[RuleInfo] = field(default_factory=list)
    layers: list[Selectors] = field(default_factory=list)
    per_file_ignores: list[tuple[str, list[str]]] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    #: the folder of the configuration file (or the working folder): globs are relative to it
    root: str = "."
    #: the folder of the configuration file, else the folder that holds every linted path: the
    #: cache lives here, and ``--fix`` follows no symlink out of it
    project_root: str = "."
    config_path: Optional[str] = None
    #: files larger than this many bytes are not linted (``None``: the default of guards.py)
    max_file_size: Optional[int] = None
    #: skip what ``.gitignore``, ``.ignore`` and ``.git/info/exclude`` ignore (``respect-gitignore``)
    respect_gitignore: bool = True


def _describe_type(value: Any) -> str:
    return {
        bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
        dict: "a table",
    }.get(type(value), "a date or time")


def _read_config_bytes(path: str) -> bytes:
    """The bytes of a config file: a regular file, readable, of a sane size."""
    shown = escape_path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            if os.path.islink(path):
                raise ConfigError(f"config file {shown} is a symbolic link to a missing file") from None
            raise ConfigError(f"config file not found: {shown}") from None
        raise ConfigError(f"cannot read config file {shown}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"config file {shown} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"config file {shown} is not a regular file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"config file {shown} is too large ({info.st_size:,} bytes; at most {MAX_CONFIG_BYTES:,})"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {shown}: {exc.strerror or exc}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"config file {shown} is too large (more than {MAX_CONFIG_BYTES:,} bytes)")
    return data


def _load_toml(path: str) -> dict:
    """Read and parse the TOML file ``path``; every failure is a one-line :class:`ConfigError`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    data = _read_config_bytes(path)
    shown = escape_path(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            f"invalid TOML in {shown}: not UTF-8 (byte 0x{data[exc.start]:02x} at line {line}, "
            f"column {column}; TOML files are UTF-8)"
        ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {shown}: {escape(' '.join(str(exc).split()))}") from None
    except RecursionError:
        raise ConfigError(f"invalid TOML in {shown}: arrays or tables nest too deeply") from None


def _tool_table(data: dict, path: str) -> Optional[dict]:
    """The ``tool`` table of a parsed pyproject.toml (``None`` when absent)."""
    tool = data.get("tool")
    if tool is not None and not isinstance(tool, dict):
        raise ConfigError(f"{escape_path(path)}: `tool` must be a table, not {_describe_type(tool)}")
    return tool


def _has_table(path: str) -> bool:
    """True when the pyproject.toml ``path`` has a ``[tool.shapecheck]`` table.

    Every pyproject.toml met on the way up is read in full, as ruff does: one that cannot be read
    or parsed, or whose ``tool`` is not a table, is an error rather than silently passed over.
    """
    tool = _tool_table(_load_toml(path), path)
    return tool is not None and "shapecheck" in tool


def find_pyproject(start: str) -> Optional[str]:
    """The nearest ``pyproject.toml`` with a ``[tool.shapecheck]`` table at or above ``start``."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.lexists(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def find_project_root(start: str | list[str]) -> str:
    """The folder of the nearest ``pyproject.toml`` at or above ``start``; without one, the root
    of the linted tree: ``start`` when it is a folder, else its folder (for a list of paths, the
    folder they all lie in). Never the working folder, which may lie outside the tree."""
    starts = [start] if isinstance(start, str) else list(start) or [os.curdir]
    folders = []
    for path in starts:
        path = os.path.abspath(path)
        folders.append(path if os.path.isdir(path) else os.path.dirname(path))
    try:
        tree = os.path.commonpath(folders)
    except ValueError:  # paths on different Windows drives
        tree = folders[0]
    folder = tree
    while True:
        if os.path.isfile(os.path.join(folder, "pyproject.toml")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return tree
        folder = parent


def load_file(path: str) -> dict:
    """The shapecheck table of a config file: ``[tool.shapecheck]``, or the top level of a
    file that is not a pyproject.toml."""
    data = _load_toml(path)
    is_pyproject = os.path.basename(path) == "pyproject.toml"
    tool = _tool_table(data, path) if is_pyproject or isinstance(data.get("tool"), dict) else None
    table = tool.get("shapecheck") if tool is not None else None
    if table is not None:
        if not isinstance(table, dict):
            raise ConfigError(
                f"{escape_path(path)}: [tool.shapecheck] must be a table, not {_describe_type(table)}"
            )
        return table
    if is_pyproject:
        raise ConfigError(f"{escape_path(path)} has no [tool.shapecheck] table")
    return data


def _string_list(value: Any, key: str, where: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return [v.strip() for v in value]


def check_selector(selector: str, where: str, rules: list) -> str:
    """Validate one selector (code prefix, rule name or ``ALL``) and return it normalised."""
    text = selector.strip()
    if text.upper() == "ALL":
        return "ALL"
    upper = text.upper()
    if _CODE_PREFIX.match(upper):
        if any(r.code.startswith(upper) for r in rules) or upper in ENGINE_CODES:
            return upper
        raise ConfigError(f"{where}: unknown rule code `{escape(selector)}` (see `shapecheck rule --all`)")
    lower = text.lower()
    if any(r.name == lower for r in rules) or lower in ENGINE_CODES.values():
        return lower
    raise ConfigError(
        f"{where}: unknown rule code or name `{escape(selector)}` (see `shapecheck rule --all`)"
    )


def parse_table(table: dict, where: str, rules: list) -> tuple[Selectors, list, list]:
    """Validate a ``[tool.shapecheck]`` table: the selectors, per-file ignores and excludes."""
    unknown = sorted(set(table) - set(KNOWN_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key `{unknown[0]}` in [tool.shapecheck] "
            f"(known: {', '.join(KNOWN_KEYS)})"
        )
    layer = Selectors()
    if "select" in table:
        layer.select = [check_selector(s, where, rules) for s in _string_list(table["select"], "select", where)]
        if not layer.select:
            raise ConfigError(f"{where}: `select` is empty, so no rule would run (remove the key for the defaults)")
    if "extend-select" in table:
        layer.extend_select = [
            check_selector(s, where, rules)
            for s in _string_list(table["extend-select"], "extend-select", where)
        ]
    if "ignore" in table:
        layer.ignore = [check_selector(s, where, rules) for s in _string_list(table["ignore"], "ignore", where)]
    per_file: list[tuple[str, list[str]]] = []
    raw = table.get("per-file-ignores", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
    for glob, codes in raw.items():
        key = f"per-file-ignores.{escape(glob)}"
        per_file.append((glob, [check_selector(c, where, rules) for c in _string_list(codes, key, where)]))
    exclude = _string_list(table.get("exclude", []), "exclude", where)
    return layer, per_file, exclude


def _specificity(selector: str, code: str, name: str, default_enabled: bool) -> Optional[int]:
    """How precisely ``selector`` names the rule, or ``None`` when it does not match it."""
    if selector == "ALL":
        return 0 if default_enabled else None
    if selector == name:
        return 10
    if code.startswith(selector):
        return len(selector)
    return None


def _best(selectors: list[str], code: str, name: str, default_enabled: bool) -> Optional[int]:
    scores = [score for s in selectors if (score := _specificity(s, code, name, default_enabled)) is not None]
    return max(scores) if scores else None


def is_enabled(layers: list[Selectors], code: str, name: str, default_enabled: bool) -> bool:
    """Whether a rule runs under these layers.

    Each layer starts from the previous verdict (or from nothing when it has ``select``); inside
    a layer the most specific matching selector wins, and ``ignore`` wins a tie. An opt-in rule
    (``default_enabled=False``) runs only when a selector names it by code, prefix or name.
    """
    state = default_enabled
    for layer in layers:
        base = state if layer.select is None else False
        chosen = _best((layer.select or []) + layer.extend_select, code, name, default_enabled)
        ignored = _best(layer.ignore, code, name, default_enabled)
        if chosen is None and ignored is None:
            state = base
        elif ignored is None:
            state = True
        elif chosen is None:
            state = False
        else:
            state = chosen > ignored
    return state


def selected_rules(layers: list[Selectors]) -> list:
    """The rule classes that run under ``layers``, sorted by code."""
    from shapecheck.rules.catalog import all_rules

    return [r for r in all_rules() if is_enabled(layers, r.code, r.name, r.default_enabled)]


def selected_codes(settings: Settings) -> list[str]:
    """The codes of the rules that run under ``settings``, sorted."""
    return sorted(r.code for r in settings.rules if is_enabled(settings.layers, r.code, r.name, r.default_enabled))


def engine_code_ignored(layers: list[Selectors], code: str) -> bool:
    """SC000 and SC999 are dropped only by an ``ignore`` that names them exactly."""
    name = ENGINE_CODES[code]
    return any(code in layer.ignore or name in layer.ignore for layer in layers)


def ignored_for_path(settings: Settings, path: str) -> list[str]:
    """The selectors that ``per-file-ignores`` applies to ``path``."""
    found: list[str] = []
    for glob, selectors in settings.per_file_ignores:
        if glob_matches(glob, path, settings.root):
            found.extend(selectors)
    return found


def matches_any(selectors: list[str], code: str, name: str) -> bool:
    """True when one of ``selectors`` (prefix, name or ``ALL``) covers the rule."""
    return any(s == "ALL" or s == name or code.startswith(s) for s in selectors)


def max_file_size(table: dict, where: str) -> Optional[int]:
    """The ``max-file-size`` of a ``[tool.shapecheck]`` table in bytes (``None`` when unset)."""
    value = table.get("max-file-size")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{where}: `max-file-size` must be a positive whole number of bytes, got {value!r}")
    return value


def respect_gitignore(table: dict, where: str) -> bool:
    """The ``respect-gitignore`` of a ``[tool.shapecheck]`` table (default ``true``)."""
    value = table.get("respect-gitignore", True)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: `respect-gitignore` must be true or false, got {value!r}")
    return value


def build_settings(
    first_path: str,
    config_file: Optional[str],
    cli_layer: Selectors,
    extra_exclude: Optional[list[str]] = None,
    use_cache: bool = False,
    linted_paths: Optional[list[str]] = None,
) -> Settings:
    """Load the config (``--config`` or the nearest pyproject.toml) and add the command line.

    ``linted_paths`` (default: ``first_path`` alone) place the project root when no
    pyproject.toml lies above them. With ``use_cache`` the rule list may come from the cache's
    manifest (see :func:`rule_infos`).
    """
    settings = Settings()
    path = config_file if config_file is not None else find_pyproject(first_path)
    table = load_file(path) if path is not None else None
    if path is not None:
        settings.root = settings.project_root = os.path.dirname(os.path.abspath(path))
        settings.config_path = path
    else:
        settings.project_root = find_project_root(linted_paths or [first_path])
        in_project = os.path.isfile(os.path.join(settings.project_root, "pyproject.toml"))
        settings.root = settings.project_root if in_project else os.getcwd()
    settings.rules = rules = rule_infos(settings.project_root if use_cache else None)
    if path is not None and table is not None:
        layer, per_file, exclude = parse_table(table, escape_path(path), rules)
        settings.layers.append(layer)
        settings.per_file_ignores = per_file
        settings.exclude = exclude
        settings.max_file_size = max_file_size(table, escape_path(path))
        settings.respect_gitignore = respect_gitignore(table, escape_path(path))
    cli = Selectors(
        select=None if cli_layer.select is None else [check_selector(s, "--select", rules) for s in cli_layer.select],
        extend_select=[check_selector(s, "--extend-select", rules) for s in cli_layer.extend_select],
        ignore=[check_selector(s, "--ignore", rules) for s in cli_layer.ignore],
    )
    settings.layers.append(cli)
    settings.exclude = settings.exclude + list(extra_exclude or [])
    return settings
