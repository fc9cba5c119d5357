"""The fast walker of shapecheck.semantic.walk reaches every expression libcst does."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from shapecheck.semantic.walk import walk

REPO = Path(__file__).resolve().parents[2]
KINDS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.BinaryOperation)


class _Collect(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, KINDS):
            self.found.add(id(node))
        return True


def _sources():
    yield "kitchen", (REPO / "tests" / "rules" / "test_silent_on_correct_training_code.py").read_text(encoding="utf-8")
    corpus = sorted((REPO / "audit" / "_corpus" / "transformers").glob("*.py"))[:3]
    for path in corpus:
        yield path.name, path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name, source", list(_sources()), ids=lambda v: v if len(v) < 60 else "src")
def test_walk_reaches_every_expression(name, source):
    module = cst.parse_module(source)
    generic = _Collect()
    module.visit(generic)
    fast = {id(n) for n in walk(module, into_defs=True) if isinstance(n, KINDS)}
    # Attribute names (`.attr`) and the names in `import`, `def`, `class`, parameters,
    # keywords and `except ... as name` are not expressions: the fast walker may skip them.
    missed = generic.found - fast
    module.visit(_Skippable(missed))


class _Skippable(cst.CSTVisitor):
    """Fails on any missed node that is an expression (not a name slot of a statement)."""

    def __init__(self, missed: set[int]) -> None:
        super().__init__()
        self.missed = missed
        self.allowed: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        slots = []
        if isinstance(node, cst.Attribute):
            slots.append(node.attr)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            slots.append(node.name)
        elif isinstance(node, (cst.Param, cst.Arg)):
            slots.extend(x for x in (getattr(node, "name", None), getattr(node, "keyword", None)) if x)
        elif isinstance(node, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal, cst.AsName)):
            self.allowed.update(id(n) for n in _all(node))
        elif isinstance(node, cst.ExceptHandler):
            slots.append(node.type)
            if node.name is not None:
                slots.append(node.name)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            slots.append(node.asname)
        elif isinstance(node, (cst.Annotation, cst.Parameters)):
            self.allowed.update(id(n) for n in _all(node))
        for slot in slots:
            if slot is not None:
                self.allowed.update(id(n) for n in [slot, *_all(slot)])
        if id(node) in self.missed:
            assert id(node) in self.allowed, cst.Module([]).code_for_node(node)
        return True


def _all(node: cst.CSTNode):
    for child in node.children:
        yield child
        yield from _all(child)
