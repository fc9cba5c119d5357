"""SC401-SC404: the seed pitfalls are flagged, their fixed forms are not, fixes are safe."""

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

SEEDS = [
    ("SC401", "import torch\nx = torch.tensor([1.0])\ny = torch.tensor([2.0]).cuda()\nz = x + y\n", 4,
     "import torch\nx = torch.tensor([1.0]).cuda()\ny = torch.tensor([2.0]).cuda()\nz = x + y\n"),
    ("SC401", "import torch\nimport torch.nn as nn\n"
              "device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
     "model = nn.Linear(3, 1)\nmodel.to(device)\nx = torch.randn(4, 3)\nout = model(x)\n", 7,
     "import torch\nimport torch.nn as nn\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
     "model = nn.Linear(3, 1)\nmodel.to(device)\nx = torch.randn(4, 3).to(device)\nout = model(x)\n"),
    ("SC402", "import torch\nx = torch.randn(3)\nx.cuda()\n", 3, "import torch\nx = torch.randn(3)\nx = x.cuda()\n"),
    ("SC402", "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
              "x = torch.randn(3)\nx.to(device)\n", 4,
     "import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\nx = torch.randn(3)\n"
     "x = x.to(device)\n"),
    ("SC403", "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
              "        return x + torch.zeros(10)\n", 5,
     "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
     "        return x + torch.zeros(10, device=x.device)\n"),
    ("SC404", "import torch\nt = torch.tensor([1, 2, 3])\nt_cuda = t.cuda()\narr = t_cuda.numpy()\n", 4,
     "import torch\nt = torch.tensor([1, 2, 3])\nt_cuda = t.cuda()\narr = t_cuda.cpu().numpy()\n"),
]


@pytest.mark.parametrize("code, bug, line, fixed", SEEDS, ids=[f"{s[0]}-{i}" for i, s in enumerate(SEEDS)])
def test_seed_pitfall_is_flagged_and_its_fix_is_not(code, bug, line, fixed):
    assert (code, line) in codes(bug)
    assert codes(fixed) == []


def test_cross_device_message_names_both_devices():
    [(code, _, message)] = flagged("import torch\na = torch.ones(3).cuda()\nb = torch.ones(3)\nc = a * b\n")
    assert code == "SC401" and "`a`" in message and "`b`" in message
    assert "CUDA" in message and "CPU" in message


def test_maybe_cuda_says_when_it_fails():
    src = (
        "import torch\ndevice = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "a = torch.ones(3, device=device)\nb = torch.ones(3)\nc = torch.stack([a, b])\n"
    )
    [(code, line, message)] = flagged(src)
    assert (code, line) == ("SC401", 5) and "when CUDA is available" in message


def test_zero_dim_cpu_tensor_mixes_with_cuda():
    src = "import torch\na = torch.ones(3).cuda()\nb = a * torch.ones(4).mean() + torch.tensor(1.0)\n"
    assert codes(src) == []


def test_module_input_of_unknown_device_is_silent():
    src = "import torch.nn as nn\ndef run(x):\n    model = nn.Linear(3, 1).cuda()\n    return model(x)\n"
    assert codes(src) == []


def test_discarded_move_fix_assigns_back_and_is_stable():
    src = "import torch\nx = torch.randn(3)\nx.half(); y = 1\n"
    fixed, applied = fix_text(src, [get_rule("SC402")])
    assert (fixed, applied) == ("import torch\nx = torch.randn(3)\nx = x.half(); y = 1\n", 1)
    assert fix_text(fixed, [get_rule("SC402")]) == (fixed, 0)


def test_discarded_move_on_module_and_self_is_silent():
    src = (
        "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n        self.cuda()\n        self.fc.to('cpu')\n"
    )
    assert codes(src) == []


def test_factory_without_device_through_a_named_mask():
    src = (
        "import torch\nfrom torch import Tensor\ndef causal(scores: Tensor) -> Tensor:\n"
        "    n = scores.shape[-1]\n    mask = torch.ones(n, n).triu(1).bool()\n"
        "    return scores.masked_fill(mask, 0.0) + torch.zeros(n)\n"
    )
    assert ("SC403", 6) in codes(src)


def test_factory_fix_adds_the_input_device():
    src = (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, h):\n"
        "        return h + torch.zeros(2, 3)\n"
    )
    # unannotated, `h` may be a float at run time: the fix is unsafe (see test_fix_semantics.py)
    assert fix_text(src, [get_rule("SC403")]) == (src, 0)
    fixed, applied = fix_text(src, [get_rule("SC403")], unsafe_fixes=True)
    assert applied == 1 and "torch.zeros(2, 3, device=h.device)" in fixed
    # `torch.cat` takes tensors only: `h` is one, and the fix is safe
    src = src.replace("h + torch.zeros(2, 3)", "torch.cat([h, torch.zeros(2, 3)], dim=0)")
    fixed, applied = fix_text(src, [get_rule("SC403")])
    assert applied == 1 and "torch.zeros(2, 3, device=h.device)" in fixed


def test_scalar_factories_are_silent():
    src = (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        return x * torch.tensor(2.0) + torch.zeros(())\n"
    )
    assert codes(src) == []


def test_numpy_on_cuda_fix():
    src = "import torch\nx = torch.randn(3, device='cuda')\na = x.numpy()\n"
    fixed, applied = fix_text(src, [get_rule("SC404")])
    assert applied == 1 and "x.cpu().numpy()" in fixed


def test_factory_meets_a_tensor_computed_from_the_input():
    src = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n        h = F.relu(self.fc(x))\n        pos = torch.arange(h.shape[-1])\n"
        "        return h + pos\n"
    )
    [(code, line, message)] = flagged(src)
    assert (code, line) == ("SC403", 11) and "`x`" in message
    # `x` has no annotation: unsafe (test_fix_semantics.py)
    fixed, applied = fix_text(src, [get_rule("SC403")], unsafe_fixes=True)
    assert applied == 1 and "torch.arange(h.shape[-1], device=x.device)" in fixed


def test_sizes_computed_from_the_input_are_not_tensors():
    src = (
        "import torch\nimport torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n"
        "        n = x.shape[0] * 2\n        k = x.size(1)\n        return torch.zeros(3) * n + k\n"
    )
    assert codes(src) == []
