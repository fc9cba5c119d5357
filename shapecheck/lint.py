"""The public lint API: lint text or files without the command line.

The engine lives in :mod:`shapecheck.engine.runner`; this module is the stable path to it.
"""

from __future__ import annotations

from shapecheck.engine.runner import (
    MODE_CHECK, MODE_DIFF, MODE_FIX, Diagnostic, FileResult, LintRun, fix_text, lint_text, run,
)

__all__ = [
    "Diagnostic",
    "FileResult",
    "LintRun",
    "MODE_CHECK",
    "MODE_DIFF",
    "MODE_FIX",
    "fix_text",
    "lint_text",
    "run",
]
