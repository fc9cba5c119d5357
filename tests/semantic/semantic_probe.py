"""Helpers of the semantic tests: analyse a program and read what the model says at each
``reveal(expr)`` call (the fact of ``expr`` and the context flags rules read)."""

from __future__ import annotations

import textwrap
from typing import Optional

import libcst as cst

from shapecheck.engine.checker import analyze
from shapecheck.semantic.facts import MODULE, Fact
from shapecheck.shapes import format_shape

#: the imports :func:`facts` and :func:`one_with_head` put before a program
HEAD = "import torch\nimport torch.nn as nn\n"


class Probe:
    """A rule-like object that records the fact and the context at every ``reveal(expr)`` call."""

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


def reveal(code: str, text: Optional[str] = None) -> list[tuple[Fact, dict]]:
    """``(fact, flags)`` at each ``reveal(...)`` of ``code`` (dedented); no crash, no inference gap."""
    probe = Probe()
    ctx = analyze(cst.parse_module(textwrap.dedent(code)), [probe], text)
    assert ctx.crashes == []
    assert ctx.infer_errors == []
    return probe.seen


def one(code: str) -> Fact:
    """The fact at the one ``reveal(...)`` of ``code``."""
    seen = reveal(code)
    assert len(seen) == 1
    return seen[0][0]


def assert_layout_matches_torch(expr: str, layout: str, strides: tuple) -> None:
    """The revealed layout and strides of ``expr`` (a torch expression) are ``layout`` and
    ``strides``, and torch, running ``expr``, agrees (skipped without torch)."""
    import pytest

    torch = pytest.importorskip("torch")
    f = one(f"import torch\nreveal({expr})\n")
    assert f.layout == layout
    assert f.strides == strides
    real = eval(expr, {"torch": torch})
    assert tuple(real.stride()) == strides
    assert real.is_contiguous() == (layout == "contiguous")


def shape(code: str) -> str:
    """The shape at the one ``reveal(...)`` of ``code``, formatted, or ``"unknown"``."""
    f = one(code)
    return format_shape(f.shape) if f.shape is not None else "unknown"


def facts(code: str, text: bool = True) -> list[Fact]:
    """The facts revealed in ``code`` (with the imports of HEAD), with or without the text."""
    source = HEAD + textwrap.dedent(code)
    return [f for f, _ in reveal(source, source if text else None)]


def one_with_head(code: str) -> Fact:
    """The one revealed fact of ``code`` after HEAD; the same whether or not ``analyze`` is
    given the text."""
    with_text, without = facts(code), facts(code, text=False)
    assert len(with_text) == 1 and with_text[0].same(without[0])
    return with_text[0]


def summary(f: Fact) -> tuple:
    """``(kind, device, grad)``; for a module, whose ``grad`` is always unknown, ``trainable``
    stands in the grad's place."""
    if f.kind == MODULE:
        assert f.grad is None
        return f.kind, f.device, f.trainable
    return f.kind, f.device, f.grad
