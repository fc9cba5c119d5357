"""SC401-SC404 on the shapes device bugs take in real code: plain tensor attributes of a moved
module, losses built with a CPU weight, ``.numpy()`` after a layer run on CUDA, factories without
``device=`` in library ``forward`` methods, drop-path masks; and their correct twins.

Each invalid case was run with torch 2.13 on CPU, the ``meta`` device standing in for CUDA (a
``meta`` tensor meets a CPU one the way a CUDA tensor does: "Tensor on device cpu is not on the
expected device meta!"), and each valid twin ran clean there. The exception: ``meta`` embedding
lookups accept a CPU index, while CUDA's ``index_select`` raises "Expected all tensors to be on the
same device ... (when checking argument for argument index)"; that case is by reasoning.
"""

from __future__ import annotations

from functools import partial

import pytest
from rule_harness import family_rules, finding_lines, findings, lint_text

DEVICE_RULES = family_rules("SC4")
codes = partial(finding_lines, rules=DEVICE_RULES)
flagged = partial(findings, rules=DEVICE_RULES)

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

NORMALIZE = HEAD + (
    "class Normalized(nn.Module):\n"                                     # 4
    "    def __init__(self, backbone):\n"
    "        super().__init__()\n"
    "        self.backbone = backbone\n"
    "        {mean}\n"                                                   # 8
    "    def forward(self, x):\n"
    "        return self.backbone(x - self.mean)\n"                      # 10
    "{use}\n"
)
PLAIN = "self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)"
BUFFER = "self.register_buffer('mean', torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))"
PARAM = "self.mean = nn.Parameter(torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1), requires_grad=False)"
MOVES = [
    "model = Normalized(nn.Conv2d(3, 8, 3)).cuda()",
    "model = Normalized(nn.Conv2d(3, 8, 3))\nmodel.to(torch.device('cuda'))",
    "model = nn.Sequential(Normalized(nn.Identity()), nn.Conv2d(3, 8, 3)).cuda()",
    "net = nn.Sequential(Normalized(nn.Identity()), nn.Conv2d(3, 8, 3))\nnet = net.to('cuda')",
]


@pytest.mark.parametrize("use", MOVES)
def test_plain_attribute_of_a_moved_module(use):
    found = flagged(NORMALIZE.format(mean=PLAIN, use=use))
    assert [(c, line) for c, line, _ in found] == [("SC403", 10)]
    assert "plain tensor attribute" in found[0][2] and "register_buffer" in found[0][2]


@pytest.mark.parametrize("use", MOVES)
@pytest.mark.parametrize("mean", [BUFFER, PARAM])
def test_registered_statistics_move_with_the_module(mean, use):
    assert codes(NORMALIZE.format(mean=mean, use=use)) == []


def test_plain_attribute_of_a_module_never_moved_is_silent():
    assert codes(NORMALIZE.format(mean=PLAIN, use="model = Normalized(nn.Conv2d(3, 8, 3))")) == []


LOSS = HEAD + (
    "device = torch.device('cuda')\n"
    "model = nn.Linear(4, 1).to(device)\n"
    "{build}\n"
    "for x, y in loader:\n"
    "    x, y = x.to(device), y.to(device)\n"
    "    loss = criterion(model(x), y)\n"
)


@pytest.mark.parametrize("build", [
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))",
    "pos_weight = torch.tensor([3.0])\ncriterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)",
    "criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 3.0]))",
    "criterion = nn.CrossEntropyLoss(torch.tensor([1.0, 2.0, 3.0]))",
])
def test_loss_built_with_a_cpu_weight(build):
    source = LOSS.format(build=build)
    found = flagged(source)
    assert [(c, line) for c, line, _ in found] == [("SC401", source.count("\n"))]
    assert "holds" in found[0][2] and "on the CPU" in found[0][2]


@pytest.mark.parametrize("build", [
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]).to(device))",
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0], device=device))",
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))\ncriterion.to(device)",
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0])).cuda()",
    "criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.0))",  # 0-dim mixes with CUDA
    "criterion = nn.BCEWithLogitsLoss(pos_weight=w)",
    "criterion = nn.CrossEntropyLoss()",
])
def test_loss_weight_on_the_device_is_silent(build):
    assert codes(LOSS.format(build=build)) == []


def test_functional_loss_weight_on_the_cpu():
    source = HEAD + ("model = nn.Linear(4, 3).cuda()\nw = torch.tensor([1.0, 2.0, 3.0])\n"
                     "x, y = torch.randn(8, 4).cuda(), torch.randint(0, 3, (8,)).cuda()\n"
                     "a = F.cross_entropy(model(x), y, weight=w.cuda())\n"
                     "b = F.cross_entropy(model(x), y, weight=w)\n")
    assert codes(source) == [("SC401", 8)]


NUMPY = HEAD + "model = nn.Linear(4, 3).to('cuda')\ndef predict(x):\n{body}"


@pytest.mark.parametrize("body, expected", [
    ("    x = x.to('cuda')\n    out = model(x)\n    return out.numpy()\n", [("SC404", 8)]),
    ("    preds = model(x.cuda())\n    return preds.detach().numpy()\n", [("SC404", 7)]),
    ("    out = model(x.to('cuda'))\n    return out.detach().cpu().numpy()\n", []),
    ("    out = model(x)\n    return out.detach().numpy()\n", []),  # where `x` is: unknown
])
def test_numpy_after_a_layer_run_on_cuda(body, expected):
    assert codes(NUMPY.format(body=body)) == expected


def test_container_input_keeps_silent_when_its_device_is_unknown():
    # an `nn.Sequential` may hold classes of the file whose forward moves tensors
    source = HEAD + ("class ToCpu(nn.Module):\n    def forward(self, x):\n        return x.cpu()\n"
                     "net = nn.Sequential(ToCpu())\ndef run(x):\n    out = net(x.cuda())\n    return out.numpy()\n")
    assert codes(source) == []


LIBRARY = HEAD + (
    "class Block(nn.Module):\n"                                         # 4
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.wpe = nn.Embedding(64, 8)\n"
    "        self.gru = nn.GRU(8, 8, 2)\n"
    "        self.cell = nn.LSTMCell(8, 8)\n"
    "        self.scale = nn.Parameter(torch.ones(8))\n"                 # 10
    "        self.register_buffer('shift', torch.zeros(8))\n"
    "    def forward(self, idx):\n"
)


@pytest.mark.parametrize("body, line", [
    ("        pos = torch.arange(idx.size(1))\n        return self.wpe(pos)\n", 14),
    ("        return self.wpe(torch.arange(0, idx.size(1), dtype=torch.long))\n", 13),
    ("        h = self.wpe(idx)\n        h0 = torch.zeros(2, h.size(1), 8)\n        return self.gru(h, h0)\n", 15),
    ("        h = self.wpe(idx)[0]\n        hx = torch.zeros(h.size(0), 8)\n"
     "        hx, cx = self.cell(h, (hx, hx))\n        return hx\n", 15),
    ("        return self.wpe(idx) * (self.scale + torch.ones(8))\n", 13),
    ("        return self.wpe(idx) + self.shift * torch.rand(8)\n", 13),
])
def test_library_factory_meets_the_module_weights(body, line):
    found = flagged(LIBRARY + body)
    assert [(c, ln) for c, ln, _ in found] == [("SC403", line)]
    assert "when the module runs on a GPU" in found[0][2]
    assert [d.condition for d in lint_text(LIBRARY + body, DEVICE_RULES)] == ["the module stays on the CPU"]


@pytest.mark.parametrize("body", [
    "        return self.wpe(torch.arange(idx.size(1), device=idx.device))\n",
    "        return self.wpe(torch.arange(idx.size(1)).to(idx.device))\n",
    "        return self.wpe(torch.arange(idx.size(1)).type_as(idx))\n",
    "        return self.wpe(idx) * (self.scale * torch.tensor(2.0)) * 3.0\n",
    "        h = self.wpe(idx)\n        h0 = h.new_zeros(2, h.size(1), 8)\n        return self.gru(h, h0)\n",
    # the state is rebound to the cell's output before the next call
    "        h = self.wpe(idx)[0]\n        hx = h.new_zeros(h.size(0), 8)\n        hx, cx = self.cell(h, (hx, hx))\n"
    "        hx, cx = self.cell(h, (hx, cx))\n        return hx\n",
    "        pos = self.shift.long()\n        return self.wpe(pos)\n",
])
def test_library_factory_on_the_device_is_silent(body):
    assert codes(LIBRARY + body) == []


def test_state_rebound_by_unpacking_is_no_longer_the_factory():
    body = ("        h = self.wpe(idx)[0]\n        hx = torch.zeros(h.size(0), 8)\n"
            "        cx = torch.zeros(h.size(0), 8)\n"
            "        hx, cx = self.cell(h, (hx, cx))\n        out = self.cell(h, (hx, cx))\n        return out\n")
    assert codes(LIBRARY + body) == [("SC403", 16)]


DROP = HEAD + "class DropPath(nn.Module):\n    def forward(self, x):\n        keep = 1 - self.p\n{body}"


@pytest.mark.parametrize("body, expected", [
    ("        shape = (x.shape[0],) + (1,) * (x.ndim - 1)\n        mask = torch.rand(shape) < keep\n"
     "        return x * mask / keep\n", [("SC403", 9)]),
    ("        shape = (x.shape[0],) + (1,) * (x.ndim - 1)\n        mask = keep + torch.rand(shape)\n"
     "        return x.div(keep) * mask.floor()\n", [("SC403", 9)]),
    ("        shape = (x.shape[0],) + (1,) * (x.ndim - 1)\n"
     "        mask = torch.rand(shape, dtype=x.dtype, device=x.device) < keep\n        return x * mask / keep\n", []),
    ("        mask = x.new_empty((x.shape[0], 1)).bernoulli_(keep)\n        return x * mask / keep\n", []),
    ("        mask = torch.rand(()) < keep\n        return x * mask / keep\n", []),  # 0-dim
])
def test_drop_path_mask(body, expected):
    assert codes(DROP.format(body=body)) == expected


DISCARD = HEAD + "def train(model, device, loader, optimizer):\n    for data, target in loader:\n{body}"


@pytest.mark.parametrize("body, expected", [
    ("        data.to(device)\n        loss = F.nll_loss(model(data), target.to(device))\n", []),
    ("        data.to(device)\n        loss = F.nll_loss(model(data.view(data.size(0), -1)), target)\n",
     [("SC402", 6)]),
    ("        target.to(device)\n        loss = F.nll_loss(model(data), target)\n", [("SC402", 6)]),
    ("        model.to(device)\n        loss = F.nll_loss(model(data), target)\n", []),
])
def test_discarded_move_of_a_batch(body, expected):
    assert codes(DISCARD.format(body=body)) == expected


def test_training_function_with_every_fact_written_in_it():
    source = HEAD + (
        "def main(loader):\n"
        "    device = torch.device('cuda')\n"
        "    netD = nn.Sequential(nn.Linear(784, 1), nn.Sigmoid()).to(device)\n"
        "    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))\n"
        "    bce = nn.BCELoss()\n"
        "    for real, _ in loader:\n"
        "        real = real.to(device)\n"
        "        labels = torch.ones(real.size(0), 1)\n"
        "        out = netD(real)\n"
        "        loss = criterion(out, labels.to(device))\n"                   # 13
        "        loss = loss + bce(out, labels)\n"                             # 14
        "        p = out.detach().numpy()\n"                                   # 15
        "        q = out.detach().cpu().numpy()\n"
    )
    assert codes(source) == [("SC401", 13), ("SC401", 14), ("SC404", 15)]


FORWARD = HEAD + "class Net(nn.Module):\n    def forward(self, x):\n{body}"


@pytest.mark.parametrize("body, expected", [
    # a position table built in forward from `torch.arange`, through torch functions and products
    ("        b, t, c = x.shape\n        pos = torch.arange(t).float().unsqueeze(1)\n"
     "        return x + torch.sin(pos)\n", [("SC403", 8)]),
    ("        b, t, c = x.shape\n        pos = torch.arange(t).float().unsqueeze(1)\n"
     "        div = torch.exp(torch.arange(0, c, 2).float())\n        return x + torch.cos(pos * div)\n",
     [("SC403", 9)]),
    ("        return x @ torch.eye(x.size(-1))\n", [("SC403", 6)]),
    # 0-dim results of a factory mix with a tensor on any device
    ("        return x * torch.ones(3).sum()\n", []),
    ("        s = torch.rand(4).mean()\n        return x * s\n", []),
    ("        b, t, c = x.shape\n        pos = torch.arange(t, device=x.device).float().unsqueeze(1)\n"
     "        return x + torch.sin(pos)\n", []),
])
def test_factories_in_forward(body, expected):
    assert codes(FORWARD.format(body=body)) == expected
