"""Correct programs that look like autograd, device or pitfall bugs: every SC3xx, SC4xx and SC6xx
rule must stay silent on them (SC603, opt-in, is run too where the program has no loop)."""

from __future__ import annotations

import pytest
from rule_harness import family_rules
from rule_harness import findings as engine_findings

RULES = family_rules("SC3", "SC4", "SC6")


def findings(source: str, include_opt_in: bool = False) -> list[str]:
    """``"SC301 4 message"`` for every diagnostic of the SC3/4/6 rules on ``source``, through the
    engine (a crashed rule fails the test)."""
    rules = [r for r in RULES if include_opt_in or r.default_enabled]
    return [f"{code} {line} {message}" for code, line, message in engine_findings(source, rules)]


TRICKY = {
    "inplace_under_no_grad": """
import torch
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    w.add_(1)
    w *= 0.5
    w[0] = 0.0
""",
    "inplace_under_inference_mode": """
import torch
w = torch.randn(3, requires_grad=True)
with torch.inference_mode():
    w.zero_()
""",
    "inplace_under_set_grad_enabled_false": """
import torch
w = torch.randn(3, requires_grad=True)
with torch.set_grad_enabled(False):
    w.clamp_(-1, 1)
""",
    "inplace_in_no_grad_decorated_function": """
import torch

@torch.no_grad()
def sgd(params, lr=0.1):
    for p in params:
        p.sub_(lr * p.grad)
        p.grad.zero_()

w = torch.randn(3, requires_grad=True)
(w * w).sum().backward()
sgd([w])
""",
    "inplace_on_non_leaf": """
import torch
x = torch.randn(3, requires_grad=True)
h = x * 2
h.add_(1)
h.relu_()
h.sum().backward()
""",
    "nn_init_on_parameters": """
import torch
import torch.nn as nn
layer = nn.Linear(4, 4)
nn.init.xavier_uniform_(layer.weight)
nn.init.zeros_(layer.bias)
w = nn.Parameter(torch.empty(3, 3))
torch.nn.init.kaiming_normal_(w)
""",
    "module_cuda_as_statement": """
import torch
import torch.nn as nn
model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
if torch.cuda.is_available():
    model.cuda()
model.to("cpu")
model.float()
model.half()
""",
    "self_to_in_module_method": """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def move(self, device):
        self.to(device)
        self.fc.cuda()
""",
    "unknown_receiver_to_statement": """
def prepare(thing, device):
    thing.to(device)
    thing.cuda()
    thing.float()
""",
    "device_of_input": """
import torch
def add_noise(x):
    noise = torch.randn(x.shape, device=x.device)
    return x + noise
""",
    "zero_dim_cpu_with_cuda": """
import torch
x = torch.randn(3).cuda()
scale = torch.tensor(2.0)
total = torch.randn(4).sum()
y = x * scale + total
z = x / torch.tensor(3.0)
""",
    "python_scalars_with_cuda": """
import torch
x = torch.randn(3).cuda()
y = x * 2 + 1.5
""",
    "gradient_accumulation": """
import torch
import torch.nn as nn
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(8)]
for i, (x, y) in enumerate(data):
    loss = ((model(x) - y) ** 2).mean() / 4
    loss.backward()
    if (i + 1) % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
    "zero_grad_set_to_none_on_model": """
import torch
import torch.nn as nn
model = nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    model.zero_grad(set_to_none=True)
    model(torch.randn(2, 3)).sum().backward()
    opt.step()
""",
    "grads_cleared_by_hand": """
import torch
w = torch.randn(3, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for _ in range(3):
    (w * w).sum().backward()
    optimizer.step()
    w.grad = None
""",
    "grads_cleared_through_data_and_del": """
import torch
def fit(model, batches, loss_fn, optimizer):
    for x, y in batches:
        loss_fn(model(x), y).backward()
        optimizer.step()
        for p in model.parameters():
            if p.grad is not None:
                p.grad.data.zero_()
    for x, y in batches:
        loss_fn(model(x), y).backward()
        optimizer.step()
        for p in model.parameters():
            del p.grad
""",
    "data_in_type_checks_and_storage_swaps": """
import torch
def repack(module, param, fn):
    module.weight.data, meta = fn(weight=module.weight.data)
    if isinstance(param.weight.data, torch.Tensor):
        pass
    return meta
""",
    "straight_through_estimator": """
import torch
import torch.nn.functional as F
x = torch.randn(8, requires_grad=True)
target = torch.randn(8)
q = x + (torch.round(x) - x).detach()
loss = F.mse_loss(q, target)
loss.backward()
top = torch.topk(x, 3)
best = x[top.indices]
""",
    "module_that_moves_itself_or_is_built_on_cuda": """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.cuda()
    def forward(self, x):
        return self.fc(x)
net = Net()
y = net(torch.randn(4, 3).cuda())
lin = nn.Linear(3, 2, device="cuda")
out = lin(torch.randn(4, 3, device="cuda"))
""",
    "default_device_changed": """
import torch
with torch.device("cuda"):
    a = torch.randn(3)
b = torch.randn(3).cuda()
c = a + b
def f():
    torch.set_default_device("cuda")
    x = torch.randn(3)
    y = torch.randn(3).cuda()
    return x + y
""",
    "python_bool_checks_on_tensors": """
import torch
x = torch.randn(2, 3)
y = torch.randn(2, 3)
if x == None or x.shape == y.shape:
    pass
ok = torch.equal(x, y) and torch.allclose(x, y) and x.is_contiguous()
if not torch.is_tensor(x) or x.dtype == torch.float32:
    pass
assert len(x) == 2 and x.shape[0] == 2
""",
    "scheduler_step_is_not_optimizer": """
import torch
def run(model, batches, loss_fn, optimizer, scheduler):
    for x, y in batches:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
    for epoch in range(3):
        scheduler.step()
""",
    "retain_graph_then_backward": """
import torch
x = torch.randn(3, requires_grad=True)
y = (x * x).sum()
y.backward(retain_graph=True)
y.backward()
""",
    "recomputed_loss_in_loop": """
import torch
x = torch.randn(3, requires_grad=True)
for _ in range(3):
    loss = (x * x).sum()
    loss.backward()
""",
    "backward_on_leaf_twice": """
import torch
w = torch.tensor(2.0, requires_grad=True)
w.backward()
w.backward()
""",
    "backward_in_exclusive_branches": """
def step(loss, flag):
    if flag:
        loss.backward()
    else:
        loss.backward()
""",
    "numpy_after_detach_and_no_grad": """
import torch
w = torch.randn(3, requires_grad=True)
a = w.detach().numpy()
with torch.no_grad():
    y = w * 2
b = y.numpy()
c = (w * 2).detach().cpu().numpy()
""",
    "numpy_on_cpu_tensor": """
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.randn(3).to(device)
a = x.cpu().numpy()
""",
    "float_tensor_requires_grad": """
import torch
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.arange(3.0, requires_grad=True)
c = torch.zeros(3, dtype=torch.float64, requires_grad=True)
d = torch.tensor([1, 2], dtype=torch.float32, requires_grad=True)
""",
    "argmax_as_target_and_metric": """
import torch
import torch.nn.functional as F
logits = torch.randn(4, 3, requires_grad=True)
onehot = torch.eye(3)[[0, 1, 2, 0]]
loss = F.cross_entropy(logits, onehot.argmax(dim=1))
loss.backward()
acc = (logits.argmax(dim=1) == onehot.argmax(dim=1)).float().mean()
""",
    "parameter_in_init_not_forward": """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4))
        self.b = torch.zeros(4, requires_grad=True)
    def forward(self, x):
        return x @ self.w + self.b
""",
    "bool_of_one_element_and_reductions": """
import torch
x = torch.randn(2, 3)
if x.sum() > 0 and x.max() < 10:
    pass
flag = torch.tensor([True])
if flag:
    pass
while not (x > 5).any():
    break
assert (x == x).all()
""",
    "elementwise_masks": """
import torch
x = torch.randn(2, 3)
mask = (x > 0) & (x < 1) | ~(x == 0)
""",
    "item_on_one_element": """
import torch
x = torch.randn(2, 3)
a = x.mean().item()
b = x[1, 2].item()
c = torch.tensor([5]).item()
d = float(x.sum())
""",
    "list_of_2d_and_shapes": """
import torch
t = torch.randn(3, 4)
rows = list(t)
dims = list(t.shape)
parts = list(torch.arange(6).split(2))
values = torch.arange(3).tolist()
""",
    "solve_and_right_inverse": """
import torch
A = torch.randn(3, 3)
b = torch.randn(3)
x = torch.linalg.solve(A, b)
A_inv = torch.linalg.inv(A)
y = b @ A_inv
""",
    "factory_in_forward_with_device": """
import torch
import torch.nn as nn
class Pos(nn.Module):
    def forward(self, x):
        pos = torch.arange(x.shape[1], device=x.device)
        scale = torch.tensor(0.5)
        return x * scale + pos
""",
    "factory_without_tensor_params": """
import torch
def build(n: int):
    base = torch.zeros(n)
    return base + torch.ones(n)
""",
    "saved_tensor_changed_after_backward": """
import torch
x = torch.randn(3, requires_grad=True)
y = x.exp()
y.sum().backward()
y.add_(1)
""",
    "saved_tensor_of_other_graph": """
import torch
x = torch.randn(3, requires_grad=True)
y = x.exp()
z = (x * 3).sum()
y.add_(1)
z.backward()
""",
    "add_saves_nothing": """
import torch
x = torch.randn(3, requires_grad=True)
c = torch.randn(3)
y = x + c
c.mul_(0)
y.sum().backward()
""",
    "scalar_mul_saves_nothing": """
import torch
x = torch.randn(3, requires_grad=True)
h = x * 1
y = h * 2
h.add_(1)
y.sum().backward()
""",
    "data_on_non_tensors": """
import torch
plain = torch.randn(3)
copy = plain.data.clone()
class Loader:
    def __init__(self):
        self.data = [1, 2, 3]
def first(batch):
    return batch.data[0]
l = Loader()
print(l.data)
""",
    "cross_device_after_move": """
import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.randn(4, 3).to(device)
w = torch.randn(3, 2).to(device)
y = x @ w
z = torch.cat([x, torch.zeros(1, 3, device=device)])
""",
    "model_and_input_on_device": """
import torch
import torch.nn as nn
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 2).to(device)
x = torch.randn(5, 3).to(device)
out = model(x)
""",
    "cuda_tensor_moved_back": """
import torch
x = torch.randn(3).cuda()
y = torch.randn(3)
z = x.cpu() + y
""",
    "requires_grad_then_float": """
import torch
idx = torch.arange(4).float()
idx.requires_grad_()
""",
    "parameter_rebound_to_a_fresh_cpu_tensor": """
import torch
def positions(t_index: list[torch.Tensor], grid_h: int):
    h_index = torch.arange(grid_h).view(1, -1).flatten().float()
    t_index = torch.Tensor(t_index).view(-1, 1).flatten().float()
    return torch.stack([t_index, h_index])
""",
    "storage_swap_through_data": """
import torch
import torch.nn as nn
layer = nn.Linear(3, 3)
rows = layer.weight.data.shape[0]
layer.weight.data = layer.weight.data.t().contiguous()
""",
    "float_parameter_times_a_tensor_meets_a_factory": """
import torch
def sgd_step(lr: float = 0.1):
    w = torch.randn(3, requires_grad=True)
    (w * w).sum().backward()
    with torch.no_grad():
        w.sub_(lr * w.grad)
    return w
""",
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_correct_program_is_silent(name):
    assert findings(TRICKY[name]) == []


def test_there_are_at_least_thirty():
    assert len(TRICKY) >= 30


LOOP_FREE = [name for name, src in TRICKY.items() if "for " not in src and "while " not in src]


@pytest.mark.parametrize("name", sorted(LOOP_FREE))
def test_opt_in_rules_silent_too(name):
    assert findings(TRICKY[name], include_opt_in=True) == []


def test_item_on_cpu_tensor_in_loop_is_not_a_sync():
    src = "import torch\nfor i in range(3):\n    x = torch.randn(3)\n    print(x.sum().item())\n"
    assert findings(src, include_opt_in=True) == []


KITCHEN_SINK = """
import torch
import torch.nn as nn

GLOBAL = {k: v for k, v in zip("ab", range(2)) if v}


async def fetch(x):
    return await x


def everything(model, loader, optimizer, *args, flag=True, **kwargs):
    global GLOBAL
    total = [p for p in model.parameters() if p.requires_grad]
    names = {n: p.shape for n, p in model.named_parameters()}
    squares = {i * i for i in range(3)}
    gen = (i for i in range(3) if i if i > 0)
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        try:
            out = model(x)
        except (RuntimeError, ValueError) as exc:
            raise ValueError(f"failed at {step}: {exc!r}") from exc
        else:
            loss = (out - y).pow(2).mean()
        finally:
            del x
        if (n := len(total)) > 0:
            loss = loss * n
        loss.backward()
        optimizer.step()
        assert loss.dim() == 0, "scalar"
        match step:
            case 0:
                pass
            case _:
                continue
    with torch.no_grad(), open("/dev/null") as fh:
        fh.write(f"{total!s:>10}")
    yield from gen
    lam = lambda t: t.add_(1)
    return lam, names, squares
"""


def test_every_statement_kind_without_crash_or_finding():
    assert findings(KITCHEN_SINK, include_opt_in=False) == []
