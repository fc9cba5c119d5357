"""A list display of ``(input, target)`` tensor pairs used as a loader: a loop over it binds the
join of its items, and the list starts a walk of the function it is passed to (and of the
functions that function passes it on to), so a batch that never reaches the model's device is
SC401, and a discarded ``images.cuda()`` is SC402. Items that are not tensors, or a list of
unknown items, bind nothing."""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, findings

DEVICE_RULES = family_rules("SC4")
flagged = partial(findings, rules=DEVICE_RULES)

CHAIN = (
    "import torch\n"
    "import torch.nn as nn\n"
    "def train(model, loader):\n"
    "    for data, target in loader:\n"
    "        data{move}\n"                                                 # 5
    "        out = model(data)\n"                                          # 6
    "def main(device, loader):\n"
    "    model = nn.Linear(4, 2).to(device)\n"
    "    train(model, loader)\n"                                           # 9
    "def demo():\n"
    "    loader = [{items}]\n"
    "    main(torch.device('cuda'), loader)\n"
)
PAIR = "(torch.randn(4, 4), torch.randn(4))"


def test_a_batch_of_a_list_passed_through_two_calls_is_on_the_cpu() -> None:
    found = flagged(CHAIN.format(move=" = data", items=PAIR))
    assert [(c, line) for c, line, _ in found] == [("SC401", 6)]
    assert found[0][2].startswith("module `model` is on CUDA but its input `data` is on the CPU")
    assert found[0][2].endswith("(with the arguments of the call on line 9)")


def test_a_discarded_move_of_such_a_batch_is_sc402() -> None:
    found = flagged(CHAIN.format(move=".cuda()", items=PAIR))
    assert [(c, line) for c, line, _ in found] == [("SC402", 5), ("SC401", 6)]


def test_moved_batches_and_unknown_items_are_silent() -> None:
    assert flagged(CHAIN.format(move=" = data.to('cuda')", items=PAIR)) == []
    assert flagged(CHAIN.format(move=" = data", items="(1, 2)")) == []
    assert flagged(CHAIN.format(move=" = data", items="make()")) == []
