"""The facts reach the rules: what they flag torch rejects, and correct programs (run with
torch where they run on the CPU) stay unflagged by every rule."""

from __future__ import annotations

import pytest

from semantic_probe import HEAD

import shapecheck.rules  # noqa: F401  (registers the rules)
from shapecheck.engine.runner import lint_text
from shapecheck.rules.catalog import all_rules


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
