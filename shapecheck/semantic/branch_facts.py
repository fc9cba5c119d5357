"""What each side of an ``if`` said of a tensor's layout, kept where the join forgets it.

At an ``if``/``else`` join the facts of a name become what both paths say: a tensor laid out
plainly on one path (``y = att @ v``) and in an order the linter cannot know on the other
(``y = F.scaled_dot_product_attention(q, k, v)``, whose layout depends on the kernel) joins to
an unknown layout, and a view that must fail on the first path goes unseen. The
:class:`BranchTable` keeps, for such a joined fact, the fact of each side, so that a rule can
ask what an expression would be on each side (:func:`under_branches`).

Only joins that say something are kept: the ``if`` tests a plain flag (a name or attribute, its
``not``, ``and``/``or`` of them; never a comparison, a call such as ``x.is_contiguous()``, a
value known to be a tensor or a number, nor the train/eval ``training`` flag, whose paths often
see different sizes), the two sides' layouts differ, and a side rebound the name itself (the
side that kept the value from before the ``if`` is what the other side guards against, as in
``if flag: x = x.contiguous()``). Control flow is not guessed: a finding on one side says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

import libcst as cst

from shapecheck.semantic.facts import BOOL, Fact
from shapecheck.semantic.syntax import dotted_name

T = TypeVar("T")

#: the flag a test must not read (train and eval paths often see different sizes)
_MODE_FLAG = "training"


@dataclass(frozen=True)
class Branch:
    """One side of an ``if``: ``test`` true (the body) or false (the ``else``), and the fact
    the name had at the end of that side; ``rebound``: the side bound the name itself."""

    test: cst.BaseExpression
    taken: bool
    fact: Fact
    rebound: bool

    def describe(self, source: Callable[[cst.CSTNode], str]) -> str:
        """``"`self.flash` is false"``, as messages say which side."""
        test, taken = self.test, self.taken
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            test, taken = test.expression, not taken
        return f"`{source(test)}` is {'true' if taken else 'false'}"


class BranchTable:
    """The facts of each side of the ``if`` joins whose result lost a layout, keyed by the
    joined fact (a rebinding makes a new fact, so an entry lives as long as its binding)."""

    def __init__(self) -> None:
        #: id(joined fact) -> (the joined fact, kept alive so its id stays its own; its sides)
        self._sides: dict[int, tuple[Fact, tuple[Branch, ...]]] = {}

    def note(self, test: cst.BaseExpression, before: dict, body: dict, orelse: dict, joined: dict) -> None:
        """Record the sides of the names whose layout the join of ``body`` and ``orelse`` (the
        environments at the end of each side; ``before``: at the ``if``) lost."""
        if not _plain_flag(test, before):
            return
        for key, f in joined.items():
            a = body.get(key)
            b = orelse.get(key)
            if a is None or b is None or f is a or f is b or not _layouts_differ(a, b):
                continue
            old = before.get(key)
            self._sides[id(f)] = (f, (Branch(test, True, a, a is not old), Branch(test, False, b, b is not old)))

    def sides(self, f: Fact) -> tuple[Branch, ...]:
        """The sides of the join that made ``f``, or ``()``."""
        entry = self._sides.get(id(f))
        return entry[1] if entry is not None and entry[0] is f else ()


def _layouts_differ(a: Fact, b: Fact) -> bool:
    """Two tensors (or values of unknown kind) whose layouts differ, one of them known."""
    if a.kind not in (None, "tensor") or b.kind not in (None, "tensor"):
        return False
    if a.layout is None and a.perm is None and b.layout is None and b.perm is None:
        return False
    return a.layout != b.layout or a.perm != b.perm or a.strides != b.strides


def _plain_flag(test: cst.BaseExpression, env: dict) -> bool:
    """``test`` reads plain flags only (see the module's docstring)."""
    tp = type(test)
    if tp is cst.UnaryOperation:
        return type(test.operator) is cst.Not and _plain_flag(test.expression, env)  # type: ignore[attr-defined]
    if tp is cst.BooleanOperation:
        return _plain_flag(test.left, env) and _plain_flag(test.right, env)  # type: ignore[attr-defined]
    name = dotted_name(test)
    if name is None or _MODE_FLAG in name.split("."):
        return False
    f = env.get(name)
    return f is None or f.kind in (None, BOOL) and f.shape is None and f.dim is None


def _names(expr: cst.CSTNode) -> list[str]:
    """The dotted names (``y``, ``self.k``) read in ``expr``, outermost first, once each."""
    found: list[str] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        name = dotted_name(node)
        if name is not None:
            if name not in found:
                found.append(name)
            if type(node) is cst.Name:
                continue
        stack.extend(reversed(node.children))
    return found


def under_branches(ev, table: BranchTable, expr: cst.CSTNode, compute: Callable[[], T]) -> list[tuple[Branch, T]]:
    """``compute()`` once for each side of each join that made the fact of a name read in
    ``expr``, with that name bound to that side's fact; the analysis state is left as it was."""
    env = ev.model.env
    found: list[tuple[Branch, T]] = []
    for name in _names(expr):
        current: Optional[Fact] = env.get(name)
        if current is None:
            continue
        sides = table.sides(current)
        if not sides:
            continue
        memo = dict(ev.memo)
        errors = len(ev.model.infer_errors)
        try:
            for side in sides:
                ev.memo.clear()
                env[name] = side.fact
                found.append((side, compute()))
        finally:
            env[name] = current
            ev.memo.clear()
            ev.memo.update(memo)
            del ev.model.infer_errors[errors:]
    return found
