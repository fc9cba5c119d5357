"""The values of a dict that a function fills by item assignment only (semantic/dict_values.py):
item reads give the join of what was stored, here and at the callers; any other use of the name
keeps nothing. torch 2.13 agrees on the shapes read back."""

from __future__ import annotations

import pytest

from tests.semantic.semantic_probe import facts, shape
from shapecheck.semantic.facts import TENSOR, Fact, join


ESTIMATE = (
    "import torch\n"
    "def estimate(n):\n"
    "    out = {}\n"
    "    for split in ['train', 'val']:\n"
    "        losses = torch.zeros(n)\n"
    "        out[split] = VALUE\n"
    "    return out\n"
)


def test_values_stored_in_a_loop_are_read_back_at_the_caller():
    code = ESTIMATE.replace("VALUE", "losses") + "result = estimate(5)\nreveal(result['val'])\n"
    assert shape(code) == "(5,)"
    pytest.importorskip("torch")
    scope: dict = {"reveal": lambda v: v}
    exec(code, scope)
    assert tuple(scope["result"]["val"].shape) == (5,)


def test_a_reduced_value_is_0_dim_at_the_caller():
    code = ESTIMATE.replace("VALUE", "losses.mean()") + "result = estimate(5)\nreveal(result['val'])\n"
    assert shape(code) == "()"


def test_a_display_holds_the_join_of_its_values():
    (same, mixed) = facts(
        "def f():\n    d = {'a': torch.zeros(2, 3), 'b': torch.ones(2, 3)}\n    reveal(d['a'])\n"
        "    e = {'a': torch.zeros(2, 3), 'b': torch.zeros(4)}\n    reveal(e['b'])\n")
    assert same.kind == TENSOR and same.shape is not None and same.shape.dims == (2, 3)
    assert mixed.kind == TENSOR and mixed.shape is None


@pytest.mark.parametrize("use", [
    "out.update(extra)",            # a method that stores
    "out.setdefault('b', extra)",
    "out['a'] += extra",            # an augmented item assignment
    "alias = out",                  # an alias may store later
    "keep(out)",                    # a callee may store
    "out2 = [out]",
])
def test_any_other_use_keeps_nothing(use):
    code = (f"def f(extra, keep):\n    out = {{'a': torch.zeros(4)}}\n    {use}\n    reveal(out['a'])\n")
    (f,) = facts(code)
    assert f.kind is None and f.shape is None


def test_a_nested_function_that_stores_keeps_nothing_but_its_own_locals_do_not_count():
    stored, own = facts(
        "def f():\n    out = {'a': torch.zeros(4)}\n    def g():\n        out['a'] = 1\n    reveal(out['a'])\n"
        "def h():\n    out = {'a': torch.zeros(4)}\n    def g():\n        out = 3\n        return out\n"
        "    reveal(out['a'])\n")
    assert stored.kind is None
    assert own.kind == TENSOR and own.shape is not None and own.shape.dims == (4,)


def test_reading_uses_keep_the_values():
    (f,) = facts(
        "def f():\n    out = {'x': torch.zeros(2, 3)}\n    if 'x' in out and len(out) > 0:\n"
        "        v = out.get('x')\n    for k in out:\n        pass\n    del out['y']\n    reveal(out['x'])\n")
    assert f.kind == TENSOR and f.shape is not None and f.shape.dims == (2, 3)


def test_a_list_value_is_kept_unknown():
    (f,) = facts("def f(t):\n    out = {}\n    out['a'] = []\n    out['a'].append(t)\n    reveal(out['a'])\n")
    assert f.elems is None


def test_join_of_an_empty_dict_adds_no_values():
    a = Fact(kind=TENSOR)
    assert join(Fact(mapped=()), Fact(mapped=(a,))).mapped == (a,)
    assert join(Fact(mapped=()), Fact()).mapped is None


def test_a_dict_held_by_an_attribute_or_a_sequence_keeps_nothing():
    attr, element = facts(
        "class Stats:\n    def __init__(self):\n        self.d = {'m': torch.zeros(3)}\n"
        "    def update(self):\n        self.d['m'] = torch.zeros(5)\n"
        "    def read(self):\n        reveal(self.d['m'])\n"
        "def f():\n    pair = ({'m': torch.zeros(3)}, 1)\n    pair[0]['m'] = torch.zeros(5)\n"
        "    reveal(pair[0]['m'])\n")
    assert attr.shape is None and element.shape is None


def test_a_dict_given_as_an_argument_keeps_nothing_in_the_callee():
    (f,) = facts("def g(d, extra):\n    d.update(extra)\n    reveal(d['m'])\n    return d\n"
                 "g({'m': torch.zeros(3)}, {})\n")
    assert f.shape is None


def test_no_finding_on_a_dict_the_callee_changes_through_its_parameter():
    from shapecheck.engine.runner import lint_text
    from shapecheck.rules.catalog import all_rules

    code = ("import torch\ndef g(d, extra):\n    d.update(extra)\n    if d['m'] > 0:\n        return 1\n"
            "g({'m': torch.zeros(3)}, {'m': 1.0})\n")
    assert [d.code for d in lint_text(code, all_rules())] == []
    buggy = code.replace("    d.update(extra)\n", "")
    assert [d.code for d in lint_text(buggy, all_rules())] == []  # a parameter: its caller may change it


def test_module_level_names_and_the_locals_of_classes_and_functions():
    from shapecheck.semantic.dict_values import tracked_dicts
    import libcst as cst

    module = cst.parse_module(
        "class Net:\n    def forward(self):\n        out = {}\n        return out\n"
        "def est():\n    out = {}\n    return out\n"
        "def closure():\n    def g(d=stats):\n        d['a'] = 1\n"
        "def reader():\n    print(seen)\n"
        "out = est()\nstats = {}\nseen = {}\n")
    tracked = tracked_dicts(module)
    assert "out" in tracked  # the methods' and functions' own `out` are other variables
    assert "stats" not in tracked  # a default value is evaluated here and may be changed through
    assert "seen" not in tracked  # a function reads the module's dict: it may change it
