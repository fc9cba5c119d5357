"""SC101 on the shapes real code has: the top-k ``accuracy()`` helper, recurrent layers, a clone
of a transposed tensor, values of unknown origin transposed and viewed. Each bug is run with
torch (it raises) and so is its fixed twin (it works); the look-alikes are silent."""

from __future__ import annotations

import textwrap

import pytest

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import get_rule

SC101 = get_rule("SC101")

ACCURACY = """\
def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].view(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res
"""

ENCODER = """\
import torch.nn as nn
class Encoder(nn.Module):
    def __init__(self, n, hidden):
        super().__init__()
        self.hidden = hidden
        self.embedding = nn.Embedding(n, hidden)
        self.gru = nn.GRU(hidden, hidden, bidirectional=True)
    def forward(self, tokens, h):
        t, b = tokens.shape
        out, h = self.gru(self.embedding(tokens), h)
        return out.transpose(0, 1).view(-1, 2 * self.hidden), h
"""

LSTM_SIZES = """\
import torch.nn as nn
class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16)
    def forward(self, x):
        seq, batch, feat = x.size()
        out, (hn, cn) = self.lstm(x)
        return out.transpose(0, 1).view(batch, -1)
"""

CLONE = """\
def flat(h):
    return h.transpose(2, 3).clone().view(h.size(0), -1)
"""

UNKNOWN_ORIGIN = """\
def f(conv, x):
    y = conv(x)
    return y.transpose(0, 1).view(-1)
"""

FUNCTION_FORM = """\
import torch
def f(x, n):
    return torch.transpose(x, 1, 2).view(n, -1)
"""

LAYER_WEIGHT = """\
import torch.nn as nn
class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
    def forward(self):
        w = self.emb.weight.detach()
        return w.t().view(-1)
"""

SLICED = """\
def f(x):
    b, c, h, w = x.shape
    y = x.transpose(2, 3)[:, :3]
    return y.view(-1, w, h)
"""

BUGS = [
    (ACCURACY, 9, "dim 0 or 1 of `correct[:k]` is 1"),
    (ENCODER, 11, "`b` or `t` is 1 or dim 2 of `out.transpose(0, 1)` is 1"),
    (LSTM_SIZES, 9, "`batch` or `seq` is 1 or dim 2 of `out.transpose(0, 1)` is 1"),
    (CLONE, 2, None),
    (UNKNOWN_ORIGIN, 3, "dim 0 or 1 of `y.transpose(0, 1)` is 1"),
    (FUNCTION_FORM, 3, "dim 0, 1 or 2 of `torch.transpose(x, 1, 2)` is 1"),
    (LAYER_WEIGHT, 8, "dim 0 or 1 of `w.t()` is 1"),
    (SLICED, 4, "`b` or a dim (or the part of one) that indexing removed is 1 or dim 1 of `y` is 1"),
]


def _diags(code: str):
    return [(d.line, d.condition) for d in lint_text(textwrap.dedent(code), [SC101])]


def _fixed(code: str, line: int) -> str:
    lines = code.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace(".view(", ".reshape(", 1)
    return "".join(lines)


@pytest.mark.parametrize("code, line, condition", BUGS)
def test_bug_is_found_with_its_exception_and_its_fix_is_silent(code, line, condition):
    got = _diags(code)
    assert [g[0] for g in got] == [line]
    if condition is not None:
        assert got[0][1] == condition
    else:
        assert got[0][1]  # a generic-size finding always names its exception
    assert _diags(_fixed(code, line)) == []


def _run(code: str, name: str, *args):
    space: dict = {}
    exec(compile(code, "<case>", "exec"), space)
    return space[name](*args)


def _raises(code: str, name: str, *args) -> bool:
    try:
        _run(code, name, *args)
    except RuntimeError as e:
        assert "view" in str(e)
        return True
    return False


def test_the_bugs_raise_in_torch_and_their_fixes_do_not():
    torch = pytest.importorskip("torch")
    calls = [
        (ACCURACY, 9, "accuracy", lambda: (torch.randn(8, 10), torch.randint(0, 10, (8,)), (1, 5))),
        (CLONE, 2, "flat", lambda: (torch.randn(2, 3, 4, 5),)),
        (UNKNOWN_ORIGIN, 3, "f", lambda: (torch.nn.Conv1d(3, 4, 1), torch.randn(2, 3, 5))),
        (FUNCTION_FORM, 3, "f", lambda: (torch.randn(3, 4, 5), 3)),
        (SLICED, 4, "f", lambda: (torch.randn(5, 4, 3, 2),)),
    ]
    for code, line, name, args in calls:
        assert _raises(code, name, *args()), name
        _run(_fixed(code, line), name, *args())
    modules = [
        (ENCODER, 11, "Encoder", (10, 6), (torch.randint(0, 10, (7, 3)), None)),
        (LSTM_SIZES, 9, "Tagger", (), (torch.randn(7, 3, 8),)),
        (LAYER_WEIGHT, 8, "Tied", (), ()),
    ]
    for code, line, name, ctor, inputs in modules:
        for text, bad in ((code, True), (_fixed(code, line), False)):
            space: dict = {}
            exec(compile(text, "<case>", "exec"), space)
            model = space[name](*ctor)
            if bad:
                with pytest.raises(RuntimeError, match="view"):
                    model(*inputs)
            else:
                model(*inputs)


LOOK_ALIKES = [
    # k == 1 is the exception, not a proof: the fixed helper uses reshape
    ACCURACY.replace("correct[:k].view(-1)", "correct[:k].reshape(-1)"),
    ACCURACY.replace("correct[:k].view(-1)", "correct[:k].contiguous().view(-1)"),
    # a transposed value of rank 2 viewed as (its first size, -1) works
    "def f(y, n):\n    return y.transpose(0, 1).view(n, -1)\n",
    # splitting a dim never needs the strides to line up
    "def f(x):\n    return x.transpose(1, 2).view(x.size(0), x.size(2), x.size(1), -1)\n",
    # `.t()` of a value of unknown rank: a 0-d or 1-d tensor comes back as it is
    "def f(w):\n    return w.t().view(-1)\n",
    # a dtype view of what may be a NumPy array
    "def f(a, dt):\n    return a.transpose(1, 0).view(dt)\n",
    # softmax, matmul, contiguous and reshape give a plain layout
    "import torch\ndef f(x):\n    return torch.softmax(torch.transpose(x, 1, 2), -1).view(-1)\n",
    "def f(x, w):\n    return (x.transpose(1, 2) @ w).view(-1)\n",
    "def f(y):\n    return y.transpose(0, 1).contiguous().view(-1)\n",
    # batch_first recurrent output: the CPU kernel returns it transposed, so its order is unknown
    "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.rnn = nn.LSTM(8, 16, batch_first=True)\n    def forward(self, x):\n        b, t, f = x.shape\n"
    "        out, (h, c) = self.rnn(x)\n        return out.transpose(0, 1).view(t, -1)\n",
    # ... and stays unknown through further moves
    "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.rnn = nn.LSTM(8, 16, batch_first=True)\n    def forward(self, x):\n        z = x.relu()\n"
    "        out, (h, c) = self.rnn(z)\n        return out.transpose(0, 1).transpose(1, 2).view(-1)\n",
    # sizes known to be 1 (one token, batch of one): the view works
    "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.emb = nn.Embedding(10, 8)\n        self.gru = nn.GRU(8, 8)\n    def forward(self, tok, h):\n"
    "        e = self.emb(tok).view(1, 1, -1)\n        out, h = self.gru(e, h)\n"
    "        return out.transpose(0, 1).view(-1, 8)\n",
    # the output of a sequence-first layer is contiguous: viewing it needs no copy
    "import torch.nn as nn\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.gru = nn.GRU(8, 8)\n    def forward(self, x):\n        out, h = self.gru(x)\n"
    "        return out.view(-1, 8), h.view(-1)\n",
    # slicing the dim laid out outermost cuts no run short: the first two dims still merge
    "def f(x):\n    b, c, h, w = x.shape\n    y = x.transpose(2, 3)[:3]\n    return y.view(-1, w, h)\n",
]


@pytest.mark.parametrize("code", LOOK_ALIKES)
def test_look_alikes_are_silent(code):
    assert _diags(code) == []
