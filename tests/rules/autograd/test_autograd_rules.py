"""SC301-SC309: the seed pitfalls are flagged, their fixed forms are not, messages say enough."""

from __future__ import annotations

from functools import partial

import pytest
from rule_harness import family_rules, finding_lines, findings

from shapecheck.engine.runner import fix_text
from shapecheck.rules.catalog import get_rule

#: the autograd, device and pitfall rules (opt-in ones too): what these tests look for
TRAINING_RULES = family_rules("SC3", "SC4", "SC6")
flagged = partial(findings, rules=TRAINING_RULES)
codes = partial(finding_lines, rules=TRAINING_RULES)


# (rule, seed program with the bug, the line it must be flagged on, the fixed form)
SEEDS = [
    ("SC301", "import torch\nx = torch.tensor([1.], requires_grad=True)\nx.add_(1)\n", 3,
     "import torch\nx = torch.tensor([1.], requires_grad=True)\nwith torch.no_grad():\n    x.add_(1)\n"),
    ("SC301", "import torch\nx = torch.randn(10, requires_grad=True)\ny = x * x\nx.relu_()\nloss = y.sum()\n"
              "loss.backward()\n", 4,
     "import torch\nx = torch.randn(10, requires_grad=True)\ny = x * x\nz = x.relu()\nloss = y.sum()\n"
     "loss.backward()\n"),
    # the seed's `y = x * 2; x.add_(1)`: `x * 2` saves nothing, the leaf change is what fails
    ("SC301", "import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)\ny = x * 2\nx.add_(1)\nz = y.sum()\n"
              "z.backward()\n", 4,
     "import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)\ny = x * 2\nx = x + 1\nz = y.sum()\n"
     "z.backward()\n"),
    ("SC301", "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.randn(3)\nx += y\n", 4,
     "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.randn(3)\nx = x + y\n"),
    ("SC302", "import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 1\nw = torch.randn(3)\ny = h * w\nw += 1\n"
              "y.sum().backward()\n", 6,
     "import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 1\nw = torch.randn(3)\ny = h * w\nw = w + 1\n"
     "y.sum().backward()\n"),
    ("SC303", "import torch\nx = torch.randn(3, requires_grad=True)\nloss = (x * x).sum()\nx.data.add_(1)\n"
              "loss.backward()\n", 4,
     "import torch\nx = torch.randn(3, requires_grad=True)\nloss = (x * x).sum()\nloss.backward()\n"
     "with torch.no_grad():\n    x.add_(1)\n"),
    ("SC310", "import torch\nx = torch.randn(3, requires_grad=True)\nx.data.add_(1)\n", 3,
     "import torch\nx = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n    x.add_(1)\n"),
    ("SC304", "import torch\ny = torch.tensor([1., 2., 3.], requires_grad=True)\ny.backward()\n", 3,
     "import torch\ny = torch.tensor([1., 2., 3.], requires_grad=True)\ny.backward(torch.ones_like(y))\n"),
    ("SC305", "import torch\nx = torch.tensor([1, 2], requires_grad=True)\n", 2,
     "import torch\nx = torch.tensor([1., 2.], requires_grad=True)\n"),
    ("SC306", "import torch\nimport torch.nn as nn\nloss_fn = nn.CrossEntropyLoss()\n"
              "logits = torch.randn(4, 3, requires_grad=True)\n"
     "target = torch.tensor([0, 1, 2, 0])\npred = torch.argmax(logits, dim=1)\nloss = loss_fn(pred, target)\n", 7,
     "import torch\nimport torch.nn as nn\nloss_fn = nn.CrossEntropyLoss()\n"
     "logits = torch.randn(4, 3, requires_grad=True)\n"
     "target = torch.tensor([0, 1, 2, 0])\nloss = loss_fn(logits, target)\n"),
    ("SC307", "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
     "        w = torch.ones(3, requires_grad=True)\n        return x * w\n", 5,
     "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.w = nn.Parameter(torch.ones(3))\n    def forward(self, x):\n        return x * self.w\n"),
    ("SC308", "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\n"
              "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
     "for step in range(10):\n    loss = model(torch.randn(4, 3)).pow(2).mean()\n    loss.backward()\n"
     "    optimizer.step()\n", 8,
     "import torch\nimport torch.nn as nn\nmodel = nn.Linear(3, 1)\n"
     "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
     "for step in range(10):\n    optimizer.zero_grad()\n    loss = model(torch.randn(4, 3)).pow(2).mean()\n"
     "    loss.backward()\n    optimizer.step()\n"),
    ("SC308", "import torch\nx = torch.randn(3, requires_grad=True)\ny = (x ** 2).sum()\ny.backward()\n"
              "y.backward()\n", 5,
     "import torch\nx = torch.randn(3, requires_grad=True)\ny = (x ** 2).sum()\ny.backward(retain_graph=True)\n"
     "y.backward()\n"),
    ("SC309", "import torch\nx = torch.randn(3, requires_grad=True)\na = x.numpy()\n", 3,
     "import torch\nx = torch.randn(3, requires_grad=True)\na = x.detach().numpy()\n"),
]


@pytest.mark.parametrize("code, bug, line, fixed", SEEDS, ids=[f"{s[0]}-{i}" for i, s in enumerate(SEEDS)])
def test_seed_pitfall_is_flagged_and_its_fix_is_not(code, bug, line, fixed):
    assert (code, line) in codes(bug)
    assert codes(fixed) == []


def test_inplace_on_leaf_names_the_tensor_and_the_error():
    [(code, _, message)] = flagged("import torch\nw = torch.zeros(2, requires_grad=True)\nw.fill_(1)\n")
    assert code == "SC301"
    assert "`w`" in message and "leaf" in message and "RuntimeError" in message


@pytest.mark.parametrize("statement", [
    "w.mul_(2)", "w.zero_()", "w.normal_()", "w.copy_(torch.ones(3))", "w.masked_fill_(w > 0, 0.0)",
    "w.index_add_(0, torch.tensor([0]), torch.ones(1))", "w.scatter_(0, torch.tensor([0]), 1.0)",
    "w -= 1", "w[1:] = 0", "torch.relu_(w)", "torch.nn.functional.relu(w, inplace=True)",
])
def test_every_inplace_form_on_a_leaf(statement):
    src = f"import torch\nw = torch.randn(3, requires_grad=True)\n{statement}\n"
    assert ("SC301", 3) in codes(src)


def test_parameter_of_a_module_in_forward():
    src = (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n"
        "    def forward(self, x):\n        self.w.add_(1)\n        return x * self.w\n"
    )
    assert ("SC301", 8) in codes(src)


def test_inplace_on_leaf_in_enable_grad_inside_no_grad():
    src = (
        "import torch\nw = torch.randn(3, requires_grad=True)\nwith torch.no_grad():\n"
        "    with torch.enable_grad():\n        w.add_(1)\n"
    )
    assert ("SC301", 5) in codes(src)


def test_saved_output_changed_through_a_subscript():
    src = (
        "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.tanh(x)\n"
        "y[0] = 0.0\nloss = y.sum()\nloss.backward()\n"
    )
    [(code, line, message)] = flagged(src)
    assert (code, line) == ("SC302", 4)
    assert "torch.tanh(x)" in message and "`y`" in message


def test_saved_tensor_modified_under_no_grad_still_fails_backward():
    src = (
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = x.sigmoid()\n"
        "with torch.no_grad():\n    h.mul_(2)\nh.sum().backward()\n"
    )
    assert ("SC302", 5) in codes(src)


def test_multiplication_saves_the_other_operand_only_when_needed():
    # x requires grad, c does not: mul saves c (needed for x's gradient), not x.
    src = (
        "import torch\nx = torch.randn(3, requires_grad=True)\nh = x * 1\nc = torch.randn(3)\n"
        "y = h * c\nh.add_(1)\ny.sum().backward()\n"
    )
    assert codes(src) == []


def test_data_fix_rewrites_reads_only():
    src = "import torch\nw = torch.randn(3, requires_grad=True)\na = w.data.cpu()\nw.data.zero_()\n"
    fixed, applied = fix_text(src, [get_rule("SC310")])
    assert applied == 1
    assert fixed == "import torch\nw = torch.randn(3, requires_grad=True)\na = w.detach().cpu()\nw.data.zero_()\n"


def test_backward_on_non_scalar_names_the_shape():
    [(code, _, message)] = flagged("import torch\nx = torch.randn(2, 3, requires_grad=True)\n(x * 2).backward()\n")
    assert code == "SC304" and "(2, 3)" in message


def test_grad_on_integer_parameter():
    src = "import torch\nimport torch.nn as nn\np = nn.Parameter(torch.arange(3))\n"
    assert ("SC305", 3) in codes(src)


def test_round_feeding_a_functional_loss():
    src = (
        "import torch\nimport torch.nn.functional as F\nx = torch.randn(4, requires_grad=True)\n"
        "y = torch.randn(4)\nloss = F.l1_loss(x.round(), y)\n"
    )
    assert ("SC306", 5) in codes(src)


def test_loss_module_stored_on_self():
    src = (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.crit = nn.MSELoss()\n    def forward(self, x, y):\n"
        "        return self.crit((x > 0).float(), y)\n"
    )
    assert ("SC306", 8) in codes(src)


def test_parameter_created_in_forward_of_subclass_of_local_module():
    src = (
        "import torch\nimport torch.nn as nn\nclass Base(nn.Module):\n    pass\nclass M(Base):\n"
        "    def forward(self, x):\n        return x * nn.Parameter(torch.ones(1))\n"
    )
    assert ("SC307", 7) in codes(src)


def test_inner_loop_without_zero_grad_is_flagged_once():
    src = (
        "def fit(model, epochs, loader, loss_fn, optimizer):\n    for epoch in range(epochs):\n"
        "        optimizer.zero_grad()\n        for x, y in loader:\n            loss_fn(model(x), y).backward()\n"
        "            optimizer.step()\n"
    )
    assert codes(src) == [("SC308", 6)]


def test_amp_scaler_step_counts_as_optimizer_step():
    src = (
        "def fit(model, loader, loss_fn, optimizer, scaler):\n    for x, y in loader:\n"
        "        scaler.scale(loss_fn(model(x), y)).backward()\n        scaler.step(optimizer)\n"
        "        scaler.update()\n"
    )
    assert codes(src) == [("SC308", 4)]


def test_backward_twice_in_nested_block_after_first():
    src = (
        "def f(model, x, flag):\n    loss = model(x).sum()\n    loss.backward()\n    if flag:\n"
        "        loss.backward()\n"
    )
    assert codes(src) == [("SC308", 5)]


def test_numpy_on_parameter_even_under_no_grad():
    src = (
        "import torch\nimport torch.nn as nn\nw = nn.Parameter(torch.ones(3))\nwith torch.no_grad():\n"
        "    a = w.numpy()\n"
    )
    assert ("SC309", 5) in codes(src)


def test_numpy_fix_inserts_detach():
    src = "import torch\nw = torch.randn(2, requires_grad=True)\nprint((w * 3).numpy())\n"
    fixed, applied = fix_text(src, [get_rule("SC309")])
    assert applied == 1 and "(w * 3).detach().numpy()" in fixed


def test_saved_tensor_changed_on_one_branch_only_is_not_flagged_on_every_branch_it_is():
    head = "def f(flag):\n    x = torch.randn(3, requires_grad=True)\n    y = x.exp()\n"
    one = "    if flag:\n        y.add_(1)\n    y.sum().backward()\n"
    both = "    if flag:\n        y.add_(1)\n    else:\n        y.mul_(2)\n    y.sum().backward()\n"
    assert codes("import torch\n" + head + one) == []
    assert codes("import torch\n" + head + both) == [("SC302", 6)]


def test_backward_twice_after_a_with_block_or_on_every_branch():
    with_block = (
        "import torch\ndef f(model, x):\n    loss = model(x).sum()\n    with torch.autocast('cpu'):\n"
        "        loss.backward()\n    loss.backward()\n"
    )
    branches = (
        "def f(model, x, flag):\n    loss = model(x).sum()\n    if flag:\n        loss.backward()\n"
        "    else:\n        loss.backward()\n    loss.backward()\n"
    )
    one_branch = (
        "def f(model, x, flag):\n    loss = model(x).sum()\n    if flag:\n        loss.backward()\n"
        "    loss.backward()\n"
    )
    assert codes(with_block) == [("SC308", 6)]
    assert codes(branches) == [("SC308", 7)]
    assert codes(one_branch) == []
