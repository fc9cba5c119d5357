"""Facts added at the request of the SC3xx/SC4xx/SC6xx rules: the grad of module outputs and of
layer parameters, default-device changes and modules that move themselves, and calls that return
Python bools. Each fact is checked exactly; the correct programs at the end must stay unflagged by
every rule, and those that run on the CPU are run with torch to prove that they are correct."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

import shapecheck.rules  # noqa: F401  (registers the rules)
from shapecheck.semantic.facts import BOOL, CPU, CUDA, LEAF_REQUIRES_GRAD, MODULE, NO_GRAD, NON_LEAF, TENSOR, Fact
from shapecheck.semantic.interpreter import analyze
from shapecheck.engine.runner import lint_text
from shapecheck.rules.base import all_rules

HEAD = "import torch\nimport torch.nn as nn\n"


class _Probe:
    """Records the fact of the argument of every ``reveal(expr)`` call."""

    code = "PROBE"

    def __init__(self) -> None:
        self.seen: list[Fact] = []

    def visit_Call(self, node, ctx) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "reveal":
            self.seen.append(ctx.fact(node.args[0].value))


def facts(code: str, text: bool = True) -> list[Fact]:
    """The facts revealed in ``code`` (with the imports of HEAD), with and without the text."""
    source = HEAD + textwrap.dedent(code)
    module = cst.parse_module(source)
    probe = _Probe()
    ctx = analyze(module, [probe], source if text else None)
    assert ctx.crashes == [] and ctx.infer_errors == []
    return probe.seen


def one(code: str) -> Fact:
    """The one revealed fact; the same whether or not ``analyze`` is given the text."""
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


# --- 1. module outputs and layer parameters -----------------------------------------------------

LOCAL_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = nn.Parameter(torch.ones(2))
    def forward(self, x):
        reveal(self.fc(x))
        fc = self.fc
        reveal(fc)
        reveal(self.fc.weight)
        reveal(self.scale)
        return self.fc(x) * self.scale
"""


@pytest.mark.parametrize(
    "code, expected",
    [
        ("reveal(nn.Linear(3, 2)(torch.randn(4, 3)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Linear(3, 2)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Conv2d(3, 8, 3)\nreveal(m.forward(torch.randn(1, 3, 8, 8)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Embedding(10, 4)\nreveal(m(torch.tensor([1, 2])))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Linear(3, 2)\nwith torch.no_grad():\n    reveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2)\n@torch.inference_mode()\ndef f():\n    reveal(m(torch.randn(4, 3)))",
         (TENSOR, None, NO_GRAD)),
        ("m = nn.Linear(3, 2)\nm.requires_grad_(False)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2).requires_grad_(False)\nw = torch.randn(4, 3, requires_grad=True)\nreveal(m(w))",
         (TENSOR, CPU, NON_LEAF)),
        ("m = nn.BatchNorm1d(3, affine=False)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.LayerNorm(3, elementwise_affine=False)\nreveal(m(torch.randn(4, 3)))", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Sequential(nn.Linear(3, 4), nn.ReLU())\nreveal(m(torch.randn(2, 3)))", (TENSOR, CPU, NON_LEAF)),
        ("m = nn.Sequential(nn.ReLU(), nn.Dropout())\nreveal(m(torch.randn(2, 3)))", (TENSOR, CPU, NO_GRAD)),
        # modules without parameters: the output follows the input
        ("reveal(nn.ReLU()(torch.randn(3)))", (TENSOR, CPU, NO_GRAD)),
        ("w = torch.randn(3, requires_grad=True)\nreveal(nn.ReLU()(w))", (TENSOR, CPU, NON_LEAF)),
        ("reveal(nn.GELU()(torch.randn(3).cuda()))", (TENSOR, CUDA, NO_GRAD)),
        ("loss = nn.MSELoss()\nreveal(loss(torch.randn(3), torch.randn(3)))", (TENSOR, CPU, NO_GRAD)),
        ("loss = nn.CrossEntropyLoss(weight=torch.ones(3))\nreveal(loss(torch.randn(2, 3), torch.tensor([0, 1])))",
         (TENSOR, None, None)),
        ("def f(m, x):\n    reveal(m(x))", (None, None, None)),
        # parameters of torch.nn layers
        ("m = nn.Linear(3, 2)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Linear(3, 2)\nreveal(m.bias)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Linear(3, 2, bias=False)\nreveal(m.bias)", (None, None, None)),
        ("m = nn.Linear(3, 2, False)\nreveal(m.bias)", (None, None, None)),
        ("m = nn.Linear(3, 2, bias=flag)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Conv1d(3, 4, 1)\nm.cuda()\nreveal(m.weight)", (TENSOR, CUDA, LEAF_REQUIRES_GRAD)),
        ("m = nn.Embedding(10, 4)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.Embedding(10, 4)\nreveal(m.bias)", (None, None, None)),
        ("m = nn.LayerNorm(4)\nreveal(m.bias)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.LayerNorm(4, elementwise_affine=False)\nreveal(m.weight)", (None, None, None)),
        ("m = nn.BatchNorm2d(4)\nreveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.BatchNorm2d(4, affine=False)\nreveal(m.weight)", (None, None, None)),
        ("m = nn.LSTM(4, 8)\nreveal(m.weight_ih_l0)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
        ("m = nn.LSTM(4, 8)\nreveal(m.weight)", (None, None, None)),
        ("m = nn.MSELoss()\nreveal(m.weight)", (None, None, None)),
        ("m = nn.Linear(3, 2)\nm.requires_grad_(False)\nreveal(m.weight)", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2)\nm.weight.requires_grad = False\nreveal(m.weight)", (TENSOR, CPU, NO_GRAD)),
        ("m = nn.Linear(3, 2)\nwith torch.no_grad():\n    reveal(m.weight)", (TENSOR, CPU, LEAF_REQUIRES_GRAD)),
    ],
)
def test_module_output_and_parameter_facts(code, expected):
    assert summary(one(code)) == expected


def test_local_module_instances_and_their_parameters():
    # reveal() is an unknown function that could change a module passed to it: `net.fc` is
    # revealed through another name
    code = LOCAL_NET + "net = Net()\nreveal(net(torch.randn(4, 3)))\nreveal(net.scale)\nfc = net.fc\n" \
        "reveal(fc)\nreveal(net.fc.weight)\nnet.cuda()\nreveal(net.scale)\nreveal(net.fc.bias)\n"
    seen = [summary(f) for f in facts(code)]
    assert seen == [
        (TENSOR, None, NON_LEAF),  # self.fc(x) in forward: x of unknown device
        (MODULE, None, True),  # self.fc: the instance may have been moved
        (TENSOR, None, LEAF_REQUIRES_GRAD),
        (TENSOR, None, LEAF_REQUIRES_GRAD),
        (TENSOR, CPU, NON_LEAF),  # net(x): the module and its input are on the CPU
        (TENSOR, CPU, LEAF_REQUIRES_GRAD),
        (MODULE, CPU, True),
        (TENSOR, CPU, LEAF_REQUIRES_GRAD),
        (TENSOR, CUDA, LEAF_REQUIRES_GRAD),
        (TENSOR, CUDA, LEAF_REQUIRES_GRAD),
    ]


def test_local_module_without_known_parameters_has_unknown_grad_and_no_device():
    code = """
    class Act(nn.Module):
        def forward(self, x):
            return torch.relu(x)
    class Wrap(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
    reveal(Act())
    reveal(Act()(torch.randn(3)))
    reveal(Act().cuda())
    reveal(Wrap(nn.Linear(2, 2)))
    """
    assert [summary(f) for f in facts(code)] == [
        (MODULE, None, None), (TENSOR, None, None), (MODULE, None, None), (MODULE, None, None),
    ]


def test_freezing_anywhere_in_the_file_makes_module_grads_unknown():
    code = """
    def freeze(m):
        for p in m.parameters():
            p.requires_grad = False
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(2))
    m = nn.Linear(3, 2)
    net = Net()
    reveal(m(torch.randn(4, 3)))
    reveal(m.weight)
    reveal(net(torch.randn(2)))
    reveal(net.w)
    with torch.no_grad():
        reveal(m(torch.randn(4, 3)))
    """
    assert [summary(f) for f in facts(code)] == [
        (TENSOR, CPU, None), (TENSOR, CPU, None), (TENSOR, CPU, None), (TENSOR, CPU, None),
        (TENSOR, CPU, NO_GRAD),
    ]


def test_buffers_and_options_are_not_modules():
    seen = facts("reveal(nn.Buffer(torch.ones(3)))\nreveal(nn.Buffer(x))\nreveal(nn.LinearCrossEntropyOptions())\n")
    assert [summary(f) for f in seen] == [(TENSOR, CPU, NO_GRAD), (TENSOR, None, None), (None, None, None)]


@pytest.mark.parametrize(
    "expr, trainable",
    [("nn.Linear(3, 2)", True), ("nn.ReLU()", False), ("nn.MSELoss()", False),
     ("nn.CrossEntropyLoss(weight=w)", None), ("nn.BatchNorm1d(3, affine=False)", False),
     ("nn.Linear(3, 2).requires_grad_(False)", False), ("nn.Sequential(nn.ReLU(), nn.Linear(2, 2))", True),
     ("nn.Sequential(nn.ReLU(), make())", None), ("nn.ModuleList([nn.Linear(2, 2)])", None),
     ("nn.Embedding(4, 2, _freeze=True)", None)],
)
def test_module_trainable(expr, trainable):
    f = one(f"reveal({expr})")
    assert (f.kind, f.trainable, f.grad) == (MODULE, trainable, None)


def test_a_module_passed_to_a_function_is_forgotten():
    code = """
    from torch.nn.utils import weight_norm
    import torch.nn.utils.prune as prune
    def to_gpu(module):
        module.cuda()
    a = nn.Linear(3, 2)
    weight_norm(a)
    b = nn.Linear(3, 2)
    prune.l1_unstructured(b, "weight", amount=0.5)
    c = nn.Linear(3, 2)
    to_gpu(c)
    d = nn.Linear(3, 2)
    print(d, isinstance(d, nn.Module))
    seq = nn.Sequential(d)
    d2 = d
    e = nn.Linear(3, 2)
    accelerator.prepare(e)
    reveal(a.weight)
    reveal(b.weight)
    reveal(c)
    reveal(c(torch.randn(2, 3)))
    reveal(d2)
    reveal(e)
    """
    seen = facts(code)
    assert [summary(f) for f in seen] == [
        (None, None, None), (None, None, None), (MODULE, None, None), (TENSOR, None, None),
        (MODULE, CPU, True), (MODULE, None, None),
    ]
    assert seen[2].features == (3, 2) and seen[2].params is None


def test_a_module_level_module_seen_from_a_function_has_no_device():
    code = """
    model = nn.Linear(3, 2)
    def run(x):
        seen = model
        reveal(seen)
        reveal(model(x))
    model.cuda()
    """
    assert [summary(f) for f in facts(code)] == [(MODULE, None, True), (TENSOR, None, NON_LEAF)]


def test_a_plain_set_grad_enabled_false_makes_grad_mode_unknown():
    code = """
    torch.set_grad_enabled(False)
    m = nn.Linear(3, 2)
    w = torch.randn(3, requires_grad=True)
    reveal(m(torch.randn(2, 3)))
    reveal(w * 2)
    def f():
        reveal(m(torch.randn(2, 3)))
    with torch.enable_grad():
        reveal(w * 2)
    """
    assert [f.grad for f in facts(code)] == [None, None, None, NON_LEAF]


# --- 2. default device, modules that move themselves ------------------------------------------

@pytest.mark.parametrize(
    "code, expected",
    [
        ("reveal(torch.zeros(3))", CPU),
        ("with torch.device('cuda'):\n    reveal(torch.zeros(3))", None),
        ("with torch.device('cuda'):\n    pass\nreveal(torch.zeros(3))", None),
        ("def make():\n    return torch.zeros(3)\nwith torch.device('cuda:0'):\n    x = make()\nreveal(torch.ones(2))", None),
        ("reveal(torch.zeros(3))\ndef setup():\n    torch.set_default_device('cuda')", None),
        ("torch.set_default_device('cuda')\nreveal(nn.Linear(3, 2))", None),
        ("torch.set_default_tensor_type(torch.cuda.FloatTensor)\nreveal(torch.arange(3))", None),
        ("torch.set_default_device('cuda')\nreveal(torch.zeros(3).cpu())", CPU),
        ("torch.set_default_device('cuda')\nreveal(torch.zeros(3, device='cpu'))", CPU),
        ("reveal(nn.Linear(3, 2))", CPU),
        ("reveal(nn.Linear(3, 2, device='cuda'))", CUDA),
        ("reveal(nn.ReLU())", None),
        ("reveal(nn.ReLU().cuda())", None),
        ("m = nn.Dropout()\nm.cuda()\nreveal(m)", None),
    ],
)
def test_default_device_facts(code, expected):
    assert one(code).device == expected


MOVING = """
class Moves(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.cuda()
class MovesLater(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        if device is not None:
            self.to(device)
class Stays(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
class Helper(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))
    def to_gpu(self):
        self.cuda()
        return self
class Child(Moves):
    pass
"""


@pytest.mark.parametrize(
    "expr, expected",
    [("Moves()", None), ("MovesLater(None)", None), ("Stays()", CPU), ("Helper()", None),
     ("Child()", None), ("Stays().cuda()", CUDA)],
)
def test_local_modules_that_move_themselves_are_not_on_the_cpu(expr, expected):
    f = one(MOVING + f"reveal({expr})\n")
    assert (f.kind, f.device) == (MODULE, expected)


# --- 3. calls that return Python bools --------------------------------------------------------

@pytest.mark.parametrize(
    "expr",
    ["torch.equal(x, y)", "torch.allclose(x, y)", "torch.is_tensor(x)", "x.is_contiguous()",
     "x.is_floating_point()", "torch.is_nonzero(x[0, 0])", "x.equal(y)", "x.allclose(y, atol=1e-6)",
     "torch.is_floating_point(x)", "torch.is_complex(x)", "x.is_same_size(y)", "torch.cuda.is_available()",
     "torch.is_grad_enabled()", "x.is_sparse", "x.is_cuda", "torch.equal(a, b)"],
)
def test_python_bool_results(expr):
    f = one(f"x = torch.randn(2, 3)\ny = torch.randn(2, 3)\nreveal({expr})")
    assert (f.kind, f.shape, f.grad) == (BOOL, None, None)


def test_elementwise_comparisons_stay_tensors_and_unknown_receivers_stay_unknown():
    seen = facts("x = torch.randn(2, 3)\nreveal(torch.eq(x, x))\nreveal(x.ne(x))\nreveal(a.is_contiguous())\n")
    assert [(f.kind, f.dtype_kind) for f in seen] == [(TENSOR, "bool"), (TENSOR, "bool"), (None, None)]
    assert [str(f.shape.dims) for f in seen[:2]] == ["(2, 3)", "(2, 3)"]


def test_python_bool_tables_match_torch():
    torch = pytest.importorskip("torch")
    from shapecheck.semantic import evaluator as infer_eval

    x = torch.randn(2, 3)
    for name in infer_eval.PYTHON_BOOL_RESULTS:
        fn = getattr(torch, name, None)
        assert fn is not None or hasattr(torch.Tensor, name), name
    for name in infer_eval._BOOL_ATTRS:
        assert isinstance(getattr(x, name), bool), name
    for dotted in infer_eval._TORCH_BOOL_FUNCTIONS:
        obj = torch
        for part in dotted.split("."):
            obj = getattr(obj, part)
        assert isinstance(obj(), bool), dotted


_LAYER_ARGS = {"Bilinear": (2, 2, 2), "GroupNorm": (1, 2), "PReLU": (), "LazyLinear": (2,),
               "Unflatten": (1, (2, 1))}


def _build(cls, name):
    """An instance of a torch.nn class with small arguments, torch's warnings silenced."""
    import warnings

    if name in _LAYER_ARGS:
        tries = [_LAYER_ARGS[name]]
    elif "Conv" in name:
        tries = [(2, 2, 1), (2, 1)]
    else:
        tries = [(), (2,), (2, 2), (2, 2, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for given in tries:
            try:
                return cls(*given)
            except (TypeError, ValueError, AssertionError):
                continue
    raise AssertionError(f"cannot build nn.{name}")


def test_nn_tables_match_torch():
    torch = pytest.importorskip("torch")
    from shapecheck.semantic import evaluator as infer_eval

    for name, (names, _switch, _position, _default) in infer_eval._NN_LAYERS.items():
        module = _build(getattr(torch.nn, name), name)
        direct = {n for n, p in module.named_parameters(recurse=False) if p.requires_grad}
        assert set(names) <= direct, name
        assert any(p.requires_grad for p in module.parameters()), name
    for name in infer_eval._NN_STATELESS | infer_eval._NN_LOSSES:
        module = _build(getattr(torch.nn, name), name)
        assert not list(module.parameters()) and not list(module.buffers()), name


# --- the facts reach the rules ----------------------------------------------------------------

@pytest.mark.parametrize(
    "code, line, code_expected",
    [
        ("m = nn.Linear(3, 2)\na = m(torch.randn(4, 3)).numpy()\n", 4, "SC309"),
        ("m = nn.Linear(3, 2)\na = m.weight.numpy()\n", 4, "SC309"),
        ("m = nn.Linear(3, 2)\nm.weight.add_(1)\n", 4, "SC301"),
        ("m = nn.Linear(3, 2)\nm.bias[0] = 0.0\n", 4, "SC301"),
    ],
)
def test_new_facts_reach_the_rules_and_torch_agrees(code, line, code_expected):
    source = HEAD + code
    found = [(d.code, d.line) for d in lint_text(source, all_rules())]
    assert found == [(code_expected, line)]
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        exec(compile(source, "<case>", "exec"), {"torch": torch})


CORRECT_ON_CPU = {
    "output_under_no_grad": """
m = nn.Linear(3, 2)
with torch.no_grad():
    out = m(torch.randn(4, 3))
a = out.numpy()
w = m.weight.detach().numpy()
""",
    "frozen_module": """
m = nn.Linear(3, 2)
m.requires_grad_(False)
a = m(torch.randn(4, 3)).numpy()
m.weight.add_(1)
""",
    "frozen_in_another_function": """
def freeze(module):
    for p in module.parameters():
        p.requires_grad = False
m = nn.Linear(3, 2)
freeze(m)
a = m(torch.randn(4, 3)).numpy()
""",
    "modules_without_parameters": """
act = nn.ReLU()
a = act(torch.randn(3)).numpy()
loss_fn = nn.MSELoss()
v = loss_fn(torch.randn(3), torch.randn(3)).numpy()
b = nn.Sequential(nn.ReLU(), nn.Dropout(0.0))(torch.randn(2)).numpy()
""",
    "no_bias_no_affine": """
m = nn.Linear(3, 2, bias=False)
if m.bias is not None:
    m.bias.zero_()
norm = nn.LayerNorm(4, elementwise_affine=False)
if norm.weight is not None:
    norm.weight.fill_(1.0)
""",
    "parameter_update_under_no_grad": """
m = nn.Linear(3, 2)
with torch.no_grad():
    m.weight.mul_(0.5)
    m.bias.zero_()
    m.weight[0] = 1.0
""",
    "weight_norm_and_pruning": """
from torch.nn.utils.parametrizations import weight_norm
import torch.nn.utils.prune as prune
a = weight_norm(nn.Linear(3, 2))
b = nn.Linear(3, 2)
weight_norm(b)
b.weight.add_(1.0)
c = nn.Linear(3, 2)
prune.l1_unstructured(c, "weight", amount=0.5)
c.weight.mul_(2.0)
""",
    "grad_switched_off_for_the_script": """
torch.set_grad_enabled(False)
m = nn.Linear(3, 2)
a = m(torch.randn(4, 3)).numpy()
w = torch.randn(3, requires_grad=True)
b = (w * 2).numpy()
torch.set_grad_enabled(True)
""",
    "replacing_a_layer_of_a_sequential": """
class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.logit_fc = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    def replace_last(self, layer):
        self.logit_fc[-1] = layer
head = Head()
head.replace_last(nn.Linear(4, 5))
head.logit_fc[0] = nn.Linear(3, 4)
net = nn.Sequential(nn.Linear(2, 2))
net[0] = nn.Identity()
""",
    "pretrained_embedding_is_frozen": """
emb = nn.Embedding.from_pretrained(torch.randn(5, 3))
a = emb(torch.tensor([1, 2])).numpy()
""",
    "python_bools": """
x = torch.randn(2, 3)
y = x.clone()
if torch.equal(x, y) and x.is_contiguous():
    pass
assert torch.allclose(x, y) and x.equal(y)
if not x.is_floating_point() or not torch.is_tensor(x):
    raise SystemExit(1)
ok = torch.is_nonzero(torch.tensor([1.0])) and not x.is_sparse
""",
    "inference_helper": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x)
    @torch.no_grad()
    def predict(self, x):
        return self.fc(x).numpy()
net = Net()
p = net.predict(torch.randn(4, 3))
with torch.inference_mode():
    q = net(torch.randn(4, 3)).argmax(-1).numpy()
""",
}

CORRECT_NEEDS_CUDA = {
    "parameter_free_module_on_cuda_input": """
act = nn.ReLU()
y = act(torch.randn(4, 3).cuda())
z = nn.Dropout().cuda()(torch.randn(4, 3))
""",
    "default_device_in_a_function": """
def setup():
    torch.set_default_device("cuda")
setup()
a = torch.randn(3, 3)
b = torch.randn(3, 3).cuda()
c = a + b
m = nn.Linear(3, 3)
d = m(b)
""",
    "module_moved_by_its_own_method": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def to_gpu(self):
        self.cuda()
        return self
    def forward(self, x):
        return self.fc(x)
net = Net()
net.to_gpu()
y = net(torch.randn(4, 3).cuda())
""",
    "module_level_model_moved_after_the_function": """
model = nn.Linear(3, 2)
def run(x):
    return model(x.cuda())
model.cuda()
y = run(torch.randn(4, 3))
""",
    "factory_in_forward_under_default_device": """
torch.set_default_device("cuda")
class Net(nn.Module):
    def forward(self, x):
        return x + torch.zeros(x.shape[-1])
""",
}


@pytest.mark.parametrize("name", sorted(CORRECT_ON_CPU) + sorted(CORRECT_NEEDS_CUDA))
def test_correct_programs_stay_unflagged_by_every_rule(name):
    source = HEAD + (CORRECT_ON_CPU.get(name) or CORRECT_NEEDS_CUDA[name])
    assert [f"{d.code}:{d.line} {d.message}" for d in lint_text(source, all_rules())] == []


@pytest.mark.parametrize("name", sorted(CORRECT_ON_CPU))
def test_correct_cpu_programs_run(name):
    torch = pytest.importorskip("torch")
    try:
        exec(compile(HEAD + CORRECT_ON_CPU[name], name, "exec"), {"__name__": name})
        restored = torch.is_grad_enabled()
    finally:  # a program that failed half-way must not leave grad mode off for later tests
        torch.set_grad_enabled(True)
    assert restored
