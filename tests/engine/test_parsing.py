"""The engine's parse: libcst's tree, built without re-validating each node."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from shapecheck.engine.parsing import _storing_constructor, parse_source

SOURCES = [
    "x = 1\n",
    "def f(a, /, b=2, *c, d, **e):\n    return a @ b\n",
    "class M(nn.Module):\n    def forward(self, x):\n        return x.view(-1)[:, None, ...]\n",
    's = f"{x!r:>{w}}" + """doc\nline""" + b"\\x00"\nwith a as (b, c): pass\n',
    "async def g():\n    async for i in y:\n        await z\n    return [i async for i in y]\n",
    "match p:\n    case [1, *rest] if rest: pass\n    case {'k': v}: pass\n",
]


@pytest.mark.parametrize("text", SOURCES)
def test_same_tree_as_libcst(text: str) -> None:
    """The tree equals libcst's own parse, node for node, and prints back the same text."""
    ours = parse_source(text)
    theirs = cst.parse_module(text)
    assert ours.deep_equals(theirs)
    assert ours.code == text


def test_same_error_and_validation_restored() -> None:
    """A syntax error is libcst's; after any parse, building an invalid node still raises."""
    with pytest.raises(cst.ParserSyntaxError):
        parse_source("def f(:\n")
    parse_source("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    assert "__post_init__" in cst.CSTNode.__dict__


def test_every_example_parses_to_libcsts_tree() -> None:
    """The examples (real model code and training scripts) parse to libcst's own tree."""
    paths = sorted(Path(__file__).resolve().parents[2].joinpath("examples").rglob("*.py"))
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert parse_source(text).deep_equals(cst.parse_module(text)), path


def test_storing_constructor_keeps_signature_and_defaults() -> None:
    """A storing constructor fills omitted fields from the dataclass defaults and factories
    (each default made anew), and takes fields by position as the dataclass one does."""
    comma = cst.Comma.__new__(cst.Comma)
    fast = _storing_constructor(cst.Comma)
    assert fast is not None
    fast(comma)
    assert comma.deep_equals(cst.Comma())
    other = cst.Comma.__new__(cst.Comma)
    fast(other)
    assert other.whitespace_before is not comma.whitespace_before
    name = cst.Name.__new__(cst.Name)
    build = _storing_constructor(cst.Name)
    assert build is not None
    build(name, "x", (cst.LeftParen(),), (cst.RightParen(),))
    assert name.deep_equals(cst.Name("x", lpar=(cst.LeftParen(),), rpar=(cst.RightParen(),)))
    with pytest.raises(TypeError):
        build(cst.Name.__new__(cst.Name))  # `value` is required


def test_constructors_restored_after_a_failed_parse() -> None:
    """A syntax error leaves every node class with its own validating constructor."""
    own = cst.Name.__init__
    with pytest.raises(cst.ParserSyntaxError):
        parse_source("x = (\n")
    assert cst.Name.__init__ is own
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1x")


def test_large_text_parses_with_the_guards_lifted_and_restored() -> None:
    """A text past LARGE_TEXT parses to libcst's tree (the constructors then store by plain
    assignment); afterwards the nodes are frozen and validated again, also after a syntax error."""
    import dataclasses

    from shapecheck.engine.parsing import LARGE_TEXT

    text = "".join(f"def f{i}(x, *, y=2):\n    return x.view(-1)[:, None] @ y  # {i}\n" for i in range(400))
    assert len(text) >= LARGE_TEXT
    assert parse_source(text).deep_equals(cst.parse_module(text))
    with pytest.raises(cst.ParserSyntaxError):
        parse_source(text + "x = (\n")
    node = cst.Name("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.value = "y"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del node.value  # type: ignore[misc]
    with pytest.raises(cst.CSTValidationError):
        cst.Name("1x")
