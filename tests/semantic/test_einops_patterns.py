"""einops.rearrange shapes, map(lambda ...) over a sequence of known length, the pieces of
chunk, and starred pieces in a tuple display (shapecheck.semantic.eval.einops_patterns,
chunk_pieces)."""

from __future__ import annotations

from semantic_probe import one, shape

from shapecheck.generic_dims import Part, independent
from shapecheck.shapes import Measured

_HEAD = "import torch\nfrom einops import rearrange\n"


def test_a_pattern_reads_the_sizes_it_names():
    f = one(_HEAD + "def f(x, heads):\n    reveal(rearrange(x, 'b n (h d) -> b h n d', h=heads))\n")
    assert f.shape is not None and [str(d) for d in f.shape.dims] == ["b", "heads", "n", "d"]
    b, h, n, d = f.shape.dims
    assert all(isinstance(s, Measured) for s in (b, n, d)) and isinstance(h, Part)
    assert independent(n, d) and independent(h, n) and not independent(h, d)
    assert shape(_HEAD + "x = torch.randn(2, 5, 12)\nreveal(rearrange(x, 'b n (h d) -> b h n d', h=3))\n") \
        == "(2, 3, 5, 4)"
    assert shape(_HEAD + "x = torch.randn(2, 3, 5, 4)\nreveal(rearrange(x, 'b h n d -> b n (h d)'))\n") \
        == "(2, 5, 12)"


def test_patterns_not_read_stay_unknown():
    for pattern in ("'b ... -> b ...'", "'b 1 c -> b c'", "'b (h (d e)) -> b h d e'", "'b c -> b c c'",
                    "'b c -> b d'", "pattern"):
        assert shape(_HEAD + f"def f(x, pattern):\n    reveal(rearrange(x, {pattern}))\n") == "unknown", pattern
    assert shape(_HEAD + "x = torch.randn(2, 5)\nreveal(rearrange(x, 'b n c -> b c n'))\n") == "unknown"


def test_map_of_a_lambda_over_the_chunks_of_a_projection():
    code = (_HEAD + "import torch.nn as nn\nclass A(nn.Module):\n    def __init__(self, dim, heads):\n"
            "        super().__init__()\n        self.heads = heads\n        self.to_qkv = nn.Linear(dim, dim * 3)\n"
            "    def forward(self, x):\n        qkv = self.to_qkv(x).chunk(3, dim=-1)\n"
            "        q, k, v = map(lambda t: rearrange(t, 'b n (h d) -> b h n d', h=self.heads), qkv)\n"
            "        reveal(k)\n")
    assert shape(code) == "(b, self.heads, n, d)"
    assert shape(_HEAD + "t = 3\nx = torch.randn(4, 6)\nys = map(lambda t: t * 2, x.chunk(2, 1))\n"
                 "a, b = ys\nreveal(b)\n") == "(4, ?)"
    assert shape(_HEAD + "t = torch.randn(7)\nx = torch.randn(4, 6)\nys = list(map(lambda t: t, x.chunk(2, 1)))\n"
                 "reveal(t)\n") == "(7,)"
    assert shape(_HEAD + "def f(xs):\n    a, b = map(lambda t: t * 2, xs)\n    reveal(a)\n") == "unknown"


def test_starred_pieces_in_a_tuple():
    code = _HEAD + "x = torch.randn(4, 6)\nparts = (x, *x.chunk(2, dim=0))\na, b, c = parts\nreveal(c)\n"
    assert shape(code) == "(?, 6)"
    assert shape(_HEAD + "def f(xs):\n    x = torch.randn(4, 6)\n    a, b = (x, *xs)\n    reveal(b)\n") == "unknown"
