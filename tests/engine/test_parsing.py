"""The engine's parse: libcst's tree, built without re-validating each node."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.engine.parsing import parse_source

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
