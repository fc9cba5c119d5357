"""Module state: parameters, buffers and submodules move with `.to()`/`.cuda()`, plain tensor
attributes and factories without `device=` stay on the CPU (SC401); discarded moves of DataLoader
batches (SC402); and the look-alikes that must stay silent.

Device cases are reasoned from torch 2.13: `nn.Module.to`/`.cuda` go through `_apply`, which
moves parameters, buffers and submodules only; a CUDA `nn.Embedding` given CPU indices raises
"Expected all tensors to be on the same device ... index_select"; a CPU tensor attribute meeting
a CUDA parameter raises the same error (reproduced on CPU with the `meta` device: `meta + cpu`
raises "Tensor on device cpu is not on the expected device meta").
"""

from __future__ import annotations

from functools import partial

import pytest
from rule_harness import family_rules, finding_lines, findings

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

EMB = HEAD + """\
class Emb(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.tok = nn.Embedding(n, d)
        self.pos = nn.Embedding(1024, d)
    def forward(self, idx):
        b, t = idx.size()
        pos = {POS}
        return self.tok(idx) + self.pos(pos)
{MOVE}
"""


def emb(pos: str = "torch.arange(t)", move: str = "model = Emb(10, 16).cuda()") -> str:
    return EMB.replace("{POS}", pos).replace("{MOVE}", move)


MASK = HEAD + """\
class Attn(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.proj = nn.Linear(n, n)
        {MASK}
    def forward(self, x):
        w = self.proj.weight
        return w * self.mask
model = Attn(8)
model.to("cuda")
"""

CASES_FLAGGED = [
    ("cuda", emb(), [("SC401", 12)]),
    ("to-cuda", emb(move='model = Emb(10, 16).to("cuda")'), [("SC401", 12)]),
    ("to-device", emb(move="device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                           "model = Emb(10, 16).to(device)"), [("SC401", 12)]),
    ("statement-move", emb(move="model = Emb(10, 16)\nmodel.cuda()"), [("SC401", 12)]),
    ("in-main", emb(move="def main():\n    device = 'cuda'\n    model = Emb(10, 16)\n    model = model.to(device)"),
     [("SC401", 12)]),
    ("data-parallel", emb(move="model = nn.DataParallel(Emb(10, 16)).cuda()"), [("SC401", 12)]),
    ("arange-unsqueeze", emb(pos="torch.arange(0, t).unsqueeze(0)"), [("SC401", 12)]),
    ("plain-mask", MASK.replace("{MASK}", "self.mask = torch.ones(n, n).float()"), [("SC401", 11)]),
    ("submodule", HEAD + """\
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.pos = nn.Embedding(64, d)
    def forward(self, x):
        return x + self.pos(torch.arange(x.size(1)))
class GPT(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])
    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x
model = GPT(16).cuda()
""", [("SC401", 9)]),
    ("parameter-and-factory", HEAD + """\
class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))
    def forward(self, x):
        bias = torch.zeros(4)
        return x * (self.w + bias)
m = Scale().to("cuda")
""", [("SC401", 10)]),
    ("loader-batch-not-moved", HEAD + """\
from torch.utils.data import DataLoader, TensorDataset
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
loader = DataLoader(TensorDataset(torch.randn(100, 4), torch.randn(100, 2)), batch_size=8)
for data, target in loader:
    out = model(data)
""", [("SC401", 9)]),
    ("loader-discarded-move", HEAD + """\
from torch.utils.data import DataLoader, TensorDataset
device = torch.device("cuda")
loader = DataLoader(TensorDataset(torch.randn(100, 4), torch.randn(100, 2)), batch_size=8)
for data, target in loader:
    data.to(device)
""", [("SC402", 8)]),
    ("torchvision-loader", HEAD + """\
from torchvision import datasets, transforms
def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ds = datasets.MNIST("../data", train=True, download=True, transform=transforms.ToTensor())
    loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True)
    for batch_idx, (data, target) in enumerate(loader):
        data.to(device)
        target = target.to(device)
""", [("SC402", 10)]),
]

RNN = HEAD + """\
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
class RNN(nn.Module):
    def __init__(self, n_in, hidden, layers):
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.lstm = nn.LSTM(n_in, hidden, layers, batch_first=True)
    def forward(self, x):
        h0 = torch.zeros(self.layers, x.size(0), self.hidden{DEV})
        c0 = torch.zeros(self.layers, x.size(0), self.hidden{DEV})
        out, _ = self.lstm(x, (h0, c0))
        return out
model = RNN(28, 128, 2).to(device)
"""

PE = HEAD + """\
class PositionalEncoding(nn.Module):
    def __init__(self, d, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d)
        pe[:, 0::2] = torch.sin(torch.arange(0, max_len).unsqueeze(1).float())
        {KEEP}
        self.proj = nn.Linear(d, d)
    def forward(self, x):
        x = x + self.pe[:, :x.size(1)]
        return self.proj(x)
model = PositionalEncoding(64).cuda()
"""

GPT = open(__file__.replace("test_module_placement.py", "nanogpt_like.txt")).read()

CASES_FLAGGED += [
    ("lstm-state", RNN.replace("{DEV}", ""), [("SC401", 13)]),
    ("plain-positional-encoding", PE.replace("{KEEP}", "self.pe = pe.unsqueeze(0)"), [("SC403", 12)]),
    ("module-dict-member", GPT.replace("{DEV}", ""), [("SC401", 42)]),
]

CASES_SILENT = [
    ("lstm-state-on-device", RNN.replace("{DEV}", ", device=x.device")),
    ("positional-encoding-buffer", PE.replace("{KEEP}", 'self.register_buffer("pe", pe.unsqueeze(0))')),
    ("positional-encoding-never-moved", PE.replace("{KEEP}", "self.pe = pe.unsqueeze(0)").replace(".cuda()", "")),
    ("positional-encoding-moved-in-forward", PE.replace("{KEEP}", "self.pe = pe.unsqueeze(0)").replace(
        "self.pe[:, :x.size(1)]", "self.pe[:, :x.size(1)].to(x.device)")),
    ("module-dict-member-on-device", GPT.replace("{DEV}", ", device=idx.device")),
    ("leaf-attribute-is-no-parameter", HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = torch.randn(4, requires_grad=True)
    def forward(self, x):
        return self.fc(x) + self.w * torch.ones(4)
net = Net().cuda()
"""),
    ("buffer-slot-filled-later", HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        self.register_buffer("m", None)
        self.m = torch.ones(3)
    def forward(self, x):
        return self.w * self.m
net = Net().cuda()
"""),
    ("plain-attribute-following-the-input", HEAD + """\
class Det(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.anchors = torch.ones(3, 2)
    def forward(self, x):
        return self.conv(x), x[..., :2] * self.anchors.type_as(x), self.anchors.to(x) + x[..., :2]
model = Det().cuda()
"""),
    ("plain-attribute-of-plain-class", HEAD + """\
class Table:
    def __init__(self):
        self.rows = torch.zeros(4, 4)
    def add(self, x):
        return x + self.rows
"""),
    ("device-of-input", emb(pos="torch.arange(t, device=idx.device)")),
    ("never-moved", emb(move="model = Emb(10, 16)")),
    ("moved-to-cpu", emb(move="model = Emb(10, 16).to('cpu')")),
    ("device-unknown", emb(move="def main(device):\n    model = Emb(10, 16).to(device)")),
    ("moved-back-with-to", emb(pos="torch.arange(t).to(idx.device)")),
    ("buffer", MASK.replace("{MASK}", 'self.register_buffer("mask", torch.tril(torch.ones(n, n)))')),
    ("parameter", MASK.replace("{MASK}", "self.mask = nn.Parameter(torch.ones(n, n))")),
    ("nn-buffer", MASK.replace("{MASK}", "self.mask = nn.Buffer(torch.ones(n, n))")),
    ("plain-mask-never-moved", MASK.replace("{MASK}", "self.mask = torch.ones(n, n)").replace(
        'model.to("cuda")\n', "")),
    ("plain-mask-moved-in-forward", MASK.replace("{MASK}", "self.mask = torch.ones(n, n)").replace(
        "return w * self.mask", "return w * self.mask.to(w.device)")),
    ("plain-mask-rebound-outside", MASK.replace("{MASK}", "self.mask = torch.ones(n, n)") +
     "model.mask = model.mask.cuda()\n"),
    ("index-bookkeeping", HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        idx = torch.arange(x.size(0))
        keep = idx[idx % 2 == 0]
        order = torch.argsort(keep)
        return self.fc(x)[order.tolist()]
net = Net().cuda()
"""),
    ("scalar-factory", HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))
    def forward(self, x):
        return self.w * torch.tensor(0.5) + x
net = Net().cuda()
"""),
    ("init-helper-on-cpu", HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4))
        self.reset()
    def reset(self):
        with torch.no_grad():
            self.w.copy_(self.w + torch.zeros(4))
net = Net().cuda()
"""),
    ("moves-itself", HEAD + """\
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(10, 4)
    def cuda(self, device=None):
        return super().cuda(device)
    def forward(self, t):
        return self.pos(torch.arange(t))
net = Net().cuda()
"""),
    ("plain-list-of-blocks", HEAD + """\
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Embedding(10, 4)
    def forward(self, t):
        return self.pos(torch.arange(t))
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.helpers = [Block()]
net = Net().cuda()
"""),
    ("module-statement", HEAD + """\
device = torch.device("cuda")
model = nn.Linear(4, 2)
model.to(device)
model.cuda()
"""),
    ("unknown-loop-values", HEAD + """\
def train(model, device, loader, optimizer):
    for data, target in loader:
        data.to(device)
"""),
    ("custom-collate", HEAD + """\
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.randn(10, 4)), batch_size=2, collate_fn=lambda b: b)
for data, in loader:
    data.to("cuda")
"""),
    ("unknown-dataset", HEAD + """\
from torch.utils.data import DataLoader
def run(dataset):
    loader = DataLoader(dataset, batch_size=2)
    for data, target in loader:
        data.to("cuda")
"""),
    ("loader-moved-batch", HEAD + """\
from torch.utils.data import DataLoader, TensorDataset
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(4, 2).to(device)
loader = DataLoader(TensorDataset(torch.randn(100, 4), torch.randn(100, 2)), batch_size=8)
for data, target in loader:
    data, target = data.to(device), target.to(device)
    out = model(data)
"""),
]


@pytest.mark.parametrize("name, source, expected", CASES_FLAGGED, ids=[c[0] for c in CASES_FLAGGED])
def test_flagged(name: str, source: str, expected: list[tuple[str, int]]) -> None:
    assert codes(source) == expected


@pytest.mark.parametrize("name, source", CASES_SILENT, ids=[c[0] for c in CASES_SILENT])
def test_silent(name: str, source: str) -> None:
    # nothing claims a move; a factory given to a layer (or meeting a parameter) of the module is
    # still the library-form SC403 ("raises when the module runs on a GPU"), moved or not
    assert [f for f in flagged(source) if not (f[0] == "SC403" and "when the module runs on a GPU" in f[2])] == []


def test_message_names_the_factory_and_the_move() -> None:
    [(code, line, message)] = flagged(emb())
    assert (code, line) == ("SC401", 12)
    assert "`pos` is created on the CPU in `forward` (`torch.arange(t)` has no `device=`)" in message
    assert "module `self.pos` is on CUDA (`Emb` is moved to CUDA at line 13)" in message


def test_message_names_the_plain_attribute() -> None:
    [(code, line, message)] = flagged(MASK.replace("{MASK}", "self.mask = torch.ones(n, n).float()"))
    assert "`self.mask` is a plain tensor attribute, not a registered buffer" in message
    assert "`w` is on CUDA" in message and "register_buffer" in message


def test_message_names_the_container() -> None:
    source = CASES_FLAGGED[8][1]
    [(_, _, message)] = flagged(source)
    assert "`Block` is a submodule of `GPT`, moved to CUDA at line 18" in message


def test_message_names_the_loader():
    source = [c for c in CASES_FLAGGED if c[0] == "loader-batch-not-moved"][0][1]
    [(code, line, message)] = flagged(source)
    assert message.startswith("`data` is a batch of `loader`, on the CPU (a DataLoader does not move it), but "
                              "module `model` is on CUDA when it is available")
    assert message.endswith("move it first: `data = data.to(device)`")
