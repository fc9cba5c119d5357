"""Moves made by the file's functions on the modules they are given (``def train(model, device):
model.to(device)`` called with an instance of a module class of the file), and what moved modules
meet in their ``forward``: CPU factories, helper methods that create state without ``device=``,
tensors made from NumPy arrays; and losses given a moved output and a target left on the CPU.

Reasoned from torch 2.13: ``nn.Module.to``/``.cuda`` move the instance in place whoever calls
them, so a function that moves its parameter moves the caller's instance; a CUDA layer given a
CPU tensor raises "Expected all tensors to be on the same device". On CPU with the ``meta``
device: ``F.cross_entropy(out_meta, target_cpu)``, ``nn.LSTM`` on meta given a CPU state and
``meta @ cpu`` all raise "Tensor on device cpu is not on the expected device meta" (or the
reverse); ``torch.from_numpy`` always returns a CPU tensor; ``torch.tensor(t)`` of a tensor
keeps ``t``'s device.
"""

from __future__ import annotations

from functools import partial

import pytest
from rule_harness import family_rules, finding_lines, findings

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

GPT = """\
import torch
import torch.nn as nn


class GPT(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.tok = nn.Embedding(n, d)
        self.pos = nn.Embedding(1024, d)

    def forward(self, idx):
        b, t = idx.size()
        pos = {POS}
        return self.tok(idx) + self.pos(pos)


"""
LINE = 14  # the line of `self.pos(pos)`


def gpt(rest: str, pos: str = "torch.arange(t)") -> str:
    return GPT.replace("{POS}", pos) + rest


TRAIN = """\
def train(model, loader, device):
    model = model.to(device)
    for x, y in loader:
        model(x)


def main():
    device = "cuda"
    model = GPT(10, 16)
    train(model, [], device)
"""

CASES_FLAGGED = [
    ("train-moves-its-parameter", gpt(TRAIN)),
    ("statement-move", gpt("def train(model):\n    model.cuda()\n\n\ntrain(GPT(10, 16))\n")),
    ("passed-on", gpt("def train(m, d):\n    m.to(d)\n\n\ndef fit(model, device):\n    train(model, device)\n\n\n"
                      "fit(GPT(10, 16), torch.device('cuda'))\n")),
    ("trainer-class", gpt("class Trainer:\n    def __init__(self, model, device):\n"
                          "        self.model = model.to(device)\n\n\nTrainer(GPT(10, 16), 'cuda:0')\n")),
    ("default-device", gpt("def train(model, device='cuda'):\n    model.to(device)\n\n\ntrain(GPT(10, 16))\n")),
    ("keyword-argument", gpt("def train(model, *, device):\n    model.to(device=device)\n\n\n"
                             "net = GPT(10, 16)\ntrain(model=net, device='cuda')\n")),
    ("data-parallel", gpt("def wrap(model):\n    return nn.DataParallel(model).cuda()\n\n\nwrap(GPT(10, 16))\n")),
    ("maybe-cuda", gpt("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n\n\n"
                       "def train(model, device):\n    model.to(device)\n\n\ntrain(GPT(10, 16), device)\n")),
]

CASES_SILENT = [
    ("device-of-input", gpt(TRAIN, pos="torch.arange(t, device=idx.device)")),
    ("new-from-input", gpt(TRAIN, pos="idx.new_tensor(range(t))")),
    ("device-unknown", gpt("def train(model, device):\n    model.to(device)\n\n\n"
                           "def main(args):\n    train(GPT(10, 16), args.device)\n")),
    ("device-parameter-of-caller", gpt("def train(model, device):\n    model.to(device)\n\n\n"
                                       "def main(device):\n    train(GPT(10, 16), device)\n")),
    ("never-called", gpt("def train(model, device='cuda'):\n    model.to(device)\n\n\nmodel = GPT(10, 16)\n")),
    ("moved-to-cpu", gpt("def train(model, device):\n    model.to(device)\n\n\ntrain(GPT(10, 16), 'cpu')\n")),
    ("other-parameter-moved", gpt("def distil(model, teacher, device):\n    teacher.to(device)\n\n\n"
                                  "distil(GPT(10, 16), nn.Linear(2, 2), 'cuda')\n")),
    ("parameter-rebound", gpt("def train(model, device):\n    model = nn.Linear(2, 2)\n    model.to(device)\n\n\n"
                              "train(GPT(10, 16), 'cuda')\n")),
    ("one-of-two-classes", gpt("class Tiny(nn.Module):\n    pass\n\n\ndef train(model):\n    model.cuda()\n\n\n"
                               "def main(big):\n    model = GPT(10, 16) if big else Tiny()\n    train(model)\n")),
    ("shadowed-function", gpt("def train(model):\n    model.cuda()\n\n\ndef main(train):\n    train(GPT(10, 16))\n")),
    ("dtype-not-device", gpt("def train(model, kind):\n    model.to(kind)\n\n\ntrain(GPT(10, 16), torch.float16)\n")),
    ("decorated-function", gpt("import functools\n\n\n@functools.lru_cache\ndef train(model):\n    model.cuda()\n\n\n"
                               "train(GPT(10, 16))\n")),
]


@pytest.mark.parametrize("name, source", CASES_FLAGGED, ids=[c[0] for c in CASES_FLAGGED])
def test_a_class_moved_by_a_function_of_the_file_is_placed(name: str, source: str) -> None:
    assert codes(source) == [("SC401", LINE)]


@pytest.mark.parametrize("name, source", CASES_SILENT, ids=[c[0] for c in CASES_SILENT])
def test_silent(name: str, source: str) -> None:
    # nothing claims a move; a factory given to a layer (or meeting a parameter) of the module is
    # still the library-form SC403 ("raises when the module runs on a GPU"), moved or not
    assert [f for f in flagged(source) if not (f[0] == "SC403" and "when the module runs on a GPU" in f[2])] == []


def test_the_message_names_the_function_and_the_call() -> None:
    [(_, _, message)] = flagged(gpt(TRAIN))
    assert "module `self.pos` is on CUDA (`GPT` is moved to CUDA at line 18 in `train`, called at line 26)" in message


RNN = """\
import torch
import torch.nn as nn


class RNN(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.lstm = nn.LSTM(n_in, hidden, layers, batch_first=True)

    def init_hidden(self, b{ARG}):
        return (torch.zeros(self.layers, b, self.hidden{DEV}), torch.zeros(self.layers, b, self.hidden{DEV}))

    def forward(self, x):
        h = self.init_hidden(x.size(0){PASS})
        out, _ = self.lstm(x, h)
        return out


model = RNN(28, 128, 2){MOVE}
"""


def rnn(dev: str = "", move: str = ".cuda()", arg: str = "", pass_: str = "") -> str:
    return RNN.replace("{DEV}", dev).replace("{MOVE}", move).replace("{ARG}", arg).replace("{PASS}", pass_)


NUMPY = """\
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.table = np.ones((4, 4), dtype=np.float32)

    def forward(self, x):
        h = self.fc(x)
        t = {T}
        return h @ t


net = Net(){MOVE}
"""

LOSS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda")
model = nn.Linear(4, 2).to(device)
criterion = nn.CrossEntropyLoss()
loader = DataLoader(TensorDataset(torch.randn(100, 4), torch.randint(0, 2, (100,))), batch_size=8)
for x, y in loader:
    x = x.cuda(){MOVE_Y}
    out = model(x)
    loss = {LOSS}
"""

MORE_FLAGGED = [
    ("helper-state-tuple", rnn(), [("SC401", 16)]),
    ("helper-state-moved-by-train", rnn(move="\n\n\ndef train(m, device):\n    m.to(device)\n\n\n"
                                          "train(model, 'cuda')"), [("SC401", 16)]),
    ("from-numpy", NUMPY.replace("{T}", "torch.from_numpy(self.table)").replace("{MOVE}", ".cuda()"),
     [("SC401", 15)]),
    ("tensor-of-list", NUMPY.replace("{T}", "torch.tensor([[1.0] * 4] * 4)").replace("{MOVE}", ".cuda()"),
     [("SC401", 15)]),
    ("as-tensor-of-list", NUMPY.replace("{T}", "torch.as_tensor([[1.0] * 4] * 4)").replace("{MOVE}", ".cuda()"),
     [("SC401", 15)]),
    ("functional-loss", LOSS.replace("{MOVE_Y}", "").replace("{LOSS}", "F.cross_entropy(out, y)"), [("SC401", 13)]),
    ("loss-module", LOSS.replace("{MOVE_Y}", "").replace("{LOSS}", "criterion(out, y)"), [("SC401", 13)]),
]

MORE_SILENT = [
    ("helper-state-on-input-device", rnn(dev=", device=x.device", arg=", x", pass_=", x")),
    ("helper-state-new-zeros", rnn().replace("torch.zeros(self.layers, b, self.hidden)",
                                             "self.lstm.weight_ih_l0.new_zeros(self.layers, b, self.hidden)")),
    ("helper-state-never-moved", rnn(move="")),
    ("helper-state-device-unknown", rnn(move="\n\n\ndef main(args):\n    model.to(args.device)")),
    ("from-numpy-moved", NUMPY.replace("{T}", "torch.from_numpy(self.table).to(x.device)").replace(
        "{MOVE}", ".cuda()")),
    ("from-numpy-never-moved", NUMPY.replace("{T}", "torch.from_numpy(self.table)").replace("{MOVE}", "")),
    ("tensor-of-a-tensor", NUMPY.replace("{T}", "torch.tensor(h.detach())").replace("{MOVE}", ".cuda()")),
    ("as-tensor-of-a-tensor", NUMPY.replace("{T}", "torch.as_tensor(h)").replace("{MOVE}", ".cuda()")),
    ("from-numpy-on-cpu-side", NUMPY.replace("{T}", "torch.from_numpy(self.table)").replace(
        "return h @ t", "return h, t.sum()").replace("{MOVE}", ".cuda()")),
    ("target-moved", LOSS.replace("{MOVE_Y}", "\n    y = y.to(device)").replace("{LOSS}", "F.cross_entropy(out, y)")),
    ("both-moved-loss-module", LOSS.replace("{MOVE_Y}", "\n    y = y.cuda()").replace("{LOSS}", "criterion(out, y)")),
    ("ctc-lengths-on-cpu", LOSS.replace("{MOVE_Y}", "").replace(
        "{LOSS}", "F.ctc_loss(out.log_softmax(1), y, torch.full((8,), 1), torch.full((8,), 1))")),
    ("model-in-function", LOSS.replace("{MOVE_Y}", "").replace("{LOSS}", "F.cross_entropy(out, y)").replace(
        "model = nn.Linear(4, 2).to(device)", "def run(model, loader):\n    pass")),
]


@pytest.mark.parametrize("name, source, expected", MORE_FLAGGED, ids=[c[0] for c in MORE_FLAGGED])
def test_state_numpy_and_losses_flagged(name: str, source: str, expected: list[tuple[str, int]]) -> None:
    assert codes(source) == expected


@pytest.mark.parametrize("name, source", MORE_SILENT, ids=[c[0] for c in MORE_SILENT])
def test_state_numpy_and_losses_silent(name: str, source: str) -> None:
    assert codes(source) == []


def test_the_messages_name_the_helper_and_the_origin() -> None:
    [(_, _, message)] = flagged(rnn())
    assert message.startswith("`h` comes from `self.init_hidden(x.size(0))`, whose result is made on the CPU, "
                              "but module `self.lstm` is on CUDA (`RNN` is moved to CUDA at line 20)")
    [(_, _, message)] = flagged(NUMPY.replace("{T}", "torch.from_numpy(self.table)").replace("{MOVE}", ".cuda()"))
    assert "(`torch.from_numpy(self.table)` always returns a CPU tensor), but `h` is on CUDA: `@` raises" in message
    [(_, _, message)] = flagged(LOSS.replace("{MOVE_Y}", "").replace("{LOSS}", "criterion(out, y)"))
    assert message.startswith("`y` is a batch of `loader`, on the CPU (a DataLoader does not move it), but `out` "
                              "is on CUDA: `criterion(...)` raises RuntimeError")
