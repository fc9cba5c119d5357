"""Tensor-fact inference: shapes, layout, device, grad, kinds and the context flags rules read."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from shapecheck.semantic.facts import Fact
from shapecheck.semantic.interpreter import analyze
from shapecheck.shapes import format_shape


class _Probe:
    """A rule-like object that records facts at every ``reveal(expr)`` call."""

    code = "PROBE"

    def __init__(self) -> None:
        self.seen: list[tuple[Fact, dict]] = []

    def visit_Call(self, node, ctx) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "reveal":
            flags = {
                "grad_enabled": ctx.grad_enabled,
                "function": ctx.function.name.value if ctx.function is not None else None,
                "class": ctx.class_def.name.value if ctx.class_def is not None else None,
                "in_module_class": ctx.in_module_class,
                "in_forward": ctx.in_forward,
                "loop": type(ctx.loop).__name__ if ctx.loop is not None else None,
            }
            self.seen.append((ctx.fact(node.args[0].value), flags))


def reveal(code: str) -> list[tuple[Fact, dict]]:
    probe = _Probe()
    ctx = analyze(cst.parse_module(textwrap.dedent(code)), [probe])
    assert ctx.crashes == []
    assert ctx.infer_errors == []
    return probe.seen


def one(code: str) -> Fact:
    seen = reveal(code)
    assert len(seen) == 1
    return seen[0][0]


def shape(code: str) -> str:
    f = one(code)
    return format_shape(f.shape) if f.shape is not None else "unknown"


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("torch.zeros(2, 3)", "(2, 3)"),
        ("torch.ones((4, 5))", "(4, 5)"),
        ("torch.randn([6])", "(6,)"),
        ("torch.full((2, 2), 7.0)", "(2, 2)"),
        ("torch.arange(6)", "(6,)"),
        ("torch.arange(1, 10, 2)", "(5,)"),
        ("torch.linspace(0, 1, 11)", "(11,)"),
        ("torch.eye(3)", "(3, 3)"),
        ("torch.tensor([[1, 2, 3], [4, 5, 6]])", "(2, 3)"),
        ("torch.tensor(3.0)", "()"),
        ("torch.randint(0, 10, (4, 2))", "(4, 2)"),
        ("torch.zeros_like(torch.zeros(5, 1))", "(5, 1)"),
        ("torch.zeros(2, 3).view(3, 2)", "(3, 2)"),
        ("torch.zeros(2, 3).view(-1)", "(6,)"),
        ("torch.zeros(2, 3, 4).reshape(2, -1)", "(2, 12)"),
        ("torch.zeros(2, 3, 4).flatten(1)", "(2, 12)"),
        ("torch.zeros(2, 3, 4).transpose(0, 2)", "(4, 3, 2)"),
        ("torch.zeros(2, 3, 4).permute(2, 0, 1)", "(4, 2, 3)"),
        ("torch.zeros(2, 3).T", "(3, 2)"),
        ("torch.zeros(5, 2, 3).mT", "(5, 3, 2)"),
        ("torch.zeros(2, 3).t()", "(3, 2)"),
        ("torch.zeros(2, 3).unsqueeze(0)", "(1, 2, 3)"),
        ("torch.zeros(2, 3).unsqueeze(-1)", "(2, 3, 1)"),
        ("torch.zeros(2, 1, 3).squeeze()", "(2, 3)"),
        ("torch.zeros(2, 1, 3).squeeze(1)", "(2, 3)"),
        ("torch.zeros(1, 3).expand(4, 3)", "(4, 3)"),
        ("torch.zeros(2, 3).repeat(2, 2)", "(4, 6)"),
        ("torch.zeros(4, 5)[0]", "(5,)"),
        ("torch.zeros(4, 5)[:, 1:3]", "(4, 2)"),
        ("torch.zeros(4, 5)[None, ..., 0]", "(1, 4)"),
        ("torch.zeros(4, 5).sum()", "()"),
        ("torch.zeros(4, 5).sum(dim=1)", "(4,)"),
        ("torch.zeros(4, 5).mean(1, keepdim=True)", "(4, 1)"),
        ("torch.zeros(4, 5, 6).sum(dim=(0, 2))", "(5,)"),
        ("torch.zeros(4, 5).max(dim=1).values", "(4,)"),
        ("torch.zeros(4, 5) @ torch.zeros(5, 6)", "(4, 6)"),
        ("torch.matmul(torch.zeros(7, 4, 5), torch.zeros(5, 6))", "(7, 4, 6)"),
        ("torch.einsum('bij,bjk->bik', torch.zeros(2, 3, 4), torch.zeros(2, 4, 5))", "(2, 3, 5)"),
        ("torch.cat([torch.zeros(2, 3), torch.zeros(4, 3)])", "(6, 3)"),
        ("torch.stack([torch.zeros(2, 3), torch.zeros(2, 3)], dim=1)", "(2, 2, 3)"),
        ("torch.zeros(2, 3) + torch.zeros(3)", "(2, 3)"),
        ("torch.zeros(2, 1) * torch.zeros(1, 4)", "(2, 4)"),
    ],
)
def test_shapes_of_literal_programs(expr, expected):
    assert shape(f"import torch\nreveal({expr})\n") == expected


def test_names_resolve_through_imports():
    code = """
    import torch as T
    from torch import zeros
    import torch.nn.functional as F
    x = T.zeros(2, 3)
    y = zeros(4)
    reveal(F.relu(x))
    reveal(y)
    """
    (relu, _), (y, _) = reveal(code)
    assert format_shape(relu.shape) == "(2, 3)"
    assert format_shape(y.shape) == "(4,)"


def test_jaxtyping_annotations_give_symbolic_shapes():
    code = """
    import torch
    from jaxtyping import Float, Int
    from torch import Tensor

    def f(x: Float[Tensor, "batch seq d"], y: Int[torch.Tensor, "*b 3"]):
        reveal(x)
        reveal(y)
        reveal(x.sum(-1))
    """
    (x, _), (y, _), (s, _) = reveal(code)
    assert format_shape(x.shape) == "(batch, seq, d)" and x.dtype_kind == "float"
    assert y.shape.rank is None and y.shape.trailing() == (3,) and y.dtype_kind == "int"
    assert format_shape(s.shape) == "(batch, seq)"


def test_annotated_function_return_is_used_at_call_sites():
    code = """
    import torch
    from jaxtyping import Float
    from torch import Tensor

    def pool(x: Float[Tensor, "b t c"]) -> Float[Tensor, "b c"]:
        return x.mean(1)

    reveal(pool(torch.zeros(2, 7, 3)))
    """
    assert format_shape(one(code).shape) == "(2, 3)"


@pytest.mark.parametrize(
    "expr, layout, strides",
    [
        ("torch.rand(32, 32, 3).permute(2, 0, 1)", "non-contiguous", (1, 96, 3)),
        ("torch.rand(32, 32, 3).permute(2, 0, 1).view(3, -1)", "non-contiguous", (1, 3)),
        ("torch.rand(3, 4).t().reshape(4, 3)", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t().reshape(12)", "contiguous", (1,)),
        ("torch.rand(3, 4).t().clone()", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t() * 2", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t().float()", "non-contiguous", (1, 4)),
        ("torch.rand(3, 4).t().contiguous()", "contiguous", (3, 1)),
        ("torch.rand(3, 4).t().t()", "contiguous", (4, 1)),
        ("torch.rand(3, 4)[:, :2]", "non-contiguous", (4, 1)),
        ("torch.rand(3, 4)[1:]", "contiguous", (4, 1)),
        ("torch.rand(1, 4).expand(3, 4)", "non-contiguous", (0, 1)),
        ("torch.rand(3, 4) @ torch.rand(4, 5)", "contiguous", (5, 1)),
    ],
)
def test_exact_strides_match_torch(expr, layout, strides):
    torch = pytest.importorskip("torch")
    f = one(f"import torch\nreveal({expr})\n")
    assert f.layout == layout
    assert f.strides == strides
    real = eval(expr, {"torch": torch})
    assert tuple(real.stride()) == strides
    assert real.is_contiguous() == (layout == "contiguous")


def test_unknown_shapes_track_moved_dims():
    code = """
    def f(x, b, t, h, d):
        y = x.view(b, t, h, d).transpose(1, 2)
        reveal(y)
    """
    f = one(code)
    assert f.perm == (0, 2, 1, 3) and f.moved_by == ".transpose(1, 2)"


def test_device_facts():
    code = """
    import torch
    import torch.nn as nn
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    reveal(dev)
    reveal(torch.zeros(3))
    reveal(torch.zeros(3, device="cuda:0"))
    reveal(torch.zeros(3).cuda())
    reveal(torch.zeros(3).to(dev))
    x = torch.zeros(2)
    reveal(torch.ones(2, device=x.device))
    reveal(torch.ones(2).to(torch.float16))
    model = nn.Linear(2, 2)
    built = model  # reveal() is an unknown function: it could change the module passed to it
    reveal(built)
    model.cuda()
    reveal(model)
    name = "cuda"
    reveal(name)
    """
    facts = [f for f, _ in reveal(code)]
    assert [f.device for f in facts] == [
        "maybe-cuda", "cpu", "cuda", "cuda", "maybe-cuda", "cpu", "cpu", "cpu", "cuda", "cuda"]
    assert facts[0].kind == "device" and facts[-1].kind == "device"
    assert facts[7].kind == "module" and facts[7].qual == "torch.nn.Linear"


def test_device_same_as_for_unknown_tensor():
    code = """
    import torch
    def f(x):
        reveal(torch.zeros(3, device=x.device))
    """
    assert one(code).device == "same-as:x"


def test_grad_facts_and_grad_mode():
    code = """
    import torch
    import torch.nn as nn
    w = torch.randn(3, requires_grad=True)
    reveal(w)
    y = w * 2
    reveal(y)
    reveal(y.detach())
    reveal(torch.zeros(3))
    p = nn.Parameter(torch.zeros(2))
    reveal(p)
    with torch.no_grad():
        reveal(w * 3)
    x = torch.zeros(3)
    x.requires_grad_()
    reveal(x)
    reveal(torch.argmax(w))
    """
    seen = reveal(code)
    assert [f.grad for f, _ in seen] == [
        "leaf-requiring-grad", "non-leaf", "no-grad", "no-grad", "leaf-requiring-grad", "no-grad",
        "leaf-requiring-grad", "no-grad"]
    assert [flags["grad_enabled"] for _, flags in seen][5] is False


@pytest.mark.parametrize(
    "header, expected",
    [
        ("with torch.no_grad():", False),
        ("with torch.inference_mode():", False),
        ("with torch.set_grad_enabled(False):", False),
        ("with torch.enable_grad():", True),
        ("with torch.set_grad_enabled(flag):", None),
    ],
)
def test_grad_mode_blocks(header, expected):
    code = f"import torch\nflag = bool(1)\n{header}\n    reveal(1)\n"
    assert reveal(code)[0][1]["grad_enabled"] is expected


def test_grad_mode_decorators():
    code = """
    import torch

    @torch.no_grad()
    def evaluate(x):
        reveal(x)

    @torch.inference_mode()
    def infer(x):
        reveal(x)

    def train(x):
        reveal(x)
    """
    assert [flags["grad_enabled"] for _, flags in reveal(code)] == [False, False, True]


def test_dtype_kinds():
    code = """
    import torch
    reveal(torch.tensor([1, 2]))
    reveal(torch.tensor([1.0, 2.0]))
    reveal(torch.arange(5))
    reveal(torch.randint(0, 3, (2,)))
    reveal(torch.zeros(2, dtype=torch.long))
    reveal(torch.zeros(2) > 0)
    reveal(torch.zeros(2).long())
    reveal(torch.randn(2))
    """
    assert [f.dtype_kind for f, _ in reveal(code)] == [
        "int", "float", "int", "int", "int", "bool", "int", "float"]


def test_kinds_and_context_in_module_classes():
    code = """
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 8)
            self.w = nn.Parameter(torch.zeros(8))

        def forward(self, x):
            reveal(self)
            reveal(self.fc)
            reveal(self.w)
            for p in self.parameters():
                reveal(p)

    class Deeper(Block):
        def forward(self, x):
            reveal(self)

    class Plain:
        def run(self):
            reveal(self)

    opt = torch.optim.SGD([], lr=0.1)
    reveal(opt)
    reveal(Block())
    reveal(torch.max(torch.zeros(2, 3), dim=1))
    reveal(torch.zeros(2, 3).shape)
    """
    seen = reveal(code)
    kinds = [f.kind for f, _ in seen]
    assert kinds == ["module", "module", "tensor", "tensor", "module", None, "optimizer", "module", "tuple", "size"]
    assert seen[2][0].grad == "leaf-requiring-grad" and seen[3][0].grad == "leaf-requiring-grad"
    assert seen[0][1] == {"grad_enabled": True, "function": "forward", "class": "Block",
                          "in_module_class": True, "in_forward": True, "loop": None}
    assert seen[3][1]["loop"] == "For"
    assert seen[4][1]["in_module_class"] is True and seen[4][1]["in_forward"] is True
    assert seen[5][1]["in_module_class"] is False and seen[5][1]["in_forward"] is False
    assert seen[6][1]["function"] is None and seen[6][1]["class"] is None


def test_joins_at_if_and_loops():
    code = """
    import torch
    x = torch.zeros(2, 3)
    if cond:
        x = torch.zeros(2, 3)
    reveal(x)
    if cond:
        y = torch.zeros(4)
    else:
        y = torch.zeros(5)
    reveal(y)
    z = torch.zeros(3)
    for i in range(3):
        reveal(z)
        z = z.unsqueeze(0)
    reveal(z)
    d = "cpu"
    if cond:
        d = "cuda"
    reveal(d)
    """
    seen = [f for f, _ in reveal(code)]
    assert format_shape(seen[0].shape) == "(2, 3)"
    assert seen[1].shape is None and seen[1].kind == "tensor"
    assert seen[2].shape is None and seen[3].shape is None
    assert seen[4].device == "maybe-cuda"


def test_loop_bodies_are_reported_once():
    code = """
    import torch
    x = torch.zeros(3)
    for i in range(10):
        while i:
            reveal(x)
    """
    assert len(reveal(code)) == 1


def test_early_return_branch_does_not_join():
    code = """
    import torch
    def f(flag):
        x = torch.zeros(2, 3)
        if flag:
            x = None
            return x
        reveal(x)
    """
    assert format_shape(one(code).shape) == "(2, 3)"


def test_comprehension_targets_shadow_outer_names():
    code = """
    import torch
    x = torch.zeros(2, 3)
    ys = [reveal(x) for x in range(3)]
    """
    assert one(code).kind is None


def test_unpacking_shape_proves_rank():
    code = """
    import torch
    def f(x: torch.Tensor):
        b, t, c = x.shape
        reveal(x)
        reveal(b)
    """
    x, b = [f for f, _ in reveal(code)]
    assert x.shape.rank == 3 and b.kind == "int"


def test_rebinding_makes_a_new_binding():
    code = """
    import torch
    x = torch.zeros(2)
    reveal(x)
    reveal(x)
    x = torch.zeros(2)
    reveal(x)
    """
    a, b, c = [f for f, _ in reveal(code)]
    assert a is b and a is not c and a.same(c)


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


def test_one_line_suites_are_analysed():
    code = """
    import torch
    x = torch.zeros(2, 3)
    if cond: x = torch.zeros(5)
    reveal(x)
    for i in range(2): reveal(x)
    """
    first, second = [f for f, _ in reveal(code)]
    assert first.shape is None and first.kind == "tensor"
    assert second.kind == "tensor"


def test_globals_rebound_elsewhere_are_not_trusted():
    code = """
    import torch
    x = torch.zeros(3, 4)
    y = torch.zeros(3, 4)

    def g():
        global y
        y = y.t()

    def f():
        reveal(x)
        reveal(y)
    """
    x, y = [f for f, _ in reveal(code)]
    assert format_shape(x.shape) == "(3, 4)" and y.shape is None


def test_attributes_rebound_outside_init_are_not_exported():
    code = """
    import torch.nn as nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.g = nn.Linear(3, 4)

        def prune(self):
            self.fc = nn.Linear(2, 4)

        def forward(self, x):
            reveal(self.fc)
            reveal(self.g)
    """
    fc, g = [f for f, _ in reveal(code)]
    assert fc.kind is None and g.features == (3, 4)


def test_parent_and_statement_context():
    class Parents:
        code = "PARENTS"

        def __init__(self):
            self.seen = []

        def visit_Name(self, node, ctx):
            if node.value == "flag":
                self.seen.append((type(ctx.parent).__name__, type(ctx.statement).__name__))

    rule = Parents()
    analyze(cst.parse_module("if flag:\n    y = flag + 1\n"), [rule])
    assert rule.seen == [("If", "If"), ("BinaryOperation", "Assign")]


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
    ctx = analyze(cst.parse_module(KITCHEN_SINK), [_Probe()])
    assert ctx.crashes == [] and ctx.infer_errors == []
