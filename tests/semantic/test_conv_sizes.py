"""Output sizes of convolutions and poolings with known geometry and input sizes, as torch 2.13
computes them (each expected shape below was printed by torch on CPU)."""

import pytest

from semantic_probe import shape

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("expr, expected", [
    ("nn.Conv2d(1, 32, 3, 1)(torch.randn(4, 1, 28, 28))", "(4, 32, 26, 26)"),
    ("nn.Conv2d(3, 8, kernel_size=(3, 5), stride=2, padding=1)(torch.randn(2, 3, 32, 32))", "(2, 8, 16, 15)"),
    ("nn.AvgPool2d(3, stride=2, padding=1)(torch.randn(3, 32, 32))", "(3, 16, 16)"),
    ("nn.MaxPool2d(3, 2, 1, 2)(torch.randn(1, 3, 10, 10))", "(1, 3, 4, 4)"),
    ("F.max_pool2d(torch.randn(1, 3, 10, 10), 3, 2, 1, 1)", "(1, 3, 5, 5)"),
    ("F.avg_pool1d(torch.randn(2, 4, 9), 2)", "(2, 4, 4)"),
    ("torch.flatten(F.max_pool2d(nn.Conv2d(1, 64, 5)(torch.randn(4, 1, 28, 28)), 2), 1)", "(4, 9216)"),
    # a string padding; ceil mode, whose last window must start inside the input or its left padding
    ("nn.Conv2d(3, 8, 3, padding='same')(torch.randn(2, 3, 32, 32))", "(2, 8, 32, 32)"),
    ("nn.Conv2d(3, 8, 5, padding='same', dilation=2)(torch.randn(2, 3, 9, 9))", "(2, 8, 9, 9)"),
    ("nn.Conv2d(3, 8, 3, padding='valid')(torch.randn(2, 3, 9, 9))", "(2, 8, 7, 7)"),
    ("nn.MaxPool2d(2, ceil_mode=True)(torch.randn(2, 3, 33, 33))", "(2, 3, 17, 17)"),
    ("nn.MaxPool2d(3, stride=2, ceil_mode=True)(torch.randn(2, 3, 8, 8))", "(2, 3, 4, 4)"),
    ("nn.AvgPool2d(2, stride=2, padding=1, ceil_mode=True)(torch.randn(1, 3, 4, 4))", "(1, 3, 3, 3)"),
])
def test_known_geometry_gives_torch_sizes(expr, expected):
    assert shape(HEAD + f"reveal({expr})\n") == expected


@pytest.mark.parametrize("expr", [
    "nn.Conv2d(3, 8, 3, padding='same', stride=2)(torch.randn(2, 3, 32, 32))",  # torch rejects it
    "nn.MaxPool2d(2, ceil_mode=flag)(torch.randn(2, 3, 33, 33))",       # ceil mode not known
    "nn.MaxPool2d(2, return_indices=True)(torch.randn(2, 3, 32, 32))",  # a (values, indices) pair
])
def test_unsupported_geometry_leaves_the_sizes_unknown(expr):
    assert shape(HEAD + f"reveal({expr})\n") in ("unknown", "(2, ?, ?, ?)")
