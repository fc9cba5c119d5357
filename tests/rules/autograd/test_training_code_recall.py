"""The SC3xx rules on training code as it is written (issue 11, round 2): untyped parameters,
modules of the file, loss modules, training steps. Each invalid case is run with torch (on CPU,
with tiny sizes) and raises, or trains nothing, as the finding says; its fixed twin runs and
is silent."""

from __future__ import annotations

import textwrap
from typing import Optional

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

HEAD = "import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
NET = """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.embed = nn.Embedding(10, 4)

    def forward(self, x):
        return self.fc(x)
"""


def _lint(code: str, rule: str) -> list:
    rules = [r for r in all_rules() if r.code == rule]
    return lint_text(HEAD + NET + textwrap.dedent(code), rules)


def _line(code: str) -> int:
    """The line of ``code`` (after the head) that carries ``# <--``."""
    lines = (HEAD + NET + textwrap.dedent(code)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if "# <--" in line)


def _run(code: str, call: str) -> Optional[BaseException]:
    """Run ``code`` then ``call``; the exception it raised, if any."""
    scope: dict = {}
    exec(HEAD + NET + textwrap.dedent(code), scope)  # noqa: S102 - the test's own programs
    try:
        eval(call, scope)  # noqa: S307
    except Exception as err:  # noqa: BLE001 - whatever torch raises is the claim under test
        return err
    return None


X = "torch.randn(2, 4)"
Y = "torch.randn(2, 3)"
YI = "torch.tensor([0, 2])"

#: (rule, program, call that runs it, exception type it raises, condition of the finding)
INVALID = [
    ("SC304", """\
def train(model, x, y):
    criterion = nn.MSELoss(reduction="none")
    loss = criterion(model(x), y)
    loss.backward()  # <--
""", f"train(Net(), {X}, {Y})", RuntimeError, "`loss` has one element"),
    ("SC304", """\
def train(model, x, y):
    loss = F.cross_entropy(model(x), y, reduction="none")
    loss.backward()  # <--
""", f"train(Net(), {X}, {YI})", RuntimeError, "`loss` has one element"),
    ("SC304", """\
def saliency(x, class_idx):
    model = Net()
    output = model(x)
    score = output[:, class_idx]
    score.backward()  # <--
""", f"saliency({X}, 1)", RuntimeError, "`score` has one element"),
    ("SC304", """\
def grads(x):
    out = nn.Linear(4, 3)(x)
    return torch.autograd.grad(out, x)  # <--
""", "grads(torch.randn(2, 4, requires_grad=True))", RuntimeError, None),
    ("SC304", """\
def fit(x, y):
    pred = nn.Linear(4, 3)(x)
    ((pred - y) ** 2).backward()  # <--
""", f"fit({X}, {Y})", RuntimeError, None),
    ("SC306", """\
def train(model, x, y):
    criterion = nn.CrossEntropyLoss()
    loss = criterion(model(x), y).item()  # <-- (reported where the graph is cut)
    loss.backward()
""", f"train(Net(), {X}, {YI})", AttributeError, None),
    ("SC306", """\
def train(model, x, y):
    loss = F.cross_entropy(model(x), y)
    loss = torch.tensor(loss.item())
    loss.backward()  # <--
""", f"train(Net(), {X}, {YI})", RuntimeError, None),
    ("SC305", """\
def positions(n):
    return torch.arange(n, requires_grad=True)  # <--
""", "positions(5)", RuntimeError, "`n` is a float"),
    ("SC309", """\
def embed(x):
    model = Net()
    return model.embed(x).numpy()  # <--
""", "embed(torch.tensor([1, 2]))", RuntimeError, None),
    ("SC309", """\
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return np.asarray(h)  # <--
""", f"Head()({X})", RuntimeError, None),
    ("SC303", """\
def train(model, x, y):
    criterion = nn.CrossEntropyLoss()
    out = model(x)
    loss = criterion(out.data, y)
    loss.backward()  # <--
""", f"train(Net(), {X}, {YI})", RuntimeError, None),
    ("SC306", """\
def train(model, x, y):
    out = model(x)
    loss = F.cross_entropy(out.detach(), y)
    loss.backward()  # <--
""", f"train(Net(), {X}, {YI})", RuntimeError, None),
    ("SC305", """\
def mark(idx):
    idx = torch.tensor([1, 2, 3])
    idx.requires_grad = True  # <--
""", "mark(None)", RuntimeError, None),
    ("SC309", """\
def train(model, loader, optimizer):
    for data, target in loader:
        loss = F.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
        print(loss.numpy())  # <--
""", f"train(Net(), [({X}, {YI})], torch.optim.SGD(Net().parameters(), lr=0.1))", RuntimeError, None),
    ("SC302", """\
class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.ones(4))

    def forward(self, x):
        h = self.fc(x)
        y = h * self.w
        h[:, 0] = 0  # <--
        return y
""", f"Scaled()({X}).sum().backward()", RuntimeError, None),
]

VALID = [
    ("SC304", """\
def train(model, x, y):
    criterion = nn.MSELoss(reduction="none")
    loss = criterion(model(x), y).mean()
    loss.backward()
""", f"train(Net(), {X}, {Y})"),
    ("SC304", """\
def saliency(x, class_idx):
    output = Net()(x)
    output[:, class_idx].sum().backward()
""", f"saliency({X}, 1)"),
    ("SC306", """\
def train(model, x, y):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    return loss.item()
""", f"train(Net(), {X}, {YI})"),
    ("SC305", """\
def positions(n):
    return torch.arange(n, dtype=torch.float32, requires_grad=True)
""", "positions(5)"),
    ("SC309", """\
def embed(x):
    model = Net()
    return model.embed(x).detach().numpy()
""", "embed(torch.tensor([1, 2]))"),
    ("SC303", """\
def train(model, x, y):
    out = model(x)
    loss = F.cross_entropy(out, y)
    loss.backward()
    return F.cross_entropy(out.data, y)
""", f"train(Net(), {X}, {YI})"),
]


@pytest.mark.parametrize("rule, code, call, raised, condition", INVALID)
def test_flagged_where_torch_fails(rule, code, call, raised, condition):
    found = _lint(code, rule)
    assert [(d.code, d.line) for d in found] == [(rule, _line(code))]
    assert found[0].condition == condition
    assert isinstance(_run(code, call), raised)


@pytest.mark.parametrize("rule, code, call", VALID)
def test_silent_where_torch_runs(rule, code, call):
    assert _lint(code, rule) == []
    assert _run(code, call) is None


ZERO_GRAD_BETWEEN = """\
def train(model, loader, criterion, optimizer):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.zero_grad()  # <--
        optimizer.step()
"""
ZERO_GRAD_FIRST = ZERO_GRAD_BETWEEN.replace(
    "        loss = criterion(model(x), y)\n        loss.backward()\n        optimizer.zero_grad()  # <--\n",
    "        optimizer.zero_grad()\n        loss = criterion(model(x), y)\n        loss.backward()\n",
)


def _trains(code: str) -> bool:
    """Whether one step of ``train`` changes the weights."""
    scope: dict = {}
    exec(HEAD + NET + code, scope)  # noqa: S102
    model = scope["Net"]()
    before = model.fc.weight.detach().clone()
    loader = [(torch.randn(2, 4), torch.tensor([0, 2]))]
    scope["train"](model, loader, torch.nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1))
    return not torch.equal(before, model.fc.weight)


def test_zero_grad_between_backward_and_step():
    found = _lint(ZERO_GRAD_BETWEEN, "SC308")
    assert [(d.code, d.line) for d in found] == [("SC308", _line(ZERO_GRAD_BETWEEN))]
    assert "clears the gradients just computed" in found[0].message
    assert not _trains(ZERO_GRAD_BETWEEN)
    assert _lint(ZERO_GRAD_FIRST, "SC308") == []
    assert _trains(ZERO_GRAD_FIRST)
