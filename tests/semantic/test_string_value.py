"""syntax.string_value: the value of a string literal, as libcst's evaluated_value gives it."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.semantic.syntax import string_value

LITERALS = [
    '"cuda:0"', "'cpu'", '""', "''", '"""doc\nstring"""', "'''a'b'''", '""""""', '"a\\nb"', "r'\\d'",
    "b'x'", "'''\\\n'''", "u'x'", "'\"'", '"\'"',
]


@pytest.mark.parametrize("literal", LITERALS)
def test_same_value_as_libcst(literal: str) -> None:
    """Each literal gives what ``evaluated_value`` gives (f-strings are not SimpleStrings)."""
    node = cst.parse_expression(literal)
    if type(node) is not cst.SimpleString:
        pytest.skip("not a simple string")
    assert string_value(node) == node.evaluated_value
