"""A device that flows through call sites into helpers, the meta device, the first iteration of a
loop, CPU results of helpers, and shape tensors.

Reasoned from torch 2.13 on CPU: a module on the ``meta`` device given a CPU tensor raises
"Tensor on device cpu is not on the expected device meta!" (so does ``meta_tensor * cpu_tensor``
and a loss given a meta output and a CPU target); ``torch._shape_as_tensor(x)``,
``torch.tensor(x.shape)`` and ``torch.tensor(x.size())`` are CPU tensors whatever ``x``'s device;
``nn.Module.cuda`` takes no ``non_blocking`` (TypeError), ``Tensor.cuda`` does.
"""

from __future__ import annotations

from functools import partial

from rule_harness import family_rules, finding_lines, findings
from shapecheck.engine.runner import lint_text

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

MNIST = """\
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, images):
        return self.body(images)


def fit_one_epoch(net, dev, batches, opt, loss_fn):
    for step, (images, labels) in enumerate(batches):
        {MOVE}
        scores = net(images)
        loss = loss_fn(scores, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()


def run(dev, batches):
    net = Classifier().to(dev)
    opt = torch.optim.Adam(net.parameters())
    fit_one_epoch(net, dev, batches, opt, nn.CrossEntropyLoss())


run(torch.device("meta"), [(torch.rand(2, 8, 8), torch.tensor([0, 2]))])
"""


def test_a_meta_device_given_by_the_demo_reaches_the_training_helper():
    found = flagged(MNIST.replace("{MOVE}", "pass"))
    assert [(c, line) for c, line, _ in found] == [("SC401", 17)]
    assert "is on the meta device but its input `images` is on the CPU" in found[0][2]


def test_a_batch_moved_to_the_meta_device_is_silent():
    assert codes(MNIST.replace("{MOVE}", "images, labels = images.to(dev), labels.to(dev)")) == []


def test_a_model_built_on_the_meta_device_on_purpose_is_silent():
    source = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x) * torch.ones(8)


def build(device):
    with torch.device("meta"):
        model = Block()
    model.to_empty(device=device)
    model.load_state_dict({}, assign=True)
    return model
"""
    assert codes(source) == []


GENERATE = """\
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, input_ids):
        return self.lm_head(self.embed(input_ids))


@torch.no_grad()
def generate(model, ids, device, max_new_tokens=5):
    model.to(device)
    input_ids = {IDS}
    for _ in range(max_new_tokens):
        logits = model(input_ids)
        next_id = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        input_ids = torch.cat([input_ids, next_id], dim=1)
    return input_ids[0].tolist()


print(generate(TinyLM(50, 16), [1, 2, 3], device=torch.device("meta")))
"""


def test_the_first_iteration_of_a_loop_runs_the_module_on_the_value_bound_before_it():
    found = flagged(GENERATE.replace("{IDS}", "torch.tensor([ids])"))
    assert ("SC401", 20) in [(c, line) for c, line, _ in found]
    message = next(m for c, line, m in found if (c, line) == ("SC401", 20))
    assert "`input_ids` is on the CPU on the first iteration of the loop" in message


def test_ids_made_on_the_device_are_silent():
    assert codes(GENERATE.replace("{IDS}", "torch.tensor([ids], device=device)")) == []


def test_a_statement_after_a_continue_does_not_read_the_first_iteration():
    source = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 4).cuda()
h = torch.zeros(2, 4)
for i in range(3):
    if i == 0:
        h = h.cuda()
        continue
    h = model(h)
"""
    assert codes(source) == []


INIT_HIDDEN = """\
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.GRU(ninp, nhid, nlayers)
        self.nlayers = nlayers
        self.nhid = nhid

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        return output, hidden

    def init_hidden(self, bsz):
        return torch.zeros(self.nlayers, bsz, self.nhid)


def evaluate(model, data, bsz):
    hidden = model.init_hidden(bsz){MOVE}
    with torch.no_grad():
        output, hidden = model(data, hidden)
    return output


model = RNNModel(100, 16, 32, 2).cuda()
evaluate(model, torch.randint(0, 100, (5, 4)).cuda(), 4)
"""


def test_a_helper_state_made_on_the_cpu_is_reported_where_it_is_made():
    found = flagged(INIT_HIDDEN.replace("{MOVE}", ""))
    root = [m for c, line, m in found if (c, line) == ("SC403", 19)]
    assert len(root) == 1
    assert "returned by `init_hidden`, and `hidden = model.init_hidden(bsz)` is given to `model`" in root[0]
    assert "runs `self.rnn` on it" in root[0]


def test_a_helper_state_moved_by_the_caller_is_silent():
    assert codes(INIT_HIDDEN.replace("{MOVE}", ".cuda()")) == []


def test_shape_tensors_beside_cpu_factories_are_silent_and_get_no_fix():
    source = """\
import torch
from torch import Tensor


def scaled(x: Tensor) -> Tensor:
    size = torch._shape_as_tensor(x)
    return size * torch.tensor([1, 2, 2, 1])


def padded(x: Tensor) -> Tensor:
    return torch.cat([torch.tensor(x.size()), torch.zeros(2, dtype=torch.long)])
"""
    found = lint_text(source, DEVICE_RULES)
    assert found == []


def test_a_cuda_call_with_non_blocking_on_a_value_of_unknown_kind_is_a_tensor_move():
    source = """\
def run(loader, model, gpu):
    for images, target in loader:
        images.cuda(gpu, non_blocking=True)
        model.to(gpu, non_blocking=True)
        output = model(images)
"""
    assert codes(source) == [("SC402", 3)]


def test_a_meta_module_filled_by_a_state_dict_or_to_empty_is_not_on_the_meta_device():
    source = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def load(path):
    model = nn.Linear(4, 2).to("meta")
    model.load_state_dict(torch.load(path), assign=True)
    return model(torch.randn(8, 4))


def load_net(path):
    net = Net().to(torch.device("meta"))
    net.load_state_dict(torch.load(path), assign=True)
    return net(torch.randn(8, 4))


def materialise():
    net = Net().to(torch.device("meta"))
    net.to_empty(device="cpu")
    return net(torch.randn(8, 4)), Net().to("meta").to_empty(device="cpu")(torch.randn(8, 4))
"""
    assert codes(source) == []


def test_a_module_left_on_the_meta_device_meets_a_cpu_input():
    source = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 2).to("meta")
model.load_state_dict({}, strict=False)
out = model(torch.randn(8, 4))
"""
    assert codes(source) == [("SC401", 6)]
