"""The context rules read at a node: kinds in ``nn.Module`` classes, the enclosing function,
class, loop and statement, the parent node."""

from __future__ import annotations

import libcst as cst

from semantic_probe import reveal

from shapecheck.engine.checker import analyze


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


def test_bindings_are_the_facts_of_the_names_bound_before_the_statement():
    class Bindings:
        code = "BINDINGS"

        def __init__(self):
            self.seen = []

        def visit_Call(self, node, ctx):
            if type(node.func) is cst.Name and node.func.value == "use":
                arg = node.args[0].value
                self.seen.append((sorted(k for k in ctx.bindings if k in ("x", "m", "y")),
                                  ctx.bindings["m"].reduction is not None, ctx.bindings["m"] is ctx.fact(arg)))

    rule = Bindings()
    code = ("import torch\ndef f():\n    x = torch.zeros(2, 3)\n    m = x.sum(1)\n    use(m)\n"
            "    y = use(m)\n")
    analyze(cst.parse_module(code), [rule])
    # `y` is bound only after the statement whose hooks run
    assert rule.seen == [(["m", "x"], True, True), (["m", "x"], True, True)]
