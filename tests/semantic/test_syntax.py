"""Reading syntax (semantic/syntax.py): the method a class defines under a name."""

from __future__ import annotations

import libcst as cst

from shapecheck.semantic.syntax import method_def


def _class(code: str) -> cst.ClassDef:
    node = cst.parse_module(code).body[0]
    assert type(node) is cst.ClassDef
    return node


def test_method_def_is_the_first_def_of_that_name_in_the_class_body():
    cls = _class("class A:\n    x = 1\n    def f(self):\n        return 1\n    def f(self):\n        return 2\n"
                 "    if True:\n        def g(self): pass\n")
    found = method_def(cls, "f")
    assert found is not None and found is cls.body.body[1]
    assert method_def(cls, "g") is None  # a def under an `if` is not read
    assert method_def(cls, "x") is None


def test_method_def_of_a_one_line_class_is_none():
    assert method_def(_class("class A: pass\n"), "__init__") is None
