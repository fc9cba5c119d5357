"""Findings whose exception the tests around them guarantee (rules/helpers/size_guards.py), seen
through the linter: the same view with and without the guard."""

from __future__ import annotations

import libcst as cst
import pytest

from shapecheck.engine.config import selected_rules
from shapecheck.engine.runner import lint_text
from shapecheck.rules.helpers.size_guards import guaranteed
from shapecheck.semantic.walk import walk

HEAD = "def f(w, x):\n    chout, chin, kernel = w.shape\n"
VIEW = "w.view(chout, chin)"


def _codes(body: str) -> list[tuple[str, int, str | None]]:
    found = lint_text(HEAD + body, selected_rules([]))
    return [(d.code, d.line, d.condition) for d in found]


def test_the_unguarded_view_names_its_exception():
    assert _codes(f"    return {VIEW}\n") == [("SC103", 3, "`kernel` is 1")]


@pytest.mark.parametrize("body", [
    f"    if kernel == 1:\n        return {VIEW}\n",
    f"    if 1 == kernel:\n        return {VIEW}\n",
    f"    if x is None and kernel == 1:\n        return {VIEW}\n",
    f"    if x is None:\n        pass\n    elif kernel == 1:\n        return {VIEW}\n",
    f"    assert kernel == 1\n    return {VIEW}\n",
    f"    assert chout > 0 and kernel == 1 == len(x)\n    return {VIEW}\n",
    f"    while kernel == 1:\n        return {VIEW}\n",
])
def test_a_test_or_assert_that_states_the_exception_guarantees_it(body):
    assert _codes(body) == []


@pytest.mark.parametrize("body", [
    f"    if kernel == 1:\n        pass\n    else:\n        return {VIEW}\n",
    f"    if kernel == 1 or x is None:\n        return {VIEW}\n",
    f"    if kernel == 2:\n        return {VIEW}\n",
    f"    if kernel != 1:\n        return {VIEW}\n",
    f"    if kernel == 1:\n        pass\n    return {VIEW}\n",
])
def test_a_test_that_does_not_hold_at_the_view_guarantees_nothing(body):
    assert [code for code, _, _ in _codes(body)] == ["SC103"]


class _Ctx:
    """What guaranteed() asks of a rule context: the function, the statement, source text."""

    def __init__(self, code: str) -> None:
        self.module = cst.parse_module(code)
        self.function = self.module.body[0]
        self.statement = next(n for n in walk(self.function) if type(n) is cst.Return)

    def source(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)


@pytest.mark.parametrize("condition, holds", [
    ("`T` equals `C//nh`", True),
    ("`T` is 1 or `B` is 1", True),
    ("`B` is 1 or `T` equals `C//nh`", True),
    ("`T` and `B` are 1", False),
    ("`T` equals `C`", False),
    ("`x.device` is the CPU", False),
])
def test_alternatives_and_sizes_are_read_as_written_spaces_aside(condition, holds):
    ctx = _Ctx("def f(x, nh):\n    if T == C // nh and T == 1:\n        return x\n")
    assert guaranteed(ctx, condition) is holds


@pytest.mark.parametrize("test", ["t.numel() == 1", "t.size(0) == 1", "len(t) == 1", "t.shape[0] == 1"])
def test_item_on_a_tensor_tested_for_one_element(test):
    code = f"def f(t, tokens):\n    if t.size(0) > 0 and {test}:\n        tokens.append(t.item())\n"
    assert lint_text(code, selected_rules([])) == []
    unguarded = code.replace(f" and {test}:", ":")
    found = lint_text(unguarded, selected_rules([]))
    assert [(d.code, d.condition) for d in found] == [("SC602", "`t` has one element")]


@pytest.mark.parametrize("test, found", [("t.numel() == 1", []), ("t.size(0) == 1", ["SC602"])])
def test_a_first_dim_of_one_is_not_one_element_of_a_matrix(test, found):
    code = f"def f(t, tokens):\n    t = t.permute(1, 0)\n    if {test}:\n        tokens.append(t.item())\n"
    assert [d.code for d in lint_text(code, selected_rules([]))] == found


@pytest.mark.parametrize("body", [
    f"    if kernel != 1:\n        pass\n    else:\n        return {VIEW}\n",
    f"    if kernel > 1:\n        return x\n    return {VIEW}\n",
    f"    if kernel > 1 or x is None:\n        raise ValueError(x)\n    return {VIEW}\n",
    f"    if not kernel > 1:\n        return {VIEW}\n",
    f"    if kernel <= 1:\n        return {VIEW}\n",
    f"    if 2 > kernel:\n        return {VIEW}\n",
    f"    return x if kernel > 1 else {VIEW}\n",
    f"    return {VIEW} if kernel == 1 else x\n",
])
def test_else_sides_early_exits_and_conditional_expressions_state_the_exception_too(body):
    assert _codes(body) == []


@pytest.mark.parametrize("body", [
    f"    return {VIEW} if kernel > 1 else x\n",
    f"    if kernel > 1:\n        x = None\n    return {VIEW}\n",
    f"    if kernel > 1 and x is None:\n        return x\n    return {VIEW}\n",
    f"    if kernel <= 2:\n        return {VIEW}\n",
    f"    if kernel > 2:\n        return x\n    return {VIEW}\n",
])
def test_a_negation_or_side_that_leaves_the_size_open_guarantees_nothing(body):
    assert [code for code, _, _ in _codes(body)] == ["SC103"]


def test_float_of_a_tensor_on_the_side_where_it_has_at_most_one_element():
    code = ("import torch\ndef ratio(h, n, c):\n    out = h.view(n, c).sum(dim=-1)\n"
            "    return out if out.numel() > 1 else float(out)\n")
    assert lint_text(code, selected_rules([])) == []
    flipped = code.replace("out if out.numel() > 1 else float(out)", "float(out) if out.numel() > 1 else out")
    assert [(d.code, d.condition) for d in lint_text(flipped, selected_rules([]))] == [
        ("SC602", "`out` has one element")]
