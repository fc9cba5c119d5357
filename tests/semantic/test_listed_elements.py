"""The elements of a list comprehension over a known range, read directly or through a name the
function never changes (semantic/eval/listed_elements.py); torch 2.13 agrees on each shape."""

from __future__ import annotations

import pytest

from tests.semantic.semantic_probe import facts, shape
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules
from shapecheck.shapes import format_shape


def test_comprehension_elements():
    (f,) = facts("reveal([torch.randn(2, 8) for _ in range(3)])\n")
    assert f.elems is not None and len(f.elems) == 3
    assert {format_shape(e.shape) for e in f.elems} == {"(2, 8)"}


def test_stack_through_an_unchanged_parameter_and_a_call_site():
    code = ("import torch\ndef collate(data):\n    obs = torch.stack(data, dim=0)\n    return obs.permute(2, 0, 1)\n"
            "y = collate([torch.randn(2, 8) for _ in range(3)])\nreveal(y)\n")
    assert shape(code) == "(8, 3, 2)"
    pytest.importorskip("torch")
    scope: dict = {"reveal": lambda v: v}
    exec(code, scope)
    assert tuple(scope["y"].shape) == (8, 3, 2)


@pytest.mark.parametrize("change", ["data.append(torch.randn(2, 8))", "data[0] = torch.randn(4, 8)",
                                    "data += [torch.randn(2, 8)]"])
def test_a_list_changed_in_place_is_not_read(change):
    code = (f"import torch\ndef collate(data):\n    {change}\n    return torch.stack(data, dim=0)\n"
            "y = collate([torch.randn(2, 8) for _ in range(3)])\nreveal(y)\n")
    assert shape(code) != "(3, 2, 8)" and shape(code) != "(4, 2, 8)"


def test_sgan_encoder_view_of_a_permuted_batch():
    code = ("import torch\nimport torch.nn as nn\n\ndef seq_collate(data):\n    obs = torch.stack(data, dim=0)\n"
            "    return obs.permute(2, 0, 1)\n\nclass Encoder(nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.emb = nn.Linear(2, 16)\n\n    def forward(self, obs_traj):\n"
            "        return self.emb(obs_traj.view(-1, 2))\n\n"
            "obs_traj = seq_collate([torch.randn(2, 8) for _ in range(3)])\nout = Encoder()(obs_traj)\n")
    rules = [r for r in all_rules() if r.code == "SC101"]
    assert [(d.code, d.line) for d in lint_text(code, rules)] == [("SC101", 14)]
    fixed = code.replace("obs.permute(2, 0, 1)", "obs.permute(2, 0, 1).contiguous()")
    assert lint_text(fixed, rules) == []
