"""What a run reports: a :class:`Diagnostic`, the codes of the engine's own diagnostics, and the
:class:`RuleInfo` that selection and reports need of a rule. Imports nothing of the engine, so the
cache, the configuration and the runner all build on it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

#: Diagnostics of the engine itself, not of a rule: always reported unless ignored by exact code.
PARSE_ERROR = "SC000"
INTERNAL_ERROR = "SC999"
ENGINE_CODES = {PARSE_ERROR: "syntax-error", INTERNAL_ERROR: "internal-error"}


@dataclass(frozen=True)
class RuleInfo:
    """What selection and reports need to know of a rule, without importing the rule itself."""

    code: str
    name: str
    severity: str
    default_enabled: bool
    fixable: bool


@dataclass(frozen=True)
class Related:
    """Another place of the code a finding comes from (where a tensor was transposed, created,
    reduced), with 1-based positions like :class:`Diagnostic`'s, and a short label saying what
    happened there."""

    line: int
    column: int
    end_line: int
    end_column: int
    label: str
    #: in a notebook, the 1-based number of the cell the place lies in (it may differ from the
    #: finding's); ``None`` in a Python file
    cell: Optional[int] = None


@dataclass(frozen=True)
class Diagnostic:
    """One reported problem, with 1-based positions."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    severity: str
    message: str
    #: a safe fix exists (``--fix`` applies it; shown ``[*]``)
    fixable: bool = False
    #: only an unsafe fix exists (``--fix --unsafe-fixes`` applies it; shown ``[-]``)
    unsafe_fix: bool = False
    #: the exception under which the finding does not hold (``"`T` is 1"``), ``None`` when it
    #: holds whatever the sizes
    condition: Optional[str] = None
    #: the other places the finding comes from; not part of what makes two diagnostics the same
    related: tuple[Related, ...] = field(default=(), compare=False)
    #: in a notebook, the 1-based number of the cell (counting every cell) that ``line`` and
    #: ``column`` count in; ``None`` in a Python file
    cell: Optional[int] = None

    def sort_key(self) -> tuple:
        """Path, then cell, then position, then code: the order of every report."""
        return (self.path, self.cell or 0, self.line, self.column, self.code, self.message)
