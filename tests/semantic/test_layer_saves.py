"""What a module call saves for backward (:mod:`shapecheck.semantic.layer_saves`), what a loop
over a ``ModuleList`` binds (:mod:`shapecheck.semantic.eval.module_lists`), which layer calls
write into their input (:mod:`shapecheck.semantic.inplace_layers`), and ``int64`` results."""

from __future__ import annotations

import textwrap

import libcst as cst

from semantic_probe import reveal
from shapecheck.engine.checker import analyze
from shapecheck.semantic.facts import MODULE, NO_GRAD, TENSOR, DtypeKind, Fact
from shapecheck.semantic.inplace_layers import InplaceLayer, inplace_layer_call
from shapecheck.semantic.layer_saves import forward_saves_input, module_saves
from shapecheck.semantic.torch_api import RESULT, SELF

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def _model(code: str):
    """The semantic model after the walk of ``code`` (with :data:`HEAD`)."""
    ctx = analyze(cst.parse_module(HEAD + textwrap.dedent(code)), [])
    return ctx.model


CLASSES = """\
class LN(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, None, 1e-5)
class NoWeight(nn.Module):
    def forward(self, input):
        return F.layer_norm(input, input.shape[-1:])
class Starts(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
        self.fc = nn.Linear(n, n)
    def forward(self, x):
        x = self.norm(x)
        return self.fc(x)
class Nested(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.inner = LN(n)
    def forward(self, x):
        return self.inner(x) * 2
class Branches(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
    def forward(self, x, flag=False):
        if flag:
            return x
        return self.norm(x)
class Rebinds(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.norm = nn.LayerNorm(n)
    def forward(self, x):
        x = x * 2
        return self.norm(x)
class Drop(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.1)
    def forward(self, x):
        return self.drop(x)
"""


def test_a_module_class_saves_its_input_when_its_forward_starts_by_saving_it():
    model = _model(CLASSES)
    assert forward_saves_input(model, "LN")
    assert forward_saves_input(model, "Starts")
    assert forward_saves_input(model, "Nested")


def test_no_weight_a_branch_first_a_rebinding_or_a_layer_that_saves_nothing_is_not_a_save():
    model = _model(CLASSES)
    for name in ("NoWeight", "Branches", "Rebinds", "Drop", "Missing"):
        assert not forward_saves_input(model, name), name


def test_nn_layers_save_what_torch_saves():
    trainable = Fact(kind=MODULE, qual="torch.nn.Linear", trainable=True)
    assert module_saves(None, trainable, None) == {SELF}
    assert module_saves(None, trainable.with_(trainable=False), None) == set()
    assert module_saves(None, Fact(kind=MODULE, qual="torch.nn.GELU"), True) == {SELF}
    assert module_saves(None, Fact(kind=MODULE, qual="torch.nn.GELU"), None) == set()
    assert module_saves(None, Fact(kind=MODULE, qual="torch.nn.Softmax"), True) == {RESULT}
    assert module_saves(None, Fact(kind=MODULE, qual="torch.nn.Dropout", trainable=True), True) == set()
    assert module_saves(None, Fact(kind=MODULE, qual="torch.nn.Identity"), True) == set()


def test_a_loop_over_a_module_list_binds_the_class_init_put_in_it():
    seen = reveal(HEAD + CLASSES + """\
class FF(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
    def forward(self, x):
        return self.fc(x)
class Stack(nn.Module):
    def __init__(self, n, depth):
        super().__init__()
        self.blocks = nn.ModuleList([Starts(n) for _ in range(depth)])
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([Starts(n), FF(n)]))
        self.mixed = nn.ModuleList([Starts(n), FF(n)])
        self.twice = nn.ModuleList([FF(n)])
        self.twice = nn.ModuleList([Starts(n)])
    def forward(self, x):
        for blk in self.blocks:
            reveal(blk)
        for attn, ff in self.layers:
            reveal(attn)
            reveal(ff)
        for m in self.mixed:
            reveal(m)
        for m in self.twice:
            reveal(m)
        return x
""")
    facts = [f for f, _flags in seen]
    assert [(f.kind, f.qual, f.trainable) for f in facts[:3]] == [
        (MODULE, "Starts", True), (MODULE, "Starts", True), (MODULE, "FF", True)]
    assert facts[3].qual is None and facts[4].qual is None


def test_layers_built_in_place_write_into_their_input():
    module = cst.parse_module(HEAD + textwrap.dedent("""\
        class Net(nn.Module):
            def __init__(self, p):
                super().__init__()
                self.drop = nn.Dropout(p, inplace=True)
                self.drop0 = nn.Dropout(0.0, inplace=True)
                self.drop1 = nn.Dropout(0.1, inplace=True)
                self.act = nn.ReLU(inplace=True)
                self.plain = nn.ReLU()
                self.two = nn.ReLU(inplace=True)
                self.two = nn.Identity()
            def forward(self, x):
                return self.drop(self.drop0(self.drop1(self.act(self.plain(self.two(x))))))
        """))
    ctx = analyze(module, [])
    cls = next(s for s in module.body if type(s) is cst.ClassDef)
    calls = {}
    forward = cls.body.body[1]
    expr = forward.body.body[0].body[0].value
    while type(expr) is cst.Call:
        calls[cst.Module([]).code_for_node(expr.func)] = expr
        expr = expr.args[0].value if expr.args else None
    resolve = ctx.model.imports.resolve
    assert inplace_layer_call(resolve, cls, calls["self.drop"]) == InplaceLayer("Dropout", "p")
    assert inplace_layer_call(resolve, cls, calls["self.drop1"]) == InplaceLayer("Dropout")
    assert inplace_layer_call(resolve, cls, calls["self.act"]) == InplaceLayer("ReLU")
    for name in ("self.drop0", "self.plain", "self.two"):
        assert inplace_layer_call(resolve, cls, calls[name]) is None, name


def test_counts_and_bucket_indices_are_int64_tensors():
    seen = reveal(HEAD + """\
labels = torch.randint(0, 5, (100,))
reveal(torch.bincount(labels))
reveal(torch.bincount(labels, weights=torch.rand(100)))
reveal(torch.bucketize(torch.rand(4), torch.tensor([0.5])))
""")
    counts, weighted, buckets = (f for f, _ in seen)
    assert (counts.kind, counts.dtype_kind, counts.grad, counts.rank) == (TENSOR, DtypeKind.INT, NO_GRAD, 1)
    assert weighted.dtype_kind != DtypeKind.INT
    assert (buckets.kind, buckets.dtype_kind) == (TENSOR, DtypeKind.INT)
