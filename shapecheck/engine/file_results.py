"""What linting one file produced, shared by the runner and the notebook linter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from shapecheck.engine.diagnostics import Diagnostic
from shapecheck.engine.sources import Decoded


@dataclass
class FileResult:
    """What linting one file produced."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    fixes_applied: int = 0
    #: the fixed source (a notebook's new JSON text), when fixes changed it (fix and diff modes)
    fixed_text: Optional[str] = None
    original_text: Optional[str] = None
    #: in fix mode, the diagnostics of the unfixed text (reported when the fixes cannot be written)
    original_diagnostics: list[Diagnostic] = field(default_factory=list)
    decoded: Optional[Decoded] = None

    def after_fixes(self, text: str) -> tuple[str, int]:
        """The fixed text (``text``, the one linted, when no fix changed it) and how many fixes
        were applied."""
        return (self.fixed_text if self.fixed_text is not None else text), self.fixes_applied


__all__ = ["FileResult"]
