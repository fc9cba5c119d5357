"""SC203 and SC204 on real-code shapes: the pair of ``max(dim)`` passed on to layers, functions
and subscripts; features through ``cat``, convolutions and poolings (verified with torch 2.13)."""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, findings

SHAPE = family_rules("SC203", "SC204")
flagged = partial(findings, rules=SHAPE)


def test_pair_given_to_a_layer():
    code = ("import torch\nimport torch.nn as nn\nfc = nn.Linear(16, 2)\ndef f(h):\n"
            "    pooled = torch.max(h, dim=2)\n    return fc(pooled)\n")
    [(code_, line, message)] = flagged(code)
    assert (code_, line) == ("SC204", 6)
    assert "passing it to `fc` raises TypeError" in message


def test_pair_indexed_as_a_tensor():
    [(code_, line, message)] = flagged("import torch\ndef f(x):\n    return torch.topk(x, 3)[:, :2]\n")
    assert (code_, line) == ("SC204", 3)
    assert "tuple indices must be integers or slices" in message


def test_pair_used_twice_in_one_statement_is_reported_once():
    code = ("import torch.nn.functional as F\ndef test(model, data, target):\n    output = model(data)\n"
            "    loss = F.nll_loss(output, target)\n    pred = output.max(1)\n"
            "    return pred.eq(target.view_as(pred)).sum()\n")
    assert [(c, line) for c, line, _ in flagged(code)] == [("SC204", 6)]


def test_pair_as_a_sequence_and_its_parts_are_fine():
    code = ("import torch\nimport torch.nn.functional as F\ndef f(h):\n    v, i = torch.max(h, 1)\n"
            "    return torch.cat(torch.max(h, 1)), torch.stack(h.max(1)), F.relu(v), torch.topk(h, 2)[0][:, :1]\n")
    assert flagged(code) == []


def test_conv_pool_flatten_into_a_linear_of_the_wrong_width():
    code = ("import torch\nimport torch.nn as nn\nconv = nn.Conv2d(1, 32, 3, 1)\npool = nn.MaxPool2d(2)\n"
            "fc = nn.Linear(32 * 14 * 14, 10)\nx = torch.randn(4, 1, 28, 28)\n"
            "y = fc(torch.flatten(pool(conv(x)), 1))\n")
    [(code_, line, message)] = flagged(code)
    assert (code_, line) == ("SC203", 7)
    assert "nn.Linear(6272, ...)" in message and "(4, 5408)" in message


def test_conv_fed_the_wrong_number_of_channels():
    code = "import torch\nimport torch.nn as nn\nconv = nn.Conv2d(3, 8, 3)\ny = conv(torch.randn(1, 28, 28))\n"
    [(code_, line, message)] = flagged(code)
    assert (code_, line) == ("SC203", 4)
    assert "3 input channels" in message and "1 channels" in message
