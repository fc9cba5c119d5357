"""Which functions may call a torch factory (:mod:`shapecheck.rules.device.factory_calls`): SC403
skips following the names of a function that cannot, so every spelling of a factory call must
keep a function followed, and SC403 must still flag a factory written through an alias."""

from __future__ import annotations

from functools import partial

import libcst as cst

from rule_harness import family_rules, finding_lines
from shapecheck.rules.device.factory_calls import factory_aliases, may_call_factory

codes = partial(finding_lines, rules=family_rules("SC403"))

SOURCE = """\
import torch
from torch import zeros as z, nn
import torch as T
def plain(x):
    return x.sum() + x.new_zeros(2).sum()
def dotted(x):
    return T.arange(3)
def aliased(x):
    return z(3)
def in_default(x, y=torch.ones(2)):
    return x
def in_nested(x):
    def inner():
        return torch.randn(2)
    return x
def in_lambda(x):
    return (lambda: torch.eye(2))()
def imported_inside(x):
    from torch import arange
    return x
"""


def _functions() -> tuple[dict[str, cst.FunctionDef], frozenset[str]]:
    module = cst.parse_module(SOURCE)
    return {s.name.value: s for s in module.body if type(s) is cst.FunctionDef}, factory_aliases(module)


def test_factory_aliases_are_the_names_imports_bind_to_factories() -> None:
    _, aliases = _functions()
    assert aliases == {"z", "arange"}


def test_every_spelling_of_a_factory_call_counts() -> None:
    functions, aliases = _functions()
    found = {name: may_call_factory(f, aliases) for name, f in functions.items()}
    assert found == {"plain": False, "dotted": True, "aliased": True, "in_default": True, "in_nested": True,
                     "in_lambda": True, "imported_inside": False}


ALIASED = (
    "import torch\nimport torch.nn as nn\nfrom torch import arange as ar\n"
    "class Pos(nn.Module):\n"
    "    def __init__(self, n, d):\n        super().__init__()\n        self.wpe = nn.Embedding(n, d)\n"
    "    def forward(self, x):\n"
    "        t = x.size(1)\n"
    "        pos = ar(t{device})\n"
    "        return x + self.wpe(pos)\n"  # 11
)


def test_a_factory_imported_under_another_name_is_still_followed() -> None:
    assert codes(ALIASED.format(device="")) == [("SC403", 11)]
    assert codes(ALIASED.format(device=", device=x.device")) == []


PLAIN_ATTRIBUTE = (
    "import torch\nimport torch.nn as nn\n"
    "class Norm(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.mean = torch.tensor([0.5, 0.5, 0.5])\n"
    "    def forward(self, x):\n"
    "        y = x * 2\n"
    "        return y - self.mean\n"  # 9
    "model = Norm().cuda()\n"
)


def test_a_function_without_factories_still_meets_a_plain_attribute() -> None:
    """``forward`` calls no factory; the names computed from its input are still followed."""
    assert codes(PLAIN_ATTRIBUTE) == [("SC403", 9)]
