"""SC302 through loops, slice assignment and lists of tensors (issue 11, item 5): a tensor that
autograd saved (``sigmoid``/``tanh``/``exp``/``relu``/``softmax`` outputs, ``mm`` inputs) changed in
place before ``backward()``. Every case runs with torch: the invalid ones raise at ``backward()``
(one of the variables needed for gradient computation has been modified by an inplace operation),
the valid ones do not."""

from __future__ import annotations

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULE = [r for r in all_rules() if r.code == "SC302"]
HEAD = "import torch\n"

#: (code of ``f()``, the line of the finding in ``code``)
INVALID = [
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = torch.sigmoid(x)
    loss = (h * 2).sum()
    h[:, 0] = 0
    loss.backward()
""",
        5,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = torch.zeros(3)
    for t in range(4):
        h = torch.tanh(x[t] * 2)
        h += 1
    h.sum().backward()
""",
        6,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    outs = []
    for t in range(4):
        e = x[t].exp()
        e[0] = 0
        outs.append(e)
    torch.stack(outs).sum().backward()
""",
        6,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    hs = [torch.sigmoid(x[0]), torch.sigmoid(x[1])]
    hs[0] += 1
    sum(hs).sum().backward()
""",
        4,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    hs = []
    h = torch.relu(x[0])
    hs.append(h)
    hs[-1] += 1
    torch.stack(hs).sum().backward()
""",
        6,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    p = torch.softmax(x, dim=1)
    p[:, 0] *= 2
    p.sum().backward()
""",
        4,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    w = torch.randn(4, 5)
    y = torch.mm(x[0], w)
    w[0] = 0
    y.sum().backward()
""",
        5,
    ),
    (
        """\
def f(flag=True):
    x = torch.randn(4, 3, 4, requires_grad=True)
    if flag:
        y = x.exp()
        y.add_(1)
    else:
        y = x * 2
    y.sum().backward()
""",
        5,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    hs = []
    for t in range(4):
        hs.append(torch.sigmoid(x[t]))
    hs[0][:, 0] = 0
    torch.stack(hs).sum().backward()
""",
        6,
    ),
    (
        """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = torch.zeros(3, 4)
    for t in range(4):
        h = torch.sigmoid(x[t] + h)
        h[0] = 0
    h.sum().backward()
""",
        6,
    ),
]
VALID = [
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = torch.sigmoid(x)
    h = h.clone()
    h[:, 0] = 0
    h.sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = torch.zeros(3)
    for t in range(4):
        h = torch.tanh(x[t] * 2)
        h = h + 1
    h.sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    hs = [torch.sigmoid(x[0]), torch.sigmoid(x[1])]
    hs[0] = hs[0] + 1
    sum(hs).sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = x * 2
    h[:, 0] = 0
    h.sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    outs = []
    for t in range(4):
        e = x[t] + 1
        e[0] = 0
        outs.append(e)
    torch.stack(outs).sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    h = torch.sigmoid(x)
    h.sum().backward()
    h[:, 0] = 0
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    for t in range(4):
        h = torch.tanh(x[t])
        h.sum().backward()
        h += 1
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    try:
        y = x.exp()
        int('a')
        y.add_(1)
    except ValueError:
        pass
    y.sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    hs = []
    h = torch.relu(x[0])
    hs.append(h)
    hs[-1] = hs[-1] * 2
    torch.stack(hs).sum().backward()
""",
    """\
def f():
    x = torch.randn(4, 3, 4, requires_grad=True)
    for t in range(4):
        h = torch.tanh(x[t])
        loss = h.sum()
        loss.backward()
        h += 1
""",
    """\
def f(flag=True):
    x = torch.randn(4, 3, 4, requires_grad=True)
    y = x.exp()
    if flag:
        y = y.clone()
    else:
        y = y * 1
    y.add_(1)
    y.sum().backward()
""",
]


def _lint(code: str) -> list[int]:
    return [d.line - 1 for d in lint_text(HEAD + code, RULE) if d.code == "SC302"]


def _run(code: str) -> None:
    namespace: dict = {"torch": torch}
    exec(code, namespace)
    namespace["f"]()


@pytest.mark.parametrize("code, line", INVALID)
def test_flagged_at_the_change(code, line):
    assert _lint(code) == [line]


@pytest.mark.parametrize("code, line", INVALID)
def test_invalid_cases_raise_at_backward(code, line):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(code)


@pytest.mark.parametrize("code", VALID)
def test_valid_cases_are_silent_and_run(code):
    assert _lint(code) == []
    _run(code)
