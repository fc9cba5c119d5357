"""SC201/SC202/SC204 on library-shaped code: a reduction of a temporary of
the source (RMS norm's ``v = x.pow(2)``), a reduction normalised by its own keepdim mean (global
response norm), dims passed by the file's callers, ``flatten(1)`` of a tensor of unknown rank,
per-channel vectors of functional and local convolutions, and a hand-written error between a
``(N, 1)`` prediction and a 1-D target.

Every invalid case is also run with torch 2.13: it raises, or gives a result of the wrong shape;
every fixed twin runs with the right shape.
"""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULES = [r for r in all_rules() if r.code in ("SC201", "SC202", "SC204")]
HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

RMS2D = ("def f(x, eps: float = 1e-5):\n    v = x.pow(2)\n    v = torch.mean(v, dim=1{keep})\n"
         "    return x * torch.rsqrt(v + eps)\n")
GRN = ("class M(nn.Module):\n    def __init__(self, eps=1e-6, channels_last=True):\n        super().__init__()\n"
       "        self.eps = eps\n        if channels_last:\n            self.spatial_dim = (1, 2)\n"
       "            self.channel_dim = -1\n        else:\n            self.spatial_dim = (2, 3)\n"
       "            self.channel_dim = 1\n    def forward(self, x):\n"
       "        x_g = x.norm(p=2, dim=self.spatial_dim{keep})\n"
       "        x_n = x_g / (x_g.mean(dim=self.channel_dim, keepdim=True) + self.eps)\n        return x * x_n\n")
MANUAL_VAR = ("def manual_var(x, dim):\n    xm = x.mean(dim=dim{keep})\n"
              "    return ((x - xm) * (x - xm)).mean(dim=dim)\n"
              "def group_var(x, groups=2):\n    return manual_var(x.reshape(x.shape[0], groups, -1), dim=-1)\n"
              "def f(x):\n    return manual_var(x, dim=(2, 3))\n")
MASKS = ("def f(masks):\n    x = torch.arange(0, masks.shape[-1], dtype=torch.float)\n"
         "    x_mask = masks * x.unsqueeze(0)\n    x_max = x_mask.flatten(1).max(-1){idx}\n"
         "    x_min = x_mask.flatten(1).min(-1)[0]\n    return torch.stack([x_min, x_max], 1)\n")
FCONV = ("class M(nn.Module):\n    def __init__(self, cin=3, cout=4, k=3):\n        super().__init__()\n"
         "        self.weight = nn.Parameter(torch.randn(cout, cin, k, k))\n"
         "        self.bias = nn.Parameter(torch.Tensor(cout))\n"
         "        self.bn = nn.BatchNorm2d(cout)\n    def forward(self, x):\n"
         "        out = self.bn(F.conv2d(x, self.weight, padding=1))\n        return out + self.bias{view}\n")
SQUARED = ("def f(x):\n    fc = nn.Linear(5, 1)\n    y = torch.randn(x.shape[0])\n    pred = fc(x)\n"
           "    return ((pred{fix} - y) ** 2).mean()\n")

RMS_SIDE = ("def f(x, scripting: bool = True, eps: float = 1e-5):\n    v = x.pow(2)\n    if scripting:\n"
            "        v = torch.mean(v, dim=-1){unsq}\n    else:\n        v = torch.mean(v, dim=(-1,), keepdim=True)\n"
            "    return x * torch.rsqrt(v + eps)\n")
GROUP_STD = ("def f(x, groups: int = 2, eps: float = 1e-5, flatten: bool = False):\n    B, C, H, W = x.shape\n"
             "    if flatten:\n        x = x.reshape(B, groups, -1)\n"
             "        std = x.var(dim=2, keepdim=True).add(eps).sqrt()\n    else:\n"
             "        x = x.reshape(B, groups, C // groups, H, W)\n"
             "        std = x.var(dim=(2, 3, 4){keep}).add(eps).sqrt()\n"
             "    return std.expand(x.shape).reshape(B, C, H, W)\n")
TOPK_SIDE = ("def f(probs, idx, sample: bool = False):\n    if sample:\n"
             "        nxt = torch.multinomial(probs, num_samples=1)\n    else:\n"
             "        {unpack}nxt = torch.topk(probs, k=1, dim=-1)\n    return torch.cat((idx, nxt), dim=1)\n")

#: (template, buggy fill, fixed fill, code, line from the end, condition, input)
CASES = [
    (RMS2D, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", 0, None, lambda: torch.rand(2, 3, 4, 5)),
    (GRN, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", 0, None, lambda: torch.rand(2, 4, 5, 3)),
    (MANUAL_VAR, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", 4, "`x` is 1-D", lambda: torch.rand(2, 4, 5, 6)),
    (MASKS, {"idx": ""}, {"idx": "[0]"}, "SC204", 0, None, lambda: torch.rand(3, 4, 5)),
    (FCONV, {"view": ""}, {"view": ".view(1, -1, 1, 1)"}, "SC202", 0, "`cout` is 1", lambda: torch.rand(2, 3, 6, 5)),
    (SQUARED, {"fix": ""}, {"fix": ".squeeze(-1)"}, "SC202", 0, "`y` has one element", lambda: torch.rand(7, 5)),
    (RMS_SIDE, {"unsq": ""}, {"unsq": ".unsqueeze(-1)"}, "SC201", 0, "`x` is 1-D", lambda: torch.rand(2, 3, 4)),
    (GROUP_STD, {"keep": ""}, {"keep": ", keepdim=True"}, "SC201", 0, None, lambda: torch.rand(2, 4, 3, 3)),
]

#: one side of an `if` binds the pair: flagged where it is passed on, and the message says which side
SIDES = [(TOPK_SIDE, {"unpack": ""}, {"unpack": "_, "}, "SC204", "`sample` is false")]


def _run(template: str, fill: dict, x):
    torch.manual_seed(0)
    scope: dict = {}
    exec(HEAD + template.format(**fill), scope)
    f = scope["M"]() if "M" in scope else scope["f"]
    return f(x)


@pytest.mark.parametrize("template,bug,fix,code,back,condition,make", CASES)
def test_bug_flagged(template, bug, fix, code, back, condition, make):
    text = HEAD + template.format(**bug)
    line = text.rstrip("\n").count("\n") + 1 - back
    found = sorted({(d.code, d.line, d.condition) for d in lint_text(text, RULES)})
    assert found == [(code, line, condition)]


@pytest.mark.parametrize("template,bug,fix,code,back,condition,make", CASES)
def test_fixed_twin_silent(template, bug, fix, code, back, condition, make):
    assert [d.message for d in lint_text(HEAD + template.format(**fix), RULES)] == []


@pytest.mark.parametrize("template,bug,fix,code,back,condition,make", CASES)
def test_torch_on_the_bug_and_the_fix(template, bug, fix, code, back, condition, make):
    x = make()
    good = _run(template, fix, x)
    try:
        bad = _run(template, bug, x)
    except (RuntimeError, TypeError):
        return
    assert bad.shape != good.shape or not torch.allclose(bad, good)  # the (N, N) mean


@pytest.mark.parametrize("template,bug,fix,code,side", SIDES)
def test_one_side_of_an_if(template, bug, fix, code, side):
    text = HEAD + template.format(**bug)
    found = lint_text(text, RULES)
    assert [(d.code, d.line) for d in found] == [(code, text.rstrip("\n").count("\n") + 1)]
    assert found[0].message.startswith(f"where {side}, ")
    assert lint_text(HEAD + template.format(**fix), RULES) == []
    probs, idx = torch.rand(2, 5), torch.zeros(2, 3, dtype=torch.long)
    scope: dict = {}
    exec(HEAD + template.format(**bug), scope)
    with pytest.raises(TypeError):
        scope["f"](probs, idx)
    exec(HEAD + template.format(**fix), scope)
    assert scope["f"](probs, idx).shape == (2, 4)


SILENT = [
    # the temporary is rebound, or the source is, between the reduction and its use
    "def f(x, eps=1e-5):\n    v = x.pow(2)\n    v = torch.mean(v, dim=1)\n    x = x.sum(1)\n"
    "    return x * torch.rsqrt(v + eps)\n",
    "def f(x, y, eps=1e-5):\n    v = y.pow(2)\n    v = torch.mean(v, dim=1)\n    return x * torch.rsqrt(v + eps)\n",
    # a dim every caller passes as the leading one, a caller that passes a variable, a function passed on
    "def center(x, dim):\n    return x - x.mean(dim)\ndef a(x):\n    return center(x, 0)\n",
    "def center(x, dim):\n    return x - x.mean(dim)\ndef a(x, d):\n    return center(x, 1) + center(x, d)\n",
    "def center(x, dim):\n    return x - x.mean(dim)\ndef a(x):\n    return center(x, 1), center\n",
    # an outer difference written on purpose; a target viewed as a column
    "def f(a, b):\n    return (a[:, None] - b).abs().mean()\n",
    "def f(x):\n    fc = nn.Linear(5, 1)\n    y = torch.randn(x.shape[0])\n    p = fc(x)\n"
    "    return ((p - y.view(-1, 1)) ** 2).mean()\n",
    "def f(x):\n    y = torch.randn(x.shape[0])\n    p = x.unsqueeze(1)\n    return ((p - y) ** 2).mean()\n",
    # a vector that is not sized by the convolution's output channels
    "def f(x):\n    w = torch.randn(16, 3, 3, 3)\n    b = torch.zeros(3)\n    return F.conv2d(x, w) + b\n",
    "def f(x, c):\n    w = torch.randn(c, 3, 3, 3)\n    b = torch.zeros(c)\n"
    "    return F.conv2d(x, w) + b[:, None, None]\n",
    # flatten of an unknown tensor, reduced with keepdim or through `.values`
    "def f(m):\n    return torch.stack([m.flatten(1).max(-1).values, m.flatten(1).min(-1)[0]], 1)\n",
    # both sides keep the reduced dim; the side with the pair rebinds it before the use
    "def f(x, s, eps=1e-5):\n    v = x.pow(2)\n    if s:\n        v = torch.mean(v, dim=-1, keepdim=True)\n"
    "    else:\n        v = v.mean(-1).unsqueeze(-1)\n    return x * torch.rsqrt(v + eps)\n",
    "def f(p, idx, s):\n    if s:\n        n = torch.multinomial(p, 1)\n    else:\n        n = torch.topk(p, 1)\n"
    "        n = n.indices\n    return torch.cat((idx, n), dim=1)\n",
]


@pytest.mark.parametrize("code", SILENT)
def test_silent(code):
    assert [d.message for d in lint_text(HEAD + code, RULES)] == []


def test_flatten_of_unknown_rank_is_two_dims():
    from tests.semantic.semantic_probe import shape
    assert shape("import torch\ndef f(m: torch.Tensor):\n    reveal(m.flatten(1))\n") == "(?, ?)"


def test_squared_error_through_a_name_in_a_training_loop():
    text = HEAD + ("class Reg(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                   "        self.fc = nn.Linear(3, 1)\n    def forward(self, x):\n        return self.fc(x)\n"
                   "model = Reg()\nx = torch.randn(64, 3)\nlabels = torch.randn(64)\nfor step in range(3):\n"
                   "    out = model(x)\n    err = (out - labels) ** 2\n    loss = err.mean()\n")
    found = [(d.code, d.line, d.condition) for d in lint_text(text, RULES)]
    assert found == [("SC202", text.count("\n") - 1, None)]
    fixed = text.replace("(out - labels)", "(out.squeeze(-1) - labels)")
    assert lint_text(fixed, RULES) == []
