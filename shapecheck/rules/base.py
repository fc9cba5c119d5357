"""The rule framework: what a rule declares, and the registry that holds every rule.

A rule is one class. It carries its code, name, severity, summary, doc page, and its own
``valid`` and ``invalid`` examples; the test suite is generated from those examples.

The engine walks each file once (see :mod:`shapecheck.semantic.interpreter`). At every node it calls the hooks
that the selected rules define, named after libcst node classes: ``visit_Call(self, node, ctx)``,
``visit_BinaryOperation(self, node, ctx)``, ``visit_For(self, node, ctx)`` and so on. Hooks run
in statement order with the tensor facts that hold at that point; ``ctx`` (an
:class:`shapecheck.rules.api.Context`) answers questions about them and takes reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional, Union

import libcst as cst

#: The comment that marks the line an invalid example must be flagged on.
EXPECT_MARKER = "# <--"


@dataclass(frozen=True)
class Example:
    """One example of a rule.

    ``code`` is a complete program. In an invalid example exactly one line carries the marker
    comment ``# <--`` (text may follow it): the rule must report on that line and nowhere else.
    ``fixed`` is, for a fixable invalid example, the whole program after ``--fix``;
    ``unsafe_fixed`` the whole program after ``--fix --unsafe-fixes`` where the finding's fix is
    unsafe (then ``--fix`` alone changes nothing).
    """

    code: str
    fixed: Optional[str] = None
    unsafe_fixed: Optional[str] = None

    @property
    def expected_line(self) -> Optional[int]:
        """The 1-based line that carries the marker, or ``None`` when there is none."""
        for number, line in enumerate(self.code.splitlines(), start=1):
            if EXPECT_MARKER in line:
                return number
        return None


def _as_example(value: Union[str, Example]) -> Example:
    return value if isinstance(value, Example) else Example(value)


@dataclass
class Fix:
    """A rewrite: replace ``node`` with ``replacement`` (both libcst nodes).

    ``safe``: the rewrite cannot change what the program does beyond the bug the finding
    reports, and ``--fix`` applies it. An unsafe fix may (it rebinds a name another scope
    reads, or an attribute that may be a parameter slot; it changes floating-point results):
    only ``--fix --unsafe-fixes`` applies it, and the report marks it ``[-]`` instead of ``[*]``.
    """

    node: cst.CSTNode
    replacement: cst.CSTNode
    safe: bool = True


@dataclass
class Finding:
    """A diagnostic before positions are resolved: which rule, which node, what message.

    ``offset``, when set, is ``(line_delta, column)`` relative to the start of ``node``: used to
    point inside a string literal (the offending character of an einsum spec).
    ``condition``, when set, is the exception under which the finding does not hold, said the way
    the message says it (``"`T` is 1"``): the finding holds for generic sizes (every unknown size
    at least 2 and independent of the others). ``None``: it holds whatever the sizes.
    ``related``: other nodes the finding comes from, each with a short label (``(call,
    "made non-contiguous here by `transpose(1, 2)`")``); the engine positions them like ``node``.
    """

    code: str
    node: cst.CSTNode
    message: str
    fix: Optional[Fix] = None
    offset: Optional[tuple[int, int]] = None
    condition: Optional[str] = None
    related: tuple[tuple[cst.CSTNode, str], ...] = ()


class Rule:
    """Base class of every rule. Subclasses set the class attributes and define hooks."""

    code: ClassVar[str] = ""
    name: ClassVar[str] = ""
    #: ``"error"``: the code raises at run time; ``"warning"``: a likely bug or a slow path.
    severity: ClassVar[str] = "error"
    summary: ClassVar[str] = ""
    #: Markdown with the sections ``## What it does``, ``## Why is this bad?``, ``## Example``
    #: and ``## Use instead``.
    doc: ClassVar[str] = ""
    valid: ClassVar[tuple[Union[str, Example], ...]] = ()
    invalid: ClassVar[tuple[Union[str, Example], ...]] = ()
    #: Opt-in rules are off unless selected by code, prefix or name.
    default_enabled: ClassVar[bool] = True
    fixable: ClassVar[bool] = False
    #: Words of which at least one occurs in every file this rule can fire on (``einsum``,
    #: ``backward``): a file without any of them skips the rule. A plain substring test, so
    #: that screening costs microseconds even on large files.
    needs: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def applies_to(cls, text: Optional[str]) -> bool:
        """False when ``text`` shows that this rule cannot fire on it (see ``needs``)."""
        if not cls.needs or text is None:
            return True
        return any(word in text for word in cls.needs)

    @classmethod
    def valid_examples(cls) -> list[Example]:
        """The valid examples as :class:`Example` objects."""
        return [_as_example(e) for e in cls.valid]

    @classmethod
    def invalid_examples(cls) -> list[Example]:
        """The invalid examples as :class:`Example` objects."""
        return [_as_example(e) for e in cls.invalid]


_REGISTRY: dict[str, type[Rule]] = {}


def registered() -> dict[str, type[Rule]]:
    """The rules registered so far, by code (:mod:`shapecheck.rules.catalog` registers them all)."""
    return _REGISTRY


def register(rule: type[Rule]) -> type[Rule]:
    """Class decorator: add ``rule`` to the registry. Codes and names must be unique."""
    if not rule.code or not rule.name:
        raise ValueError(f"rule {rule.__name__} needs a code and a name")
    if rule.code in _REGISTRY:
        raise ValueError(f"rule code {rule.code} registered twice")
    if any(r.name == rule.name for r in _REGISTRY.values()):
        raise ValueError(f"rule name {rule.name} registered twice")
    _REGISTRY[rule.code] = rule
    return rule


Hook = Callable[[cst.CSTNode, Any], None]
__all__ = [
    "EXPECT_MARKER",
    "Example",
    "Finding",
    "Fix",
    "Hook",
    "Rule",
    "register",
]
