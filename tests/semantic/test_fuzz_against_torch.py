"""Differential test: random chains of shape and layout ops on literal tensors, inferred by the
linter and run by torch. Inferred shapes must equal torch's; a layout or stride the inference
claims must be torch's; a view it calls impossible must really raise, a possible one must not."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shapecheck.engine.checker import analyze
from shapecheck.shapes import Shape

torch = pytest.importorskip("torch")


class _Probe:
    code = "PROBE"

    def __init__(self):
        self.facts = []
        self.views = []

    def visit_Call(self, node, ctx):
        if isinstance(node.func, cst.Name) and node.func.value == "reveal":
            arg = node.args[0].value
            self.facts.append(ctx.fact(arg))
            if isinstance(arg, cst.Call) and isinstance(arg.func, cst.Attribute) and arg.func.attr.value == "view":
                self.views.append(ctx.view_verdict(arg))


def _divisor_split(draw, numel):
    target, rest = [], numel
    for _ in range(draw(st.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        target.append(d)
        rest //= d
    target.append(rest)
    return target


@st.composite
def programs(draw):
    """A chain ``x = torch.rand(...)`` then up to four ops; returns (program, ops, view target)."""
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    x = torch.rand(sizes)
    lines = [f"x = torch.rand({', '.join(map(str, sizes))})"]
    for _ in range(draw(st.integers(0, 4))):
        rank = x.dim()
        choices = ["transpose", "permute", "clone", "mul", "contiguous", "unsqueeze", "reshape", "slice",
                   "expand", "index", "sum", "float"]
        op = draw(st.sampled_from(choices))
        if op == "transpose" and rank >= 2:
            a, b = draw(st.integers(0, rank - 1)), draw(st.integers(0, rank - 1))
            text = f"x = x.transpose({a}, {b})"
        elif op == "permute" and rank >= 1:
            perm = draw(st.permutations(list(range(rank))))
            text = f"x = x.permute({', '.join(map(str, perm))})"
        elif op == "clone":
            text = "x = x.clone()"
        elif op == "mul":
            text = "x = x * 2"
        elif op == "contiguous":
            text = "x = x.contiguous()"
        elif op == "unsqueeze":
            d = draw(st.integers(-rank - 1, rank))
            text = f"x = x.unsqueeze({d})"
        elif op == "reshape" and x.numel() > 0:
            target = _divisor_split(draw, x.numel())
            text = f"x = x.reshape({', '.join(map(str, target))})"
        elif op == "slice" and rank >= 1:
            d = draw(st.integers(0, rank - 1))
            stop = draw(st.integers(1, max(1, x.shape[d])))
            text = f"x = x[{':, ' * d}:{stop}]"
        elif op == "expand" and rank >= 1:
            target = [draw(st.sampled_from([s, 3])) if s == 1 else s for s in x.shape]
            text = f"x = x.expand({', '.join(map(str, target))})"
        elif op == "index" and rank >= 2:
            text = "x = x[0]"
        elif op == "sum" and rank >= 2:
            d = draw(st.integers(0, rank - 1))
            text = f"x = x.sum({d}, keepdim=True)"
        elif op == "float":
            text = "x = x.double()"
        else:
            continue
        namespace = {"torch": torch, "x": x}
        exec(text, namespace)
        x = namespace["x"]
        lines.append(text)
    target = _divisor_split(draw, x.numel()) if x.numel() > 0 else None
    probes = []
    if target is not None:
        probes.append(f"reveal(x.view({', '.join(map(str, target))}))")
    probes.append("reveal(x)")
    return "import torch\n" + "\n".join(lines + probes) + "\n", "\n".join(lines) + "\n", target


@settings(max_examples=250, deadline=None)
@given(programs())
def test_inference_agrees_with_torch(case):
    program, ops, target = case
    probe = _Probe()
    ctx = analyze(cst.parse_module(program), [probe])
    assert ctx.infer_errors == [] and ctx.crashes == []
    namespace = {"torch": torch}
    exec(ops, namespace)
    x = namespace["x"]
    fact = probe.facts[-1]
    assert fact.shape == Shape(tuple(x.shape))
    if fact.layout is not None:  # unknown never flags; known must be right
        assert fact.layout == ("contiguous" if x.is_contiguous() else "non-contiguous")
    if fact.strides is not None:
        assert all(a == b for a, b, n in zip(fact.strides, x.stride(), x.shape) if n != 1)
    if probe.views:
        verdict = probe.views[0]
        try:
            x.view(target)
            ok = True
        except RuntimeError:
            ok = False
        assert verdict is not None
        if verdict[2] is not None:
            assert verdict[2] == ok
        else:
            assert fact.strides is None


@st.composite
def symbolic_programs(draw):
    """Ops on a tensor whose sizes are jaxtyping names (all >= 2 at run time), then a view that
    merges some neighbouring dims."""
    rank = draw(st.integers(2, 4))
    sizes = draw(st.lists(st.integers(2, 4), min_size=rank, max_size=rank))
    names = " ".join(f"d{i}" for i in range(rank))
    x = torch.rand(sizes)
    lines = []
    for _ in range(draw(st.integers(1, 4))):
        r = x.dim()
        op = draw(st.sampled_from(["transpose", "permute", "clone", "mul", "contiguous", "unsqueeze", "index",
                                   "double", "mT"]))
        if op == "transpose" and r >= 2:
            a, b = draw(st.integers(-r, r - 1)), draw(st.integers(-r, r - 1))
            text = f"x = x.transpose({a}, {b})"
        elif op == "permute":
            perm = draw(st.permutations(list(range(r))))
            text = f"x = x.permute({', '.join(map(str, perm))})"
        elif op == "clone":
            text = "x = x.clone()"
        elif op == "mul":
            text = "x = 2 * x"
        elif op == "contiguous":
            text = "x = x.contiguous()"
        elif op == "unsqueeze":
            text = f"x = x.unsqueeze({draw(st.integers(-r - 1, r))})"
        elif op == "index" and r >= 3:
            text = "x = x[:, 0]"
        elif op == "double":
            text = "x = x.double()"
        elif op == "mT" and r >= 2:
            text = "x = x.mT"
        else:
            continue
        namespace = {"torch": torch, "x": x}
        exec(text, namespace)
        x = namespace["x"]
        lines.append("    " + text)
    keep_first = draw(st.booleans())
    view = "x.view(x.size(0), -1)" if keep_first else "x.view(-1)"
    program = (
        "import torch\nfrom jaxtyping import Float\n\n"
        f"def f(x: Float[torch.Tensor, '{names}']):\n" + "\n".join(lines) + f"\n    reveal({view})\n"
    )
    return program, sizes, view


@settings(max_examples=250, deadline=None)
@given(symbolic_programs())
def test_unknown_size_verdicts_hold(case):
    program, sizes, view = case
    probe = _Probe()
    ctx = analyze(cst.parse_module(program), [probe])
    assert ctx.infer_errors == [] and ctx.crashes == []
    namespace = {"torch": torch, "reveal": lambda v: v}
    exec(program.replace("from jaxtyping import Float\n", "").replace(
        "x: Float[torch.Tensor, ", "x, _unused=(").replace("']):", "')):"), namespace)
    try:
        namespace["f"](torch.rand(sizes))
        ok = True
    except RuntimeError:
        ok = False
    verdict = probe.views[0]
    if verdict is not None and verdict[2] is False:
        assert not ok
    if verdict is not None and verdict[2] is True:
        assert ok
