"""The ``lint`` options that decide what fails a build and how a code base adopts the tool:
``--severity`` (fail only on findings at or above a severity) and ``--add-noqa``."""

from __future__ import annotations

import argparse
from typing import Callable

#: Severities from least to most severe.
SEVERITIES = ("warning", "error")


def add_arguments(lint: argparse.ArgumentParser) -> None:
    """Register ``--severity`` and ``--add-noqa`` on the ``lint`` parser."""
    lint.add_argument("--severity", choices=SEVERITIES, default="warning",
                      help="exit 1 only for findings of this severity or above (default: warning, i.e. "
                           "every finding); the others are still shown")
    lint.add_argument("--add-noqa", action="store_true",
                      help="append `# noqa: CODES` to every line with findings (to adopt shapecheck on a "
                           "large code base), then exit")


def check_options(args: argparse.Namespace) -> str:
    """Why these options cannot be combined (``""`` when they can)."""
    if args.add_noqa and (args.fix or args.diff):
        return "--add-noqa cannot be combined with --fix or --diff: it silences the findings instead"
    if args.add_noqa and ("-" in args.paths or args.stdin_filename):
        return "--add-noqa writes comments into files; it cannot read stdin"
    return ""


def fails(diagnostics: list, severity: str) -> bool:
    """True when some diagnostic is at least as severe as ``severity``."""
    floor = SEVERITIES.index(severity)
    return any(SEVERITIES.index(d.severity) >= floor if d.severity in SEVERITIES else True for d in diagnostics)


def add_noqa_comments(diagnostics: list, say: Callable[[str], None]) -> bool:
    """Add the ``# noqa`` comments and ``say`` what was done; False when a file could not be written."""
    from shapecheck.engine.add_noqa import add_noqa
    from shapecheck.engine.display import escape, escape_path

    outcome = add_noqa(diagnostics)
    for path, line in outcome.unreachable:
        say(f"warning: {escape_path(path)}:{line}: cannot carry a comment (the line ends inside a "
            f"string or continues with a backslash); add the noqa by hand\n")
    for path, why in outcome.failed:
        say(f"error: {escape_path(path)}: {escape(why)}\n")
    count = outcome.directives
    say(f"Added {count} noqa directive{'' if count == 1 else 's'}.\n")
    return not outcome.failed
