"""SC201 on every spelling of a reduction broadcast back against its source (issue 11, item 5).

Each case is a function ``f`` of unannotated parameters. Every invalid case is run with torch on a
``(4, 3)`` input, where it raises (on a square input it would silently compute the wrong thing);
every valid case runs on that input without error.
"""

from __future__ import annotations

import inspect

import pytest
import torch

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules

RULE = [r for r in all_rules() if r.code == "SC201"]
HEAD = "import torch\n"

#: (code, the line of the finding in ``code``, its condition)
INVALID = [
    # a reduction through a number and elementwise ops is still the reduction
    ('def f(x):\n    return x / (x.var(dim=1) + 1e-5).sqrt()\n', 2, None),
    ('def f(x):\n    return x * torch.rsqrt(x.pow(2).mean(1) + 1e-6)\n', 2, None),
    ('def f(x):\n    s = x.sum(1).float() * 2\n    return x / s\n', 3, None),
    ('def f(P):\n    P /= P.sum(1)\n', 2, None),
    ('def f(x):\n    mu = x.mean(-1)\n    return x - mu.expand_as(x)\n', 3, '`x` is 1-D'),
    ('def f(x):\n    return torch.div(x, torch.sum(x ** 2, 1))\n', 2, None),
    ('def f(v):\n    m, _ = torch.max(v, dim=-1)\n    return v - m\n', 3, '`v` is 1-D'),
    ('def f(x):\n    return x - x.mean(dim=1)\n', 2, None),
    ('def f(x):\n    return x / x.sum(axis=1)\n', 2, None),
    ('def f(x):\n    return x - x.max(dim=1).values\n', 2, None),
    ('def f(x):\n    return x - torch.max(x, 1)[0]\n', 2, None),
    ('def f(x):\n    m, i = x.max(dim=1)\n    return x - m\n', 3, None),
    ('def f(x):\n    return x - torch.min(x, dim=1).values\n', 2, None),
    ('def f(x):\n    return x - torch.median(x, dim=1).values\n', 2, None),
    ('def f(x):\n    v, _ = torch.mode(x, -1)\n    return x - v\n', 3, '`x` is 1-D'),
    ('def f(x):\n    n, c = x.shape\n    v, _ = torch.mode(x)\n    return x - v\n', 4, None),
    ('def f(x):\n    v, _ = torch.kthvalue(x, 2, 1)\n    return x - v\n', 3, None),
    ('def f(x):\n    lo, hi = torch.aminmax(x, dim=1)\n    return (x - lo) / (hi - lo)\n', 3, None),
    ('def f(x):\n    s, m = torch.std_mean(x, dim=1)\n    return (x - m) / s\n', 3, None),
    ('def f(x):\n    return x / x.norm(dim=1)\n', 2, None),
    ('def f(x):\n    return x / x.norm(2, 1)\n', 2, None),
    ('def f(x):\n    return x / torch.norm(x, dim=1)\n', 2, None),
    ('def f(x):\n    return x / torch.linalg.norm(x, dim=1)\n', 2, None),
    ('def f(x):\n    return x / torch.linalg.vector_norm(x, 2, 1)\n', 2, None),
    ('def f(x):\n    return x / x.var(1, unbiased=False)\n', 2, None),
    ('def f(x):\n    return x - torch.logsumexp(x, 1)\n', 2, None),
    ('def f(x):\n    return x - x.amax(1)\n', 2, None),
    ('def f(x):\n    return x / x.prod(1)\n', 2, None),
    ('def f(x):\n    x -= x.mean(1)\n    return x\n', 2, None),
    ('def f(x):\n    return x.div_(x.sum(1))\n', 2, None),
    ('def f(x):\n    return x.sub_(x.mean(1))\n', 2, None),
    ('def f(x):\n    return x.sub(x.mean(1))\n', 2, None),
    ('def f(x):\n    return torch.sub(x, x.mean(1))\n', 2, None),
    ('def f(x):\n    return torch.where(x > 0, x, x.mean(1))\n', 2, None),
    ('def f(x):\n    return x - x.mean(1).expand(x.shape)\n', 2, None),
    ('def f(x):\n    return x - x.mean(1).expand(x.size())\n', 2, None),
    ('def f(x):\n    d = 1\n    return x - x.mean(d)\n', 3, None),
    ('def f(x, dim=-1):\n    return x - x.mean(dim)\n', 2, '`x` is 1-D or a caller passes `dim`'),
    ('def f(x, dim=1):\n    return x / x.sum(dim=dim)\n', 2, 'a caller passes `dim`'),
    ('def f(x):\n    return x > x.mean(1)\n', 2, None),
    ('def f(x):\n    return x - x.sum(dim=[1])\n', 2, None),
    ('def f(x):\n    return x - (x * x).sum(1)\n', 2, None),
    ('def f(x):\n    return x / x.abs().sum(1)\n', 2, None),
    ('def f(x):\n    return x - torch.mean(x, 1)\n', 2, None),
    ('def f(x):\n    return (x - x.mean(0)) / x.std(1)\n', 2, None),
    ('def f(x):\n    return (x - x.mean(1, keepdim=True)) / x.std(1)\n', 2, None),
    ('def f(x):\n    return (2 * x + 1) / x.sum(1)\n', 2, None),
    ('def f(x):\n    return (x * x) / x.norm(dim=-1)\n', 2, '`x` is 1-D'),
    ('def f(x):\n    return x / x.float().sum(1)\n', 2, None),
]

#: correct code, and code the rule cannot stand behind: silent
VALID = [
    'def f(x):\n    return x / (x.var(dim=1, keepdim=True) + 1e-5).sqrt()\n',
    'def f(x):\n    s = x.sum(1)\n    return s / (s.max() + 1e-6)\n',
    'def f(x):\n    n = x.norm(dim=1) + 1e-8\n    return n.max() - n.min()\n',
    'def f(x):\n    v = x.var(1)\n    return v.sqrt() * 2\n',
    'def f(x):\n    return x - (x.mean(1) + 1.0).unsqueeze(1)\n',
    'def f(x):\n    return x - x.mean(0)\n',
    'def f(x):\n    return x - x.mean(dim=1, keepdim=True)\n',
    'def f(x):\n    return x / x.sum(-1, keepdim=True)\n',
    'def f(x):\n    return x - x.mean(1)[:, None]\n',
    'def f(x):\n    return x - x.mean(1).unsqueeze(1)\n',
    'def f(x):\n    return x - x.mean(1).view(-1, 1)\n',
    'def f(x):\n    loss = x.sum(1).mean()\n    return loss\n',
    'def f(x, y):\n    return y.sum(1) - x.mean(1)\n',
    'def f(x, y):\n    return torch.max(x, y)\n',
    'def f(x):\n    return x - x.mean()\n',
    'def f(x):\n    m, _ = torch.max(x, dim=1, keepdim=True)\n    return x - m\n',
    'def f(x):\n    return x / x.norm(dim=1, keepdim=True)\n',
    'def f(x):\n    return x / torch.linalg.norm(x, dim=-1, keepdim=True)\n',
    'def f(x):\n    return x / torch.linalg.norm(x)\n',
    'def f(x):\n    return x / x.norm()\n',
    'def f(x):\n    x -= x.mean(0)\n    return x\n',
    'def f(x):\n    x /= x.sum(1, keepdim=True)\n    return x\n',
    'def f(x):\n    v, _ = x.sort(dim=1)\n    return x - v\n',
    'def f(x):\n    v, _ = x.topk(1, dim=1)\n    return x - v\n',
    'def f(x):\n    s, m = torch.std_mean(x, dim=1, keepdim=True)\n    return (x - m) / s\n',
    'def f(x):\n    lo, hi = torch.aminmax(x)\n    return (x - lo) / (hi - lo)\n',
    'def f(x):\n    return x - x.mean(dim=(0,))\n',
    'def f(x):\n    m = x.mean(1)\n    x = x.t()\n    return x - m\n',
    'def f(x):\n    return x.mean(1) - x.mean(1)\n',
    'def f(x):\n    return x.mean(0).expand_as(x)\n',
    'def f(x):\n    return torch.cat([x.sum(1), x.mean(1)])\n',
    'def f(x, dim=0):\n    return x - x.mean(dim)\n',
    'def f(x, dim=-1):\n    dim = 0\n    return x - x.mean(dim)\n',
    'def f(x):\n    return (x - x.amax(1, keepdim=True)).exp()\n',
    'def f(x, w):\n    return x.sum(1) / (x * w).sum(1)\n',
    "def f(x):\n    return (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True)\n",
    "def f(x, y):\n    return (x - y) / x.std(0)\n",
    "def f(x):\n    return (x - x.mean(0)) / x.std(0)\n",
]


#: code the rule stays silent on, buggy for a (4, 3) input: a method reduction of a value that may
#: be a NumPy array read with ``[0]`` (numpy's ``a.max(1)[0]`` is the first row's maximum), and a
#: reduction over a default dim of a tensor of unknown rank
NOT_SEEN = [
    "def f(x):\n    return x - x.max(1)[0]\n",
    # no dim written and the rank unknown: most likely a 1-D tensor (torch.nn.utils.prune does this)
    "def f(x):\n    v, _ = torch.mode(x)\n    return x - v\n",
]


def _lint(code: str) -> list[tuple[int, str, object]]:
    return [(d.line - 1, d.message, d.condition) for d in lint_text(HEAD + code, RULE) if d.code == "SC201"]


def _run(code: str, x: torch.Tensor) -> None:
    namespace: dict = {"torch": torch}
    exec(code, namespace)
    f = namespace["f"]
    required = [p for p in inspect.signature(f).parameters.values() if p.default is inspect.Parameter.empty]
    f(x.clone(), *[torch.rand(*x.shape) for _ in required[1:]])


@pytest.mark.parametrize("code, line, condition", INVALID)
def test_flagged_once_on_its_line(code, line, condition):
    found = _lint(code)
    assert [(ln, c) for ln, _m, c in found] == [(line, condition)], found
    if condition is not None:
        assert f"(wrong unless {condition})" in found[0][1]


@pytest.mark.parametrize("code, line, condition", INVALID)
def test_invalid_cases_raise_in_torch_when_not_square(code, line, condition):
    with pytest.raises(RuntimeError):
        _run(code, torch.rand(4, 3) + 0.5)


@pytest.mark.parametrize("code", VALID + NOT_SEEN)
def test_valid_cases_are_silent(code):
    assert _lint(code) == []


@pytest.mark.parametrize("code", VALID)
def test_valid_cases_run_in_torch(code):
    _run(code, torch.rand(4, 3) + 0.5)

