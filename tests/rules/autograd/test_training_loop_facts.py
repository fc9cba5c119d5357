"""Round 4 of issue 11 on training code: module-level loss criteria, optimizers matched to the
modules they update, LBFGS closures, `requires_grad` guards, copied losses, slices of tensors,
lists appended in loops. Each capability with the code it must flag and look-alikes it must not."""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, finding_lines

TRAINING_RULES = family_rules("SC3", "SC6")
codes = partial(finding_lines, rules=TRAINING_RULES)

GLOBAL_CRITERION = """\
import torch.nn as nn
criterion = nn.MSELoss(reduction="none")
def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
"""


def test_a_module_level_unreduced_criterion_reaches_the_training_function():
    assert ("SC304", 7) in codes(GLOBAL_CRITERION)


def test_a_criterion_rebound_through_global_or_twice_at_module_level_is_not_trusted():
    rebound = GLOBAL_CRITERION + "def reset():\n    global criterion\n    criterion = nn.MSELoss()\n"
    assert ("SC304", 7) not in codes(rebound)
    twice = GLOBAL_CRITERION.replace('criterion = nn.MSELoss(reduction="none")\n',
                                     'criterion = nn.MSELoss(reduction="none")\ncriterion = nn.MSELoss()\n')
    assert "SC304" not in [c for c, _ in codes(twice)]


def test_a_nested_function_does_not_read_the_module_value():
    code = ("import torch.nn as nn\ncriterion = nn.MSELoss(reduction=\"none\")\n"
            "def outer(model, x, y):\n    criterion = nn.MSELoss()\n"
            "    def step():\n        criterion(model(x), y).backward()\n    step()\n")
    assert "SC304" not in [c for c, _ in codes(code)]


GAN = """\
import torch.optim as optim
def train(netG, netD, loader, criterion, noise):
    optimizerD = optim.Adam(netD.parameters())
    optimizerG = optim.Adam(netG.parameters())
    for real, label in loader:
        netD.zero_grad()
        criterion(netD(real), label).backward()
        fake = netG(noise)
        criterion(netD(fake.detach()), 1 - label).backward()
        optimizerD.step()
        {clear}
        criterion(netD(fake), label).backward()
        optimizerG.step()
"""


def test_the_optimizer_whose_module_is_never_cleared_is_flagged_with_the_module_named():
    found = [d for d in __import__("rule_harness").findings(GAN.format(clear="pass"), TRAINING_RULES)
             if d[0] == "SC308"]
    assert [(c, line) for c, line, _ in found] == [("SC308", 13)]
    assert "`netG`" in found[0][2] and "`netD.zero_grad()`" in found[0][2]


def test_each_spelling_of_the_clear_counts():
    for clear in ("netG.zero_grad()", "optimizerG.zero_grad()", "netG.zero_grad(set_to_none=True)"):
        assert "SC308" not in [c for c, _ in codes(GAN.format(clear=clear))], clear


def test_an_optimizer_built_from_something_else_is_not_judged():
    code = GAN.format(clear="pass").replace("optim.Adam(netG.parameters())",
                                            "optim.Adam(list(netG.parameters()) + [noise])")
    assert "SC308" not in [c for c, _ in codes(code)]


def test_a_requires_grad_test_joined_with_and_guards_too():
    code = "def to_numpy(t, flag):\n    if flag and t.requires_grad:\n        return t.numpy()\n    return t.numpy()\n"
    assert codes(code) == [("SC309", 3)]
    negated = "def to_numpy(t):\n    if not t.requires_grad:\n        return t.numpy()\n    return None\n"
    assert codes(negated) == []


def test_a_loss_copied_with_requires_grad_through_a_move():
    code = ("import torch\nimport torch.nn.functional as F\ndef train(model, x, y, device):\n"
            "    out = model(x)\n    loss = torch.tensor(F.mse_loss(out, y).item(), requires_grad=True).to(device)\n"
            "    loss.backward()\n")
    assert codes(code) == [("SC306", 6)]


def test_a_legacy_constructor_of_a_loss_tensor_is_an_alias_not_a_copy():
    code = ("import torch\nimport torch.nn.functional as F\ndef train(model, x, y):\n"
            "    loss = torch.FloatTensor(F.mse_loss(model(x), y))\n    loss.backward()\n")
    assert "SC306" not in [c for c, _ in codes(code)]


def test_a_list_appended_under_a_condition_is_not_counted():
    code = ("import torch\ndef evaluate(model, loader, keep):\n    losses = []\n    for x in loader:\n"
            "        if keep:\n            losses.append(model(x).item())\n    return torch.tensor(losses).item()\n")
    assert "SC602" not in [c for c, _ in codes(code)]


def test_two_optimizers_of_one_module_share_its_gradients():
    code = ("import torch.optim as optim\ndef train(model, loader, loss_fn):\n"
            "    opt_a = optim.SGD(model.parameters(), lr=0.1)\n    opt_b = optim.Adam(model.parameters())\n"
            "    for x, y in loader:\n        opt_a.zero_grad()\n        loss_fn(model(x), y).backward()\n"
            "        opt_a.step()\n        opt_b.step()\n")
    assert "SC308" not in [c for c, _ in codes(code)]


def test_a_submodule_cleared_counts_for_the_whole_model():
    code = GAN.format(clear="netG.body.zero_grad()").replace("optim.Adam(netG.parameters())",
                                                             "optim.Adam(netG.body.parameters())")
    assert "SC308" not in [c for c, _ in codes(code)]
