"""Sizes kept in a variable (``hs = C // self.n_head``) and the result of a matrix product
whose inner dims clash."""

from __future__ import annotations

from semantic_probe import one, reveal, shape

from shapecheck.semantic.facts import INT
from shapecheck.shapes import Measured

_FORWARD = (
    "class A(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
    "        self.n_head = config.n_head\n    def forward(self, x, t):\n        B, T, C = x.size()\n"
)


def test_a_quotient_by_an_attribute_kept_in_a_variable_is_a_size_of_the_read():
    f = one(_FORWARD + "        hs = C // self.n_head\n        reveal(hs)\n")
    assert f.kind is None and f.dim == "C//self.n_head" and isinstance(f.dim, Measured)
    assert shape(_FORWARD + "        hs = C // self.n_head\n"
                 "        reveal(x.view(B, T, self.n_head, hs))\n") == "(B, T, self.n_head, C//self.n_head)"


def test_a_product_with_a_parameter_and_plain_ints_are_unchanged():
    assert one(_FORWARD + "        reveal(T * t)\n").dim == "T*t"
    f = one(_FORWARD + "        reveal(C // 4)\n")
    assert f.kind == INT and f.dim == "C//4"


def test_no_size_from_a_tensor_a_list_or_an_unknown_call():
    assert one(_FORWARD + "        reveal(C // torch.ones(2))\n").dim is None
    assert one(_FORWARD + "        reveal(C * [1])\n").dim is None
    assert one(_FORWARD + "        reveal(C // self.heads())\n").dim is None
    assert one("def f(n, m):\n    reveal(n // m)\n").dim is None


def test_a_product_whose_inner_dims_clash_keeps_its_rank_only():
    code = ("def f(x):\n    B, T, C = x.size()\n    y = x.contiguous()\n"
            "    reveal(y @ y)\n    reveal(y @ y.transpose(1, 2))\n")
    [(clash, _), (fits, _)] = reveal(code)
    assert clash.shape is not None and clash.shape.dims == (None, None, None)
    assert fits.shape is not None and fits.shape.dims == ("B", "T", "T")
    assert shape("import torch\nreveal(torch.randn(3, 1) @ torch.randn(3, 1))\n") == "(?, ?)"
