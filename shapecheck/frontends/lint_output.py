"""What ``shapecheck lint`` prints, from its options: the format (``--output-format``), the
statistics (``--statistics``, as text or JSON), colour (a terminal, ``NO_COLOR``, ``FORCE_COLOR``),
``--quiet``, and the ``--fix`` advice that a pre-commit hook (``PRE_COMMIT=1``) leaves out."""

from __future__ import annotations

import os
from typing import Mapping, Optional, TextIO

from shapecheck.frontends.colour import wants_colour
from shapecheck.frontends.report import format_statistics, format_statistics_json, render
from shapecheck.frontends.text_output import TextOptions

#: The output formats of ``--output-format`` (``text`` is the old name of ``full``).
FORMATS = ("full", "concise", "json", "sarif", "github", "text")
#: The formats ``--statistics`` can be printed in.
STATISTICS_FORMATS = ("full", "concise", "text", "json")


def under_pre_commit(env: Mapping[str, str]) -> bool:
    """Whether the command runs as a pre-commit hook (pre-commit sets ``PRE_COMMIT=1``)."""
    return env.get("PRE_COMMIT", "") not in ("", "0")


def report_text(args, diagnostics: list, fixes_applied: int, fix_mode: bool, stream: Optional[TextIO],
                stdin: Optional[tuple[str, bytes]] = None, env: Optional[Mapping[str, str]] = None) -> str:
    """The report of a ``lint`` run for the options ``args``, to be written to ``stream``
    (``None`` for ``--output-file``: never coloured); ``stdin`` is the (display path, bytes)
    read from stdin, whose lines the ``full`` format shows."""
    env = os.environ if env is None else env
    if args.statistics:
        if args.format == "json":
            return format_statistics_json(diagnostics)
        return format_statistics(diagnostics)
    given = {stdin[0]: stdin[1].decode("utf-8", errors="replace")} if stdin is not None else {}
    options = TextOptions(
        colour=stream is not None and wants_colour(stream, env),
        quiet=bool(getattr(args, "quiet", False)),
        fix_hints=not under_pre_commit(env),
        given=given,
    )
    return render(args.format, diagnostics, fixes_applied, fix_mode, options)


def write_file(path: str, text: str) -> None:
    """Write the report to ``path`` (``--output-file``), creating its folder; raises OSError."""
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
