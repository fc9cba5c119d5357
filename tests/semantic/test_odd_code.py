"""The inference never raises: odd arguments, and every kind of syntax in one file."""

from __future__ import annotations

import libcst as cst

from semantic_probe import Probe, reveal

from shapecheck.engine.checker import analyze


def test_inference_never_raises_on_odd_code():
    code = """
    import torch
    x = torch.zeros(2, 3)
    y = x.view(*x.shape)
    z = x[x > 0]
    w = x.permute(9, 8)
    v = x.sum(dim=9)
    u = torch.zeros(-1)
    t = x.view(0, -1)
    s = x.transpose(a, b)
    q = torch.arange(0, 1, 0)
    reveal(q)
    """
    reveal(code)


KITCHEN_SINK = '''
import torch
from torch import nn
import torch.nn.functional as F

x: int
y: "torch.Tensor" = torch.zeros(2)
a, *rest = torch.zeros(3, 2)
(b := torch.ones(4))
del y
z = [t.view(-1) for t in [torch.zeros(2, 2).t()] if t is not None]
w = {k: v for k, v in {}.items()}
f = lambda q, r=torch.zeros(1): q.t().view(-1)
g = (lambda: 1)()
s = f"{x!r:>10}"

async def run(loader):
    async with ctx() as c, torch.no_grad():
        async for batch in loader:
            await batch
    return [i async for i in loader]

def gen():
    global x
    nonlocal_free = 1
    def inner():
        nonlocal nonlocal_free
        nonlocal_free += 1
    yield from range(3)

match torch.zeros(2).shape:
    case (2,):
        m = 1
    case [n, *_] if n > 1:
        m = 2
    case _:
        m = 3

try:
    import numpy as np
except* ValueError as e:
    np = None
finally:
    done = True

while (k := 1) and False:
    break
else:
    pass

for i, (j, kk) in enumerate(zip(range(2), range(2))):
    continue

class Meta(type):
    pass

class Net(nn.Module, metaclass=Meta):
    size: int = 3

    @staticmethod
    def helper(*args, **kwargs):
        return args

    @property
    def p(self):
        return self.q.t().view(-1)

x = torch.zeros(2, 3)
x[0] = 1
x[..., None] += 2
x.T[0].add_(1)
print(*x.shape, sep=",")
'''


def test_analysis_survives_a_kitchen_sink_of_syntax():
    ctx = analyze(cst.parse_module(KITCHEN_SINK), [Probe()])
    assert ctx.crashes == [] and ctx.infer_errors == []
