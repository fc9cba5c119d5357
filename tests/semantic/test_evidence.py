"""Tensor-ness and rank from evidence (``shapecheck.semantic.evidence``): a value of unknown origin
is a tensor when the code uses it as only a tensor can be used, its rank is bounded by its uses,
and results of ``torch``/``F`` functions and ``nn`` layers are tensors of the rank torch gives."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from semantic_probe import facts, reveal

from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules
from shapecheck.semantic.evidence import PARAMETERS, Evidence, scan_function
from shapecheck.semantic.facts import FLOAT, TENSOR
from shapecheck.shapes import format_shape

HEAD = "import numpy as np\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def seen(code: str) -> list[tuple]:
    """``(kind, shape)`` at each ``reveal(...)`` of ``code`` (after HEAD), shapes formatted."""
    out = []
    for f, _flags in reveal(HEAD + textwrap.dedent(code)):
        out.append((f.kind, format_shape(f.shape) if f.shape is not None else None))
    return out


def lint(code: str, *codes: str) -> list[tuple[str, int, str, object]]:
    """``(code, line, message, condition)`` of the diagnostics of the rules ``codes``."""
    rules = [r for r in all_rules() if r.code in codes]
    return [(d.code, d.line, d.message, d.condition) for d in lint_text(textwrap.dedent(code), rules)]


def param_evidence(code: str, name: str) -> Evidence:
    fn = cst.parse_module(textwrap.dedent(code)).body[0]
    assert isinstance(fn, cst.FunctionDef)
    return scan_function(fn, lambda e: None).at(PARAMETERS).get(name, Evidence())


# --------------------------------------------------------------------------- the examples

NANOGPT = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.n_embd = n_embd
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att, dim=-1)
        y = att @ v
        reveal(k)
        reveal(att)
        reveal(y)
        y = y.transpose(1, 2).view(B, T, C)
        return y
'''


def test_nanogpt_attention_keeps_rank_4_through_the_products():
    found = [f for f, _ in reveal(NANOGPT)]
    assert [f.kind for f in found] == [TENSOR, TENSOR, TENSOR]
    assert [f.rank for f in found] == [4, 4, 4]
    assert found[0].perm == (0, 2, 1, 3)  # k after .transpose(1, 2)


def test_nanogpt_forgotten_contiguous_is_sc101():
    code = NANOGPT.replace("        reveal(k)\n        reveal(att)\n        reveal(y)\n", "")
    found = lint(code, "SC101")
    assert [(c, line) for c, line, _m, _cond in found] == [("SC101", 23)]


def test_permute_then_view_of_a_parameter_is_sc101():
    code = "def f(batch):\n    return batch.permute(0, 2, 1).view(-1)\n"
    assert [(c, line) for c, line, _m, _cond in lint(code, "SC101")] == [("SC101", 2)]
    assert seen("def f(batch):\n    reveal(batch)\n    return batch.permute(0, 2, 1)\n") == [(TENSOR, "(?, ?, ?)")]


TRAIN = '''
import torch
import torch.nn.functional as F

def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        {line}
        optimizer.step()
'''


def test_train_loop_output_is_a_tensor_of_rank_at_least_1_and_loss_is_0_dim():
    found = seen(TRAIN.replace("{line}", "reveal(output)\n        reveal(loss)\n        reveal(target)"))
    assert found == [(TENSOR, "(?, ...)"), (TENSOR, "()"), (TENSOR, None)]


def test_backward_on_the_prediction_is_sc304_with_its_condition():
    found = lint(TRAIN.replace("{line}", "output.backward()"), "SC304")
    assert len(found) == 1
    code, line, message, condition = found[0]
    assert (code, line, condition) == ("SC304", 12, "`output` has one element")
    assert "raises RuntimeError unless `output` has one element" in message


def test_comparison_of_the_prediction_in_an_if_is_sc601_with_its_condition():
    found = lint(TRAIN.replace("{line}", "if output > 0.5:\n            pass"), "SC601")
    assert [(c, line, cond) for c, line, _m, cond in found] == [("SC601", 12, "`output > 0.5` has one element")]


def test_loss_backward_and_item_stay_silent_and_numpy_is_sc309():
    # loss is 0-dim; backward() on it says it requires grad, so loss.numpy() raises
    body = "loss.backward()\n        x = loss.numpy()\n        v = loss.item()\n        if loss > 1:\n            pass"
    found = lint(TRAIN.replace("{line}", body), "SC304", "SC309", "SC601", "SC602")
    assert [(c, line) for c, line, _m, _c in found] == [("SC309", 13)]
    assert lint(TRAIN.replace("{line}", "x = loss.numpy()"), "SC309") == []  # grad unknown: silent


def test_backward_is_evidence_that_a_value_requires_grad():
    code = "def f(out):\n    print(out.numpy())\n    out.backward()\n"
    assert [(c, line) for c, line, _m, _c in lint(code, "SC309")] == [("SC309", 2)]
    code = "def f(out):\n    print(out.detach().numpy())\n    out.backward()\n"
    assert lint(code, "SC309") == []
    code = "def f(out, g):\n    print(out.numpy())\n    out.backward(g)\n"  # maybe a wrapper's backward
    assert lint(code, "SC309") == []
    code = "def f(out, ctx):\n    with ctx as out:\n        print(out.numpy())\n    out.backward()\n"  # bound twice
    assert lint(code, "SC309") == []


def test_item_on_the_prediction_is_sc602_with_its_condition():
    # the issue lists `output.item()` in the training function: it raises unless output has one element
    found = lint(TRAIN.replace("{line}", "v = output.item()"), "SC602")
    assert [(c, line, cond) for c, line, _m, cond in found] == [("SC602", 12, "`output` has one element")]


def test_names_are_not_evidence():
    assert seen("def f(model, loss, x):\n    reveal(model)\n    reveal(loss)\n    reveal(x)\n") == [
        (None, None), (None, None), (None, None)]
    assert lint("def prepare(model, tensor):\n    model.cuda()\n    tensor.to('cuda')\n", "SC402") == []


# --------------------------------------------------------------------------- uses that are evidence


@pytest.mark.parametrize("use, shape", [
    ("x.contiguous()", None),
    ("x.permute(0, 2, 1)", "(?, ?, ?)"),
    ("x.permute((0, 2, 1, 3))", "(?, ?, ?, ?)"),
    ("x.transpose(1, 2)", "(?, ?, ?, ...)"),
    ("x.transpose(-3, -1)", "(..., ?, ?, ?)"),
    ("x.unsqueeze(2)", "(?, ?, ...)"),
    ("x.size(2)", "(?, ?, ?, ...)"),
    ("x.view(-1)", None),
    ("x.view(b, t, h, d)", None),
    ("x.sum(dim=1)", "(?, ?, ...)"),
    ("x.mean(-1, keepdim=True)", "(..., ?)"),
    ("x.split(3, dim=1)", "(?, ?, ...)"),
    ("x.backward()", None),
    ("x.dim()", None),
    ("x.mm(w)", "(?, ?)"),
    ("x.bmm(w)", "(?, ?, ?)"),
    ("x.masked_fill(m, 0.0)", None),
    ("x.expand_as(w)", None),
    ("x.numel()", None),
    ("torch.relu(x)", None),
    ("torch.matmul(x, w)", "(?, ...)"),
    ("torch.bmm(w, x)", "(?, ?, ?)"),
    ("F.softmax(x, dim=2)", "(?, ?, ?, ...)"),
    ("F.cross_entropy(x, y)", "(?, ...)"),
    ("torch.cat([x, w], dim=1)", None),
])
def test_a_tensor_only_use_makes_the_parameter_a_tensor(use, shape):
    assert seen(f"def f(x, w, y, m, b, t, h, d):\n    reveal(x)\n    return {use}\n") == [(TENSOR, shape)]


@pytest.mark.parametrize("use", [
    "x.transpose(1, 0)",  # numpy's 2-D transpose spells the same
    "x.transpose(-1, -2)",
    "x.reshape(2, 3)",
    "x.sum(1)",
    "x.T",
    "x[0]",
    "x.view(np.float32)",
    "x.split(',')",
    "x.to(device)",
    "x.cuda()",
    "x.float()",
    "x.backward(g)",
    "x.size()",
    "len(x)",
    "x.clone()",
    "x.detach()",
    "x.scatter(g, device)",
    "x.expand()",
])
def test_a_use_numpy_modules_or_strings_share_is_no_evidence(use):
    assert seen(f"def f(x, g, device):\n    reveal(x)\n    return {use}\n") == [(None, None)]


@pytest.mark.parametrize("guard", [
    "y = np.asarray(x)",
    "y = x.astype(np.float32)",
    "if x is None:\n        return None",
    "if isinstance(x, torch.Tensor):\n        pass",
    "y = torch.from_numpy(x)",
    "y = x(3)",
])
def test_a_use_that_a_non_tensor_explains_cancels_the_evidence(guard):
    assert seen(f"def f(x):\n    {guard}\n    reveal(x)\n    return x.permute(0, 2, 1)\n") == [(None, None)]


def test_a_parameter_with_a_none_default_gets_no_evidence():
    assert seen("def f(x, mask=None):\n    reveal(mask)\n    return x.masked_fill(mask, 0).permute(1, 0)\n") == [
        (None, None)]


def test_rank_bounds_combine_and_conflicts_drop_the_rank():
    assert seen("def f(x):\n    reveal(x)\n    a = x[:, :, 0]\n    return x.contiguous()\n") == [
        (TENSOR, "(?, ?, ?, ...)")]
    assert seen("def f(x):\n    reveal(x)\n    b, t, c = x.size()\n    return x.contiguous()\n") == [
        (TENSOR, "(?, ?, ?)")]
    assert seen("def f(x):\n    reveal(x)\n    a = x.permute(1, 0)\n    return x.permute(0, 2, 1)\n") == [
        (TENSOR, None)]
    # the exact rank is at least every lower bound, or the evidence conflicts
    assert param_evidence("def f(x):\n    x.permute(1, 0)\n    x.size(3)\n", "x").shape() is None
    assert str(param_evidence("def f(x):\n    x.transpose(1, 2)\n    x.size(-4)\n", "x").shape()) == "(..., ?, ?, ?, ?)"


def test_evidence_stops_at_the_next_binding_of_the_name():
    assert seen("def f(x):\n    reveal(x)\n    x = x.cpu()\n    return x.permute(0, 2, 1)\n") == [(None, None)]
    assert seen("def f(x):\n    reveal(x)\n    x = x.numpy()\n    return x.permute(0, 2, 1)\n") == [(TENSOR, None)]
    # unsqueeze_ is a tensor's, but changes the rank: the permute says nothing of the parameter
    assert seen("def f(x):\n    reveal(x)\n    x.unsqueeze_(0)\n    return x.permute(0, 2, 1)\n") == [(TENSOR, None)]
    # a numpy value bound to the name is never refined
    assert seen("def f(a):\n    x = np.ones(3)\n    reveal(x)\n    return x.permute(0, 2, 1)\n") == [(None, None)]


def test_loop_variables_and_results_of_unknown_calls_get_evidence():
    code = """
    def run(model, loader):
        for images, labels in loader:
            reveal(images)
            out = model(images.permute(0, 3, 1, 2))
            reveal(out)
            loss = F.cross_entropy(out, labels)
            reveal(labels)
    """
    assert seen(code) == [(TENSOR, "(?, ?, ?, ?)"), (TENSOR, "(?, ...)"), (TENSOR, None)]


def test_module_level_code_gets_evidence():
    code = "out = net(batch)\nreveal(out)\nloss = F.nll_loss(out, labels)\n"
    assert seen(code) == [(TENSOR, "(?, ...)")]


# --------------------------------------------------------------------------- results by torch's rules


def test_functional_results_are_tensors_of_the_documented_rank():
    code = """
    def f(x, w, idx):
        x.permute(0, 1, 2, 3)
        reveal(F.relu(x))
        reveal(F.linear(x, w))
        reveal(F.conv2d(x, w))
        reveal(F.max_pool2d(x, 2))
        reveal(F.mse_loss(x, w))
        reveal(F.cross_entropy(x, w, reduction="none"))
        reveal(F.cross_entropy(x, w, reduction="sum"))
        reveal(F.embedding(idx, w))
        reveal(F.max_pool2d(x, 2, return_indices=True))
        reveal(torch.exp(x))
        return idx.contiguous()
    """
    assert seen(code) == [
        (TENSOR, "(?, ?, ?, ?)"), (TENSOR, "(?, ?, ?, ?)"), (TENSOR, "(?, ?, ?, ?)"), (TENSOR, "(?, ?, ?, ?)"),
        (TENSOR, "()"), (TENSOR, None), (TENSOR, "()"), (TENSOR, None), (None, None), (TENSOR, "(?, ?, ?, ?)"),
    ]


def test_layers_give_tensors_of_the_documented_rank():
    code = """
    lin = nn.Linear(8, 4)
    conv = nn.Conv2d(3, 8, 3)
    emb = nn.Embedding(10, 4)
    def f(x, img, idx):
        reveal(lin(x))
        reveal(conv(img))
        reveal(emb(idx))
        return x.permute(0, 1, 2), img.permute(0, 1, 2, 3), idx.permute(0, 1)
    """
    assert seen(code) == [(TENSOR, "(?, ?, 4)"), (TENSOR, "(?, ?, ?, ?)"), (TENSOR, "(?, ?, ?)")]


def test_matmul_rank_rule_with_partly_known_ranks():
    code = """
    def f(a, b, v):
        reveal(a @ b)
        c = a.transpose(1, 2) @ b.transpose(1, 2)
        reveal(torch.randn(2, 3, 4) @ torch.randn(4))
        reveal(torch.randn(4) @ torch.randn(2, 4, 5))
        reveal(a @ v)
    """
    assert seen(code) == [(TENSOR, "(..., ?, ?, ?)"), (TENSOR, "(2, 3)"), (TENSOR, "(2, 5)"), (TENSOR, None)]


def test_math_functions_give_python_numbers():
    assert [f.kind for f in facts("import math\nreveal(math.sqrt(2))\n")] == [FLOAT]


def test_comparison_of_a_rank_bounded_tensor_keeps_the_bound():
    assert seen("def f(x):\n    reveal(x > 0)\n    return x.transpose(1, 2)\n") == [(TENSOR, "(..., ?, ?, ?)")]


def test_unpacked_pieces_of_a_split_tensor_keep_its_rank():
    code = """
    lin = nn.Linear(8, 24)
    def f(x):
        x.permute(0, 1, 2)
        q, k, v = lin(x).split(8, dim=2)
        reveal(q)
        a, b = torch.randn(4, 6).chunk(2, 1)
        reveal(a)
        r, s = torch.randn(2, 5).unbind(0)
        reveal(r)
        first, *rest = torch.randn(4, 6).split(2)
        reveal(first)
    """
    assert seen(code) == [(TENSOR, "(?, ?, ?)"), (TENSOR, "(4, ?)"), (TENSOR, "(5,)"), (None, None)]
    # a string's split is no tensor
    assert seen("def f(line):\n    a, b = line.split(',')\n    reveal(a)\n") == [(None, None)]


def test_pools_and_interpolate_keep_the_batch_and_channel_dims():
    code = """
    def f(table, dim, n, s):
        pos = F.interpolate(table.reshape(1, dim, s, s), size=(n, n), mode="bicubic")
        reveal(pos)
        reveal(F.max_pool2d(pos, 2))
        reveal(F.conv2d(pos, table))
        reveal(F.max_pool2d(pos[0], 2))
        reveal(F.layer_norm(pos, (n,)))
    """
    assert seen(code) == [(TENSOR, "(1, dim, ?, ?)"), (TENSOR, "(1, dim, ?, ?)"), (TENSOR, "(1, ?, ?, ?)"),
                          (TENSOR, "(dim, ?, ?)"), (TENSOR, "(1, dim, ?, ?)")]


def test_interpolate_of_a_channels_last_input_then_permute_back_is_no_sc101():
    # the vision transformers' interpolate_pos_encoding: interpolate keeps the channels-last
    # layout of its input, so the permute back is contiguous and the view merges nothing apart
    code = """
    def f(table, dim, n, s):
        pos = table.reshape(1, s, s, dim).permute(0, 3, 1, 2)
        pos = F.interpolate(pos, size=(n, n), mode="bicubic")
        return pos.permute(0, 2, 3, 1).view(1, -1, dim)
    """
    assert seen(code.replace("return", "reveal(pos)\n        return")) == [(TENSOR, "(1, dim, ?, ?)")]
    assert lint(HEAD + textwrap.dedent(code), "SC101") == []


def test_a_layer_of_a_permuted_input_is_no_sc101_after_the_permute_back():
    # interpolate keeps a channels-last input channels-last: the permute back is contiguous
    # (video_llama_3's pixel_unshuffle); the shapes are known, the order is the layout's business
    code = """
    bn = nn.BatchNorm2d(4)
    def f(x, t, h, w, c):
        y = x.reshape(t, h, w, c).permute(0, 3, 1, 2)
        z = F.interpolate(y, size=(2, 2), mode="bilinear")
        reveal(z)
        reveal(bn(y))
        return z.permute(0, 2, 3, 1).view(-1, c)
    """
    assert seen(code) == [(TENSOR, "(t, c, ?, ?)"), (TENSOR, "(t, c, h, w)")]
    assert lint(HEAD + textwrap.dedent(code).replace("reveal(", "print("), "SC101") == []
