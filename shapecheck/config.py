"""Configuration: ``[tool.shapecheck]`` in pyproject.toml, or a file given with ``--config``.

Keys: ``select``, ``ignore``, ``extend-select`` (lists of code prefixes such as ``SC1`` or
``SC101``, or rule names such as ``view-on-non-contiguous``; ``ALL`` means every default rule),
``per-file-ignores`` (a table from glob to such a list) and ``exclude`` (a list of globs).
Command-line flags form a second layer applied after the file, so they override it. Unknown
keys and unknown codes are errors, never silently ignored.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from shapecheck.sources import glob_matches

#: Diagnostics of the engine itself, not of a rule: always reported unless ignored by exact code.
PARSE_ERROR = "SC000"
INTERNAL_ERROR = "SC999"
ENGINE_CODES = {PARSE_ERROR: "syntax-error", INTERNAL_ERROR: "internal-error"}

KNOWN_KEYS = ("select", "ignore", "extend-select", "per-file-ignores", "exclude")
_CODE_PREFIX = re.compile(r"^SC[0-9]{0,3}$")


class ConfigError(Exception):
    """A configuration or usage problem: one clear line, exit status 2."""


@dataclass
class Selectors:
    """One layer of rule selection (the config file, or the command line)."""

    select: Optional[list[str]] = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RuleInfo:
    """What selection and reports need to know of a rule, without importing the rule itself."""

    code: str
    name: str
    severity: str
    default_enabled: bool
    fixable: bool


def registry_infos() -> list[RuleInfo]:
    """The :class:`RuleInfo` of every registered rule (imports the rule modules)."""
    from shapecheck.rules.base import all_rules

    return [
        RuleInfo(r.code, r.name, r.severity, bool(r.default_enabled), bool(r.fixable))
        for r in all_rules()
    ]


def rule_infos(cache_root: Optional[str]) -> list[RuleInfo]:
    """The registry's rule infos; with a ``cache_root``, read from (or saved to) the cache's
    manifest, so that a run answered entirely from the cache never imports libcst."""
    if cache_root is None:
        return registry_infos()
    from shapecheck import cache

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
    #: the folder of the configuration file (or the working folder): globs and the cache live here
    root: str = "."
    config_path: Optional[str] = None


def _load_toml(path: str) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None


def _has_table(path: str) -> bool:
    """True when ``path`` has a ``[tool.shapecheck]`` table (a broken file with the words
    counts, so that its error is reported rather than the file skipped)."""
    try:
        with open(path, "rb") as handle:
            if b"shapecheck" not in handle.read():
                return False
    except OSError:
        return False
    try:
        data = _load_toml(path)
    except ConfigError:
        return True
    tool = data.get("tool")
    return isinstance(tool, dict) and "shapecheck" in tool


def find_pyproject(start: str) -> Optional[str]:
    """The nearest ``pyproject.toml`` with a ``[tool.shapecheck]`` table at or above ``start``."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def find_project_root(start: str) -> str:
    """The folder of the nearest ``pyproject.toml`` at or above ``start``, else the working folder."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        if os.path.isfile(os.path.join(folder, "pyproject.toml")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return os.getcwd()
        folder = parent


def load_file(path: str) -> dict:
    """The shapecheck table of a config file: ``[tool.shapecheck]``, or the top level of a
    file that is not a pyproject.toml."""
    data = _load_toml(path)
    table = data.get("tool", {}).get("shapecheck") if isinstance(data.get("tool"), dict) else None
    if table is not None:
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.shapecheck] must be a table")
        return table
    if os.path.basename(path) == "pyproject.toml":
        raise ConfigError(f"{path} has no [tool.shapecheck] table")
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
        raise ConfigError(f"{where}: unknown rule code `{selector}` (see `shapecheck rule --all`)")
    lower = text.lower()
    if any(r.name == lower for r in rules) or lower in ENGINE_CODES.values():
        return lower
    raise ConfigError(f"{where}: unknown rule code or name `{selector}` (see `shapecheck rule --all`)")


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
        per_file.append(
            (glob, [check_selector(c, where, rules) for c in _string_list(codes, f"per-file-ignores.{glob}", where)])
        )
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
    scores = [_specificity(s, code, name, default_enabled) for s in selectors]
    scores = [s for s in scores if s is not None]
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
    from shapecheck.rules.base import all_rules

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


def build_settings(
    first_path: str,
    config_file: Optional[str],
    cli_layer: Selectors,
    extra_exclude: Optional[list[str]] = None,
    use_cache: bool = False,
) -> Settings:
    """Load the config (``--config`` or the nearest pyproject.toml) and add the command line.

    With ``use_cache`` the rule list may come from the cache's manifest (see :func:`rule_infos`).
    """
    settings = Settings()
    path = config_file
    if path is not None:
        if not os.path.isfile(path):
            raise ConfigError(f"config file not found: {path}")
    else:
        path = find_pyproject(first_path)
    if path is not None:
        settings.root = os.path.dirname(os.path.abspath(path))
        settings.config_path = path
    else:
        settings.root = find_project_root(first_path)
    settings.rules = rules = rule_infos(settings.root if use_cache else None)
    if path is not None:
        layer, per_file, exclude = parse_table(load_file(path), path, rules)
        settings.layers.append(layer)
        settings.per_file_ignores = per_file
        settings.exclude = exclude
    cli = Selectors(
        select=None if cli_layer.select is None else [check_selector(s, "--select", rules) for s in cli_layer.select],
        extend_select=[check_selector(s, "--extend-select", rules) for s in cli_layer.extend_select],
        ignore=[check_selector(s, "--ignore", rules) for s in cli_layer.ignore],
    )
    settings.layers.append(cli)
    settings.exclude = settings.exclude + list(extra_exclude or [])
    return settings
