"""The fast walker of shapecheck.semantic.walk reaches every expression libcst does."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from shapecheck.semantic.node_memo import forget_node_memos
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


_DEFINITIONS = '''\
import torch


@register(name="layer")
# a comment between the decorator and the def

def forward(x: torch.Tensor, scale=2) -> torch.Tensor:
    """Doc."""

    # a comment in the body
    y = x * scale
    return y.view(-1)


class Block(Base, metaclass=Meta):
    size = 4

    def run(self, x):
        return lambda v: v + x
'''

_TOKENS = (cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.Newline,
           cst.EmptyLine, cst.Comment, cst.Comma, cst.Colon, cst.AssignEqual, cst.LeftParen, cst.RightParen)


def _definitions() -> tuple[cst.FunctionDef, cst.ClassDef]:
    module = cst.parse_module(_DEFINITIONS)
    return module.body[1], module.body[2]  # type: ignore[return-value]


def test_walk_of_a_function_gives_its_decorators_name_annotation_and_body_without_tokens():
    function, _ = _definitions()
    found = list(walk(function))
    assert not [n for n in found if isinstance(n, _TOKENS)]
    names = [n.value for n in found if type(n) is cst.Name]
    assert {"register", "forward", "torch", "x", "scale", "y"} <= set(names)
    assert function.returns is not None and function.returns.annotation in found
    assert any(type(n) is cst.Return for n in found)


def test_walk_of_a_class_keeps_its_bases_and_keywords_and_skips_nested_defs_unless_asked():
    _, block = _definitions()
    names = {n.value for n in walk(block) if type(n) is cst.Name}
    assert {"Block", "Base", "metaclass", "Meta", "size"} <= names
    assert not names & {"run", "self", "v"}  # the method is a nested definition
    deep = {n.value for n in walk(block, into_defs=True) if type(n) is cst.Name}
    assert {"run", "v", "x"} <= deep  # parameters are not walked


@pytest.mark.parametrize("into_defs", [False, True])
def test_walking_a_node_again_gives_the_same_nodes_in_the_same_order(into_defs):
    module = cst.parse_module(_DEFINITIONS)
    function, block = module.body[1], module.body[2]
    roots = [module, function, function.body, block, block.body.body[0], function.body.body[1]]
    for root in roots:
        first = list(walk(root, into_defs=into_defs))
        for _ in range(3):
            again = list(walk(root, into_defs=into_defs))
            assert len(again) == len(first) and all(a is b for a, b in zip(first, again))
    forget_node_memos()
    assert [id(n) for n in walk(module, into_defs=into_defs)] == [id(n) for n in walk(module, into_defs=into_defs)]


def test_walk_once_gives_what_walk_gives_and_remembers_nothing():
    from shapecheck.semantic.walk import walk_once

    module = cst.parse_module("def f(x, y=g(1)):\n    z = [a + b for a in x if a < (lambda q: q)(y)]\n    return z\n")
    forget_node_memos()
    for into_defs in (False, True):
        once = walk_once(module, into_defs=into_defs)
        assert [id(n) for n in once] == [id(n) for n in walk(module, into_defs=into_defs)]
    forget_node_memos()
