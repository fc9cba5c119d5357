"""Sizes given to ``__init__`` of a module class: kept as symbols in the tensors and layers
``forward`` sees, made the ints of the file's constructions in call-site walks; and the shapes
of ``F.conv*d``, ``torch.fft`` transforms and ``nn.Sequential`` chains of Linear layers they
flow through (each expected torch shape below was printed by torch 2.13 on CPU)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from semantic_probe import HEAD, reveal, shape
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule
from shapecheck.semantic.config_sizes import constructed_sizes
from shapecheck.semantic.facts import INT, DtypeKind
from shapecheck.shapes import format_shape

DENSE = '''\
import torch
import torch.nn as nn


class Dense(nn.Module):
    def __init__(self, n_in, n_out{extra}):
        super().__init__()
{init}        self.W = nn.Parameter(torch.randn(n_in, n_out))
        self.b = nn.Parameter(torch.zeros(n_out))

    def forward(self, x):
        reveal(self.W)
        reveal(self.b)
        return x @ self.W + self.b
'''


def _forward_shapes(extra: str = "", init: str = "") -> list[str]:
    seen = reveal(DENSE.format(extra=extra, init=init))
    return [format_shape(f.shape) if f.shape is not None else "unknown" for f, flags in seen
            if flags["function"] == "forward"]


def test_forward_sees_the_sizes_given_to_init():
    assert _forward_shapes() == ["(n_in, n_out)", "(n_out,)"]


def test_a_parameter_rebound_in_init_is_no_config_size():
    assert _forward_shapes(init="        n_out = n_out * 2\n") == ["(n_in, ?)", "unknown"]


def test_a_parameter_with_a_default_other_than_an_int_is_no_config_size():
    assert _forward_shapes(extra=", k=None")[0] == "(n_in, n_out)"
    code = DENSE.replace("n_in, n_out{extra}", "n_in, n_out=(3, 4)").format(init="")
    seen = [f for f, flags in reveal(code) if flags["function"] == "forward"]
    assert format_shape(seen[0].shape) == "(n_in, ?)"


def test_a_size_torch_takes_only_as_an_int_makes_the_parameter_an_int():
    code = HEAD + textwrap.dedent('''\
        class M(nn.Module):
            def __init__(self, a, b, c):
                super().__init__()
                self.fc = nn.Linear(a, 4)
                self.w = torch.randn(b, 2)
                reveal(a)
                reveal(b)
                reveal(c)
        ''')
    kinds = [f.kind for f, _ in reveal(code)]
    assert kinds == [INT, INT, None]


def _sizes(code: str, name: str = "Dense") -> dict[str, int]:
    module = cst.parse_module(textwrap.dedent(code))
    class_def = next(s for s in module.body if type(s) is cst.ClassDef and s.name.value == name)
    return constructed_sizes(module, class_def)


CLASS = "class Dense:\n    def __init__(self, n_in, n_out, hidden=16, act=None):\n        pass\n"


@pytest.mark.parametrize("uses, expected", [
    ("a = Dense(5, 3)\nb = Dense(5, n_out=3)\n", {"n_in": 5, "n_out": 3, "hidden": 16}),
    ("a = Dense(5, 3, 8)\nb = Dense(5, 4)\n", {"n_in": 5}),     # the constructions disagree on n_out, hidden
    ("a = Dense(n, 3)\n", {"n_out": 3, "hidden": 16}),         # a name: unknown
    ("a = Dense(*sizes)\n", {}),                                 # unknown arguments
    ("a = Dense(5, 3)\nmake = Dense\n", {}),                     # the class used as a value
    ("a = Dense(5, 3)\nclass Wide(Dense):\n    pass\n", {}),    # a subclass builds it too
    ("", {}),                                                    # never built
])
def test_sizes_every_construction_gives(uses, expected):
    assert _sizes(CLASS + uses) == expected


@pytest.mark.parametrize("expr, expected", [
    ("F.conv2d(torch.randn(2, 3, 32, 32), torch.randn(16, 3, 3, 3), padding=1)", "(2, 16, 32, 32)"),
    ("F.conv2d(torch.randn(2, 3, 32, 32), torch.randn(16, 3, 3, 3), stride=2)", "(2, 16, 15, 15)"),
    ("F.conv1d(torch.randn(4, 10), torch.randn(8, 4, 3))", "(8, 8)"),
    ("F.conv2d(torch.randn(2, 4, 9, 9), torch.randn(6, 2, 3, 3), groups=2)", "(2, 6, 7, 7)"),
    ("F.conv2d(torch.randn(2, 3, 32, 32), torch.randn(16, 3, 3, 3), padding='same')", "(2, 16, ?, ?)"),
    ("torch.fft.rfft(torch.randn(2, 4, 32))", "(2, 4, 17)"),
    ("torch.fft.irfft(torch.fft.rfft(torch.randn(2, 4, 32)))", "(2, 4, 32)"),
    ("torch.fft.rfft(torch.randn(2, 4, 32), n=10)", "(2, 4, 6)"),
    ("torch.fft.irfft(torch.randn(2, 4, 32), n=20)", "(2, 4, 20)"),
    ("torch.fft.rfft(torch.randn(2, 4, 32), dim=1)", "(2, 3, 32)"),
    ("torch.fft.hfft(torch.randn(2, 4, 32))", "(2, 4, 62)"),
    ("torch.fft.fft2(torch.randn(2, 4, 32))", "(?, ?, ?)"),
    ("nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5), nn.Dropout())(torch.randn(8, 3, 10))",
     "(8, 3, 5)"),
    ("nn.Sequential(nn.Linear(10, 64), nn.Conv1d(3, 3, 1))(torch.randn(8, 3, 10))", "(8, 3, 64)"),
])
def test_shapes_torch_gives(expr, expected):
    assert shape(HEAD + "import torch.nn.functional as F\n" + f"reveal({expr})\n") == expected


def test_an_rfft_is_complex():
    f = reveal(HEAD + "reveal(torch.fft.rfft(torch.randn(2, 4, 32)))\n")[0][0]
    assert f.dtype_kind == DtypeKind.COMPLEX


def _lint(code: str, codes: tuple[str, ...] = ("SC202", "SC203", "SC503")) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in lint_text(textwrap.dedent(code), [get_rule(c) for c in codes])]


WS_CONV = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class WSConv(nn.Module):
    def __init__(self, cin, cout, k=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))
        self.bias = nn.Parameter(torch.zeros(cout))

    def forward(self, x):
        out = F.conv2d(x, self.weight, padding=1)
        return out + self.bias{fix}


y = WSConv(3, 16)(torch.randn(2, 3, 32, 32))
'''


def test_the_sizes_of_the_construction_reach_a_broadcast():
    assert _lint(WS_CONV.format(fix="")) == [("SC202", 14)]
    assert _lint(WS_CONV.format(fix=".view(1, -1, 1, 1)")) == []


def test_two_constructions_that_disagree_give_no_sizes():
    code = WS_CONV.format(fix="") + "z = WSConv(3, 32)(torch.randn(2, 3, 32, 32))\n"
    found = lint_text(code, [get_rule("SC202")])
    assert all("16" not in d.message and d.condition is not None for d in found)  # `cout` stays a symbol


def test_an_attribute_the_file_replaces_keeps_its_symbols():
    replaced = "m = WSConv(3, 16)\nm.bias = nn.Parameter(torch.zeros(1, 16, 1, 1))\ny = m("
    code = WS_CONV.format(fix="").replace("y = WSConv(3, 16)(", replaced)
    assert all("16" not in d.message for d in lint_text(code, [get_rule("SC202")]))


def test_a_parameter_the_file_resizes_in_place_keeps_its_symbols():
    code = WS_CONV.format(fix="").replace(
        "    def forward(self, x):\n",
        "    def reset(self, n):\n        self.bias.data = torch.zeros(1, n, 1, 1)\n\n    def forward(self, x):\n")
    assert all("16" not in d.message for d in lint_text(code, [get_rule("SC202")]))


ATTENTION = '''\
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x):
        q, k = self.q(x), self.k(x)
        return torch.bmm(q, {key}) / q.size(-1) ** 0.5


y = Attention(8)(torch.randn(2, 5, 8))
'''


def test_keys_not_transposed_raise_with_the_sizes_of_the_construction():
    assert _lint(ATTENTION.format(key="k")) == [("SC203", 13)]
    assert _lint(ATTENTION.format(key="k.transpose(1, 2)")) == []


def test_two_instances_of_other_sizes_each_used_right_are_silent():
    code = DENSE.format(extra="", init="").replace("        reveal(self.W)\n        reveal(self.b)\n", "") + (
        "a = Dense(5, 3)(torch.randn(4, 5))\nb = Dense(2, 7)(torch.randn(6, 2))\n")
    assert _lint(code) == []
