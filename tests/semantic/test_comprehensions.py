"""Lists built by a comprehension over a range of known length, joined by ``torch.stack`` and
``torch.cat`` (shapecheck.semantic.eval.comprehensions)."""

from __future__ import annotations

from semantic_probe import one, reveal, shape

from shapecheck.shapes import format_shape

_HEAD = "import torch\nDEGREE = 4\nx = torch.randn(32, 1)\n"


def test_stack_and_cat_of_a_comprehension_over_a_range():
    assert shape(_HEAD + "reveal(torch.stack([x ** i for i in range(1, DEGREE + 1)], 1))\n") == "(32, 4, 1)"
    assert shape(_HEAD + "reveal(torch.cat([x ** i for i in range(1, DEGREE + 1)], 1))\n") == "(32, 4)"
    assert shape(_HEAD + "reveal(torch.cat([x * i for i in range(0, 10, 3)]))\n") == "(128, 1)"
    assert shape(_HEAD + "def f(x):\n    x = x.unsqueeze(1)\n"
                 "    return torch.stack([x ** i for i in range(1, DEGREE + 1)], 1)\n"
                 "reveal(f(torch.randn(32)))\n") == "(32, 4, 1)"


def test_the_loop_variable_stays_in_the_comprehension():
    code = _HEAD + "i = torch.randn(3, 3)\ny = torch.stack([x ** i for i in range(2)])\nreveal(i)\n"
    assert shape(code) == "(3, 3)"


def test_no_list_when_the_length_or_the_elements_are_not_known():
    for seq in ("[x ** i for i in range(n)]", "[x ** i for i in range(DEGREE) if i]",
                "[x ** i for i in range(2) for j in range(2)]", "[x ** i for i in (1, 2)]",
                "[x for i in range(0)]"):
        f = one(_HEAD + f"def f(n):\n    reveal(torch.cat({seq}, 1))\n")
        assert f.shape is None or f.shape.rank is None, seq  # at most a rank bound
    # a size that changes from one element to the next stays unknown
    assert shape(_HEAD + "reveal(torch.cat([torch.zeros(i, 2) for i in range(1, 3)], 1))\n") == "(?, 4)"
    for code in ("reveal(torch.cat([x.view(i, -1) for i in range(1, 3)], 1))\n",
                 "def range(n):\n    return [0]\nreveal(torch.stack([x for i in range(2)]))\n"):
        f = one(_HEAD + code)
        assert f.shape is None or f.shape.rank is None, code


def test_the_variable_of_a_comprehension_is_an_element_of_its_iterable():
    rows = reveal("import torch\na = torch.randn(3, 4)\nys = [reveal(r) for r in a]\n"
                  "xs = [torch.randn(4, 3), torch.randn(2, 3)]\nzs = [reveal(s) for s in xs]\n")
    assert [format_shape(f.shape) for f, _ in rows] == ["(4,)", "(?, 3)"]


def test_a_comprehension_with_two_fors_or_an_unknown_iterable_binds_nothing_known():
    seen = reveal("import torch\na = torch.randn(3, 4)\n"
                  "ys = [reveal(r) for r in a for q in a]\ndef f(items):\n    return [reveal(i) for i in items]\n")
    assert all(f.kind is None for f, _ in seen)
