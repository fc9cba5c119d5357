"""Rank bounds of layer and join outputs whose input rank is unknown (verified on torch 2.13):
``nn.Linear(8, 4)`` gives ``(..., 4)`` for any input with at least one dim, ``nn.Embedding``
adds a dim, and ``torch.cat(..., dim=-1)`` of ``(..., 64)`` and ``(..., 32)`` is ``(..., 96)``."""

from semantic_probe import shape


def test_linear_of_unknown_rank_ends_in_out_features():
    assert shape("import torch.nn as nn\nfc = nn.Linear(8, 4)\ndef f(x):\n    reveal(fc(x))\n") == "(..., 4)"


def test_embedding_of_unknown_rank_adds_a_dim():
    assert shape("import torch.nn as nn\nemb = nn.Embedding(10, 4)\ndef f(i):\n    reveal(emb(i))\n") == "(..., ?)"


def test_cat_on_the_last_dim_sums_the_known_widths():
    code = ("import torch\nimport torch.nn as nn\na = nn.Linear(10, 64)\nb = nn.Linear(10, 32)\n"
            "def f(x):\n    reveal(torch.cat([a(x), b(x)], dim=-1))\n")
    assert shape(code) == "(..., 96)"


def test_cat_on_dim_1_of_unknown_rank_has_at_least_two_dims_of_unknown_size():
    code = ("import torch\nimport torch.nn as nn\na = nn.Linear(10, 64)\nb = nn.Linear(10, 32)\n"
            "def f(x):\n    reveal(torch.cat([a(x), b(x)], dim=1))\n")
    assert shape(code) == "(?, ?, ...)"


def test_linear_of_a_known_rank_keeps_it():
    code = "import torch.nn as nn\nfc = nn.Linear(8, 4)\ndef f(x):\n    reveal(fc(x.view(-1, 8)))\n"
    assert shape(code) == "(?, 4)"
