"""The pages of the engine's own codes, ``SC000`` and ``SC999``: reported by the runner, not by a
rule, and documented (``shapecheck rule SC000``, ``rule --all``, the README table) like the rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from shapecheck.engine.diagnostics import ENGINE_CODES, INTERNAL_ERROR, PARSE_ERROR


@dataclass(frozen=True)
class EngineCode:
    """A code the engine reports itself, with the fields a rule page shows."""

    code: str
    name: str
    summary: str
    doc: str
    severity: str = "error"
    fixable: bool = False
    default_enabled: bool = True


_PAGES = (
    EngineCode(
        PARSE_ERROR,
        ENGINE_CODES[PARSE_ERROR],
        "a file that could not be read, decoded or parsed (or fixed), so nothing in it was checked",
        """
A path that does not exist, a file that cannot be opened, bytes that are not valid in the file's
encoding, a syntax error (at the parser's line and column), a file over `--max-file-size`, a
special file (a FIFO, a device), or fixes that could not be written back (the file changed on
disk while shapecheck ran, or the folder is read-only).

The run exits with status 2 (even with `--exit-zero`), because the file's other problems are
unknown. `SC000` is never cached. It can be ignored only by its exact code
(`--ignore SC000` or `ignore = ["SC000"]`), never by a prefix such as `SC`.

Fix the file (or the path), or exclude it with `--exclude GLOB`.
""",
    ),
    EngineCode(
        INTERNAL_ERROR,
        ENGINE_CODES[INTERNAL_ERROR],
        "a rule raised an exception on this file: its findings in the file may be missing",
        """
A bug in shapecheck, not in your code: a rule (or the analysis walk that every rule reads) raised
while checking the file. The message names the rule and the exception, one `SC999` per rule. The
other rules still ran on the file, but the findings of the one that raised are missing there.

The run exits with status 2 (even with `--exit-zero`). `SC999` is never cached. It can be ignored
only by its exact code. Please report it with the smallest file that shows it;
`SHAPECHECK_DEBUG=1` prints the traceback.
""",
    ),
)


def engine_codes() -> list[EngineCode]:
    """The pages of ``SC000`` and ``SC999``, in code order."""
    return list(_PAGES)


def engine_code(name: str) -> Optional[EngineCode]:
    """The page of an engine code given by code (``sc000`` too) or name, or ``None``."""
    wanted = name.strip().lower()
    for page in _PAGES:
        if wanted in (page.code.lower(), page.name):
            return page
    return None


def documented_codes() -> list:
    """Every documented code, rules and engine codes together, in code order."""
    from shapecheck.rules.catalog import all_rules

    return sorted([*all_rules(), *_PAGES], key=lambda entry: entry.code)
