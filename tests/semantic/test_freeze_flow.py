"""A layer built in a function requires grad until a statement that may freeze it, in a file that
freezes parameters somewhere (shapecheck.semantic.freeze_flow)."""

from __future__ import annotations

from semantic_probe import reveal

_FROZEN_ELSEWHERE = "def freeze(m):\n    for p in m.parameters():\n        p.requires_grad = False\n"


def _trainable(code: str) -> list:
    return [f.trainable for f, _ in reveal("import torch\nimport torch.nn as nn\n" + _FROZEN_ELSEWHERE + code)]


def test_a_new_layer_requires_grad_until_a_statement_that_may_freeze_it():
    # (`reveal` itself is a call of an unknown function: one per program, last)
    head = "def build():\n    m = nn.Linear(2, 2)\n    y = torch.relu(m(torch.ones(2)))\n    print(len([1]))\n"
    assert _trainable(head + "    reveal(m)\n") == [True]
    assert _trainable(head + "    freeze(m)\n    reveal(m)\n") == [None]


def test_every_way_of_freezing_ends_it():
    for stmt in ("m.requires_grad_(False)", "m.weight.requires_grad = False",
                 "setattr(m.weight, 'requires_grad', False)", "m.apply(fn)", "helper.freeze(m)",
                 "for p in m.parameters():\n        p.requires_grad = False"):
        code = f"def build(fn, helper):\n    m = nn.Linear(2, 2)\n    {stmt}\n    reveal(m)\n"
        assert _trainable(code) in ([None], [False]), stmt


def test_module_level_layers_stay_unknown_in_a_file_that_freezes():
    assert _trainable("m = nn.Linear(2, 2)\nreveal(m)\n") == [None]


def test_in_a_file_that_never_freezes_nothing_changes():
    seen = reveal("import torch.nn as nn\nm = nn.Linear(2, 2)\nreveal(m)\ndef f(g):\n    k = nn.Linear(2, 2)\n"
                  "    g(k)\n    reveal(k)\n")
    assert [f.trainable for f, _ in seen] == [True, None]  # a module passed to a function keeps only its class
